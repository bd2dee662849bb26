//! `Request` as a `Future` mixed with its other methods: no call order
//! from safe code panics or loses the buffer.

use ferry::aio::{AsyncFile, Backend};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// A file of `n` bytes, open for reading as an `AsyncFile` on backend `b`.
fn async_file_of(b: Backend, n: usize) -> (tempfile::TempDir, AsyncFile) {
    let (dir, p) = crate::support::file_with(&vec![5u8; n]);
    let f = AsyncFile::with_options(&p, std::fs::File::options().read(true), b).unwrap();
    (dir, f)
}

/// `Request` was `Unpin`, so safe code could poll it in place (as
/// `futures::FutureExt::now_or_never(&mut r)` or a `select!` on `&mut r`
/// does) and keep it; polling it to `Ready` took the buffer out, and a
/// later `into_inner` reached `unreachable!` in request.rs — a panic from
/// safe code. It is not `Unpin` now: polling pins it, so that call order
/// does not compile. Checked here at compile time (the trait call is
/// ambiguous, an error, for an `Unpin` type).
#[test]
fn a_request_is_not_unpin() {
    trait AmbiguousIfUnpin<A> {
        fn check() {}
    }
    impl<T: ?Sized> AmbiguousIfUnpin<()> for T {}
    impl<T: ?Sized + Unpin> AmbiguousIfUnpin<u8> for T {}
    <ferry::aio::Request<ferry::BufMut> as AmbiguousIfUnpin<_>>::check();
}

/// Polling a finished request twice: the second poll must not panic (it
/// answers an error, which is allowed of a Future polled after Ready).
#[test]
fn a_second_poll_after_ready_is_an_error_not_a_panic() {
    for b in [Backend::IoUring, Backend::Threads] {
        let (_d, f) = async_file_of(b, 4096);
        let r = f.read_at(0, 4096).unwrap();
        assert!(r.wait(Some(Duration::from_secs(5))).unwrap());
        let mut r = std::pin::pin!(r);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(matches!(r.as_mut().poll(&mut cx), Poll::Ready(Ok(_))));
        assert!(matches!(r.as_mut().poll(&mut cx), Poll::Ready(Err(_))));
    }
}

/// A waker that drops the request it wakes (the last handle) on the
/// reaper thread: nothing may deadlock or free early.
#[test]
fn a_waker_that_drops_its_own_request() {
    use std::sync::{Arc, Mutex};
    struct W(
        Mutex<Option<Pin<Box<ferry::aio::Request<ferry::BufMut>>>>>,
        std::sync::mpsc::Sender<()>,
    );
    impl std::task::Wake for W {
        fn wake(self: Arc<Self>) {
            drop(self.0.lock().unwrap().take());
            let _ = self.1.send(());
        }
    }
    for b in [Backend::IoUring, Backend::Threads] {
        let (r, mut w) = std::io::pipe().unwrap();
        let f = AsyncFile::from_fd(std::os::fd::OwnedFd::from(r), b).unwrap();
        let mut req = Box::pin(f.read(8).unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        let wk = Arc::new(W(Mutex::new(None), tx));
        let waker = Waker::from(wk.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(req.as_mut().poll(&mut cx).is_pending());
        *wk.0.lock().unwrap() = Some(req);
        std::io::Write::write_all(&mut w, b"12345678").unwrap();
        assert!(rx.recv_timeout(Duration::from_secs(5)).is_ok(), "{b:?}");
        // The backend still works after it.
        let (_d, g) = async_file_of(b, 10);
        assert!(g
            .read_at(0, 10)
            .unwrap()
            .wait(Some(Duration::from_secs(5)))
            .unwrap());
    }
}
