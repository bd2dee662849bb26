//! One regular file's data: a clone (FICLONE) where the file system can
//! share extents, else the kernel's copy (copy_file_range, on two threads
//! for large files: ferry::transfer::copy_range) extent by extent so holes stay
//! holes, or `--sparse=always` making holes of zero blocks; `--atomic`
//! replacement and `--progress`.
//!
//! A killed copy never leaves a destination that looks complete and is
//! not: two threads size the file first and fill it from both ends, so a
//! new file is filled unnamed (O_TMPFILE) and linked in once complete,
//! and an existing one (or any, under `ulimit -f` or where the file
//! system has no unnamed files) is filled in order by one thread, as
//! GNU's cp fills it, so that it only ever holds a true prefix.

use super::options::{Opts, Reflink, Sparse};
use super::progress::Progress;
use super::q;
use crate::tools::common;
use ferry::transfer::{self, FdKind, Side, TransferOptions};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// What the copy of one file needs to know of the run.
pub struct Ctx<'a> {
    pub o: &'a Opts,
    /// Whether cloning failed as unsupported once (then it is not tried
    /// again: one ioctl saved per file of a tree on ext4).
    pub clone_unsupported: &'a mut bool,
}

/// The destination as it was found.
pub struct Existing<'a> {
    pub md: &'a std::fs::Metadata,
}

/// Copies regular file (or FIFO or device read as one) `src` to `to`.
/// `existing`: what is at `to` now (lstat), `None` for a new file.
pub fn copy_regular(
    src: &Path,
    sm: &std::fs::Metadata,
    to: &Path,
    existing: Option<Existing<'_>>,
    cx: &mut Ctx<'_>,
) -> Result<(), String> {
    let o = cx.o;
    let input = File::open(src).map_err(|e| {
        format!(
            "cannot open {} for reading: {}",
            q(src),
            common::describe(&e)
        )
    })?;
    // The size and holes of what was opened (a dereferenced link, a /proc
    // file), not of the name.
    let sm_fd = input.metadata().ok();
    let sm = sm_fd.as_ref().unwrap_or(sm);
    let size = sm.len();
    let progress = Progress::new(o.progress, size);
    if o.atomic {
        let r = copy_atomic(&input, sm, src, to, existing.map(|e| e.md), &progress, cx);
        progress.finish();
        return r;
    }
    // A new file has the source's permission bits (less the umask; all
    // of 0666 with --no-preserve=mode); the set-user-ID, set-group-ID and
    // sticky bits are kept only with -p. Until the owner is set, group and
    // others get nothing.
    let final_mode = if o.no_preserve_mode {
        0o666
    } else {
        sm.mode() & 0o777
    };
    let mode = if o.preserve.ownership {
        final_mode & 0o700
    } else {
        final_mode
    };
    let create = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(to)
    };
    // A new file is filled unnamed (O_TMPFILE) and given its name once
    // complete: the two-thread copy sizes the file first and fills it from
    // both ends, so a copy killed (even by SIGKILL) left a file of the full
    // size holding zeros, which looked complete. Killed now, it leaves
    // nothing.
    // Under a file size limit (`ulimit -f`) the copy is named from the
    // start and made in order, as GNU's: SIGXFSZ then leaves every byte
    // up to the limit, a true prefix.
    let size_limited = rustix::process::getrlimit(rustix::process::Resource::Fsize)
        .current
        .is_some();
    // A name ending in '/' is opened as given, for the kernel's answer.
    let slash = to.as_os_str().as_encoded_bytes().ends_with(b"/");
    let unnamed = match (&existing, o.attributes_only || size_limited || slash) {
        (None, false) => unnamed_beside(to, mode).map_err(|e| {
            format!(
                "cannot create regular file {}: {}",
                q(to),
                common::describe(&e)
            )
        })?,
        _ => None,
    };
    let in_order = unnamed.is_none();
    let out = match (&existing, unnamed) {
        (_, Some(f)) => Ok(f),
        (None, None) => create(),
        (Some(ex), None) => {
            let r = std::fs::OpenOptions::new()
                .write(true)
                .truncate(!o.attributes_only)
                .open(to);
            match r {
                Ok(f) => Ok(f),
                Err(e)
                    if e.raw_os_error() == Some(libc::ENOENT) && ex.md.file_type().is_symlink() =>
                {
                    if std::env::var_os("POSIXLY_CORRECT").is_some() {
                        std::fs::OpenOptions::new()
                            .write(true)
                            .create(true)
                            .truncate(true)
                            .mode(mode)
                            .open(to)
                    } else {
                        return Err(format!("not writing through dangling symlink {}", q(to)));
                    }
                }
                // -f: a destination that cannot be opened is removed and
                // made anew.
                Err(e) => {
                    if o.force && std::fs::remove_file(to).is_ok() {
                        create()
                    } else {
                        Err(e)
                    }
                }
            }
        }
    }
    .map_err(|e| {
        // GNU: a name with a trailing slash that is not a directory.
        let e = match e.raw_os_error() {
            Some(libc::EISDIR) if slash => io::Error::from_raw_os_error(libc::ENOTDIR),
            _ => e,
        };
        format!(
            "cannot create regular file {}: {}",
            q(to),
            common::describe(&e)
        )
    })?;
    if existing.is_none() && mode != final_mode && !o.preserve.mode {
        // The mode held back above, now that the file is there (-p sets
        // the source's after the owner).
        rustix::fs::fchmod(&out, rustix::fs::Mode::from_raw_mode(final_mode & !o.umask)).map_err(
            |e| {
                format!(
                    "setting permissions for {}: {}",
                    q(to),
                    common::describe(&e.into())
                )
            },
        )?;
    }
    if o.attributes_only {
        return Ok(());
    }
    // A destination that is not a regular file (a pipe, a terminal, a
    // device): written in order.
    if existing.is_some() {
        let out_md = out.metadata();
        if !out_md.as_ref().is_ok_and(|m| m.is_file()) {
            // The kinds from the stats made already; the tool's own
            // signal dispositions.
            let out_kind = out_md.map_or(FdKind::Other, |m| FdKind::from_mode(m.mode()));
            let opts = TransferOptions::new()
                .with_kinds(FdKind::from_mode(sm.mode()), out_kind)
                .leave_signals();
            let r = transfer::copy(input.as_fd(), out.as_fd(), &opts);
            progress.finish();
            return r.map(|_| ()).map_err(|e| err_of(src, to)(e.into_parts()));
        }
    }
    let r = fill(&input, &out, sm, (src, to), &progress, in_order, cx).and_then(|()| {
        if in_order {
            return Ok(());
        }
        give_name(&out, to).map_err(|e| {
            format!(
                "cannot create regular file {}: {}",
                q(to),
                common::describe(&e)
            )
        })
    });
    progress.finish();
    r
}

/// An unnamed regular file (O_TMPFILE) in the directory `to` will be in,
/// with `mode`; None where the file system has no unnamed files.
fn unnamed_beside(to: &Path, mode: u32) -> io::Result<Option<File>> {
    let dir = to
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(mode)
        .open(dir)
    {
        Ok(f) => Ok(Some(f)),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL | libc::ENOENT)
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Links the unnamed file `f` in as `to` (which must not exist).
fn give_name(f: &File, to: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let path = format!("/proc/self/fd/{}", f.as_raw_fd());
    rustix::fs::linkat(
        rustix::fs::CWD,
        path.as_str(),
        rustix::fs::CWD,
        to,
        rustix::fs::AtFlags::SYMLINK_FOLLOW,
    )?;
    Ok(())
}

/// The data of `input` into the empty (or truncated) `out`; `in_order`:
/// from the start on, so that the file only ever holds a true prefix of
/// the copy (a named destination, which a kill may leave behind).
fn fill(
    input: &File,
    out: &File,
    sm: &std::fs::Metadata,
    (src, to): (&Path, &Path),
    progress: &Progress,
    in_order: bool,
    cx: &mut Ctx<'_>,
) -> Result<(), String> {
    let o = cx.o;
    if o.reflink != Reflink::Never && !*cx.clone_unsupported && sm.file_type().is_file() {
        match rustix::fs::ioctl_ficlone(out, input) {
            Ok(()) => {
                progress.add(sm.len());
                return Ok(());
            }
            Err(e) if o.reflink == Reflink::Always => {
                return Err(format!(
                    "failed to clone {} from {}: {}",
                    q(to),
                    q(src),
                    common::describe(&e.into())
                ));
            }
            Err(Errno::OPNOTSUPP | Errno::XDEV | Errno::NOTTY | Errno::NOSYS) => {
                *cx.clone_unsupported = true;
            }
            Err(_) => {}
        }
    }
    if o.sparse == Sparse::Always {
        return copy_making_holes(input, out, src, to, progress);
    }
    copy_data(
        input,
        out,
        sm,
        o.sparse == Sparse::Auto,
        in_order,
        (src, to),
        progress,
    )
}

/// `--atomic`: the copy is made in a new file, synced, and renamed over
/// `to`, so that `to` is always either the old file or the whole new one.
/// The new file is unnamed (O_TMPFILE) until it is complete: a copy killed
/// by TERM or INT (or KILL) leaves no hidden `.NAME.ferry-PID` of the
/// source's size beside `to`, as it did. Where the file system has no
/// unnamed files, a hidden named one is used, removed on failure.
fn copy_atomic(
    input: &File,
    sm: &std::fs::Metadata,
    src: &Path,
    to: &Path,
    existing: Option<&std::fs::Metadata>,
    progress: &Progress,
    cx: &mut Ctx<'_>,
) -> Result<(), String> {
    let dir = to
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let base = to.file_name().unwrap_or(OsStr::new("file"));
    let mut tmp_name = OsString::from(".");
    tmp_name.push(base);
    tmp_name.push(format!(".ferry-{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    // The new file gets the mode the old one had, or the source's.
    let mode = existing.map_or(sm.mode(), |m| m.mode()) & 0o7777;
    let created = |e: io::Error, name: &Path| {
        format!(
            "cannot create regular file {}: {}",
            q(name),
            common::describe(&e)
        )
    };
    let unnamed = unnamed_beside(to, mode).map_err(|e| created(e, &tmp))?;
    let named = unnamed.is_none();
    let out = match unnamed {
        Some(f) => f,
        None => std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)
            .map_err(|e| created(e, &tmp))?,
    };
    let r = fill(input, &out, sm, (src, to), progress, false, cx)
        .and_then(|_| {
            if existing.is_some() {
                // Creation applied the umask; put back the old mode.
                out.set_permissions(std::fs::Permissions::from_mode(mode))
                    .map_err(|e| {
                        format!(
                            "cannot set permissions of {}: {}",
                            q(to),
                            common::describe(&e)
                        )
                    })?;
            }
            out.sync_all()
                .map_err(|e| format!("error writing {}: {}", q(to), common::describe(&e)))
        })
        .and_then(|_| {
            if !named {
                // No file at `to`: the complete file takes the name at once.
                match give_name(&out, to) {
                    Ok(()) => return Ok(()),
                    Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
                    Err(e) => return Err(created(e, to)),
                }
                // A name for the instant before the rename.
                give_name(&out, &tmp).map_err(|e| created(e, &tmp))?;
            }
            std::fs::rename(&tmp, to).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("cannot replace {}: {}", q(to), common::describe(&e))
            })
        });
    if r.is_err() && named {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

/// The data extents of a sparse file (SEEK_DATA/SEEK_HOLE), or the whole
/// file as one extent.
fn extents(fd: BorrowedFd<'_>, size: u64, sparse: bool) -> Vec<(u64, u64)> {
    if !sparse {
        return vec![(0, size)];
    }
    let mut v = Vec::new();
    let mut pos = 0u64;
    while pos < size {
        let Ok(data) = rustix::fs::seek(fd, rustix::fs::SeekFrom::Data(pos)) else {
            break; // ENXIO: no more data
        };
        let hole = rustix::fs::seek(fd, rustix::fs::SeekFrom::Hole(data)).unwrap_or(size);
        v.push((data, hole.min(size)));
        pos = hole;
    }
    v
}

fn err_of(src: &Path, to: &Path) -> impl Fn((Side, io::Error)) -> String {
    let (src, to) = (src.to_path_buf(), to.to_path_buf());
    move |(side, e)| {
        if side == Side::Write {
            format!("error writing {}: {}", q(&to), common::describe(&e))
        } else {
            format!("error reading {}: {}", q(&src), common::describe(&e))
        }
    }
}

fn copy_data(
    input: &File,
    out: &File,
    sm: &std::fs::Metadata,
    keep_holes: bool,
    in_order: bool,
    (src, to): (&Path, &Path),
    progress: &Progress,
) -> Result<(), String> {
    let size = sm.len();
    let sparse = keep_holes && sm.file_type().is_file() && sm.blocks() * 512 < size;
    let err = err_of(src, to);
    let (i, o) = (input.as_fd(), out.as_fd());
    let add = |n: u64| progress.add(n);
    let mut opts = TransferOptions::new().progress(&add).leave_signals();
    if in_order {
        // One thread: two would size the file first and fill it from two
        // ends.
        opts = opts.parallel_min(u64::MAX);
    }
    if sm.file_type().is_file() {
        for (from, end) in extents(i, size, sparse) {
            let n = transfer::copy_range(i, o, from..end, from, &opts)
                .map_err(|e| err(e.into_parts()))?
                .bytes;
            if n < end - from {
                // The source shrank under the copy: the copy ends where it did.
                out.set_len(from + n).map_err(|e| err((Side::Write, e)))?;
                return Ok(());
            }
        }
    }
    // The size is a hint, not the end: a file that grew, or one that
    // reports no size at all (/proc, /sys), is copied on to its real end,
    // as GNU's cp does; a FIFO or device has no size and is read to its end.
    // For a regular file one small pread says whether anything is past the
    // size (usually nothing: one syscall per file).
    let from = if sm.file_type().is_file() {
        let mut probe = [0u8; 512];
        loop {
            match rustix::io::pread(i, &mut probe[..], size) {
                Ok(0) if !sparse => return Ok(()),
                Ok(_) => break,
                Err(rustix::io::Errno::INTR) => {}
                Err(_) => break,
            }
        }
        size
    } else {
        0
    };
    let end = copy_tail(input, out, from).map_err(&err)?;
    // Holes at the end, and a destination that was longer before.
    if sm.file_type().is_file() {
        out.set_len(end).map_err(|e| err((Side::Write, e)))?;
    }
    Ok(())
}

/// Copies what `input` holds past `from` (read until end of file) to the
/// same offsets of `out`; returns the end. Usually one read that finds
/// the end at once.
fn copy_tail(input: &File, out: &File, from: u64) -> Result<u64, (Side, io::Error)> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let mut r = input;
    let seekable = r.seek(SeekFrom::Start(from)).is_ok();
    let mut w = out;
    if from > 0 && !seekable {
        return Err((Side::Read, io::Error::from_raw_os_error(libc::ESPIPE)));
    }
    let _ = w.seek(SeekFrom::Start(from));
    let mut buf = ferry::BufMut::with_capacity(128 << 10);
    buf.commit(128 << 10);
    let mut at = from;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return Ok(at),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err((Side::Read, e)),
        };
        w.write_all(&buf[..n]).map_err(|e| (Side::Write, e))?;
        at += n as u64;
    }
}

/// `--sparse=always`: every block of zeros in the source becomes a hole.
fn copy_making_holes(
    input: &File,
    out: &File,
    src: &Path,
    to: &Path,
    progress: &Progress,
) -> Result<(), String> {
    use std::io::Read;
    use std::os::unix::fs::FileExt;
    let err = err_of(src, to);
    let block = out
        .metadata()
        .map(|m| m.blksize() as usize)
        .unwrap_or(4096)
        .clamp(512, 1 << 20);
    let mut buf = vec![0u8; (128 << 10).max(block)];
    let mut r = input;
    let mut at = 0u64;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(err((Side::Read, e))),
        };
        for (k, chunk) in buf[..n].chunks(block).enumerate() {
            if chunk.iter().all(|&b| b == 0) {
                continue;
            }
            out.write_all_at(chunk, at + (k * block) as u64)
                .map_err(|e| err((Side::Write, e)))?;
        }
        at += n as u64;
        progress.add(n as u64);
    }
    out.set_len(at).map_err(|e| err((Side::Write, e)))?;
    Ok(())
}
