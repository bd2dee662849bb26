//! With SIGPIPE at its default disposition (as in a C program), writing an
//! aggregate to a pipe with no reader must be an error, not a death.
//! The test runs in a child process of the test binary, so that changing
//! the disposition cannot hurt another test running beside it.

use ferry::{Aggregate, Buf};
use std::io::ErrorKind;

#[test]
fn epipe_with_default_sigpipe_is_an_error_and_leaves_no_signal_pending() {
    if crate::support::in_child(&test_name!(
        epipe_with_default_sigpipe_is_an_error_and_leaves_no_signal_pending
    )) {
        return;
    }
    // SAFETY: this process (a child of the test binary) runs this single
    // test; nothing else depends on the SIGPIPE disposition while it runs.
    unsafe {
        assert_ne!(libc::signal(libc::SIGPIPE, libc::SIG_DFL), libc::SIG_ERR);
    }
    let (r, w) = std::io::pipe().unwrap();
    drop(r);
    let mut a: Aggregate = (0..3).map(|_| Buf::from(vec![1u8; 5000])).collect();
    let e = a.write_to(&w).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BrokenPipe);
    assert_eq!(a.len(), 15000);
    // The signal was taken back, not left pending for later delivery.
    let mut pending = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: valid pointer to a sigset_t, which sigpending fills.
    let pending = unsafe {
        libc::sigemptyset(pending.as_mut_ptr());
        assert_eq!(libc::sigpending(pending.as_mut_ptr()), 0);
        pending.assume_init()
    };
    // SAFETY: an initialised set.
    assert_eq!(unsafe { libc::sigismember(&pending, libc::SIGPIPE) }, 0);
    // And the thread's signal mask is as it was: SIGPIPE not blocked.
    let mut mask = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: a null new set only queries the mask into a valid pointer.
    let mask = unsafe {
        libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), mask.as_mut_ptr());
        mask.assume_init()
    };
    // SAFETY: an initialised set.
    assert_eq!(unsafe { libc::sigismember(&mask, libc::SIGPIPE) }, 0);
    // A second time, to be sure the first left nothing behind.
    assert_eq!(a.write_to(&w).unwrap_err().kind(), ErrorKind::BrokenPipe);
}
