//! [`between`](super::between) into a sink that is not a descriptor: a
//! memory sink ([`Endpoint::collect`]), whose output blocks are appended
//! to an [`Aggregate`](crate::Aggregate) by reference, or a ferry
//! [`Stream`], whose buffers take them.
//!
//! A memory source's buffers and a stream source's regions are sliced,
//! never copied; a descriptor is read into page-aligned buffers (one copy,
//! the kernel's) that a memory sink then holds. Into a stream, a
//! descriptor on its own parameters is read straight into the stream's
//! write regions (`salloc_mut`: the kernel's copy only); any other block
//! is copied into the stream's buffers, and that copy is counted
//! ([`TransferStats::memcpy_bytes`]).

use super::endpoint::Endpoint;
use super::source::{Filled, Next, Source};
use crate::transfer::kernel::Fail;
use crate::transfer::overlay::{BlockType, ChannelParams, Overlay};
use crate::transfer::{Method, Side, TransferOptions, TransferStats};
use crate::{Aggregate, BufMut, Stream};
use std::io::{self, Write};

/// The largest input block read at once.
const MAX_READ_BLOCK: usize = 16 << 20;

/// Feeds every input block of `src` to `push`, then tells `finish`.
fn pull(
    src: &mut Source<'_>,
    input: ChannelParams,
    st: &mut TransferStats,
    mut push: impl FnMut(crate::Buf) -> io::Result<()>,
) -> Result<(), Fail> {
    let size = input.max.get().min(MAX_READ_BLOCK);
    let page = crate::sys::page_size();
    loop {
        let want = src.want(size);
        if want == 0 {
            return Ok(());
        }
        match src.next(want).map_err(|e| (Side::Read, e))? {
            Next::Block(b) => push(b).map_err(|e| (Side::Write, e))?,
            Next::Eof => return Ok(()),
            Next::Read => {
                let mut m =
                    BufMut::try_with_capacity_aligned(want, page).map_err(|e| (Side::Read, e))?;
                while src.fill(&mut m, want, st).map_err(|e| (Side::Read, e))? == Filled::WouldBlock
                {
                    if let Some(fd) = src.fd() {
                        st.calls.other += 1;
                        crate::sys::channel::wait_ready(fd, false).map_err(|e| (Side::Read, e))?;
                    }
                }
                if !src.advance(m.len()).map_err(|e| (Side::Read, e))? {
                    return Ok(());
                }
                push(m.freeze()).map_err(|e| (Side::Write, e))?;
            }
        }
    }
}

/// Runs the overlay from `src` into the memory sink `dst`, counting in
/// `st` the bytes that reached the sink (on failure too): by reference
/// from memory or a stream, or read into user buffers
/// ([`Method::ReadWrite`]) from a descriptor.
pub(super) fn into_memory(
    src: &Endpoint<'_>,
    dst: &Endpoint<'_>,
    ov: &mut Overlay,
    input: ChannelParams,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Result<(), Fail> {
    let before = dst.collected_len();
    let mut source = Source::of(src, input.block);
    let by_reference = source.fd().is_none();
    let mut emit = |a: Aggregate| -> io::Result<()> {
        let n = a.len();
        dst.collect_block(a);
        if let Some(p) = opts.progress {
            p(n as u64);
        }
        Ok(())
    };
    let r = pull(&mut source, input, st, |b| ov.push(b, &mut emit))
        .and_then(|()| ov.finish(&mut emit).map_err(|e| (Side::Write, e)));
    let n = dst.collected_len().saturating_sub(before);
    if by_reference {
        st.bytes += n as u64;
    } else {
        st.moved(Method::ReadWrite, n);
    }
    r
}

/// Runs the overlay from `src` into the stream `out`, then flushes it.
/// Bytes count as moved once they reached the stream's file (what the
/// stream still holds unwritten after a failure does not count).
pub(super) fn into_stream(
    src: &Endpoint<'_>,
    out: &Stream,
    ov: &mut Overlay,
    input: ChannelParams,
    direct: bool,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Result<(), Fail> {
    let mut source = Source::of(src, input.block);
    let mut accepted: u64 = 0;
    let r = if direct && source.fd().is_some() {
        read_into_regions(&mut source, out, input, opts, st, &mut accepted)
    } else {
        let mut emit = |a: Aggregate| -> io::Result<()> {
            for c in a.chunks() {
                (&*out).write_all(c)?;
                accepted += c.len() as u64;
                if let Some(p) = opts.progress {
                    p(c.len() as u64);
                }
            }
            Ok(())
        };
        pull(&mut source, input, st, |b| ov.push(b, &mut emit))
            .and_then(|()| ov.finish(&mut emit).map_err(|e| (Side::Write, e)))
    };
    let r = r.and_then(|()| {
        st.calls.other += 1;
        out.flush().map_err(|e| (Side::Write, e))
    });
    // The stream's own unwritten bytes go out first, so what it still
    // holds unwritten is ours first: the last `accepted` bytes of its
    // queue.
    let arrived = accepted.saturating_sub(out.pending_write());
    st.moved(Method::ReadWrite, arrived as usize);
    if !(direct && source.fd().is_some()) {
        st.memcpy_bytes += arrived;
    }
    r
}

/// A descriptor read straight into the stream's write regions, one
/// region a read (the stream picks where the bytes live).
fn read_into_regions(
    src: &mut Source<'_>,
    out: &Stream,
    input: ChannelParams,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
    accepted: &mut u64,
) -> Result<(), Fail> {
    let size = input
        .max
        .get()
        .min(out.buffer_size().max(crate::sys::page_size()));
    loop {
        let want = src.want(size);
        if want == 0 {
            return Ok(());
        }
        let mut region = out.salloc_mut(want).map_err(|e| (Side::Write, e))?;
        let n = loop {
            st.calls.read += 1;
            match src.read_at(&mut region[..], 0) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if let Some(fd) = src.fd() {
                        st.calls.other += 1;
                        crate::sys::channel::wait_ready(fd, false).map_err(|e| (Side::Read, e))?;
                    }
                }
                Err(e) => {
                    // Nothing of this region is kept.
                    let _ = region.commit(0);
                    return Err((Side::Read, e));
                }
            }
        };
        region.commit(n).map_err(|e| (Side::Write, e))?;
        *accepted += n as u64;
        if let Some(p) = opts.progress {
            p(n as u64);
        }
        if !src.advance(n).map_err(|e| (Side::Read, e))? {
            return Ok(());
        }
    }
}

/// Whether blocks from `src` may be read straight into a stream sink's
/// write regions: a descriptor read as it comes (variable blocks), no
/// record size imposed on either side, so the overlay would pass each
/// block through as it is.
pub(super) fn direct(src: &Endpoint<'_>, dst: &Endpoint<'_>, input: ChannelParams) -> bool {
    src.as_fd().is_some()
        && src.imposed().is_none()
        && dst.imposed().is_none()
        && input.block == BlockType::Variable
}

/// Runs `src` into the sending end of an ipc channel. A descriptor on its
/// own parameters (`direct`) is read straight into the pool's slots, one
/// slot a read, each sent by reference; anything else goes through the
/// overlay into [`Sender::write_buf`](crate::ipc::Sender::write_buf)
/// (pool buffers by reference, other bytes copied into slots). Bytes count
/// as moved once sent; the sender is not closed.
pub(super) fn into_ipc(
    src: &Endpoint<'_>,
    tx: &std::sync::Mutex<crate::ipc::Sender>,
    ov: &mut Overlay,
    input: ChannelParams,
    direct: bool,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Result<(), Fail> {
    let mut tx = tx.lock().unwrap_or_else(|p| p.into_inner());
    let mut source = Source::of(src, input.block);
    if direct && source.fd().is_some() {
        return read_into_slots(&mut source, &mut tx, opts, st);
    }
    let copied_before = tx.stats().bytes_copied;
    let mut sent: u64 = 0;
    let r = {
        let mut emit = |a: Aggregate| -> io::Result<()> {
            let n = tx.write_buf(a)?;
            sent += n as u64;
            if let Some(p) = opts.progress {
                p(n as u64);
            }
            Ok(())
        };
        pull(&mut source, input, st, |b| ov.push(b, &mut emit))
            .and_then(|()| ov.finish(&mut emit).map_err(|e| (Side::Write, e)))
    };
    st.bytes += sent;
    st.memcpy_bytes += tx.stats().bytes_copied - copied_before;
    r
}

/// A descriptor read straight into the sender's slots: one read a slot
/// (the kernel's copy into the pool), each slot sent by reference.
fn read_into_slots(
    src: &mut Source<'_>,
    tx: &mut crate::ipc::Sender,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Result<(), Fail> {
    let size = tx.slot_size();
    loop {
        let want = src.want(size);
        if want == 0 {
            return Ok(());
        }
        let mut slot = tx.alloc().map_err(|e| (Side::Write, e))?;
        let n = loop {
            st.calls.read += 1;
            match src.read_at(&mut slot[..want], 0) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if let Some(fd) = src.fd() {
                        st.calls.other += 1;
                        crate::sys::channel::wait_ready(fd, false).map_err(|e| (Side::Read, e))?;
                    }
                }
                Err(e) => return Err((Side::Read, e)),
            }
        };
        if !src.advance(n).map_err(|e| (Side::Read, e))? {
            return Ok(());
        }
        st.calls.write += 1;
        tx.send(Aggregate::from(slot.freeze(n)))
            .map_err(|e| (Side::Write, e))?;
        st.moved(Method::ReadWrite, n);
        if let Some(p) = opts.progress {
            p(n as u64);
        }
    }
}
