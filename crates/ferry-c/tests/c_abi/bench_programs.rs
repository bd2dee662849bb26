//! The programs of `ferry-bench asf-c` (crates/ferry-c/bench): each tool's
//! three builds — its stdio source against glibc, the same source against
//! ferry/stdio.h, and its rewrite on ferry/asi.h — must print the same
//! bytes, exit the same way, and agree with the real tool (GNU wc, cut,
//! cmp) or a model of the program, on inputs shaped to break them:
//! empty, one byte, no final newline, lines longer than a region, regions
//! that end inside a line, NULs, CRLF, bytes ≥ 0x80, pipes, missing files,
//! directories and a full disk.

use crate::common::{include, libdir, wait_with_deadline, Gen, DEADLINE};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

const TOOLS: [&str; 8] = ["cat", "cp", "wc", "cut", "cmp", "filter", "getc", "fread1k"];
const BUILDS: [&str; 3] = ["glibc", "ferry", "asi"];

fn bench_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench")
}

/// Every tool built three ways, once, as the bench builds them (-O2), but
/// with warnings as errors.
fn bin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir").keep();
        let lib = libdir();
        for t in TOOLS {
            for b in BUILDS {
                let sub = if b == "asi" { "asi" } else { "stdio" };
                let mut c = Command::new("cc");
                c.args(["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror"]);
                c.arg("-o").arg(dir.join(format!("{t}-{b}")));
                if b != "glibc" {
                    c.arg("-I").arg(include());
                    if b == "ferry" {
                        c.args(["-include", "ferry/stdio.h"]);
                    }
                }
                c.arg(bench_src().join(sub).join(format!("{t}.c")));
                if b != "glibc" {
                    c.arg("-L").arg(lib).arg("-lferry");
                    c.arg(format!("-Wl,-rpath,{}", lib.display()));
                }
                let o = c.output().expect("running cc");
                assert!(
                    o.status.success(),
                    "compiling {t} ({b}):\n{}",
                    String::from_utf8_lossy(&o.stderr)
                );
            }
        }
        dir
    })
}

#[derive(Debug, PartialEq, Eq)]
struct Out {
    status: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs one build in `dir` with `args`; standard input from `stdin` (a
/// pipe) when given.
fn run(tool: &str, build: &str, dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Out {
    let mut c = Command::new(bin_dir().join(format!("{tool}-{build}")));
    c.args(args).current_dir(dir).env("LC_ALL", "C");
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let child = c.spawn().expect("running a bench program");
    let o = wait_with_deadline(child, stdin.unwrap_or_default().to_vec(), DEADLINE);
    Out {
        status: o.status.code(),
        stdout: o.stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The three builds' results, asserted equal; returns the glibc one.
fn all_builds(tool: &str, dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Out {
    let mut outs = BUILDS.iter().map(|b| (b, run(tool, b, dir, args, stdin)));
    let (_, first) = outs.next().expect("three builds");
    for (b, o) in outs {
        assert!(
            o == first,
            "{tool} {args:?}: {b} differs from glibc\nglibc: {:?} {:?} ({} bytes out)\n{b}: {:?} {:?} ({} bytes out)",
            first.status,
            first.stderr,
            first.stdout.len(),
            o.status,
            o.stderr,
            o.stdout.len()
        );
    }
    first
}

/// Text of lines between `min` and `max` bytes from `alphabet`, `size`
/// bytes in all (the last line may be cut short: no final newline).
fn text(seed: u64, size: usize, min: usize, max: usize, alphabet: &[u8]) -> Vec<u8> {
    let mut r = Gen::new(seed);
    let mut v = Vec::with_capacity(size);
    while v.len() < size {
        let n = min + (r.next() as usize) % (max - min + 1);
        for _ in 0..n {
            v.push(alphabet[(r.next() as usize) % alphabet.len()]);
        }
        v.push(b'\n');
    }
    v.truncate(size);
    v
}

/// Inputs shaped to break the programs, by name.
fn inputs() -> Vec<(&'static str, Vec<u8>)> {
    let words = b"abcdefghij   \t";
    let mut binary = Vec::new();
    let mut r = Gen::new(99);
    while binary.len() < 2_300_000 {
        binary.extend_from_slice(&r.next().to_le_bytes());
    }
    let mut long = vec![b'x'; 3 << 20];
    long.extend_from_slice(b"\nab\ncd e\n");
    long.extend(std::iter::repeat_n(b'y', (1 << 20) + 5));
    let mut region_edge = text(5, (1 << 20) - 3, 0, 30, words);
    region_edge.extend_from_slice(b"abcdefghijklmn\nz\n");
    vec![
        ("empty", Vec::new()),
        ("one-byte", b"a".to_vec()),
        ("newline", b"\n".to_vec()),
        ("no-final-newline", b"abc def\nghijklmnopqrstu".to_vec()),
        ("short-lines", text(1, 200_000, 0, 12, words)),
        ("text", text(2, 2_600_000, 20, 100, words)),
        (
            "crlf-nul-high",
            text(3, 1_500_000, 0, 40, b"ab \r\0\x80\xc3\xa9\xff\x0b,"),
        ),
        ("binary", binary),
        ("long-lines", long),
        ("region-edge", region_edge),
    ]
}

/// A directory holding every input under its name.
fn input_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir").keep();
        for (name, data) in inputs() {
            std::fs::write(dir.join(name), data).expect("writing an input");
        }
        dir
    })
}

fn gnu(dir: &Path, argv: &[&str]) -> Out {
    let o = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .expect("running the GNU tool");
    Out {
        status: o.status.code(),
        stdout: o.stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The filter's model: lines whose length without the newline is even,
/// each written up to its first NUL (as fputs writes it).
fn filter_model(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in data.split_inclusive(|&b| b == b'\n') {
        let len = line.len() - usize::from(line.ends_with(b"\n"));
        if len % 2 == 0 {
            let k = line.iter().position(|&b| b == 0).unwrap_or(line.len());
            out.extend_from_slice(&line[..k]);
        }
    }
    out
}

fn fread1k_model(data: &[u8]) -> String {
    let sum = data.chunks(1024).fold(0u32, |s, c| {
        s.wrapping_add(u32::from(c[0]) + u32::from(c[c.len() - 1]))
    });
    format!("{} {}\n", data.len(), sum)
}

#[test]
fn every_build_agrees_with_the_real_tool_or_a_model() {
    let dir = input_dir();
    for (name, data) in inputs() {
        let ok = |o: &Out, want: &[u8], what: &str| {
            assert_eq!(o.status, Some(0), "{what} {name}: {}", o.stderr);
            assert!(o.stdout == want, "{what} {name}: wrong output");
        };
        ok(&all_builds("cat", dir, &[name], None), &data, "cat");
        let cut = gnu(dir, &["cut", "-c1-10", name]);
        ok(&all_builds("cut", dir, &[name], None), &cut.stdout, "cut");
        ok(
            &all_builds("filter", dir, &[name], None),
            &filter_model(&data),
            "filter",
        );
        let newlines = data.iter().filter(|&&b| b == b'\n').count();
        let want = format!("{} {newlines}\n", data.len());
        ok(
            &all_builds("getc", dir, &[name], None),
            want.as_bytes(),
            "getc",
        );
        let want = fread1k_model(&data);
        ok(
            &all_builds("fread1k", dir, &[name], None),
            want.as_bytes(),
            "fread1k",
        );
        // GNU wc's three counts, then the name.
        let w = gnu(dir, &["wc", name]);
        let counts: Vec<String> = String::from_utf8_lossy(&w.stdout)
            .split_whitespace()
            .take(3)
            .map(str::to_string)
            .collect();
        let want = format!("{} {name}\n", counts.join(" "));
        ok(&all_builds("wc", dir, &[name], None), want.as_bytes(), "wc");
    }
}

#[test]
fn cp_copies_every_input() {
    let dir = input_dir();
    let out = tempfile::tempdir().expect("tempdir");
    for (name, data) in inputs() {
        for b in BUILDS {
            let dst = out.path().join(format!("{name}-{b}"));
            // An existing longer target is truncated.
            std::fs::write(&dst, vec![b'!'; data.len() + 100]).expect("writing");
            let o = run("cp", b, dir, &[name, dst.to_str().expect("utf-8")], None);
            assert_eq!(o.status, Some(0), "cp {b} {name}: {}", o.stderr);
            let got = std::fs::read(&dst).expect("reading the copy");
            assert!(got == data, "cp {b} {name}: the copy differs");
        }
    }
}

#[test]
fn cmp_reports_as_gnu_cmp_does() {
    let work = tempfile::tempdir().expect("tempdir");
    let d = work.path();
    let base = text(7, 2_700_000, 0, 80, b"abcd \n");
    let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = vec![
        (base.clone(), base.clone()),
        (Vec::new(), Vec::new()),
        (Vec::new(), base.clone()),
        (base.clone(), Vec::new()),
        (base[..1 << 20].to_vec(), base.clone()),
        (base.clone(), base[..(1 << 20) + 1].to_vec()),
        (b"abc\n".to_vec(), b"abc\nd".to_vec()),
        (b"ab\ncd".to_vec(), b"ab\ncde".to_vec()),
    ];
    for at in [0, 1, 59, (1 << 20) - 1, 1 << 20, 2_000_000, base.len() - 1] {
        let mut b = base.clone();
        b[at] ^= 0x20;
        pairs.push((base.clone(), b));
    }
    for (i, (a, b)) in pairs.iter().enumerate() {
        std::fs::write(d.join("a"), a).expect("writing a");
        std::fs::write(d.join("b"), b).expect("writing b");
        let want = gnu(d, &["cmp", "a", "b"]);
        let got = all_builds("cmp", d, &["a", "b"], None);
        assert_eq!(got, want, "pair {i}: cmp a b");
        // The first file a pipe: lines are counted as they pass.
        let want = gnu(d, &["sh", "-c", "cat a | cmp /dev/stdin b"]);
        let got = all_builds("cmp", d, &["/dev/stdin", "b"], Some(a));
        assert_eq!(got, want, "pair {i}: cmp /dev/stdin b");
    }
    // Outside the C locale GNU cmp says "byte" where it says "char" in it.
    std::fs::write(d.join("a"), b"xyz\nabc").expect("writing a");
    std::fs::write(d.join("b"), b"xyz\nabd").expect("writing b");
    for b in BUILDS {
        let o = Command::new(bin_dir().join(format!("cmp-{b}")))
            .args(["a", "b"])
            .current_dir(d)
            .env("LC_ALL", "C.UTF-8")
            .output()
            .expect("running cmp");
        let g = Command::new("cmp")
            .args(["a", "b"])
            .current_dir(d)
            .env("LC_ALL", "C.UTF-8")
            .output()
            .expect("running GNU cmp");
        assert_eq!(o.stdout, g.stdout, "cmp {b} in C.UTF-8");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "a b differ: byte 7, line 2\n"
        );
    }
}

#[test]
fn pipes_give_what_files_give() {
    let dir = input_dir();
    for (name, data) in inputs() {
        for tool in ["cat", "wc", "cut", "filter", "getc", "fread1k"] {
            let from_file = all_builds(tool, dir, &[name], None);
            let from_pipe = all_builds(tool, dir, &["/dev/stdin"], Some(&data));
            let mut want = from_file.stdout;
            if tool == "wc" {
                // The one program that prints its file's name.
                want = String::from_utf8_lossy(&want)
                    .replace(name, "/dev/stdin")
                    .into_bytes();
            }
            assert!(from_pipe.stdout == want, "{tool} {name} from a pipe");
            assert_eq!(from_pipe.status, Some(0), "{tool} {name} from a pipe");
        }
    }
}

#[test]
fn errors_read_alike_in_every_build() {
    let dir = input_dir();
    for tool in ["cat", "wc", "cut", "filter", "getc", "fread1k"] {
        let o = all_builds(tool, dir, &["missing"], None);
        assert_eq!(o.status, Some(2));
        assert_eq!(
            o.stderr,
            format!("{tool}: missing: No such file or directory\n")
        );
        let o = all_builds(tool, dir, &["."], None);
        assert_eq!(o.status, Some(2));
        assert_eq!(o.stderr, format!("{tool}: .: Is a directory\n"));
    }
    let o = all_builds("cmp", dir, &["text", "missing"], None);
    assert_eq!(o.status, Some(2));
    assert_eq!(o.stderr, "cmp: missing: No such file or directory\n");
    let o = all_builds("cp", dir, &["text", "/dev/full"], None);
    assert_eq!(o.status, Some(2));
    assert_eq!(o.stderr, "cp: /dev/full: No space left on device\n");
    let o = all_builds("cp", dir, &["text", "."], None);
    assert_eq!(o.status, Some(2));
    assert_eq!(o.stderr, "cp: .: Is a directory\n");
    // A full disk under standard output.
    for tool in ["cat", "cut", "filter"] {
        for b in BUILDS {
            let full = std::fs::File::options()
                .write(true)
                .open("/dev/full")
                .expect("/dev/full");
            let o = Command::new(bin_dir().join(format!("{tool}-{b}")))
                .arg("text")
                .current_dir(dir)
                .stdout(full)
                .output()
                .expect("running");
            assert_eq!(o.status.code(), Some(2), "{tool} {b} > /dev/full");
            assert_eq!(
                String::from_utf8_lossy(&o.stderr),
                format!("{tool}: write error: No space left on device\n"),
                "{tool} {b} > /dev/full"
            );
        }
    }
}
