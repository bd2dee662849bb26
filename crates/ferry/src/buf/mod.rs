//! The memory layer: immutable shared buffers, writable unique buffers,
//! buffer aggregates and content ids (IO-Lite's buffers, fbufs' ownership
//! hand-over, Roadrunner's reference buffers).
//!
//! * [`Buf`] — an immutable, cheaply cloned view of part of a block.
//! * [`BufMut`] — a unique, writable buffer with head and tail room;
//!   [`freeze`](BufMut::freeze) makes it a `Buf` without copying.
//! * [`Aggregate`] — an ordered list of `Buf` slices read as one sequence.
//! * [`ContentId`] — equal ids mean equal bytes for the life of the process.
//! * [`MappedFile`] — windows of a file mapped as `Buf`s under a read lease.
//!
//! Nothing here copies bytes unless its name says so; [`copied_bytes`]
//! counts the bytes those named copies moved.
//!
//! # Immutability, block by block
//!
//! A `Buf` never changes while anyone can see it, and so equal
//! `ContentId`s mean equal bytes. Each kind of block keeps that its own way:
//!
//! | block | who could write it | what stops them |
//! |---|---|---|
//! | heap, `Vec`, owner | a `BufMut` | it must be unique; `try_into_mut` bumps the generation |
//! | pool slot | the next `BufMut` of the slot | recycling bumps the generation |
//! | static | nobody | `'static` immutable bytes |
//! | leased file mapping | writers of the file | the read lease: before a writer may open the file, ferry's lease thread snapshots every live mapping in place (private copy, `mremap` over the same address), then lets it through |
//! | unchecked file mapping | writers of the file | the caller's promise ([`Buf::map_file_unchecked`]'s `# Safety`) |
//!
//! A snapshot keeps the block's id and generation: its bytes are the same,
//! so its `ContentId` still names them. It is no longer the file's pages
//! (no SIGBUS guard, and a pipe gets it by copy, not by `vmsplice`).
//! [`snapshot_bytes`] counts what snapshots copied.

mod aggregate;
mod backing;
pub(crate) mod block;
mod buf_mut;
mod content_id;
mod fmt;
mod leased;
mod mapped_file;
mod shared;
#[cfg(test)]
mod tests;

pub use aggregate::{Aggregate, AggregateReader, FragmentStats};
pub(crate) use backing::FileOwner;
pub use buf_mut::BufMut;
pub use content_id::ContentId;
pub use mapped_file::MappedFile;
pub use shared::Buf;

/// How many bytes of a leased mapping its snapshot copies at a time when a
/// writer comes ([`MappedFile`]): the memory a snapshot needs beside the
/// mappings it keeps, whatever their size.
///
/// ```
/// assert_eq!(ferry::buf::SNAPSHOT_STEP % ferry::sys_page_size(), 0);
/// ```
pub const SNAPSHOT_STEP: usize = crate::sys::map::SNAPSHOT_STEP;

use std::sync::atomic::{AtomicU64, Ordering};

static COPIED: AtomicU64 = AtomicU64::new(0);
static SNAPSHOT: AtomicU64 = AtomicU64::new(0);

pub(crate) fn count_snapshot(n: usize) {
    SNAPSHOT.fetch_add(n as u64, Ordering::Relaxed);
}

/// Bytes copied, process-wide, into private snapshots of leased file
/// mappings because a writer came (see [`MappedFile`]).
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f");
/// std::fs::write(&path, [1u8; 4096])?;
/// let b = ferry::Buf::map_file(&std::fs::File::open(&path)?, 0..4096)?;
/// let before = ferry::buf::snapshot_bytes();
/// std::fs::write(&path, [2u8; 4096])?; // waits for the snapshot
/// assert!(ferry::buf::snapshot_bytes() >= before + 4096);
/// assert_eq!(b[..], [1u8; 4096]);
/// # Ok(()) }
/// ```
pub fn snapshot_bytes() -> u64 {
    SNAPSHOT.load(Ordering::Relaxed)
}

pub(crate) fn count_copy(n: usize) {
    if n > 0 {
        COPIED.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// Bytes copied, process-wide, by the operations that say they copy
/// ([`Buf::copy_from_slice`], [`Buf::read_file`], [`Aggregate::coalesce`],
/// [`Aggregate::copy_to_slice`], [`Aggregate::copy_to_vec`],
/// [`Aggregate::replace`]). Everything else in the memory layer moves
/// references, not bytes — except the snapshots a writer of a leased file
/// forces, counted apart in [`snapshot_bytes`].
///
/// ```
/// let before = ferry::buf::copied_bytes();
/// let _ = ferry::Buf::copy_from_slice(b"1234");
/// assert!(ferry::buf::copied_bytes() >= before + 4);
/// ```
pub fn copied_bytes() -> u64 {
    COPIED.load(Ordering::Relaxed)
}
