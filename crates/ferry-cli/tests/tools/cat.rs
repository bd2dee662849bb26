//! `ferry cat` against GNU cat.

use crate::gnu;
use gnu::{s, same, Corpus};

#[test]
fn every_option_on_every_input() {
    let c = Corpus::new();
    let opts: &[&[&str]] = &[
        &[],
        &["-n"],
        &["-b"],
        &["-s"],
        &["-E"],
        &["-T"],
        &["-v"],
        &["-A"],
        &["-e"],
        &["-t"],
        &["-u"],
        &["-ns"],
        &["-bs"],
        &["-bn"],
        &["-nET"],
        &["-vs"],
        &["--number", "--show-ends"],
    ];
    for o in opts {
        for f in &c.files {
            let mut a = s(o);
            a.push(f.clone());
            same("cat", &a, None, c.path(), &[]);
        }
        // Several files: numbering and blank-line state carry across them.
        let mut a = s(o);
        a.extend(c.files.iter().take(7).cloned());
        same("cat", &a, None, c.path(), &[]);
    }
}

#[test]
fn stdin_pipes_dash_and_errors() {
    let c = Corpus::new();
    let text = gnu::texty(200_000, 5);
    same("cat", &[], Some(&text), c.path(), &[]);
    same("cat", &s(&["-n"]), Some(&text), c.path(), &[]);
    same(
        "cat",
        &s(&["text2", "-", "crlf"]),
        Some(b"from stdin\n"),
        c.path(),
        &[],
    );
    same(
        "cat",
        &s(&["-A", "-", "-"]),
        Some(b"only once\n"),
        c.path(),
        &[],
    );
    same("cat", &s(&["nonexistent", "text2"]), None, c.path(), &[]);
    same("cat", &s(&["."]), None, c.path(), &[]);
    same("cat", &s(&["-z"]), None, c.path(), &[]);
    same("cat", &s(&["--bogus"]), None, c.path(), &[]);
    same("cat", &s(&["--", "-n"]), None, c.path(), &[]);
    same("cat", &s(&["text2", "--", "empty"]), None, c.path(), &[]);
}

#[test]
fn output_to_a_file_and_to_itself() {
    let c = Corpus::new();
    let out = c.file("out");
    let f = std::fs::File::create(&out).unwrap();
    let st = std::process::Command::new(gnu::FERRY)
        .args(["cat", "text", "binary"])
        .current_dir(c.path())
        .stdout(f)
        .status()
        .unwrap();
    assert!(st.success());
    let want = [
        std::fs::read(c.file("text")).unwrap(),
        std::fs::read(c.file("binary")).unwrap(),
    ]
    .concat();
    assert!(std::fs::read(&out).unwrap() == want);
    // Appending a file to itself: GNU refuses ("input file is output file").
    for prog in [gnu::FERRY, "cat"] {
        let p = c.file(&format!("self-{}", prog.len()));
        std::fs::write(&p, b"abc\n").unwrap();
        let f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        let mut cmd = std::process::Command::new(prog);
        if prog != "cat" {
            cmd.arg("cat");
        }
        let o = cmd.arg(&p).stdout(f).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{prog}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("input file is output file"),
            "{prog}: {:?}",
            o.stderr
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"abc\n");
    }
}

#[test]
fn closed_pipe_ends_quietly_like_gnu() {
    // `cat big | head -1`: killed by SIGPIPE, nothing on stderr.
    let c = Corpus::new();
    let big = c.file("big");
    std::fs::write(&big, gnu::texty(8 << 20, 3)).unwrap();
    for (prog, pre) in [(gnu::FERRY, vec!["cat"]), ("cat", vec![])] {
        for opt in [None, Some("-n")] {
            let mut cmd = std::process::Command::new(prog);
            cmd.args(&pre);
            if let Some(o) = opt {
                cmd.arg(o);
            }
            let mut ch = cmd
                .arg(&big)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut out = ch.stdout.take().unwrap();
            let mut first = [0u8; 10];
            use std::io::Read;
            out.read_exact(&mut first).unwrap();
            drop(out);
            let o = ch.wait_with_output().unwrap();
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(
                o.status.signal(),
                Some(libc::SIGPIPE),
                "{prog} {opt:?}: {:?}",
                o.status
            );
            assert!(
                o.stderr.is_empty(),
                "{prog} {opt:?}: {:?}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}

#[test]
fn a_few_hundred_mebibytes() {
    let c = Corpus::new();
    let big = c.file("huge");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&big).unwrap();
        let chunk = gnu::texty(1 << 20, 9);
        for _ in 0..300 {
            f.write_all(&chunk).unwrap();
        }
    }
    let out = c.file("huge-copy");
    let f = std::fs::File::create(&out).unwrap();
    let st = std::process::Command::new(gnu::FERRY)
        .args(["cat", "huge"])
        .current_dir(c.path())
        .stdout(f)
        .status()
        .unwrap();
    assert!(st.success());
    let (a, b) = (std::fs::read(&big).unwrap(), std::fs::read(&out).unwrap());
    assert!(a == b, "300 MiB copy differs");
    // Into a pipe: spliced through a private pipe, 1 MiB at a time.
    let o = std::process::Command::new(gnu::FERRY)
        .args(["cat", "huge"])
        .current_dir(c.path())
        .output()
        .unwrap();
    assert!(
        o.status.success() && o.stdout == a,
        "300 MiB through a pipe differs"
    );
    // Standard input a regular file already read partway (the splice
    // starts at its offset), then a named file, into a pipe.
    let o = std::process::Command::new("sh")
        .args([
            "-c",
            "dd bs=12345 count=1 of=/dev/null 2>/dev/null; exec \"$0\" cat - huge",
            gnu::FERRY,
        ])
        .current_dir(c.path())
        .stdin(std::fs::File::open(&big).unwrap())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{:?}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stdout.len() == 2 * a.len() - 12345,
        "offset copy: {} bytes",
        o.stdout.len()
    );
    assert!(o.stdout[..a.len() - 12345] == a[12345..] && o.stdout[a.len() - 12345..] == a[..]);
    // Through a pipe (the splice path), with -n (the formatting path).
    let o = std::process::Command::new(gnu::FERRY)
        .args(["cat", "-n", "huge"])
        .current_dir(c.path())
        .output()
        .unwrap();
    let g = std::process::Command::new("cat")
        .args(["-n", "huge"])
        .current_dir(c.path())
        .output()
        .unwrap();
    assert!(o.stdout == g.stdout, "cat -n of 300 MiB differs from GNU");
    // Into regular files (the two-thread copy_file_range path), the way a
    // shell leaves them: after bytes already written, in append mode, from
    // standard input read partway, and over a longer file opened without
    // truncation (`1<>`). Each output must equal GNU cat's.
    for script in [
        "{ printf head; exec \"$@\" huge huge; } > out",
        "printf head > out; exec \"$@\" huge >> out",
        "dd bs=12345 count=1 of=/dev/null 2>/dev/null; \"$@\" - huge < huge > out",
        "{ dd bs=777 count=1 of=/dev/null 2>/dev/null; exec \"$@\"; } < huge > out",
        "head -c 400000000 /dev/zero > out; exec \"$@\" huge 1<> out",
    ] {
        let mut got = Vec::new();
        for prog in [vec![gnu::FERRY, "cat"], vec!["cat"]] {
            let st = std::process::Command::new("sh")
                .arg("-c")
                .arg(script)
                .arg("sh")
                .args(&prog)
                .current_dir(c.path())
                .status()
                .unwrap();
            assert!(st.success(), "{script}: {prog:?}");
            got.push(std::fs::read(c.file("out")).unwrap());
            std::fs::remove_file(c.file("out")).unwrap();
        }
        assert!(
            got[0].len() == got[1].len(),
            "{script}: {} bytes, GNU {}",
            got[0].len(),
            got[1].len()
        );
        assert!(got[0] == got[1], "{script}: output differs from GNU cat's");
    }
}

/// With options, from a pipe, each read's output is written before the
/// next read waits (coreutils' cat-buf.sh): a reader gets the first line
/// while the writer still holds the pipe open.
#[test]
fn formatted_output_from_a_pipe_is_not_held_back() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    for opts in [&["-v"][..], &["-n"], &["-A"], &["-s", "-E"]] {
        let mut child = gnu::ferry("cat")
            .args(opts)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"1\n").unwrap();
        stdin.flush().unwrap();
        // Read the first line with the pipe still open; a cat that held
        // its output back would leave this read waiting (the reader
        // thread gives up after 20 s and the test fails).
        let mut out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut got = Vec::new();
            let mut b = [0u8; 64];
            while !got.contains(&b'\n') {
                match out.read(&mut b) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&b[..n]),
                }
            }
            let _ = tx.send(got);
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .unwrap_or_default();
        drop(stdin);
        let _ = child.wait();
        assert!(
            got.ends_with(b"\n") && !got.is_empty(),
            "cat {opts:?}: {got:?}"
        );
    }
}

/// `cat <&-`: GNU says "-: Bad file descriptor" and, at its end, "closing
/// standard input: Bad file descriptor"; ferry omitted the second line.
#[test]
fn cat_reports_closing_a_closed_standard_input() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), b"hi\n").unwrap();
    for args in ["", "-n", "- f", "f"] {
        let ours = gnu::sh(d.path(), &format!("$FERRY cat {args} <&-"));
        let theirs = gnu::sh(d.path(), &format!("cat {args} <&-"));
        assert_eq!(
            (ours.code, ours.stdout, gnu::as_gnu(&ours.stderr, "cat")),
            (theirs.code, theirs.stdout, theirs.stderr),
            "cat {args} <&-"
        );
    }
}

/// cat's messages showed a name that is not UTF-8 with U+FFFD for each
/// stray byte, and any name unquoted; GNU's `quotef` leaves a plain name
/// bare and quotes the rest in the shell-escape style.
#[test]
fn cat_quotes_file_names_in_messages_as_gnu() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let (dir, names) = gnu::non_utf8_names();
    let os = |b: &[u8]| OsString::from_vec(b.to_vec());
    let args = vec![
        names[4].clone(),
        names[2].clone(),
        os(b"a b"),
        os(b"nofile"),
        os(b"n\nl"),
        os("\u{e9}".as_bytes()),
        os(b"it's"),
        os(b"a'b c"),
        os(b"a'#"),
    ];
    gnu::same_bytes("cat", &args, dir.path());
}
