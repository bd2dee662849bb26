//! Owned buffers sent to a socket without a copy: `MSG_ZEROCOPY`, with
//! each [`Buf`] held until the kernel says it is done with its pages.
//!
//! fbufs' point, on today's kernel: once the caller has handed a buffer
//! over it cannot touch the bytes again (a `Buf` is immutable, and the
//! sender keeps a reference), so the kernel may send straight from its
//! pages. Small sends cost more this way than a copy (pinning, and a
//! completion to read back), so pieces below a threshold are sent plain.
//!
//! What the kernel did is in the [stats](ZeroCopyStats): on loopback, and
//! wherever the bytes are delivered to a socket on this machine, it copies
//! anyway (each completion says so); only bytes leaving through a real
//! network device skip the copy.
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! use ferry::transfer::zerocopy::ZeroCopySender;
//! use std::io::Read;
//! use std::os::fd::AsFd;
//! let l = std::net::TcpListener::bind("127.0.0.1:0")?;
//! let tx = std::net::TcpStream::connect(l.local_addr()?)?;
//! let (mut rx, _) = l.accept()?;
//! let reader = std::thread::spawn(move || {
//!     let mut all = Vec::new();
//!     rx.read_to_end(&mut all).map(|_| all)
//! });
//! let mut s = ZeroCopySender::new(tx.as_fd(), 16 << 10);
//! s.send(ferry::Buf::from(vec![7u8; 1 << 20]))?;
//! assert!(s.flush(None)?); // every buffer back from the kernel
//! let st = s.stats();
//! drop(s);
//! drop(tx);
//! assert_eq!(reader.join().unwrap()?.len(), 1 << 20);
//! assert_eq!(st.bytes, 1 << 20);
//! // Where the socket takes MSG_ZEROCOPY, every zero-copy send completed.
//! assert_eq!(st.completed, st.zerocopy_sends);
//! # Ok(()) }
//! ```

use crate::sys::zerocopy::{self as zc, Completion};
use crate::{Aggregate, Buf};
use std::collections::VecDeque;
use std::io;
use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

/// What a [`ZeroCopySender`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ZeroCopyStats {
    /// Whether sends went zero-copy: the socket took `SO_ZEROCOPY` (a
    /// Unix socket does not) and had it off before — the first sender on
    /// a socket owns its completion ids; later ones send plain.
    pub enabled: bool,
    /// Bytes the kernel accepted, both ways.
    pub bytes: u64,
    /// Of those, sent with `MSG_ZEROCOPY`.
    pub zerocopy_bytes: u64,
    /// `send` calls that returned bytes, both ways.
    pub sends: u64,
    /// Of those, with `MSG_ZEROCOPY` (each takes a completion id).
    pub zerocopy_sends: u64,
    /// Zero-copy sends the kernel has reported done with.
    pub completed: u64,
    /// Of those, ones where it copied the bytes after all (loopback, any
    /// delivery to a local socket).
    pub copied: u64,
    /// Reads of the socket's error queue.
    pub reaps: u64,
    /// The most bytes held for the kernel at once.
    pub peak_held: u64,
}

/// One zero-copy send not yet completed; the buffer rides on the last
/// send of its bytes.
#[derive(Debug)]
struct Pending {
    done: bool,
    /// The buffer this send's bytes came from (every zero-copy send of a
    /// buffer holds a reference, so that an error between two of its
    /// sends leaves none of them without one), and the bytes it sent.
    held: Option<Buf>,
    bytes: u64,
}

/// Sends owned buffers to a socket, zero-copy above a threshold. See the
/// [module docs](self).
#[derive(Debug)]
pub struct ZeroCopySender<'fd> {
    fd: BorrowedFd<'fd>,
    threshold: usize,
    max_held: u64,
    /// The id of `pending[0]` (ids are consecutive, in send order).
    front_id: u32,
    pending: VecDeque<Pending>,
    held: u64,
    stats: ZeroCopyStats,
    scratch: Vec<Completion>,
}

impl<'fd> ZeroCopySender<'fd> {
    /// A sender on `fd` (a connected socket); pieces of at least
    /// `threshold` bytes go zero-copy where the socket allows it and no
    /// sender has used it zero-copy before ([`ZeroCopyStats::enabled`]).
    pub fn new(fd: BorrowedFd<'fd>, threshold: usize) -> Self {
        // Only the socket's first zero-copy sender knows the kernel's
        // completion ids (they count from 0 per socket): a socket with
        // SO_ZEROCOPY already on is sent to plain.
        let enabled = matches!(zc::enable(fd), Ok(true));
        ZeroCopySender {
            fd,
            threshold: threshold.max(1),
            max_held: 64 << 20,
            front_id: 0,
            pending: VecDeque::new(),
            held: 0,
            stats: ZeroCopyStats {
                enabled,
                ..ZeroCopyStats::default()
            },
            scratch: Vec::new(),
        }
    }

    /// At most `bytes` (at least one buffer's) held for the kernel at
    /// once: a send past it first waits for completions. 64 MiB unless
    /// set.
    pub fn with_max_held(mut self, bytes: u64) -> Self {
        self.max_held = bytes;
        self
    }

    /// Sends all of `data`: ownership passes, the bytes stay as they are
    /// until the kernel is done with them. A socket that would block is
    /// waited for. On error, [`stats`](Self::stats)`().bytes` are the
    /// bytes the kernel accepted.
    pub fn send(&mut self, data: impl Into<Aggregate>) -> io::Result<()> {
        let data = data.into();
        for b in data.bufs() {
            self.send_buf(b)?;
        }
        Ok(())
    }

    fn send_buf(&mut self, b: &Buf) -> io::Result<()> {
        let mut off = 0;
        while off < b.len() {
            let rest = &b[off..];
            let zero = self.stats.enabled && rest.len() >= self.threshold;
            if zero && self.held.saturating_add(rest.len() as u64) > self.max_held {
                self.wait_until_held_below(self.max_held.saturating_sub(rest.len() as u64))?;
            }
            match zc::send(self.fd, rest, zero) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    off += n;
                    self.stats.bytes += n as u64;
                    self.stats.sends += 1;
                    if zero {
                        self.stats.zerocopy_bytes += n as u64;
                        self.stats.zerocopy_sends += 1;
                        // Held from the moment the kernel may refer to
                        // the pages, whatever happens next.
                        self.pending.push_back(Pending {
                            done: false,
                            held: Some(b.clone()),
                            bytes: n as u64,
                        });
                        self.held += n as u64;
                        self.stats.peak_held = self.stats.peak_held.max(self.held);
                        if self.stats.zerocopy_sends.is_multiple_of(64) {
                            self.reap()?;
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.reap()?;
                    crate::sys::channel::wait_ready(self.fd, true)?;
                }
                // Too many completions outstanding (optmem_max): collect
                // some, then go on.
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) && !self.pending.is_empty() => {
                    let target = self.held / 2;
                    self.wait_until_held_below(target)?;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Takes in what the error queue holds; releases finished buffers.
    fn reap(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.stats.reaps += 1;
        self.scratch.clear();
        // Completions read before an error message (an ICMP error) count
        // too: they are taken in before the error is reported, or they
        // would be lost and their sends never complete.
        let read = zc::reap(self.fd, &mut self.scratch);
        for c in std::mem::take(&mut self.scratch) {
            let count = c.hi.wrapping_sub(c.lo) as u64 + 1;
            for k in 0..count {
                let idx = c.lo.wrapping_add(k as u32).wrapping_sub(self.front_id) as usize;
                if let Some(p) = self.pending.get_mut(idx) {
                    if !p.done {
                        p.done = true;
                        self.stats.completed += 1;
                        if c.copied {
                            self.stats.copied += 1;
                        }
                    }
                }
            }
        }
        while self.pending.front().is_some_and(|p| p.done) {
            if let Some(p) = self.pending.pop_front() {
                self.held -= p.bytes;
            }
            self.front_id = self.front_id.wrapping_add(1);
        }
        read.map(|_| ())
    }

    fn wait_until_held_below(&mut self, target: u64) -> io::Result<()> {
        while self.held > target && !self.pending.is_empty() {
            self.reap()?;
            if self.held <= target || self.pending.is_empty() {
                break;
            }
            self.wait(-1)?;
        }
        Ok(())
    }

    /// One wait for the error queue; a wake-up with nothing queued (the
    /// peer hung up) sleeps a moment rather than spinning.
    fn wait(&mut self, timeout_ms: i32) -> io::Result<()> {
        let before = self.stats.completed;
        if zc::wait_errqueue(self.fd, timeout_ms)? {
            self.reap()?;
            if self.stats.completed == before {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        Ok(())
    }

    /// Waits until the kernel is done with every buffer sent (`None`: for
    /// as long as it takes); returns whether it is.
    pub fn flush(&mut self, timeout: Option<Duration>) -> io::Result<bool> {
        let end = timeout.map(|t| Instant::now() + t);
        loop {
            self.reap()?;
            if self.pending.is_empty() {
                return Ok(true);
            }
            let ms = match end {
                None => -1,
                Some(end) => {
                    let left = end.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(false);
                    }
                    left.as_millis().clamp(1, i32::MAX as u128) as i32
                }
            };
            self.wait(ms)?;
        }
    }

    /// Bytes held for the kernel now (sent zero-copy, not yet completed).
    pub fn held(&self) -> u64 {
        self.held
    }

    /// What the sender did so far.
    pub fn stats(&self) -> ZeroCopyStats {
        self.stats
    }
}

impl Drop for ZeroCopySender<'_> {
    /// Waits up to 2 s for the kernel to finish with the buffers; any it
    /// still holds then are leaked, never freed: their pages may still be
    /// read by the kernel (a retransmission), so their memory must not be
    /// reused.
    fn drop(&mut self) {
        if matches!(self.flush(Some(Duration::from_secs(2))), Ok(true)) {
            return;
        }
        for p in self.pending.drain(..) {
            if let Some(b) = p.held {
                std::mem::forget(b);
            }
        }
    }
}
