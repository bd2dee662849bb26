//! Streams over a pipe between two ferry programs, upgraded to an ipc
//! channel when both ends ask for it (`ipc::upgrade` has the handshake).

use super::backend::{Io, Sequential, UpgradedReader, UpgradedWriter};
use super::engine::Inner;
use super::Stream;
use crate::ipc::{PipeOffer, SenderConfig};
use crate::sys::fileio;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};

/// A writer whose reader takes nothing from the channel for this long
/// leaves the channel for the pipe: the reader may be reading the pipe
/// itself (its own `read(0)`, or a child it runs that reads its standard
/// input), where the channel leaves nothing.
const READER_TAKES_NOTHING: std::time::Duration = std::time::Duration::from_secs(1);

fn named(what: &str, name: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{what} {name}: {e}"))
}

impl Stream {
    /// A stream that writes `fd` (a pipe, typically standard output),
    /// through an ipc channel if `offer` (bound for `fd` when the program
    /// started, [`PipeOffer::bind`]) was taken: if the pipe's reader is a
    /// ferry program reading it with [`Stream::pipe_reader`] and has
    /// connected by the stream's first write (its first buffer flushed),
    /// the bytes go to it through a pool (copied into
    /// the pool, read in place there, no system call per buffer while both
    /// are awake); otherwise — another reader, a reader not there yet, no
    /// offer, `fd` no pipe — the stream writes `fd` as
    /// [`Stream::from_fd_with`] with
    /// [`Backend::Sequential`](crate::stream::Backend::Sequential) does.
    /// [`Stream::on_channel`] tells which. It never waits for a reader
    /// that has not connected. Closing the stream ends the channel in
    /// order; the reader then reads the pipe (whatever another writer puts
    /// there).
    ///
    /// The decision is made once, before any byte is written, so nothing
    /// is lost or reordered whichever way it goes. Bytes written to the
    /// pipe beside the stream (another descriptor on it, a child) keep
    /// their order too: at a write that finds such bytes waiting in the
    /// pipe, the stream closes the channel and writes the pipe from then
    /// on.
    ///
    /// ```no_run
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::Write;
    /// use std::os::fd::AsFd;
    /// // At start-up, before any output:
    /// let offer = ferry::ipc::PipeOffer::bind(std::io::stdout().as_fd());
    /// // ... later, the first output:
    /// let out = std::io::stdout().as_fd().try_clone_to_owned()?;
    /// let mut s = ferry::Stream::pipe_writer(out, "standard output", offer)?;
    /// writeln!(s, "through the pool if the reader is a ferry program")?;
    /// s.close()
    /// # }
    /// ```
    pub fn pipe_writer(fd: OwnedFd, name: &str, offer: Option<PipeOffer>) -> io::Result<Stream> {
        let file = File::from(fd);
        let info = fileio::fd_info(file.as_fd()).map_err(|e| named("opening", name, e))?;
        let config = SenderConfig {
            timeout: Some(READER_TAKES_NOTHING),
            ..SenderConfig::default()
        };
        let pipe = Sequential::new(file, info);
        let io = match offer {
            Some(o) => Io::UpgradedWriter(UpgradedWriter::new(pipe, o, config)),
            None => Io::Sequential(pipe),
        };
        Ok(Stream::from_inner(Inner::new(
            io,
            name.into(),
            false,
            true,
            false,
        )))
    }

    /// A stream that reads `fd` (a pipe, typically standard input), from
    /// its writer's pool if the writer offers one: at the first read,
    /// while it waits for the pipe's first bytes, it connects to the
    /// writer's offer ([`PipeOffer`]); if a ferry program writing the pipe
    /// ([`Stream::pipe_writer`]) hands over its pool before the pipe has
    /// bytes or its end, the stream reads that writer's pool slots in place
    /// until the writer closes (or dies), then the pipe to its end. While
    /// the channel lasts, bytes that come through the pipe (written beside
    /// the writer's stream) are read as soon as every message published
    /// before them was.
    /// Otherwise, or if `fd` is no pipe, it reads `fd` as a sequential
    /// stream does.
    ///
    /// # Safety
    ///
    /// The writer is taken only if it is a process of this user that has
    /// the pipe open as its standard output; the caller vouches that such
    /// a process keeps ferry's ipc protocol (see
    /// [`Receiver::new`](crate::ipc::Receiver::new)): it is a ferry
    /// program. (A process of the same user may change this one's memory
    /// through `ptrace` or `/proc` anyway; it is the opt-in that the two
    /// programs speak ferry that this vouches for.)
    pub unsafe fn pipe_reader(fd: OwnedFd, name: &str) -> io::Result<Stream> {
        let file = File::from(fd);
        let info = fileio::fd_info(file.as_fd()).map_err(|e| named("opening", name, e))?;
        let pipe = Sequential::new(file, info);
        let io = Io::UpgradedReader(UpgradedReader::new(pipe));
        Ok(Stream::from_inner(Inner::new(
            io,
            name.into(),
            true,
            false,
            false,
        )))
    }
}
