//! The system calls behind `ipc`: sealed memfd pools, their mappings,
//! the control block both ends share, (in `socket`) the
//! `SOCK_SEQPACKET` Unix sockets that carry packets and descriptors, and
//! (in `pipe`) the pipe an upgraded channel stands beside.
//!
//! A pool is a memfd (no name in any file system: nothing is left behind
//! when its last holder dies, whatever the death). The sender maps it
//! read-write, then seals it: `F_SEAL_SHRINK | F_SEAL_GROW` (its size is
//! fixed, so no mapping of it can fault past its end) and
//! `F_SEAL_FUTURE_WRITE` (no new writable mapping and no `write(2)`: only
//! the mapping the sender already holds can change it), then `F_SEAL_SEAL`.
//! A receiver checks the seals before it maps the pool, read-only.
//!
//! [`SlotMap`] is the sender's writable mapping cut into equal slots, each
//! with a reader/writer count so that safe code can hold either one
//! `&mut [u8]` of a slot ([`SlotWriter`]) or any number of `&[u8]`
//! ([`SlotReader`]), never both. [`ReadOnlyMap`] is the receiver's.
//!
//! [`SharedWords`] is a second memfd, sealed only against resizing, that
//! both ends map read-write: the descriptor rings. Its memory is seen
//! only as atomic words, so that whatever the other process writes there,
//! and whenever, this one reads a value, never undefined behaviour.

mod pipe;
mod socket;

pub(crate) use pipe::*;
pub(crate) use socket::*;

use rustix::fs::{MemfdFlags, SealFlags};
use rustix::mm::{MapFlags, ProtFlags};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// The seals a receiver requires of a pool before it maps it.
pub(crate) fn required_seals() -> SealFlags {
    SealFlags::SHRINK | SealFlags::GROW | SealFlags::FUTURE_WRITE
}

/// A new memfd of `len` bytes that allows sealing (close-on-exec).
pub(crate) fn memfd_pool(name: &str, len: u64) -> io::Result<OwnedFd> {
    let fd = rustix::fs::memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)?;
    rustix::fs::ftruncate(&fd, len)?;
    Ok(fd)
}

/// Seals a pool the sender has mapped (see the module doc).
pub(crate) fn seal_pool(fd: BorrowedFd<'_>) -> io::Result<()> {
    rustix::fs::fcntl_add_seals(fd, required_seals() | SealFlags::SEAL)?;
    Ok(())
}

/// Checks that `fd` is a memfd sealed as a pool must be and at least
/// `len` bytes long.
pub(crate) fn check_pool(fd: BorrowedFd<'_>, len: u64) -> io::Result<()> {
    let seals = rustix::fs::fcntl_get_seals(fd)
        .map_err(|_| invalid("the pool sent is not a sealed memfd"))?;
    if !seals.contains(required_seals()) {
        return Err(invalid(
            "the pool sent is not sealed against resizing and writing",
        ));
    }
    let st = rustix::fs::fstat(fd)?;
    if (st.st_size as u64) < len {
        return Err(invalid("the pool sent is smaller than its header says"));
    }
    Ok(())
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

/// A shared mapping of a whole memfd; unmapped on drop.
struct Mapping {
    base: NonNull<u8>,
    len: usize,
    /// Registered for a private snapshot in forked children
    /// (`sys::fork`): their views never change, and their writes never
    /// reach the peer.
    snap: Option<crate::sys::fork::Snapshotted>,
}

// SAFETY: the mapping is plain memory owned by this value; access to its
// bytes is governed by the types below.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    fn new(fd: BorrowedFd<'_>, len: usize, writable: bool) -> io::Result<Mapping> {
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty pool"));
        }
        let prot = if writable {
            ProtFlags::READ | ProtFlags::WRITE
        } else {
            ProtFlags::READ
        };
        // SAFETY: a new shared mapping at an address the kernel chooses;
        // it aliases no Rust object.
        let p =
            unsafe { rustix::mm::mmap(std::ptr::null_mut(), len, prot, MapFlags::SHARED, fd, 0)? };
        let base =
            NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap gave null"))?;
        let snap = Some(crate::sys::fork::snapshot_in_children(
            base.as_ptr(),
            len,
            writable,
        ));
        Ok(Mapping { base, len, snap })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Out of the registry first: a fork from now on leaves the range
        // alone, so none snapshots it once it is unmapped.
        drop(self.snap.take());
        // SAFETY: mapped by `new` for this value alone; every borrow of its
        // bytes holds an `Arc` of the owner, so none is left.
        let _ = unsafe { rustix::mm::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// A writer holds a slot: the count is this value.
const WRITER: usize = usize::MAX;

/// The sender's writable mapping of a pool, cut into `count` slots of
/// `slot_size` bytes.
pub(crate) struct SlotMap {
    map: Mapping,
    slot_size: usize,
    /// Per slot: 0 free, `WRITER` written, else the number of readers.
    state: Box<[AtomicUsize]>,
}

impl SlotMap {
    /// Maps `fd` (at least `slot_size * count` bytes) read-write.
    pub(crate) fn new(fd: BorrowedFd<'_>, slot_size: usize, count: usize) -> io::Result<SlotMap> {
        let len = slot_size
            .checked_mul(count)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "pool too large"))?;
        Ok(SlotMap {
            map: Mapping::new(fd, len, true)?,
            slot_size,
            state: (0..count).map(|_| AtomicUsize::new(0)).collect(),
        })
    }

    /// Slot `i`'s only writer, or `None` if anyone reads or writes it.
    pub(crate) fn writer(self: &Arc<Self>, i: usize) -> Option<SlotWriter> {
        self.state
            .get(i)?
            .compare_exchange(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        Some(SlotWriter {
            map: self.clone(),
            slot: i,
        })
    }

    /// The slot and offset in it of `p` if it points into this mapping.
    pub(crate) fn locate(&self, p: *const u8) -> Option<(usize, usize)> {
        let off = (p as usize).checked_sub(self.map.base.as_ptr() as usize)?;
        (off < self.map.len).then(|| (off / self.slot_size, off % self.slot_size))
    }

    fn ptr(&self, i: usize) -> *mut u8 {
        // SAFETY: `i < count`, so the slot lies inside the mapping.
        unsafe { self.map.base.as_ptr().add(i * self.slot_size) }
    }
}

/// The one writer of a slot: `&mut` access to all its bytes.
pub(crate) struct SlotWriter {
    map: Arc<SlotMap>,
    slot: usize,
}

impl SlotWriter {
    /// Gives up writing for `len` bytes (at most the slot) of shared
    /// reading.
    pub(crate) fn into_reader(mut self, len: usize) -> SlotReader {
        let len = len.min(self.map.slot_size);
        // `self` drops below as a writer of no slot.
        let slot = std::mem::replace(&mut self.slot, usize::MAX);
        self.map.state[slot].store(1, Ordering::Release);
        SlotReader {
            map: self.map.clone(),
            slot,
            len,
        }
    }
}

impl std::ops::Deref for SlotWriter {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the state word says WRITER for as long as this value
        // lives, so no other borrow of the slot exists.
        unsafe { std::slice::from_raw_parts(self.map.ptr(self.slot), self.map.slot_size) }
    }
}

impl std::ops::DerefMut for SlotWriter {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`; `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.map.ptr(self.slot), self.map.slot_size) }
    }
}

impl Drop for SlotWriter {
    fn drop(&mut self) {
        if let Some(s) = self.map.state.get(self.slot) {
            s.store(0, Ordering::Release);
        }
    }
}

/// A shared reader of the first `len` bytes of a slot. While any reader
/// lives nobody in this process can write the slot.
pub(crate) struct SlotReader {
    map: Arc<SlotMap>,
    slot: usize,
    len: usize,
}

impl AsRef<[u8]> for SlotReader {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: the state word counts this reader, so no writer exists;
        // `len <= slot_size` keeps the slice in the slot.
        unsafe { std::slice::from_raw_parts(self.map.ptr(self.slot), self.len) }
    }
}

impl Drop for SlotReader {
    fn drop(&mut self) {
        self.map.state[self.slot].fetch_sub(1, Ordering::Release);
    }
}

/// The receiver's read-only mapping of a pool.
pub(crate) struct ReadOnlyMap {
    map: Mapping,
}

impl ReadOnlyMap {
    pub(crate) fn new(fd: BorrowedFd<'_>, len: usize) -> io::Result<ReadOnlyMap> {
        Ok(ReadOnlyMap {
            map: Mapping::new(fd, len, false)?,
        })
    }

    /// `len` bytes at `off`, or `None` past the end of the mapping.
    ///
    /// The pool is sealed against shrinking, so reading these bytes never
    /// faults. Only the sender's own mapping can write them: a sender that
    /// keeps to the protocol does not while the receiver holds them (see
    /// the `ipc` module doc for one that does not keep to it).
    pub(crate) fn bytes(&self, off: usize, len: usize) -> Option<&[u8]> {
        let end = off.checked_add(len)?;
        if end > self.map.len {
            return None;
        }
        // SAFETY: the range is inside the mapping, which lives as long as
        // `self`; this process has no writable mapping of the pool.
        Some(unsafe { std::slice::from_raw_parts(self.map.base.as_ptr().add(off), len) })
    }
}

/// The seals a receiver requires of a control block before it maps it:
/// its size is fixed, so no mapping of it can fault past its end.
fn control_seals() -> SealFlags {
    SealFlags::SHRINK | SealFlags::GROW
}

/// A shared read-write mapping of a whole memfd, seen as 64-bit atomic
/// words: the control block of an ipc channel's rings.
pub(crate) struct SharedWords {
    map: Mapping,
}

impl SharedWords {
    /// A new memfd of `words` words (rounded up to whole pages), mapped and
    /// sealed against resizing (close-on-exec), and the memfd to send.
    pub(crate) fn create(name: &str, words: usize) -> io::Result<(SharedWords, OwnedFd)> {
        let len = words
            .checked_mul(8)
            .and_then(|b| b.checked_next_multiple_of(crate::sys::page_size()))
            .filter(|&b| b > 0 && b <= isize::MAX as usize)
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "control block too large")
            })?;
        let fd = memfd_pool(name, len as u64)?;
        let map = Mapping::new(fd.as_fd(), len, true)?;
        rustix::fs::fcntl_add_seals(&fd, control_seals() | SealFlags::SEAL)?;
        Ok((SharedWords { map }, fd))
    }

    /// Maps a control block `fd` sent by a peer after checking that it is
    /// sealed against resizing and holds at least `words` words.
    pub(crate) fn open(fd: BorrowedFd<'_>, words: usize) -> io::Result<SharedWords> {
        let seals = rustix::fs::fcntl_get_seals(fd)
            .map_err(|_| invalid("the control block sent is not a sealed memfd"))?;
        if !seals.contains(control_seals()) {
            return Err(invalid(
                "the control block sent is not sealed against resizing",
            ));
        }
        let len = words
            .checked_mul(8)
            .filter(|&b| b > 0 && b <= isize::MAX as usize)
            .ok_or_else(|| invalid("a control block too large"))?;
        let st = rustix::fs::fstat(fd)?;
        if (st.st_size as u64) < len as u64 {
            return Err(invalid(
                "the control block sent is smaller than its header says",
            ));
        }
        Ok(SharedWords {
            map: Mapping::new(fd, len, true)?,
        })
    }
}

impl std::ops::Deref for SharedWords {
    type Target = [AtomicU64];
    fn deref(&self) -> &[AtomicU64] {
        // SAFETY: the mapping is page-aligned (so aligned for `AtomicU64`),
        // `len / 8` whole words long, and lives as long as `self`. The
        // memfd is sealed against shrinking, so no access faults. Every
        // access, here or in the peer process, goes through atomics
        // (`AtomicU64` has interior mutability), so the peer's writes at
        // any moment are no data race in this process.
        unsafe {
            std::slice::from_raw_parts(self.map.base.as_ptr().cast::<AtomicU64>(), self.map.len / 8)
        }
    }
}
