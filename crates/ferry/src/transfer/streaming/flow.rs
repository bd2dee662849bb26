//! The moving part of [`between`](super::between): input blocks read into
//! cache buffers and laid over the output by the overlay, and the switch
//! among [`Path`]s when the output stalls (Roadrunner's §5.4, dynamic
//! conditions).
//!
//! ```text
//!          output took all                 output would block (EAGAIN)
//!   Kernel ─────────────┐                  or took part of a block
//!   (sendfile)          │      ┌──────────────────────────────────────┐
//!   Through ────────────┴──────┤                                      ▼
//!   (read, overlay, write      │                                  Buffered
//!    each block by reference)  └────────── queue empty ◄──────── read ahead into
//!                                                                 cache buffers
//!                                                                 (within the share),
//!                                                                 write the queue
//!                                                                 gathered when the
//!                                                                 output is writable
//! ```
//!
//! Bytes count as moved when a write took them, never when they were
//! read or queued; a charge on the cache comes off when every byte of its
//! buffer has been written.

use super::endpoint::{Endpoint, EndpointKind};
use super::source::{Filled, Next, Source};
use crate::sys::channel;
use crate::sys::vectored::VectoredWriter;
use crate::transfer::cache::{BufferCache, CacheUser, Charge, Taken};
use crate::transfer::kernel::Fail;
use crate::transfer::overlay::{BlockType, ChannelParams, Overlay, OverlayStats};
use crate::transfer::{kernel, Method, Path, Side, TransferOptions, TransferStats};
use crate::{Aggregate, Buf};
use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::os::fd::BorrowedFd;
use std::time::Duration;

/// The largest input block read at once, whatever the source's B says
/// (a caller may impose any size; memory is not spent on it all at once).
const MAX_READ_BLOCK: usize = 16 << 20;

/// The most slices one gathered write of the queue is built from: more
/// than an output takes at once (a pipe: 16 pages), few enough that
/// building the list costs nothing against the write.
const DRAIN_IOV: usize = 64;

/// The most one `sendfile` is asked for.
const KERNEL_CHUNK: usize = 1 << 30;

/// What one attempt to read a block gave.
enum Got {
    Block(Buf, Option<Charge>),
    /// The input has nothing now (non-blocking).
    WouldBlock,
    /// The cache refused a buffer (the transfer holds its share).
    Refused,
    Eof,
}

/// The output side: the descriptor, the queue of blocks it has not taken.
struct Out<'a, 'o> {
    fd: BorrowedFd<'a>,
    w: VectoredWriter<'a>,
    /// Several queued blocks may go in one write (a byte stream).
    batch: bool,
    switching: bool,
    opts: &'o TransferOptions<'o>,
    q: VecDeque<Aggregate>,
    /// Bytes written (padding included).
    written: u64,
    /// Charges of input blocks, by the stream offset where each ends.
    charges: VecDeque<(u64, Charge)>,
    /// The output may take bytes (poll said so, or nothing said otherwise).
    ready: bool,
    /// Buffering: every block goes to the queue, written by `drain`.
    queueing: bool,
}

impl Out<'_, '_> {
    fn took(&mut self, n: usize, st: &mut TransferStats) {
        self.written += n as u64;
        self.opts.moved(st, Method::ReadWrite, n);
        while self.charges.front().is_some_and(|c| c.0 <= self.written) {
            self.charges.pop_front();
        }
    }

    /// One output block from the overlay. With nothing queued it is written
    /// now; what the output will not take now (or anything, once the queue
    /// has blocks) is queued, and the caller switches to buffering.
    /// Without switching, a stalled output is waited for here.
    fn emit(&mut self, mut a: Aggregate, st: &mut TransferStats) -> io::Result<()> {
        if self.queueing || !self.q.is_empty() {
            self.q.push_back(a);
            return Ok(());
        }
        while !a.is_empty() {
            let r = {
                let iov: Vec<IoSlice<'_>> = a
                    .chunks()
                    .take(crate::sys::IOV_MAX)
                    .map(IoSlice::new)
                    .collect();
                self.w.write(&iov)
            };
            st.calls.write += 1;
            match r {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    let whole = n == a.len();
                    a.advance(n);
                    self.took(n, st);
                    if !whole && self.switching {
                        self.ready = false;
                        self.q.push_back(a);
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.switching {
                        self.ready = false;
                        self.q.push_back(a);
                        return Ok(());
                    }
                    st.calls.other += 1;
                    channel::wait_ready(self.fd, true)?;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Writes queued blocks until the queue is empty or the output would
    /// block.
    fn drain(&mut self, st: &mut TransferStats) -> io::Result<()> {
        while !self.q.is_empty() {
            let r = {
                let mut iov: Vec<IoSlice<'_>> = Vec::new();
                let take = if self.batch { self.q.len() } else { 1 };
                for a in self.q.iter().take(take) {
                    let room = DRAIN_IOV - iov.len();
                    iov.extend(a.chunks().take(room).map(IoSlice::new));
                    if iov.len() == DRAIN_IOV {
                        break;
                    }
                }
                self.w.write(&iov)
            };
            st.calls.write += 1;
            match r {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(mut n) => {
                    self.took(n, st);
                    while n > 0 {
                        let Some(front) = self.q.front_mut() else {
                            break;
                        };
                        let k = n.min(front.len());
                        front.advance(k);
                        n -= k;
                        if front.is_empty() {
                            self.q.pop_front();
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.ready = false;
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// One transfer through the overlay (and, where it applies, the kernel's
/// `sendfile`), switching to buffering while the output stalls.
pub(super) struct Flow<'a, 'o> {
    src: Source<'a>,
    /// The input's block type and maximum block size.
    block: BlockType,
    b_in: usize,
    out: Out<'a, 'o>,
    ov: Overlay,
    user: CacheUser,
    /// A buffer being filled (a fixed input block, or one a non-blocking
    /// input had nothing for).
    filling: Option<Taken>,
    /// Input bytes pushed into the overlay (or moved by the kernel).
    pushed: u64,
    path: Path,
    /// The path to go back to when the queue empties.
    home: Path,
    eof: bool,
    finished: bool,
    /// Reading ahead stopped at the share: nothing more is read until
    /// the queue is empty.
    at_share: bool,
}

impl<'a, 'o> Flow<'a, 'o> {
    /// A flow from `src` to `out`; `kernel`: the input is a whole regular
    /// file on its own parameters, so `sendfile` may move it.
    pub(super) fn new(
        src: &Endpoint<'a>,
        out: BorrowedFd<'a>,
        dst_kind: EndpointKind,
        ov: Overlay,
        input: ChannelParams,
        kernel: bool,
        opts: &'o TransferOptions<'o>,
    ) -> io::Result<Flow<'a, 'o>> {
        let s = Source::of(src, input.block);
        let stream = matches!(
            dst_kind,
            EndpointKind::Pipe
                | EndpointKind::TcpSocket
                | EndpointKind::UnixStream
                | EndpointKind::File
        );
        // A pipe in packet mode (O_DIRECT) keeps each write a message.
        let batch = stream && !channel::is_direct(out)?;
        let cache = opts.cache.unwrap_or_else(|| BufferCache::global());
        let path = if kernel { Path::Kernel } else { Path::Through };
        Ok(Flow {
            src: s,
            block: input.block,
            b_in: input.max.get(),
            out: Out {
                fd: out,
                w: VectoredWriter::new(out)?,
                batch,
                switching: opts.switching,
                opts,
                q: VecDeque::new(),
                written: 0,
                charges: VecDeque::new(),
                ready: true,
                queueing: false,
            },
            ov,
            user: cache.join(),
            filling: None,
            pushed: 0,
            path,
            home: path,
            eof: false,
            finished: false,
            at_share: false,
        })
    }

    /// Writes into `range` of the output file (a sink
    /// [`file_range`](super::endpoint::Endpoint::file_range)): at its
    /// offset, at most its length, the descriptor's own offset unused.
    pub(super) fn into_range(mut self, range: Option<super::endpoint::FileRange>) -> Self {
        if let Some(r) = range {
            let w = std::mem::replace(
                &mut self.out.w,
                VectoredWriter::of_kind(self.out.fd, crate::sys::vectored::FdKind::Other),
            );
            self.out.w = w.positioned(r.offset, r.len);
        }
        self
    }

    /// What the overlay did.
    pub(super) fn overlay_stats(&self) -> OverlayStats {
        self.ov.stats()
    }

    /// Moves everything; the stats hear every write.
    pub(super) fn run(&mut self, st: &mut TransferStats) -> Result<(), Fail> {
        let r = self.run_inner(st);
        st.peak_buffer_bytes = st.peak_buffer_bytes.max(self.user.peak() as u64);
        r
    }

    fn run_inner(&mut self, st: &mut TransferStats) -> Result<(), Fail> {
        while !(self.finished && self.out.q.is_empty()) {
            match self.path {
                Path::Kernel => self.kernel_step(st)?,
                Path::Through => self.through_step(st)?,
                Path::Buffered => self.buffered_step(st)?,
            }
        }
        let m = if self.home == Path::Kernel && self.path == Path::Kernel {
            Method::Sendfile
        } else {
            Method::ReadWrite
        };
        st.finish(m);
        Ok(())
    }

    fn switch(&mut self, to: Path, st: &mut TransferStats) {
        if to != self.path {
            st.switches.record(self.path, to);
            self.path = to;
            self.out.queueing = to == Path::Buffered;
        }
    }

    fn kernel_step(&mut self, st: &mut TransferStats) -> Result<(), Fail> {
        let Some(fd) = self.src.fd() else {
            self.path = Path::Through;
            self.home = Path::Through;
            return Ok(());
        };
        st.calls.sendfile += 1;
        match crate::sys::transfer::sendfile(self.out.fd, fd, KERNEL_CHUNK) {
            Ok(0) => {
                self.eof = true;
                self.finish_overlay(st)?;
            }
            Ok(n) => {
                self.out.opts.moved(st, Method::Sendfile, n);
                self.out.written += n as u64;
                self.pushed += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if self.out.switching {
                    self.out.ready = false;
                    self.switch(Path::Buffered, st);
                } else {
                    st.calls.other += 1;
                    channel::wait_ready(self.out.fd, true).map_err(|e| (Side::Write, e))?;
                }
            }
            Err(e) if self.pushed == 0 && kernel::unsupported(&e) => {
                // Not a path for these descriptors: the overlay's instead.
                self.path = Path::Through;
                self.home = Path::Through;
            }
            Err(e) => {
                let side = if matches!(e.raw_os_error(), Some(libc::EIO | libc::EISDIR)) {
                    Side::Read
                } else {
                    Side::Write
                };
                return Err((side, e));
            }
        }
        Ok(())
    }

    fn through_step(&mut self, st: &mut TransferStats) -> Result<(), Fail> {
        if self.eof {
            self.finish_overlay(st)?;
        } else {
            match self.next_block(true, st)? {
                Got::Block(b, charge) => self.push(b, charge, st)?,
                Got::WouldBlock => {
                    if let Some(fd) = self.src.fd() {
                        st.calls.other += 1;
                        channel::wait_ready(fd, false).map_err(|e| (Side::Read, e))?;
                    }
                }
                Got::Refused => {}
                Got::Eof => self.eof = true,
            }
        }
        if !self.out.q.is_empty() {
            self.switch(Path::Buffered, st);
        }
        Ok(())
    }

    /// Buffering: the queue goes out whenever the output takes bytes;
    /// while it takes none, the input is read ahead into cache buffers
    /// until the transfer holds its share. From there nothing more is read
    /// until the queue is empty (so a reader slower than the input does
    /// not keep the transfer buffering for good); then back home.
    fn buffered_step(&mut self, st: &mut TransferStats) -> Result<(), Fail> {
        if self.out.ready && !self.out.q.is_empty() {
            self.out.drain(st).map_err(|e| (Side::Write, e))?;
        }
        // The queue is empty and the output takes bytes: back home. (Empty
        // but the output still full, as after a kernel path's EAGAIN: read
        // ahead.)
        if self.out.q.is_empty() && (self.out.ready || self.eof) {
            if self.eof && !self.finished {
                self.finish_overlay(st)?;
            } else if !self.finished {
                self.at_share = false;
                let home = self.home;
                self.switch(home, st);
            }
            return Ok(());
        }
        let mut input_waits = false;
        if !self.out.ready && !self.eof && !self.at_share {
            match self.next_block(false, st)? {
                Got::Block(b, charge) => {
                    self.push(b, charge, st)?;
                    // Look (without waiting) whether the output takes
                    // bytes again.
                    st.calls.other += 1;
                    let (_, w) = channel::poll_two(None, Some(self.out.fd), 0)
                        .map_err(|e| (Side::Write, e))?;
                    self.out.ready = w;
                    return Ok(());
                }
                Got::Refused => {
                    self.at_share = true;
                    st.share_waits += 1;
                }
                Got::WouldBlock => input_waits = true,
                Got::Eof => {
                    self.eof = true;
                    return Ok(());
                }
            }
        }
        if self.out.ready {
            return Ok(());
        }
        let input = self.src.fd().filter(|_| input_waits);
        st.calls.other += 1;
        let (_, w) =
            channel::poll_two(input, Some(self.out.fd), -1).map_err(|e| (Side::Write, e))?;
        self.out.ready = w;
        Ok(())
    }

    /// Pushes one input block through the overlay (its output blocks
    /// written, or queued behind others).
    fn push(&mut self, b: Buf, charge: Option<Charge>, st: &mut TransferStats) -> Result<(), Fail> {
        self.pushed += b.len() as u64;
        if let Some(c) = charge {
            self.out.charges.push_back((self.pushed, c));
        }
        let out = &mut self.out;
        self.ov
            .push(b, |a| out.emit(a, st))
            .map_err(|e| (Side::Write, e))
    }

    fn finish_overlay(&mut self, st: &mut TransferStats) -> Result<(), Fail> {
        self.finished = true;
        let out = &mut self.out;
        self.ov
            .finish(|a| out.emit(a, st))
            .map_err(|e| (Side::Write, e))
    }

    /// The size of the next buffer to read into.
    fn read_size(&self, block: BlockType, b_in: usize) -> usize {
        let size = b_in.min(MAX_READ_BLOCK);
        if block == BlockType::Fixed {
            return size;
        }
        // A variable input may come in smaller pieces: no larger than the
        // pool's slots, and small enough that a share holds several.
        let page = crate::sys::page_size();
        let largest = self.user_pool_largest();
        size.min(largest).min((self.user.share() / 4).max(page))
    }

    fn user_pool_largest(&self) -> usize {
        self.out
            .opts
            .cache
            .unwrap_or_else(|| BufferCache::global())
            .pool()
            .classes()
            .last()
            .copied()
            .unwrap_or(crate::sys::page_size())
    }

    /// The next input block. `needed`: nothing is queued, so a buffer is
    /// waited for if the cache has none now (only other transfers' buffers
    /// can be what stops it); otherwise a refusal is returned.
    fn next_block(&mut self, needed: bool, st: &mut TransferStats) -> Result<Got, Fail> {
        let want = self.src.want(self.read_size(self.block, self.b_in));
        if want == 0 {
            return Ok(Got::Eof);
        }
        match self.src.next(want).map_err(|e| (Side::Read, e))? {
            Next::Block(b) => return Ok(Got::Block(b, None)),
            Next::Eof => return Ok(Got::Eof),
            Next::Read => {}
        }
        let mut t = match self.filling.take() {
            Some(t) => t,
            None => match self.user.try_take(want).map_err(|e| (Side::Read, e))? {
                Some(t) => t,
                None if needed => loop {
                    // More than the whole budget to make one output block
                    // (a fixed block larger than the cache): from the heap.
                    if self.user.held().saturating_add(want) > self.user.budget() {
                        break self.user.take_outside(want).map_err(|e| (Side::Read, e))?;
                    }
                    let got = self
                        .user
                        .take_wait(want, Duration::from_secs(1))
                        .map_err(|e| (Side::Read, e))?;
                    if let Some(t) = got {
                        break t;
                    }
                },
                None => return Ok(Got::Refused),
            },
        };
        let filled = self
            .src
            .fill(&mut t.buf, want, st)
            .map_err(|e| (Side::Read, e))?;
        if filled == Filled::WouldBlock {
            self.filling = Some(t);
            return Ok(Got::WouldBlock);
        }
        let n = t.buf.len();
        if !self.src.advance(n).map_err(|e| (Side::Read, e))? {
            return Ok(Got::Eof);
        }
        Ok(Got::Block(t.buf.freeze(), Some(t.charge)))
    }
}
