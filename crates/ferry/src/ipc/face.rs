//! The faces of an ipc channel for programs that want bytes
//! (`std::io::Read` / `Write`, which copy, as `read(2)` and `write(2)`
//! do) and for those that want buffers (`read_buf` / `write_buf`, the
//! [`exchange`](crate::exchange) face, which do not).

use super::{Receiver, Sender};
use crate::exchange::Owned;
use crate::Buf;
use std::io;

impl Sender {
    /// Sends `data` as one message, taking it over (fbufs' `uf_write`):
    /// the pieces that are `Buf`s of this sender's pool go by reference,
    /// others are copied into it. Returns the bytes sent.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let (a, b) = ferry::ipc::pair()?;
    /// let mut tx = ferry::ipc::Sender::new(a, Default::default())?;
    /// // SAFETY: the peer is this example's own ferry Sender.
    /// let mut rx = unsafe { ferry::ipc::Receiver::new(b, None)? };
    /// let mut m = tx.alloc()?;
    /// m[..3].copy_from_slice(b"abc");
    /// assert_eq!(tx.write_buf(m.freeze(3))?, 3);
    /// assert_eq!(&rx.read_buf()?[..], b"abc");
    /// # Ok(()) }
    /// ```
    pub fn write_buf(&mut self, data: impl Into<Owned>) -> io::Result<usize> {
        let agg = data.into().into_aggregate();
        let n = agg.len();
        self.send(agg)?;
        Ok(n)
    }
}

impl Receiver {
    /// The next buffer of the channel, by reference (fbufs' `uf_read`): the
    /// rest of the current message's next piece, else the first piece of
    /// the next message. An empty `Buf` is the end (the sender closed).
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let (a, b) = ferry::ipc::pair()?;
    /// let mut tx = ferry::ipc::Sender::new(a, Default::default())?;
    /// // SAFETY: the peer is this example's own ferry Sender.
    /// let mut rx = unsafe { ferry::ipc::Receiver::new(b, None)? };
    /// tx.send_bytes(b"xyz")?;
    /// drop(tx);
    /// assert_eq!(&rx.read_buf()?[..], b"xyz");
    /// assert!(rx.read_buf()?.is_empty());
    /// # Ok(()) }
    /// ```
    pub fn read_buf(&mut self) -> io::Result<Buf> {
        loop {
            let next = self.current.bufs().next().cloned();
            if let Some(b) = next {
                self.current.advance(b.len());
                if !b.is_empty() {
                    return Ok(b);
                }
                continue;
            }
            match self.recv()? {
                Some(m) => self.current = m,
                None => return Ok(Buf::new()),
            }
        }
    }
}

/// Each `write` is one message, copied into the pool: at most the pool's
/// size (a message must fit it), so a larger buffer is written in part,
/// as `write(2)` may do, and `write_all` goes on with the rest.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use std::io::{Read, Write};
/// let (a, b) = ferry::ipc::pair()?;
/// let mut tx = ferry::ipc::Sender::new(a, Default::default())?;
/// // SAFETY: the peer is this example's own ferry Sender.
/// let mut rx = unsafe { ferry::ipc::Receiver::new(b, None)? };
/// tx.write_all(b"bytes in, ")?;
/// tx.write_all(b"bytes out")?;
/// drop(tx);
/// let mut s = String::new();
/// rx.read_to_string(&mut s)?;
/// assert_eq!(s, "bytes in, bytes out");
/// # Ok(()) }
/// ```
impl io::Write for Sender {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = buf.len().min(self.pool_size());
        self.send_bytes(&buf[..n])?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reads copy the received bytes out; 0 is the end (the sender closed),
/// or a read into no room at all, which returns at once.
impl io::Read for Receiver {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        while self.current.is_empty() {
            match self.recv()? {
                Some(m) => self.current = m,
                None => return Ok(0),
            }
        }
        let n = self.current.copy_to_slice(0, out);
        self.current.advance(n);
        Ok(n)
    }
}
