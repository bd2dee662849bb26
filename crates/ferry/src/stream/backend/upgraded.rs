//! The modules of a pipe upgraded to an ipc channel between two ferry
//! programs (`ipc::upgrade`): the reader takes the writer's pool slots as
//! its read buffers (no copy out of the pool), the writer copies its
//! buffers into the pool (as `write(2)` copies into a pipe). Both keep the
//! pipe itself: the reader reads it once the channel ends (another writer
//! may follow), and both name it as their descriptor.

use super::{Module, Sequential, Window};
use crate::ipc::{take_pipe, Got, PipeOffer, Receiver, Sender, SenderConfig};
use crate::sys::ipc as sys;
use crate::Aggregate;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd};

enum ReadState {
    /// Not yet decided: waiting for the first read.
    Undecided,
    /// The channel, and the pipe beside it.
    Channel(Box<Channel>),
    /// The pipe, as a sequential module reads it.
    Pipe,
}

/// The reader's side of a channel, while it lasts.
struct Channel {
    rx: Receiver,
    /// The unread rest of the current message.
    current: Aggregate,
    /// Bytes came through the pipe (from another writer, or the writer's
    /// own `write(2)` beside its stream): they are read, while there are
    /// any, before the next message.
    pipe_turn: bool,
    /// The pipe ended while the channel lasts (its writers all closed
    /// it): it is watched no more.
    pipe_ended: bool,
}

/// What comes next on the channel.
enum Next {
    /// A piece of the current message.
    Piece(crate::Buf),
    /// The pipe's turn: this many bytes wait there, all of them written
    /// before anything the channel has not yet shown.
    Pipe(usize),
    /// The channel ended; the pipe is read from now on.
    Ended,
}

/// The reading end: the channel if the writer upgraded, then the pipe.
///
/// While the channel lasts the pipe is watched beside it: bytes another
/// process (a child writing the same standard output, say) or the
/// writer itself puts in the pipe are read as soon as every message
/// published before them was (so that a writer of the pipe is never held
/// by a reader waiting on the channel). The writer leaves the channel
/// for the pipe as soon as it sees unread bytes there at a write, so
/// that its own later bytes come after them.
///
/// The order, read by read: the bytes waiting in the pipe are counted
/// (`FIONREAD`), then the channel is looked at; if it shows nothing, at
/// most the bytes counted are read from the pipe. A message the channel
/// did not show was published after the count, so after those bytes were
/// written; a message it shows goes first — it was published before
/// them, or (the writer looks at the pipe before each message and leaves
/// the channel when bytes wait there) while they were being written.
pub(crate) struct UpgradedReader {
    pipe: Sequential,
    state: ReadState,
    /// The fork generation the stream was made in: a child forked before
    /// the first read reads the pipe and leaves the channel to its parent.
    born: u64,
}

impl UpgradedReader {
    pub(crate) fn new(pipe: Sequential) -> UpgradedReader {
        UpgradedReader {
            pipe,
            state: ReadState::Undecided,
            born: crate::sys::fork::generation(),
        }
    }

    /// Lets the writer know at once that this reader reads no more (at
    /// exit): the channel ends, and the writer goes on through the pipe
    /// for whoever reads it next, as a pipe's writer goes on after a
    /// reader that left. Afterwards reads take the pipe.
    pub(crate) fn leave_channel(&mut self) {
        match std::mem::replace(&mut self.state, ReadState::Pipe) {
            // The receiver's drop raises its "stopped" flag, which the
            // writer looks at before each message.
            ReadState::Channel(ch) if !ch.rx.forked() => drop(ch),
            // A forked child's copy is the parent's to end.
            ReadState::Channel(ch) => std::mem::forget(ch),
            ReadState::Undecided | ReadState::Pipe => {}
        }
    }

    fn fd(&self) -> BorrowedFd<'_> {
        self.pipe.as_fd()
    }

    /// Whether the bytes come through the channel now.
    pub(crate) fn on_channel(&self) -> bool {
        matches!(self.state, ReadState::Channel(..))
    }

    /// Decides at the first read; then what comes next.
    fn next(&mut self) -> io::Result<Next> {
        if let ReadState::Undecided = self.state {
            self.state = ReadState::Pipe;
            if crate::sys::fork::generation() != self.born {
                // A child forked before its parent read: the writer's
                // offer is the parent's to take (glibc's parent and child
                // share the pipe; here the child reads the pipe, and the
                // parent, reading later, still finds the offer).
                return Ok(Next::Ended);
            }
            // SAFETY: `Stream::pipe_reader` was made by a caller that vouched
            // for a ferry program of its own user writing its pipe;
            // `take_pipe` takes only such a peer.
            if let Some(rx) = unsafe { take_pipe(self.fd())? } {
                self.state = ReadState::Channel(Box::new(Channel {
                    rx,
                    current: Aggregate::new(),
                    pipe_turn: false,
                    pipe_ended: false,
                }));
            }
        }
        let pipe = self.pipe.as_fd();
        let ReadState::Channel(ch) = &mut self.state else {
            return Ok(Next::Ended);
        };
        if ch.rx.forked() {
            // A child forked from the reader: the channel (and every
            // piece of it, whose releases are the parent's to give) stays
            // the parent's. The child reads the pipe.
            if let ReadState::Channel(ch) = std::mem::replace(&mut self.state, ReadState::Pipe) {
                std::mem::forget(ch);
            }
            return Ok(Next::Ended);
        }
        loop {
            let next = ch.current.bufs().next().cloned();
            if let Some(b) = next {
                ch.current.advance(b.len());
                if !b.is_empty() {
                    return Ok(Next::Piece(b));
                }
                continue;
            }
            if ch.pipe_turn {
                let n = sys::pipe_unread(pipe)?;
                if n > 0 && !ch.rx.has_waiting()? {
                    return Ok(Next::Pipe(usize::try_from(n).unwrap_or(usize::MAX)));
                }
                if n == 0 && sys::pipe_ended(pipe)? {
                    // All its writers closed it while the channel lasts.
                    ch.pipe_ended = true;
                }
                ch.pipe_turn = false;
            }
            let watch = (!ch.pipe_ended).then_some(pipe);
            match ch.rx.recv_beside(watch) {
                Ok(Got::Message(m)) => ch.current = m,
                Ok(Got::Beside) => ch.pipe_turn = true,
                // The writer closed, or went away: its bytes are all here.
                // What follows comes through the pipe.
                Ok(Got::Finished) => break,
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(e),
            }
        }
        self.state = ReadState::Pipe;
        Ok(Next::Ended)
    }

    /// The pipe's turn: one read of at most `n` bytes that does not wait.
    /// `None` if nothing was there after all (another reader took it).
    fn read_pipe_now<D: Dest + ?Sized>(
        &mut self,
        buf: &mut D,
        n: usize,
    ) -> io::Result<Option<usize>> {
        let got = buf.read_nowait(self.pipe.as_fd(), n)?;
        match got {
            Some(k) if k > 0 => Ok(Some(k)),
            _ => {
                if let ReadState::Channel(ch) = &mut self.state {
                    ch.pipe_turn = false;
                }
                Ok(None)
            }
        }
    }

    /// Puts the unread part of `b` back in front of the current message.
    fn unread(&mut self, b: crate::Buf) {
        if let ReadState::Channel(ch) = &mut self.state {
            let mut m = Aggregate::from(b);
            m.append(std::mem::take(&mut ch.current));
            ch.current = m;
        }
    }

    /// One read into `buf` (not empty): a piece of the channel, or of the
    /// pipe beside it, or (once the channel ended) of the pipe.
    fn read_into<D: Dest + ?Sized>(&mut self, off: u64, buf: &mut D) -> io::Result<usize> {
        loop {
            match self.next()? {
                Next::Piece(b) => {
                    let n = buf.fill_from(&b);
                    if n < b.len() {
                        self.unread(b.slice(n..));
                    }
                    return Ok(n);
                }
                Next::Pipe(n) => {
                    if let Some(k) = self.read_pipe_now(buf, n)? {
                        return Ok(k);
                    }
                }
                Next::Ended => return buf.read_pipe(&mut self.pipe, off),
            }
        }
    }
}

/// A read's destination, initialized or not.
trait Dest {
    /// Copies what fits of `src` to the front: how much.
    fn fill_from(&mut self, src: &[u8]) -> usize;
    /// [`sys::read_nowait`] into its first `max` bytes at most.
    fn read_nowait(&mut self, fd: BorrowedFd<'_>, max: usize) -> io::Result<Option<usize>>;
    /// The pipe's own read into it.
    fn read_pipe(&mut self, pipe: &mut Sequential, off: u64) -> io::Result<usize>;
}

impl Dest for [u8] {
    fn fill_from(&mut self, src: &[u8]) -> usize {
        let n = src.len().min(self.len());
        self[..n].copy_from_slice(&src[..n]);
        n
    }

    fn read_nowait(&mut self, fd: BorrowedFd<'_>, max: usize) -> io::Result<Option<usize>> {
        let n = max.min(self.len());
        sys::read_nowait(fd, &mut self[..n])
    }

    fn read_pipe(&mut self, pipe: &mut Sequential, off: u64) -> io::Result<usize> {
        pipe.read(off, self)
    }
}

impl Dest for [MaybeUninit<u8>] {
    fn fill_from(&mut self, src: &[u8]) -> usize {
        let n = src.len().min(self.len());
        for (d, s) in self[..n].iter_mut().zip(&src[..n]) {
            d.write(*s);
        }
        n
    }

    fn read_nowait(&mut self, fd: BorrowedFd<'_>, max: usize) -> io::Result<Option<usize>> {
        let n = max.min(self.len());
        sys::read_nowait_uninit(fd, &mut self[..n])
    }

    fn read_pipe(&mut self, pipe: &mut Sequential, off: u64) -> io::Result<usize> {
        pipe.read_uninit(off, self)
    }
}

impl Module for UpgradedReader {
    fn positional(&self) -> bool {
        false
    }

    fn size(&self) -> io::Result<u64> {
        Ok(0)
    }

    fn read(&mut self, off: u64, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.read_into(off, buf)
    }

    fn read_uninit(&mut self, off: u64, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.read_into(off, buf)
    }

    fn write(&mut self, _off: Option<u64>, _bytes: &[u8]) -> (usize, Option<io::Error>) {
        (0, Some(io::Error::from_raw_os_error(libc::EBADF)))
    }

    fn raw_fd(&self) -> Option<i32> {
        self.pipe.raw_fd()
    }

    /// A piece of the channel holding at least `min` bytes is the read
    /// buffer itself: the writer's pool slot, read in place.
    fn window(&mut self, _pos: u64, min: usize) -> Option<io::Result<Window>> {
        let b = match self.next() {
            Ok(Next::Piece(b)) => b,
            // The pipe's bytes are read (copied), as after the channel.
            Ok(Next::Pipe(_) | Next::Ended) => return None,
            Err(e) => return Some(Err(e)),
        };
        if b.len() >= min.max(1) {
            return Some(Ok(Window { buf: b, eof: false }));
        }
        // Too short for what is asked: the caller reads (copies) instead.
        self.unread(b);
        None
    }
}

/// The writing end: the channel if the reader took the offer by the first
/// write (the first buffer flushed), else the pipe.
pub(crate) struct UpgradedWriter {
    pipe: Sequential,
    offer: Option<(PipeOffer, SenderConfig)>,
    tx: Option<Box<Sender>>,
    signals: bool,
}

impl UpgradedWriter {
    pub(crate) fn new(pipe: Sequential, offer: PipeOffer, config: SenderConfig) -> UpgradedWriter {
        UpgradedWriter {
            pipe,
            offer: Some((offer, config)),
            tx: None,
            signals: false,
        }
    }

    /// Whether the bytes go through the channel (decided at the first
    /// write).
    pub(crate) fn on_channel(&self) -> bool {
        self.tx.is_some()
    }

    /// In a child forked from the writer, the channel stays the
    /// parent's: the child's copy of the sender is let go of untouched
    /// (a BYE or a message from here would break the parent's), and the
    /// child writes the pipe — where the reader, watching the pipe beside
    /// the channel, finds its bytes in order.
    fn leave_if_forked(&mut self) {
        if self.tx.as_ref().is_some_and(|tx| tx.forked()) {
            if let Some(tx) = self.tx.take() {
                std::mem::forget(tx);
            }
        }
    }

    /// Whether bytes wait unread in the pipe (written beside the channel).
    fn pipe_has_bytes(&self) -> bool {
        // A pipe that cannot say: as if it held some (the pipe is always
        // right).
        !matches!(sys::pipe_unread(self.pipe.as_fd()), Ok(0))
    }

    /// A channel failure as the pipe's: a reader gone is `EPIPE` (and
    /// `SIGPIPE` where the stream raises signals), as `write(2)` on the
    /// pipe would have done.
    fn pipe_error(&self, e: io::Error) -> io::Error {
        if e.kind() != io::ErrorKind::BrokenPipe {
            return e;
        }
        if self.signals {
            sys::raise_sigpipe();
        }
        io::Error::from_raw_os_error(libc::EPIPE)
    }

    /// At the first write: takes the channel if the reader connected.
    fn decide(&mut self) {
        if let Some((offer, config)) = self.offer.take() {
            self.tx = offer.take(config).map(Box::new);
        }
    }
}

impl Module for UpgradedWriter {
    fn positional(&self) -> bool {
        false
    }

    fn size(&self) -> io::Result<u64> {
        Ok(0)
    }

    fn read(&mut self, _off: u64, _buf: &mut [u8]) -> io::Result<usize> {
        Err(io::Error::from_raw_os_error(libc::EBADF))
    }

    fn read_uninit(&mut self, _off: u64, _buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        Err(io::Error::from_raw_os_error(libc::EBADF))
    }

    fn write(&mut self, off: Option<u64>, bytes: &[u8]) -> (usize, Option<io::Error>) {
        self.decide();
        self.leave_if_forked();
        if self.tx.is_some() && self.pipe_has_bytes() {
            // Someone wrote the pipe beside the channel (this process's own
            // `write(2)`, or a child's): what this stream writes from now
            // on goes after those bytes, through the pipe. The channel
            // closes in order first (or, if the reader takes nothing for
            // the sender's timeout, is dropped: the reader then takes what
            // it holds and goes on with the pipe), so the reader takes
            // every message before these bytes.
            if let Some(tx) = self.tx.take() {
                let _ = (*tx).close();
            }
        }
        let Some(tx) = self.tx.as_mut() else {
            return self.pipe.write(off, bytes);
        };
        let mut done = 0;
        while done < bytes.len() {
            match io::Write::write(&mut **tx, &bytes[done..]) {
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                    // The reader took nothing for a while: it may be reading
                    // the pipe itself (its own `read(0)`, a child it runs),
                    // which the channel leaves empty. Leave the channel (the
                    // reader gets every whole message, then its end) and go
                    // on through the pipe, as `write(2)` would have.
                    if let Some(tx) = self.tx.take() {
                        (*tx).abort();
                    }
                    let (n, e) = self.pipe.write(off, &bytes[done..]);
                    return (done + n, e);
                }
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                    // The reader left the channel (it exited, or closed its
                    // stream): another process may read the pipe after it
                    // (`{ head -n 1; cat; }`), as after a reader that
                    // left with bytes in its buffer. The rest goes through
                    // the pipe; with no reader at all, the pipe's `EPIPE`
                    // (and SIGPIPE) follow as `write(2)` gives them.
                    if let Some(tx) = self.tx.take() {
                        (*tx).abort();
                    }
                    let (n, e) = self.pipe.write(off, &bytes[done..]);
                    return (done + n, e);
                }
                Err(e) => return (done, Some(self.pipe_error(e))),
            }
        }
        (done, None)
    }

    /// The channel closes in order: the reader gets every byte, then
    /// goes on with the pipe. (An offer never taken just goes.)
    fn finish(&mut self, _pos: u64) -> io::Result<()> {
        self.offer = None;
        self.leave_if_forked();
        match self.tx.take().map(|tx| (*tx).close()) {
            // No room for the BYE in time: the socket closes all the same,
            // and the reader takes every whole message before that end.
            Some(Err(e)) if e.kind() == io::ErrorKind::TimedOut => Ok(()),
            // The reader left before the end: nothing of this stream is
            // unsent (each write went whole, to the channel or the pipe),
            // so closing succeeds as `close(2)` of the pipe would.
            Some(Err(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            Some(r) => r,
            None => Ok(()),
        }
    }

    fn raw_fd(&self) -> Option<i32> {
        self.pipe.raw_fd()
    }

    fn raise_signals(&mut self) {
        self.signals = true;
        self.pipe.raise_signals();
    }

    fn set_pipe_size(&self, bytes: usize) -> io::Result<usize> {
        self.pipe.set_pipe_size(bytes)
    }
}
