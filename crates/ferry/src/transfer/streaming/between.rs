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
//! Input blocks are read into buffers of the global buffer cache
//! ([`cache`](super::cache), or the one
//! [`TransferOptions::cache`] names), each transfer held to its share.
//!
//! An ipc channel's receiving end ([`Endpoint::ipc_receiver`]) is read
//! by its buffers, by reference; its sending end
//! ([`Endpoint::ipc_sender`]) takes a descriptor read straight into its
//! pool's slots, anything else through [`Sender::write_buf`](crate::ipc::Sender::write_buf).
//!
//! A ferry [`Stream`](crate::Stream) ([`Endpoint::stream`]) is read by
//! its regions, by reference, and written through its buffers (flushed at
//! the end); a descriptor into a stream is read straight into the
//! stream's write regions where no record size is imposed.
//!
//! An output in non-blocking mode (a pipe or socket the caller set
//! `O_NONBLOCK` on) can say it would block: then the transfer switches
//! path as the output stalls and catches up (Roadrunner's dynamic
//! conditions): from the kernel's `sendfile` (a whole regular file on its
//! own parameters) or from passing each block straight through, to
//! *buffering* — reading ahead into cache buffers within its share while
//! the output takes nothing, writing the queue in gathered writes when it
//! takes bytes again — and back when the queue is empty
//! ([`Path`](super::Path); [`TransferStats::switches`] records each
//! switch, [`TransferStats::peak_buffer_bytes`] the most it held). A
//! write the output takes only part of counts as a stall too. Bytes count
//! as moved when a write took them, never when they were read.
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

use super::endpoint::{Direction, Endpoint, EndpointKind, FileRange};
use super::flow::Flow;
use crate::transfer::kernel::{copy, same_file_refused, signal_guard, FdKind};
use crate::transfer::overlay::{Case, LastBlock, Overlay};
use crate::transfer::{Side, TransferError, TransferOptions, TransferStats};
use std::io;

/// Moves everything from `src` to `dst`. See [`transfer`](crate::transfer) for the cases it takes and the kernel paths it picks.
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
    if src.kind() == EndpointKind::Memory && src.memory_source().is_none() {
        let e = io::Error::new(
            io::ErrorKind::InvalidInput,
            "a memory sink (Endpoint::collect) is not a source",
        );
        return Err(fail(Side::Read, e, none));
    }
    if let (Some(a), Some(b)) = (src.as_stream(), dst.as_stream()) {
        if std::ptr::eq(a, b) {
            let e = io::Error::new(
                io::ErrorKind::InvalidInput,
                "one stream cannot be both the source and the sink",
            );
            return Err(fail(Side::Write, e, none));
        }
    }
    if src.ipc_sink().is_some() || dst.ipc_source().is_some() {
        let e = io::Error::new(
            io::ErrorKind::InvalidInput,
            "an ipc sender is a sink only, an ipc receiver a source only",
        );
        return Err(fail(Side::Write, e, none));
    }
    same_file_check(src, dst).map_err(|e| fail(Side::Write, e, none))?;
    if let Some(tx) = dst.ipc_sink() {
        let mut st = TransferStats::default();
        st.case = Some(case);
        let last = opts.pad.map_or(LastBlock::Short, LastBlock::Pad);
        let mut ov = Overlay::new(pi, po, last).map_err(|e| fail(Side::Write, e, st))?;
        let direct = super::sink::direct(src, dst, pi);
        let r = super::sink::into_ipc(src, tx, &mut ov, pi, direct, opts, &mut st);
        st.overlay = Some(ov.stats());
        st.memcpy_bytes += ov.stats().bytes_copied;
        return match r {
            Ok(()) => Ok(st),
            Err((side, e)) => Err(fail(side, e, st)),
        };
    }
    let last = opts.pad.map_or(LastBlock::Short, LastBlock::Pad);
    if dst.kind() == EndpointKind::Memory || dst.as_stream().is_some() {
        if dst.memory_source().is_some() {
            let e = io::Error::new(
                io::ErrorKind::InvalidInput,
                "a memory source is not a sink (Endpoint::collect is)",
            );
            return Err(fail(Side::Write, e, none));
        }
        let mut st = TransferStats::default();
        st.case = Some(case);
        let mut ov = Overlay::new(pi, po, last).map_err(|e| fail(Side::Write, e, st))?;
        let r = match dst.as_stream() {
            Some(out) => {
                let direct = super::sink::direct(src, dst, pi);
                super::sink::into_stream(src, out, &mut ov, pi, direct, opts, &mut st)
            }
            None => super::sink::into_memory(src, dst, &mut ov, pi, opts, &mut st),
        };
        st.overlay = Some(ov.stats());
        st.memcpy_bytes += ov.stats().bytes_copied;
        return match r {
            Ok(()) => Ok(st),
            Err((side, e)) => Err(fail(side, e, st)),
        };
    }
    let Some(out) = dst.as_fd() else {
        let e = io::Error::new(
            io::ErrorKind::InvalidInput,
            "a memory endpoint is a source only",
        );
        return Err(fail(Side::Write, e, none));
    };
    let mut st = TransferStats::default();
    st.case = Some(case);
    st.calls.other += 1;
    // O_NONBLOCK means nothing to a regular file or a block device.
    let nonblocking = !matches!(dst.kind(), EndpointKind::File | EndpointKind::BlockDevice)
        && crate::sys::channel::is_nonblocking(out).map_err(|e| fail(Side::Write, e, st))?;
    let own = src.imposed().is_none()
        && dst.imposed().is_none()
        && src.range().is_none()
        && dst.range().is_none();
    if let (Some(input), true, false) = (src.as_fd(), own, nonblocking) {
        return match copy(input, out, opts) {
            Ok(mut st) => {
                st.case = Some(case);
                st.calls.other += 1;
                Ok(st)
            }
            Err(e) => Err(e.with_case(case)),
        };
    }
    let ov = Overlay::new(pi, po, last).map_err(|e| fail(Side::Write, e, st))?;
    // sendfile where the kernel's path would have been taken.
    let kernel = own && src.kind() == EndpointKind::File;
    let mut guard = signal_guard(opts, fd_kind(dst.kind()));
    let mut flow = Flow::new(src, out, dst.kind(), ov, pi, kernel, opts)
        .map_err(|e| fail(Side::Write, e, st))?
        .into_range(dst.range());
    st.calls.other += 1;
    let r = flow.run(&mut st);
    st.overlay = Some(flow.overlay_stats());
    st.memcpy_bytes += flow.overlay_stats().bytes_copied;
    drop(flow);
    match r {
        Ok(()) => Ok(st),
        Err((side, e)) => {
            if let Some(g) = guard.as_mut() {
                g.saw_io(&e);
            }
            Err(fail(side, e, st))
        }
    }
}

/// [`same_file_refused`](super::same_file_refused) where both ends are
/// regular files: a descriptor (a file range, or from its own offset) or
/// a [`Stream`](crate::Stream) over a file (from its position). A sink
/// descriptor is written at its own offset (at its file's end in append
/// mode), a sink file range at the range's offset, and a stream at its
/// position (or its file's end in append mode). A stream read from and
/// written to the same file ran until the disk was full.
fn same_file_check(src: &Endpoint<'_>, dst: &Endpoint<'_>) -> io::Result<()> {
    use crate::transfer::kernel::{Reads, Writes};
    let (input, reads) = match (src.as_stream(), src.as_fd()) {
        (Some(s), _) => match s.borrowed_fd() {
            Some(fd) => (fd, Reads::ToEnd(s.position())),
            None => return Ok(()),
        },
        (None, Some(fd)) if src.kind() == EndpointKind::File => {
            let reads = match src.range() {
                Some(FileRange {
                    offset,
                    len: Some(n),
                }) => Reads::Range(offset, offset.saturating_add(n)),
                Some(FileRange { offset, len: None }) => Reads::ToEnd(offset),
                None => Reads::FromOffset,
            };
            (fd, reads)
        }
        _ => return Ok(()),
    };
    let (output, writes) = match (dst.as_stream(), dst.as_fd()) {
        (Some(s), _) => match s.borrowed_fd() {
            Some(fd) => (fd, Writes::AtOrAppended(s.position())),
            None => return Ok(()),
        },
        (None, Some(fd)) if dst.kind() == EndpointKind::File => match dst.range() {
            Some(r) => (fd, Writes::At(r.offset)),
            None => (fd, Writes::AtOffset),
        },
        _ => return Ok(()),
    };
    same_file_refused(input, reads, output, writes)
}

/// The kind [`signal_guard`](super::signal_guard) goes by.
fn fd_kind(k: EndpointKind) -> FdKind {
    use super::endpoint::EndpointKind as E;
    match k {
        E::File => FdKind::Regular,
        E::Pipe => FdKind::Pipe,
        E::TcpSocket | E::UdpSocket | E::UnixStream | E::UnixDatagram | E::Socket => FdKind::Socket,
        _ => FdKind::Other,
    }
}
