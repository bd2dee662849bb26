//! The registry of leased file mappings behind [`MappedFile`]: what keeps
//! a mapped window's bytes from changing, because ferry holds a read lease
//! on the file and snapshots its mappings before anyone may change it
//! (IO-Lite's copy-on-write, in user space).
//!
//! ```text
//!   MappedFile ─► Arc<Leased> (ferry's own read-only open file, leased)
//!                     ▲
//!   Buf ─► Block ─► Link { file, rec } ──► MapRec { base, len, snapshotted }
//!                                              ▲
//!   REGISTRY: fd ─► { leased, gen, size, maps: base ─► MapRec }
//!                     ▲ the lease thread: on a break, snapshot every map
//!                       of that fd, then give the lease up
//! ```
//!
//! Every change to the registry, and every snapshot, happens under its one
//! lock; a mapping leaves the registry (under the lock) before it is
//! unmapped, so the lease thread never copies from or remaps over memory
//! that is being unmapped or reused.
//!
//! [`MappedFile`]: super::MappedFile

use super::block::{Backing, Block};
use super::Buf;
use crate::sys::{lease, map};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

#[cfg(not(miri))]
type Guard = crate::sys::sigbus::Registration;
#[cfg(miri)]
type Guard = ();

/// What the registry knows of one leased file.
struct FileEntry {
    /// ferry holds the lease now (false once a break gave it up).
    leased: bool,
    /// Lease periods so far: a mapping made in an older one is not trusted.
    gen: u64,
    /// The file's size when the lease was taken (no one can change it
    /// while the lease is held).
    size: u64,
    /// Live mappings, by base address.
    maps: BTreeMap<usize, Arc<MapRec>>,
    /// This process was forked from the one that took the lease: the open
    /// file description, and so the lease, are the parent's. Its breaks go
    /// to the parent, so this process never maps the file again (nor takes
    /// or gives the lease: taking it would steal the parent's notices).
    inherited: bool,
    /// What the fields above say, for readers that take no lock (see
    /// [`Leased::held_period`]): the lease period while ferry holds the
    /// lease, with [`NOT_HELD`] set when it does not.
    state: Arc<AtomicU64>,
}

/// The bit of [`FileEntry::state`] that says ferry does not hold the
/// lease (a writer broke it, or this process inherited it by `fork`).
const NOT_HELD: u64 = 1 << 63;

impl FileEntry {
    /// Publishes `leased`, `inherited` and `gen` to [`FileEntry::state`];
    /// called under the registry's lock after every change to them.
    fn publish(&self) {
        let held = self.leased && !self.inherited;
        let v = if held { self.gen } else { self.gen | NOT_HELD };
        self.state.store(v, Ordering::Release);
    }
}

static REGISTRY: Mutex<BTreeMap<RawFd, FileEntry>> = parking_lot::const_mutex(BTreeMap::new());

/// One mapping of a leased file.
pub(crate) struct MapRec {
    base: NonNull<u8>,
    map_len: usize,
    /// Replaced by a private copy (or by zeros, if `lost`): no longer the
    /// file's pages.
    snapshotted: AtomicBool,
    /// The bytes the mapping was made with could not all be kept: no
    /// memory for their copy when a writer came, or the file was changed
    /// behind the lease (a read-only open with `O_TRUNC`). What is not
    /// kept reads as zeros; never again as the file's bytes.
    lost: AtomicBool,
    /// The SIGBUS guard's entry: it watches the mapping while it is the
    /// file's pages and is withdrawn when it no longer is; what it saw
    /// stays readable, without a lock, for the record's life (a lock
    /// here, taken by `is_intact` and `content_id` on any thread, could be
    /// copied held into a child by `fork`).
    guard: Option<Guard>,
}

// SAFETY: `base` is only an address; the memory it names is owned by the
// block that owns this record, and is read-only.
unsafe impl Send for MapRec {}
// SAFETY: as above; the mutable parts are atomics (the guard's too).
unsafe impl Sync for MapRec {}

impl Drop for MapRec {
    fn drop(&mut self) {
        if let Some(g) = self.guard.take() {
            unregister(g);
        }
    }
}

impl MapRec {
    /// Replaces the mapping by a private copy (registry lock held, or the
    /// registry owned by a child just forked). Where no memory can be had
    /// for the copy, what was not copied is replaced by zeros and the
    /// mapping is marked lost: it never shows a writer's bytes. Returns
    /// false only if even that failed (the mapping is then still the
    /// file's pages, marked lost).
    ///
    /// Only system calls and atomics, besides the SIGBUS guard's own lock
    /// to withdraw its entry.
    fn snapshot(&self) -> bool {
        if self.snapshotted.load(Ordering::Acquire) {
            return true;
        }
        // SAFETY: the record is in the registry, which the caller holds,
        // so the mapping is live and nobody unmaps it (a drop takes the
        // record out under the lock first). Its bytes cannot change: the
        // lease being broken holds every writer back.
        match unsafe { snapshot_in_place(self.base, self.map_len) } {
            Ok(()) => {
                self.done_with_file();
                // The file had shrunk under it: the copy holds the guard's
                // zeros (asked once the guard is withdrawn, so that no
                // handler still running can put more after the question).
                if self.guard_faulted() {
                    self.lost.store(true, Ordering::Release);
                }
                true
            }
            Err((done, _)) => self.lose_from(done),
        }
    }

    /// The file was changed behind its lease: nothing of what the mapping
    /// shows can be trusted. Zeros in place of all of it.
    fn lose(&self) -> bool {
        if self.snapshotted.load(Ordering::Acquire) {
            return true;
        }
        self.lose_from(0)
    }

    /// Zeros in place of the mapping from byte `done` on (the bytes before
    /// are a private copy already); marks it lost. False if the zeros
    /// could not be put in place.
    fn lose_from(&self, done: usize) -> bool {
        self.lost.store(true, Ordering::Release);
        // SAFETY: `done` is a multiple of the snapshot step below
        // `map_len`, so `base + done` is page aligned and inside the
        // mapping, which is live and ours (as in `snapshot`).
        let zeroed = unsafe {
            map::zero_in_place(
                NonNull::new_unchecked(self.base.as_ptr().add(done)),
                self.map_len - done,
            )
        }
        .is_ok();
        if zeroed {
            self.done_with_file();
        }
        // Streams reading this mapping notice a loss by this count.
        count_loss();
        zeroed
    }

    /// The mapping is private memory now: it never faults for a lost
    /// page, so the SIGBUS guard lets it go.
    fn done_with_file(&self) {
        if let Some(g) = &self.guard {
            withdraw(g);
        }
        self.snapshotted.store(true, Ordering::Release);
    }

    #[cfg(not(miri))]
    fn guard_faulted(&self) -> bool {
        self.guard.as_ref().is_some_and(|g| g.faulted())
    }
    #[cfg(miri)]
    fn guard_faulted(&self) -> bool {
        false
    }

    /// Lost, or lost pages to a file that shrank (they read as zeros).
    fn damaged(&self) -> bool {
        self.lost.load(Ordering::Acquire) || self.guard_faulted()
    }

    /// [`MapRec::snapshot`] in a child just forked (the registry is held):
    /// only system calls, no lock another thread may have held at the fork
    /// (the SIGBUS guard's registration stays; private memory never faults
    /// with a lost page, so it is never consulted).
    fn snapshot_after_fork(&self) {
        if self.snapshotted.load(Ordering::Acquire) {
            return;
        }
        // SAFETY: as in `snapshot`: the registry is held and the lease
        // (the parent's, shared) still holds every writer back.
        let kept = match unsafe { snapshot_in_place(self.base, self.map_len) } {
            Ok(()) => true,
            Err((done, _)) => {
                self.lost.store(true, Ordering::Release);
                count_loss();
                // SAFETY: as in `lose_from`.
                unsafe {
                    map::zero_in_place(
                        NonNull::new_unchecked(self.base.as_ptr().add(done)),
                        self.map_len - done,
                    )
                }
                .is_ok()
            }
        };
        if kept {
            self.snapshotted.store(true, Ordering::Release);
        }
    }
}

/// [`map::snapshot_in_place`], the bytes it copied counted in
/// [`snapshot_bytes`](super::snapshot_bytes).
///
/// # Safety
/// As for [`map::snapshot_in_place`].
unsafe fn snapshot_in_place(base: NonNull<u8>, len: usize) -> Result<(), (usize, io::Error)> {
    // SAFETY: the caller's promises are the ones it asks for.
    let r = unsafe { map::snapshot_in_place(base, len) };
    super::count_snapshot(match &r {
        Ok(()) => len,
        Err((done, _)) => *done,
    });
    r
}

#[cfg(not(miri))]
fn register(base: NonNull<u8>, len: usize) -> Option<Guard> {
    crate::sys::sigbus::register(base.as_ptr() as usize, len)
}
#[cfg(miri)]
fn register(_: NonNull<u8>, _: usize) -> Option<Guard> {
    Some(())
}
#[cfg(not(miri))]
fn unregister(g: Guard) {
    g.unregister()
}
#[cfg(miri)]
fn unregister(_: Guard) {}
#[cfg(not(miri))]
fn withdraw(g: &Guard) {
    g.withdraw()
}
#[cfg(miri)]
fn withdraw(_: &Guard) {}
#[cfg(not(miri))]
fn count_loss() {
    crate::sys::sigbus::count_loss()
}
#[cfg(miri)]
fn count_loss() {}

/// A block's hold on one mapping of a leased file: unmaps it on drop.
pub(crate) struct Link {
    file: Arc<Leased>,
    rec: Arc<MapRec>,
}

impl Link {
    /// Still the file's own pages (not yet snapshotted).
    pub(crate) fn maps_file(&self) -> bool {
        !self.rec.snapshotted.load(Ordering::Acquire)
    }

    /// The mapping does not hold all the bytes it was made with (they
    /// read as zeros): the file shrank or was emptied under it, or a
    /// writer came when no memory could be had for its copy. What ferry
    /// has seen so far; [`verify`](Self::verify) looks at the file too.
    pub(crate) fn damaged(&self) -> bool {
        self.rec.damaged()
    }

    /// [`damaged`](Self::damaged), after checking the file itself: one
    /// `fstat` under the registry's lock, which finds a change the lease
    /// did not announce (a read-only open with `O_TRUNC`) and makes every
    /// mapping of the file lost.
    pub(crate) fn verify(&self) -> bool {
        if !self.rec.damaged() && !self.rec.snapshotted.load(Ordering::Acquire) {
            let fd = self.file.fd.as_fd();
            let mut reg = REGISTRY.lock();
            if let Some(e) = reg.get_mut(&fd.as_raw_fd()) {
                check_unannounced(e, fd);
            }
        }
        self.rec.damaged()
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        {
            let mut reg = REGISTRY.lock();
            if let Some(e) = reg.get_mut(&self.file.fd.as_raw_fd()) {
                e.maps.remove(&(self.rec.base.as_ptr() as usize));
            }
        }
        if let Some(g) = &self.rec.guard {
            withdraw(g);
        }
        // SAFETY: the mapping was made for this link alone, the last block
        // reference into it is gone, and the lease thread can no longer
        // reach it (it left the registry above).
        unsafe { map::unmap(self.rec.base, self.rec.map_len) }
    }
}

/// ferry's own read-only open file, leased while it is in the registry.
pub(super) struct Leased {
    fd: OwnedFd,
    /// The process that took the lease. A child forked without `exec`
    /// shares the open file description, and so the lease: its copy must
    /// not give the parent's lease up when it drops.
    pid: u32,
    /// The registry entry's published state ([`FileEntry::state`]).
    state: Arc<AtomicU64>,
}

impl Drop for Leased {
    fn drop(&mut self) {
        let mut reg = REGISTRY.lock();
        reg.remove(&self.fd.as_raw_fd());
        if std::process::id() == self.pid {
            lease::release(self.fd.as_fd());
        }
        // The descriptor closes after the lock is let go; a late notice
        // for its number finds no entry, or another file whose lease is
        // not being broken, and is ignored.
    }
}

/// Called by the lease thread when a lease is being broken (`Some(fd)`),
/// or when it cannot tell which (`None`: check them all).
fn on_break(fd: Option<RawFd>) {
    let mut reg = REGISTRY.lock();
    let fds: Vec<RawFd> = match fd {
        Some(fd) => vec![fd],
        None => reg.keys().copied().collect(),
    };
    for fd in fds {
        let Some(e) = reg.get_mut(&fd) else { continue };
        // SAFETY: an entry exists only while the `Leased` owning this
        // descriptor is alive (its drop removes it under this lock).
        let bfd = unsafe { BorrowedFd::borrow_raw(fd) };
        if !e.leased || lease::holds_unbroken_lease(bfd) {
            continue; // a stale notice, or not this file
        }
        check_unannounced(e, bfd);
        let mut all = true;
        for rec in e.maps.values() {
            all &= rec.snapshot();
        }
        e.leased = false;
        e.gen += 1;
        // Before the writer goes on: a reader that sees the period it
        // knew still held read before the writer's bytes could land.
        e.publish();
        if all {
            lease::release(bfd);
        }
        // Else (not even zeros could be put in place of a mapping) the
        // lease stays until the kernel's lease-break time ends it; the
        // writer waits that long.
    }
}

/// A change to a leased file that the kernel did not announce: Linux
/// truncates a file opened read-only with `O_TRUNC` (by anyone allowed to
/// write it) without breaking a read lease, and the only trace is its
/// size, now smaller than when the lease was taken (nothing can grow it
/// without breaking the lease: that takes a write open or `truncate(2)`).
/// Then every mapping made in this lease period is lost — zeros in place
/// of it, so that no later bytes of the file ever show through it — and a
/// new period starts at the new size. Registry lock held. True if the
/// file had changed.
fn check_unannounced(e: &mut FileEntry, fd: BorrowedFd<'_>) -> bool {
    if !e.leased || e.inherited {
        return false;
    }
    match crate::sys::fileio::file_size(fd) {
        Ok(size) if size == e.size => false,
        Ok(size) => {
            for rec in e.maps.values() {
                rec.lose();
            }
            e.gen += 1;
            e.size = size;
            e.publish();
            true
        }
        // fstat of an open descriptor does not fail; if it does, keep
        // what is known.
        Err(_) => false,
    }
}

/// Fork. A child forked without `exec` shares every leased open file
/// description, so its copies of the mappings would see a writer's bytes
/// once the parent's lease thread let the writer through. So, around each
/// fork while leased mappings exist: the parent holds the registry (no
/// break can be answered meanwhile, so every writer stays held back), the
/// child snapshots its copies of them all before `fork` returns in it, and
/// the parent waits for the child to say so before it lets go. A fork
/// costs one copy of the mapped windows then (none without them).
static FORK_PIPE: Mutex<Option<[RawFd; 2]>> = parking_lot::const_mutex(None);

unsafe extern "C" fn fork_prepare() {
    let reg = REGISTRY.lock();
    let maps = reg.values().any(|e| !e.maps.is_empty());
    std::mem::forget(reg); // held across fork; let go in both handlers
    *FORK_PIPE.lock() = if maps { lease::handshake_pipe() } else { None };
}

unsafe extern "C" fn fork_parent() {
    if let Some(fds) = FORK_PIPE.lock().take() {
        lease::handshake_wait(fds);
    }
    // SAFETY: locked by fork_prepare on this thread.
    unsafe { REGISTRY.force_unlock() };
}

unsafe extern "C" fn fork_child() {
    // SAFETY: fork_prepare locked it on the thread that is now the child's
    // only one: it is ours.
    let reg = unsafe { &mut *REGISTRY.data_ptr() };
    for e in reg.values_mut() {
        for rec in e.maps.values() {
            // A failed copy (no memory) leaves that window the file's
            // pages: rare, and nothing better is possible here.
            rec.snapshot_after_fork();
        }
        e.leased = false;
        e.inherited = true;
        e.gen += 1;
        e.publish();
    }
    if let Some(fds) = FORK_PIPE.lock().take() {
        lease::handshake_done(fds);
    }
    // SAFETY: as above.
    unsafe { REGISTRY.force_unlock() };
}

/// Takes a lease on `fd` (registry lock held by the caller) and returns the
/// file's size.
fn take(fd: BorrowedFd<'_>) -> io::Result<u64> {
    lease::at_fork(fork_prepare, fork_parent, fork_child);
    let tid = lease::lease_thread(on_break)?;
    lease::take_read_lease(fd, tid)?;
    crate::sys::fileio::file_size(fd)
}

impl Leased {
    /// Takes a read lease on `fd` (ferry's own read-only open of a regular
    /// file) and files it in the registry.
    pub(super) fn new(fd: OwnedFd) -> io::Result<Arc<Leased>> {
        let mut reg = REGISTRY.lock();
        let size = take(fd.as_fd())?;
        let state = Arc::new(AtomicU64::new(0));
        reg.insert(
            fd.as_raw_fd(),
            FileEntry {
                leased: true,
                gen: 0,
                size,
                maps: BTreeMap::new(),
                inherited: false,
                state: state.clone(),
            },
        );
        drop(reg);
        Ok(Arc::new(Leased {
            fd,
            pid: std::process::id(),
            state,
        }))
    }

    /// The lease period ferry holds the lease in now, if it holds it:
    /// one atomic load, no lock and no system call. A period seen here
    /// again later means no writer came in between (the lease thread
    /// moves it on, and publishes that, before it lets a writer go on);
    /// the one change a lease does not announce — a read-only open with
    /// `O_TRUNC` — moves it only when something looks at the file's size
    /// ([`Leased::lease_period`], [`Link::verify`]).
    pub(super) fn held_period(&self) -> Option<u64> {
        let v = self.state.load(Ordering::Acquire);
        (v & NOT_HELD == 0).then_some(v)
    }

    pub(super) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The current lease period and the file's size in it, taking a new
    /// lease if the last was broken.
    pub(super) fn lease_period(&self) -> io::Result<(u64, u64)> {
        let fd = self.fd.as_fd();
        let mut reg = REGISTRY.lock();
        let Some(e) = reg.get_mut(&fd.as_raw_fd()) else {
            return Err(io::Error::other("ferry: a leased file left the registry"));
        };
        if e.inherited {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "this process was forked from the one that holds the file's lease: \
                 open the file again (MappedFile::open) to map it here",
            ));
        }
        if !e.leased {
            e.size = take(fd)?;
            e.leased = true;
            e.publish();
        } else {
            check_unannounced(e, fd);
        }
        Ok((e.gen, e.size))
    }

    /// Maps and registers a window, if lease period `gen` is still the
    /// current one (else None: the mapping may show a writer's bytes).
    pub(super) fn map_in(
        self: &Arc<Leased>,
        gen: u64,
        offset: u64,
        len: usize,
    ) -> io::Result<Option<Buf>> {
        let fd = self.fd.as_fd();
        let m = map::map_readonly(fd, offset, len)?;
        let Some(guard) = register(m.base, m.map_len) else {
            // SAFETY: just mapped, not shared with anyone.
            unsafe { map::unmap(m.base, m.map_len) };
            return Err(io::Error::new(
                io::ErrorKind::OutOfMemory,
                "cannot guard another file mapping against SIGBUS (too many mappings)",
            ));
        };
        map::advise_sequential(m.base, m.map_len);
        let rec = Arc::new(MapRec {
            base: m.base,
            map_len: m.map_len,
            snapshotted: AtomicBool::new(false),
            lost: AtomicBool::new(false),
            guard: Some(guard),
        });
        {
            let mut reg = REGISTRY.lock();
            match reg.get_mut(&fd.as_raw_fd()) {
                Some(e) if e.leased && e.gen == gen => {
                    e.maps.insert(m.base.as_ptr() as usize, rec.clone());
                }
                _ => {
                    drop(reg);
                    if let Some(g) = &rec.guard {
                        withdraw(g);
                    }
                    // SAFETY: never in the registry nor handed out, and the
                    // guard's entry is withdrawn.
                    unsafe { map::unmap(m.base, m.map_len) };
                    return Ok(None);
                }
            }
        }
        // SAFETY: data_offset < map_len, so the pointer stays in the mapping.
        let data = unsafe { NonNull::new_unchecked(m.base.as_ptr().add(m.data_offset)) };
        let link = Link {
            file: self.clone(),
            rec,
        };
        let block = Block::from_backing(data, len, Backing::Leased(link));
        Ok(Some(Buf::from_parts(block, data, len)))
    }
}
