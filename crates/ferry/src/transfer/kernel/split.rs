//! File-to-file copies on two cores: the range split between two threads
//! ([`copy_split`]), and the whole-file case of [`copy`](super::copy)
//! ([`split_regular`]).

use super::range::copy_at;
use super::shared::{copy_shared, fills_in_parallel};
use super::{Fail, Side, TransferOptions, TransferStats};
use crate::sys::transfer as sys;
use std::io;
use std::os::fd::BorrowedFd;

/// [`copy_at`] by two threads when the range is `opts.parallel_min` or
/// more: on ext4 one copy_file_range thread and one filling a mapping
/// ([`copy_shared`]); elsewhere this thread copies the first half with
/// copy_file_range while another copies the second (one thread when no
/// second can be started). Returns how far the copy reached without a gap
/// from `from`: if the input shrank under the first half, what the second
/// half wrote past that point is not counted (the caller cuts the output
/// there). `st` (fresh) gets both threads' counts, and in `bytes` the
/// bytes copied without a gap, whether the copy succeeded or failed.
pub(super) fn copy_split(
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    (from, end): (u64, u64),
    out_from: u64,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Result<u64, Fail> {
    // Under a file size limit (`ulimit -f`), one thread in order: the
    // output then stops exactly at the limit, with every byte before it
    // copied, when SIGXFSZ ends the program, as GNU's tools leave it.
    let limited = sys::fsize_limited();
    // The second thread's output offset is computed before any byte moves:
    // for an output range reaching past the largest file offset it would
    // wrap past u64::MAX to the file's start (and overflow-check panic in
    // a debug build). One thread computes offsets only for the bytes that
    // exist, and the kernel stops it where the offset is too large.
    let max = i64::MAX as u64;
    let fits = end <= max && out_from.checked_add(end - from).is_some_and(|e| e <= max);
    if end - from < opts.parallel_min || limited || !fits {
        return copy_at(input, output, (from, end), out_from, opts, st);
    }
    st.calls.other += 1;
    if fills_in_parallel(output) {
        if let Some(done) = copy_shared(input, output, (from, end), out_from, opts, st) {
            return done;
        }
    }
    let mid = from + (end - from) / 2;
    let out_mid = out_from + (mid - from);
    // Each thread counts in its own stats; the first half's bytes say how
    // far it got, for a failure: the output is then cut to the bytes
    // copied without a gap, as a one-thread copy leaves it.
    let mut first = TransferStats::default();
    let mut second = TransferStats::default();
    let (a, b) = std::thread::scope(|s| {
        let other = std::thread::Builder::new().spawn_scoped(s, || {
            let mut st2 = TransferStats::default();
            let r = copy_at(input, output, (mid, end), out_mid, opts, &mut st2);
            (r, st2)
        });
        let a = copy_at(input, output, (from, mid), out_from, opts, &mut first);
        let b = match other {
            Ok(h) => match h.join() {
                Ok((r, st2)) => {
                    second = st2;
                    r
                }
                Err(_) => Err((Side::Write, io::Error::other("copy thread failed"))),
            },
            Err(_) if matches!(a, Ok(n) if n == mid - from) => {
                copy_at(input, output, (mid, end), out_mid, opts, &mut second)
            }
            Err(_) => Ok(0),
        };
        (a, b)
    });
    st.absorb(&first);
    st.absorb(&second);
    let n = match (a, b) {
        (Ok(a), Ok(b)) => {
            if a < mid - from {
                a
            } else {
                a + b
            }
        }
        (Ok(a), Err(e)) if a == mid - from => {
            // The second half failed: nothing of it is counted.
            st.calls.other += 1;
            let _ = sys::set_len(output, out_mid);
            st.bytes = a;
            return Err(e);
        }
        (Ok(_), Err(e)) | (Err(e), _) => {
            st.calls.other += 1;
            let _ = sys::set_len(output, out_from + first.bytes);
            st.bytes = first.bytes;
            return Err(e);
        }
    };
    st.bytes = n;
    Ok(n)
}

/// The two-thread copy for [`copy`](super::copy)'s regular file → regular
/// file case: from the input's offset to its size as it is now, to the
/// output's offset, both offsets moved past what was copied as one
/// copy_file_range loop would leave them. Only when the output ends at
/// its offset (a new or truncated file, nothing of it past where this copy
/// starts) and is not in append mode; otherwise, or for smaller inputs,
/// nothing is done and the caller's one-thread loop copies everything.
pub(super) fn split_regular(
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Result<(), Fail> {
    st.calls.other += 2;
    let (Ok(in_st), Ok(in_off)) = (sys::meta(input), sys::tell(input)) else {
        return Ok(());
    };
    let end = in_st.size;
    if end < in_off.saturating_add(opts.parallel_min) {
        return Ok(());
    }
    st.calls.other += 3;
    let appending = sys::access(output).map_or(true, |a| a.append);
    let (Ok(out_st), Ok(out_off)) = (sys::meta(output), sys::tell(output)) else {
        return Ok(());
    };
    if appending || out_off != out_st.size {
        return Ok(());
    }
    let mut here = TransferStats::default();
    let r = copy_split(input, output, (in_off, end), out_off, opts, &mut here);
    st.absorb(&here);
    let n = r?;
    if n < end - in_off {
        // The input shrank: the output ends where one sequential copy
        // would have ended it.
        st.calls.other += 1;
        sys::set_len(output, out_off + n).map_err(|e| (Side::Write, e))?;
    }
    st.calls.other += 2;
    sys::seek_to(input, in_off + n).map_err(|e| (Side::Read, e))?;
    sys::seek_to(output, out_off + n).map_err(|e| (Side::Write, e))?;
    Ok(())
}
