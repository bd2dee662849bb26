//! The tools writing to a standard output that other processes share (a
//! shell group `{ a; ferry cat f; b; } > out`): the descriptor's offset
//! must be where ferry's output ends when it exits (POSIX 2.5.1), so the
//! next writer on the same open file description appends rather than
//! overwriting. Real `sh`, real files, the built `ferry`.

use crate::gnu;
use std::path::Path;
use std::process::Command;

/// What `ferry args` prints to a pipe (its stdout alone).
fn alone(dir: &Path, args: &[&str]) -> Vec<u8> {
    Command::new(gnu::FERRY)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run ferry")
        .stdout
}

/// `{ echo first; ferry args; echo more; } REDIR out` under `sh`; the bytes
/// of `out`.
fn group(dir: &Path, args: &[&str], redir: &str) -> Vec<u8> {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = format!(
        "{{ echo first; '{}' {}; echo more; }} {redir} out 2>/dev/null",
        gnu::FERRY,
        quoted.join(" ")
    );
    let st = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(dir)
        .status()
        .expect("run sh");
    assert!(st.success(), "{script}: {st}");
    std::fs::read(dir.join("out")).unwrap()
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small"), b"line a\nline b\n").unwrap();
    // Several stream buffers' worth, so output is written in many pieces.
    let big: String = (0..200_000).map(|i| format!("{i} some text\n")).collect();
    std::fs::write(dir.path().join("big"), big).unwrap();
    dir
}

fn check(dir: &Path, args: &[&str]) {
    let mut want = b"first\n".to_vec();
    want.extend_from_slice(&alone(dir, args));
    want.extend_from_slice(b"more\n");
    for redir in [">", "1<>"] {
        let _ = std::fs::remove_file(dir.join("out"));
        let got = group(dir, args, redir);
        assert!(
            got == want,
            "ferry {args:?} in a shell group ({redir} out): {} bytes, want {}; ends {:?}",
            got.len(),
            want.len(),
            String::from_utf8_lossy(&got[got.len().saturating_sub(40)..])
        );
    }
    // Appending to what is there.
    std::fs::write(dir.join("out"), b"before\n").unwrap();
    let got = group(dir, args, ">>");
    let mut appended = b"before\n".to_vec();
    appended.extend_from_slice(&want);
    assert!(
        got == appended,
        "ferry {args:?} appending: {} bytes",
        got.len()
    );
}

#[test]
fn shell_group_output_follows_each_tool() {
    let dir = setup();
    let d = dir.path();
    for args in [
        &["cat", "small"][..],
        &["cat", "big"],
        &["cat", "small", "big", "small"],
        &["cat", "small", "missing"],
        &["grep", "9", "big"],
        &["grep", "-c", "line", "small"],
        &["cut", "-c1-3", "big"],
        &["wc", "big"],
        &["diff", "small", "big"],
        &["cmp", "small", "big"],
    ] {
        check(d, args);
    }
}
