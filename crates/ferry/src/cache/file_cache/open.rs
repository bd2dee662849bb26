//! Opening a path for the cache: regular files only, refused before
//! they are opened.

use super::fill::named;
use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens the regular file at `path` for reading or writing, refusing
/// anything else before opening it: opening a terminal, a FIFO or a
/// device can act on it (a FIFO's writer waiting for a reader goes on, a
/// terminal becomes the controlling one, a tape rewinds), and a FIFO with
/// no reader refuses a non-blocking open for writing with `ENXIO`. The
/// type is asked of the path (`stat`, following symbolic links as `open`
/// does), then the file is opened with `O_NOCTTY` and `O_NONBLOCK` — so
/// that something put in its place meanwhile can neither become the
/// controlling terminal nor make the open wait — and asked again
/// (`fstat`). A regular file under a lease (ferry's own read lease, when
/// a writer comes; anyone's write lease) refuses a non-blocking open with
/// `EWOULDBLOCK` until the lease is given up; it is opened again
/// blocking, which waits for that.
pub(super) fn open(path: &Path, write: bool) -> io::Result<File> {
    let meta = std::fs::metadata(path).map_err(|e| named(path, e))?;
    if !meta.is_file() {
        return Err(not_regular(path));
    }
    let mut o = std::fs::OpenOptions::new();
    o.read(!write).write(write).custom_flags(libc::O_NOCTTY);
    let file = match o
        .clone()
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(path)
    {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => o.open(path),
        r => r,
    }
    .map_err(|e| named(path, e))?;
    if !file.metadata().map_err(|e| named(path, e))?.is_file() {
        return Err(not_regular(path));
    }
    Ok(file)
}

/// The error for a path that names something other than a regular file.
pub(super) fn not_regular(path: &Path) -> io::Error {
    named(
        path,
        io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"),
    )
}
