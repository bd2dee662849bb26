//! `read_buf`: fbufs' `uf_read`, the library choosing the buffer.
//!
//! Today the buffer is a slot of the exchange's pool, filled by one
//! `read(2)`. io_uring's provided-buffer rings (`IORING_REGISTER_PBUF_RING`,
//! Linux 5.19; this machine runs 6.18) are the kernel's own version of the
//! idea — the kernel picks a buffer from a ring the process registered —
//! and are not used yet. What a sound version needs, and why it waits:
//!
//! * **No copy saved.** A provided buffer is filled by the kernel copying
//!   from its socket or page cache into it, exactly as `read(2)` copies
//!   into a pool slot. What rings save is memory for many idle sockets
//!   (no buffer is taken until data arrives), and with multishot receive,
//!   one submission for many reads. A synchronous `read_buf` already takes
//!   its slot just before the read, and a single read through a ring costs
//!   an `io_uring_enter` and completion handling where `read(2)` costs one
//!   system call: nothing to win for this call's shape.
//! * **Giving the buffer back from any thread.** A `Buf` is `Send`; its
//!   last drop may happen anywhere, and must put the buffer back in the
//!   ring (write the ring entry, then publish the tail with a release
//!   store). The tail is single-producer: drops would go through a lock or
//!   a queue the ring's owner drains before it submits. That needs a new
//!   `Backing` kind in `buf::block` (beside `Pool`) whose release pushes
//!   to that queue, with a generation bump on reuse as pool slots have.
//! * **Lifetimes.** The buffers' memory must outlive the registration,
//!   and the ring must outlive every `Buf` over it (an `Arc` held by each
//!   buffer's link, as pool slots hold their pool), and unregistering
//!   must wait for the kernel to give back every buffer it holds.
//! * **A dependency**: the `io-uring` crate (not yet one of ferry's), or
//!   its raw system calls in `sys`.
//!
//! The place for it is an asynchronous read path (the `aio` module
//! DESIGN.md plans, and multishot receive in the transfer engine), where
//! the ring's saving is real; `read_buf` would then take a ring buffer
//! where the descriptor has one registered.

use super::Exchange;
use crate::Buf;
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Arc;

impl Exchange {
    /// fbufs' `uf_read`: reads up to `max` bytes from `fd` (at its
    /// offset) into a buffer ferry picks — a page-aligned slot of the
    /// pool — and hands it over. One read: fewer bytes than `max` is not
    /// the end (a pipe or socket gives what it has). `max` above
    /// [`max_buf`](Self::max_buf) reads at most `max_buf` bytes.
    ///
    /// The end of the input is an **empty `Buf`** (and no slot is kept
    /// for it). `EINTR` is retried; a non-blocking descriptor that says
    /// `EAGAIN` is waited for with `poll`, as the transfer engine does.
    ///
    /// Errors: `InvalidInput` for `max == 0` (an empty `Buf` would read
    /// as the end of the input); `OutOfMemory` at the cap; a read error
    /// names the descriptor and keeps its OS error code
    /// ([`os_error`](crate::stream::os_error)).
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::Write;
    /// let ex = ferry::exchange::Exchange::new(1 << 20)?;
    /// let mut f = tempfile::tempfile()?;
    /// f.write_all(b"0123456789")?;
    /// std::io::Seek::rewind(&mut f)?;
    /// let a = ex.read_buf(&f, 4)?;
    /// let b = ex.read_buf(&f, 100)?;     // `a` still alive: another slot
    /// assert_eq!((&a[..], &b[..]), (&b"0123"[..], &b"456789"[..]));
    /// assert!(ex.read_buf(&f, 100)?.is_empty());
    /// # Ok(()) }
    /// ```
    pub fn read_buf(&self, fd: impl AsFd, max: usize) -> io::Result<Buf> {
        let fd = fd.as_fd();
        if max == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "read_buf of at most 0 bytes: its empty buffer would read as the end of the input",
            ));
        }
        let want = max.min(self.max_buf());
        let mut m = self.get_buf(want)?;
        let name = || -> Arc<str> { format!("fd {}", fd.as_raw_fd()).into() };
        let n = loop {
            match crate::sys::transfer::read(fd, &mut m.spare_capacity_mut()[..want]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    crate::sys::channel::wait_ready(fd, false)
                        .map_err(|e| crate::error::named("read_buf: waiting for", &name(), e))?;
                }
                Err(e) => return Err(crate::error::named("read_buf from", &name(), e)),
            }
        };
        if n == 0 {
            // The slot goes back now; the end needs no memory.
            return Ok(Buf::new());
        }
        m.commit(n);
        Ok(m.freeze())
    }
}
