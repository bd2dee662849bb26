//! ferry/transfer.h: the transfer engine in C. `fy_transfer` moves
//! everything from one descriptor to another by the kernel's copy paths
//! (`ferry::transfer::copy`), with no SIGPIPE or SIGXFSZ death.

use crate::ffi::ffi_guard;
use crate::file::{errno_of, set_errno};
use ferry::transfer::{self, Method, Side, TransferOptions, TransferStats};
use libc::c_int;
use std::os::fd::BorrowedFd;

/// What a transfer did (`fy_transfer_stats` in ferry/transfer.h; the
/// fields in the same order).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct FyTransferStats {
    pub bytes: u64,
    pub copy_file_range_bytes: u64,
    pub splice_bytes: u64,
    pub sendfile_bytes: u64,
    pub mapped_bytes: u64,
    pub read_write_bytes: u64,
    pub copy_file_range_calls: u64,
    pub splice_calls: u64,
    pub sendfile_calls: u64,
    pub read_calls: u64,
    pub write_calls: u64,
    pub mapped_fills: u64,
    pub other_calls: u64,
    pub failed_side: c_int,
    pub finished_by: c_int,
}

/// `FY_TRANSFER_*` of ferry/transfer.h.
const SIDE_READ: c_int = 1;
const SIDE_WRITE: c_int = 2;

fn method_code(m: Method) -> c_int {
    match m {
        Method::CopyFileRange => 1,
        Method::Splice => 2,
        Method::Sendfile => 3,
        Method::Mapped => 4,
        Method::ReadWrite => 5,
    }
}

impl FyTransferStats {
    pub(crate) fn of(st: &TransferStats, failed: Option<Side>) -> FyTransferStats {
        FyTransferStats {
            bytes: st.bytes,
            copy_file_range_bytes: st.bytes_by(Method::CopyFileRange),
            splice_bytes: st.bytes_by(Method::Splice),
            sendfile_bytes: st.bytes_by(Method::Sendfile),
            mapped_bytes: st.bytes_by(Method::Mapped),
            read_write_bytes: st.bytes_by(Method::ReadWrite),
            copy_file_range_calls: st.calls.copy_file_range,
            splice_calls: st.calls.splice,
            sendfile_calls: st.calls.sendfile,
            read_calls: st.calls.read,
            write_calls: st.calls.write,
            mapped_fills: st.calls.mapped_fills,
            other_calls: st.calls.other,
            failed_side: match failed {
                None => 0,
                Some(Side::Read) => SIDE_READ,
                Some(Side::Write) => SIDE_WRITE,
            },
            finished_by: st.finished_by().map_or(0, method_code),
        }
    }
}

/// Copies everything from `in_fd` (from its offset) to `out_fd` (at its
/// offset): 0, or -1 with errno set. A ferry stream on either descriptor
/// is flushed first (its output written, its read-ahead given back).
/// `stats`, if not NULL, gets what was done, on failure too (the bytes
/// known to have arrived, the side that failed).
#[no_mangle]
pub extern "C" fn fy_transfer(in_fd: c_int, out_fd: c_int, stats: *mut FyTransferStats) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        if in_fd < 0 || out_fd < 0 {
            if !stats.is_null() {
                // SAFETY: the caller's out-parameter (NULL checked).
                unsafe { *stats = FyTransferStats::default() };
            }
            set_errno(libc::EBADF);
            return -1;
        }
        // A ferry stream on either descriptor (a FILE's, or one that
        // ferry/unistd.h's open made) reads and writes at positions of its
        // own, so the kernel's offset need not be where its program is.
        // Flushing hands the offset over, as fflush(3) does: output it
        // holds is written first, and read-ahead is given back so that the
        // transfer starts where the program's reads stopped. The stream
        // then takes the offset back, past what was transferred, at its
        // next use.
        for (fd, side) in [(in_fd, SIDE_READ), (out_fd, SIDE_WRITE)] {
            let Some(pin) = crate::unistd::lookup(fd) else {
                continue;
            };
            if crate::stdio::fy_fflush(pin.ptr()) != 0 {
                if !stats.is_null() {
                    // SAFETY: the caller's out-parameter (NULL checked).
                    unsafe {
                        *stats = FyTransferStats {
                            failed_side: side,
                            ..Default::default()
                        }
                    };
                }
                return -1;
            }
        }
        // SAFETY: the numbers are the caller's descriptors, used only for
        // system calls during this call (the C contract, as for read(2)
        // and write(2)); one that is not open makes those calls fail with
        // EBADF. Neither is -1 (checked above).
        let (input, output) = unsafe {
            (
                BorrowedFd::borrow_raw(in_fd),
                BorrowedFd::borrow_raw(out_fd),
            )
        };
        let (st, failed) = match transfer::copy(input, output, &TransferOptions::new()) {
            Ok(st) => (st, None),
            Err(e) => {
                let st = *e.stats();
                let side = e.side();
                (st, Some((side, errno_of(&e.into()))))
            }
        };
        if !stats.is_null() {
            // SAFETY: the caller's out-parameter (NULL checked).
            unsafe { *stats = FyTransferStats::of(&st, failed.map(|(s, _)| s)) };
        }
        match failed {
            None => 0,
            Some((_, errno)) => {
                set_errno(errno);
                -1
            }
        }
    })
}
