//! [`Request`]: the handle to one started operation (the paper's
//! `AsyncFileRequest`), and waiting on many ([`all_done`], [`any_done`]).

use super::buffer::Owned;
use super::slot::{wait_until, Slot, State};
use std::future::Future;
use std::io;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// A started read or write that owns its buffer `B` (a
/// [`BufMut`](crate::BufMut) read into, a [`Buf`](crate::Buf) written, a
/// `Vec<T>` of elements) until the kernel is done with it.
///
/// Timeouts: `None` waits for ever, `Some(Duration::ZERO)` only looks.
///
/// A request is not `Unpin`: polling it as a future pins it, so a request
/// whose future gave its buffer away cannot be asked for it again.
pub struct Request<B> {
    pub(crate) slot: Arc<Slot>,
    pub(crate) _buf: PhantomData<fn() -> B>,
    pub(crate) _pin: std::marker::PhantomPinned,
}

impl<B> std::fmt::Debug for Request<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("what", &self.slot.what)
            .field("state", &self.slot.st.lock().state)
            .finish()
    }
}

/// What [`all_done`] and [`any_done`] wait on: a request of any buffer
/// type.
pub trait Pending {
    /// `Ok(true)`: done; `Ok(false)`: in flight; the request's sticky
    /// error otherwise.
    fn done(&self) -> io::Result<bool>;
}

impl<B> Pending for Request<B> {
    fn done(&self) -> io::Result<bool> {
        self.slot.check()
    }
}

impl<B: 'static> Request<B> {
    /// Whether the request is done, without waiting (the paper's
    /// `done()` with a zero time): `Ok(true)` completed (or its error
    /// cleared), `Ok(false)` in flight, `Err` its I/O error or
    /// [`Cancelled`](super::Cancelled) — again at every call, until
    /// [`clear_exception`](Self::clear_exception).
    pub fn done(&self) -> io::Result<bool> {
        self.slot.check()
    }

    /// Waits up to `timeout` for the request to be done (see
    /// [`done`](Self::done) for the answer).
    pub fn wait(&self, timeout: Option<Duration>) -> io::Result<bool> {
        all_done(&[self], timeout)
    }

    /// Where the request is.
    pub fn state(&self) -> State {
        self.slot.st.lock().state
    }

    /// Cancels the request if it is in flight (nothing if it is over).
    /// From now on it reports [`Cancelled`](super::Cancelled) until
    /// cleared; its buffer comes back when the kernel lets go of it.
    pub fn cancel(&self) {
        self.slot.cancel()
    }

    /// Moves a failed or cancelled request to [`State::Cleared`]: later
    /// `done`/`wait` calls count it as done and report nothing.
    pub fn clear_exception(&self) {
        self.slot.clear()
    }

    /// The bytes the operation moved, once the kernel has let go of the
    /// buffer ([`is_released`](Self::is_released)): all of them when it
    /// completed, and after an error, a cancel or its deadline the bytes
    /// that moved before (a read's buffer then holds exactly those; for a
    /// pipe or socket they are gone from the stream). `None` before.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use ferry::aio::{AsyncFile, Backend};
    /// use std::io::Write;
    /// let (r, mut w) = std::io::pipe()?;
    /// let f = AsyncFile::from_fd(r.into(), Backend::Auto)?;
    /// let req = f.read(100)?;
    /// w.write_all(&[7u8; 60])?;
    /// drop(w); // the input ends after 60 of the 100 bytes
    /// assert!(req.wait(None).is_err());
    /// assert!(req.wait_released(None));
    /// assert_eq!(req.bytes(), Some(60));
    /// assert_eq!(&req.into_inner()[..], &[7u8; 60][..]);
    /// # Ok(()) }
    /// ```
    pub fn bytes(&self) -> Option<usize> {
        self.slot.st.lock().bytes
    }

    /// True once the kernel has let go of the buffer
    /// ([`into_inner`](Self::into_inner) would not wait).
    pub fn is_released(&self) -> bool {
        !self.slot.st.lock().held
    }

    /// Waits up to `timeout` until the kernel has let go of the buffer
    /// (for a cancelled request, until its completion arrives); whether
    /// it has.
    pub fn wait_released(&self, timeout: Option<Duration>) -> bool {
        wait_until(timeout, || self.is_released())
    }

    /// The buffer back, waiting for the kernel to let go of it if it has
    /// not (for a cancelled request, until its completion arrives).
    /// After an error or a cancel its contents are whatever arrived.
    pub fn into_inner(self) -> B {
        match self.slot.take_buffer(None) {
            Some(b) => downcast(b),
            None => unreachable!("a request's buffer comes back once"),
        }
    }

    /// [`into_inner`](Self::into_inner) waiting at most `timeout`; the
    /// request back if the kernel still holds the buffer.
    pub fn try_into_inner(self, timeout: Option<Duration>) -> Result<B, Request<B>> {
        if !wait_until(timeout, || self.is_released()) {
            return Err(self);
        }
        Ok(self.into_inner())
    }
}

fn downcast<B: 'static>(b: Box<dyn Owned>) -> B {
    let any: Box<dyn std::any::Any> = b.into_any();
    match any.downcast::<B>() {
        Ok(b) => *b,
        Err(_) => unreachable!("a request's buffer has the request's type"),
    }
}

/// The request's outcome once the kernel has let go of the buffer: the
/// buffer, or the request's error (the buffer is then dropped).
impl<B: 'static> Future for Request<B> {
    type Output = io::Result<B>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<B>> {
        let this = self.as_ref().get_ref();
        match this.slot.set_waker(cx.waker()) {
            Ok(false) => Poll::Pending,
            Ok(true) => match this.slot.take_buffer(Some(Duration::ZERO)) {
                Some(b) => Poll::Ready(Ok(downcast(b))),
                None => Poll::Ready(Err(io::Error::other("the request's buffer was taken"))),
            },
            Err(e) => {
                let _ = this.slot.take_buffer(Some(Duration::ZERO));
                Poll::Ready(Err(e))
            }
        }
    }
}

/// Waits up to `timeout` until every request in `reqs` is done: `Ok(true)`
/// all done, `Ok(false)` the time ran out; the first sticky error among
/// them (in list order) as soon as one is seen.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use ferry::aio::{all_done, AsyncFile, Pending};
/// let path = tempfile::NamedTempFile::new()?.into_temp_path();
/// let f = AsyncFile::create(&path)?;
/// let a = f.write_at(0, ferry::Buf::from_static(b"hello "))?;
/// let b = f.write_at(6, ferry::Buf::from_static(b"world"))?;
/// assert!(all_done(&[&a as &dyn Pending, &b], None)?);
/// assert_eq!(std::fs::read(&path)?, b"hello world");
/// # Ok(()) }
/// ```
pub fn all_done(reqs: &[&dyn Pending], timeout: Option<Duration>) -> io::Result<bool> {
    let mut err = None;
    let ok = wait_until(timeout, || {
        for r in reqs {
            match r.done() {
                Ok(true) => {}
                Ok(false) => return false,
                Err(e) => {
                    err = Some(e);
                    return true;
                }
            }
        }
        true
    });
    match err {
        Some(e) => Err(e),
        None => Ok(ok),
    }
}

/// Waits up to `timeout` until one request in `reqs` is done:
/// `Ok(Some(i))` the first done in list order, `Ok(None)` the time ran
/// out (or the list is empty); a sticky error of a request it looked at
/// before finding one done.
pub fn any_done(reqs: &[&dyn Pending], timeout: Option<Duration>) -> io::Result<Option<usize>> {
    if reqs.is_empty() {
        return Ok(None);
    }
    let mut found = Ok(None);
    wait_until(timeout, || {
        for (i, r) in reqs.iter().enumerate() {
            match r.done() {
                Ok(true) => {
                    found = Ok(Some(i));
                    return true;
                }
                Ok(false) => {}
                Err(e) => {
                    found = Err(e);
                    return true;
                }
            }
        }
        false
    });
    found
}
