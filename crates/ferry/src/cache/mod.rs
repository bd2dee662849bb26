//! The unified cache (IO-Lite §2.5 and §3.5): file extents kept as
//! immutable [`Buf`](crate::Buf)s, and values derived from bytes, kept for
//! as long as the bytes live and found again by their
//! [`ContentId`](crate::ContentId) — equal ids mean equal bytes, so a
//! value computed once for an id holds for every later `Buf` with that id.
//!
//! * [`FileCache`] — ⟨file identity, offset⟩ → immutable extents handed
//!   out as [`Aggregate`](crate::Aggregate)s, never stale, with snapshot
//!   semantics, IO-Lite's replacement order and a hard byte budget;
//!   [`CachedFile`], a file held open for it whose lookups ask the file
//!   nothing while ferry's read lease on it holds.
//! * [`Checksums`] — CRC-32C, the Internet checksum and a strong hash
//!   (BLAKE3, for HTTP ETags) per slice, computed once and reused; an
//!   [`Aggregate`](crate::Aggregate)'s CRC-32C and Internet checksum are
//!   combined from its slices' values without reading the bytes again.

mod checksums;
mod checksums_math;
mod checksums_stats;
#[cfg(test)]
mod checksums_tests;
mod file_cache;

pub use checksums::{ChecksumStats, Checksums, Damaged, FunctionStats};
pub use file_cache::{CacheConfig, CacheStats, CachedFile, FileCache, Fill, Looked};
