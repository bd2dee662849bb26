//! Where a transfer's input blocks come from, for every runner of
//! [`between`](super::between): a memory source's pieces (as they are), a
//! descriptor or a range of a regular file (read into a buffer the runner
//! gives: the global cache's, or its own), or a ferry [`Stream`] (its
//! regions, taken by reference: a mapped file's pages, or the stream's
//! read buffers), or the receiving end of an ipc channel (its buffers, by
//! reference: the sender's pool pages).

use super::endpoint::Endpoint;
use crate::transfer::overlay::BlockType;
use crate::transfer::TransferStats;
use crate::{Buf, BufMut, Stream};
use std::io;
use std::os::fd::BorrowedFd;

/// An input, as the runners read it.
pub(super) enum Source<'a> {
    Memory {
        pieces: Vec<Buf>,
        next: usize,
    },
    Fd {
        fd: BorrowedFd<'a>,
        /// A file range's next offset (`pread`); `None`: the descriptor's.
        off: Option<u64>,
        /// A file range's bytes still to come; `None`: to the end.
        left: Option<u64>,
        block: BlockType,
    },
    Stream {
        s: &'a Stream,
    },
    /// The receiving end of an ipc channel: its buffers, by reference.
    Ipc {
        rx: &'a std::sync::Mutex<crate::ipc::Receiver>,
    },
}

/// What the source has next.
pub(super) enum Next {
    /// A block, by reference (memory, a stream's region).
    Block(Buf),
    /// A descriptor: read it into a buffer with [`Source::fill`].
    Read,
    Eof,
}

/// What one [`Source::fill`] did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Filled {
    /// The buffer holds a block (or nothing, at the end of the input).
    Done,
    /// A non-blocking descriptor has nothing now; the buffer keeps what it
    /// has, to be filled on.
    WouldBlock,
}

impl<'a> Source<'a> {
    /// The input of `src` (a memory sink as source has no bytes: the
    /// caller refuses it before).
    pub(super) fn of(src: &Endpoint<'a>, block: BlockType) -> Source<'a> {
        if let Some(data) = src.memory_source() {
            return Source::Memory {
                pieces: data.bufs().cloned().collect(),
                next: 0,
            };
        }
        if let Some(s) = src.as_stream() {
            return Source::Stream { s };
        }
        if let Some(rx) = src.ipc_source() {
            return Source::Ipc { rx };
        }
        match src.as_fd() {
            Some(fd) => Source::Fd {
                fd,
                off: src.range().map(|r| r.offset),
                left: src.range().and_then(|r| r.len),
                block,
            },
            None => Source::Memory {
                pieces: Vec::new(),
                next: 0,
            },
        }
    }

    /// The descriptor, for a descriptor source.
    pub(super) fn fd(&self) -> Option<BorrowedFd<'a>> {
        match self {
            Source::Fd { fd, .. } => Some(*fd),
            _ => None,
        }
    }

    /// `size`, cut to what a file range has left.
    pub(super) fn want(&self, size: usize) -> usize {
        match self {
            Source::Fd { left: Some(l), .. } => size.min((*l).min(usize::MAX as u64) as usize),
            _ => size,
        }
    }

    /// The next block of at most `want` bytes (`want` > 0) where the
    /// source hands blocks out itself; [`Next::Read`] for a descriptor.
    /// A stream's region is a whole block of `want` bytes unless the
    /// stream ends first (`salloc`'s rule).
    pub(super) fn next(&mut self, want: usize) -> io::Result<Next> {
        match self {
            Source::Memory { pieces, next } => Ok(match pieces.get(*next) {
                Some(b) => {
                    *next += 1;
                    Next::Block(b.clone())
                }
                None => Next::Eof,
            }),
            Source::Stream { s } => {
                let r = s.salloc(want)?;
                if r.is_empty() {
                    r.free()?;
                    return Ok(Next::Eof);
                }
                Ok(Next::Block(r.into_buf()))
            }
            Source::Ipc { rx } => {
                let b = rx.lock().unwrap_or_else(|p| p.into_inner()).read_buf()?;
                Ok(if b.is_empty() {
                    Next::Eof
                } else {
                    Next::Block(b)
                })
            }
            Source::Fd { left: Some(0), .. } => Ok(Next::Eof),
            Source::Fd { .. } => Ok(Next::Read),
        }
    }

    /// Reads a descriptor's next block into `buf` until it holds `want`
    /// bytes (a fixed input: whole blocks) or one read brought something
    /// (a variable input), or the input ends. The offset moves by what was
    /// read ([`advance`](Self::advance) is the caller's, once the block is
    /// whole).
    pub(super) fn fill(
        &mut self,
        buf: &mut BufMut,
        want: usize,
        st: &mut TransferStats,
    ) -> io::Result<Filled> {
        let Source::Fd { block, .. } = *self else {
            return Ok(Filled::Done);
        };
        let want = want.min(buf.capacity());
        loop {
            let have = buf.len();
            if have >= want {
                return Ok(Filled::Done);
            }
            let room = &mut buf.spare_capacity_mut()[..want - have];
            st.calls.read += 1;
            match self.read_at(room, have) {
                Ok(0) => return Ok(Filled::Done),
                Ok(n) => buf.commit(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Filled::WouldBlock),
                Err(e) => return Err(e),
            }
            if block == BlockType::Variable {
                return Ok(Filled::Done);
            }
        }
    }

    /// One `read` of a descriptor into `room` (`pread` for a range, at
    /// `have` bytes past its next offset); `EINTR` retried. 0 for any
    /// other source.
    pub(super) fn read_at(&mut self, room: &mut [u8], have: usize) -> io::Result<usize> {
        let Source::Fd { fd, off, .. } = self else {
            return Ok(0);
        };
        match off.map(|o| o.checked_add(have as u64)) {
            Some(None) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the file range's offset passes the largest file offset",
            )),
            Some(Some(o)) => crate::sys::transfer::pread(*fd, room, o),
            None => crate::sys::transfer::read(*fd, room),
        }
    }

    /// A descriptor's block of `n` bytes was read: moves a range on. `n`
    /// 0 is the end of the input — an error (`UnexpectedEof`, naming the
    /// offset) if a file range wanted more. Returns false at the end.
    pub(super) fn advance(&mut self, n: usize) -> io::Result<bool> {
        let Source::Fd { off, left, .. } = self else {
            return Ok(n > 0);
        };
        if n == 0 {
            if let (Some(l), Some(o)) = (*left, *off) {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the file ends at offset {o}, {l} bytes before the range does"),
                ));
            }
            return Ok(false);
        }
        if let Some(o) = off.as_mut() {
            *o = o.saturating_add(n as u64);
        }
        if let Some(l) = left.as_mut() {
            *l = l.saturating_sub(n as u64);
        }
        Ok(true)
    }
}
