//! `ferry diff`: GNU diff's normal, unified (`-u`, `-U N`), context (`-c`,
//! `-C N`) and side-by-side (`-y`, `-W N`) output; the ignore options
//! (`-i`, `-w`, `-b`, `-B`, `-E`, `-Z`, `--strip-trailing-cr`); `-p`,
//! `-t`, `-T`, `--color`; directories (`-r`, `-N`, `-x`, `-X`); `-q`,
//! `-s`, `-a`, `--label`, its binary-file check and exit statuses.
//!
//! Regular files are mapped where the stream maps, and their lines are
//! handed to the diff as slices of the mapping — nothing is copied
//! (`load`). The edit script comes from `imara-diff`'s Myers; its change
//! groups are then slid the way GNU diff slides them, so that ambiguous
//! changes are shown where GNU shows them (`compare`).
//!
//! A pair's output is formatted into memory and written only once both
//! sides are known to be what their files held: a file another process
//! cut short or rewrote under its mapping is read again as GNU reads it,
//! and compared again (`load`'s doc, [`files`]).

mod compare;
mod format;
mod load;
mod opts;
mod side;
mod tree;

use super::common::{self, Tool};
use super::output::Out;
use compare::Compared;
use ferry::Buf;
use load::{load, Side};
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

/// True if the bytes `pend` holds of each side, and the rest of its
/// file (`more`), are the same: the comparison of binary files, a block
/// at a time, stopping at the first difference (what GNU does with files
/// it will only call different).
fn same_bytes(mut pend: [Vec<u8>; 2], mut more: [Option<&std::fs::File>; 2]) -> io::Result<bool> {
    use std::io::Read;
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
        let side = |n: &OsString| Side::read(n.as_bytes().to_vec(), Buf::new(), None);
        let (mut a, mut b) = (side(an), side(bn));
        let names = labels(o, &a, &b);
        return files(t, o, (&mut a, &mut b), names, true, None, out);
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
    let mut a = match ra {
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
    let mut b = match rb {
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
    let names = labels(o, &a, &b);
    files(t, o, (&mut a, &mut b), names, same_file, None, out)
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
/// 0 if they are the same (under the ignore options), 1 if not, 2 if a
/// side changed under its mapping could not be read again.
///
/// The output is formatted into memory first: once it is, each side is
/// asked whether it is still what its file held (`Side::changed`), and
/// one that is not is read again and the pair compared again, so that
/// nothing printed comes from bytes a file did not hold (the zeros of
/// lost pages) or was compared as other bytes than it shows.
fn files(
    t: &Tool,
    o: &Opts,
    (a, b): (&mut Side, &mut Side),
    names: [Vec<u8>; 2],
    same_file: bool,
    header: Option<&str>,
    out: &mut Out,
) -> io::Result<i32> {
    if (a.more.is_some() || b.more.is_some()) && !same_file {
        // A binary pipe or device (a NUL in its first block), read only
        // as far as it differs; what is read of it cannot be read again,
        // so the other side is made sure of first.
        let mut pend = [a.data.to_vec(), b.data.to_vec()];
        for (k, s) in [&mut *a, &mut *b].into_iter().enumerate() {
            if s.changed() {
                if let Err(e) = s.read_again() {
                    out.flush()?;
                    load_failed(t, &s.name, &e);
                    return Ok(2);
                }
                pend[k] = s.data.to_vec();
            }
        }
        let [an, bn] = &names;
        if same_bytes(pend, [a.more.as_ref(), b.more.as_ref()])? {
            if o.report_same {
                out.write(&[b"Files ", &an[..], b" and ", bn, b" are identical\n"].concat())?;
            }
            return Ok(0);
        }
        let what: &[u8] = if o.brief { b"Files " } else { b"Binary files " };
        out.write(&[what, &an[..], b" and ", bn, b" differ\n"].concat())?;
        return Ok(1);
    }
    loop {
        let mut held = Out::holding();
        let code = compared(o, (a, b), &names, same_file, header, &mut held)?;
        let mut again = false;
        for s in [&mut *a, &mut *b] {
            if s.changed() {
                if let Err(e) = s.read_again() {
                    out.flush()?;
                    load_failed(t, &s.name, &e);
                    return Ok(2);
                }
                again = true;
            }
        }
        if !again {
            out.write_held(&mut held)?;
            return Ok(code);
        }
    }
}

/// [`files`]' comparison of two sides that are text or regular files,
/// its output written to `out`.
fn compared(
    o: &Opts,
    (a, b): (&Side, &Side),
    names: &[Vec<u8>; 2],
    same_file: bool,
    header: Option<&str>,
    out: &mut Out,
) -> io::Result<i32> {
    let [an, bn] = names;
    let binary = !o.text && (probe_binary(&a.data) || probe_binary(&b.data));
    // Side by side shows identical files' lines too (text ones).
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
