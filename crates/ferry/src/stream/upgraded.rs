//! Streams over a pipe between two ferry programs, upgraded to an ipc
//! channel when both ends ask for it (`ipc::upgrade` has the handshake).

use super::backend::{Io, Sequential, UpgradedReader, UpgradedWriter};
use super::engine::Inner;
use super::Stream;
use crate::ipc::{offer, PipeListener, SenderConfig};
use crate::sys::fileio;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

fn named(what: &str, name: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{what} {name}: {e}"))
}

impl Stream {
    /// A stream that writes `fd` (a pipe, typically standard output): if
    /// the pipe's reader is a ferry program that listens for its writer
    /// ([`Stream::pipe_reader`]) and takes the channel within `wait`, the
    /// bytes go to it through an ipc pool (copied into the pool, read in
    /// place there, no system call per buffer while both are awake);
    /// otherwise — another reader, no answer in time, `fd` no pipe — the
    /// stream writes `fd` as [`Stream::from_fd_with`] with
    /// [`Backend::Sequential`](crate::stream::Backend::Sequential) does.
    /// [`Stream::on_channel`] tells which. Closing the stream ends the
    /// channel in order; the reader then reads the pipe (whatever another
    /// writer puts there).
    ///
    /// The decision is made here, once, before any byte is written, so
    /// nothing is lost or reordered whichever way it goes. A writer
    /// whose reader does not answer waits `wait` first.
    ///
    /// ```no_run
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::Write;
    /// use std::os::fd::AsFd;
    /// let out = std::io::stdout().as_fd().try_clone_to_owned()?;
    /// let mut s = ferry::Stream::pipe_writer(out, "standard output", std::time::Duration::from_millis(100))?;
    /// writeln!(s, "through the pool if the reader is a ferry program")?;
    /// s.close()
    /// # }
    /// ```
    pub fn pipe_writer(fd: OwnedFd, name: &str, wait: Duration) -> io::Result<Stream> {
        let file = File::from(fd);
        let info = fileio::fd_info(file.as_fd()).map_err(|e| named("opening", name, e))?;
        let config = SenderConfig {
            timeout: None,
            ..SenderConfig::default()
        };
        let tx = offer(file.as_fd(), wait, config).map_err(|e| named("opening", name, e))?;
        let pipe = Sequential::new(file, info);
        let io = match tx {
            Some(tx) => Io::UpgradedWriter(UpgradedWriter::new(pipe, tx)),
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

    /// A stream that reads `fd` (a pipe, typically standard input) and
    /// listens for its writer: if a ferry program writing the pipe
    /// ([`Stream::pipe_writer`]) asks before the pipe has bytes or its
    /// end, the stream reads that writer's pool slots in place until the
    /// writer closes (or dies), then the pipe to its end. Otherwise, or if
    /// `fd` is no pipe or another reader listens for it already, it reads
    /// `fd` as a sequential stream does. The first read waits for the one
    /// or the other.
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
        let listener = PipeListener::bind(file.as_fd());
        let pipe = Sequential::new(file, info);
        let io = match listener {
            Some(l) => Io::UpgradedReader(UpgradedReader::new(pipe, l)),
            None => Io::Sequential(pipe),
        };
        Ok(Stream::from_inner(Inner::new(
            io,
            name.into(),
            true,
            false,
            false,
        )))
    }
}
