//! What a forked child does with what this process shares with others,
//! through `pthread_atfork` (a child made by a raw `clone` that skips the
//! fork handlers is not seen):
//!
//! * a **generation** one more than its parent's, which the ipc ends
//!   compare with the one they were made under, so that a forked child
//!   leaves the parent's channel alone;
//! * **snapshots** of the shared mappings registered here (ipc pools and
//!   control blocks): each is replaced, in the child only, by a private
//!   copy of its bytes as of the fork, so that nothing the parent's peer
//!   writes later changes a `Buf` the child holds, and nothing the child
//!   writes reaches the peer;
//! * **detached** descriptors (ipc sockets): in the child each is
//!   replaced by `/dev/null`, so that a child that lives on does not keep
//!   the parent's channel open after the parent has gone.
//!
//! The registry is locked across the fork (the prepare handler takes it,
//! the parent and child handlers let it go), so the child finds it whole;
//! the child's handler allocates nothing and calls only system calls and
//! `memcpy`, as a child of a threaded process may.
//!
//! The child copies the shared mappings after the fork, so no slot may be
//! handed back for rewriting until its copies are made: the parent's
//! `fork` returns only once the child says so (on a pipe made by the
//! prepare handler), and the two places where a slot becomes writable
//! again — a receiver giving its releases to the sender, a sender handing
//! out a free slot — hold the [`gate`] for reading, which the prepare
//! handler takes for writing until then. So a `Buf` the child holds shows
//! the bytes it had at the fork, whatever the parent's threads and its
//! peers do meanwhile.

use parking_lot::lock_api::{RawMutex as _, RawRwLock as _};
use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::Once;

static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Held for reading while a slot is made writable again, for writing from
/// a fork's prepare handler until the child's snapshots are made.
static GATE: RwLock<()> = parking_lot::const_rwlock(());

/// Holds fork snapshots back while a slot is handed back for rewriting
/// (see the module doc); a fork waits until the guard goes.
pub(crate) fn gate() -> RwLockReadGuard<'static, ()> {
    GATE.read()
}

/// The pipe on which a forked child says its snapshots are made (read
/// end, write end; -1: none, the registry holds no mapping).
static SNAPSHOT_DONE: [AtomicI32; 2] = [AtomicI32::new(-1), AtomicI32::new(-1)];

#[derive(Default)]
struct Registry {
    /// (address, length, writable), with a key each.
    maps: Vec<(u64, usize, usize, bool)>,
    /// (key, descriptor).
    fds: Vec<(u64, RawFd)>,
    next_key: u64,
}

static REGISTRY: Mutex<Registry> = parking_lot::const_mutex(Registry {
    maps: Vec::new(),
    fds: Vec::new(),
    next_key: 0,
});

extern "C" fn prepare() {
    // No slot is handed back for rewriting from here until the child's
    // snapshots are made. Taken before the registry: no holder of the
    // gate waits for the registry.
    // SAFETY: taken here and let go by the parent and child handlers,
    // which run on this same thread right after the fork.
    unsafe { GATE.raw() }.lock_exclusive();
    // Held across the fork: no other thread is in the middle of a change.
    // SAFETY: the raw lock is taken here and let go by the parent and child
    // handlers, which run on this same thread right after the fork.
    unsafe { REGISTRY.raw() }.lock();
    // SAFETY: locked just above; read without allocating.
    let maps = unsafe { !(*REGISTRY.data_ptr()).maps.is_empty() };
    if maps {
        let mut fds = [-1; 2];
        // SAFETY: pipe2 into a local array of two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == 0 {
            SNAPSHOT_DONE[0].store(fds[0], Ordering::Relaxed);
            SNAPSHOT_DONE[1].store(fds[1], Ordering::Relaxed);
        }
    }
}

extern "C" fn parent() {
    let (r, w) = (
        SNAPSHOT_DONE[0].swap(-1, Ordering::Relaxed),
        SNAPSHOT_DONE[1].swap(-1, Ordering::Relaxed),
    );
    if r >= 0 {
        // Waits for the child's word that its copies are made; a child
        // that dies first ends the pipe (its own writing end closed, and
        // this one is closed first), so this never waits for ever.
        // SAFETY: the two descriptors `prepare` made, closed once here.
        unsafe {
            libc::close(w);
            let mut b = 0u8;
            while libc::read(r, (&mut b as *mut u8).cast(), 1) < 0
                && *libc::__errno_location() == libc::EINTR
            {}
            libc::close(r);
        }
    }
    // SAFETY: locked by `prepare` on this thread.
    unsafe { REGISTRY.force_unlock() };
    // SAFETY: taken for writing by `prepare` on this thread.
    unsafe { GATE.force_unlock_write() };
}

extern "C" fn child() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
    // SAFETY: the lock is held (by `prepare`, in the parent, before the
    // fork), so the registry is whole and nothing else touches it; it is
    // read through the raw data pointer without allocating.
    let reg = unsafe { &*REGISTRY.data_ptr() };
    for &(_, addr, len, writable) in &reg.maps {
        snapshot(addr, len, writable);
    }
    let (r, w) = (
        SNAPSHOT_DONE[0].swap(-1, Ordering::Relaxed),
        SNAPSHOT_DONE[1].swap(-1, Ordering::Relaxed),
    );
    if w >= 0 {
        // SAFETY: the child's copies of the pipe `prepare` made: the word
        // that the snapshots are made, then both closed.
        unsafe {
            libc::close(r);
            let _ = libc::write(w, b"!".as_ptr().cast(), 1);
            libc::close(w);
        }
    }
    if !reg.fds.is_empty() {
        // SAFETY: open(2) of a constant path; async-signal-safe.
        let null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        for &(_, fd) in &reg.fds {
            if null >= 0 {
                // SAFETY: replaces this process's descriptor `fd` (an ipc
                // socket some owner still holds, which will close it in
                // time: it is then /dev/null it closes).
                unsafe { libc::dup3(null, fd, libc::O_CLOEXEC) };
            }
        }
        if null >= 0 {
            // SAFETY: the temporary descriptor opened above.
            unsafe { libc::close(null) };
        }
    }
    // SAFETY: locked by `prepare` before the fork, on this thread.
    unsafe { REGISTRY.force_unlock() };
    // SAFETY: taken for writing by `prepare` before the fork, on this
    // thread (the readers of the parent's other threads are not in this
    // process).
    unsafe { GATE.force_unlock_write() };
}

/// Replaces the shared mapping at `addr` by a private copy of its bytes
/// (or, if no memory can be had, by an inaccessible one: the child then
/// faults on it rather than see it change).
fn snapshot(addr: usize, len: usize, writable: bool) {
    let base = addr as *mut libc::c_void;
    // SAFETY: a fresh anonymous mapping; nothing aliases it.
    let copy = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if copy == libc::MAP_FAILED {
        // SAFETY: the registered mapping's own range, made inaccessible in
        // this (child) process only.
        unsafe {
            libc::mmap(
                base,
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        return;
    }
    // SAFETY: both ranges are `len` bytes of live mappings that do not
    // overlap (the copy is new); the shared one is readable.
    unsafe { std::ptr::copy_nonoverlapping(base.cast::<u8>(), copy.cast::<u8>(), len) };
    if !writable {
        // SAFETY: the copy made above.
        unsafe { libc::mprotect(copy, len, libc::PROT_READ) };
    }
    // SAFETY: moves the copy over the registered range (which it replaces
    // atomically); both are `len` bytes.
    unsafe {
        libc::mremap(
            copy,
            len,
            len,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            base,
        )
    };
}

fn register_handlers() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: plain functions that live for the whole program.
        unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
    });
}

/// This process's fork generation (0 in a process that was not forked
/// since the first call, in this image).
pub(crate) fn generation() -> u64 {
    register_handlers();
    GENERATION.load(Ordering::Relaxed)
}

/// A shared mapping registered for a snapshot in forked children, for as
/// long as this value lives (drop it before unmapping).
pub(crate) struct Snapshotted(u64);

/// Registers the shared mapping `[addr, addr + len)`.
pub(crate) fn snapshot_in_children(addr: *const u8, len: usize, writable: bool) -> Snapshotted {
    register_handlers();
    let mut r = REGISTRY.lock();
    let key = r.next_key;
    r.next_key += 1;
    r.maps.push((key, addr as usize, len, writable));
    Snapshotted(key)
}

impl Drop for Snapshotted {
    fn drop(&mut self) {
        REGISTRY.lock().maps.retain(|m| m.0 != self.0);
    }
}

/// A descriptor registered to be replaced by `/dev/null` in forked
/// children, for as long as this value lives (drop it before closing the
/// descriptor).
pub(crate) struct Detached(u64);

/// Registers `fd`.
pub(crate) fn detach_in_children(fd: RawFd) -> Detached {
    register_handlers();
    let mut r = REGISTRY.lock();
    let key = r.next_key;
    r.next_key += 1;
    r.fds.push((key, fd));
    Detached(key)
}

impl Drop for Detached {
    fn drop(&mut self) {
        REGISTRY.lock().fds.retain(|f| f.0 != self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Forks; the child runs `f` and exits 0 if it returns true.
    fn in_child(f: impl FnOnce() -> bool) -> bool {
        // SAFETY: the child runs only `f` (reads and syscalls) and `_exit`s.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let ok = f();
            // SAFETY: ends the child without the parent's exit code.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just made.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
    }

    #[test]
    fn a_forked_child_sees_a_new_generation() {
        let before = generation();
        assert!(in_child(|| generation() == before + 1));
        assert_eq!(generation(), before);
    }

    #[test]
    fn a_childs_snapshot_keeps_its_bytes_and_keeps_its_writes() {
        let fd = rustix::fs::memfd_create("fork-test", rustix::fs::MemfdFlags::CLOEXEC).unwrap();
        rustix::fs::ftruncate(&fd, 4096).unwrap();
        // SAFETY: a new shared mapping of the memfd, seen only here.
        let p = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                4096,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::SHARED,
                &fd,
                0,
            )
            .unwrap()
        }
        .cast::<u8>();
        // SAFETY: the mapping is 4096 bytes; only this test touches it.
        unsafe { p.write_bytes(b'A', 4096) };
        let reg = snapshot_in_children(p, 4096, true);
        let (r, w) = rustix::pipe::pipe().unwrap();
        let go = rustix::pipe::pipe().unwrap();
        let addr = p as usize;
        let child_ok = std::thread::scope(|s| {
            let parent = s.spawn(|| {
                // Waits for the child to say it looked once, then writes 'B'
                // in the shared memfd.
                let mut b = [0u8; 1];
                rustix::io::read(&r, &mut b).unwrap();
                // SAFETY: as above.
                unsafe { (addr as *mut u8).write_bytes(b'B', 4096) };
                rustix::io::write(&go.1, b"x").unwrap();
            });
            let ok = in_child(|| {
                let p = addr as *mut u8;
                // SAFETY: the child's snapshot, 4096 bytes.
                let first = unsafe { *p };
                let _ = rustix::io::write(&w, b"x");
                let mut b = [0u8; 1];
                let _ = rustix::io::read(&go.0, &mut b);
                // SAFETY: as above; the child's own copy.
                let after = unsafe { std::slice::from_raw_parts(p, 4096) };
                let kept = first == b'A' && after.iter().all(|&c| c == b'A');
                // Its writes stay its own.
                // SAFETY: as above.
                unsafe { p.write_bytes(b'C', 4096) };
                kept
            });
            parent.join().unwrap();
            ok
        });
        assert!(child_ok, "the child's bytes changed under it");
        // SAFETY: as above.
        let now = unsafe { std::slice::from_raw_parts(p, 4096) };
        assert!(
            now.iter().all(|&c| c == b'B'),
            "the child's writes reached the memfd"
        );
        drop(reg);
        // SAFETY: the mapping made above, no longer borrowed.
        unsafe { rustix::mm::munmap(p.cast(), 4096).unwrap() };
    }

    #[test]
    fn a_detached_descriptor_is_dev_null_in_a_child() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        use std::os::fd::AsRawFd;
        let fd = a.as_raw_fd();
        let guard = detach_in_children(fd);
        assert!(in_child(|| {
            let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
            // SAFETY: fstat into a local.
            let r = unsafe { libc::fstat(fd, st.as_mut_ptr()) };
            // SAFETY: fstat filled it.
            r == 0 && unsafe { st.assume_init() }.st_mode & libc::S_IFMT == libc::S_IFCHR
        }));
        drop(guard);
        drop(a);
        // The child's copy went with it: the peer sees the end.
        let mut buf = [0u8; 1];
        assert_eq!(std::io::Read::read(&mut &b, &mut buf).unwrap(), 0);
    }
}
