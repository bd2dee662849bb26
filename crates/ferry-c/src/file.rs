//! The C stream object: one ferry `Stream` behind a FILE, an ASI stream
//! and the emulated descriptors that name it.
//!
//! ```text
//!  C program ── getc/putc (inline) ──► rpos..rend / wpos..wend ─┐
//!            ── fread, printf, read(2), fy_salloc ─► lock, settle ┴─► Stream (the only buffers)
//! ```
//!
//! The front (`rpos`, `rend`, `wpos`, `wend`) is a window on the stream's
//! own buffer: the unread bytes of its current read buffer, or the room
//! left in its current write buffer. Inline code moves `rpos` and `wpos`;
//! every other call first *settles* the window (tells the stream how far
//! the inline code got) and then works on the stream, so all interfaces
//! see one offset and one set of bytes.

use crate::registry;
pub(crate) use fmem::Fmem;
pub(crate) use lifecycle::{close_file, close_stream, new_file, release_regions};
pub(crate) use memstream::MemStream;

pub(crate) mod fmem;
mod lifecycle;
pub(crate) mod memstream;
use ferry::stream::{os_error, Backend};

/// How a `FILE` that reads gets its bytes: `pread` into pool buffers, not
/// mapped windows. A mapped stream holds a read lease, and ferry hears
/// lease breaks on a thread of its own; glibc then counts the process as
/// multi-threaded (`__libc_single_threaded` is 0 for good), and from then
/// on every inline `getc`/`putc` takes the `FILE` lock: 30× slower
/// (`ferry-bench asf-c`, getc: 0.9 s → 28 s on 1 GiB). A `FILE` copies
/// into the caller's memory anyway, and `read(2)` costs the same whatever
/// page sizes the file sits in, which faulting a mapping does not. Mapped
/// streams stay one call away: `fy_sopen` (ferry/asi.h).
pub(crate) const READ_BACKEND: Backend = Backend::Buffered;
use ferry::stream::{RawRegion, RawRegionMut};
use ferry::Stream;
use libc::c_int;
use parking_lot::lock_api::RawReentrantMutex;
use parking_lot::{RawMutex, RawThreadId};
use std::cell::UnsafeCell;
use std::io::{self, BufRead, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::AtomicUsize;

/// The buffering mode (setvbuf).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Buffering {
    Full,
    Line,
    None,
}

/// What the front pointers currently show.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Window {
    Empty,
    /// Unread bytes of the stream's current read buffer (`rbase` is where
    /// the stream's offset still is).
    Read,
    /// Bytes pushed back with ungetc (`push`).
    Push,
    /// Room in the stream's current write buffer (`wbase` is where the
    /// stream's offset still is).
    Write,
}

/// The direction of a FILE's last operation (`__freading`, `__fwriting`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Last {
    /// Nothing yet (or only flushes and ftell).
    None,
    /// A read, an ungetc, or a seek (which leaves a stream ready to read,
    /// as glibc's).
    Read,
    /// A write.
    Write,
}

/// An ASI region handed to C, held until `fy_sfree`.
pub(crate) enum Held {
    Read(RawRegion),
    Write(RawRegionMut),
    /// Pushed-back bytes handed out by salloc (they came before the
    /// stream's next byte).
    Push(Box<[u8]>),
}

/// Streams that need more than the stream at close or flush.
pub(crate) enum Kind {
    Plain,
    /// popen: the child to wait for.
    Child(std::process::Child),
    /// open_memstream: where to publish the bytes.
    MemStream(MemStream),
    /// fmemopen: glibc's cookie over the caller's buffer (or ours).
    Fmem(Box<Fmem>),
}

pub(crate) struct State {
    pub stream: Option<Stream>,
    /// The errno every call fails with when there is no stream (a
    /// directory opened for reading, a closed or invalid std stream).
    pub fail: c_int,
    /// 0, 1 or 2 for the std streams, opened on first use.
    pub std_fd: c_int,
    pub window: Window,
    pub rbase: *mut u8,
    pub wbase: *mut u8,
    /// Pushed-back bytes, next first.
    pub push: Vec<u8>,
    pub eof: bool,
    pub err: bool,
    pub buffering: Buffering,
    pub fd: c_int,
    pub readable: bool,
    pub writable: bool,
    pub seekable: bool,
    /// A stream that writes at the descriptor's own offset (sequential):
    /// stdout, stderr, fdopen "w" or "a". While the descriptor is a
    /// regular file (dup2 may change that) fseek and ftell are the
    /// descriptor's (`stdio::position`).
    pub at_fd: bool,
    pub regions: Vec<(usize, Held)>,
    pub kind: Kind,
    /// Emulated descriptors (ferry/unistd.h) naming this stream.
    pub fd_refs: u32,
    /// The FILE is visible to C (fopen and friends); else only descriptors.
    pub is_file: bool,
    pub heap: bool,
    pub closed: bool,
    /// The last operation's direction (`__freading`, `__fwriting`).
    pub last: Last,
    /// The stream has been used (read, written, seeked or setvbuf'd):
    /// from then on `__fbufsize` reports its buffer, as glibc's from the
    /// allocation of its buffer.
    pub used: bool,
    /// `__fsetlocking(FSETLOCKING_BYCALLER)` was asked for (reported
    /// back; ferry locks all the same).
    pub by_caller: bool,
}

/// The stream object. Its first four fields are `struct fy_file` in
/// ferry/stdio.h.
#[repr(C)]
pub struct FyFile {
    pub rpos: *mut u8,
    pub rend: *mut u8,
    pub wpos: *mut u8,
    pub wend: *mut u8,
    pub(crate) lock: RawReentrantMutex<RawMutex, RawThreadId>,
    pub(crate) st: UnsafeCell<State>,
    /// Lookups of the descriptor table in flight on this FILE
    /// (`unistd::Pinned`): close_file frees it only when none are left.
    pub(crate) pins: AtomicUsize,
}

/// A std stream lives in a static; its stream is opened on first use.
pub struct StaticFile(pub UnsafeCell<FyFile>);
// SAFETY: every access to the state goes through the FILE's lock (or the
// single-threaded inline paths, which glibc's own rule makes safe).
unsafe impl Sync for StaticFile {}

const fn blank_state(std_fd: c_int) -> State {
    State {
        stream: None,
        fail: 0,
        std_fd,
        window: Window::Empty,
        rbase: std::ptr::null_mut(),
        wbase: std::ptr::null_mut(),
        push: Vec::new(),
        eof: false,
        err: false,
        buffering: if std_fd == 2 {
            Buffering::None
        } else {
            Buffering::Full
        },
        fd: std_fd,
        readable: std_fd == 0,
        writable: std_fd != 0,
        seekable: false,
        at_fd: false,
        regions: Vec::new(),
        kind: Kind::Plain,
        fd_refs: 0,
        is_file: true,
        heap: false,
        closed: false,
        last: Last::None,
        used: false,
        by_caller: false,
    }
}

pub(crate) const fn std_file(fd: c_int) -> FyFile {
    FyFile {
        rpos: std::ptr::null_mut(),
        rend: std::ptr::null_mut(),
        wpos: std::ptr::null_mut(),
        wend: std::ptr::null_mut(),
        lock: RawReentrantMutex::INIT,
        st: UnsafeCell::new(blank_state(fd)),
        pins: AtomicUsize::new(0),
    }
}

pub static STDIN: StaticFile = StaticFile(UnsafeCell::new(std_file(0)));
pub static STDOUT: StaticFile = StaticFile(UnsafeCell::new(std_file(1)));
pub static STDERR: StaticFile = StaticFile(UnsafeCell::new(std_file(2)));

pub(crate) fn set_errno(e: c_int) {
    // SAFETY: errno is thread-local and always valid to write.
    unsafe { *libc::__errno_location() = e };
}

pub(crate) fn errno_of(e: &io::Error) -> c_int {
    os_error(e).unwrap_or(match e.kind() {
        io::ErrorKind::UnexpectedEof => libc::EIO,
        io::ErrorKind::InvalidInput => libc::EINVAL,
        io::ErrorKind::OutOfMemory => libc::ENOMEM,
        io::ErrorKind::WriteZero => libc::ENOSPC,
        io::ErrorKind::TimedOut => libc::ETIMEDOUT,
        _ => libc::EIO,
    })
}

/// The lock, held; unlocks on drop.
pub(crate) struct Held_<'a>(pub(crate) &'a FyFile);

impl Held_<'_> {
    /// # Safety
    /// One `&mut State` at a time: callers do not nest it.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn state(&self) -> &mut State {
        // SAFETY: the lock is held; the caller keeps to one borrow.
        unsafe { &mut *self.0.st.get() }
    }
}

impl Drop for Held_<'_> {
    fn drop(&mut self) {
        // SAFETY: locked by this thread in `locked`.
        unsafe { self.0.lock.unlock() };
    }
}

impl FyFile {
    pub(crate) fn locked(&self) -> Held_<'_> {
        self.lock.lock();
        Held_(self)
    }

    fn front(&self) -> *mut FyFile {
        self as *const FyFile as *mut FyFile
    }

    pub(crate) fn clear_front(&self) {
        let f = self.front();
        // SAFETY: the front is plain data; the lock is held by the caller.
        unsafe {
            (*f).rpos = std::ptr::null_mut();
            (*f).rend = std::ptr::null_mut();
            (*f).wpos = std::ptr::null_mut();
            (*f).wend = std::ptr::null_mut();
        }
    }

    pub(crate) fn set_read_window(&self, st: &mut State, w: Window, base: *mut u8, len: usize) {
        let f = self.front();
        st.window = w;
        st.rbase = base;
        // SAFETY: lock held; `base..base+len` is the window's memory.
        unsafe {
            (*f).rpos = base;
            (*f).rend = base.wrapping_add(len);
            (*f).wpos = std::ptr::null_mut();
            (*f).wend = std::ptr::null_mut();
        }
    }

    pub(crate) fn set_write_window(&self, st: &mut State, base: *mut u8, len: usize) {
        let f = self.front();
        st.window = Window::Write;
        st.wbase = base;
        // SAFETY: lock held; `base..base+len` is the stream's write room.
        unsafe {
            (*f).wpos = base;
            (*f).wend = base.wrapping_add(len);
            (*f).rpos = std::ptr::null_mut();
            (*f).rend = std::ptr::null_mut();
        }
    }

    pub(crate) fn rpos(&self) -> *mut u8 {
        // SAFETY: plain read of the front; lock held by the caller.
        unsafe { (*self.front()).rpos }
    }

    pub(crate) fn advance_rpos(&self, n: usize) {
        // SAFETY: lock held; callers stay within rpos..rend.
        unsafe { (*self.front()).rpos = (*self.front()).rpos.add(n) };
    }

    pub(crate) fn wpos(&self) -> *mut u8 {
        // SAFETY: as above.
        unsafe { (*self.front()).wpos }
    }
}

/// Tells the stream how far the inline code got, and empties the window.
pub(crate) fn settle(f: &FyFile, st: &mut State) -> io::Result<()> {
    let r = match st.window {
        Window::Empty => Ok(()),
        Window::Read => {
            let n = f.rpos() as usize - st.rbase as usize;
            if let Some(s) = st.stream.as_mut() {
                s.consume(n);
            }
            Ok(())
        }
        Window::Push => {
            let n = f.rpos() as usize - st.rbase as usize;
            st.push.drain(..n.min(st.push.len()));
            Ok(())
        }
        Window::Write => {
            let n = f.wpos() as usize - st.wbase as usize;
            match st.stream.as_mut() {
                Some(s) => s.commit_space(n),
                None => Ok(()),
            }
        }
    };
    st.window = Window::Empty;
    f.clear_front();
    r
}

/// The stream, opening a std stream on first use; the errno otherwise.
pub(crate) fn stream_of(st: &mut State) -> Result<&mut Stream, c_int> {
    if st.stream.is_none() && st.fail == 0 && st.std_fd >= 0 && !st.closed && !st.heap {
        open_std(st);
    }
    match st.stream.as_mut() {
        Some(s) => Ok(s),
        None => Err(if st.fail != 0 { st.fail } else { libc::EBADF }),
    }
}

fn open_std(st: &mut State) {
    registry::register_exit();
    let fd = st.std_fd;
    // SAFETY: F_GETFL on any number is harmless; it tells if fd is open.
    if unsafe { libc::fcntl(fd, libc::F_GETFL) } < 0 {
        st.fail = libc::EBADF;
        return;
    }
    // SAFETY: fd 0, 1 or 2 is open (checked) and belongs to this stream
    // from now on, as stdin/stdout/stderr own them in C (fclose closes it).
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let name = ["standard input", "standard output", "standard error"][fd as usize];
    // Output goes through write(2) at the descriptor's offset, as glibc's
    // does: a child process, dprintf or write(1, ...) share that offset.
    let backend = if fd == 0 {
        READ_BACKEND
    } else {
        Backend::Sequential
    };
    let forked_since_start = || {
        ferry::ipc::fork_generation() != START_GENERATION.load(std::sync::atomic::Ordering::Relaxed)
    };
    let made = if fd != 2 && is_fifo(fd) && stdio_ipc_asked() && !(fd == 0 && forked_since_start())
    {
        if fd == 0 {
            // SAFETY: FERRY_STDIO_IPC=1 is this program's word that the
            // ferry programs of its own user writing its standard input
            // speak ferry's ipc protocol; `pipe_reader` takes no other
            // writer (see ferry::ipc's upgrade).
            unsafe { Stream::pipe_reader(owned, name) }
        } else {
            Stream::pipe_writer(owned, name, STDOUT_OFFER.lock().take())
        }
    } else {
        Stream::from_fd_with(owned, name, backend)
    };
    match made {
        Ok(s) => {
            // A C program writing to a pipe whose reader has gone dies of
            // SIGPIPE (unless it ignores or handles it), as with glibc.
            s.raise_write_signals();
            if fd != 2 && is_tty(fd) {
                st.buffering = Buffering::Line;
            }
            st.seekable = fd == 0 && is_seekable(fd);
            st.at_fd = fd != 0;
            st.stream = Some(s);
        }
        Err(e) => st.fail = errno_of(&e),
    }
}

/// Standard output's offer of an ipc channel to its pipe's reader, bound
/// when the program starts (`FERRY_STDIO_IPC=1`, standard output a pipe),
/// so that a ferry reader finds it before the first output; taken by
/// standard output's stream.
static STDOUT_OFFER: parking_lot::Mutex<Option<ferry::ipc::PipeOffer>> =
    parking_lot::const_mutex(None);

/// Runs when the library is loaded, before `main`.
#[used]
#[unsafe(link_section = ".init_array")]
static OFFER_AT_START: extern "C" fn() = offer_at_start;

/// The fork generation when the library was loaded: standard input takes
/// up a channel only in the process that started with it (a child forked
/// before its parent read leaves the writer's offer to the parent).
static START_GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

extern "C" fn offer_at_start() {
    crate::ffi::ffi_guard((), 0, || {
        if is_fifo(0) && stdio_ipc_asked() {
            START_GENERATION.store(
                ferry::ipc::fork_generation(),
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        if is_fifo(1) && stdio_ipc_asked() {
            // SAFETY: descriptor 1 is open (fstat said it is a pipe); it
            // is only borrowed for the call.
            let out = unsafe { std::os::fd::BorrowedFd::borrow_raw(1) };
            *STDOUT_OFFER.lock() = ferry::ipc::PipeOffer::bind(out);
        }
    })
}

/// `FERRY_STDIO_IPC=1`: standard input and output that are pipes between
/// two ferry programs go through an ipc channel (the IO-Lite paper's
/// pipes between IO-Lite programs): both programs must ask.
fn stdio_ipc_asked() -> bool {
    std::env::var_os("FERRY_STDIO_IPC").is_some_and(|v| v == "1")
}

/// True if `fd` is a pipe (FIFO), keeping errno.
fn is_fifo(fd: c_int) -> bool {
    let mut sb = std::mem::MaybeUninit::<libc::stat>::uninit();
    let saved = errno_value();
    // SAFETY: fstat fills `sb` when it returns 0.
    let fifo = unsafe {
        libc::fstat(fd, sb.as_mut_ptr()) == 0
            && sb.assume_init().st_mode & libc::S_IFMT == libc::S_IFIFO
    };
    set_errno(saved);
    fifo
}

/// isatty, keeping errno: a stream that is no terminal must not leave
/// ENOTTY behind from a call that succeeded (glibc's `local_isatty`).
pub(crate) fn is_tty(fd: c_int) -> bool {
    let saved = errno_value();
    // SAFETY: isatty on any number is harmless.
    let tty = unsafe { libc::isatty(fd) } == 1;
    set_errno(saved);
    tty
}

/// True if `fd` is a regular file.
pub(crate) fn is_regular(fd: c_int) -> bool {
    let mut sb = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat fills `sb` when it returns 0.
    unsafe {
        libc::fstat(fd, sb.as_mut_ptr()) == 0
            && sb.assume_init().st_mode & libc::S_IFMT == libc::S_IFREG
    }
}

pub(crate) fn is_seekable(fd: c_int) -> bool {
    let saved = errno_value();
    // SAFETY: lseek with SEEK_CUR and 0 does not move the offset.
    let seekable = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) >= 0 };
    // A pipe is no failure of the call that asked (ESPIPE stays inside).
    set_errno(saved);
    seekable
}

/// The stream for an operation that reads (EBADF when not readable).
pub(crate) fn for_read(st: &mut State) -> Result<&mut Stream, c_int> {
    if !st.readable && st.stream.is_some() {
        return Err(libc::EBADF);
    }
    let readable = st.readable;
    if readable {
        st.last = Last::Read;
        st.used = true;
    }
    let s = stream_of(st)?;
    if !readable {
        return Err(libc::EBADF);
    }
    Ok(s)
}

/// The stream for an operation that writes (EBADF when not writable).
pub(crate) fn for_write(st: &mut State) -> Result<&mut Stream, c_int> {
    let writable = st.writable;
    if writable {
        st.last = Last::Write;
        st.used = true;
    }
    let s = stream_of(st)?;
    if !writable {
        return Err(libc::EBADF);
    }
    Ok(s)
}

/// Records an error on the stream (ferror) and in errno (0: ferror only,
/// errno kept, as glibc's short fmemopen write).
///
/// (SIGPIPE for an EPIPE comes from the write itself: a FILE's stream
/// writes with the signal unblocked, `Stream::raise_write_signals`, so the
/// kernel sends it once per failed write, as for glibc's write(2).)
pub(crate) fn fail(st: &mut State, e: c_int) {
    st.err = true;
    if e != 0 {
        set_errno(e);
    }
}

/// fflush on one stream (lock held).
pub(crate) fn flush(f: &FyFile, st: &mut State) -> Result<(), c_int> {
    if let Err(e) = settle(f, st) {
        let e = errno_of(&e);
        fail(st, e);
        return Err(e);
    }
    if let Kind::Fmem(_) = st.kind {
        return fmem::sync(st).map_err(|(_, e)| {
            if e != 0 {
                set_errno(e);
            }
            e
        });
    }
    let writable = st.writable;
    let Some(s) = st.stream.as_mut() else {
        return Ok(());
    };
    // A read stream flushes too: the descriptor's offset goes back to
    // where the reader is (read-ahead given back), as glibc's fflush.
    if let Err(e) = s.flush() {
        if writable {
            // glibc's rule: what could not be written is dropped (this
            // failure reports it; fclose has nothing left to fail on).
            s.discard_unwritten();
        }
        let e = errno_of(&e);
        fail(st, e);
        return Err(e);
    }
    publish(st, false);
    Ok(())
}

/// open_memstream: publish the bytes where the caller sees them
/// (`memstream`; fmemopen's cookie keeps its buffer itself: `fmem::sync`).
pub(crate) fn publish(st: &mut State, closing: bool) {
    if closing && matches!(st.kind, Kind::Fmem(_)) {
        // fclose: writes a held ASI region kept from the flush go now.
        let _ = fmem::sync(st);
    }
    memstream::publish(st, closing);
}

/// Runs `op` on the locked, settled FILE with its stream; an error sets
/// ferror and errno and gives `bad`.
pub(crate) fn with_stream<R>(
    f: *mut FyFile,
    bad: R,
    pick: fn(&mut State) -> Result<&mut Stream, c_int>,
    op: impl FnOnce(&FyFile, &mut State) -> Result<R, c_int>,
) -> R {
    if f.is_null() {
        set_errno(libc::EINVAL);
        return bad;
    }
    // SAFETY: a FILE pointer from this library (the C contract).
    let file = unsafe { &*f };
    let g = file.locked();
    // A panic inside `op` ends here, under the lock, as an error of the
    // stream (ferror, errno EIO), like any other failed operation.
    let r = crate::ffi::caught(|| {
        // SAFETY: lock held; one borrow (it ends with this closure).
        let st = unsafe { g.state() };
        if let Err(e) = settle(file, st) {
            return Err(errno_of(&e));
        }
        pick(st)?;
        op(file, st)
    });
    // SAFETY: lock held; the closure's borrow has ended.
    let st = unsafe { g.state() };
    match r {
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            fail(st, e);
            bad
        }
        None => {
            fail(st, libc::EIO);
            bad
        }
    }
}

/// The FILE's stream (present: checked by `with_stream`).
pub(crate) fn guard(st: &mut State) -> Result<&mut Stream, c_int> {
    st.stream.as_mut().ok_or(libc::EBADF)
}

/// Writes `data` with the FILE's buffering rules.
pub(crate) fn write_bytes(st: &mut State, data: &[u8]) -> Result<(), c_int> {
    let buffering = st.buffering;
    if let Kind::Fmem(_) = st.kind {
        return fmem::write(st, data).1;
    }
    let g = guard(st)?;
    // What goes out now: everything (unbuffered), through the last newline
    // (line buffered: a partial line after it stays buffered, as glibc's),
    // or nothing.
    let now = match buffering {
        Buffering::Full => 0,
        Buffering::Line => memchr::memrchr(b'\n', data).map_or(0, |i| i + 1),
        Buffering::None => data.len(),
    };
    let (head, rest) = data.split_at(now);
    let r = g
        .write_all(head)
        .and_then(|()| match now {
            0 => Ok(()),
            _ => g.flush(),
        })
        .and_then(|()| g.write_all(rest))
        // A full buffer written out on the way that failed: this call
        // reports it, as glibc's.
        .and_then(|()| g.take_error());
    if let Err(e) = r {
        // As after a failed fflush: the bytes that failed are dropped.
        g.discard_unwritten();
        return Err(errno_of(&e));
    }
    Ok(())
}

/// A read error after `got` bytes: those bytes are the caller's (the
/// error is kept in ferror and errno, as glibc does); with none, the error.
pub(crate) fn read_failed(st: &mut State, got: usize, e: &io::Error) -> Result<usize, c_int> {
    if got > 0 {
        fail(st, errno_of(e));
        return Ok(got);
    }
    Err(errno_of(e))
}

/// Reads up to `out.len()` bytes: pushed-back ones first, then the stream.
/// Sets eof at the end.
pub(crate) fn read_bytes(st: &mut State, out: &mut [u8]) -> Result<usize, c_int> {
    let mut got = 0;
    if !st.push.is_empty() {
        let n = st.push.len().min(out.len());
        out[..n].copy_from_slice(&st.push[..n]);
        st.push.drain(..n);
        got = n;
    }
    let g = guard(st)?;
    while got < out.len() {
        match std::io::Read::read(g, &mut out[got..]) {
            Ok(0) => {
                st.eof = true;
                return Ok(got);
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return read_failed(st, got, &e);
            }
        }
    }
    Ok(got)
}

/// Offers the file to its first ASI or stdio slow path: nothing else.
pub(crate) fn file_ref<'a>(f: *mut FyFile) -> Option<&'a FyFile> {
    // SAFETY: a FILE pointer from this library, or NULL.
    unsafe { f.as_ref() }
}

/// The calling thread's errno.
pub(crate) fn errno_value() -> c_int {
    // SAFETY: errno is thread-local and always valid to read.
    unsafe { *libc::__errno_location() }
}
