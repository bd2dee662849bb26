//! One thread's copy of a byte range between regular files, at explicit
//! offsets: copy_file_range, or pread/pwrite through a page-aligned
//! buffer where the kernel will not.

use super::{Fail, Method, Side, TransferOptions, TransferStats};
use crate::sys::transfer as sys;
use crate::BufMut;
use std::io;
use std::os::fd::BorrowedFd;

/// The most one copy_file_range of a range is asked for.
const STEP: usize = 64 << 20;

/// The pread/pwrite fallback's buffer.
const BUF: usize = 1 << 20;

/// Copies input bytes `[from, end)` to the output starting at `out_from`.
/// Neither file offset moves. Returns the bytes copied: fewer than asked
/// when the input ends early (it shrank under the copy).
pub(super) fn copy_at(
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    (from, end): (u64, u64),
    out_from: u64,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Result<u64, Fail> {
    let mut pos = from;
    let mut fallback = false;
    while pos < end && !fallback {
        let want = ((end - pos) as usize).min(STEP);
        let (mut a, mut b) = (pos, out_from + (pos - from));
        st.calls.copy_file_range += 1;
        match sys::copy_file_range(input, Some(&mut a), output, Some(&mut b), want) {
            Ok(0) => return Ok(pos - from),
            Ok(n) => {
                pos += n as u64;
                opts.moved(st, Method::CopyFileRange, n);
            }
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EXDEV | libc::ENOSYS | libc::EINVAL | libc::EOPNOTSUPP)
                ) =>
            {
                fallback = true
            }
            Err(e) => return Err((Side::Write, e)),
        }
    }
    if pos == end {
        return Ok(pos - from);
    }
    let mut buf = BufMut::with_capacity(BUF);
    let cap = buf.capacity();
    buf.commit(cap);
    while pos < end {
        let want = ((end - pos) as usize).min(cap);
        st.calls.read += 1;
        let n = match sys::pread(input, &mut buf[..want], pos) {
            Ok(0) => return Ok(pos - from),
            Ok(n) => n,
            Err(e) => return Err((Side::Read, e)),
        };
        let at = out_from + (pos - from);
        let mut done = 0;
        while done < n {
            st.calls.write += 1;
            match sys::pwrite(output, &buf[done..n], at + done as u64) {
                Ok(0) => return Err((Side::Write, io::ErrorKind::WriteZero.into())),
                Ok(k) => {
                    done += k;
                    opts.moved(st, Method::ReadWrite, k);
                }
                Err(e) => return Err((Side::Write, e)),
            }
        }
        pos += n as u64;
    }
    Ok(pos - from)
}
