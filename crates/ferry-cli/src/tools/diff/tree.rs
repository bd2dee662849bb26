//! Comparing directories: their entries merged in byte order, `Only in`
//! and `Common subdirectories` lines, `-r` recursion, `-N` (absent files
//! compared as empty), `-x`/`-X` exclusions on base names.

use super::load::{load_path, Side};
use super::{files, Opts};
use crate::tools::common::Tool;
use crate::tools::output::Out;
use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The names in directory `d`, less the excluded ones, sorted as GNU sorts
/// them in the C locale (by bytes).
fn entries(o: &Opts, d: &Path) -> io::Result<Vec<OsString>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(d)? {
        let name = e?.file_name();
        if !excluded(o, &name) {
            v.push(name);
        }
    }
    v.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    Ok(v)
}

fn excluded(o: &Opts, name: &OsString) -> bool {
    if o.excludes.is_empty() {
        return false;
    }
    let Ok(c) = std::ffi::CString::new(name.as_bytes()) else {
        return false;
    };
    o.excludes.iter().any(|p| {
        // SAFETY: both are NUL-terminated strings we own.
        unsafe { libc::fnmatch(p.as_ptr(), c.as_ptr(), 0) == 0 }
    })
}

/// What GNU calls a file's type in "File A is a directory while file B is
/// a regular file".
fn kind(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_dir() {
        "directory"
    } else if t.is_file() {
        if m.len() == 0 {
            "regular empty file"
        } else {
            "regular file"
        }
    } else if t.is_symlink() {
        "symbolic link"
    } else if t.is_fifo() {
        "fifo"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() {
        "character special file"
    } else if t.is_block_device() {
        "block special file"
    } else {
        "weird file"
    }
}

/// A name as GNU diff writes it in its messages: its bytes.
fn shown(p: &Path) -> &[u8] {
    p.as_os_str().as_bytes()
}

/// "File A is a K while file B is a K".
fn kinds_line(xa: &Path, x: &std::fs::Metadata, xb: &Path, y: &std::fs::Metadata) -> Vec<u8> {
    [
        b"File ",
        shown(xa),
        b" is a ",
        kind(x).as_bytes(),
        b" while file ",
        shown(xb),
        b" is a ",
        kind(y).as_bytes(),
        b"\n",
    ]
    .concat()
}

/// "Common subdirectories: A and B".
fn common_line(xa: &Path, xb: &Path) -> Vec<u8> {
    [
        b"Common subdirectories: ",
        shown(xa),
        b" and ",
        shown(xb),
        b"\n",
    ]
    .concat()
}

/// `dir/name`, without doubling a slash `dir` ends with (as GNU joins
/// them).
fn child(dir: &OsString, name: &OsString) -> PathBuf {
    let mut v = dir.clone();
    if !dir.as_bytes().ends_with(b"/") {
        v.push("/");
    }
    v.push(name);
    PathBuf::from(v)
}

/// Compares directories `a` and `b` (None: absent, under -N), shown by
/// the names `an` and `bn`.
pub fn dirs<'a>(
    t: &Tool,
    o: &Opts,
    [a, b]: [Option<&Path>; 2],
    [an, bn]: [&'a OsString; 2],
    top: bool,
    out: &mut Out,
) -> io::Result<i32> {
    let list = |d: Option<&Path>, name: &'a OsString| match d {
        None => Ok(Vec::new()),
        Some(d) => entries(o, d).map_err(|e| (name, e)),
    };
    // A pair of directories that is the same pair as an ancestor's
    // (through links) is not entered again; one side looping alone is.
    let id = |d: Option<&Path>| {
        d.and_then(|d| std::fs::metadata(d).ok())
            .map(|m| (m.dev(), m.ino()))
    };
    let ids = [id(a), id(b)];
    if ids[0].is_some() && ids[0] == ids[1] {
        // A directory against itself: nothing to say, even under -s.
        return Ok(0);
    }
    let looped = ANCESTORS.with(|v| v.borrow().contains(&ids));
    if looped {
        out.flush()?;
        let which = if a.is_some() { an } else { bn };
        t.name_error(which.as_bytes(), format_args!("recursive directory loop"));
        return Ok(2);
    }
    let (mut ea, mut eb) = match (list(a, an), list(b, bn)) {
        (Ok(x), Ok(y)) => (x, y),
        (ra, rb) => {
            out.flush()?;
            for (name, e) in [ra.err(), rb.err()].into_iter().flatten() {
                t.file_error_bytes(name.as_bytes(), &e);
            }
            return Ok(2);
        }
    };
    ANCESTORS.with(|v| v.borrow_mut().push(ids));
    let r = merge(t, o, [&mut ea, &mut eb], [an, bn], top, out);
    ANCESTORS.with(|v| v.borrow_mut().pop());
    r
}

/// A directory's device and inode, if it could be read.
type DirId = Option<(u64, u64)>;

thread_local! {
    /// The (device, inode) pairs of the directories being compared,
    /// outermost first.
    static ANCESTORS: std::cell::RefCell<Vec<[DirId; 2]>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Compares the entries of two directories, in order.
fn merge(
    t: &Tool,
    o: &Opts,
    [ea, eb]: [&mut Vec<OsString>; 2],
    [an, bn]: [&OsString; 2],
    top: bool,
    out: &mut Out,
) -> io::Result<i32> {
    if let Some(first) = o.starting_file.as_ref().filter(|_| top) {
        // -S: the top directories' names before FILE are skipped.
        ea.retain(|n| n.as_bytes() >= first.as_bytes());
        eb.retain(|n| n.as_bytes() >= first.as_bytes());
    }
    let mut status = 0;
    let (mut i, mut j) = (0, 0);
    while i < ea.len() || j < eb.len() {
        let order = match (ea.get(i), eb.get(j)) {
            (Some(x), Some(y)) => x.as_bytes().cmp(y.as_bytes()),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let (in_a, in_b) = match order {
            std::cmp::Ordering::Less => (Some(&ea[i]), None),
            std::cmp::Ordering::Greater => (None, Some(&eb[j])),
            std::cmp::Ordering::Equal => (Some(&ea[i]), Some(&eb[j])),
        };
        i += usize::from(in_a.is_some());
        j += usize::from(in_b.is_some());
        let name = in_a.or(in_b).cloned().unwrap_or_default();
        let (xa, xb) = (child(an, &name), child(bn, &name));
        let s = entry(
            t,
            o,
            (an, bn),
            &name,
            (&xa, &xb),
            (in_a.is_some(), in_b.is_some()),
            out,
        )?;
        status = status.max(s);
    }
    Ok(status)
}

/// Compares one entry present in `a` (`has_a`), `b` (`has_b`) or both.
pub fn entry(
    t: &Tool,
    o: &Opts,
    (da, db): (&OsString, &OsString),
    name: &OsString,
    (xa, xb): (&Path, &Path),
    (has_a, has_b): (bool, bool),
    out: &mut Out,
) -> io::Result<i32> {
    let absent_ok = |first: bool| o.new_file || (first && o.unidirectional);
    if has_a != has_b && !absent_ok(has_b) {
        // Only on one side, and not to be compared: not even looked at.
        let dir = if has_a { da } else { db };
        out.write(&[b"Only in ", dir.as_bytes(), b": ", name.as_bytes(), b"\n"].concat())?;
        return Ok(1);
    }
    let meta = |p: &Path, has: bool| -> io::Result<Option<std::fs::Metadata>> {
        if !has {
            return Ok(None);
        }
        if o.no_deref {
            std::fs::symlink_metadata(p).map(Some)
        } else {
            std::fs::metadata(p).map(Some)
        }
    };
    let (ma, mb) = match (meta(xa, has_a), meta(xb, has_b)) {
        (Ok(x), Ok(y)) => (x, y),
        (ra, rb) => return failed(t, out, [(xa, ra.err()), (xb, rb.err())]),
    };
    match (&ma, &mb) {
        (Some(x), Some(y)) if x.is_dir() && y.is_dir() => {
            if o.recursive {
                dirs(
                    t,
                    o,
                    [Some(xa), Some(xb)],
                    [&xa.into(), &xb.into()],
                    false,
                    out,
                )
            } else {
                out.write(&common_line(xa, xb))?;
                Ok(0)
            }
        }
        (Some(x), Some(y)) if x.is_dir() || y.is_dir() => {
            out.write(&kinds_line(xa, x, xb, y))?;
            Ok(1)
        }
        (Some(x), Some(y)) if x.is_symlink() && y.is_symlink() => {
            let (ta, tb) = (std::fs::read_link(xa), std::fs::read_link(xb));
            let (ta, tb) = match (ta, tb) {
                (Ok(x), Ok(y)) => (x, y),
                (ra, rb) => return failed(t, out, [(xa, ra.err()), (xb, rb.err())]),
            };
            if ta == tb {
                if o.report_same {
                    out.write(
                        &[
                            b"Files ",
                            shown(xa),
                            b" and ",
                            shown(xb),
                            b" are identical\n",
                        ]
                        .concat(),
                    )?;
                }
                return Ok(0);
            }
            out.write(
                &[
                    b"Symbolic links ",
                    shown(xa),
                    b" and ",
                    shown(xb),
                    b" differ\n",
                ]
                .concat(),
            )?;
            Ok(1)
        }
        (Some(x), Some(y)) if x.is_symlink() != y.is_symlink() => {
            out.write(&kinds_line(xa, x, xb, y))?;
            Ok(1)
        }
        (Some(_), Some(_)) => pair(t, o, xa, xb, true, true, out),
        (Some(x), None) | (None, Some(x)) => {
            if x.is_dir() {
                if !o.recursive {
                    // An absent directory is an empty one.
                    out.write(&common_line(xa, xb))?;
                    return Ok(0);
                }
                let (pa, pb) = (ma.as_ref().map(|_| xa), mb.as_ref().map(|_| xb));
                dirs(t, o, [pa, pb], [&xa.into(), &xb.into()], false, out)
            } else {
                pair(t, o, xa, xb, ma.is_some(), mb.is_some(), out)
            }
        }
        (None, None) => Ok(0),
    }
}

/// Compares files `xa` and `xb` (either absent, read as empty) with the
/// `diff SWITCHES A B` line before a textual diff.
fn pair(
    t: &Tool,
    o: &Opts,
    xa: &Path,
    xb: &Path,
    has_a: bool,
    has_b: bool,
    out: &mut Out,
) -> io::Result<i32> {
    let side = |p: &Path, has: bool| -> io::Result<Side> {
        if !has {
            return Ok(Side::absent(p.as_os_str().as_bytes().to_vec()));
        }
        load_path(p, p.as_os_str().as_bytes().to_vec())
    };
    let (mut a, mut b) = match (side(xa, has_a), side(xb, has_b)) {
        (Ok(a), Ok(b)) => (a, b),
        (ra, rb) => return failed(t, out, [(xa, ra.err()), (xb, rb.err())]),
    };
    let same = match (&a.st, &b.st) {
        (Some(x), Some(y)) => x.st_dev == y.st_dev && x.st_ino == y.st_ino,
        _ => false,
    };
    let header = format!(
        "diff{} {} {}\n",
        o.switches,
        c_maybe_quote(xa.as_os_str().as_bytes()),
        c_maybe_quote(xb.as_os_str().as_bytes())
    );
    let names = [a.name.clone(), b.name.clone()];
    files(t, o, (&mut a, &mut b), names, same, Some(&header), out)
}

/// A name as GNU diff writes it in its `diff A B` lines: bare, or in
/// double quotes with C escapes when it holds a blank, a quote, a
/// backslash, a control character or a byte above 0x7f.
pub fn c_maybe_quote(b: &[u8]) -> String {
    let plain = |c: u8| (0x21..0x80).contains(&c) && c != b'"' && c != b'\\';
    if b.iter().all(|&c| plain(c)) {
        return String::from_utf8_lossy(b).into_owned();
    }
    let mut s = String::from("\"");
    for &c in b {
        match c {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b' ' => s.push(' '),
            0x07 => s.push_str("\\a"),
            0x08 => s.push_str("\\b"),
            0x0c => s.push_str("\\f"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            0x0b => s.push_str("\\v"),
            c if plain(c) => s.push(c as char),
            c => s.push_str(&format!("\\{c:03o}")),
        }
    }
    s.push('"');
    s
}

/// Reports the errors among `errs` (after what is already written to
/// standard output, as GNU's messages come): trouble, status 2.
fn failed(t: &Tool, out: &mut Out, errs: [(&Path, Option<io::Error>); 2]) -> io::Result<i32> {
    out.flush()?;
    for (p, e) in errs {
        if let Some(e) = e {
            t.file_error_bytes(shown(p), &e);
        }
    }
    Ok(2)
}
