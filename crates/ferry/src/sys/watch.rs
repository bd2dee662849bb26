//! Change notices for open files (inotify), heard by one thread of
//! ferry's own: a [`Watch`] is a flag that the thread raises when the
//! kernel reports a change to the file — its bytes or size (`IN_MODIFY`,
//! truncation included), its attributes or link count (`IN_ATTRIB`: a
//! `touch`, a `chmod`, an unlink or a rename over it), a writer closing
//! it, the file moved or deleted — or when the kernel drops the watch.
//!
//! The notice is asynchronous: the thread raises the flag a moment after
//! the change (a thread wake-up). A reader that looks at the flag
//! instead of asking the file (no system call) may, within that moment,
//! still act on what it knew before the change.
//!
//! One inotify instance and one thread per process, started with the
//! first watch. Watches of the same file share the kernel's watch; it is
//! removed when the last of them goes. A child forked without `exec` has
//! no such thread: its flags are never raised, so whoever relies on them
//! must know of the fork by other means (ferry's leases do).

use parking_lot::Mutex;
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

/// What a watch hears of.
fn mask() -> rustix::fs::inotify::WatchFlags {
    use rustix::fs::inotify::WatchFlags as W;
    W::MODIFY | W::ATTRIB | W::CLOSE_WRITE | W::MOVE_SELF | W::DELETE_SELF
}

struct Watcher {
    /// The inotify instance (the thread reads it).
    fd: Arc<OwnedFd>,
    /// The process that started the thread.
    pid: u32,
    /// Per kernel watch, the flags of the `Watch`es that share it.
    table: HashMap<i32, Vec<Weak<AtomicBool>>>,
}

static WATCHER: Mutex<Option<Watcher>> = parking_lot::const_mutex(None);

/// A raised flag once the file changed (or the watch was lost).
pub(crate) struct Watch {
    wd: i32,
    flag: Arc<AtomicBool>,
}

impl Watch {
    /// Watches the file open on `fd` (through `/proc/self/fd`).
    pub(crate) fn new(fd: BorrowedFd<'_>) -> io::Result<Watch> {
        let mut w = WATCHER.lock();
        let pid = std::process::id();
        if w.as_ref().is_none_or(|w| w.pid != pid) {
            *w = Some(start(pid)?);
        }
        let w = w.as_mut().expect("started above");
        let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
        let wd =
            rustix::fs::inotify::add_watch(w.fd.as_fd(), path.as_str(), mask()).map_err(|e| {
                let e = io::Error::from(e);
                io::Error::new(e.kind(), format!("cannot watch the file for changes: {e}"))
            })?;
        let flag = Arc::new(AtomicBool::new(false));
        let flags = w.table.entry(wd).or_default();
        flags.retain(|f| f.strong_count() > 0);
        flags.push(Arc::downgrade(&flag));
        Ok(Watch { wd, flag })
    }

    /// The file changed since the watch began, or the watch was lost.
    pub(crate) fn raised(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut g = WATCHER.lock();
        let Some(w) = g.as_mut().filter(|w| w.pid == std::process::id()) else {
            return;
        };
        let me = Arc::downgrade(&self.flag);
        let Some(flags) = w.table.get_mut(&self.wd) else {
            return;
        };
        flags.retain(|f| f.strong_count() > 0 && !f.ptr_eq(&me));
        if flags.is_empty() {
            w.table.remove(&self.wd);
            // Fails only if the kernel dropped the watch already.
            let _ = rustix::fs::inotify::remove_watch(w.fd.as_fd(), self.wd);
        }
    }
}

fn start(pid: u32) -> io::Result<Watcher> {
    use rustix::fs::inotify::CreateFlags;
    let fd = Arc::new(rustix::fs::inotify::init(CreateFlags::CLOEXEC)?);
    let reader = fd.clone();
    std::thread::Builder::new()
        .name("ferry-watch".into())
        .spawn(move || listen(&reader))?;
    Ok(Watcher {
        fd,
        pid,
        table: HashMap::new(),
    })
}

/// The thread: raises the flags of every watch an event names.
fn listen(fd: &OwnedFd) {
    use rustix::fs::inotify::{ReadFlags, Reader};
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 4096];
    let mut events = Reader::new(fd, &mut buf);
    loop {
        let e = match events.next() {
            Ok(e) => e,
            Err(rustix::io::Errno::INTR) => continue,
            // Cannot happen on a blocking inotify descriptor this thread
            // owns; if it does, every flag goes up: nothing is trusted.
            Err(_) => {
                raise_all();
                return;
            }
        };
        let wd = e.wd();
        let gone = e.events().contains(ReadFlags::IGNORED);
        let overflow = e.events().contains(ReadFlags::QUEUE_OVERFLOW);
        let mut g = WATCHER.lock();
        let Some(w) = g.as_mut() else { continue };
        if overflow {
            // Events were lost: any file may have changed.
            for flags in w.table.values() {
                raise(flags);
            }
            continue;
        }
        if let Some(flags) = w.table.get(&wd) {
            raise(flags);
        }
        if gone {
            w.table.remove(&wd);
        }
    }
}

fn raise(flags: &[Weak<AtomicBool>]) {
    for f in flags.iter().filter_map(Weak::upgrade) {
        f.store(true, Ordering::Release);
    }
}

fn raise_all() {
    if let Some(w) = WATCHER.lock().as_ref() {
        for flags in w.table.values() {
            raise(flags);
        }
    }
}
