//! # ferry — copy-avoiding I/O for Linux
//!
//! The I/O library chooses where data lives; the application is handed
//! references to it, not copies. This crate is the library: today its
//! memory layer —
//!
//! * [`Buf`], [`BufMut`], [`Aggregate`], [`ContentId`] (module [`buf`]):
//!   immutable shared buffers, unique writable buffers, buffer aggregates
//!   and generation-numbered content ids, after IO-Lite;
//! * [`Pool`] (module [`pool`]): page-aligned buffer pools with size classes
//!   and a byte budget, after fbufs and Roadrunner.
//!
//! ```
//! use ferry::{Aggregate, Buf, Pool};
//! let pool = Pool::new(Default::default()).unwrap();
//! let mut body = pool.alloc(10_000).unwrap();
//! body.extend_from_slice(b"<html>...</html>");
//! let mut response = Aggregate::from(Buf::from_static(b"HTTP/1.1 200 OK\r\n\r\n"));
//! response.append_buf(body.freeze());
//! assert_eq!(response.len(), 19 + 16);
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod buf;
pub mod pool;
pub mod stream;
mod sys;
#[cfg(test)]
mod test_support;

pub use buf::{Aggregate, AggregateReader, Buf, BufMut, ContentId, FragmentStats, MappedFile};
pub use pool::{Pool, PoolConfig, PoolError, PoolStats};
pub use stream::{
    Mode, OpenOptions, Region, RegionMut, SharedRegion, SharedRegionMut, SharedStream, Stream,
    StreamGuard,
};
pub use sys::IOV_MAX;

/// The size of a memory page, in bytes.
///
/// ```
/// assert!(ferry::sys_page_size() >= 4096);
/// ```
pub fn sys_page_size() -> usize {
    sys::page_size()
}

/// Copies up to `len` bytes of `input` from offset `in_off` into `output`
/// at `out_off` by reading them straight into the output's page cache (a
/// shared writable mapping of that window of `output`, filled by `pread`):
/// no buffer in between and no `write(2)`. Neither file offset moves.
///
/// `write(2)` to one file holds its inode lock, so two threads writing
/// halves of a file take turns; page faults do not, so threads calling this
/// on distinct ranges of one output work in parallel (`ferry cp` and
/// `ferry cat` use it beside `copy_file_range` for large copies on ext4).
/// The mapping asks for huge pages (`MADV_HUGEPAGE`): where the file
/// system keeps large folios, a window starting on a 2 MiB boundary of the
/// output then fills the page cache with 2 MiB folios rather than 4 KiB
/// pages, several times faster on ext4 here.
/// `output` must be open for reading and writing and already at least
/// `out_off + len` bytes long (`fallocate` it or set its length first);
/// where it is shorter the copy stops with an error naming the offset.
/// Returns the bytes copied, fewer than `len` only where `input` ends.
///
/// ```
/// use std::io::{Read, Seek, Write};
/// let mut input = tempfile::tempfile()?;
/// input.write_all(b"hello, world")?;
/// let mut output = tempfile::tempfile()?;
/// output.set_len(5)?;
/// let n = ferry::read_into_file(&input, 7, &output, 0, 5)?;
/// assert_eq!(n, 5);
/// let mut back = String::new();
/// output.rewind()?;
/// output.read_to_string(&mut back)?;
/// assert_eq!(back, "world");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn read_into_file(
    input: impl std::os::fd::AsFd,
    in_off: u64,
    output: impl std::os::fd::AsFd,
    out_off: u64,
    len: usize,
) -> std::io::Result<usize> {
    sys::map::read_into_file(input.as_fd(), in_off, output.as_fd(), out_off, len)
}
