//! A transfer from one [`Endpoint`] to another: Roadrunner's `stream(in,
//! out)`. The two channels' parameters pick the paper's case; then
//!
//! * two descriptors on their own parameters (no record size imposed, no
//!   file range) go by the kernel's paths ([`copy`](super::copy):
//!   `copy_file_range`, `splice`, `sendfile`), no byte in user space;
//! * anything else — a memory source, a file range, a record size imposed
//!   on either side — goes through the [overlay](super::overlay): input
//!   blocks read into page-aligned buffers (or taken from memory as they
//!   are), laid over the output's blocks by reference, each output block
//!   one gathered write (`writev`, `sendmsg`).
//!
//! [`TransferStats::case`] says which case the parameters made and
//! [`TransferStats::overlay`] what the overlay did (blocks, bytes copied to
//! make blocks contiguous, padding). On failure the error names the side
//! and, through its stats, the bytes known to have arrived; a file range
//! whose file ends before the range does is an error (`UnexpectedEof`)
//! naming the offset reached, with what came before it delivered.
//!
//! ```
//! use ferry::transfer::endpoint::Endpoint;
//! use ferry::transfer::overlay::{Case, ChannelParams};
//! use ferry::transfer::{between, TransferOptions};
//! use std::num::NonZeroUsize;
//! use std::os::fd::AsFd;
//!
//! // 10 000 bytes from memory into a file as 4 KiB records, the last one
//! // padded with zeros: case 4, each record gathered from the source's
//! // pieces, nothing copied in user space.
//! let out = tempfile::tempfile()?;
//! let src = Endpoint::memory(ferry::Buf::from(vec![7u8; 10_000]));
//! let dst = Endpoint::fd(out.as_fd())?
//!     .impose(ChannelParams::fixed(NonZeroUsize::new(4096).unwrap()));
//! let st = between(&src, &dst, &TransferOptions::new().pad_last(0))?;
//! assert_eq!(st.case, Some(Case::Aggregate));
//! let ov = st.overlay.unwrap();
//! assert_eq!((ov.blocks_out, ov.padding, ov.bytes_copied), (3, 2288, 0));
//! assert_eq!(out.metadata()?.len(), 12288);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::endpoint::{Direction, Endpoint};
use super::overlay::{BlockType, Case, LastBlock, Overlay};
use super::{copy, Method, Side, TransferError, TransferOptions, TransferStats};
use crate::sys::vectored::VectoredWriter;
use crate::{Aggregate, BufMut};
use std::io::{self, IoSlice};
use std::os::fd::BorrowedFd;

/// The largest input block read at once, whatever the source's B says
/// (a caller may impose any size; memory is not spent on it all at once).
const MAX_READ_BLOCK: usize = 16 << 20;

/// Moves everything from `src` to `dst`. See the [module docs](self).
pub fn between(
    src: &Endpoint<'_>,
    dst: &Endpoint<'_>,
    opts: &TransferOptions<'_>,
) -> Result<TransferStats, TransferError> {
    let fail = |side, e, st| TransferError::new(side, e, st);
    let none = TransferStats::default();
    let pi = src
        .params(Direction::Source)
        .map_err(|e| fail(Side::Read, e, none))?;
    let po = dst
        .params(Direction::Sink)
        .map_err(|e| fail(Side::Write, e, none))?;
    let case = Case::of(pi, po);
    let Some(out) = dst.as_fd() else {
        let e = io::Error::new(
            io::ErrorKind::InvalidInput,
            "a memory endpoint is a source only",
        );
        return Err(fail(Side::Write, e, none));
    };
    if let Some(input) = src.as_fd() {
        if src.imposed().is_none() && dst.imposed().is_none() && src.range().is_none() {
            return match copy(input, out, opts) {
                Ok(mut st) => {
                    st.case = Some(case);
                    Ok(st)
                }
                Err(e) => Err(e.with_case(case)),
            };
        }
    }
    let mut st = TransferStats::default();
    st.case = Some(case);
    let last = opts.pad.map_or(LastBlock::Short, LastBlock::Pad);
    let mut ov = Overlay::new(pi, po, last).map_err(|e| fail(Side::Write, e, st))?;
    let mut sink = match Sink::new(out, opts) {
        Ok(s) => s,
        Err(e) => return Err(fail(Side::Write, e, st)),
    };
    st.calls.other += 1;
    let r = feed(src, pi.block, pi.max.get(), &mut ov, &mut sink, &mut st)
        .and_then(|()| ov.finish(|a| sink.emit(a)).map_err(|e| (Side::Write, e)));
    st.calls.write += sink.writes;
    // What arrived, blocks cut short by an error included.
    st.moved(Method::ReadWrite, sink.written as usize);
    st.overlay = Some(ov.stats());
    match r {
        Ok(()) => {
            st.finish(Method::ReadWrite);
            Ok(st)
        }
        Err((side, e)) => Err(fail(side, e, st)),
    }
}

/// Reads the source's blocks and pushes them through the overlay.
fn feed(
    src: &Endpoint<'_>,
    block: BlockType,
    b_in: usize,
    ov: &mut Overlay,
    sink: &mut Sink<'_, '_>,
    st: &mut TransferStats,
) -> Result<(), (Side, io::Error)> {
    let push = |ov: &mut Overlay, sink: &mut Sink<'_, '_>, b| {
        ov.push(b, |a| sink.emit(a)).map_err(|e| (Side::Write, e))
    };
    if let Some(data) = src.memory_source() {
        for b in data.bufs() {
            push(ov, sink, b.clone())?;
        }
        return Ok(());
    }
    let Some(fd) = src.as_fd() else {
        return Ok(());
    };
    let range = src.range();
    let mut off = range.map(|r| r.offset);
    let mut left = range.and_then(|r| r.len);
    let page = crate::sys::page_size();
    let size = b_in.min(MAX_READ_BLOCK);
    // The last block's buffer, back from the overlay once nothing refers
    // to it (a variable output lets every slice go at once): reused rather
    // than mapped and faulted in anew for every block.
    let mut spare: Option<BufMut> = None;
    loop {
        let want = left.map_or(size, |l| size.min(l.min(usize::MAX as u64) as usize));
        if want == 0 {
            return Ok(());
        }
        let mut m = match spare.take() {
            Some(m) if m.capacity() >= want => m,
            _ => BufMut::try_with_capacity_aligned(want, page).map_err(|e| (Side::Read, e))?,
        };
        // A fixed source delivers whole blocks: fill this one (a variable
        // one gives what one read brings).
        loop {
            let have = m.len();
            let room = &mut m.spare_capacity_mut()[..want - have];
            let r = match off.map(|o| o.checked_add(have as u64)) {
                Some(None) => Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the file range's offset passes the largest file offset",
                )),
                Some(Some(o)) => crate::sys::transfer::pread(fd, room, o),
                None => crate::sys::transfer::read(fd, room),
            };
            st.calls.read += 1;
            match r {
                Ok(0) => break,
                Ok(n) => m.commit(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    crate::sys::channel::wait_ready(fd, false).map_err(|e| (Side::Read, e))?;
                }
                Err(e) => return Err((Side::Read, e)),
            }
            if block == BlockType::Variable || m.len() == want {
                break;
            }
        }
        let n = m.len();
        if n == 0 {
            if let (Some(l), Some(o)) = (left, off) {
                return Err((
                    Side::Read,
                    io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("the file ends at offset {o}, {l} bytes before the range does"),
                    ),
                ));
            }
            return Ok(());
        }
        if let Some(o) = off.as_mut() {
            *o = o.saturating_add(n as u64);
        }
        if let Some(l) = left.as_mut() {
            *l -= n as u64;
        }
        let block = m.freeze();
        push(ov, sink, block.clone())?;
        if let Ok(mut back) = block.try_into_mut() {
            back.clear();
            spare = Some(back);
        }
    }
}

/// The output descriptor: each block written whole, in gathered writes.
struct Sink<'fd, 'o> {
    fd: BorrowedFd<'fd>,
    w: VectoredWriter<'fd>,
    opts: &'o TransferOptions<'o>,
    written: u64,
    writes: u64,
}

impl<'fd, 'o> Sink<'fd, 'o> {
    fn new(fd: BorrowedFd<'fd>, opts: &'o TransferOptions<'o>) -> io::Result<Self> {
        Ok(Sink {
            fd,
            w: VectoredWriter::new(fd)?,
            opts,
            written: 0,
            writes: 0,
        })
    }

    /// Writes all of `a`; a descriptor that would block is waited for.
    fn emit(&mut self, mut a: Aggregate) -> io::Result<()> {
        while !a.is_empty() {
            let iov: Vec<IoSlice<'_>> = a
                .chunks()
                .take(crate::sys::IOV_MAX)
                .map(IoSlice::new)
                .collect();
            let r = self.w.write(&iov);
            self.writes += 1;
            match r {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    a.advance(n);
                    self.written += n as u64;
                    if let Some(p) = self.opts.progress {
                        p(n as u64);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    crate::sys::channel::wait_ready(self.fd, true)?;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}
