//! The programs per tool (std, std-1m, compat, asi) give the same output as
//! each other and as the GNU tool they stand for, on edge-case inputs.

use crate::{text, BENCH};
use std::path::Path;
use std::process::Command;

const KINDS: [&str; 4] = ["std", "std-1m", "compat", "asi"];

/// Runs `ferry-bench variant KIND TOOL OUT INS…`; returns (status, OUT's bytes,
/// stdout, stderr).
fn variant(dir: &Path, kind: &str, tool: &str, ins: &[&str]) -> (i32, Vec<u8>, Vec<u8>, String) {
    let out = dir.join(format!("out-{kind}-{tool}"));
    let _ = std::fs::remove_file(&out);
    let o = Command::new(BENCH)
        .current_dir(dir)
        .args(["variant", kind, tool, out.to_str().unwrap()])
        .args(ins)
        .output()
        .unwrap();
    let written = std::fs::read(&out).unwrap_or_default();
    (
        o.status.code().unwrap_or(-1),
        written,
        o.stdout,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// GNU's output for the same job (stdout and status).
fn gnu(dir: &Path, argv: &[&str]) -> (i32, Vec<u8>) {
    let o = Command::new(argv[0])
        .current_dir(dir)
        .env("LC_ALL", "C")
        .args(&argv[1..])
        .output()
        .unwrap();
    (o.status.code().unwrap_or(-1), o.stdout)
}

fn inputs(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let mut add = |n: &str, b: &[u8]| {
        std::fs::write(dir.join(n), b).unwrap();
        names.push(n.to_string());
    };
    add("empty", b"");
    add("one", b"x");
    add("no-newline", b"abc def\nlast line without newline");
    add("crlf", b"one two\r\nthree\r\n\r\n");
    add("nul", b"a\0b\nc\0\n");
    let text = text::texty(300_000, 3);
    add("text", &text);
    // Differences past the first pieces a compare looks at: in the middle
    // of a 4 KiB piece, at a piece's first byte, and in the last byte.
    for (name, at) in [
        ("text-late", 200_001),
        ("text-piece", 5 * 4096),
        ("text-end", text.len() - 1),
    ] {
        let mut t = text.clone();
        t[at] ^= 0x20;
        add(name, &t);
    }
    // A line longer than a 1 MiB region, with the pattern across a region
    // boundary.
    let mut long = vec![b'y'; (1 << 20) - 1];
    long.extend_from_slice(b"qz tail\nqz\nshort\n");
    add("long", &long);
    names
}

#[test]
fn every_variant_matches_the_others_and_gnu() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let names = inputs(dir);
    for f in &names {
        let f = f.as_str();
        // (tool, variant inputs, GNU argv, output in OUT (true) or stdout)
        let jobs: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
            ("cat", vec![f], vec!["cat", f]),
            ("wc", vec![f], vec!["wc", f]),
            ("wc-l", vec![f], vec!["wc", "-l", f]),
            ("cut", vec![f], vec!["cut", "-c1-10", f]),
            (
                "grep-c",
                vec!["qz", f],
                vec!["grep", "-c", "-a", "-F", "qz", f],
            ),
            ("cmp", vec![f, "text"], vec!["cmp", f, "text"]),
            ("cmp", vec![f, f], vec!["cmp", f, f]),
            (
                "diff",
                vec![f, "no-newline"],
                vec!["diff", "-a", f, "no-newline"],
            ),
        ];
        for (tool, ins, argv) in jobs {
            let (gcode, gout) = gnu(dir, &argv);
            for k in KINDS {
                let (code, out, _stdout, err) = variant(dir, k, tool, &ins);
                assert_eq!(
                    (code, &out),
                    (gcode, &gout),
                    "{k} {tool} {ins:?}: status/output differ from GNU ({err})"
                );
            }
        }
        for k in KINDS {
            let (code, _, _, err) = variant(dir, k, "cp", &[f]);
            assert_eq!(code, 0, "{k} cp {f}: {err}");
            let out = dir.join(format!("out-{k}-cp"));
            assert_eq!(
                std::fs::read(&out).unwrap(),
                std::fs::read(dir.join(f)).unwrap(),
                "{k} cp {f}"
            );
        }
    }
}

#[test]
fn a_missing_input_is_an_error_not_a_panic() {
    let d = tempfile::tempdir().unwrap();
    for k in KINDS {
        for tool in ["cat", "wc", "cut", "cp"] {
            let (code, _, _, err) = variant(d.path(), k, tool, &["missing"]);
            assert_eq!(code, 2, "{k} {tool}");
            assert!(err.contains("No such file"), "{k} {tool}: {err}");
        }
    }
}

#[test]
fn cat_into_a_pipe_matches_the_input_with_either_backend() {
    // Standard output a pipe: asi cat hands a mapped region's pages to it by
    // reference, the buffered backend's regions by copy.
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let mut names = inputs(dir);
    // Larger than the pipe and than several regions, not a page multiple.
    let big: Vec<u8> = (0..5 * (1 << 20) + 4097)
        .map(|i| (i * 13 % 256) as u8)
        .collect();
    std::fs::write(dir.join("big"), &big).unwrap();
    names.push("big".into());
    for backend in ["auto", "buffered"] {
        for f in &names {
            for k in KINDS {
                let o = Command::new(BENCH)
                    .current_dir(dir)
                    .env("FERRY_BACKEND", backend)
                    .args(["variant", k, "cat", "-", f])
                    .output()
                    .unwrap();
                assert_eq!(o.status.code(), Some(0), "{k} {backend} {f}");
                assert!(
                    o.stdout == std::fs::read(dir.join(f)).unwrap(),
                    "{k} cat {f} ({backend}): {} bytes out",
                    o.stdout.len()
                );
            }
        }
    }
}
