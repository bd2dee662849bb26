//! GNU ed 1.19: the line editor. Its buffer lives in a tmpfile scratch
//! file that it writes and reads back at random with fseek, ftell, fwrite
//! and fread; it reads files with getc, its commands from an unbuffered
//! stdin (setvbuf _IONBF, a byte a call, so a `!` shell command reads on
//! from where ed stopped), writes with fputs and printf, runs `r !cmd` and
//! `w !cmd` through popen. Built with its own configure and Makefile. Both
//! builds run ed's own testsuite scripts and generated editing scripts.

use super::{copy_tree, ferry_cppflags, ferry_libs, pair, same, sh, source, Case, Gen, Out, Pair};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn build(dir: &Path, ferry: bool) -> PathBuf {
    copy_tree(&source("ed"), dir);
    let mut conf = Command::new("./configure");
    conf.arg("CC=cc").arg("CFLAGS=-O1");
    if ferry {
        conf.arg(format!("CPPFLAGS={}", ferry_cppflags()));
        conf.arg(format!("LDFLAGS={}", ferry_libs()));
    }
    sh(dir, "./configure", &mut conf);
    sh(dir, "make ed", Command::new("make").args(["-j1", "ed"]));
    dir.join("ed")
}

fn ed() -> &'static Pair {
    static P: OnceLock<Pair> = OnceLock::new();
    pair(&P, "ed", build)
}

/// ed's testsuite: each script against test.txt (and test.bin, an empty
/// `zero`), with stdin the script file and then a pipe; .err scripts also
/// with --loose-exit-status. Both builds must do the same, and glibc's
/// must produce what the suite expects (out.o equal to the .r file).
#[test]
fn upstream_testsuite() {
    let p = ed();
    let dir = source("ed").join("testsuite");
    let txt = std::fs::read(dir.join("test.txt")).expect("test.txt");
    let bin = std::fs::read(dir.join("test.bin")).expect("test.bin");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testsuite")
        .flatten()
        .map(|e| e.path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("ed" | "err")))
        .collect();
    scripts.sort();
    assert!(
        scripts.len() > 50,
        "ed's testsuite has {} scripts",
        scripts.len()
    );
    for script in scripts {
        let name = script.file_name().unwrap().to_string_lossy().into_owned();
        let body = std::fs::read(&script).expect("script");
        let base = |args: &[&str]| {
            Case::new(args)
                .file("test.txt", &txt)
                .file("test.bin", &bin)
                .file("zero", b"")
                .file("script", &body)
        };
        let r = same(
            p,
            "ed",
            &format!("-s test.txt <{name}"),
            &base(&["-s", "test.txt"]).stdin_file("script"),
        );
        same(
            p,
            "ed",
            &format!("-s test.txt, {name} piped"),
            &base(&["-s", "test.txt"]).stdin(&body),
        );
        if name.ends_with(".err") {
            same(
                p,
                "ed",
                &format!("-sl test.txt <{name}"),
                &base(&["-sl", "test.txt"]).stdin_file("script"),
            );
            assert_ne!(r.status, Some(0), "{name} should fail");
        } else {
            let expected = std::fs::read(script.with_extension("r")).expect(".r file");
            assert_eq!(
                r.status,
                Some(0),
                "{name}: {}",
                String::from_utf8_lossy(&r.stderr)
            );
            assert!(
                r.files.get("out.o") == Some(&expected),
                "{name}: out.o is not {name}'s .r"
            );
        }
    }
}

/// A random editing script over `lines` lines: appends, changes,
/// deletions, moves, copies, joins, substitutions, global commands,
/// undo, marks, reads and writes of files (and of shell commands), prints
/// in every form, with some commands that fail on purpose.
fn edit_script(g: &mut Gen, lines: usize) -> Vec<u8> {
    let mut s = String::new();
    let addr = |g: &mut Gen| 1 + g.below(lines.max(1) as u64);
    for i in 0..120 {
        let (a, b) = (addr(g), addr(g));
        let (lo, hi) = (a.min(b), a.max(b));
        let cmd = match g.below(18) {
            0 => format!("{a}a\nadded {i}\nand more {i}\n.\n"),
            1 => format!("{lo},{hi}c\nchanged {i}\n.\n"),
            2 => format!("{lo},{hi}d\n"),
            3 => format!("{lo},{hi}m{}\n", g.below(lines as u64 + 1)),
            4 => format!("{lo},{hi}t{}\n", g.below(lines as u64 + 1)),
            5 => format!("{lo},{hi}j\n"),
            6 => format!("{lo},{hi}s/[aeiou]/<&>/g\n"),
            7 => "g/line/s/e/E/\n".to_string(),
            8 => "v/x/s/$/ (no x)/\n".to_string(),
            9 => "u\n".to_string(),
            10 => format!("{a}ka\n'a,.n\n"),
            11 => format!("{lo},{hi}l\n"),
            12 => format!("w part{}\n", i % 3),
            13 => format!("{a}r part{}\n", g.below(3)),
            14 => format!("{a}r !head -c {} part0\n", g.below(5000)),
            15 => format!("{lo},{hi}w !wc\n"),
            16 => format!(
                "/{}/p\n",
                ["ferry", "the", "nothing-like-this", "42"][i % 4]
            ),
            _ => format!("{}\n", ["1000000p", "kz", "x", "f", "=", ".="][i % 6]),
        };
        s.push_str(&cmd);
    }
    s.push_str("H\nw result\n,p\nQ\n");
    s.into_bytes()
}

#[test]
fn generated_edit_scripts() {
    let p = ed();
    let mut g = Gen::new(0xed);
    // Up to 128 KiB: ed keeps every line in its scratch file and the
    // script reads files back in, so a 1 MiB start grows to tens of MiB
    // (the debug libferry then takes minutes; 1 MiB runs in error_cases).
    for &n in super::SIZES.iter().filter(|&&n| n <= 131072) {
        let text = g.text(n);
        let lines = text.iter().filter(|&&c| c == b'\n').count() + 1;
        let script = edit_script(&mut g, lines);
        let case = || {
            Case::new(&["-s", "file"])
                .file("file", &text)
                .file("script", &script)
                .file("part0", b"")
        };
        same(
            p,
            "ed",
            &format!("script on {n} bytes"),
            &case().stdin_file("script"),
        );
        same(
            p,
            "ed",
            &format!("piped script on {n} bytes"),
            &case().stdin(&script),
        );
    }
}

/// Errors around files and output: missing and unreadable files, a
/// directory, writing where it cannot, stdout on /dev/full and into a
/// closed pipe, and a `!` escape reading the script's next line.
#[test]
fn error_cases() {
    let p = ed();
    let s = b"r missing\ne .\nw /nonexistent/x\nw .\nh\n,p\nq\n";
    same(p, "ed", "bad files", &Case::new(&["-v"]).stdin(s));
    same(
        p,
        "ed",
        "missing file argument",
        &Case::new(&["missing"]).stdin(b"q\n"),
    );
    let big = Gen::new(5).text((1 << 20) + 3);
    let print = b",p\nq\n";
    for out in [Out::Full, Out::Closed] {
        let c = Case::new(&["-s", "big"])
            .file("big", &big)
            .stdin(print)
            .out(out);
        same(p, "ed", &format!(",p to {out:?}"), &c);
    }
    let shell = b"a\nx\n.\n!read one; echo \"got $one\"\nline for read\n,p\nQ\n";
    let c = Case::new(&["-s"]).file("script", shell);
    same(p, "ed", "!read from a file", &c.stdin_file("script"));
    same(
        p,
        "ed",
        "!read from a pipe",
        &Case::new(&["-s"]).stdin(shell),
    );
}
