//! bzip2 1.0.8: the compressor. bzip2.c and libbz2's file layer
//! (bzlib.c) read with fread, fgetc and ungetc (the end-of-stream probe),
//! write with fwrite and fputc, check ferror after each, open outputs with
//! open + fdopen, and report failures with perror-style messages. Built
//! with its own Makefile (`make bzip2`).

use super::{copy_tree, ferry_cppflags, ferry_libs, pair, same, sh, source, Case, Gen, Out, Pair};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn build(dir: &Path, ferry: bool) -> PathBuf {
    copy_tree(&source("bzip2"), dir);
    let mut cc = "cc".to_string();
    let mut ldflags = String::new();
    if ferry {
        cc = format!("cc {}", ferry_cppflags());
        ldflags = ferry_libs();
    }
    sh(
        dir,
        "make bzip2",
        Command::new("make").args([
            "-j1",
            "bzip2",
            &format!("CC={cc}"),
            "CFLAGS=-O1 -D_FILE_OFFSET_BITS=64",
            &format!("LDFLAGS={ldflags}"),
        ]),
    );
    dir.join("bzip2")
}

fn bzip2() -> &'static Pair {
    static P: OnceLock<Pair> = OnceLock::new();
    pair(&P, "bzip2", build)
}

fn inputs() -> Vec<(String, Vec<u8>)> {
    let mut g = Gen::new(0xb21b);
    let mut v = Vec::new();
    for &n in &super::SIZES {
        v.push((format!("text{n}"), g.text(n)));
        v.push((format!("bin{n}"), g.bytes(n)));
    }
    // Long runs: bzip2's run-length stage and its fallback sort.
    v.push(("runs".into(), vec![b'a'; 300_000]));
    v
}

/// Every generated input through stdin → stdout, both ways, at two block
/// sizes: the compressed bytes and the round trip are glibc's.
#[test]
fn compresses_and_decompresses_through_pipes() {
    let p = bzip2();
    for (name, data) in inputs() {
        for level in ["-1", "-9"] {
            let r = same(
                p,
                "bzip2",
                &format!("{level} <{name}"),
                &Case::new(&[level]).stdin(&data),
            );
            assert_eq!(r.status, Some(0), "{name}");
            let back = same(
                p,
                "bzip2",
                &format!("-d <{name}.bz2"),
                &Case::new(&["-d"]).stdin(&r.stdout),
            );
            assert!(
                back.stdout == data,
                "{name}: the round trip changed the bytes"
            );
        }
    }
}

/// Files named on the command line: -k (the output through open + fdopen),
/// -d of the result, -t and -v (its report on stderr), -c of two files,
/// and stdin redirected from a file (seekable input).
#[test]
fn files_in_place_and_concatenated() {
    let p = bzip2();
    for (name, data) in inputs().into_iter().step_by(3) {
        let z = format!("{name}.bz2");
        let r = same(
            p,
            "bzip2",
            &format!("-k {name}"),
            &Case::new(&["-k", "-v", &name]).file(&name, &data),
        );
        let packed = r.files[&z].clone();
        same(
            p,
            "bzip2",
            &format!("-d {z}"),
            &Case::new(&["-d", "-v", &z]).file(&z, &packed),
        );
        same(
            p,
            "bzip2",
            &format!("-tvv {z}"),
            &Case::new(&["-tvv", &z]).file(&z, &packed),
        );
        let two = Case::new(&["-c", "a", "b"])
            .file("a", &data)
            .file("b", b"second\n");
        let cat = same(p, "bzip2", "-c a b", &two);
        same(
            p,
            "bzip2",
            "-dc of two streams",
            &Case::new(&["-dc"]).stdin(&cat.stdout),
        );
        let redirected = Case::new(&["-c"]).file("in", &data).stdin_file("in");
        same(p, "bzip2", "-c <file", &redirected);
    }
}

/// Damaged input: truncated at several points, a flipped byte (CRC
/// error), trailing garbage, not bzip2 at all.
#[test]
fn damaged_input() {
    let p = bzip2();
    let data = Gen::new(7).text(200_000);
    let good = same(p, "bzip2", "-c", &Case::new(&[]).stdin(&data)).stdout;
    for cut in [0, 1, 3, 4, 10, good.len() / 2, good.len() - 1] {
        let c = Case::new(&["-dc"]).stdin(&good[..cut]);
        same(p, "bzip2", &format!("-dc of {cut} bytes"), &c);
        let t = Case::new(&["-t", "cut.bz2"]).file("cut.bz2", &good[..cut]);
        same(p, "bzip2", &format!("-t of {cut} bytes"), &t);
    }
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    same(
        p,
        "bzip2",
        "-dc of a flipped byte",
        &Case::new(&["-dc"]).stdin(&flipped),
    );
    let mut trailing = good.clone();
    trailing.extend_from_slice(b"garbage after the stream");
    same(
        p,
        "bzip2",
        "-dc with trailing garbage",
        &Case::new(&["-dc"]).stdin(&trailing),
    );
    same(
        p,
        "bzip2",
        "-d of text",
        &Case::new(&["-dc"]).stdin(b"plain text, no magic\n"),
    );
}

/// The error paths: a missing file, a directory, an output that exists,
/// stdout on /dev/full, stdout a pipe nobody reads.
#[test]
fn error_cases() {
    let p = bzip2();
    same(p, "bzip2", "-c missing", &Case::new(&["-c", "missing"]));
    same(
        p,
        "bzip2",
        "-d missing.bz2",
        &Case::new(&["-d", "missing.bz2"]),
    );
    let dir = Case::new(&["-c", "."]);
    same(p, "bzip2", "-c .", &dir);
    let exists = Case::new(&["-k", "f"])
        .file("f", b"x\n")
        .file("f.bz2", b"old");
    same(p, "bzip2", "-k f with f.bz2 there", &exists);
    let data = Gen::new(3).bytes(300_000);
    for n in [0, 10, 300_000] {
        let full = Case::new(&["-c"]).stdin(&data[..n]).out(Out::Full);
        same(p, "bzip2", &format!("-c >/dev/full ({n} bytes)"), &full);
        let closed = Case::new(&["-c"]).stdin(&data[..n]).out(Out::Closed);
        same(p, "bzip2", &format!("-c | closed ({n} bytes)"), &closed);
    }
}
