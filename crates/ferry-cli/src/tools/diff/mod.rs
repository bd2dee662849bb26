//! `ferry diff`: GNU diff's normal, unified (`-u`, `-U N`), context (`-c`,
//! `-C N`) and side-by-side (`-y`, `-W N`) output; the ignore options
//! (`-i`, `-w`, `-b`, `-B`, `-E`, `-Z`, `--strip-trailing-cr`); `-p`,
//! `-t`, `-T`, `--color`; directories (`-r`, `-N`, `-x`, `-X`); `-q`,
//! `-s`, `-a`, `--label`, its binary-file check and exit statuses.
//!
//! Regular files are read to their end through a stream, mapped without a
//! read lease where the stream maps (`common::input_options`: a lease would
//! hold writers of the file back while diff runs, which GNU's diff never
//! does), and their lines are handed to the diff as slices of the mapping
//! — nothing is copied; what the stream reads into buffers (small files,
//! /proc files, bytes past the size seen at the start) is joined into one. The edit script comes from `imara-diff`'s Myers;
//! its change groups are then slid the way GNU diff slides them, so that
//! ambiguous changes are shown where GNU shows them (`compare`).

mod compare;
mod format;
mod opts;
mod side;
mod tree;

use super::common::{self, Tool};
use super::output::Out;
use compare::Compared;
use ferry::Buf;
pub use opts::Opts;
use opts::Style as OutStyle;
use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// GNU diff decides "binary" from its first buffer: one block.
const BINARY_PROBE: usize = 4096;

pub fn main(t: &Tool, args: Vec<OsString>, typed: &[OsString]) -> i32 {
    let (o, ops) = match opts::parse(t, args, typed) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let mut out = super::output::stdout();
    let r = (|| {
        let mut code = 0;
        match &o.against {
            // --from-file / --to-file: that file with each operand.
            Some((f, first)) => {
                for op in &ops {
                    let (a, b) = if *first { (f, op) } else { (op, f) };
                    code = code.max(run(t, &o, a, b, &mut out)?);
                }
            }
            None => code = run(t, &o, &ops[0], &ops[1], &mut out)?,
        }
        out.flush()?;
        Ok(code)
    })();
    match r {
        Ok(code) => code,
        Err(e) => {
            // diffutils words it as cmp does, and it is trouble (2).
            common::end_if_sigpipe(&e);
            t.error(format_args!("standard output: {}", common::describe(&e)));
            2
        }
    }
}

/// One side of the comparison.
pub struct Side {
    /// How messages name it: bytes, as file names are.
    name: Vec<u8>,
    data: Buf,
    st: Option<rustix::fs::Stat>,
    /// A pipe or device whose first block held a NUL: binary, and read
    /// no further than that block (`data`) until asked (/dev/zero never
    /// ends). The rest of it.
    more: Option<std::fs::File>,
}

impl Side {
    /// An absent file under -N: empty, dated the epoch.
    fn absent(name: Vec<u8>) -> Side {
        Side {
            name,
            data: Buf::from_owner(Vec::new()),
            st: None,
            more: None,
        }
    }

    /// Reads the rest of a binary pipe or device (-a asked for its lines).
    fn read_more(&mut self) -> io::Result<()> {
        if let Some(f) = self.more.take() {
            let mut v = self.data.to_vec();
            read_all(&f, &mut v)?;
            self.data = Buf::from_owner(v);
        }
        Ok(())
    }
}

/// Reads `f` to its end onto `v`, growing it with `try_reserve`: input
/// larger than memory is `OutOfMemory` (GNU's "memory exhausted"), not
/// an abort.
fn read_all(mut f: &std::fs::File, v: &mut Vec<u8>) -> io::Result<()> {
    use std::io::Read;
    loop {
        if v.len() == v.capacity() {
            v.try_reserve(v.capacity().max(64 << 10))
                .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        }
        let spare = v.capacity() - v.len();
        let at = v.len();
        v.resize(at + spare, 0);
        let n = match f.read(&mut v[at..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
            Err(e) => {
                v.truncate(at);
                return Err(e);
            }
        };
        v.truncate(at + n);
        if n == 0 && spare > 0 {
            return Ok(());
        }
    }
}

/// A pipe, device or standard input: its first block, and, if that holds
/// a NUL (binary, as GNU decides from its first buffer), the file to read
/// the rest from later; otherwise all of it.
fn read_unsized(f: std::fs::File) -> io::Result<(Buf, Option<std::fs::File>)> {
    use std::io::Read;
    let mut v = vec![0u8; BINARY_PROBE];
    let mut n = 0;
    while n < v.len() {
        match (&f).read(&mut v[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    v.truncate(n);
    if n == BINARY_PROBE && probe_binary(&v) {
        return Ok((Buf::from_owner(v), Some(f)));
    }
    if n == BINARY_PROBE {
        read_all(&f, &mut v)?;
    }
    Ok((Buf::from_owner(v), None))
}

/// True if the bytes `a` holds and the rest of its file equal `b`'s: the
/// comparison of binary files, a block at a time, stopping at the first
/// difference (what GNU does with files it will only call different).
fn same_bytes(a: &Side, b: &Side) -> io::Result<bool> {
    use std::io::Read;
    let mut pend = [a.data.to_vec(), b.data.to_vec()];
    let mut more = [a.more.as_ref(), b.more.as_ref()];
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = pend[0].len().min(pend[1].len());
        if pend[0][..n] != pend[1][..n] {
            return Ok(false);
        }
        for (p, m) in pend.iter_mut().zip(more.iter_mut()) {
            p.drain(..n);
            if let (true, Some(mut f)) = (p.is_empty(), *m) {
                let k = loop {
                    match f.read(&mut buf) {
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        r => break r?,
                    }
                };
                if k == 0 {
                    *m = None;
                }
                p.extend_from_slice(&buf[..k]);
            }
        }
        let done = [0, 1].map(|i| pend[i].is_empty() && more[i].is_none());
        if done[0] || done[1] {
            return Ok(done[0] && done[1]);
        }
    }
}

/// Reads an operand: a regular file is mapped, anything else read whole.
fn load(name: &OsString, other: &OsString) -> io::Result<Side> {
    use std::os::fd::AsFd;
    let shown = name.as_bytes().to_vec();
    if name == "-" {
        let st = rustix::fs::fstat(io::stdin()).ok();
        // Read through the descriptor, not std's Stdin, which takes EBADF
        // (a closed standard input) for an empty one: GNU says so.
        let fd = io::stdin().as_fd().try_clone_to_owned()?;
        let (data, more) = read_unsized(std::fs::File::from(fd))?;
        return Ok(Side {
            name: shown,
            data,
            st,
            more,
        });
    }
    let mut path = PathBuf::from(name);
    let mut shown = shown;
    if std::fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
        // `diff FILE DIR` compares FILE with DIR/FILE's base name.
        let base = Path::new(other).file_name();
        if other == "-" || base.is_none() || std::fs::metadata(other).is_ok_and(|m| m.is_dir()) {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        path.push(base.unwrap_or_default());
        shown = path.as_os_str().as_bytes().to_vec();
    }
    load_path(&path, shown)
}

/// Reads the file at `path`, shown as `shown`.
fn load_path(path: &Path, shown: Vec<u8>) -> io::Result<Side> {
    let f = std::fs::File::open(path).map_err(|e| match e.raw_os_error() {
        Some(n) => io::Error::from_raw_os_error(n),
        None => e,
    })?;
    let st = rustix::fs::fstat(&f).ok();
    let data = match &st {
        Some(s) if common::is_reg(s) => {
            let s = ferry::Stream::open(path, &common::input_options()).map_err(common::os_only)?;
            (read_to_end(&s).map_err(common::os_only)?, None)
        }
        _ => read_unsized(f)?,
    };
    Ok(Side {
        name: shown,
        data: data.0,
        st,
        more: data.1,
    })
}

/// All of a regular file, read to its end whatever its size said when it
/// was opened (as GNU reads it): a file rewritten meanwhile is what was
/// read, and one whose size says nothing (/proc, /sys: 0, or a page) is
/// read whole. One region where the stream maps the file (no copy);
/// pieces read past the size are joined into one buffer.
fn read_to_end(s: &ferry::Stream) -> io::Result<Buf> {
    let mut parts: Vec<Buf> = Vec::new();
    loop {
        let left = s.len()?.saturating_sub(s.position());
        let want = usize::try_from(left).unwrap_or(usize::MAX).max(64 << 10);
        let r = s.salloc(want)?;
        if r.is_empty() {
            break;
        }
        parts.push(r.into_buf());
    }
    if parts.len() <= 1 {
        return Ok(parts.pop().unwrap_or_default());
    }
    let total = parts.iter().map(|b| b.len()).sum();
    let mut v = Vec::new();
    v.try_reserve_exact(total)
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    for b in &parts {
        v.extend_from_slice(b);
    }
    Ok(Buf::from_owner(v))
}

/// Reports an operand that could not be read: GNU's "memory exhausted"
/// (no name) when it does not fit in memory.
fn load_failed(t: &Tool, name: &[u8], e: &io::Error) {
    if e.kind() == io::ErrorKind::OutOfMemory {
        t.error(format_args!("memory exhausted"));
    } else {
        t.file_error_bytes(name, e);
    }
}

/// True if `an` and `bn` are the same file (device and inode) read from
/// the same offset (standard input from where it stands; a pipe has none).
fn same_input(an: &OsString, bn: &OsString) -> bool {
    let at = |n: &OsString| {
        if n == "-" {
            let st = rustix::fs::fstat(io::stdin()).ok()?;
            let pos = rustix::fs::seek(io::stdin(), rustix::fs::SeekFrom::Current(0))
                .map_or(u64::MAX, |p| p);
            Some((st.st_dev, st.st_ino, pos))
        } else {
            let st = rustix::fs::stat(n.as_os_str()).ok()?;
            Some((st.st_dev, st.st_ino, 0))
        }
    };
    matches!((at(an), at(bn)), (Some(a), Some(b)) if a == b)
}

fn run(t: &Tool, o: &Opts, an: &OsString, bn: &OsString, out: &mut Out) -> io::Result<i32> {
    let is_dir = |n: &OsString| n != "-" && std::fs::metadata(n).is_ok_and(|m| m.is_dir());
    if o.no_deref {
        let link = |n: &OsString| std::fs::symlink_metadata(n).ok().filter(|m| m.is_symlink());
        if let (Some(_), _) | (_, Some(_)) = (link(an), link(bn)) {
            let (pa, pb) = (PathBuf::from(an), PathBuf::from(bn));
            return tree::entry(t, o, (an, bn), an, (&pa, &pb), (true, true), out);
        }
    }
    if is_dir(an) && is_dir(bn) {
        return tree::dirs(
            t,
            o,
            [Some(Path::new(an)), Some(Path::new(bn))],
            [an, bn],
            true,
            out,
        );
    }
    // A directory against standard input, or against a file that is not
    // there: GNU's words, before any DIR/FILE is looked for (which added
    // a bogus "DIR/nonexist: No such file or directory").
    if (an == "-" && is_dir(bn)) || (bn == "-" && is_dir(an)) {
        t.error(format_args!("cannot compare '-' to a directory"));
        return Ok(2);
    }
    if !o.new_file && !o.unidirectional {
        for (d, f) in [(an, bn), (bn, an)] {
            if f != "-" && is_dir(d) {
                if let Err(e) = std::fs::metadata(f) {
                    load_failed(t, f.as_bytes(), &common::os_only(e));
                    return Ok(2);
                }
            }
        }
    }
    // The same file from the same place (`diff - -`, `diff /dev/zero
    // /dev/zero`): identical without reading, as GNU finds them (reading
    // first compared standard input's lines with nothing, and read
    // /dev/zero until memory ran out). Side by side shows the lines.
    if (o.style != OutStyle::Side || o.brief) && !is_dir(an) && !is_dir(bn) && same_input(an, bn) {
        let side = |n: &OsString| Side {
            name: n.as_bytes().to_vec(),
            data: Buf::new(),
            st: None,
            more: None,
        };
        let (a, b) = (side(an), side(bn));
        return files(o, &a, &b, labels(o, &a, &b), true, None, out);
    }
    let enoent =
        |r: &io::Result<Side>| matches!(r, Err(e) if e.raw_os_error() == Some(libc::ENOENT));
    let (ra, rb) = (load(an, bn), load(bn, an));
    let (mut ra, mut rb) = (ra, rb);
    if o.text {
        // -a: the lines of a binary pipe or device too.
        for r in [&mut ra, &mut rb] {
            if let Ok(side) = r {
                if let Err(e) = side.read_more() {
                    *r = Err(e);
                }
            }
        }
    }
    // -N reads an absent file as empty, when the other one exists.
    let absent_a = enoent(&ra) && (o.new_file || o.unidirectional) && rb.is_ok();
    let absent_b = enoent(&rb) && o.new_file && ra.is_ok();
    let a = match ra {
        Ok(s) => s,
        Err(_) if absent_a => Side::absent(dir_name(an, bn)),
        Err(e) => {
            load_failed(t, &dir_name(an, bn), &e);
            if let Err(e) = &rb {
                load_failed(t, &dir_name(bn, an), e);
            }
            return Ok(2);
        }
    };
    let b = match rb {
        Ok(s) => s,
        Err(_) if absent_b => Side::absent(dir_name(bn, an)),
        Err(e) => {
            load_failed(t, &dir_name(bn, an), &e);
            return Ok(2);
        }
    };
    let same_file = match (&a.st, &b.st) {
        (Some(x), Some(y)) => {
            x.st_dev == y.st_dev && x.st_ino == y.st_ino && common::is_reg(x) && an != "-"
        }
        _ => false,
    };
    files(o, &a, &b, labels(o, &a, &b), same_file, None, out)
}

/// The names two files are shown by: `--label`s where given, else their
/// own names.
fn labels(o: &Opts, a: &Side, b: &Side) -> [Vec<u8>; 2] {
    let label = |k: usize, s: &Side| {
        o.labels
            .get(k)
            .map_or_else(|| s.name.clone(), |l| l.clone().into_bytes())
    };
    [label(0, a), label(1, b)]
}

/// Compares two loaded files, shown as `names`; `header` is the `diff -r
/// A B` line printed before a textual diff in a directory comparison.
/// 0 if they are the same (under the ignore options), 1 if not.
fn files(
    o: &Opts,
    a: &Side,
    b: &Side,
    names: [Vec<u8>; 2],
    same_file: bool,
    header: Option<&str>,
    out: &mut Out,
) -> io::Result<i32> {
    let [an, bn] = &names;
    // Side by side shows identical files' lines too (text ones).
    let binary = !o.text && (probe_binary(&a.data) || probe_binary(&b.data));
    if binary && (a.more.is_some() || b.more.is_some()) && !same_file {
        // A binary pipe or device, read only as far as it differs.
        if same_bytes(a, b)? {
            if o.report_same {
                out.write(&[b"Files ", &an[..], b" and ", bn, b" are identical\n"].concat())?;
            }
            return Ok(0);
        }
        let what: &[u8] = if o.brief { b"Files " } else { b"Binary files " };
        out.write(&[what, &an[..], b" and ", bn, b" differ\n"].concat())?;
        return Ok(1);
    }
    let show_all = o.style == OutStyle::Side && !o.brief && !binary;
    if (same_file || a.data[..] == b.data[..]) && !show_all {
        if o.report_same {
            out.write(&[b"Files ", &an[..], b" and ", bn, b" are identical\n"].concat())?;
        }
        return Ok(0);
    }
    if binary || (o.brief && !o.ig.any() && !o.strip_cr) {
        let what = if o.brief { "Files" } else { "Binary files" };
        out.write(&[what.as_bytes(), b" ", an, b" and ", bn, b" differ\n"].concat())?;
        return Ok(1);
    }
    let (da, db);
    let (ad, bd): (&[u8], &[u8]) = if o.strip_cr {
        da = strip_cr(&a.data);
        db = strip_cr(&b.data);
        (&da[..], &db[..])
    } else {
        (&a.data[..], &b.data[..])
    };
    let cmp = Compared::new(ad, bd, &o.ig);
    let ctx = match o.style {
        OutStyle::Unified | OutStyle::Context => o.context,
        _ => 0,
    };
    let changes = cmp.changes(ctx);
    if changes.iter().all(|c| c.ignorable) {
        if o.style == OutStyle::Side && changes.is_empty() && !o.brief {
            // Side by side shows the lines even when they all match.
            if let Some(h) = header {
                out.write(h.as_bytes())?;
            }
            side::side_by_side(out, &cmp.la, &cmp.lb, &changes, o)?;
        }
        if o.report_same {
            out.write(&[b"Files ", &an[..], b" and ", bn, b" are identical\n"].concat())?;
        }
        return Ok(0);
    }
    if o.brief {
        out.write(&[b"Files ", &an[..], b" and ", bn, b" differ\n"].concat())?;
        return Ok(1);
    }
    if let Some(h) = header {
        out.write(h.as_bytes())?;
    }
    let st = format::Style {
        color: o.color.then_some(&o.palette),
        expand_tabs: o.expand_tabs,
        initial_tab: o.initial_tab,
        suppress_blank_empty: o.suppress_blank_empty,
        tabsize: o.tabsize,
        function: o.function,
    };
    let (la, lb) = (&cmp.la, &cmp.lb);
    match o.style {
        OutStyle::Normal => format::normal(out, la, lb, &changes, &st)?,
        OutStyle::Unified | OutStyle::Context => {
            let context = o.style == OutStyle::Context;
            let label = |k: usize, s: &Side| match o.labels.get(k) {
                Some(l) if header.is_none() => l.clone(),
                _ => format!(
                    "{}\t{}",
                    tree::c_maybe_quote(&names[k]),
                    stamp(s.st.as_ref(), context)
                ),
            };
            let marks = if context {
                ["***", "---"]
            } else {
                ["---", "+++"]
            };
            format::headers(out, &st, marks, [&label(0, a), &label(1, b)])?;
            if context {
                format::context(out, la, lb, &changes, o.context, &st)?;
            } else {
                format::unified(out, la, lb, &changes, o.context, &st)?;
            }
        }
        OutStyle::Side => side::side_by_side(out, la, lb, &changes, o)?,
    }
    Ok(1)
}

/// `d` without the carriage return before each newline.
fn strip_cr(d: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(d.len());
    let mut start = 0;
    for i in memchr::memchr_iter(b'\n', d) {
        let end = if i > start && d[i - 1] == b'\r' {
            i - 1
        } else {
            i
        };
        v.extend_from_slice(&d[start..end]);
        v.push(b'\n');
        start = i + 1;
    }
    v.extend_from_slice(&d[start..]);
    v
}

/// A normal-format diff of `a` and `b` (no binary check): 0 if they are
/// the same, 1 if not. For the benchmark variants.
pub fn diff_normal(a: &[u8], b: &[u8], out: &mut dyn Write) -> io::Result<i32> {
    if a == b {
        return Ok(0);
    }
    let cmp = Compared::new(a, b, &compare::Ignore::default());
    let st = format::Style {
        color: None,
        expand_tabs: false,
        initial_tab: false,
        suppress_blank_empty: false,
        tabsize: 8,
        function: false,
    };
    format::normal(out, &cmp.la, &cmp.lb, &cmp.changes(0), &st)?;
    Ok(1)
}

/// The name an error about operand `name` shows (DIR/FILE for a directory).
fn dir_name(name: &OsString, other: &OsString) -> Vec<u8> {
    if std::fs::metadata(name).is_ok_and(|m| m.is_dir()) {
        if let Some(base) = Path::new(other).file_name() {
            return Path::new(name).join(base).into_os_string().into_vec();
        }
    }
    name.as_bytes().to_vec()
}

fn probe_binary(d: &[u8]) -> bool {
    memchr::memchr(0, &d[..d.len().min(BINARY_PROBE)]).is_some()
}

/// Whether LC_TIME, from the environment, is the C or POSIX locale
/// (gnulib's `hard_locale` false): GNU diff then dates a context header as
/// ctime does, and elsewhere (C.UTF-8 too) as a unified header. Asked once,
/// by `setlocale(LC_TIME, "")`: diff runs on one thread, and a locale that
/// cannot be loaded leaves C, as it leaves GNU's.
fn time_locale_is_c() -> bool {
    static C: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *C.get_or_init(|| {
        // SAFETY: diff's only thread sets LC_TIME (no other thread reads
        // the locale meanwhile); the name returned is read at once.
        unsafe {
            let p = libc::setlocale(libc::LC_TIME, c"".as_ptr());
            p.is_null() || matches!(std::ffi::CStr::from_ptr(p).to_bytes(), b"C" | b"POSIX")
        }
    })
}

/// A file's modification time as GNU diff prints it in headers, local
/// time: `2026-11-22 10:00:00.123456789 +0000` (unified, and context
/// outside the C locale) or `Sun Nov 22 10:00:00 2026` (context in the C
/// locale). An absent file (-N) is dated the epoch.
fn stamp(st: Option<&rustix::fs::Stat>, context: bool) -> String {
    let (sec, nsec) = match st {
        Some(s) => (s.st_mtime as libc::time_t, s.st_mtime_nsec as i64),
        None => (0, 0),
    };
    // SAFETY: localtime_r fills the tm we own; strftime writes at most
    // the buffer's length and returns how much it wrote.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&sec, &mut tm).is_null() {
            return format!("{sec}.{nsec:09}");
        }
        let mut a = [0u8; 64];
        let mut z = [0u8; 16];
        if context && time_locale_is_c() {
            let n = libc::strftime(
                a.as_mut_ptr().cast(),
                a.len(),
                c"%a %b %e %H:%M:%S %Y".as_ptr(),
                &tm,
            );
            return String::from_utf8_lossy(&a[..n]).into_owned();
        }
        let n = libc::strftime(
            a.as_mut_ptr().cast(),
            a.len(),
            c"%Y-%m-%d %H:%M:%S".as_ptr(),
            &tm,
        );
        let m = libc::strftime(z.as_mut_ptr().cast(), z.len(), c"%z".as_ptr(), &tm);
        format!(
            "{}.{nsec:09} {}",
            String::from_utf8_lossy(&a[..n]),
            String::from_utf8_lossy(&z[..m])
        )
    }
}
