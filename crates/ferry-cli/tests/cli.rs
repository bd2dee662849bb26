//! The `ferry` binary as a user runs it.

use std::process::Command;

fn ferry(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(args)
        .output()
        .expect("run ferry");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn version_and_help() {
    let (code, out, _) = ferry(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), format!("ferry {}", env!("CARGO_PKG_VERSION")));
    let (code, out, _) = ferry(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("bench"), "{out}");
    let (code, out, _) = ferry(&["bench", "buf", "--help"]);
    assert_eq!(code, 0);
    for flag in ["--size", "--runs", "--json", "--dir", "--quick"] {
        assert!(out.contains(flag), "help lacks {flag}: {out}");
    }
}

#[test]
fn bad_arguments_are_clear_errors() {
    let (code, _, err) = ferry(&["bench", "buf", "--runs", "3"]);
    assert_eq!(code, 1);
    assert_eq!(
        err.trim(),
        "ferry: bench buf: --runs 3 is too few; use at least 5"
    );
    let (code, _, err) = ferry(&["bench", "buf", "--size", "12Q"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown suffix 'Q'"), "{err}");
    let (code, _, err) = ferry(&["frobnicate"]);
    assert_eq!(code, 2);
    assert!(err.contains("frobnicate"), "{err}");
}

#[test]
fn missing_scratch_directory_is_named() {
    let (code, out, err) = ferry(&[
        "bench",
        "buf",
        "--quick",
        "--size",
        "1M",
        "--dir",
        "/nonexistent/ferry-dir",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("/nonexistent/ferry-dir"), "{err}");
    assert!(err.contains("No such file or directory"), "{err}");
}

#[test]
fn quick_bench_runs_every_variant() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = ferry(&[
        "bench",
        "buf",
        "--quick",
        "--json",
        "--size",
        "1M",
        "--dir",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.trim_start().starts_with('[') && out.trim_end().ends_with(']'),
        "{out}"
    );
    for what in [
        "Buf clone+drop vs Bytes",
        "Buf slice vs Bytes",
        "Pool alloc+free 64 KiB vs malloc",
        "Pool 2-thread per-thread vs 1-thread",
        "Aggregate split_to in the middle of 1000 slices",
        "read() 128 KiB: pool buffers vs aligned buffer",
        "read() 128 KiB: pool buffers vs vec![0u8; 131072]",
    ] {
        assert!(
            out.contains(&format!("\"comparison\":\"{what}\"")),
            "no row {what}: {out}"
        );
    }
    assert_eq!(
        out.matches("\"runs\":7").count(),
        out.matches("\"comparison\"").count()
    );
    // The scratch file is gone afterwards.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn quick_stream_ops_bench_runs_every_variant() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = ferry(&[
        "bench",
        "stream-ops",
        "--quick",
        "--json",
        "--runs",
        "5",
        "--dir",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    for what in [
        "64-byte records: salloc+free (no lock) vs BufReader::read_exact",
        "64-byte records: uncontended locked salloc+free",
        "scan of a cached file: salloc(1 MiB) buffered vs read()",
        "scan of a cached file: salloc(1 MiB) mapped vs read()",
        "lines: next_line vs read_until into a reused Vec",
        "lines: next_line vs BufRead::lines",
    ] {
        assert!(
            out.contains(&format!("\"comparison\":\"{what}\"")),
            "no row {what}: {out}"
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "scratch files left behind"
    );
    let (code, _, err) = ferry(&["bench", "stream-ops", "--runs", "2"]);
    assert_eq!(code, 1);
    assert!(err.contains("too few"), "{err}");
}

#[test]
fn quick_asf_c_bench_builds_and_runs_every_program() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = ferry(&[
        "bench",
        "asf-c",
        "--quick",
        "--json",
        "--runs",
        "5",
        "--dir",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    for tool in [
        "cat", "cp", "wc", "cut", "cmp", "filter", "getc", "fread-1k",
    ] {
        for build in ["glibc", "ferry", "asi"] {
            assert!(
                out.contains(&format!(
                    "\"tool\":\"{tool}\",\"build\":\"{build}\",\"median_s\":"
                )),
                "no row {tool}/{build}: {out}"
            );
        }
        assert!(
            out.contains(&format!(
                "\"comparison\":\"{tool}: ferry/stdio.h vs glibc\""
            )),
            "no target row for {tool}: {out}"
        );
    }
    assert_eq!(out.matches("\"runs\":5").count(), 8 * 3 + 8 * 2, "{out}");
    // Inputs, outputs and the compiled programs are gone afterwards.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn quick_asf_bench_runs_every_program_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = ferry(&[
        "bench",
        "asf",
        "--quick",
        "--json",
        "--runs",
        "5",
        "--only",
        "cat,cp,cmp,diff",
        "--dir",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    for tool in ["cat", "cp", "cmp", "diff"] {
        for program in ["std", "compat", "asi", "ferry", "GNU"] {
            let row = format!("\"tool\":\"{tool}\",\"program\":\"{program}\",");
            let at = out
                .find(&row)
                .unwrap_or_else(|| panic!("no row {tool}/{program}: {out}"));
            // Each row carries its five samples, every one a real time.
            let samples = &out[at..];
            let samples = &samples[samples.find("\"samples_s\":[").unwrap() + 13..];
            let samples = &samples[..samples.find(']').unwrap()];
            let times: Vec<f64> = samples.split(',').map(|t| t.parse().unwrap()).collect();
            assert_eq!(times.len(), 5, "{tool}/{program}: {samples}");
            assert!(
                times.iter().all(|&t| t > 0.0),
                "{tool}/{program}: {samples}"
            );
        }
    }
    assert!(!out.contains("\"tool\":\"wc\""), "--only ignored: {out}");
    assert!(out.contains("\"reports_free_memory\":"), "{out}");
    // Inputs, outputs and the files that warmed memory are gone afterwards.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn asf_c_names_what_it_lacks() {
    let (code, _, err) = ferry(&[
        "bench",
        "asf-c",
        "--quick",
        "--runs",
        "5",
        "--cc",
        "/nonexistent/cc",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("no C compiler '/nonexistent/cc'"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = ferry(&[
        "bench",
        "asf-c",
        "--quick",
        "--runs",
        "5",
        "--lib",
        empty.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("no libferry.so in"), "{err}");
    let (code, _, err) = ferry(&["bench", "asf-c", "--runs", "5", "--only", "nope"]);
    assert_eq!(code, 1);
    assert!(err.contains("no tool in --only"), "{err}");
}

/// `FERRY_BACKEND` is the command's knob for the bench: each value gives
/// the same output, and one it does not know is a warning, never fatal.
#[test]
fn ferry_backend_is_never_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("in");
    std::fs::write(&p, "one two\nthree\n").unwrap();
    let path = p.to_str().unwrap();
    for v in ["auto", "mmap", "buffered", "sequential", "zip"] {
        let out = Command::new(env!("CARGO_BIN_EXE_ferry"))
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
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ferry"), bin.join(tool)).unwrap();
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
    let elf = std::fs::read(env!("CARGO_BIN_EXE_ferry")).expect("read the ferry binary");
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
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ferry"), bin.join(tool)).unwrap();
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

#[test]
fn quick_stream_bench_runs_its_scenarios_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = ferry(&[
        "bench",
        "stream",
        "--quick",
        "--only",
        "file-pipe,cases,file-file",
        "--dir",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    for row in [
        "| ferry pipe (splice) |",
        "| case 4 (4K fixed → 128K fixed) |",
        "| dd bs=128K |",
    ] {
        assert!(out.contains(row), "no row {row}: {out}");
    }
    assert!(out.contains("target: ferry pipe (splice) ≥ 2.0×"), "{out}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "scratch files left behind"
    );
}

/// `ferry bench bulk --quick`: every configuration runs, its output is
/// checked against the chunks sorted (a wrong pass is an error), cached
/// and O_DIRECT (in a directory on a disk file system), and the scratch
/// files go away.
#[test]
fn quick_bulk_bench_runs_every_configuration() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, out, err) = ferry(&["bench", "bulk", "--quick", "--runs", "5", "--dir", d]);
    assert_eq!(code, 0, "{err}");
    for c in ["raf", "ds", "dsb", "bulkraf", "bulkds", "async"] {
        assert!(out.contains(&format!("| {c} |")), "no row {c}: {out}");
    }
    assert!(out.contains("target: bulkraf vs raf"), "{out}");
    let (code, out, err) = ferry(&[
        "bench", "bulk", "--quick", "--runs", "5", "--direct", "--chunks", "64K", "--dir", d,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("| async |") && out.contains("| bulkraf |"),
        "{out}"
    );
    assert!(
        !out.contains("| raf |"),
        "per-element reads cannot be O_DIRECT: {out}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "scratch left"
    );
    let (code, _, err) = ferry(&[
        "bench", "bulk", "--quick", "--runs", "5", "--chunks", "1000",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("multiple of 4 KiB"), "{err}");
}

/// `ferry bench sort --quick`: ferry sort beside GNU sort (text, in memory
/// and through runs) and binary records beside the I/O floor; scratch
/// files go away.
#[test]
fn quick_sort_bench_runs_every_scenario() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, out, err) = ferry(&["bench", "sort", "--quick", "--runs", "5", "--dir", d]);
    assert_eq!(code, 0, "{err}");
    for what in [
        "text in memory ≥ 2× GNU sort",
        "text through runs on disk ≥ 2× GNU sort",
        "within 1.5× of the I/O floor",
    ] {
        assert!(out.contains(what), "no line {what}: {out}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "scratch left"
    );
}
