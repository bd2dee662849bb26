//! [`between`](super::between) into a memory sink
//! ([`Endpoint::collect`]): the overlay's output blocks appended to an
//! [`Aggregate`](crate::Aggregate) by reference. A memory source's
//! buffers are sliced, never copied; a descriptor is read into
//! page-aligned buffers (one copy, the kernel's, counted as
//! [`Method::ReadWrite`]) that the sink then holds.

use super::endpoint::Endpoint;
use super::overlay::{BlockType, Overlay};
use super::{Method, Side, TransferOptions, TransferStats};
use crate::BufMut;
use std::io;

/// The largest input block read at once.
const MAX_READ_BLOCK: usize = 16 << 20;

/// Runs the overlay from `src` into the memory sink `dst`.
fn into_memory(
    src: &Endpoint<'_>,
    dst: &Endpoint<'_>,
    ov: &mut Overlay,
    block: BlockType,
    b_in: usize,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Result<(), (Side, io::Error)> {
    let mut emit = |a: crate::Aggregate| -> io::Result<()> {
        let n = a.len();
        dst.collect_block(a);
        if let Some(p) = opts.progress {
            p(n as u64);
        }
        Ok(())
    };
    if let Some(data) = src.memory_source() {
        for b in data.bufs() {
            ov.push(b.clone(), &mut emit)
                .map_err(|e| (Side::Write, e))?;
        }
        return ov.finish(&mut emit).map_err(|e| (Side::Write, e));
    }
    let Some(fd) = src.as_fd() else {
        return Ok(());
    };
    let range = src.range();
    let mut off = range.map(|r| r.offset);
    let mut left = range.and_then(|r| r.len);
    let size = b_in.min(MAX_READ_BLOCK);
    let page = crate::sys::page_size();
    loop {
        let want = left.map_or(size, |l| size.min(l.min(usize::MAX as u64) as usize));
        if want == 0 {
            break;
        }
        let mut m = BufMut::try_with_capacity_aligned(want, page).map_err(|e| (Side::Read, e))?;
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
            break;
        }
        if let Some(o) = off.as_mut() {
            *o = o.saturating_add(n as u64);
        }
        if let Some(l) = left.as_mut() {
            *l -= n as u64;
        }
        ov.push(m.freeze(), &mut emit)
            .map_err(|e| (Side::Write, e))?;
    }
    ov.finish(&mut emit).map_err(|e| (Side::Write, e))
}

/// [`into_memory`], with the bytes that reached the sink counted in `st`
/// (on failure too): by reference from memory, or read into user buffers
/// ([`Method::ReadWrite`]) from a descriptor.
pub(super) fn run(
    src: &Endpoint<'_>,
    dst: &Endpoint<'_>,
    ov: &mut Overlay,
    block: BlockType,
    b_in: usize,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Result<(), (Side, io::Error)> {
    let before = dst.collected_len();
    let r = into_memory(src, dst, ov, block, b_in, opts, st);
    let n = dst.collected_len().saturating_sub(before);
    if src.memory_source().is_some() {
        st.bytes += n as u64;
    } else {
        st.moved(Method::ReadWrite, n);
    }
    r
}
