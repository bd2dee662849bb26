//! ferry/transfer.h's endpoints and `fy_between`: Roadrunner's
//! `stream(in, out)` in C, on `ferry::transfer::between`.

use crate::buf::FyBuf;
use crate::ffi::ffi_guard;
use crate::file::{errno_of, set_errno};
use crate::transfer::FyTransferStats;
use ferry::transfer::endpoint::Endpoint;
use ferry::transfer::overlay::ChannelParams;
use ferry::transfer::{between, TransferOptions};
use libc::{c_int, size_t};
use std::num::NonZeroUsize;
use std::os::fd::BorrowedFd;

/// An endpoint (`fy_endpoint`). `None` only while `fy_endpoint_impose`
/// rebuilds it.
pub struct FyEndpoint(Option<Endpoint<'static>>);

/// What `fy_between` did (`fy_between_stats`, the fields in order).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct FyBetweenStats {
    pub transfer: FyTransferStats,
    pub case_number: c_int,
    pub blocks_in: u64,
    pub blocks_out: u64,
    pub bytes_copied: u64,
    pub padding: u64,
    pub switches: u64,
    pub peak_buffer_bytes: u64,
    pub share_waits: u64,
    pub memcpy_bytes: u64,
}

fn boxed(e: Endpoint<'static>) -> *mut FyEndpoint {
    Box::into_raw(Box::new(FyEndpoint(Some(e))))
}

/// The caller's descriptor, borrowed for as long as the endpoint lives.
///
/// # Safety
///
/// The C contract of ferry/transfer.h: the descriptor stays open until
/// the endpoint is freed (one that is closed early makes the endpoint's
/// system calls fail with EBADF, or reach whatever file took its number,
/// as with read(2)); `fd` is not -1.
unsafe fn descriptor(fd: c_int) -> BorrowedFd<'static> {
    // SAFETY: per this function's contract.
    unsafe { BorrowedFd::borrow_raw(fd) }
}

/// `fy_endpoint_fd`: a descriptor, whatever it is.
#[no_mangle]
pub extern "C" fn fy_endpoint_fd(fd: c_int) -> *mut FyEndpoint {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        if fd < 0 {
            set_errno(libc::EBADF);
            return std::ptr::null_mut();
        }
        // SAFETY: not -1; the caller keeps it open (the header's rule).
        match Endpoint::fd(unsafe { descriptor(fd) }) {
            Ok(e) => boxed(e),
            Err(e) => {
                set_errno(errno_of(&e));
                std::ptr::null_mut()
            }
        }
    })
}

/// `fy_endpoint_file_range`: bytes `[offset, offset + len)` of a regular
/// file (`len == FY_TO_END`: to its end).
#[no_mangle]
pub extern "C" fn fy_endpoint_file_range(fd: c_int, offset: u64, len: u64) -> *mut FyEndpoint {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        if fd < 0 {
            set_errno(libc::EBADF);
            return std::ptr::null_mut();
        }
        let len = (len != u64::MAX).then_some(len);
        // SAFETY: not -1; the caller keeps it open (the header's rule).
        match Endpoint::file_range(unsafe { descriptor(fd) }, offset, len) {
            Ok(e) => boxed(e),
            Err(e) => {
                set_errno(errno_of(&e));
                std::ptr::null_mut()
            }
        }
    })
}

/// `fy_endpoint_buf`: a memory source over a ferry buffer's bytes (a
/// reference of its own: the caller may release the buffer at once).
#[no_mangle]
pub extern "C" fn fy_endpoint_buf(b: *const FyBuf) -> *mut FyEndpoint {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        if b.is_null() {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        }
        // SAFETY: a live fy_buf of the caller's (NULL checked).
        let buf = unsafe { &*b }.0.clone();
        boxed(Endpoint::memory(buf))
    })
}

/// `fy_endpoint_impose`: a record size the caller imposes.
#[no_mangle]
pub extern "C" fn fy_endpoint_impose(e: *mut FyEndpoint, block_type: c_int, max: size_t) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        let Some(max) = NonZeroUsize::new(max) else {
            set_errno(libc::EINVAL);
            return -1;
        };
        let params = match block_type {
            0 => ChannelParams::variable(max),
            1 => ChannelParams::fixed(max),
            _ => {
                set_errno(libc::EINVAL);
                return -1;
            }
        };
        if e.is_null() {
            set_errno(libc::EINVAL);
            return -1;
        }
        // SAFETY: a live endpoint of the caller's, not shared during the
        // call (NULL checked).
        let slot = unsafe { &mut (*e).0 };
        match slot.take() {
            Some(ep) => {
                *slot = Some(ep.impose(params));
                0
            }
            None => {
                set_errno(libc::EINVAL);
                -1
            }
        }
    })
}

/// `fy_endpoint_free`.
#[no_mangle]
pub extern "C" fn fy_endpoint_free(e: *mut FyEndpoint) {
    ffi_guard((), libc::EIO, || {
        if !e.is_null() {
            // SAFETY: made by Box::into_raw in this file, freed once (the
            // caller's contract).
            drop(unsafe { Box::from_raw(e) });
        }
    })
}

/// `fy_between`: everything from `src` to `dst`.
#[no_mangle]
pub extern "C" fn fy_between(
    src: *const FyEndpoint,
    dst: *const FyEndpoint,
    pad: c_int,
    stats: *mut FyBetweenStats,
) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        let fill = |s: FyBetweenStats| {
            if !stats.is_null() {
                // SAFETY: the caller's out-parameter (NULL checked).
                unsafe { *stats = s };
            }
        };
        // SAFETY: live endpoints of the caller's, or NULL.
        let (s, d) = unsafe { (src.as_ref(), dst.as_ref()) };
        let (Some(FyEndpoint(Some(s))), Some(FyEndpoint(Some(d)))) = (s, d) else {
            fill(FyBetweenStats::default());
            set_errno(libc::EINVAL);
            return -1;
        };
        let mut opts = TransferOptions::new();
        match pad {
            -1 => {}
            0..=255 => opts = opts.pad_last(pad as u8),
            _ => {
                fill(FyBetweenStats::default());
                set_errno(libc::EINVAL);
                return -1;
            }
        }
        let (st, failed) = match between(s, d, &opts) {
            Ok(st) => (st, None),
            Err(e) => {
                let st = *e.stats();
                let side = e.side();
                (st, Some((side, errno_of(&e.into()))))
            }
        };
        let ov = st.overlay.unwrap_or_default();
        fill(FyBetweenStats {
            transfer: FyTransferStats::of(&st, failed.map(|(s, _)| s)),
            case_number: st.case.map_or(0, |c| c_int::from(c.number())),
            blocks_in: ov.blocks_in,
            blocks_out: ov.blocks_out,
            bytes_copied: ov.bytes_copied,
            padding: ov.padding,
            switches: st.switches.count(),
            peak_buffer_bytes: st.peak_buffer_bytes,
            share_waits: st.share_waits,
            memcpy_bytes: st.memcpy_bytes,
        });
        match failed {
            None => 0,
            Some((_, errno)) => {
                set_errno(errno);
                -1
            }
        }
    })
}
