//! Positioning: fseek, ftell, rewind, fgetpos, fsetpos.

use super::*;
use crate::ffi::ffi_guard;
use crate::file::{self, errno_of, guard, set_errno, stream_of, with_stream, FyFile};
use libc::{c_int, c_long, off_t};
use std::io::SeekFrom;

/// A seek that fails before anything is written (an offset out of range,
/// a pipe) sets errno only, as glibc's: ferror is for failed I/O.
fn seek_only(e: c_int) -> bool {
    matches!(e, libc::EINVAL | libc::ESPIPE | libc::EOVERFLOW)
}

/// Runs a positioning `op` as `with_stream` does, but a failure that is
/// only the seek's (`seek_only`) leaves ferror alone.
fn positioning(f: *mut FyFile, op: impl FnOnce(&mut file::State) -> Result<i64, c_int>) -> i64 {
    with_stream(f, -1, stream_of, |_, st| match op(st) {
        Err(e) if seek_only(e) => {
            set_errno(e);
            Ok(-1)
        }
        r => r,
    })
}

/// A stream at the descriptor's own offset (`State::at_fd`): fseek writes
/// out what is buffered and moves the descriptor's offset, as glibc's.
fn seek_at_fd(st: &mut file::State, off: i64, whence: c_int) -> Result<i64, c_int> {
    if !matches!(whence, libc::SEEK_SET | libc::SEEK_CUR | libc::SEEK_END) {
        return Err(libc::EINVAL);
    }
    let fd = st.fd;
    let s = guard(st)?;
    if let Err(e) = s.flush() {
        // As a failed fflush: what could not be written is dropped.
        s.discard_unwritten();
        return Err(errno_of(&e));
    }
    // SAFETY: lseek on the stream's own descriptor.
    if unsafe { libc::lseek(fd, off, whence) } < 0 {
        return Err(file::errno_value());
    }
    st.push.clear();
    st.eof = false;
    Ok(0)
}

/// ftell of a stream at the descriptor's own offset: the offset (the end
/// of the file if it appends) plus what is buffered, as glibc's.
fn tell_at_fd(st: &mut file::State) -> Result<i64, c_int> {
    let fd = st.fd;
    let pending = guard(st)?.unwritten() as i64;
    // SAFETY: F_GETFL and lseek on the stream's own descriptor.
    let base = unsafe {
        let append = libc::fcntl(fd, libc::F_GETFL) & libc::O_APPEND != 0;
        let saved = file::errno_value();
        let r = if append {
            let mut sb = std::mem::MaybeUninit::<libc::stat>::uninit();
            if libc::fstat(fd, sb.as_mut_ptr()) == 0 {
                sb.assume_init().st_size
            } else {
                -1
            }
        } else {
            libc::lseek(fd, 0, libc::SEEK_CUR)
        };
        if r >= 0 {
            set_errno(saved);
        }
        r
    };
    if base < 0 {
        return Err(file::errno_value());
    }
    Ok(base + pending)
}

fn seek(f: *mut FyFile, off: i64, whence: c_int) -> c_int {
    positioning(f, |st| {
        if st.at_fd && file::is_regular(st.fd) {
            return seek_at_fd(st, off, whence);
        }
        if !st.seekable {
            return Err(libc::ESPIPE);
        }
        // As glibc's: a seek leaves the stream ready to read, with its
        // buffer (`__freading`, `__fbufsize`).
        st.last = file::Last::Read;
        st.used = true;
        if let file::Kind::Fmem(_) = st.kind {
            // glibc's rules (file::fmem): a failed seek sets errno only.
            st.push.clear();
            return Ok(match file::fmem::seek(st, off, whence) {
                Ok(_) => 0,
                Err(e) => {
                    set_errno(e);
                    -1
                }
            });
        }
        let pending = st.push.len() as i64;
        if let file::Kind::MemStream(_) = st.kind {
            // glibc's memory stream: SEEK_END counts from the write
            // position, and a failed seek sets errno only.
            let here = guard(st)?.position() as i64 - pending;
            let base = match whence {
                libc::SEEK_SET => 0,
                libc::SEEK_CUR | libc::SEEK_END => here,
                _ => return Err(libc::EINVAL),
            };
            let Some(to) = base.checked_add(off).and_then(|t| u64::try_from(t).ok()) else {
                set_errno(libc::EINVAL);
                return Ok(-1);
            };
            st.push.clear();
            guard(st)?
                .seek_to(SeekFrom::Start(to))
                .map_err(|e| errno_of(&e))?;
            file::memstream::moved(st);
            st.eof = false;
            return Ok(0);
        }
        let to = match whence {
            libc::SEEK_SET => SeekFrom::Start(u64::try_from(off).map_err(|_| libc::EINVAL)?),
            libc::SEEK_CUR => {
                // Bytes pushed back at offset 0 leave it 0 (as glibc's).
                let here = (guard(st)?.position() as i64 - pending).max(0);
                let t = here.checked_add(off).ok_or(libc::EINVAL)?;
                SeekFrom::Start(u64::try_from(t).map_err(|_| libc::EINVAL)?)
            }
            libc::SEEK_END => {
                let len = st
                    .stream
                    .as_ref()
                    .ok_or(libc::EBADF)?
                    .len()
                    .map_err(|e| errno_of(&e))?;
                let t = (len as i64).checked_add(off).ok_or(libc::EINVAL)?;
                SeekFrom::Start(u64::try_from(t).map_err(|_| libc::EINVAL)?)
            }
            _ => return Err(libc::EINVAL),
        };
        st.push.clear();
        guard(st)?.seek_to(to).map_err(|e| errno_of(&e))?;
        st.eof = false;
        Ok(0)
    }) as c_int
}

#[no_mangle]
pub extern "C" fn fy_fseek(f: *mut FyFile, off: c_long, whence: c_int) -> c_int {
    ffi_guard(-1, libc::EIO, || seek(f, off, whence))
}

#[no_mangle]
pub extern "C" fn fy_fseeko(f: *mut FyFile, off: off_t, whence: c_int) -> c_int {
    ffi_guard(-1, libc::EIO, || seek(f, off, whence))
}

fn tell(f: *mut FyFile) -> i64 {
    positioning(f, |st| {
        if st.at_fd && file::is_regular(st.fd) {
            return tell_at_fd(st);
        }
        if !st.seekable {
            return Err(libc::ESPIPE);
        }
        file::fmem::told(st);
        if matches!(st.kind, file::Kind::Plain) && guard(st)?.unwritten() > 0 {
            // Appending with bytes buffered: they go to the end of the file,
            // wherever another writer has moved it (glibc says so too).
            let fd = st.fd;
            // SAFETY: F_GETFL on the stream's own descriptor.
            if fd >= 0 && unsafe { libc::fcntl(fd, libc::F_GETFL) } & libc::O_APPEND != 0 {
                return tell_at_fd(st);
            }
        }
        let pushed = st.push.len() as i64;
        let at = guard(st)?.position() as i64 - pushed;
        if at < 0 {
            // More bytes pushed back than read (POSIX: unspecified). As
            // glibc's: a stream not yet used says 0; one that has read,
            // written or seeked (glibc: has its buffer) fails with EINVAL.
            return if st.used { Err(libc::EINVAL) } else { Ok(0) };
        }
        Ok(at)
    })
}

#[no_mangle]
pub extern "C" fn fy_ftell(f: *mut FyFile) -> c_long {
    ffi_guard(-1, libc::EIO, || tell(f))
}

#[no_mangle]
pub extern "C" fn fy_ftello(f: *mut FyFile) -> off_t {
    ffi_guard(-1, libc::EIO, || tell(f))
}

#[no_mangle]
pub extern "C" fn fy_rewind(f: *mut FyFile) {
    ffi_guard((), libc::EIO, || {
        let e = file::errno_value();
        seek(f, 0, libc::SEEK_SET);
        set_errno(e);
        fy_clearerr(f);
    })
}

#[no_mangle]
pub extern "C" fn fy_fgetpos(f: *mut FyFile, pos: *mut libc::fpos_t) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        let p = tell(f);
        if p < 0 {
            return -1;
        }
        // SAFETY: the caller's fpos_t; zeroed, then its offset (glibc's
        // fpos_t begins with the offset, __pos).
        unsafe {
            std::ptr::write_bytes(pos, 0, 1);
            *(pos as *mut i64) = p;
        }
        0
    })
}

#[no_mangle]
pub extern "C" fn fy_fsetpos(f: *mut FyFile, pos: *const libc::fpos_t) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        // SAFETY: an fpos_t from fy_fgetpos: its offset first.
        let p = unsafe { *(pos as *const i64) };
        seek(f, p, libc::SEEK_SET)
    })
}
