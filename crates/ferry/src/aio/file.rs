//! [`AsyncFile`]: a file whose reads and writes are started now and
//! finished later (the paper's `AsyncFile`, Figure 2).

use super::backend::{timed_out, Done, Ended, Engine, Op};
use super::buffer::{Array, IoBuffer, Owned, Plain};
use super::chain::{in_turn, next_in_chain, Chain};
use super::lock::Mutex;
use super::request::{all_done, Pending, Request};
use super::slot::{wait_until, Slot, State};
use super::Backend;
use crate::bulk::{Element, Endian, ReadArray, WriteArray};
use crate::{Buf, BufMut};
use std::fs::File;
use std::io;
use std::marker::PhantomData;
use std::mem::size_of;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// A file for asynchronous requests. See the [module docs](super).
pub struct AsyncFile {
    fd: Arc<OwnedFd>,
    engine: Engine,
    name: Arc<str>,
    seekable: bool,
    /// The sequential requests' position.
    pos: Mutex<u64>,
    /// Requests started and maybe not over (pruned as they end).
    pending: Mutex<Vec<Weak<Slot>>>,
    /// A socket.
    socket: bool,
    /// A block device (its length is not `st_size`).
    block: bool,
    /// Requests on a descriptor that cannot seek, one at a time.
    chain: Arc<Mutex<Chain>>,
    /// The time each request started from now on has to finish.
    timeout: Mutex<Option<Duration>>,
}

impl std::fmt::Debug for AsyncFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncFile")
            .field("name", &self.name)
            .field("backend", &self.backend())
            .finish()
    }
}

impl AsyncFile {
    /// Opens `path` for reading.
    pub fn open(path: impl AsRef<Path>) -> io::Result<AsyncFile> {
        AsyncFile::with_options(path, File::options().read(true), Backend::Auto)
    }

    /// Creates (or truncates) `path` for reading and writing.
    pub fn create(path: impl AsRef<Path>) -> io::Result<AsyncFile> {
        AsyncFile::with_options(
            path,
            File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true),
            Backend::Auto,
        )
    }

    /// Opens `path` as `opts` say, on `backend`. The error names the path.
    pub fn with_options(
        path: impl AsRef<Path>,
        opts: &std::fs::OpenOptions,
        backend: Backend,
    ) -> io::Result<AsyncFile> {
        let path = path.as_ref();
        let f = opts.open(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("{}: {}", path.display(), crate::error::describe(&e)),
            )
        })?;
        AsyncFile::from_fd_named(f.into(), &path.display().to_string(), backend)
    }

    /// A descriptor already open: a file, or a pipe, socket or terminal,
    /// whose requests then run one at a time, in the order they were
    /// started, at its own position (only the sequential requests apply:
    /// an offset is `ESPIPE`).
    pub fn from_fd(fd: OwnedFd, backend: Backend) -> io::Result<AsyncFile> {
        use std::os::fd::AsRawFd;
        let name = format!("fd {}", fd.as_raw_fd());
        AsyncFile::from_fd_named(fd, &name, backend)
    }

    fn from_fd_named(fd: OwnedFd, name: &str, backend: Backend) -> io::Result<AsyncFile> {
        let st = rustix::fs::fstat(&fd)?;
        let ft = rustix::fs::FileType::from_raw_mode(st.st_mode);
        if ft == rustix::fs::FileType::Directory {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("{name}: is a directory"),
            ));
        }
        let seekable = matches!(
            ft,
            rustix::fs::FileType::RegularFile | rustix::fs::FileType::BlockDevice
        );
        let socket = ft == rustix::fs::FileType::Socket;
        let block = ft == rustix::fs::FileType::BlockDevice;
        let engine = Engine::for_backend(backend)?;
        let pos = if seekable {
            crate::sys::transfer::tell(fd.as_fd())?
        } else {
            0
        };
        Ok(AsyncFile {
            fd: Arc::new(fd),
            engine,
            name: name.into(),
            seekable,
            pos: Mutex::new(pos),
            pending: Mutex::new(Vec::new()),
            socket,
            block,
            chain: Arc::new(Mutex::new(Chain::default())),
            timeout: Mutex::new(None),
        })
    }

    /// Gives each request started from now on `timeout` to finish (`None`:
    /// as long as it takes, the default). A request not over by then
    /// fails with [`io::ErrorKind::TimedOut`] ("timed out after *n* of
    /// *m* bytes"), sticky as other errors are; its buffer comes back as
    /// after any other error. The time counts from the start, waiting
    /// behind earlier requests on a pipe included. What the deadline
    /// stops is waiting: for a pipe, socket or terminal to have data or
    /// room (under io_uring, a linked timeout on each of the request's
    /// entries; on threads, the worker's `poll`). A transfer the kernel
    /// is already making on a regular file or block device runs to its
    /// end, and then the request times out if its deadline has passed
    /// before the rest was started.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::time::Duration;
    /// let (r, _w) = std::io::pipe()?; // a writer that never writes
    /// let f = ferry::aio::AsyncFile::from_fd(r.into(), ferry::aio::Backend::Auto)?;
    /// f.set_timeout(Some(Duration::from_millis(20)));
    /// let req = f.read(16)?;
    /// let e = req.wait(None).unwrap_err();
    /// assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    /// assert!(e.to_string().contains("timed out after 0 of 16 bytes"), "{e}");
    /// # Ok(()) }
    /// ```
    pub fn set_timeout(&self, timeout: Option<Duration>) {
        *self.timeout.lock() = timeout;
    }

    /// The backend running this file's requests ([`Backend::IoUring`] or
    /// [`Backend::Threads`]).
    pub fn backend(&self) -> Backend {
        self.engine.backend()
    }

    /// The file's length now (a block device's size).
    pub fn len(&self) -> io::Result<u64> {
        if self.block {
            // Requests use explicit offsets: the descriptor's own may move.
            return Ok(rustix::fs::seek(&*self.fd, rustix::fs::SeekFrom::End(0))?);
        }
        Ok(rustix::fs::fstat(&*self.fd)?.st_size as u64)
    }

    /// True if the file is empty now.
    pub fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Where the next sequential request starts.
    pub fn position(&self) -> u64 {
        *self.pos.lock()
    }

    /// Moves the sequential position (`ESPIPE` on a pipe or socket).
    pub fn seek(&self, pos: u64) -> io::Result<()> {
        if !self.seekable {
            return Err(io::Error::from_raw_os_error(libc::ESPIPE));
        }
        *self.pos.lock() = pos;
        Ok(())
    }

    /// Starts reading `len` bytes at `offset` into a page-aligned buffer
    /// ferry allocates. All `len` bytes must lie inside the file when the
    /// request starts (`UnexpectedEof` at once otherwise).
    pub fn read_at(&self, offset: u64, len: usize) -> io::Result<Request<BufMut>> {
        let buf = BufMut::try_with_capacity_aligned(len, crate::sys::page_size())?;
        self.read_into_at(offset, buf)
    }

    /// Starts filling the spare capacity of `buf` (all of it) from
    /// `offset`. An `O_DIRECT` file needs it aligned as the device says.
    pub fn read_into_at(&self, offset: u64, buf: BufMut) -> io::Result<Request<BufMut>> {
        let len = buf.capacity() - buf.len();
        self.start(Some(offset), false, len, Box::new(Plain(buf, false)))
    }

    /// Starts writing all of `data` at `offset` (a `Buf` never changes, so
    /// the caller may keep clones of it meanwhile).
    pub fn write_at(&self, offset: u64, data: Buf) -> io::Result<Request<Buf>> {
        let len = data.len();
        self.start(Some(offset), true, len, Box::new(Plain(data, true)))
    }

    /// Starts filling `items` with elements at `offset`, in the byte order
    /// `order` (swapped into the machine's when they arrive).
    pub fn read_array_at<T: Element + Send>(
        &self,
        offset: u64,
        items: Vec<T>,
        order: Endian,
    ) -> io::Result<Request<Vec<T>>> {
        self.start_array(Some(offset), items, order, false)
    }

    /// Starts writing `items` at `offset` in the byte order `order` (the
    /// vector is swapped in place for the write and back after: it comes
    /// back as it went in).
    pub fn write_array_at<T: Element + Send>(
        &self,
        offset: u64,
        items: Vec<T>,
        order: Endian,
    ) -> io::Result<Request<Vec<T>>> {
        self.start_array(Some(offset), items, order, true)
    }

    /// The array requests, read (`write` false) or write, at `offset` or
    /// the file position (`None`): one request over the vector's bytes.
    fn start_array<T: Element + Send>(
        &self,
        offset: Option<u64>,
        items: Vec<T>,
        order: Endian,
        write: bool,
    ) -> io::Result<Request<Vec<T>>> {
        let len = std::mem::size_of_val(&items[..]);
        self.start(
            offset,
            write,
            len,
            Box::new(Array::new(items, order, write)),
        )
    }

    /// Starts filling `buf`'s [`read_room`](IoBuffer::read_room) (all of
    /// it) at `offset`, or at the file position if `None` (which moves
    /// past it at once): any buffer type the caller owns.
    pub fn read_buffer_at<B: IoBuffer>(
        &self,
        offset: Option<u64>,
        mut buf: B,
    ) -> io::Result<Request<B>> {
        let len = buf.read_room().map_or(0, |r| r.len());
        self.start(offset, false, len, Box::new(Plain(buf, false)))
    }

    /// Starts writing `buf`'s [`write_bytes`](IoBuffer::write_bytes) at
    /// `offset`, or at the file position if `None`.
    pub fn write_buffer_at<B: IoBuffer>(
        &self,
        offset: Option<u64>,
        buf: B,
    ) -> io::Result<Request<B>> {
        let len = buf.write_bytes().len();
        self.start(offset, true, len, Box::new(Plain(buf, true)))
    }

    /// [`read_at`](Self::read_at) at the file position, which moves past
    /// the bytes at once.
    pub fn read(&self, len: usize) -> io::Result<Request<BufMut>> {
        let buf = BufMut::try_with_capacity_aligned(len, crate::sys::page_size())?;
        self.start(None, false, len, Box::new(Plain(buf, false)))
    }

    /// [`write_at`](Self::write_at) at the file position.
    pub fn write(&self, data: Buf) -> io::Result<Request<Buf>> {
        let len = data.len();
        self.start(None, true, len, Box::new(Plain(data, true)))
    }

    /// [`read_array_at`](Self::read_array_at) at the file position.
    pub fn read_array<T: Element + Send>(
        &self,
        items: Vec<T>,
        order: Endian,
    ) -> io::Result<Request<Vec<T>>> {
        self.start_array(None, items, order, false)
    }

    /// [`write_array_at`](Self::write_array_at) at the file position.
    pub fn write_array<T: Element + Send>(
        &self,
        items: Vec<T>,
        order: Endian,
    ) -> io::Result<Request<Vec<T>>> {
        self.start_array(None, items, order, true)
    }

    /// Checks a request and hands it to the engine. `offset` `None`: the
    /// sequential position, reserved here.
    fn start<B: 'static>(
        &self,
        offset: Option<u64>,
        write: bool,
        len: usize,
        mut buf: Box<dyn Owned>,
    ) -> io::Result<Request<B>> {
        if !self.seekable && offset.is_some() {
            let msg = format!(
                "{}: a pipe, socket or terminal has no offsets (use the sequential requests)",
                self.name
            );
            return Err(io::Error::new(
                io::ErrorKind::NotSeekable,
                super::RequestError::new(msg.into(), Some(libc::ESPIPE)),
            ));
        }
        let at = if self.seekable {
            let mut pos = self.pos.lock();
            let at = offset.unwrap_or(*pos);
            let end = at
                .checked_add(len as u64)
                .filter(|&e| e <= i64::MAX as u64)
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "{}: {len} bytes at offset {at} pass the largest file offset",
                            self.name
                        ),
                    )
                })?;
            if !write {
                let size = self.len()?;
                if end > size {
                    // Nothing started: the buffer goes back to nobody.
                    buf.finish(0, false);
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!(
                            "{}: reading {len} bytes at offset {at} passes the end of the file ({size} bytes)",
                            self.name
                        ),
                    ));
                }
            }
            if offset.is_none() {
                *pos = end;
            }
            Some(at)
        } else {
            None
        };
        let what = format!(
            "{} of {len} bytes {} {}",
            if write { "write" } else { "read" },
            at.map_or("on".to_string(), |a| format!("at offset {a} of")),
            self.name
        );
        let slot = Slot::new(what, write);
        let op = Op {
            fd: self.fd.clone(),
            offset: at,
            write,
            seekable: self.seekable,
            socket: self.socket,
            deadline: self
                .timeout
                .lock()
                .and_then(|t| std::time::Instant::now().checked_add(t)),
        };
        {
            let mut p = self.pending.lock();
            // Kept while a handle exists and the request is not over for
            // its caller: in flight, or holding a sticky error. Pruned
            // when the list doubles (not at every start: n requests would
            // cost n² looks).
            let len = p.len();
            if len >= 64 && len.is_power_of_two() {
                p.retain(|w| {
                    w.upgrade().is_some_and(|s| {
                        let st = s.st.lock();
                        st.held || matches!(st.state, State::Failed | State::Cancelled)
                    })
                });
            }
            p.push(Arc::downgrade(&slot));
        }
        let chain = (!self.seekable).then(|| self.chain.clone());
        let s = slot.clone();
        // False for a request that timed out while waiting its turn: its
        // end starts no other (the one running goes on).
        let advance = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let adv = advance.clone();
        let done: Done = Box::new(move |b, r| {
            s.complete(b, r);
            if let Some(c) = chain {
                if adv.load(std::sync::atomic::Ordering::Acquire) {
                    next_in_chain(&c);
                }
            }
        });
        let engine = self.engine;
        let sl = slot.clone();
        let deadline = op.deadline;
        let turn = move |now: bool| {
            if now {
                engine.launch(sl, op, buf, done);
            } else {
                advance.store(false, std::sync::atomic::Ordering::Release);
                drop(op);
                done(buf, Ended::before_any(timed_out(0, len)));
            }
        };
        if self.seekable {
            turn(true);
        } else {
            // One request at a time, in the order they were started.
            let mut c = self.chain.lock();
            if c.busy {
                c.next += 1;
                let n = c.next;
                c.waiting.push_back((n, Box::new(turn)));
                drop(c);
                if let Some(d) = deadline {
                    // Still waiting at its deadline: out of the chain,
                    // ended timed out, its buffer back.
                    let chain = Arc::downgrade(&self.chain);
                    super::timer::at(
                        d,
                        Box::new(move || {
                            let Some(c) = chain.upgrade() else {
                                return;
                            };
                            let mine = {
                                let mut g = c.lock();
                                let at = g.waiting.iter().position(|(i, _)| *i == n);
                                at.and_then(|i| g.waiting.remove(i))
                            };
                            if let Some((_, f)) = mine {
                                f(false);
                            }
                        }),
                    );
                }
            } else {
                c.busy = true;
                drop(c);
                in_turn(Box::new(turn));
            }
        }
        Ok(Request {
            slot,
            _buf: PhantomData,
            _pin: std::marker::PhantomPinned,
        })
    }

    /// Requests of this file not yet over.
    fn live(&self) -> Vec<Arc<Slot>> {
        self.pending
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// Waits up to `timeout` until every request of this file still
    /// referenced is done (the paper's file-level `allDone`); the first
    /// sticky error among them otherwise.
    pub fn all_done(&self, timeout: Option<Duration>) -> io::Result<bool> {
        let live: Vec<SlotRef> = self.live().into_iter().map(SlotRef).collect();
        let refs: Vec<&dyn Pending> = live.iter().map(|s| s as &dyn Pending).collect();
        all_done(&refs, timeout)
    }

    /// Cancels every request of this file in flight.
    pub fn cancel(&self) {
        for s in self.live() {
            s.cancel();
        }
    }

    /// Closes the file: cancels its reads in flight (they report
    /// [`Cancelled`](super::Cancelled), or their data if they finished
    /// first), waits until the kernel is done with every request of the
    /// file — its writes in flight land — then closes the descriptor.
    /// Requests keep their outcomes; an error closing the descriptor is
    /// returned. (A write into a pipe nobody reads waits for a reader.)
    pub fn close(self) -> io::Result<()> {
        let live = self.live();
        for s in &live {
            if !s.write {
                s.cancel();
            }
        }
        wait_until(None, || live.iter().all(|s| !s.st.lock().held));
        drop(live);
        let AsyncFile { fd, .. } = self;
        match Arc::try_unwrap(fd) {
            // The last holder: close it here and report the result.
            Ok(fd) => crate::sys::fileio::close(fd),
            Err(_) => Ok(()),
        }
    }
}

/// A request of the file, whatever its buffer type, for file-level waits.
struct SlotRef(Arc<Slot>);

impl Pending for SlotRef {
    fn done(&self) -> io::Result<bool> {
        self.0.check()
    }
}

impl AsFd for AsyncFile {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Bulk reads on an `AsyncFile` started and waited for at once (the
/// paper's `readArray(b).done()`): at the sequential position, which
/// moves past the whole elements read.
impl ReadArray for AsyncFile {
    fn read_array_in<T: Element>(&mut self, out: &mut [T], order: Endian) -> io::Result<()> {
        let at = *self.pos.lock();
        let r = crate::bulk::read_fd(self.fd.as_fd(), out, order, self.seekable.then_some(at));
        let whole = match &r {
            Ok(()) => out.len(),
            Err(e) => crate::bulk::incomplete(e).map_or(0, |i| i.elements),
        };
        *self.pos.lock() = at + (whole * size_of::<T>()) as u64;
        r
    }
}

/// Bulk writes on an `AsyncFile`, done at once at the sequential position.
impl WriteArray for AsyncFile {
    fn write_array_in<T: Element>(&mut self, items: &[T], order: Endian) -> io::Result<()> {
        let at = *self.pos.lock();
        let r = crate::bulk::write_fd(self.fd.as_fd(), items, order, self.seekable.then_some(at));
        let whole = match &r {
            Ok(()) => items.len(),
            Err(e) => crate::bulk::incomplete(e).map_or(0, |i| i.elements),
        };
        *self.pos.lock() = at + (whole * size_of::<T>()) as u64;
        r
    }
}
