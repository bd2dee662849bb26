//! `ferry cp`: copy regular files the way GNU cp does (mode from the source
//! for new files, refusal to copy a file onto itself, GNU's messages), with
//! the data moved in the kernel (copy_file_range, beside a thread reading
//! into the output's mapped pages for large files: copy::copy_split), holes
//! kept, `--atomic` replacement and a `--progress` bar.

use super::common::{self, Tool};
use super::copy::{self, Side};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

const HELP: &str = "Usage: ferry cp [OPTION]... [-T] SOURCE DEST
  or:  ferry cp [OPTION]... SOURCE... DIRECTORY
  or:  ferry cp [OPTION]... -t DIRECTORY SOURCE...
Copy SOURCE to DEST, or multiple SOURCE(s) to DIRECTORY.

      --atomic                 write to a temporary file beside DEST, fsync it,
                                 then rename it over DEST: readers see the old
                                 file or the new one, never a part
      --progress               show a progress bar on standard error (shown
                                 anyway for copies of 256 MiB or more when
                                 standard error is a terminal)
  -f, --force                  if an existing destination file cannot be
                                 opened, remove it and try again
  -t, --target-directory=DIRECTORY  copy all SOURCE arguments into DIRECTORY
  -T, --no-target-directory    treat DEST as a normal file
      --help     display this help and exit
      --version  output version information and exit

Holes in sparse sources stay holes. Files of 64 MiB and more are copied by
two threads: on ext4 one with copy_file_range and one reading straight into
the new file's mapped pages (the space is allocated first); elsewhere each
copies a half with copy_file_range. Under a file size limit (ulimit -f) the
copy is one thread, in order.
";

struct Opts {
    atomic: bool,
    progress: bool,
    /// -f: remove a destination that cannot be opened, and try again.
    force: bool,
}

fn q(p: &Path) -> String {
    format!("'{}'", p.display())
}

pub fn main(t: &Tool, args: Vec<OsString>) -> i32 {
    use lexopt::prelude::*;
    let mut o = Opts {
        atomic: false,
        progress: false,
        force: false,
    };
    let mut target_dir: Option<PathBuf> = None;
    let mut no_target_dir = false;
    let mut ops: Vec<PathBuf> = Vec::new();
    let mut p = lexopt::Parser::from_args(args);
    loop {
        let arg = common::next_arg!(t, p, HELP, 1);
        match arg {
            Long("atomic") => o.atomic = true,
            Short('f') | Long("force") => o.force = true,
            Long("progress") => o.progress = true,
            Short('t') | Long("target-directory") => match p.value() {
                Ok(v) => target_dir = Some(v.into()),
                Err(e) => {
                    t.bad_option(e);
                    return 1;
                }
            },
            Short('T') | Long("no-target-directory") => no_target_dir = true,
            Value(v) => ops.push(v.into()),
            other => {
                t.bad_option(other.unexpected());
                return 1;
            }
        }
    }
    let (sources, dest_dir, dest) = if let Some(d) = target_dir {
        if ops.is_empty() {
            t.usage_error(format_args!("missing file operand"));
            return 1;
        }
        (ops, Some(d), None)
    } else {
        match ops.len() {
            0 => {
                t.usage_error(format_args!("missing file operand"));
                return 1;
            }
            1 => {
                t.usage_error(format_args!(
                    "missing destination file operand after {}",
                    q(&ops[0])
                ));
                return 1;
            }
            _ => {
                let last = ops.pop().unwrap_or_default();
                let is_dir = std::fs::metadata(&last)
                    .map(|m| m.is_dir())
                    .unwrap_or(false);
                if no_target_dir {
                    if ops.len() > 1 {
                        t.usage_error(format_args!("extra operand {}", q(&ops[1])));
                        return 1;
                    }
                    (ops, None, Some(last))
                } else if is_dir {
                    (ops, Some(last), None)
                } else if ops.len() > 1 {
                    t.error(format_args!("target {}: Not a directory", q(&last)));
                    return 1;
                } else {
                    (ops, None, Some(last))
                }
            }
        }
    };
    let mut status = 0;
    for src in &sources {
        let to = match (&dest_dir, &dest) {
            (Some(d), _) => d.join(src.file_name().unwrap_or(src.as_os_str())),
            (None, Some(d)) => d.clone(),
            (None, None) => unreachable!("a destination was chosen above"),
        };
        if let Err(msg) = copy_one(src, &to, &o) {
            t.error(format_args!("{msg}"));
            status = 1;
        }
    }
    status
}

fn copy_one(src: &Path, to: &Path, o: &Opts) -> Result<(), String> {
    let sm = std::fs::metadata(src)
        .map_err(|e| format!("cannot stat {}: {}", q(src), common::describe(&e)))?;
    if sm.is_dir() {
        return Err(format!("-r not specified; omitting directory {}", q(src)));
    }
    let existing = std::fs::metadata(to).ok();
    if let Some(dm) = &existing {
        if dm.dev() == sm.dev() && dm.ino() == sm.ino() {
            return Err(format!("{} and {} are the same file", q(src), q(to)));
        }
        if dm.is_dir() {
            return Err(format!(
                "cannot overwrite directory {} with non-directory",
                q(to)
            ));
        }
    }
    let input = File::open(src).map_err(|e| {
        format!(
            "cannot open {} for reading: {}",
            q(src),
            common::describe(&e)
        )
    })?;
    let size = sm.len();
    let progress = Progress::new(o.progress, size);
    if o.atomic {
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
        let mode = existing.as_ref().map_or(sm.mode(), |m| m.mode()) & 0o7777;
        let out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)
            .map_err(|e| {
                format!(
                    "cannot create regular file {}: {}",
                    q(&tmp),
                    common::describe(&e)
                )
            })?;
        let r = copy_data(&input, &out, &sm, src, to, &progress)
            .and_then(|_| {
                if existing.is_some() {
                    // create_new applied the umask; put back the old mode.
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
                std::fs::rename(&tmp, to)
                    .map_err(|e| format!("cannot replace {}: {}", q(to), common::describe(&e)))
            });
        if r.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        progress.finish();
        return r;
    }
    let open = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(sm.mode() & 0o7777)
            .open(to)
    };
    // -f: a destination that cannot be opened is removed and made anew.
    let out = open()
        .or_else(|e| {
            if o.force && existing.is_some() && std::fs::remove_file(to).is_ok() {
                open()
            } else {
                Err(e)
            }
        })
        .map_err(|e| {
            format!(
                "cannot create regular file {}: {}",
                q(to),
                common::describe(&e)
            )
        })?;
    let r = copy_data(&input, &out, &sm, src, to, &progress);
    progress.finish();
    r
}

/// Progress on standard error: a bar on a terminal; when asked for with
/// standard error elsewhere (a log), a line at every tenth and at the end.
enum Progress {
    None,
    Bar(indicatif::ProgressBar),
    Text {
        total: u64,
        done: std::sync::atomic::AtomicU64,
        started: std::time::Instant,
    },
}

impl Progress {
    fn new(asked: bool, size: u64) -> Progress {
        use std::io::IsTerminal;
        let tty = io::stderr().is_terminal();
        if tty && (asked || size >= 256 << 20) {
            let bar = indicatif::ProgressBar::new(size);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bytes}/{total_bytes} [{wide_bar}] {bytes_per_sec} {eta}",
            ) {
                bar.set_style(style);
            }
            return Progress::Bar(bar);
        }
        if asked {
            return Progress::Text {
                total: size,
                done: std::sync::atomic::AtomicU64::new(0),
                started: std::time::Instant::now(),
            };
        }
        Progress::None
    }

    fn add(&self, n: u64) {
        match self {
            Progress::None => {}
            Progress::Bar(b) => b.inc(n),
            Progress::Text { total, done, .. } => {
                let before = done.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                let after = before + n;
                let t = (*total).max(1);
                if before * 10 / t != after * 10 / t && after < *total {
                    eprintln!("ferry cp: {}% ({after} of {total} bytes)", after * 100 / t);
                }
            }
        }
    }

    fn finish(&self) {
        match self {
            Progress::None => {}
            Progress::Bar(b) => b.finish(),
            Progress::Text { total, started, .. } => {
                let secs = started.elapsed().as_secs_f64();
                eprintln!(
                    "ferry cp: 100% ({total} bytes in {secs:.2} s, {:.0} MB/s)",
                    *total as f64 / secs.max(1e-9) / 1e6
                );
            }
        }
    }
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

fn copy_data(
    input: &File,
    out: &File,
    sm: &std::fs::Metadata,
    src: &Path,
    to: &Path,
    progress: &Progress,
) -> Result<(), String> {
    let size = sm.len();
    let sparse = sm.blocks() * 512 < size;
    let err = |(side, e): (Side, io::Error)| {
        if side == Side::Write {
            format!("error writing {}: {}", q(to), common::describe(&e))
        } else {
            format!("error reading {}: {}", q(src), common::describe(&e))
        }
    };
    let (i, o) = (input.as_fd(), out.as_fd());
    let add = |n: u64| progress.add(n);
    for (from, end) in extents(i, size, sparse) {
        let n = copy::copy_split(i, o, (from, end), from, &add).map_err(err)?;
        if n < end - from {
            // The source shrank under the copy: the copy ends where it did.
            out.set_len(from + n).map_err(|e| err((Side::Write, e)))?;
            return Ok(());
        }
    }
    // The size is a hint, not the end: a file that grew, or one that
    // reports no size at all (/proc, /sys), is copied on to its real end,
    // as GNU's cp does.
    let end = copy_tail(input, out, size).map_err(err)?;
    // Holes at the end, and a destination that was longer before.
    out.set_len(end).map_err(|e| err((Side::Write, e)))?;
    Ok(())
}

/// Copies what `input` holds past `from` (read until end of file) to the
/// same offsets of `out`; returns the end. Usually one read that finds
/// the end at once.
fn copy_tail(input: &File, out: &File, from: u64) -> Result<u64, (Side, io::Error)> {
    use std::io::{Read, Seek, SeekFrom};
    use std::os::unix::fs::FileExt;
    let mut r = input;
    r.seek(SeekFrom::Start(from)).map_err(|e| (Side::Read, e))?;
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
        out.write_all_at(&buf[..n], at)
            .map_err(|e| (Side::Write, e))?;
        at += n as u64;
    }
}
