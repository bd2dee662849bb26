//! ferry/sort.h: the library's external sort ([`ferry::sort`]) from C.
//! `fy_sort_records` sorts fixed-size records by an unsigned big-endian
//! (`memcmp`) key, `fy_sort_lines` sorts lines by their bytes: from one
//! descriptor to another, in a memory budget, through runs in a
//! temporary directory when the input is larger.

use crate::ffi::ffi_guard;
use crate::file::{errno_of, set_errno};
use ferry::sort::{ByteKey, Error, Framing, Input, Place, Sorter};
use ferry::stream::Backend;
use ferry::Stream;
use libc::{c_char, c_int, c_uint};
use std::os::fd::BorrowedFd;
use std::path::PathBuf;

/// `FY_SORT_*` of ferry/sort.h.
const REVERSE: c_uint = 1;
const UNIQUE: c_uint = 2;

/// Sorts the `record_size`-byte records of `in_fd` (from its offset to
/// its end) into `out_fd` (at its offset) by bytes `key_offset ..
/// key_offset + key_len` of each: 0, or -1 with errno set.
// The C signature: each setting is an argument, as ferry/sort.h has it.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "C" fn fy_sort_records(
    in_fd: c_int,
    out_fd: c_int,
    record_size: usize,
    key_offset: usize,
    key_len: usize,
    flags: c_uint,
    mem_budget: u64,
    tmpdir: *const c_char,
) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        let fits = key_offset
            .checked_add(key_len)
            .is_some_and(|end| end <= record_size);
        if record_size == 0 || !fits {
            set_errno(libc::EINVAL);
            return -1;
        }
        let key = ByteKey::new(key_offset, key_len);
        let framing = Framing::Records(record_size);
        sort_fd(in_fd, out_fd, framing, key, flags, mem_budget, tmpdir)
    })
}

/// Sorts the lines of `in_fd` (ending in `terminator`, 0 to 255) into
/// `out_fd` by their bytes: 0, or -1 with errno set.
#[no_mangle]
pub extern "C" fn fy_sort_lines(
    in_fd: c_int,
    out_fd: c_int,
    terminator: c_int,
    flags: c_uint,
    mem_budget: u64,
    tmpdir: *const c_char,
) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        let Ok(eol) = u8::try_from(terminator) else {
            set_errno(libc::EINVAL);
            return -1;
        };
        let framing = Framing::Lines(eol);
        sort_fd(
            in_fd,
            out_fd,
            framing,
            ByteKey::WHOLE,
            flags,
            mem_budget,
            tmpdir,
        )
    })
}

/// The sort both entry points run; errno is set on failure.
fn sort_fd(
    in_fd: c_int,
    out_fd: c_int,
    framing: Framing,
    mut key: ByteKey,
    flags: c_uint,
    mem_budget: u64,
    tmpdir: *const c_char,
) -> c_int {
    if flags & !(REVERSE | UNIQUE) != 0 {
        set_errno(libc::EINVAL);
        return -1;
    }
    if in_fd < 0 || out_fd < 0 {
        set_errno(libc::EBADF);
        return -1;
    }
    key.reverse = flags & REVERSE != 0;
    let dir = if tmpdir.is_null() {
        None
    } else {
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: a NUL-terminated string (the header's contract), read
        // during this call only.
        let c = unsafe { std::ffi::CStr::from_ptr(tmpdir) };
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(c.to_bytes())))
    };
    // A ferry stream on either descriptor is flushed first (its output
    // written, its read-ahead given back), as fy_transfer does.
    for fd in [in_fd, out_fd] {
        if let Some(pin) = crate::unistd::lookup(fd) {
            if crate::stdio::fy_fflush(pin.ptr()) != 0 {
                return -1;
            }
        }
    }
    // SAFETY: the numbers are the caller's descriptors, used only during
    // this call (the C contract, as for read(2) and write(2)); one that is
    // not open makes the calls fail with EBADF. Neither is negative.
    let (input, output) = unsafe {
        (
            BorrowedFd::borrow_raw(in_fd),
            BorrowedFd::borrow_raw(out_fd),
        )
    };
    let fail = |e: &std::io::Error| {
        set_errno(errno_of(e));
        -1
    };
    // The input through a duplicate, read from the descriptor's offset
    // (left at the end, as read(2) would leave it); mapped where it can be.
    let stream = match input
        .try_clone_to_owned()
        .and_then(|dup| Stream::from_fd_with(dup, &format!("fd {in_fd}"), Backend::Auto))
    {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let mut sorter = Sorter::new(framing, key).unique(flags & UNIQUE != 0);
    if mem_budget > 0 {
        sorter = sorter.memory(mem_budget);
    }
    if let Some(d) = dir {
        sorter = sorter.temp_dir(d);
    }
    let sorted = sorter
        .sort([Input::stream(stream)])
        .and_then(|s| s.write_to_fd(output));
    match sorted {
        Ok(()) => 0,
        Err(e) => match Error::of(&e) {
            Some(s) if matches!(s.place(), Place::PartialRecord { .. }) => {
                set_errno(libc::EINVAL);
                -1
            }
            Some(s) => fail(s.cause()),
            None => fail(&e),
        },
    }
}
