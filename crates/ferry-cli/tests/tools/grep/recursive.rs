//! `ferry grep -r/-R` against GNU grep on generated trees: order, names,
//! symbolic links, --include/--exclude/--exclude-dir/--exclude-from,
//! -d/-D, binary files met on the way.
//!
//! Both tools list each directory in the order the file system gives
//! (GNU's fts sorts only very large directories, by inode), so the trees
//! here are small and outputs are compared as they come.

use crate::gnu;
use gnu::{s, same};
use std::os::unix::fs::symlink;
use std::path::Path;

/// A tree with files at several depths, hidden ones, a binary file,
/// symbolic links to a file, a directory, nowhere and up the tree.
fn tree(root: &Path, seed: u64) {
    let w = |p: &str, d: &[u8]| {
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, d).unwrap();
    };
    let mut x = seed | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let names = [
        "a.c",
        "b.h",
        "c.txt",
        "Makefile",
        ".hidden.c",
        "d.c.bak",
        "e",
    ];
    let dirs = [
        "",
        "src/",
        "src/sub/",
        "doc/",
        ".git/",
        "src/sub/deep/",
        "build/",
    ];
    for d in dirs {
        for n in names {
            let r = next();
            if r % 3 == 0 {
                continue;
            }
            let body = match r % 5 {
                0 => "nothing here\n".to_string(),
                1 => format!("hit in {d}{n}\nsecond line\nhit again\n"),
                _ => format!("line\nhit {r}\n"),
            };
            w(&format!("{d}{n}"), body.as_bytes());
        }
    }
    w("src/blob.bin", b"hit\0binary\n");
    w("doc/only.txt", b"hit\n");
    symlink("a.c", root.join("link-file.c")).ok();
    symlink("src", root.join("link-dir")).ok();
    symlink("nowhere", root.join("dangling")).ok();
    symlink("../..", root.join("src/sub/up")).ok();
}

#[test]
fn recursive_walks_match_gnu() {
    for seed in [3u64, 17, 99] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("t");
        std::fs::create_dir(&root).unwrap();
        tree(&root, seed);
        let opts: &[&[&str]] = &[
            &["-r"],
            &["-R"],
            &["-rn"],
            &["-rc"],
            &["-rl"],
            &["-rL"],
            &["-rh"],
            &["-rH"],
            &["-rI"],
            &["-ra"],
            &["-r", "-A1"],
            &["-r", "--include=*.c"],
            &["-r", "--include=*.c", "--include=*.h"],
            &["-r", "--exclude=*.c"],
            &["-r", "--exclude=.*"],
            &["-r", "--include=*.c", "--exclude=a*"],
            &["-r", "--exclude=a*", "--include=*.c"],
            &["-r", "--exclude-dir=sub"],
            &["-r", "--exclude-dir=.git", "--exclude-dir=build"],
            &["-r", "--exclude-dir=*"],
            &["-r", "--exclude-dir=.", "--include=*.txt"],
            &["-R", "--exclude-dir=src"],
            &["-r", "--exclude=src"],
            &["-r", "--include=sub"],
            &["-d", "recurse"],
            &["-d", "skip"],
            &["-d", "read"],
            &["-rZl"],
        ];
        let operands: &[&[&str]] = &[
            &[],
            &["."],
            &["src"],
            &["src/"],
            &["./src", "doc"],
            &["link-dir", "link-file.c", "dangling"],
            &["a.c", "src/sub"],
            &["src/sub/up"],
        ];
        for o in opts {
            for ops in operands {
                let mut a = s(o);
                a.push("hit".into());
                a.extend(s(ops));
                same("grep", &a, None, &root, &[]);
            }
        }
    }
}

#[test]
fn command_line_names_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    tree(root, 5);
    std::fs::write(root.join("ex"), b"a.c\n*.h\n\n").unwrap();
    for a in [
        &["--exclude=*.c", "hit", "a.c", "b.h"][..],
        &["--exclude=a.c", "hit", "./a.c"],
        &["--exclude=./a.c", "hit", "./a.c"],
        &["--exclude=*/a.c", "hit", "./a.c", "b.h"],
        &["--include=*.c", "hit", "b.h", "a.c"],
        &["--exclude-dir=src", "-r", "hit", "src"],
        &["--exclude-dir=src", "-r", "hit", "src/"],
        &["--exclude-from=ex", "-r", "hit"],
        &["--exclude-from=missing", "-r", "hit"],
        &["hit", "src", "a.c"],
        &["-s", "hit", "src", "a.c"],
        &["-d", "skip", "hit", "src", "a.c"],
        &["-r", "hit", "missing", "src/sub"],
        &["-rs", "hit", "missing", "src/sub"],
        &["-rq", "hit", "missing", "src"],
        &["-r", "hit", "a.c"],
        &["-D", "skip", "hit", "a.c"],
        &["-D", "read", "-r", "hit", "doc"],
    ] {
        same("grep", &s(a), None, root, &[]);
    }
    // Standard input under -r: only when named.
    for a in [
        &["-r", "hit"][..],
        &["-r", "hit", "-"],
        &["-r", "hit", "-", "doc"],
    ] {
        same("grep", &s(a), Some(b"hit from stdin\n"), root, &[]);
    }
}

#[test]
fn devices_and_fifos_are_skipped_as_gnu_skips_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("f"), b"hit\n").unwrap();
    let fifo =
        std::ffi::CString::new(root.join("p").into_os_string().into_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    // A FIFO found in a walk is skipped (reading it would block); one named
    // with -D skip is too.
    for a in [
        &["-r", "hit"][..],
        &["-D", "skip", "hit", "p", "f"],
        &["-r", "-D", "skip", "hit", "."],
    ] {
        same("grep", &s(a), None, root, &[]);
    }
}

/// `grep -D skip x SOCKET` skipped the socket silently (status 1); GNU
/// opens a command-line name before it looks at its type, so the socket
/// is "No such device or address" (status 2). Found in a walk, it is
/// skipped without opening, by both.
#[test]
fn a_socket_named_under_devices_skip_is_an_open_error() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("dir")).unwrap();
    std::fs::write(d.path().join("dir/f"), b"x\n").unwrap();
    let _a = std::os::unix::net::UnixListener::bind(d.path().join("sock")).unwrap();
    let _b = std::os::unix::net::UnixListener::bind(d.path().join("dir/sock")).unwrap();
    for args in [
        &["-D", "skip", "x", "sock"][..],
        &["-r", "-D", "skip", "x", "sock"],
        &["-D", "read", "x", "sock"],
        &["-r", "-D", "skip", "x", "dir"],
        &["-r", "x", "dir"],
    ] {
        gnu::same_bounded("grep", args, None, d.path());
    }
}

/// A tree deeper than PATH_MAX is walked as GNU's fts walks it, from
/// directory descriptor to directory descriptor: `ferry grep -r x deep`
/// failed with "File name too long". The tree is built by bash going
/// down one relative step at a time (dash's `cd` refuses once its $PWD
/// would pass PATH_MAX).
#[test]
fn a_tree_deeper_than_path_max_is_searched() {
    let d = tempfile::tempdir().unwrap();
    let long = "d".repeat(200);
    let script = format!(
        "mkdir deep && cd deep && for i in $(seq 30); do mkdir {long} && cd {long} || exit 1; done; echo 'x marks' > f; echo y > g"
    );
    let made = std::process::Command::new("bash")
        .args(["-c", &script])
        .current_dir(d.path())
        .status()
        .unwrap();
    assert!(made.success());
    for args in [
        &["-r", "x", "deep"][..],
        &["-rc", "x", "deep"],
        &["-rl", "y", "deep"],
        &["-r", "--include=g", "y", "deep"],
    ] {
        gnu::same_bounded("grep", args, None, d.path());
    }
    // (remove_dir_all walks with descriptors too.)
    std::fs::remove_dir_all(d.path().join("deep")).unwrap();
}
