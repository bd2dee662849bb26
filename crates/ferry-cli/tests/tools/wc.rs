//! `ferry wc` against GNU wc, in the C and UTF-8 locales.

use crate::gnu;
use gnu::{s, same, Corpus};

const LOCALES: [&str; 2] = ["C", "C.UTF-8"];

#[test]
fn every_count_on_every_input_in_both_locales() {
    let c = Corpus::new();
    // Multi-byte characters straddling the 1 MiB region boundaries.
    std::fs::write(c.file("big-text"), gnu::texty(3 << 20, 77)).unwrap();
    let mut files = c.files.clone();
    files.push("big-text".into());
    let opts: &[&[&str]] = &[
        &[],
        &["-l"],
        &["-w"],
        &["-m"],
        &["-c"],
        &["-L"],
        &["-lw"],
        &["-wm"],
        &["-lwmcL"],
        &["-cL"],
    ];
    for loc in LOCALES {
        let env = [("LC_ALL", loc)];
        for o in opts {
            for f in &files {
                let mut a = s(o);
                a.push(f.clone());
                same("wc", &a, None, c.path(), &env);
            }
            let mut a = s(o);
            a.extend(files.iter().cloned());
            same("wc", &a, None, c.path(), &env);
        }
    }
}

/// Files of 64 MiB or more are counted on two cores: a named file split
/// after the first newline past its middle, each half read by a stream of
/// its own. A 70 MiB file whose multi-byte and
/// invalid sequences fall everywhere, with one 9 MiB stretch without a
/// newline (a region whose second half cannot be split), must still count
/// as GNU counts it — and so must the same bytes through a pipe, which
/// goes the one-core way.
#[test]
fn large_files_on_two_cores() {
    let c = Corpus::new();
    let big = gnu::big_with_long_line(5);
    std::fs::write(c.file("big"), &big).unwrap();
    // No line end in the second half: no split, counted on one core.
    let mut tail_line = big[..10 << 20].to_vec();
    tail_line.extend(std::iter::repeat_n(b'x', 60 << 20));
    std::fs::write(c.file("tail-line"), &tail_line).unwrap();
    for loc in LOCALES {
        let env = [("LC_ALL", loc)];
        for o in [&["-w"][..], &["-m"], &["-L"], &["-lwmcL"], &["-l"], &[]] {
            let mut a = s(o);
            a.push("big".into());
            same("wc", &a, None, c.path(), &env);
        }
        for o in [&["-l"][..], &["-lwmcL"]] {
            let mut a = s(o);
            a.extend(s(&["tail-line", "big"]));
            same("wc", &a, None, c.path(), &env);
        }
        same("wc", &[], Some(&big), c.path(), &env);
    }
}

#[test]
fn stdin_widths_totals_and_errors() {
    let c = Corpus::new();
    let text = gnu::texty(100_000, 21);
    for loc in LOCALES {
        let env = [("LC_ALL", loc)];
        same("wc", &[], Some(&text), c.path(), &env);
        same("wc", &s(&["-l"]), Some(&text), c.path(), &env);
        same("wc", &s(&["-L", "-c"]), Some(&text), c.path(), &env);
        same("wc", &s(&["-", "text2"]), Some(&text), c.path(), &env);
        same("wc", &s(&["text2", "-"]), Some(b"x y\n"), c.path(), &env);
        same("wc", &s(&["nonexistent", "text2"]), None, c.path(), &env);
        same(
            "wc",
            &s(&["text2", "nonexistent", "crlf"]),
            None,
            c.path(),
            &env,
        );
        same("wc", &s(&["-l", "nonexistent"]), None, c.path(), &env);
        same("wc", &s(&["."]), None, c.path(), &env);
        same("wc", &s(&["-w", ".", "utf8"]), None, c.path(), &env);
        same("wc", &s(&["-z"]), None, c.path(), &env);
        same("wc", &s(&["--bogus"]), None, c.path(), &env);
        same("wc", &s(&["--", "-l"]), None, c.path(), &env);
    }
}

#[test]
fn stdin_redirected_from_a_regular_file() {
    // Widths come from the file's size; -c alone reads nothing.
    let c = Corpus::new();
    for (prog, pre) in [(gnu::FERRY, vec!["wc"]), ("wc", vec![])] {
        let _ = (prog, pre);
    }
    for args in [vec![], vec!["-c"], vec!["-lw"], vec!["-m"]] {
        let run = |prog: &str, pre: &[&str]| {
            std::process::Command::new(prog)
                .args(pre)
                .args(&args)
                .env("LC_ALL", "C.UTF-8")
                .stdin(std::fs::File::open(c.file("text")).unwrap())
                .output()
                .unwrap()
        };
        let ours = run(gnu::FERRY, &["wc"]);
        let gnu = run("wc", &[]);
        assert_eq!(ours.stdout, gnu.stdout, "wc {args:?} < text");
        assert_eq!(ours.status.code(), gnu.status.code());
    }
}

/// `--files0-from`, as GNU wc: names from a file or standard input,
/// NUL-separated; zero-length names, `-` from stdin, a missing list, file
/// operands beside it; columns sized from a regular list, 1 from a pipe.
#[test]
fn files0_from_as_gnu() {
    let c = Corpus::new();
    std::fs::write(c.file("g"), b"").unwrap();
    std::fs::write(c.file("t1"), b"one two\nthree\n").unwrap();
    std::fs::write(c.file("t2"), "ünï cödé\n".repeat(500)).unwrap();
    std::fs::write(c.file("list"), b"t1\0t2\0g\0").unwrap();
    std::fs::write(c.file("list-bad"), b"t1\0\0missing\0t2").unwrap();
    std::fs::write(c.file("list-one"), b"t2").unwrap();
    std::fs::write(c.file("list-empty"), b"").unwrap();
    std::fs::write(c.file("list-dash"), b"-\0t1\0").unwrap();
    // Names with newlines are quoted in the output (coreutils' wc-files0.sh).
    for n in ["n\nl", "q'\nx", "ctl\u{1}\nz", "c\\d\ne", "tab\tx"] {
        std::fs::write(c.file(n), b"x\n").unwrap();
    }
    std::fs::write(
        c.file("list-nl"),
        "n\nl\0q'\nx\0ctl\u{1}\nz\0c\\d\ne\0tab\tx\0t1",
    )
    .unwrap();
    for env in LOCALES {
        let env = &[("LC_ALL", env)];
        for (args, stdin) in [
            (&["--files0-from=list"][..], None),
            (&["--files0-from=list-nl"], None),
            (&["n\nl", "q'\nx", "tab\tx", "t1"], None),
            (&["--files0-from", "list", "-l"], None),
            (&["--files0-from=list-bad"], None),
            (&["--files0-from=list-one", "-c"], None),
            (&["--files0-from=list-empty"], None),
            (&["--files0-from=/dev/null"], None),
            (&["--files0-from=list-dash"], Some(&b"from stdin\n"[..])),
            (&["--files0-from=missing"], None),
            (&["--files0-from=-", "no-such"], Some(&b"a"[..])),
            (&["--files0-from=-"], Some(&b"t1\0t2\0g"[..])),
            (&["--files0-from=-", "-lwmcL"], Some(&b"t1\0t2\0"[..])),
            (&["--files0-from=-"], Some(&b"-"[..])),
            (&["--files0-from=-"], Some(&b"\0"[..])),
            (&["--files0-from=-"], Some(&b"\0\0"[..])),
            (&["--files0-from=-"], Some(&b"\0g\0"[..])),
            (&["--files0-from=-"], Some(&b"g"[..])),
            (&["--files0"], None),
            (&[""], None),
            (&["t1", "", "t2"], None),
        ] {
            same("wc", &s(args), stdin, c.path(), env);
        }
    }
}

/// -c of a file whose size says nothing (/proc: 0; /sys: one page): GNU
/// trusts the size only up to the last block below it and reads the rest
/// (coreutils' wc-proc.sh); ferry printed 0 and 4096.
#[test]
fn byte_counts_of_files_that_report_no_size() {
    let c = Corpus::new();
    std::fs::write(c.file("two"), b"ab").unwrap();
    for f in [
        "/proc/version",
        "/proc/filesystems",
        "/sys/kernel/profiling",
    ] {
        if std::fs::metadata(f).is_ok() {
            same("wc", &s(&["-c", f]), None, c.path(), &[("LC_ALL", "C")]);
            same(
                "wc",
                &s(&["-c", f, "two"]),
                None,
                c.path(),
                &[("LC_ALL", "C")],
            );
        }
    }
}

/// Multi-byte locales that are not UTF-8 (GB18030, EUC-JP): glibc decodes
/// them through gconv modules, which the statically linked binary loads at
/// run time. Counted as GNU counts, on generated bytes where valid
/// two- and four-byte sequences, stray lead bytes, ASCII words, blanks and
/// newlines fall anywhere. The locales are built into a scratch LOCPATH
/// with localedef (the charmaps come with Debian's `locales`, which
/// .ci/run installs); without them the test says what it skipped.
#[test]
fn multibyte_locales_other_than_utf8() {
    let c = Corpus::new();
    let dir = c.path().join("locales");
    std::fs::create_dir(&dir).unwrap();
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut bytes = Vec::new();
    while bytes.len() < 300_000 {
        let r = next();
        match r % 10 {
            0 => bytes.push(b'\n'),
            1 => bytes.push(b' '),
            2..=4 => bytes.extend_from_slice(b"word"),
            // A two-byte sequence (GBK / EUC-JP ranges).
            5 | 6 => bytes.extend([0xa1 + (r >> 8) as u8 % 0x5e, 0xa1 + (r >> 16) as u8 % 0x5e]),
            // A GB18030 four-byte sequence.
            7 => bytes.extend([
                0x81 + (r >> 8) as u8 % 0x7e,
                0x30 + (r >> 16) as u8 % 10,
                0x81 + (r >> 24) as u8 % 0x7e,
                0x30 + (r >> 32) as u8 % 10,
            ]),
            // Any byte: stray lead bytes, cut sequences.
            _ => bytes.push((r >> 8) as u8),
        }
    }
    std::fs::write(c.file("mb"), &bytes).unwrap();
    let mut ran = 0;
    for (name, input, charmap) in [
        ("zh_CN.GB18030", "zh_CN", "GB18030"),
        ("ja_JP.EUC-JP", "ja_JP", "EUC-JP"),
    ] {
        let made = std::process::Command::new("localedef")
            .args(["-i", input, "-f", charmap])
            .arg(dir.join(name))
            .output();
        if !dir.join(name).join("LC_CTYPE").is_file() {
            eprintln!(
                "skipped {name}: localedef -i {input} -f {charmap} made no locale ({made:?})"
            );
            continue;
        }
        ran += 1;
        let locpath = dir.to_string_lossy().into_owned();
        let env = [("LC_ALL", name), ("LOCPATH", locpath.as_str())];
        for o in [&["-m"][..], &["-w"], &["-L"], &["-lwmc"]] {
            let mut a = s(o);
            a.push("mb".into());
            same("wc", &a, None, c.path(), &env);
            same("wc", &s(o), Some(&bytes), c.path(), &env);
        }
    }
    eprintln!("{ran} of 2 locales compared");
}

/// wc wrote a name that is not UTF-8 with U+FFFD for each stray byte, in
/// its count lines and its messages; GNU writes the bytes in count lines
/// and quotes the name (quotef) in messages.
#[test]
fn wc_writes_file_names_as_bytes() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let (dir, names) = gnu::non_utf8_names();
    std::fs::write(dir.path().join("list"), b"bad\xff\xfe.txt\0b\0no\xffne\0").unwrap();
    let os = |b: &[u8]| OsString::from_vec(b.to_vec());
    for args in [
        vec![names[0].clone(), names[1].clone()],
        vec![
            os(b"-l"),
            names[0].clone(),
            names[4].clone(),
            names[1].clone(),
        ],
        vec![os(b"--files0-from=list")],
    ] {
        gnu::same_bytes("wc", &args, dir.path());
    }
}

/// Standard input and output in trouble, in GNU wc's words: `wc <&-` said
/// "-: Bad file descriptor" once, where GNU names the standard input it
/// reads for want of operands "'standard input'", prints its counts in
/// width 1 (it cannot examine the input) and then fails to close it ("-:
/// Bad file descriptor" again); `wc f > /dev/full` added the reason to
/// "write error", which GNU wc only gives for a closed output.
#[test]
fn closed_input_and_full_output_as_gnu_reports_them() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), b"hi there\n").unwrap();
    for (args, redir) in [
        (&[][..], "<&-"),
        (&["-", "-"], "<&-"),
        (&["-l", "-", "f"], "<&-"),
        (&["f"], "> /dev/full"),
        (&["f", "f"], "> /dev/full"),
        (&["f"], ">&-"),
    ] {
        gnu::same_redirected("wc", args, redir, d.path());
    }
}

/// Standard output and error in one file: each count comes out before a
/// later message, as GNU's `error` flushes standard output first (the
/// lines are written in blocks when not to a terminal).
#[test]
fn counts_come_out_before_the_messages_that_follow_them() {
    let c = Corpus::new();
    std::fs::write(c.file("a"), "one\n").unwrap();
    std::fs::write(c.file("b"), "two words\n").unwrap();
    let both = |prog: &str, pre: &[&str], args: &[&str], stdin: &[u8]| -> String {
        use std::io::Write;
        let out = c.path().join("both");
        let f = std::fs::File::create(&out).unwrap();
        let mut child = std::process::Command::new(prog)
            .args(pre)
            .args(args)
            .current_dir(c.path())
            .stdin(std::process::Stdio::piped())
            .stdout(f.try_clone().unwrap())
            .stderr(f)
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        child.wait().unwrap();
        std::fs::read_to_string(&out)
            .unwrap()
            .replace("ferry wc", "wc")
    };
    for (args, stdin) in [
        (&["a", "", "b"][..], &b""[..]),
        (&["a", "missing", "b"], b""),
        (&["--files0-from=-"], b"a\0\0b\0"),
        (&["--files0-from=-"], b"a\0-\0b\0"),
    ] {
        let ours = both(gnu::FERRY, &["wc"], args, stdin);
        let gnus = both("wc", &[], args, stdin);
        assert_eq!(ours, gnus, "{args:?}");
        // a's line first, then the message, then b's.
        let first = ours.lines().next().unwrap_or("");
        assert!(first.ends_with(" a"), "{ours}");
        assert!(
            ours.lines().nth(1).is_some_and(|l| l.starts_with("wc: ")),
            "{ours}"
        );
    }
}
