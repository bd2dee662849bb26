//! The modules of a pipe upgraded to an ipc channel between two ferry
//! programs (`ipc::upgrade`): the reader takes the writer's pool slots as
//! its read buffers (no copy out of the pool), the writer copies its
//! buffers into the pool (as `write(2)` copies into a pipe). Both keep the
//! pipe itself: the reader reads it once the channel ends (another writer
//! may follow), and both name it as their descriptor.

use super::{Module, Sequential, Window};
use crate::ipc::{take_pipe, PipeOffer, Receiver, Sender, SenderConfig};
use crate::Aggregate;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd};

enum ReadState {
    /// Not yet decided: waiting for the first read.
    Undecided,
    /// The channel, and the unread rest of its current message.
    Channel(Box<Receiver>, Aggregate),
    /// The pipe, as a sequential module reads it.
    Pipe,
}

/// The reading end: the channel if the writer upgraded, then the pipe.
pub(crate) struct UpgradedReader {
    pipe: Sequential,
    state: ReadState,
}

impl UpgradedReader {
    pub(crate) fn new(pipe: Sequential) -> UpgradedReader {
        UpgradedReader {
            pipe,
            state: ReadState::Undecided,
        }
    }

    fn fd(&self) -> BorrowedFd<'_> {
        self.pipe.as_fd()
    }

    /// Whether the bytes come through the channel now.
    pub(crate) fn on_channel(&self) -> bool {
        matches!(self.state, ReadState::Channel(..))
    }

    /// Decides at the first read; then the next piece of the channel
    /// (`None` once it ended, or on the pipe).
    fn next_piece(&mut self) -> io::Result<Option<crate::Buf>> {
        if let ReadState::Undecided = self.state {
            self.state = ReadState::Pipe;
            // SAFETY: `Stream::pipe_reader` was made by a caller that vouched
            // for a ferry program of its own user writing its pipe;
            // `take_pipe` takes only such a peer.
            if let Some(rx) = unsafe { take_pipe(self.fd())? } {
                self.state = ReadState::Channel(Box::new(rx), Aggregate::new());
            }
        }
        let ReadState::Channel(rx, current) = &mut self.state else {
            return Ok(None);
        };
        loop {
            let next = current.bufs().next().cloned();
            if let Some(b) = next {
                current.advance(b.len());
                if !b.is_empty() {
                    return Ok(Some(b));
                }
                continue;
            }
            match rx.recv() {
                Ok(Some(m)) => *current = m,
                // The writer closed, or went away: its bytes are all here.
                // What follows comes through the pipe.
                Ok(None) => break,
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(e),
            }
        }
        self.state = ReadState::Pipe;
        Ok(None)
    }

    /// Puts the unread part of `b` back in front of the current message.
    fn unread(&mut self, b: crate::Buf) {
        if let ReadState::Channel(_, current) = &mut self.state {
            let mut m = Aggregate::from(b);
            m.append(std::mem::take(current));
            *current = m;
        }
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
        match self.next_piece()? {
            Some(b) => {
                let n = b.len().min(buf.len());
                buf[..n].copy_from_slice(&b[..n]);
                if n < b.len() {
                    self.unread(b.slice(n..));
                }
                Ok(n)
            }
            None => self.pipe.read(off, buf),
        }
    }

    fn read_uninit(&mut self, off: u64, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        match self.next_piece()? {
            Some(b) => {
                let n = b.len().min(buf.len());
                for (d, s) in buf[..n].iter_mut().zip(&b[..n]) {
                    d.write(*s);
                }
                if n < b.len() {
                    self.unread(b.slice(n..));
                }
                Ok(n)
            }
            None => self.pipe.read_uninit(off, buf),
        }
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
        let b = match self.next_piece() {
            Ok(Some(b)) => b,
            Ok(None) => return None,
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
        let Some(tx) = self.tx.as_mut() else {
            return self.pipe.write(off, bytes);
        };
        let mut done = 0;
        while done < bytes.len() {
            match io::Write::write(&mut **tx, &bytes[done..]) {
                Ok(n) => done += n,
                Err(e) => {
                    let e = if e.kind() == io::ErrorKind::BrokenPipe {
                        // What `write(2)` on the pipe would have done.
                        if self.signals {
                            crate::sys::ipc::raise_sigpipe();
                        }
                        io::Error::from_raw_os_error(libc::EPIPE)
                    } else {
                        e
                    };
                    return (done, Some(e));
                }
            }
        }
        (done, None)
    }

    /// The channel closes in order: the reader gets every byte, then
    /// goes on with the pipe. (An offer never taken just goes.)
    fn finish(&mut self, _pos: u64) -> io::Result<()> {
        self.offer = None;
        match self.tx.take() {
            Some(tx) => (*tx).close(),
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
