//! `ferry cmp` against GNU cmp.

use crate::gnu;
use gnu::{s, same, Corpus};

/// Files that differ from a base in chosen places, and shorter copies.
fn variants(c: &Corpus) -> Vec<String> {
    let base = gnu::texty(3 << 20, 31);
    let mut names = Vec::new();
    let mut put = |name: &str, bytes: Vec<u8>| {
        std::fs::write(c.file(name), bytes).unwrap();
        names.push(name.to_string());
    };
    put("base", base.clone());
    for (name, at) in [
        ("diff-first", 0usize),
        ("diff-mid", 1_500_000),
        ("diff-at-chunk", 1 << 20),
        ("diff-last", base.len() - 1),
    ] {
        let mut v = base.clone();
        v[at] ^= 0x55;
        put(name, v);
    }
    let mut many = base.clone();
    for i in (0..many.len()).step_by(100_003) {
        many[i] = many[i].wrapping_add(1);
    }
    put("diff-many", many);
    put(
        "prefix-nl",
        base[..base.iter().position(|&b| b == b'\n').unwrap() + 1].to_vec(),
    );
    put("prefix-chunk", base[..1 << 20].to_vec());
    put("prefix-odd", base[..1_234_567].to_vec());
    names
}

#[test]
fn pairs_in_every_mode() {
    let c = Corpus::new();
    let v = variants(&c);
    let mut pairs: Vec<(String, String)> = Vec::new();
    for x in &v {
        pairs.push(("base".into(), x.clone()));
        pairs.push((x.clone(), "base".into()));
    }
    let small = [
        "empty",
        "one-byte",
        "newline",
        "no-trailing-newline",
        "crlf",
        "nul",
        "utf8",
        "bad-utf8",
        "text2",
    ];
    for a in small {
        for b in small {
            pairs.push((a.into(), b.into()));
        }
    }
    for (a, b) in &pairs {
        for mode in [&[][..], &["-s"], &["-l"]] {
            let mut args = s(mode);
            args.extend([a.clone(), b.clone()]);
            same("cmp", &args, None, c.path(), &[]);
        }
    }
}

#[test]
fn skips_stdin_and_errors() {
    let c = Corpus::new();
    let _ = variants(&c);
    let text2 = std::fs::read(c.file("text2")).unwrap();
    for args in [
        s(&["base", "diff-mid", "10", "10"]),
        s(&["base", "diff-mid", "1500001", "1500001"]),
        s(&["text2", "text2", "3", "0"]),
        s(&["text2", "text2", "1K"]),
        s(&["-l", "text2", "utf8", "2", "5"]),
        s(&["text2", "text2", "x"]),
        s(&["text2", "text2", "1", "2", "3"]),
        s(&["text2", "nonexistent"]),
        s(&["nonexistent", "text2"]),
        s(&[".", "text2"]),
        s(&["text2"]),
        s(&["-", "text2"]),
        s(&["text2", "-"]),
        s(&[]),
        s(&["-z", "a", "b"]),
        s(&["--bogus", "a", "b"]),
        s(&["text2", "text2"]),
    ] {
        same("cmp", &args, Some(&text2), c.path(), &[]);
    }
    same(
        "cmp",
        &s(&["-", "text2"]),
        Some(b"different"),
        c.path(),
        &[],
    );
    // Outside the C locale diffutils says "byte", not "char".
    same(
        "cmp",
        &s(&["base", "diff-mid"]),
        None,
        c.path(),
        &[("LC_ALL", "C.UTF-8")],
    );
}

#[test]
fn large_files_compared_on_two_threads() {
    // Past the parallel threshold (64 MiB): differences in either half, at
    // the end, and a shorter file.
    let c = Corpus::new();
    let base = gnu::texty(80 << 20, 41);
    std::fs::write(c.file("L"), &base).unwrap();
    let put = |name: &str, at: Option<usize>, len: usize| {
        let mut v = base[..len].to_vec();
        if let Some(a) = at {
            v[a] ^= 1;
        }
        std::fs::write(c.file(name), v).unwrap();
    };
    put("L-same", None, base.len());
    put("L-first-half", Some(10 << 20), base.len());
    put("L-second-half", Some(70 << 20), base.len());
    put("L-both", Some(50 << 20), base.len());
    put("L-short", None, (75 << 20) + 12345);
    {
        let mut v = std::fs::read(c.file("L-both")).unwrap();
        v[20 << 20] ^= 1;
        std::fs::write(c.file("L-both"), v).unwrap();
    }
    for other in [
        "L-same",
        "L-first-half",
        "L-second-half",
        "L-both",
        "L-short",
    ] {
        for mode in [&[][..], &["-s"]] {
            let mut a = s(mode);
            a.extend(["L".to_string(), other.to_string()]);
            same("cmp", &a, None, c.path(), &[]);
            let mut a = s(mode);
            a.extend([other.to_string(), "L".to_string()]);
            same("cmp", &a, None, c.path(), &[]);
        }
    }
    same(
        "cmp",
        &s(&["L", "L-second-half", "100", "100"]),
        None,
        c.path(),
        &[],
    );
}

#[test]
fn a_full_disk_is_trouble() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a"), b"one\ntwo\n").unwrap();
    std::fs::write(dir.path().join("b"), b"one\nTwo\n").unwrap();
    gnu::full_disk("cmp", &["a", "b"], dir.path());
}

/// `cmp -l` onto a full disk, as GNU: its lines go through stdio, which
/// keeps a write error for the end, so the comparison goes on (an "EOF
/// on" message comes first), and the end says "write failed" once more
/// than a stdio buffer was written, else "standard output: No space left
/// on device"; status 2. ferry cmp -l stopped at the first failed write
/// with the latter, and no EOF message.
#[test]
fn cmp_l_onto_a_full_disk_as_gnu() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("f"), b"abc\ndef\n").unwrap();
    std::fs::write(p.join("g"), b"abX\ndeY\nmore\n").unwrap();
    let x = gnu::texty(20_000, 3);
    std::fs::write(p.join("x"), &x).unwrap();
    std::fs::write(p.join("y"), gnu::texty(20_000, 4)).unwrap();
    std::fs::write(p.join("y-short"), gnu::texty(9_000, 4)).unwrap();
    std::fs::write(p.join("x-head"), &x[..5_000]).unwrap();
    for args in [
        &["-l", "f", "g"][..],
        &["-l", "g", "f"],
        &["-bl", "f", "g"],
        &["-l", "x", "y"],
        &["-bl", "x", "y"],
        &["-l", "x", "y-short"],
        &["-l", "x-head", "x"],
        &["-l", "x", "x"],
        &["-s", "x", "y"],
        &["-l", "-n", "3", "x", "y"],
    ] {
        gnu::same_redirected("cmp", args, "> /dev/full", p);
    }
}

/// -b, -i (one skip, SKIP1:SKIP2, beside SKIP operands), -n and GNU's
/// number syntax (octal, hex, suffixes), against GNU cmp on files that
/// differ in every kind of byte.
#[test]
fn print_bytes_skips_and_limits_as_gnu() {
    let c = Corpus::new();
    let names = variants(&c);
    // Every byte value, and a copy with each one changed.
    let all: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    let changed: Vec<u8> = all
        .iter()
        .map(|b| b.wrapping_mul(7).wrapping_add(3))
        .collect();
    std::fs::write(c.file("all"), &all).unwrap();
    std::fs::write(c.file("changed"), &changed).unwrap();
    let d = c.path();
    let env = &[("LC_ALL", "C")][..];
    for opts in [
        &["-b"][..],
        &["-bl"],
        &["-l", "-b", "-n", "600"],
        &["-b", "-i", "7"],
        &["-i", "3:5"],
        &["-l", "-i", "1:0", "-n", "300"],
        &["-n", "0"],
        &["-n", "10"],
        &["--bytes=0x20", "-b"],
        &["--ignore-initial=010", "-l", "-n", "40"],
        &["-s", "-n", "100"],
    ] {
        let mut a = s(opts);
        a.extend(s(&["all", "changed"]));
        same("cmp", &a, None, d, env);
    }
    for opts in [
        &["-n", "1K"][..],
        &["-n", "1kB", "-b"],
        &["-i", "1M"],
        &["-i", "1MiB:1000000"],
        &["-n", "1500000"],
        &["-n", "2M", "-i", "1"],
        &["-i", "4"],
        &["-i", "1GB"],
        &["-n", "1G"],
    ] {
        for pair in [
            ["base", "diff-mid"],
            ["base", "diff-at-chunk"],
            ["base", "prefix-odd"],
            ["diff-last", "base"],
        ] {
            let mut a = s(opts);
            a.extend(s(&pair));
            same("cmp", &a, None, d, env);
        }
    }
    for bad in [
        &["-n", "x", "all", "changed"][..],
        &["-n", "-1", "all", "changed"],
        &["-n", "1e3", "all", "changed"],
        &["-n", "08", "all", "changed"],
        &["-n", "0x", "all", "changed"],
        &["-n", "1Z", "all", "changed"],
        &["-n", "99999999999999999999999", "all", "changed"],
        &["-i", "1:x", "all", "changed"],
        &["-i", "x:1", "all", "changed"],
        &["-i", "1:2:3", "all", "changed"],
        &["-i", ":1", "all", "changed"],
        &["-i", "1:", "all", "changed"],
        &["-i", "1k", "all", "changed", "2", "3"],
        &["-i", "9", "all", "changed", "2"],
        &["all", "changed", "2", "x"],
        &["-n", " +5", "all", "changed"],
        &["-n", "1KiB", "all", "changed"],
        &["-n", "1Ki", "all", "changed"],
        &["-n", "1m", "all", "changed"],
    ] {
        same("cmp", &s(bad), None, d, env);
    }
    assert!(names.len() > 3);
}

/// cmp showed a name that is not UTF-8 with U+FFFD for each stray byte,
/// in its "differ" line, its EOF message and its errors; GNU writes the
/// bytes.
#[test]
fn cmp_writes_file_names_as_bytes() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let (dir, names) = gnu::non_utf8_names();
    std::fs::write(
        dir.path().join(OsString::from_vec(b"c\xff".to_vec())),
        b"x\nzz\n",
    )
    .unwrap();
    let os = |b: &[u8]| OsString::from_vec(b.to_vec());
    for args in [
        vec![names[0].clone(), names[1].clone()],
        vec![os(b"-b"), names[0].clone(), names[1].clone()],
        vec![names[0].clone(), os(b"c\xff")],
        vec![os(b"-l"), names[0].clone(), os(b"c\xff")],
        vec![names[1].clone(), names[4].clone()],
    ] {
        gnu::same_bytes("cmp", &args, dir.path());
    }
}

/// The line number in cmp's report counts the newlines of the bytes it
/// compared. It used to read file A again to count them once it had
/// something to report: a file truncated and rewritten meanwhile gave the
/// new contents' count ("differ: char 2359297, line 1" after 2 MiB of
/// equal lines, or "EOF on F after byte 4194304, in line 54"). GNU counts
/// as it reads. Here B comes through a pipe: once cmp has taken its first
/// 3 MiB, A is rewritten with as many bytes of `x` (no newline), then the
/// rest of B follows; the line reported must be that of the first
/// differing byte in what both held when compared.
#[test]
fn line_numbers_count_the_bytes_compared_not_a_later_read() {
    use std::io::Write;
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    gnu::lines_file(&a, 40);
    let orig = std::fs::read(&a).unwrap();
    let mut cmp = gnu::spawn_piped(&["cmp", "a", "-"], d.path());
    let mut pipe = cmp.stdin.take().unwrap();
    let first = 3 << 20;
    pipe.write_all(&orig[..first]).unwrap();
    std::fs::write(&a, vec![b'x'; orig.len()]).unwrap();
    // cmp stops reading at the difference: the rest may not be taken.
    let _ = pipe.write_all(&orig[first..]);
    drop(pipe);
    let o = cmp.wait_with_output().unwrap();
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(1), "{out}");
    // "a - differ: char N, line L"
    let words: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(&words[..4], ["a", "-", "differ:", "char"], "{out}");
    let at: usize = words[4].trim_end_matches(',').parse().unwrap();
    let line: usize = words[6].parse().unwrap();
    assert!(at > 1 << 20, "{out}");
    let newlines = orig[..at - 1].iter().filter(|&&c| c == b'\n').count();
    assert_eq!(line, newlines + 1, "{out}");
}

/// The same file read from the same offset is identical without being
/// read, as GNU finds it: `echo abc | cmp - -` said "EOF on - which is
/// empty" (both sides read one standard input), and `cmp /dev/zero
/// /dev/zero` ran until killed. A standard input moved past its start is
/// not at the same offset as the file it is.
#[test]
fn the_same_input_twice_is_identical() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), b"a\nb\n").unwrap();
    std::os::unix::fs::symlink("f", d.path().join("l")).unwrap();
    gnu::same_bounded("cmp", &["-", "-"], Some(b"abc\n"), d.path());
    gnu::same_bounded("cmp", &["/dev/zero", "/dev/zero"], None, d.path());
    gnu::same_bounded("cmp", &["f", "l"], None, d.path());
    gnu::same_bounded(
        "cmp",
        &["-i", "1", "/dev/zero", "/dev/zero"],
        None,
        d.path(),
    );
    for script in ["cmp - f < f >/dev/null", "(read x; cmp - f) < f >/dev/null"] {
        let ferry = format!("{} cmp", gnu::FERRY);
        let ours = gnu::sh_bounded(&script.replace("cmp", &ferry), d.path());
        assert_eq!(ours, gnu::sh_bounded(script, d.path()), "{script}");
    }
}

/// Runs `ferry cmp OPTS a -` with `a` (40 MiB of lines, or `contents`)
/// and standard input its copy through a pipe, truncating `a` to 1 MiB
/// once cmp has taken 3 MiB of the pipe: cmp's status, output and
/// message (`ferry cmp` read as `cmp`), and what `a` held.
fn cut_short_under_cmp(
    opts: &[&str],
    contents: Option<Vec<u8>>,
) -> (i32, Vec<u8>, String, Vec<u8>) {
    use std::io::Write;
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    match contents {
        Some(v) => std::fs::write(&a, v).unwrap(),
        None => gnu::lines_file(&a, 40),
    }
    let orig = std::fs::read(&a).unwrap();
    let mut args = vec!["cmp"];
    args.extend(opts);
    args.extend(["a", "-"]);
    let mut cmp = gnu::spawn_piped(&args, d.path());
    let mut pipe = cmp.stdin.take().unwrap();
    pipe.write_all(&orig[..3 << 20]).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&a)
        .and_then(|f| f.set_len(1 << 20))
        .unwrap();
    // The rest from another thread, while cmp's output is read.
    let rest = orig[3 << 20..].to_vec();
    let feed = std::thread::spawn(move || {
        let _ = pipe.write_all(&rest);
    });
    let o = cmp.wait_with_output().unwrap();
    feed.join().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).replace("ferry cmp", "cmp");
    (o.status.code().unwrap_or(-1), o.stdout, err, orig)
}

/// A file cut short while cmp reads it ends there, in GNU's words ("EOF on
/// a after byte N, in line L", status 1). Its mapped pages past the new
/// end read as zeros (the SIGBUS guard), and cmp reported those zeros as
/// a difference ("a - differ: byte 3145729, line 53973"). Here B comes
/// through a pipe and A is truncated to 1 MiB once cmp has taken 3 MiB.
#[test]
fn a_file_cut_short_under_cmp_is_its_end() {
    let (code, out, err, orig) = cut_short_under_cmp(&[], None);
    assert_eq!((code, &out[..]), (1, &b""[..]), "{err}");
    // "cmp: EOF on a after byte N, in line L" (or ", line L" after a newline)
    let rest = err.strip_prefix("cmp: EOF on a after byte ").expect(&err);
    let (n, line) = rest.trim_end().split_once(", ").unwrap();
    let n: usize = n.parse().unwrap();
    assert!(n >= 1 << 20, "{err}");
    let newlines = orig[..n].iter().filter(|&&c| c == b'\n').count();
    let want = if orig[n - 1] == b'\n' {
        format!("line {newlines}")
    } else {
        format!("in line {}", newlines + 1)
    };
    assert_eq!(line, want, "{err}");
}

/// `cmp -l` on a file cut short under it: GNU lists no difference in the
/// bytes both files held and ends with "EOF on a after byte N" (status
/// 1). cmp -l had no check for lost pages: it listed every byte of the
/// other file against the zeros the SIGBUS guard put in place of the
/// lost ones ("2097153  12   0", a million lines), or stopped with "the
/// file shrank while it was mapped" (status 2).
#[test]
fn cmp_l_ends_a_file_cut_short_under_it() {
    let (code, out, err, _) = cut_short_under_cmp(&["-l"], None);
    assert_eq!(
        (code, String::from_utf8_lossy(&out[..out.len().min(200)])),
        (1, "".into()),
        "{err}"
    );
    let n = err
        .strip_prefix("cmp: EOF on a after byte ")
        .and_then(|r| r.strip_suffix('\n'))
        .expect(&err);
    let n: usize = n.parse().expect(&err);
    assert!((1 << 20..=3 << 20).contains(&n), "{err}");
}

/// `cmp -s` on a file cut short under it: the files differ (status 1,
/// nothing said), even where the bytes the file lost were zeros, as the
/// other file's are. cmp -s compared the SIGBUS guard's zeros with them,
/// found nothing, and stopped at the next read with "the file shrank
/// while it was mapped" (status 2). Here A is 1 MiB of text and 39 MiB
/// of zeros.
#[test]
fn cmp_s_ends_a_file_cut_short_under_it() {
    let mut v = gnu::texty(1 << 20, 5);
    v.resize(40 << 20, 0);
    let (code, out, err, _) = cut_short_under_cmp(&["-s"], Some(v));
    assert_eq!((code, &out[..], &err[..]), (1, &b""[..], ""));
}
