//! Sorted runs on disk: each run is gathered into one page-aligned buffer
//! and written to its temporary file as one asynchronous request
//! ([`crate::aio`]), waited for only when its memory is needed again, so
//! that reading and sorting the next piece overlaps the write.
//!
//! Temporary files have no name (`O_TMPFILE`) where the file system
//! allows it, and are unlinked as soon as they are open where it does
//! not: nothing is left behind on success, failure or Ctrl-C. A run is
//! read back through a ferry stream, its pages mapped where the file
//! allows it.

use super::error::{os_only, Fail, Failure};
use super::Compare;
use super::Framing;
use crate::aio::{AsyncFile, Backend, Request};
use crate::{Buf, BufMut, Stream};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// One sorted run on disk.
pub(crate) struct Run {
    file: File,
    name: String,
}

/// A run being written: its file, and the request writing it.
pub(crate) type Started = (Run, AsyncFile, Request<Buf>);

/// Writes sorted lines as a run into a new temporary file in `dir`,
/// started asynchronously (the first of each equal run only with
/// `unique`); the request gives the buffer back.
pub(crate) fn start_run(
    dir: &Path,
    lines: &[&[u8]],
    framing: Framing,
    unique: Option<&impl Compare>,
    spare: Option<BufMut>,
) -> Result<Started, Fail> {
    let term = framing.terminator();
    let total: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut out = buffer(spare, total).map_err(|e| Fail::Temp(dir.display().to_string(), e))?;
    let mut prev: Option<&[u8]> = None;
    for &l in lines {
        if let (Some(c), Some(p)) = (unique, prev) {
            if c.same(p, l) {
                continue;
            }
        }
        prev = Some(l);
        out.extend_from_slice(l);
        if let Some(t) = term {
            out.extend_from_slice(&[t]);
        }
    }
    start_run_of(dir, out.freeze())
}

/// Writes `data` (a sorted run) into a new temporary file in `dir`,
/// started asynchronously; the request gives the buffer back.
pub(crate) fn start_run_of(dir: &Path, data: Buf) -> Result<Started, Fail> {
    let (file, name) = temp_file(dir)?;
    let dup = file.try_clone().map_err(|e| Fail::Temp(name.clone(), e))?;
    let af =
        AsyncFile::from_fd(dup.into(), Backend::Auto).map_err(|e| Fail::Temp(name.clone(), e))?;
    let req = af
        .write_at(0, data)
        .map_err(|e| Fail::Temp(name.clone(), e))?;
    Ok((Run { file, name }, af, req))
}

/// How many runs one merge reads at once: a quarter of the descriptors
/// the process may open (each run holds one, and its mapping's lease may
/// take another), at most 64 and at least 2.
pub(crate) fn fan_in() -> usize {
    let open = crate::sys::open_files_limit().unwrap_or(1024);
    (open.saturating_sub(32) / 4).clamp(2, 64) as usize
}

impl Run {
    /// A run in `file` (written), named `name` in messages.
    pub(crate) fn new(file: File, name: String) -> Run {
        Run { file, name }
    }

    /// The run as a stream read from its start: its pages mapped where
    /// the file allows it (a read-only descriptor, reopened through
    /// `/proc/self/fd`, once the writable one is closed: a mapping is
    /// taken under a read lease, which no writer may hold), else read
    /// into the stream's buffers.
    pub(crate) fn into_stream(self) -> Result<(Stream, String), Failure> {
        use std::os::fd::AsRawFd;
        let Run { file, name } = self;
        let fail = |e| (Some(name.clone()), e);
        let file = match File::open(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            Ok(ro) => {
                drop(file);
                let dup = ro.try_clone().map_err(fail)?;
                if let Ok(s) =
                    Stream::from_fd_with(dup.into(), &name, crate::stream::Backend::Mapped)
                {
                    return Ok((s, name));
                }
                ro
            }
            Err(_) => file,
        };
        let s = Stream::from_fd(file.into()).map_err(fail)?;
        s.seek_to(std::io::SeekFrom::Start(0)).map_err(fail)?;
        Ok((s, name))
    }
}

/// Waits for a run's write; its error names the file. The run's memory
/// comes back for the next run where no one else holds it.
pub(crate) fn finish_run(
    run: &Run,
    af: AsyncFile,
    req: Request<Buf>,
) -> Result<Option<BufMut>, Fail> {
    let r = req.wait(None);
    let spare = req.into_inner().try_into_mut().ok();
    let c = af.close();
    r.and(c)
        .map(|_| spare)
        .map_err(|e| Fail::Temp(run.name.clone(), os_only(e)))
}

/// An empty page-aligned buffer of at least `len` bytes: `spare` if it is
/// large enough.
pub(crate) fn buffer(spare: Option<BufMut>, len: usize) -> io::Result<BufMut> {
    match spare {
        Some(mut b) if b.capacity() >= len => {
            b.clear();
            Ok(b)
        }
        // Rounded up: the next run, a few lines longer, fits too.
        _ => BufMut::try_with_capacity_aligned(
            len.checked_next_multiple_of(1 << 20)
                .and_then(|n| n.checked_add(1 << 20))
                .unwrap_or(len)
                .max(1),
            4096,
        ),
    }
}

/// A temporary file in `dir` that no name ever reaches (`O_TMPFILE`), so
/// that nothing is left behind whenever the program stops, Ctrl-C
/// included; where the file system has no such files, a named one
/// unlinked at once. The name returned is for messages.
pub(crate) fn temp_file(dir: &Path) -> Result<(File, String), Fail> {
    use std::os::unix::fs::OpenOptionsExt;
    let unnamed = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(dir);
    match unnamed {
        Ok(f) => {
            let name = format!("{} (an unnamed temporary file)", dir.join("sort").display());
            return Ok((f, name));
        }
        // No O_TMPFILE here (EOPNOTSUPP; EISDIR from kernels that ignore
        // the flag): a named file. Other errors are the directory's.
        Err(e) if !matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR)) => {
            return Err(Fail::TempDir(dir.to_path_buf(), e));
        }
        Err(_) => {}
    }
    let t = tempfile::Builder::new()
        .prefix("sort")
        .tempfile_in(dir)
        .map_err(|e| Fail::TempDir(dir.to_path_buf(), e))?;
    let name = t.path().display().to_string();
    let (file, path) = t.into_parts();
    drop(path);
    Ok((file, name))
}

/// The directory for temporary files when none is given: `$TMPDIR`, else
/// `/tmp`.
pub(crate) fn default_temp_dir() -> PathBuf {
    std::env::var_os("TMPDIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from)
}
