//! The `ferry` binary as a user runs it.

use crate::gnu::FERRY;
use std::process::Command;

/// Runs `ferry ARGS`: (status, stdout, stderr).
fn run_ferry(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(FERRY).args(args).output().expect("run ferry");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every tool, as `ferry --help` lists them.
const TOOLS: [&str; 10] = [
    "cat", "cmp", "cp", "cut", "diff", "grep", "pipe", "sort", "ttcp", "wc",
];

/// `--version`, and `--help` listing every tool (`sort` was missing from
/// the list) and nothing else: the benchmarks are not in the shipped
/// binary (they are `ferry-bench`).
#[test]
fn version_and_help_list_every_tool() {
    let (code, out, _) = run_ferry(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), format!("ferry {}", env!("CARGO_PKG_VERSION")));
    for opt in ["--help", "-h"] {
        let (code, out, err) = run_ferry(&[opt]);
        assert_eq!((code, err.as_str()), (0, ""), "{opt}");
        for tool in TOOLS {
            assert!(
                out.lines().any(|l| l.starts_with(&format!("  {tool} "))),
                "{opt} does not list {tool}: {out}"
            );
        }
        assert!(!out.contains("bench"), "{out}");
    }
}

/// A word that names no tool (`bench` too: the benchmarks are
/// ferry-bench's), or no word at all: GNU's usage error and status 2.
#[test]
fn bad_arguments_are_clear_errors() {
    let cases: [(&[&str], &str); 3] = [
        (&["frobnicate"], "ferry: unknown tool 'frobnicate'"),
        (&["bench", "buf"], "ferry: unknown tool 'bench'"),
        (&[], "ferry: missing tool name"),
    ];
    for (args, msg) in cases {
        let (code, out, err) = run_ferry(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}");
        assert_eq!(
            err,
            format!("{msg}\nTry 'ferry --help' for more information.\n"),
            "{args:?}"
        );
    }
}

/// `FERRY_BACKEND` is the tools' knob for the benchmarks: each value
/// gives the same output, and one it does not know is a warning, never
/// fatal.
#[test]
fn ferry_backend_is_never_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("in");
    std::fs::write(&p, "one two\nthree\n").unwrap();
    let path = p.to_str().unwrap();
    for v in ["auto", "mmap", "buffered", "sequential", "zip"] {
        let out = Command::new(FERRY)
            .args(["wc", path])
            .env("FERRY_BACKEND", v)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "FERRY_BACKEND={v}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!(" 2  3 14 {path}\n")
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.contains("FERRY_BACKEND=zip ignored"),
            v == "zip",
            "{err}"
        );
    }
}

/// Called through a link named after a tool (as uutils' multi-call binary
/// is), the binary is that tool and names itself as GNU's does: stdout,
/// stderr and exit status equal GNU's, byte for byte, with no renaming.
#[test]
fn called_by_a_tool_name_it_is_that_tool() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a"), b"one two\nthree:four\n").unwrap();
    std::fs::write(d.join("b"), b"one two\nthree:fivex\n").unwrap();
    let cases: &[(&str, &[&str])] = &[
        ("cat", &["a", "missing"]),
        ("cat", &["--no-such-option"]),
        ("cmp", &["a", "b"]),
        ("cmp", &["-x"]),
        ("cut", &["-d:", "-f2", "a"]),
        ("cut", &["-x"]),
        ("cut", &["-f", "2-1", "a"]),
        ("diff", &["a", "b"]),
        ("diff", &["--no-such-option"]),
        ("grep", &["-c", "o", "a", "b"]),
        ("grep", &["--no-such-option", "o"]),
        ("wc", &["a", "b", "missing"]),
        ("wc", &["--no-such-option"]),
        ("cp", &["missing", "c"]),
    ];
    let bin = d.join("bin");
    std::fs::create_dir(&bin).unwrap();
    for tool in ["cat", "cmp", "cp", "cut", "diff", "grep", "wc"] {
        std::os::unix::fs::symlink(FERRY, bin.join(tool)).unwrap();
    }
    use std::os::unix::process::CommandExt;
    for (tool, args) in cases {
        // Both called by the bare name (as from PATH): messages name it so.
        let run = |exe: &std::path::Path| {
            let o = Command::new(exe)
                .arg0(tool)
                .args(*args)
                .current_dir(d)
                .env("LC_ALL", "C")
                .output()
                .unwrap();
            (
                o.status.code(),
                o.stdout,
                String::from_utf8_lossy(&o.stderr).into_owned(),
            )
        };
        let ours = run(&bin.join(tool));
        let gnu_path = std::path::PathBuf::from(
            String::from_utf8(
                Command::new("sh")
                    .args(["-c", &format!("command -v {tool}")])
                    .output()
                    .unwrap()
                    .stdout,
            )
            .unwrap()
            .trim(),
        );
        let gnu = run(&gnu_path);
        assert_eq!(
            ours, gnu,
            "{tool} {args:?}: (status, stdout, stderr) ferry vs GNU"
        );
    }
}

/// The binary is linked statically and position-dependent (build.rs): no
/// dynamic loader maps and binds libraries at each start, which was a third
/// of a run over a 1 KiB file. A toolchain change that made build.rs fall
/// back to a dynamic link (it only warns) fails here. `FERRY_DYNAMIC=1` at
/// build and test time asks for, and expects, the dynamic link.
#[test]
fn the_binary_needs_no_dynamic_loader() {
    let elf = std::fs::read(FERRY).expect("read the ferry binary");
    assert_eq!(&elf[..4], b"\x7fELF");
    assert_eq!(elf[4], 2, "64-bit ELF");
    let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]);
    let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
    const ET_EXEC: u16 = 2;
    const PT_INTERP: u32 = 3;
    const PT_DYNAMIC: u32 = 2;
    let (phoff, phentsize, phnum) = (u64_at(0x20) as usize, u16_at(0x36) as usize, u16_at(0x38));
    let kinds: Vec<u32> = (0..phnum as usize)
        .map(|i| u32_at(phoff + i * phentsize))
        .collect();
    let dynamic = std::env::var_os("FERRY_DYNAMIC").is_some_and(|v| v == "1");
    assert_eq!(u16_at(0x10), ET_EXEC, "position-dependent executable");
    assert_eq!(
        kinds.contains(&PT_INTERP),
        dynamic,
        "program header kinds {kinds:?}: a dynamic loader is named"
    );
    if !dynamic {
        assert!(!kinds.contains(&PT_DYNAMIC), "{kinds:?}");
    }
}

/// Links named after the tools, in a fresh directory: (the directory, the
/// scratch directory holding files `a` and `b`).
fn tool_links() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    std::fs::write(d.join("a"), b"one two\nthree\n").unwrap();
    std::fs::write(d.join("b"), b"one two\nfour\n").unwrap();
    let bin = d.join("bin");
    std::fs::create_dir(&bin).unwrap();
    for tool in ["cat", "cmp", "cp", "cut", "diff", "grep", "wc"] {
        std::os::unix::fs::symlink(FERRY, bin.join(tool)).unwrap();
    }
    (dir, d)
}

/// `sh -c SCRIPT` in `d` with the tools found first in `path_first` (or
/// GNU's): (status, stdout, stderr).
fn shell(
    d: &std::path::Path,
    path_first: Option<&std::path::Path>,
    script: &str,
) -> (Option<i32>, String, String) {
    let path = std::env::var("PATH").unwrap_or_default();
    let path = match path_first {
        Some(p) => format!("{}:{path}", p.display()),
        None => path,
    };
    let o = Command::new("sh")
        .args(["-c", script])
        .current_dir(d)
        .env("PATH", path)
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// With standard input closed, the first file a tool opened took its
/// number: `cmp a -` then compared a with itself and said nothing (status
/// 0), `diff a -` compared a with what was left of it. As GNU's (gnulib's
/// stdopen), "-" is now a bad descriptor: status 2 and GNU's message.
#[test]
fn a_closed_standard_input_is_not_the_first_file_opened() {
    let (_dir, d) = tool_links();
    let bin = d.join("bin");
    for script in [
        "cmp a - <&-",
        "cmp - a <&-",
        "diff a - <&-",
        "diff - a <&-",
        "cmp a b <&-",
        "diff a b <&-",
        "cat a >&-",
        "wc a >&-",
        "cut -c1 a >&-",
        "grep o a >&-",
        "diff a b >&-",
        "cat a b missing 2>&-",
        "cp a c 2>&- >&-; cat c",
    ] {
        let _ = std::fs::remove_file(d.join("c"));
        let ours = shell(&d, Some(&bin), script);
        let _ = std::fs::remove_file(d.join("c"));
        let gnu = shell(&d, None, script);
        assert_eq!(ours, gnu, "{script}: (status, stdout, stderr) ferry vs GNU");
    }
}

/// `--help` and `--version` into a full device: GNU's message and status
/// for each tool. ferry's `print!` panicked, and the panic could not leave
/// the binary's C `main`: the process aborted (SIGABRT, a core dump).
#[test]
fn help_and_version_into_a_full_device() {
    let (_dir, d) = tool_links();
    let bin = d.join("bin");
    for tool in ["cat", "cmp", "cp", "cut", "diff", "grep", "wc"] {
        for opt in ["--help", "--version"] {
            let script = format!("{tool} {opt} > /dev/full");
            let ours = shell(&d, Some(&bin), &script);
            let gnu = shell(&d, None, &script);
            assert_eq!(
                (ours.0, &ours.2),
                (gnu.0, &gnu.2),
                "{script}: (status, stderr) ferry vs GNU"
            );
        }
    }
    for (tool, opt) in [("cmp", "-v"), ("diff", "-v"), ("grep", "-V")] {
        let script = format!("{tool} {opt} > /dev/full");
        let ours = shell(&d, Some(&bin), &script);
        let gnu = shell(&d, None, &script);
        assert_eq!(
            (ours.0, &ours.2),
            (gnu.0, &gnu.2),
            "{script}: (status, stderr) ferry vs GNU"
        );
    }
}

/// `cp -v` whose standard output will not take its lines (a full device,
/// a closed descriptor): GNU's `write error: …` and status 1 at the end,
/// the copies made. ferry dropped the error and ended with status 0.
#[test]
fn cp_verbose_into_a_full_device_or_a_closed_output() {
    let (_dir, d) = tool_links();
    let bin = d.join("bin");
    for script in [
        "cp -v a c > /dev/full; cat c",
        "cp -v a c >&-; cat c",
        "mkdir -p t; cp -v --parents a t > /dev/full; cat t/a",
        "cp -v a c; cp -v a c > /dev/full",
    ] {
        let clean = || {
            let _ = std::fs::remove_file(d.join("c"));
            let _ = std::fs::remove_dir_all(d.join("t"));
        };
        clean();
        let ours = shell(&d, Some(&bin), script);
        clean();
        let gnu = shell(&d, None, script);
        assert_eq!(ours, gnu, "{script}: (status, stdout, stderr) ferry vs GNU");
    }
}
