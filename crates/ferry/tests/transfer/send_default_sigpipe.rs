//! With SIGPIPE at its default disposition (a C program, or a Rust one
//! that asks for it), `FileSender` to a pipe or socket whose reader is
//! gone must be an `EPIPE` error, as every other ferry write path is —
//! not the death of the process. The test runs in a child process of the
//! test binary, so that changing the disposition cannot hurt another test
//! running beside it.

use ferry::transfer::send::{FileSender, SendPath};
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};

#[test]
fn file_sender_to_a_gone_reader_is_epipe_not_a_signal() {
    if crate::support::in_child(&test_name!(
        file_sender_to_a_gone_reader_is_epipe_not_a_signal
    )) {
        return;
    }
    // SAFETY: this process (a child of the test binary) runs this single
    // test; nothing else depends on the SIGPIPE disposition while it runs.
    unsafe {
        assert_ne!(libc::signal(libc::SIGPIPE, libc::SIG_DFL), libc::SIG_ERR);
    }
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(&[5u8; 100_000]).unwrap();
    for path in [SendPath::Sendfile, SendPath::Splice] {
        for socket in [false, true] {
            let w: OwnedFd = if socket {
                std::os::unix::net::UnixStream::pair().unwrap().0.into()
            } else {
                std::io::pipe().unwrap().1.into()
            };
            // (The read ends were dropped at once.)
            let mut s = FileSender::new(file.as_fd(), w.as_fd(), path).unwrap();
            let e = s.send(0..100_000).unwrap_err();
            let (_, e) = e.into_parts();
            assert_eq!(
                e.raw_os_error(),
                Some(libc::EPIPE),
                "{path:?} socket {socket}"
            );
        }
    }
}
