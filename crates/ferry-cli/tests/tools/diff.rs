//! `ferry diff` against GNU diff: normal and unified output on generated
//! pairs of files, and the statuses and messages.

#[path = "diff/options.rs"]
mod options;

use crate::gnu;
use gnu::{s, same, Corpus, Rng};

/// A file of `n` lines drawn from `vocab` distinct lines (small vocab:
/// many repeats, so many equally short edit scripts).
fn lines(r: &mut Rng, n: usize, vocab: u64) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| format!("line {}\n", r.below(vocab)).into_bytes())
        .collect()
}

/// `a` with random deletions, insertions and changes.
fn edit(r: &mut Rng, a: &[Vec<u8>], edits: usize, vocab: u64) -> Vec<Vec<u8>> {
    let mut b = a.to_vec();
    for _ in 0..edits {
        let at = r.below(b.len() as u64 + 1) as usize;
        match r.below(3) {
            0 if at < b.len() => {
                b.remove(at);
            }
            1 => b.insert(at, format!("new {}\n", r.below(vocab)).into_bytes()),
            _ if at < b.len() => b[at] = format!("changed {}\n", r.below(vocab)).into_bytes(),
            _ => {}
        }
    }
    b
}

fn write(c: &Corpus, name: &str, l: &[Vec<u8>], trailing_newline: bool) {
    let mut v = l.concat();
    if !trailing_newline && v.last() == Some(&b'\n') {
        v.pop();
    }
    std::fs::write(c.file(name), v).unwrap();
}

const FORMATS: &[&[&str]] = &[&[], &["-u"], &["-U", "0"], &["-U1"], &["-q"], &["-s"]];

#[test]
fn generated_pairs_in_every_format() {
    let c = Corpus::new();
    let mut r = Rng(0x9e3779b97f4a7c15);
    for case in 0..120 {
        // Unique-ish lines (one best script) and heavily repeated lines
        // (many: GNU's choice among them is what is checked).
        let vocab = if case % 2 == 0 { 1_000_000 } else { 4 };
        let n = [0usize, 1, 2, 5, 20, 200][case % 6];
        let a = lines(&mut r, n, vocab);
        let b = edit(&mut r, &a, 1 + case % 7, vocab);
        write(&c, "a", &a, case % 5 != 0);
        write(&c, "b", &b, case % 7 != 0);
        for f in FORMATS {
            let mut args = s(f);
            args.extend(s(&["a", "b"]));
            same("diff", &args, None, c.path(), &[]);
        }
    }
}

#[test]
fn fixed_inputs_statuses_and_errors() {
    let c = Corpus::new();
    std::fs::write(
        c.file("text2-copy"),
        std::fs::read(c.file("text2")).unwrap(),
    )
    .unwrap();
    std::fs::create_dir(c.file("dir")).unwrap();
    std::fs::write(c.file("dir/text2"), b"other\n").unwrap();
    let pairs: &[[&str; 2]] = &[
        ["text2", "text2-copy"],
        ["text2", "text2"],
        ["empty", "one-byte"],
        ["newline", "empty"],
        ["crlf", "blank-lines"],
        ["no-trailing-newline", "newline"],
        ["utf8", "bad-utf8"],
        ["binary", "text2"],
        ["nul", "newline"],
        ["long-line", "no-trailing-newline"],
        ["text2", "dir"],
        ["dir", "text2"],
        ["missing", "text2"],
        ["text2", "missing"],
    ];
    for p in pairs {
        for f in FORMATS {
            let mut args = s(f);
            args.extend(s(p));
            same("diff", &args, None, c.path(), &[]);
        }
        let mut args = s(&["-a"]);
        args.extend(s(p));
        same("diff", &args, None, c.path(), &[]);
    }
    let text = std::fs::read(c.file("text2")).unwrap();
    same("diff", &s(&["-", "text"]), Some(&text), c.path(), &[]);
    same("diff", &s(&["text2", "-"]), Some(&text), c.path(), &[]);
    same(
        "diff",
        &s(&["-u", "--label", "L1", "--label", "L2", "text2", "crlf"]),
        None,
        c.path(),
        &[],
    );
    for bad in [
        &[][..],
        &["text2"],
        &["a", "b", "c"],
        &["--bogus", "a", "b"],
        &["-U", "x", "a", "b"],
    ] {
        same("diff", &s(bad), None, c.path(), &[]);
    }
}

/// Applies a normal-format diff of `a` (as `diff` prints it) and returns
/// the result and how many lines it deletes and inserts.
fn apply_normal(a: &[u8], script: &[u8]) -> (Vec<u8>, usize) {
    let lines: Vec<&[u8]> = a.split_inclusive(|&b| b == b'\n').collect();
    let mut out = Vec::new();
    let mut next = 0usize; // next line of `a` not yet copied
    let mut edits = 0;
    let num = |s: &str| -> usize { s.parse().unwrap() };
    let range = |s: &str| -> (usize, usize) {
        match s.split_once(',') {
            Some((x, y)) => (num(x), num(y)),
            None => (num(s), num(s)),
        }
    };
    let mut it = script.split_inclusive(|&b| b == b'\n').peekable();
    while let Some(head) = it.next() {
        let h = String::from_utf8_lossy(head).trim_end().to_string();
        let k = h
            .find(['a', 'd', 'c'])
            .unwrap_or_else(|| panic!("bad hunk header {h:?}"));
        let (l, op) = (&h[..k], h.as_bytes()[k]);
        let (l0, l1) = range(l);
        // Copy the unchanged lines before the hunk.
        let upto = if op == b'a' { l0 } else { l0 - 1 };
        out.extend(lines[next..upto].concat());
        next = if op == b'a' { l0 } else { l1 };
        let mut last_inserted = false;
        while let Some(line) = it.peek() {
            if line.starts_with(b"< ") || line.starts_with(b"---") {
                edits += usize::from(line.starts_with(b"< "));
                last_inserted = false;
                it.next();
            } else if line.starts_with(b"> ") {
                edits += 1;
                out.extend_from_slice(&line[2..]);
                last_inserted = true;
                it.next();
            } else if line.starts_with(b"\\ ") {
                // The inserted line before had no newline.
                if last_inserted && out.last() == Some(&b'\n') {
                    out.pop();
                }
                it.next();
            } else {
                break;
            }
        }
    }
    out.extend(lines[next..].concat());
    (out, edits)
}

/// Files that share few lines in scattered places have many edit scripts of
/// about the same length, and GNU's heuristics pick one its own way. Here
/// ferry's script must turn the first file into the second, and be no
/// longer than GNU's by more than a tenth.
#[test]
fn scattered_differences_give_a_correct_short_script() {
    let c = Corpus::new();
    for (x, y) in [("text", "text2"), ("text2", "text"), ("text", "utf8")] {
        let a = std::fs::read(c.file(x)).unwrap();
        let b = std::fs::read(c.file(y)).unwrap();
        let run = |prog: &str, pre: &[&str]| {
            let mut args: Vec<String> = pre.iter().map(|s| s.to_string()).collect();
            args.extend(["-a".to_string(), x.to_string(), y.to_string()]);
            gnu::run(prog, &args, None, c.path(), &[])
        };
        let ours = run(gnu::FERRY, &["diff"]);
        let theirs = run("diff", &[]);
        assert_eq!(ours.code, 1);
        assert_eq!(theirs.code, 1);
        let (got, our_edits) = apply_normal(&a, &ours.stdout);
        assert!(got == b, "{x} -> {y}: ferry's script does not rebuild {y}");
        let (gb, gnu_edits) = apply_normal(&a, &theirs.stdout);
        assert!(gb == b, "the test's applier misreads GNU's script");
        assert!(
            our_edits * 10 <= gnu_edits * 11,
            "{x} -> {y}: ferry edits {our_edits} lines, GNU {gnu_edits}"
        );
    }
}

#[test]
fn a_full_disk_is_trouble() {
    let c = Corpus::new();
    gnu::full_disk("diff", &["text", "text2"], c.path());
}

/// A context header's dates: ctime's form only where LC_TIME is the C or
/// POSIX locale; elsewhere (C.UTF-8, this machine's default) GNU writes
/// the unified header's form, where ferry wrote ctime's.
#[test]
fn context_header_dates_follow_the_time_locale() {
    let c = Corpus::new();
    std::fs::write(c.path().join("a"), b"one\ntwo\n").unwrap();
    std::fs::write(c.path().join("b"), b"one\nthree\n").unwrap();
    for env in [
        &[("LC_ALL", "C")][..],
        &[("LC_ALL", "POSIX")],
        &[("LC_ALL", "C.UTF-8")],
        &[("LC_ALL", ""), ("LC_TIME", "C.UTF-8")],
        &[("LC_ALL", ""), ("LANG", "C.UTF-8"), ("LC_TIME", "C")],
        &[("LC_ALL", "xx_YY.UTF-8")],
    ] {
        for f in [&["-c"][..], &["-C", "1"], &["-u"]] {
            let mut args = s(f);
            args.extend(s(&["a", "b"]));
            same("diff", &args, None, c.path(), env);
        }
    }
}

/// diff showed a name that is not UTF-8 with U+FFFD for each stray byte:
/// in -u and -c headers (quoted with octal escapes, so the escapes were
/// of U+FFFD's bytes), in "Files … differ" and "Binary files … differ",
/// and in its errors. GNU uses the name's bytes.
#[test]
fn diff_writes_file_names_as_bytes() {
    use std::ffi::OsString;
    let (dir, names) = gnu::non_utf8_names();
    let o = |s: &str| OsString::from(s);
    // Both files dated alike, for the headers' time stamps.
    let t = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    for n in [&names[0], &names[1], &names[3]] {
        let f = std::fs::File::options()
            .write(true)
            .open(dir.path().join(n))
            .unwrap();
        f.set_modified(t).unwrap();
    }
    for args in [
        vec![o("-u"), names[0].clone(), names[1].clone()],
        vec![o("-c"), names[0].clone(), names[1].clone()],
        vec![o("-q"), names[0].clone(), names[1].clone()],
        vec![o("-s"), names[0].clone(), names[0].clone()],
        vec![names[0].clone(), names[3].clone()],
        vec![names[1].clone(), names[4].clone()],
    ] {
        gnu::same_bytes("diff", &args, dir.path());
    }
}

/// Comparing directories, diff showed names that are not UTF-8 with
/// U+FFFD for each stray byte in "Only in DIR: NAME", "Common
/// subdirectories: A and B", "File A is a K while file B is a K",
/// "Symbolic links A and B differ", "Files A and B are identical" (of
/// links), "recursive directory loop" and the errors about entries; GNU
/// writes the names' bytes.
#[test]
fn diff_r_writes_entry_names_as_bytes() {
    use std::ffi::{OsStr, OsString};
    use std::os::unix::ffi::OsStrExt;
    let d = tempfile::tempdir().unwrap();
    let p = |b: &[u8]| d.path().join(OsStr::from_bytes(b));
    for dir in [&b"a\xff"[..], b"b\xfe", b"a\xff/sub\xfb", b"b\xfe/sub\xfb"] {
        std::fs::create_dir(p(dir)).unwrap();
    }
    std::fs::create_dir(p(b"a\xff/only\xfa")).unwrap();
    std::fs::create_dir(p(b"b\xfe/kind\xf1")).unwrap();
    std::fs::write(p(b"a\xff/kind\xf1"), b"z\n").unwrap();
    std::fs::write(p(b"a\xff/f\xfc"), b"x\n").unwrap();
    std::fs::write(p(b"b\xfe/f\xfc"), b"y\n").unwrap();
    let link = |to: &str, at: &[u8]| std::os::unix::fs::symlink(to, p(at)).unwrap();
    // Links to nowhere: "No such file or directory", or compared as links.
    link("t1", b"a\xff/l\xf2");
    link("t2", b"b\xfe/l\xf2");
    link("t1", b"a\xff/s\xf3");
    link("t1", b"b\xfe/s\xf3");
    // Links back to their directory: a loop under -r.
    link(".", b"a\xff/sub\xfb/up\xf4");
    link(".", b"b\xfe/sub\xfb/up\xf4");
    let os = |s: &[u8]| OsString::from(OsStr::from_bytes(s));
    for opts in [
        &[][..],
        &["-r"],
        &["-rs", "--no-dereference"],
        &["-q", "--no-dereference"],
        &["-N"],
    ] {
        let mut args: Vec<OsString> = opts.iter().map(OsString::from).collect();
        args.extend([os(b"a\xff"), os(b"b\xfe")]);
        gnu::same_bytes("diff", &args, d.path());
    }
}

/// The same file read from the same offset is identical without being
/// read, as GNU finds it: `echo abc | diff - -` printed "1d0 < abc" (the
/// second side read what the first had left: nothing), and `diff
/// /dev/zero /dev/zero` ran until memory ran out.
#[test]
fn the_same_input_twice_is_identical() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), b"a\nb\n").unwrap();
    std::os::unix::fs::symlink("f", d.path().join("l")).unwrap();
    for args in [
        &["-", "-"][..],
        &["-s", "-", "-"],
        &["/dev/zero", "/dev/zero"],
        &["-s", "f", "l"],
    ] {
        gnu::same_bounded("diff", args, Some(b"abc\n"), d.path());
    }
    for script in [
        "diff - f < f >/dev/null",
        "(read x; diff - f) < f >/dev/null",
    ] {
        let ferry = format!("{} diff", gnu::FERRY);
        let ours = gnu::sh_bounded(&script.replace("diff", &ferry), d.path());
        assert_eq!(ours, gnu::sh_bounded(script, d.path()), "{script}");
    }
}

/// Files whose size says nothing (procfs: 0; sysfs: a page) are read to
/// their end, as GNU reads them: `diff /proc/version copy` took the /proc
/// file for empty ("0a1 > Linux …", status 1), and a /sys file failed
/// with "read_file: the file ended at offset …".
#[test]
fn proc_and_sys_files_are_read_to_their_end() {
    let d = tempfile::tempdir().unwrap();
    let sys = "/sys/kernel/mm/transparent_hugepage/enabled";
    let mut n = 0;
    for f in ["/proc/version", "/proc/self/mountinfo", sys] {
        let Ok(bytes) = std::fs::read(f) else {
            continue;
        };
        n += 1;
        std::fs::write(d.path().join("same"), &bytes).unwrap();
        let mut other = bytes.clone();
        other.extend_from_slice(b"one more line\n");
        std::fs::write(d.path().join("other"), &other).unwrap();
        for args in [[f, "same"], [f, "other"], ["other", f]] {
            same("diff", &s(&args), None, d.path(), &[]);
        }
    }
    assert!(n > 0, "no /proc or /sys file to read");
}

/// A pipe or device whose first block holds a NUL is binary, and is read
/// only as far as it differs, as GNU reads it: `diff /dev/zero f` read
/// /dev/zero until memory ran out ("out of memory", status 2) where GNU
/// says "Binary files /dev/zero and f differ" (status 1). With -a its
/// lines are wanted: GNU's "memory exhausted" (status 2) once memory is
/// gone, not a message naming the file.
#[test]
fn binary_devices_are_read_only_as_far_as_they_differ() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), b"abc\n").unwrap();
    std::fs::write(d.path().join("z"), vec![0u8; 5000]).unwrap();
    let zeros = vec![0u8; 5000];
    for args in [
        &["/dev/zero", "f"][..],
        &["f", "/dev/zero"],
        &["/dev/zero", "z"],
        &["-q", "/dev/zero", "z"],
        &["-s", "z", "-"],
        &["-s", "-", "z"],
        &["-s", "f", "-"],
    ] {
        gnu::same_bounded("diff", args, Some(&zeros), d.path());
    }
    gnu::same_limited("diff", &["-a", "/dev/zero", "f"], None, d.path(), 500_000);
}

/// A directory against standard input or against a file that is not
/// there, in GNU's words: `diff DIR nonexist` added a bogus
/// "DIR/nonexist: No such file or directory" line before GNU's one, and
/// `diff DIR - < f` said "DIR/-: Is a directory" where GNU says "cannot
/// compare '-' to a directory".
#[test]
fn a_directory_against_stdin_or_an_absent_file() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("dir")).unwrap();
    std::fs::write(d.path().join("f"), b"a\n").unwrap();
    for args in [
        &["dir", "absent"][..],
        &["absent", "dir"],
        &["dir", "-"],
        &["-", "dir"],
        &["-r", "dir", "-"],
        &["dir", "f"],
    ] {
        gnu::same_bounded("diff", args, Some(b"a\n"), d.path());
    }
}

/// 16 MiB of numbered lines, and a copy with every 20000th line changed.
fn changed_pair() -> (Vec<u8>, Vec<u8>) {
    let d = tempfile::tempdir().unwrap();
    gnu::lines_file(&d.path().join("a"), 16);
    let a = std::fs::read(d.path().join("a")).unwrap();
    let mut b = Vec::with_capacity(a.len());
    for (i, l) in a.split_inclusive(|&c| c == b'\n').enumerate() {
        if i % 20_000 == 7 {
            b.extend_from_slice(format!("changed {i}\n").as_bytes());
        } else {
            b.extend_from_slice(l);
        }
    }
    (a, b)
}

/// Runs `ferry diff OPTS a b` on files holding `a` and `b`, stops it once
/// it has file `watch` mapped, lets `change` alter the files (another
/// process's doing, as far as ferry knows), continues it, and then runs
/// GNU diff on the files as they are: GNU reads each file with `read`,
/// into memory, so it sees the files as they are after the change. ferry
/// must print what GNU prints, status and messages too.
fn diff_as_gnu_after(
    opts: &[&str],
    (a, b): (&[u8], &[u8]),
    watch: &str,
    change: impl FnOnce(&std::path::Path),
) {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("a"), a).unwrap();
    std::fs::write(d.path().join("b"), b).unwrap();
    let mut args = vec!["diff"];
    args.extend(opts);
    args.extend(["a", "b"]);
    let ferry = gnu::stop_while_mapping(&args, d.path(), &d.path().join(watch));
    change(d.path());
    let (st, out, err) = ferry.resume();
    let gnu = gnu::run("diff", &s(&args[1..]), None, d.path(), &[]);
    let ours = (gnu::exit_code(st), gnu::as_gnu(&err, "diff"));
    assert_eq!(ours, (gnu.code, gnu.stderr), "{args:?}, {watch} mapped");
    assert!(
        out == gnu.stdout,
        "{args:?}, {watch} mapped: ferry printed {} bytes{}, GNU {}",
        out.len(),
        if out.contains(&0) { " with NULs" } else { "" },
        gnu.stdout.len()
    );
}

/// Shrinks file `name` in `dir` to `len` bytes.
fn cut(dir: &std::path::Path, name: &str, len: u64) {
    std::fs::File::options()
        .write(true)
        .open(dir.join(name))
        .and_then(|f| f.set_len(len))
        .unwrap();
}

/// A file cut short while diff reads it: diff maps its inputs without a
/// lease, and the pages a file loses under the mapping read as zeros (the
/// SIGBUS guard). diff compared and printed those zeros as the file's
/// lines (a "> \0\0\0…" line of megabytes), or stopped with "the file
/// shrank while it was mapped" (status 2). GNU reads the file as it is:
/// shorter. Here it is cut mid-line and mid-page, while diff has it
/// mapped or has it read and maps the other; and cut to the other file's
/// length, where GNU finds the two identical.
#[test]
fn diff_reads_a_file_cut_short_under_it_as_gnu() {
    let (a, b) = changed_pair();
    let mid = (a.len() / 2 + 1234) as u64;
    diff_as_gnu_after(&[], (&a, &b), "a", |d| cut(d, "a", mid));
    diff_as_gnu_after(&[], (&a, &b), "b", |d| cut(d, "a", mid));
    diff_as_gnu_after(&["-u"], (&a, &b), "b", |d| cut(d, "b", mid));
    let longer = [&b[..], b"one more line\n"].concat();
    diff_as_gnu_after(&["-s"], (&longer, &b), "b", |d| cut(d, "a", b.len() as u64));
}

/// A file rewritten while diff reads it (emptied, then written anew, as
/// `> file` does): diff showed the new bytes where the mapping had them
/// and zeros past the new end, or compared old lines and printed new
/// ones. GNU reads what the file holds. Here the new contents are shorter
/// (the old lines' first half, then new ones) and longer than the old.
#[test]
fn diff_reads_a_file_rewritten_under_it_as_gnu() {
    let (a, b) = changed_pair();
    let shorter = [&a[..a.len() / 2], b"new line\nand another\n"].concat();
    let longer = [&b[..], &a[..a.len() / 4]].concat();
    diff_as_gnu_after(&[], (&a, &b), "a", |d| {
        std::fs::write(d.join("a"), &shorter).unwrap()
    });
    diff_as_gnu_after(&["-u"], (&a, &b), "b", |d| {
        std::fs::write(d.join("a"), &shorter).unwrap()
    });
    diff_as_gnu_after(&[], (&a, &b), "b", |d| {
        std::fs::write(d.join("a"), &longer).unwrap()
    });
}

/// A file cut short while diff compares it with a binary pipe, which diff
/// reads only as far as the two differ: the file's lost pages read as
/// zeros, and against a pipe of zeros diff found the two identical
/// (status 0) where GNU, reading the file as it is, finds them different.
/// Here diff waits on the empty pipe with the file mapped; the file is
/// cut to 5000 bytes, then the pipe brings the file's old contents.
#[test]
fn diff_reads_a_file_cut_short_against_a_binary_pipe_as_gnu() {
    use std::io::Write;
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    let mut old = b"binary\0head\n".to_vec();
    old.resize(8 << 20, 0);
    std::fs::write(&a, &old).unwrap();
    let mut ferry = gnu::stop_while_mapping(&["diff", "a", "-"], d.path(), &a);
    cut(d.path(), "a", 5000);
    let mut pipe = ferry.0.stdin.take().unwrap();
    let piped = old.clone();
    let feed = std::thread::spawn(move || {
        let _ = pipe.write_all(&piped);
    });
    let (st, out, err) = ferry.resume();
    feed.join().unwrap();
    let gnu = gnu::run("diff", &s(&["a", "-"]), Some(&old), d.path(), &[]);
    assert_eq!(
        (
            st.code(),
            String::from_utf8_lossy(&out),
            gnu::as_gnu(&err, "diff")
        ),
        (
            Some(gnu.code),
            String::from_utf8_lossy(&gnu.stdout),
            gnu.stderr
        )
    );
}
