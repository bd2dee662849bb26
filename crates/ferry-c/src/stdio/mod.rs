//! ferry/stdio.h: source-compatible stdio on ferry streams.
//!
//! Every function settles the inline window first (see `file`), works on
//! the stream under the FILE's lock, and reports errors as glibc does:
//! a return of EOF / NULL / 0 / -1, errno, and the stream's error flag.
//!
//! * `open.rs`: fopen, fdopen, freopen, fclose, fileno, tmpfile;
//! * `rw.rs`: fread, fwrite, getc/putc's slow paths, ungetc, fputs, puts;
//! * `lines.rs`: fgets, getline, getdelim;
//! * `position.rs`: fseek, ftell, rewind, fgetpos, fsetpos;
//! * `buffering.rs`: fflush, setvbuf and friends, the flags, FILE locks;
//! * `format.rs`: the glue for printf and scanf (csrc/format.c), perror;
//! * `ext.rs`: `<stdio_ext.h>` (`__fpending`, `__fpurge`, ...);
//! * `special.rs`: popen, fmemopen, open_memstream (their glibc rules:
//!   `file::fmem`, `file::memstream`).
//!
//! The list of open FILEs and exit's flush are in `crate::registry`.

use crate::file::{
    self, errno_of, for_write, set_errno, with_stream, write_bytes, FyFile, Kind, STDERR, STDIN,
    STDOUT,
};
use ferry::stream::Backend;
use ferry::Stream;
use libc::{c_char, c_int};
use std::ffi::CStr;
use std::io::SeekFrom;
use std::os::fd::{FromRawFd, OwnedFd};

mod buffering;
mod ext;
mod format;
mod lines;
mod open;
mod position;
mod rw;
mod special;

pub use buffering::*;
pub use ext::*;
pub use format::*;
pub use lines::*;
pub use open::*;
pub use position::*;
pub use rw::*;
pub use special::*;

#[no_mangle]
pub static mut fy_stdin: *mut FyFile = STDIN.0.get();

#[no_mangle]
pub static mut fy_stdout: *mut FyFile = STDOUT.0.get();

#[no_mangle]
pub static mut fy_stderr: *mut FyFile = STDERR.0.get();

const EOF: c_int = libc::EOF;

/// open(2) flags and directions of an fopen mode, as glibc reads it.
pub(crate) fn parse_mode(mode: *const c_char) -> Option<(c_int, bool, bool)> {
    if mode.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated mode string (the C contract).
    let m = unsafe { CStr::from_ptr(mode) }.to_bytes();
    let (mut acc, mut flags) = match m.first()? {
        b'r' => (libc::O_RDONLY, 0),
        b'w' => (libc::O_WRONLY, libc::O_CREAT | libc::O_TRUNC),
        b'a' => (libc::O_WRONLY, libc::O_CREAT | libc::O_APPEND),
        _ => return None,
    };
    for &c in m.iter().skip(1).take(6) {
        match c {
            b'+' => acc = libc::O_RDWR,
            b'x' => flags |= libc::O_EXCL,
            b'e' => flags |= libc::O_CLOEXEC,
            b',' => break,
            _ => {}
        }
    }
    let read = acc != libc::O_WRONLY;
    let write = acc != libc::O_RDONLY;
    Some((acc | flags, read, write))
}

/// A FILE over an open descriptor; `name` names it in errors.
fn file_over_fd(fd: c_int, name: &str, read: bool, write: bool) -> *mut FyFile {
    file_over_fd_with(fd, name, read, write, crate::file::READ_BACKEND)
}

fn file_over_fd_with(
    fd: c_int,
    name: &str,
    read: bool,
    write: bool,
    backend: Backend,
) -> *mut FyFile {
    // SAFETY: `fd` is open and handed to the stream, which closes it.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    match Stream::from_fd_with(owned, name, backend) {
        Ok(s) => {
            // glibc: a stream that only appends starts at the end ("a+"
            // starts at 0 for reading).
            if write && !read && s.len().is_ok() {
                // SAFETY: F_GETFL on the stream's open descriptor.
                let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
                if fl >= 0 && fl & libc::O_APPEND != 0 {
                    let _ = s.seek_to(SeekFrom::End(0));
                }
            }
            let f = file::new_file(Some(s), 0, fd, read, write, Kind::Plain, true);
            if backend == Backend::Sequential {
                // SAFETY: just made; no one else sees it yet.
                let st = unsafe { &mut *(*f).st.get() };
                st.seekable = false;
                st.at_fd = true;
                if write && !read && file::is_regular(fd) {
                    // glibc: a stream that appends starts at the end (its
                    // ftell says so, and the descriptor's offset is there).
                    // SAFETY: F_GETFL and lseek on the stream's descriptor.
                    unsafe {
                        if libc::fcntl(fd, libc::F_GETFL) & libc::O_APPEND != 0 {
                            libc::lseek(fd, 0, libc::SEEK_END);
                        }
                    }
                }
            }
            crate::unistd::register(fd, f);
            f
        }
        Err(e) => {
            // A directory opened for reading: glibc's fopen succeeds and
            // reads fail with EISDIR.
            let e = errno_of(&e);
            if e == libc::EISDIR && !write {
                file::new_file(None, libc::EISDIR, -1, read, write, Kind::Plain, true)
            } else {
                set_errno(e);
                std::ptr::null_mut()
            }
        }
    }
}

fn path_name(path: *const c_char) -> String {
    // SAFETY: a NUL-terminated path (the C contract).
    unsafe { CStr::from_ptr(path) }
        .to_string_lossy()
        .into_owned()
}

fn cstr<'a>(s: *const c_char) -> &'a [u8] {
    // SAFETY: a NUL-terminated string (the C contract).
    unsafe { CStr::from_ptr(s) }.to_bytes()
}

/// `write` helper used by unistd: the FILE's bytes with its rules.
pub(crate) fn write_through(f: *mut FyFile, data: &[u8]) -> Result<(), c_int> {
    let r = with_stream(f, Err(0), for_write, |_, st| Ok(write_bytes(st, data)));
    r.map_err(|e| if e == 0 { file::errno_value() } else { e })
}
