//! The two-thread file copy where writers cannot share the output's inode
//! lock (ext4): one thread copies pieces from the front with
//! copy_file_range, the other reads pieces from the back straight into a
//! shared mapping of the output.

use super::range::copy_at;
use super::{Fail, Method, Side, TransferOptions, TransferStats};
use crate::sys::transfer as sys;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Pieces handed out by [`copy_shared`].
const PIECE: u64 = 8 << 20;

/// Whether the output's file system is one where filling a shared mapping
/// ([`read_into_file`](crate::read_into_file)) runs beside
/// copy_file_range: ext4, where copy_file_range copies through the page
/// cache (measured there; on file systems that clone or copy on the
/// server, copy_file_range alone is better).
pub(super) fn fills_in_parallel(output: BorrowedFd<'_>) -> bool {
    const EXT4_SUPER_MAGIC: u64 = 0xEF53;
    sys::fs_magic(output).is_ok_and(|m| m == EXT4_SUPER_MAGIC)
}

/// The two-thread copy where writers cannot share the output's inode lock:
/// the output range is allocated first (so a full disk says so before any
/// byte moves), then this thread takes 8 MiB pieces from the front and
/// copies them with copy_file_range (the kernel's write path, which holds
/// the lock), while a second thread takes pieces from the back and reads
/// them straight into a shared mapping of the output (page faults, which
/// do not; the mapping asks for huge pages, see
/// [`read_into_file`](crate::read_into_file)). They meet where their
/// speeds put them. Measured on ext4 here for 1 GiB
/// (`scripts/cp-paths.sh`): 0.17–0.18 s against GNU cp's 0.36, where two
/// copy_file_range threads were 1.0× GNU (they take turns on the lock).
/// `None`: this way does not apply (no readable descriptor for the
/// output, or the range could not be allocated); nothing was written and
/// the output's length is as it was. Otherwise `st` gets both threads'
/// counts and in `bytes` the bytes copied without a gap.
pub(super) fn copy_shared(
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    (from, end): (u64, u64),
    out_from: u64,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Option<Result<u64, Fail>> {
    // A shared writable mapping needs the output open for reading too.
    let reopened = readable(output, st)?;
    let mapped = reopened.as_ref().map_or(output, |f| f.as_fd());
    st.calls.other += 2;
    let size_before = sys::meta(output).ok()?.size;
    if sys::allocate(output, out_from, end - from).is_err() {
        // Not supported here, or no room for all of it (ext4 then keeps
        // what it did allocate, zeros that lengthen the file): put the
        // length back and let the plain copy write what fits and report
        // the error as GNU's tools do.
        st.calls.other += 1;
        sys::set_len(output, size_before).ok()?;
        return None;
    }
    // The input range not yet handed out: [front, back).
    let left = Mutex::new((from, end));
    // The lowest input offset where a piece ended early or failed.
    let gap = AtomicU64::new(end);
    let stop = AtomicBool::new(false);
    let failure: Mutex<Option<Fail>> = Mutex::new(None);
    let take = |from_back: bool| -> Option<(u64, u64)> {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let mut l = left.lock().unwrap_or_else(|p| p.into_inner());
        let (front, back) = *l;
        if front >= back {
            return None;
        }
        // Pieces from the back end on PIECE boundaries of the output, so
        // each mapping starts where a huge page can (the first one takes
        // the odd tail): a copy of 1 GiB - 12345 bytes took 0.23–0.25 s
        // with pieces counted from the end, 0.20–0.21 with them aligned
        // (1 GiB, whose pieces align either way: 0.17–0.18).
        let out_back = out_from + (back - from);
        let n = if from_back && !out_back.is_multiple_of(PIECE) {
            out_back % PIECE
        } else {
            PIECE
        }
        .min(back - front);
        Some(if from_back {
            l.1 = back - n;
            (back - n, back)
        } else {
            l.0 = front + n;
            (front, front + n)
        })
    };
    let ended = |p: u64, r: Result<u64, Fail>, want: u64| match r {
        Ok(n) if n == want => {}
        Ok(n) => {
            // The input ends inside this piece (it shrank under the copy):
            // nothing past it counts. The other pieces still go on, as the
            // end is the lowest such point, wherever it is.
            gap.fetch_min(p + n, Ordering::Relaxed);
        }
        Err(e) => {
            gap.fetch_min(p, Ordering::Relaxed);
            stop.store(true, Ordering::Relaxed);
            failure
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert(e);
        }
    };
    let front_work = |st: &mut TransferStats| {
        while let Some((a, b)) = take(false) {
            let r = copy_at(input, output, (a, b), out_from + (a - from), opts, st);
            ended(a, r, b - a);
        }
    };
    let back_work = || {
        let mut st = TransferStats::default();
        while let Some((a, b)) = take(true) {
            st.calls.mapped_fills += 1;
            let r = crate::sys::map::read_into_file(
                input,
                a,
                mapped,
                out_from + (a - from),
                (b - a) as usize,
            )
            .map(|n| {
                opts.moved(&mut st, Method::Mapped, n);
                n as u64
            })
            .map_err(|e| {
                // The system's own errors come from reading the input;
                // a page of the output that could not be written is
                // reported by ferry in its own words.
                let side = if e.raw_os_error().is_some() {
                    Side::Read
                } else {
                    Side::Write
                };
                (side, e)
            });
            ended(a, r, b - a);
        }
        st
    };
    let mut front_st = TransferStats::default();
    std::thread::scope(|s| {
        let back = std::thread::Builder::new().spawn_scoped(s, back_work);
        front_work(&mut front_st);
        if let Ok(h) = back {
            match h.join() {
                Ok(b) => front_st.absorb(&b),
                Err(_) => ended(
                    from,
                    Err((Side::Write, io::Error::other("copy thread failed"))),
                    0,
                ),
            }
        }
    });
    st.absorb(&front_st);
    // Copied without a gap: up to the first short or failed piece, or to
    // the first piece never handed out.
    let (front, back) = *left.lock().unwrap_or_else(|p| p.into_inner());
    let mut reached = gap.load(Ordering::Relaxed);
    if front < back {
        reached = reached.min(front);
    }
    let done = reached - from;
    st.bytes = done;
    if reached < end {
        // The allocation reached past what was copied: cut it back.
        st.calls.other += 1;
        if let Err(e) = sys::set_len(output, out_from + done) {
            return Some(Err((Side::Write, e)));
        }
    }
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Some(Err(e));
    }
    Some(Ok(done))
}

/// `None` when `output` is open for reading and writing; else the same
/// file opened again for both (through /proc/self/fd, checked to be the
/// same inode), as `cat` is handed a write-only standard output. `None`
/// from the outer level: no readable descriptor can be had.
fn readable(output: BorrowedFd<'_>, st: &mut TransferStats) -> Option<Option<std::fs::File>> {
    st.calls.other += 1;
    if sys::access(output).ok()?.read_write {
        return Some(None);
    }
    st.calls.other += 3;
    sys::reopen_read_write(output).map(Some)
}
