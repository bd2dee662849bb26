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

pub use buf::{Aggregate, AggregateReader, Buf, BufMut, ContentId, FragmentStats};
pub use pool::{Pool, PoolConfig, PoolError, PoolStats};
pub use stream::{Mode, OpenOptions, Region, RegionMut, Stream, StreamGuard};
pub use sys::IOV_MAX;

/// The size of a memory page, in bytes.
///
/// ```
/// assert!(ferry::sys_page_size() >= 4096);
/// ```
pub fn sys_page_size() -> usize {
    sys::page_size()
}
