//! Which files an operand stands for: `-r`/`-R` directory walks in GNU's
//! order (each directory's entries as the directory lists them, depth
//! first), `--include`/`--exclude`/`--exclude-dir` as GNU applies them, and
//! `-d`/`-D` for directories and devices.
//!
//! Glob patterns are matched by the C library's `fnmatch` with no flags
//! (so `*` matches `/` and a leading dot), as GNU grep matches them.

use super::common::Tool;
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Directories {
    Read,
    Skip,
    Recurse,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Devices {
    /// Read those named on the command line, skip those found in a walk.
    Default,
    Read,
    Skip,
}

/// `--include` / `--exclude` / `--exclude-dir` patterns, in order.
#[derive(Default)]
pub(super) struct Filter {
    /// (pattern, is --include)
    files: Vec<(CString, bool)>,
    dirs: Vec<CString>,
}

fn c_string(p: &OsStr) -> CString {
    // A NUL cannot be in a file name: cut the pattern there.
    let b = p.as_bytes();
    let b = &b[..memchr::memchr(0, b).unwrap_or(b.len())];
    CString::new(b).unwrap_or_default()
}

fn fnmatch(pattern: &CString, name: &[u8]) -> bool {
    let Ok(n) = CString::new(name) else {
        return false;
    };
    // SAFETY: both are NUL-terminated strings that outlive the call.
    unsafe { libc::fnmatch(pattern.as_ptr(), n.as_ptr(), 0) == 0 }
}

/// A pattern matches a name found in a walk when it matches the whole base
/// name; a command-line name, when it matches the whole name or any part
/// after a `/`.
fn matches(pattern: &CString, name: &[u8], command_line: bool) -> bool {
    if fnmatch(pattern, name) {
        return true;
    }
    if !command_line {
        return false;
    }
    let mut i = 0;
    while let Some(k) = memchr::memchr(b'/', &name[i..]) {
        let after = i + k + 1;
        if name.get(after).is_some_and(|&b| b != b'/') && fnmatch(pattern, &name[after..]) {
            return true;
        }
        i = after;
    }
    false
}

impl Filter {
    pub(super) fn add(&mut self, p: &OsStr, include: bool) {
        self.files.push((c_string(p), include));
    }

    pub(super) fn add_dir(&mut self, p: &OsStr) {
        self.dirs.push(c_string(p));
    }

    /// GNU's rule: the last pattern that matches decides; when none does,
    /// a file is skipped if the first pattern was an `--include`.
    fn skips_file(&self, name: &[u8], command_line: bool) -> bool {
        let Some((_, first_include)) = self.files.first() else {
            return false;
        };
        match self
            .files
            .iter()
            .rev()
            .find(|(p, _)| matches(p, name, command_line))
        {
            Some((_, include)) => !include,
            None => *first_include,
        }
    }

    fn skips_dir(&self, name: &[u8], command_line: bool) -> bool {
        self.dirs.iter().any(|p| matches(p, name, command_line))
    }
}

pub(super) struct Walk {
    pub directories: Directories,
    /// `-R`: symbolic links are followed everywhere (else only those named
    /// on the command line).
    pub deref: bool,
    pub devices: Devices,
    pub filter: Filter,
}

/// One file to search: where it is and how output names it.
pub(super) struct Found<'a> {
    pub path: &'a OsStr,
    pub name: &'a [u8],
    /// Found by walking a directory (not named on the command line).
    pub walked: bool,
}

/// What the search of one file says: go on, stop everything (`-q` found
/// a line), or end with this status (a write error).
pub(super) type Next = Result<bool, i32>;

fn is_device(ft: &std::fs::FileType) -> bool {
    ft.is_char_device() || ft.is_block_device() || ft.is_fifo() || ft.is_socket()
}

impl Walk {
    pub(super) fn recursive(&self) -> bool {
        self.directories == Directories::Recurse
    }

    /// The files operand `op` stands for, each given to `f`. `implicit`:
    /// the `.` of `-r` without operands (names then have no `./`).
    /// Problems are reported (unless `quiet`) and set `trouble`.
    pub(super) fn operand(
        &self,
        t: &Tool,
        op: &OsString,
        implicit: bool,
        quiet: bool,
        trouble: &mut bool,
        f: &mut dyn FnMut(Found<'_>) -> Next,
    ) -> Next {
        let name = op.as_bytes();
        if op == "-" {
            return f(Found {
                path: op,
                name,
                walked: false,
            });
        }
        // Named on the command line: symbolic links are followed. A name
        // that cannot be looked at is opened anyway, for the open error
        // (GNU reports a missing file even when --exclude names it).
        let meta = std::fs::metadata(op);
        if let Ok(m) = &meta {
            let ft = m.file_type();
            if ft.is_dir() {
                match self.directories {
                    Directories::Skip => return Ok(true),
                    Directories::Read => {}
                    Directories::Recurse => {
                        if !implicit && self.filter.skips_dir(op.as_bytes(), true) {
                            return Ok(true);
                        }
                        let mut seen = vec![(m.dev(), m.ino())];
                        let prefix = if implicit { None } else { Some(name) };
                        return self.dir(t, Path::new(op), prefix, quiet, trouble, &mut seen, f);
                    }
                }
            } else {
                if self.filter.skips_file(op.as_bytes(), true) {
                    return Ok(true);
                }
                // GNU opens a command-line name before it looks at its
                // type: a socket cannot be opened, and that is reported.
                if is_device(&ft) && !ft.is_socket() && self.devices == Devices::Skip {
                    return Ok(true);
                }
            }
        }
        f(Found {
            path: op,
            name,
            walked: false,
        })
    }

    /// Walks directory `path` (shown as `prefix`, or with no prefix for
    /// the implicit `.`). `seen`: the directories above, for loops.
    #[allow(clippy::too_many_arguments)]
    fn dir(
        &self,
        t: &Tool,
        path: &Path,
        prefix: Option<&[u8]>,
        quiet: bool,
        trouble: &mut bool,
        seen: &mut Vec<(u64, u64)>,
        f: &mut dyn FnMut(Found<'_>) -> Next,
    ) -> Next {
        let opened = rustix::fs::open(path, dir_flags(), rustix::fs::Mode::empty());
        self.walk_fd(t, opened, prefix, quiet, trouble, seen, f)
    }

    /// Walks the directory open on `fd`. The walk goes from directory
    /// descriptor to directory descriptor (`openat`), and each file is
    /// opened as `/proc/self/fd/DIR/NAME`: a tree deeper than PATH_MAX is
    /// searched as GNU's fts searches it (full paths failed with "File
    /// name too long"). One descriptor is held per level.
    #[allow(clippy::too_many_arguments)]
    fn walk_fd(
        &self,
        t: &Tool,
        fd: rustix::io::Result<std::os::fd::OwnedFd>,
        prefix: Option<&[u8]>,
        quiet: bool,
        trouble: &mut bool,
        seen: &mut Vec<(u64, u64)>,
        f: &mut dyn FnMut(Found<'_>) -> Next,
    ) -> Next {
        use std::os::fd::{AsFd, AsRawFd};
        use std::os::unix::ffi::OsStringExt;
        let shown = |base: &[u8]| -> Vec<u8> {
            let mut n = Vec::new();
            if let Some(p) = prefix {
                n.extend_from_slice(p);
                if !p.ends_with(b"/") {
                    n.push(b'/');
                }
            }
            n.extend_from_slice(base);
            n
        };
        let failed = |e: std::io::Error, trouble: &mut bool| {
            if !quiet {
                t.file_error_bytes(prefix.unwrap_or(b"."), &e);
            }
            *trouble = true;
        };
        let fd = match fd {
            Ok(fd) => fd,
            Err(e) => {
                failed(e.into(), trouble);
                return Ok(true);
            }
        };
        let mut entries = match rustix::fs::Dir::read_from(&fd) {
            Ok(d) => d,
            Err(e) => {
                failed(e.into(), trouble);
                return Ok(true);
            }
        };
        while let Some(e) = entries.read() {
            let e = match e {
                Ok(e) => e,
                Err(err) => {
                    failed(err.into(), trouble);
                    break;
                }
            };
            let base_c = e.file_name();
            if base_c == c"." || base_c == c".." {
                continue;
            }
            let base = OsString::from_vec(base_c.to_bytes().to_vec());
            let name = shown(base.as_bytes());
            let mut full = OsString::from(format!("/proc/self/fd/{}/", fd.as_raw_fd()));
            full.push(&base);
            use rustix::fs::{AtFlags, FileType};
            let stat_at = |flags| rustix::fs::statat(fd.as_fd(), base_c, flags);
            let mut ft = e.file_type();
            if ft == FileType::Unknown {
                match stat_at(AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => ft = FileType::from_raw_mode(st.st_mode),
                    Err(_) => continue,
                }
            }
            let mut meta = None;
            if ft == FileType::Symlink {
                if !self.deref {
                    continue;
                }
                match stat_at(AtFlags::empty()) {
                    Ok(st) => {
                        ft = FileType::from_raw_mode(st.st_mode);
                        meta = Some(st);
                    }
                    Err(err) => {
                        if !quiet {
                            t.file_error_bytes(&name, &err.into());
                        }
                        *trouble = true;
                        continue;
                    }
                }
            }
            if ft == FileType::Directory {
                if self.filter.skips_dir(base.as_bytes(), false) {
                    continue;
                }
                let m = match meta {
                    Some(m) => m,
                    None => match stat_at(AtFlags::empty()) {
                        Ok(m) => m,
                        Err(err) => {
                            if !quiet {
                                t.file_error_bytes(&name, &err.into());
                            }
                            *trouble = true;
                            continue;
                        }
                    },
                };
                let id = (m.st_dev, m.st_ino);
                if seen.contains(&id) {
                    if !quiet {
                        t.name_error(&name, format_args!("warning: recursive directory loop"));
                    }
                    continue;
                }
                seen.push(id);
                let sub =
                    rustix::fs::openat(fd.as_fd(), base_c, dir_flags(), rustix::fs::Mode::empty());
                let go = self.walk_fd(t, sub, Some(&name), quiet, trouble, seen, f)?;
                seen.pop();
                if !go {
                    return Ok(false);
                }
                continue;
            }
            if self.filter.skips_file(base.as_bytes(), false) {
                continue;
            }
            let device = matches!(
                ft,
                FileType::CharacterDevice
                    | FileType::BlockDevice
                    | FileType::Fifo
                    | FileType::Socket
            );
            if device && self.devices != Devices::Read {
                continue;
            }
            if !f(Found {
                path: full.as_os_str(),
                name: &name,
                walked: true,
            })? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// How a directory of a walk is opened.
fn dir_flags() -> rustix::fs::OFlags {
    use rustix::fs::OFlags;
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(pats: &[(&str, bool)]) -> Filter {
        let mut f = Filter::default();
        for (p, inc) in pats {
            f.add(OsStr::new(p), *inc);
        }
        f
    }

    #[test]
    fn the_last_matching_pattern_decides() {
        let f = filter(&[("*.c", true), ("a*", false)]);
        assert!(f.skips_file(b"a.c", false));
        assert!(!f.skips_file(b"z.c", false));
        assert!(f.skips_file(b"b.h", false));
        let f = filter(&[("a*", false), ("*.c", true)]);
        assert!(!f.skips_file(b"a.c", false));
        assert!(!f.skips_file(b"b.h", false));
        assert!(f.skips_file(b"ab", false));
    }

    #[test]
    fn command_line_names_match_after_any_slash() {
        let f = filter(&[("a.c", false)]);
        assert!(f.skips_file(b"./a.c", true));
        assert!(f.skips_file(b"x/y/a.c", true));
        assert!(!f.skips_file(b"x/a.c/", true));
        assert!(!f.skips_file(b"./a.c", false));
    }
}
