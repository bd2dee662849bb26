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
//! * [`MappedFile`]: file windows mapped into `Buf`s, kept immutable by a
//!   read lease and a copy-on-write snapshot when a writer comes.
//! * [`Stream`] (module [`stream`]): alloc streams, after the Alloc Stream
//!   Facility.
//! * module [`exchange`]: fbufs' buffer exchange — [`exchange::read_buf`]
//!   (the library picks the buffer), [`exchange::get_buf`],
//!   [`exchange::write_buf`] (ownership passes), [`exchange::map`], on a
//!   pool with a per-process cap ([`exchange::Exchange`]).
//! * module [`bulk`]: whole typed arrays read and written in one call,
//!   in the file's byte order, after Titanium's bulk I/O extensions; and
//!   bytes in memory viewed as typed arrays without a copy.
//! * module [`aio`]: asynchronous file requests (Titanium's `AsyncFile`)
//!   that own their buffers until the kernel is done, with done/wait,
//!   all/any, cancel and sticky errors, on io_uring or worker threads.
//! * module [`ipc`]: IO-Lite's cross-domain transfer — `Buf`s and
//!   `Aggregate`s passed to another process by reference, through a pool
//!   in a sealed memfd the receiver maps read-only.
//! * module [`transfer`]: whole inputs moved to outputs by the kernel's
//!   copy paths (`copy_file_range`, `splice`, `sendfile`, on two threads
//!   for large files), and [`transfer::OrderedOut`] for output a program
//!   formats itself.
//! * module [`cache`]: IO-Lite's unified cache. [`cache::Checksums`],
//!   keyed by [`ContentId`], computes CRC-32C, the Internet checksum and a
//!   BLAKE3 ETag once per slice and combines an aggregate's from its
//!   slices'; [`cache::FileCache`] keeps extents of files as immutable
//!   `Buf`s handed out as `Aggregate`s, never stale, with snapshot
//!   semantics, IO-Lite's replacement order and a hard byte budget.
//!
//! ## Layers
//!
//! The library is built in layers, each naming only its own and those
//! below it (bottom up): errors (`error`: the error types and helpers
//! every layer shares) → the OS (`sys`: raw system calls and feature
//! probes; it returns values and never calls up) → memory (`buf`, then
//! `pool`, which hands out `buf`'s blocks) → backends (the stream
//! modules) → engines (the stream engine; [`transfer`]'s kernel paths,
//! buffer cache and overlay; the unified [`cache`]; [`ipc`]'s channel) → interfaces ([`stream`]'s API and `std::io`,
//! [`exchange`], [`bulk`], [`aio`] with its two backends, [`ipc`]'s
//! faces, and
//! [`transfer`]'s streaming between endpoints) → applications ([`sort`],
//! built on the interfaces). A lower layer hears from a higher one only
//! through what it defines itself: a trait, a callback, a table of
//! functions, a return value. The list, with its rules, is
//! `crates/ferry/layers.txt`, and `scripts/check-layers.sh` (run in CI)
//! fails where a module names a layer above its own.
//!
//! ## The rule: a `Buf` never changes while anyone can see it
//!
//! Every other promise rests on this one: a `&[u8]` from a [`Buf`] is
//! never written behind its back (Rust requires it), and two equal
//! [`ContentId`]s (block id + generation) mean equal bytes for the life
//! of the process — the checksum cache keys on exactly that. What
//! keeps it, for each kind of block:
//!
//! * **heap** (`BufMut` frozen, `copy_from_slice`, `read_file`) and
//!   **`Vec`/owner** blocks: ferry's own memory; only a unique `BufMut`
//!   writes, and taking a block back to write (`try_into_mut`) moves it
//!   to a new generation, so old ids never match the new bytes;
//! * **pool slots**: the same, and a slot going back to its pool gets a
//!   new generation before it is handed out again;
//! * **static** bytes: `'static` and immutable by Rust's own rules;
//! * **leased file mappings** ([`Buf::map_file`], [`MappedFile::map`],
//!   mapped streams): ferry holds a read lease (`F_SETLEASE`) on its own
//!   read-only open of the file, so the kernel refuses the lease while
//!   anyone has the file open for writing and, while it is held, tells
//!   ferry before anyone may open it for writing or truncate it. ferry's
//!   lease thread then copies every live mapping of the file into private
//!   read-only memory and moves that over the same addresses (IO-Lite's
//!   copy-on-write, done in user space) before giving the lease up: the
//!   bytes behind each `Buf` — and so behind its `ContentId` — stay the
//!   ones it was made with; only later mappings see the writer's bytes;
//! * **unchecked mappings** ([`Buf::map_file_unchecked`], `unsafe`): the
//!   caller's promise that nobody writes the range while the `Buf` lives.
//!   A file that only shrinks is tolerated: the SIGBUS guard puts zeros
//!   where the pages went and [`Buf::is_intact`] turns false;
//! * **received ipc buffers** ([`ipc::Receiver`], made with an `unsafe`
//!   constructor): the sender's pages, which a ferry
//!   [`ipc::Sender`] writes again only after the receiver released them;
//!   whoever connects the receiver vouches that its peer is such a
//!   sender.
//!
//! Where no lease can be had (the file is open for writing, belongs to
//! another user, or its file system has no leases) the safe mapping API
//! fails and says why; [`Buf::read_file`] copies instead, and a stream
//! that would have mapped reads into buffers. Writes through a descriptor
//! opened for writing *before* the lease cannot happen, because then the
//! lease is refused.
//!
//! ### What a leased mapping promises, exactly
//!
//! A leased `Buf` either keeps the bytes it was made with, or says it lost
//! them; it never shows other bytes as intact ones:
//!
//! * **a writer comes** (an open for writing, or `truncate(2)`; a file
//!   renamed over it leaves the old file, and the `Buf`, as they are): the
//!   snapshot copies
//!   the mapped windows [`SNAPSHOT_STEP`](crate::buf::SNAPSHOT_STEP) bytes
//!   at a time, so it needs memory for one step beside the mappings, not
//!   a second copy of them all. Where even that cannot be had, what was
//!   not copied is replaced by zeros and the `Buf` is *lost*; the writer
//!   goes on at once either way.
//! * **a change the lease does not announce**: Linux empties a file opened
//!   *read-only* with `O_TRUNC` (by anyone allowed to write it) without
//!   breaking a read lease. ferry finds it by the file's size — nothing
//!   else can change a leased file unannounced, and nothing can grow it
//!   again without breaking the lease — at the next
//!   [`Buf::is_intact`], [`MappedFile::map`] or [`MappedFile::size`], at
//!   the next break, or when a lost page is touched (the SIGBUS guard).
//!   Every mapping made before is then lost; `map` hands out only
//!   mappings of the file as it is now.
//! * **lost** means: the bytes read as zeros (never the file's later
//!   bytes), [`Buf::is_intact`] is false from then on, and
//!   [`Buf::content_id`] has [`ContentId::DAMAGED`] set, so it never
//!   equals the id the `Buf` had while intact. Before ferry has noticed
//!   (a read-only `O_TRUNC` open, and nothing above asked yet), the bytes
//!   may already read as zeros with the old id: callers who key on ids
//!   (a cache) check `is_intact()` before trusting what they serve.
//! * the promise is the `Buf`'s: [`Buf::write_all_to`] hands a leased
//!   mapping that is still the file's pages to a pipe by reference
//!   (`vmsplice`), and then the pipe's reader gets the pages as they are
//!   when it reads — a writer's bytes, if one came meanwhile — as a
//!   `splice` from the file would.
//! * a break left unanswered for `/proc/sys/fs/lease-break-time` (45 s)
//!   lets the writer through anyway: only if not even zeros could be put
//!   in place of a mapping (an `mmap` of the zero page failing).
//!
//! ### What a lease costs other programs
//!
//! While ferry holds a read lease on a file, another program that opens
//! it for writing or truncates it waits until ferry has snapshotted its
//! mappings (a copy of the mapped windows), and one that does so with
//! `O_NONBLOCK` (GNU `truncate`)
//! fails with `EAGAIN` meanwhile. If the process holding the lease is
//! stopped (`kill -STOP`, Ctrl-Z), its lease thread cannot answer and the
//! writer waits the whole lease-break time. So take leases for data you
//! hand out as `Buf`s and keep; a program that only reads a file through
//! once (ferry's tools) maps it without a lease
//! ([`Buf::map_file_unchecked`] with the SIGBUS guard) and gets what is
//! there, as `read(2)` would.
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

pub mod aio;
pub mod buf;
pub mod bulk;
pub mod cache;
mod error;
pub mod exchange;
pub mod ipc;
#[cfg(all(test, loom))]
mod loom_models;
pub mod net;
pub mod pool;
#[cfg(not(miri))]
pub mod process;
pub mod sort;
pub mod stream;
mod sync;
mod sys;
#[cfg(test)]
mod test_support;
pub mod transfer;

pub use buf::{Aggregate, AggregateReader, Buf, BufMut, ContentId, FragmentStats, MappedFile};
pub use pool::{Pool, PoolConfig, PoolError, PoolStats};
pub use stream::{
    Mode, OpenOptions, Region, RegionMut, SharedRegion, SharedRegionMut, SharedStream, Stream,
    StreamGuard,
};
pub use sys::{children_cpu_time, process_cpu_time, thread_cpu_time, IOV_MAX};

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
/// Ranges of one file that overlap are refused (`InvalidInput`, "input
/// file is output file", before anything is copied): read from pages the
/// copy is writing, they would come back overwritten.
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
    let (input, output) = (input.as_fd(), output.as_fd());
    let reads = transfer::Reads::Range(in_off, in_off.saturating_add(len as u64));
    transfer::same_file_refused(input, reads, output, transfer::Writes::At(out_off))?;
    sys::map::read_into_file(input, in_off, output, out_off, len)
}
