//! Buffer exchange: fbufs' `uf_*` interface on ferry's pools.
//!
//! `read(2)` and `write(2)` copy between the kernel and a buffer the
//! application chose. Here buffers change hands instead (Thadani and
//! Khalidi's fbufs for UNIX): the library picks the buffer a read fills
//! and hands it over; a write takes the buffer over and the caller cannot
//! touch it again. That is what makes zero-copy output safe: nobody can
//! change bytes the kernel may still be reading.
//!
//! ```text
//!  fbufs           ferry (Rust)                 C (ferry/exchange.h)
//!  uf_read         read_buf(fd, max) -> Buf     fy_uf_read
//!  uf_get          get_buf(len) -> BufMut       fy_uf_get
//!  uf_write        write_buf(fd, Buf|BufMut|Aggregate)   fy_uf_write
//!  uf_allocate     allocate(len) -> BufMut      fy_uf_allocate
//!  uf_deallocate   deallocate(..) (= drop)      fy_uf_deallocate
//!  uf_mmap         map(file, range) -> Buf      fy_uf_mmap
//!
//!            get_buf / allocate                 write_buf (ownership passes)
//!   Pool ──────────────────────► BufMut ──freeze──► Buf ─────────────► fd
//!    ▲  ◄── last reference drops (slot back, new generation) ──┘
//!    └─ read_buf(fd): a slot filled by read(2), frozen, handed out
//! ```
//!
//! An [`Exchange`] is a pool with a cap: every buffer it hands out
//! ([`read_buf`](Exchange::read_buf), [`get_buf`](Exchange::get_buf),
//! [`allocate`](Exchange::allocate)) is a page-aligned slot of its
//! [`Pool`], and the pool's byte budget is the process's memory cap for
//! them (fbufs: "the framework limits the total amount of memory that an
//! application can dedicate to fbufs"). Past the cap an allocation fails
//! at once with an `OutOfMemory` error — no spin, no wait, no panic.
//! [`Exchange::global`] is the process's own (fbufs: one pool per
//! process); the free functions [`read_buf`], [`get_buf`], [`write_buf`],
//! [`allocate`] and [`map`] use it.
//!
//! Ownership is by type in Rust: `write_buf` takes its buffer by value.
//! C has no such check; ferry/exchange.h refuses a pointer that is not a
//! live ferry buffer (fbufs' rule: an error, never a silent copy), and the
//! pool's **protect mode** ([`PoolConfig::protect`], on for
//! [`Exchange::global`] and [`Exchange::new`] when the environment has
//! `FERRY_EXCHANGE_PROTECT=1`) makes a buffer's pages read-only from the
//! moment it is frozen or written until the pool hands its slot out again
//! — IO-Lite's rule that a producer's write access is temporary. A C
//! program that writes through a pointer it kept after `fy_uf_write` then
//! dies of SIGSEGV at that write instead of changing bytes on their way
//! out.
//!
//! The end of the input is an empty `Buf` from `read_buf` (0 from
//! `fy_uf_read`), as `read(2)` returns 0. A descriptor in non-blocking
//! mode is waited for (`poll`) where it says `EAGAIN`, as the transfer
//! engine does; `EINTR` is retried.
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! use ferry::exchange::Exchange;
//! let ex = Exchange::new(1 << 20)?;               // a 1 MiB cap
//! let (r, w) = std::io::pipe()?;
//! let mut m = ex.get_buf(5)?;
//! m.extend_from_slice(b"hello");
//! ex.write_buf(&w, m)?;                             // m is gone
//! let got = ex.read_buf(&r, 4096)?;                 // a buffer ferry chose
//! assert_eq!(&got[..], b"hello");
//! assert!(got.is_pooled());
//! drop(w);
//! assert!(ex.read_buf(&r, 4096)?.is_empty());       // end of input
//! # Ok(()) }
//! ```
//!
//! Not here yet: io_uring provided-buffer rings for `read_buf` (see
//! `read.rs` for what they would need), `vmsplice` and `MSG_ZEROCOPY` for
//! `write_buf` (they go in `write::send_owned`, the one place owned
//! buffers leave the process).

mod owned;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub use owned::Owned;
pub use write::bytes_out;

use crate::{Buf, BufMut, Pool, PoolConfig};
use std::io;
use std::ops::Range;
use std::os::fd::AsFd;
use std::sync::OnceLock;

/// The environment variable that turns protect mode on for
/// [`Exchange::global`] and [`Exchange::new`]: `1` (or any value but `0`
/// and the empty string).
pub const PROTECT_ENV: &str = "FERRY_EXCHANGE_PROTECT";

/// The environment variable that sets [`Exchange::global`]'s cap, in
/// bytes, read once at its first use: a decimal number with an optional
/// `K`, `M` or `G` (binary multiples). Default [`DEFAULT_CAP`].
pub const CAP_ENV: &str = "FERRY_EXCHANGE_CAP";

/// [`Exchange::global`]'s cap when [`CAP_ENV`] is not set: 256 MiB.
pub const DEFAULT_CAP: usize = 256 << 20;

/// A buffer exchange: a pool whose budget is the cap on the memory the
/// buffers it hands out may hold, and the fbufs operations on it.
///
/// Cloning gives another handle to the same pool.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use ferry::exchange::Exchange;
/// let ex = Exchange::new(8192)?;
/// let a = ex.allocate(4096)?;
/// let b = ex.allocate(4096)?;
/// let e = ex.allocate(1).unwrap_err();              // past the cap
/// assert_eq!(e.kind(), std::io::ErrorKind::OutOfMemory);
/// ex.deallocate(a);
/// assert!(ex.allocate(1).is_ok());
/// # drop(b);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Exchange {
    pool: Pool,
}

impl Exchange {
    /// An exchange with its own pool: the default size classes (4 KiB to
    /// 1 MiB, powers of two) under a cap of `cap` bytes, in protect mode
    /// if [`PROTECT_ENV`] says so. `InvalidInput` if `cap` cannot hold
    /// one 4 KiB slot.
    ///
    /// ```
    /// let ex = ferry::exchange::Exchange::new(1 << 20).unwrap();
    /// assert_eq!(ex.cap(), 1 << 20);
    /// assert!(ferry::exchange::Exchange::new(100).is_err());
    /// ```
    pub fn new(cap: usize) -> io::Result<Exchange> {
        Exchange::with_config(
            PoolConfig::default()
                .with_budget(cap)
                .with_protect(protect_from_env()),
        )
    }

    /// An exchange with its own pool made from `config` exactly (its
    /// `protect` flag included; the environment is not read).
    ///
    /// ```
    /// use ferry::{exchange::Exchange, PoolConfig};
    /// let ex = Exchange::with_config(PoolConfig::default().with_classes(vec![65536]).with_budget(1 << 20)).unwrap();
    /// assert_eq!(ex.get_buf(1).unwrap().capacity(), 65536);
    /// ```
    pub fn with_config(config: PoolConfig) -> io::Result<Exchange> {
        Ok(Exchange {
            pool: Pool::new(config)?,
        })
    }

    /// An exchange on a pool the caller already has (shared with whoever
    /// else holds it: the cap is the pool's budget, for all of them).
    ///
    /// ```
    /// let ex = ferry::exchange::Exchange::with_pool(ferry::Pool::global().clone());
    /// assert_eq!(ex.cap(), ferry::Pool::global().budget());
    /// ```
    pub fn with_pool(pool: Pool) -> Exchange {
        Exchange { pool }
    }

    /// The process's exchange, made at first use: its own pool with the
    /// default classes, the cap [`CAP_ENV`] sets (else [`DEFAULT_CAP`]),
    /// protect mode if [`PROTECT_ENV`] says so. An unreadable
    /// `FERRY_EXCHANGE_CAP` is an `InvalidInput` error from every call
    /// (never silently the default).
    ///
    /// ```
    /// let ex = ferry::exchange::Exchange::global().unwrap();
    /// assert!(ex.cap() >= 4096);
    /// ```
    pub fn global() -> io::Result<&'static Exchange> {
        static GLOBAL: OnceLock<Result<Exchange, String>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| {
                let cap = match std::env::var_os(CAP_ENV) {
                    None => DEFAULT_CAP,
                    Some(v) => parse_cap(&v.to_string_lossy())
                        .ok_or_else(|| format!("{CAP_ENV}={v:?} is not a number of bytes"))?,
                };
                Exchange::new(cap).map_err(|e| format!("{CAP_ENV}: {e}"))
            })
            .as_ref()
            .map_err(|m| io::Error::new(io::ErrorKind::InvalidInput, m.clone()))
    }

    /// The pool the buffers come from.
    ///
    /// ```
    /// let ex = ferry::exchange::Exchange::new(1 << 20).unwrap();
    /// drop(ex.get_buf(100).unwrap());
    /// assert_eq!(ex.pool().stats().free_slots, 1);
    /// ```
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The cap: most bytes of buffer memory the pool holds at once.
    ///
    /// ```
    /// assert_eq!(ferry::exchange::Exchange::new(65536).unwrap().cap(), 65536);
    /// ```
    pub fn cap(&self) -> usize {
        self.pool.budget()
    }

    /// The largest buffer it hands out (the pool's largest class).
    ///
    /// ```
    /// assert_eq!(ferry::exchange::Exchange::new(1 << 20).unwrap().max_buf(), 1 << 20);
    /// ```
    pub fn max_buf(&self) -> usize {
        self.pool.classes().last().copied().unwrap_or(0)
    }

    /// fbufs' `uf_get`: an empty buffer from the pool with room for at
    /// least `len` bytes (the smallest class that holds them: page
    /// aligned, its whole capacity writable).
    ///
    /// Errors: `InvalidInput` if `len` is more than
    /// [`max_buf`](Self::max_buf); `OutOfMemory` if the cap is reached
    /// by buffers still held (returned at once: no wait).
    ///
    /// ```
    /// let ex = ferry::exchange::Exchange::new(1 << 20).unwrap();
    /// let mut m = ex.get_buf(5000).unwrap();
    /// assert!(m.is_empty() && m.capacity() >= 5000);
    /// m.extend_from_slice(b"data");
    /// assert_eq!(ex.get_buf(usize::MAX).unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
    /// ```
    pub fn get_buf(&self, len: usize) -> io::Result<BufMut> {
        Ok(self.pool.alloc(len)?)
    }

    /// fbufs' `uf_allocate`: a buffer of exactly `len` bytes (its length,
    /// not only its room) to fill in place. The bytes are what the slot
    /// last held (zeros in a new slot): initialized, not cleared. Errors
    /// as [`get_buf`](Self::get_buf).
    ///
    /// ```
    /// let ex = ferry::exchange::Exchange::new(1 << 20).unwrap();
    /// let mut m = ex.allocate(3).unwrap();
    /// assert_eq!(m.len(), 3);
    /// m.copy_from_slice(b"abc");
    /// ex.deallocate(m);
    /// ```
    pub fn allocate(&self, len: usize) -> io::Result<BufMut> {
        let mut m = self.get_buf(len)?;
        m.commit(len);
        Ok(m)
    }

    /// fbufs' `uf_deallocate`: gives a buffer back. In Rust this is
    /// `drop` (a pool slot returns to its pool when its last reference
    /// goes, here or later); it is here so that code reads as the fbufs
    /// interface does.
    ///
    /// ```
    /// let ex = ferry::exchange::Exchange::new(4096).unwrap();
    /// let m = ex.allocate(10).unwrap();
    /// assert!(ex.allocate(10).is_err());
    /// ex.deallocate(m);
    /// assert!(ex.allocate(10).is_ok());
    /// ```
    pub fn deallocate(&self, buf: impl Into<Owned>) {
        drop(buf.into());
    }

    /// fbufs' `uf_mmap`: bytes `range` of `file` as a `Buf` over the
    /// file's pages, under ferry's read lease ([`Buf::map_file`]: its
    /// bytes never change, whoever writes the file later). File pages are
    /// not pool memory: they do not count against the cap.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f");
    /// std::fs::write(&path, b"mapped bytes")?;
    /// let ex = ferry::exchange::Exchange::new(1 << 20)?;
    /// let b = ex.map(&std::fs::File::open(&path)?, 7..12)?;
    /// assert_eq!(&b[..], b"bytes");
    /// # Ok(()) }
    /// ```
    pub fn map(&self, file: &std::fs::File, range: Range<u64>) -> io::Result<Buf> {
        Buf::map_file(file, range)
    }
}

/// Is protect mode asked for in the environment ([`PROTECT_ENV`])?
///
/// ```
/// // (The environment of doc tests has no FERRY_EXCHANGE_PROTECT.)
/// # if std::env::var_os(ferry::exchange::PROTECT_ENV).is_none() {
/// assert!(!ferry::exchange::protect_from_env());
/// # }
/// ```
pub fn protect_from_env() -> bool {
    std::env::var_os(PROTECT_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// A byte count: decimal digits and an optional K, M or G (×1024ⁿ).
fn parse_cap(s: &str) -> Option<usize> {
    let s = s.trim();
    let (digits, shift) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 10),
        b'M' | b'm' => (&s[..s.len() - 1], 20),
        b'G' | b'g' => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    let n: usize = digits.parse().ok()?;
    n.checked_mul(1usize << shift)
}

/// [`Exchange::read_buf`] on [`Exchange::global`].
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// let (r, w) = std::io::pipe()?;
/// std::io::Write::write_all(&mut &w, b"in")?;
/// assert_eq!(&ferry::exchange::read_buf(&r, 100)?[..], b"in");
/// # Ok(()) }
/// ```
pub fn read_buf(fd: impl AsFd, max: usize) -> io::Result<Buf> {
    Exchange::global()?.read_buf(fd, max)
}

/// [`Exchange::get_buf`] on [`Exchange::global`].
///
/// ```
/// assert!(ferry::exchange::get_buf(10).unwrap().capacity() >= 10);
/// ```
pub fn get_buf(len: usize) -> io::Result<BufMut> {
    Exchange::global()?.get_buf(len)
}

/// [`Exchange::allocate`] on [`Exchange::global`].
///
/// ```
/// assert_eq!(ferry::exchange::allocate(10).unwrap().len(), 10);
/// ```
pub fn allocate(len: usize) -> io::Result<BufMut> {
    Exchange::global()?.allocate(len)
}

/// [`Exchange::write_buf`] (it needs no pool: the buffer knows its own).
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// let (r, w) = std::io::pipe()?;
/// assert_eq!(ferry::exchange::write_buf(&w, ferry::Buf::from_static(b"out"))?, 3);
/// let mut got = [0u8; 3];
/// std::io::Read::read_exact(&mut &r, &mut got)?;
/// assert_eq!(&got, b"out");
/// # Ok(()) }
/// ```
pub fn write_buf(fd: impl AsFd, data: impl Into<Owned>) -> io::Result<usize> {
    write::write_buf(fd.as_fd(), data.into())
}

/// [`Exchange::map`] (a file's pages: no pool needed).
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f");
/// std::fs::write(&path, b"abc")?;
/// assert_eq!(&ferry::exchange::map(&std::fs::File::open(&path)?, 0..3)?[..], b"abc");
/// # Ok(()) }
/// ```
pub fn map(file: &std::fs::File, range: Range<u64>) -> io::Result<Buf> {
    Buf::map_file(file, range)
}
