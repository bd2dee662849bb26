//! Every suite of `ferry-bench` as a user runs it, in its `--quick` form
//! (a small fraction of the work: its figures mean nothing, but every
//! program it times runs and its output is checked), and the errors it
//! gives. The suites that time the ferry tools find the `ferry` binary
//! beside `ferry-bench`, built there first (src/workspace.rs).

use crate::BENCH;
use std::process::Command;

/// Runs `ferry-bench ARGS`: (status, stdout, stderr).
fn bench(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BENCH)
        .args(args)
        .output()
        .expect("run ferry-bench");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every suite takes the common options, and says so in its `--help`.
#[test]
fn every_suite_takes_the_common_options() {
    let (code, out, _) = bench(&["--help"]);
    assert_eq!(code, 0);
    let suites = [
        "buf",
        "stream-ops",
        "asf",
        "asf-c",
        "stream",
        "fbufs",
        "bulk",
        "sort",
        "iolite",
    ];
    for suite in suites {
        assert!(
            out.lines()
                .any(|l| l.trim_start().starts_with(&format!("{suite} "))),
            "--help lacks {suite}: {out}"
        );
        let (code, out, err) = bench(&[suite, "--help"]);
        assert_eq!(code, 0, "{suite}: {err}");
        for flag in ["--runs", "--json", "--dir", "--quick"] {
            assert!(out.contains(flag), "{suite} --help lacks {flag}: {out}");
        }
    }
}

#[test]
fn bad_arguments_are_clear_errors() {
    let (code, _, err) = bench(&["buf", "--runs", "3"]);
    assert_eq!(code, 1);
    assert_eq!(
        err.trim(),
        "ferry-bench: buf: --runs 3 is too few; use at least 5"
    );
    let (code, _, err) = bench(&["buf", "--size", "12Q"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown suffix 'Q'"), "{err}");
    let (code, _, err) = bench(&["frobnicate"]);
    assert_eq!(code, 2);
    assert!(err.contains("frobnicate"), "{err}");
}

/// A `ferry-bench` away from the target directory it was built in cannot
/// build the `ferry` binary it times, and finds none beside it: the suites
/// that run the tools stop before any work, saying how to build it.
#[test]
fn without_ferry_beside_it_the_suites_say_how_to_build_it() {
    let away = tempfile::tempdir().unwrap();
    let copy = away.path().join("ferry-bench");
    std::fs::copy(BENCH, &copy).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let d = scratch.path().to_str().unwrap();
    for suite in ["asf", "stream", "sort"] {
        let out = Command::new(&copy)
            .args([suite, "--quick", "--runs", "5", "--dir", d])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{suite}: {err}");
        assert!(
            err.starts_with(&format!("ferry-bench: no ferry next to {}", copy.display())),
            "{suite}: {err}"
        );
        assert!(
            err.contains("(build it with `cargo build --release -p ferry-cli`)"),
            "{suite}: {err}"
        );
        assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "{suite}");
    }
}

#[test]
fn missing_scratch_directory_is_named() {
    let (code, out, err) = bench(&[
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
    let (code, out, err) = bench(&[
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

/// The iolite suite runs each case (one row per comparison; the cached
/// values are checked against one pass before anything is timed), and
/// names a case it does not have.
#[test]
fn quick_iolite_bench_runs_every_case() {
    let (code, out, err) = bench(&["iolite", "--quick", "--json"]);
    assert_eq!(code, 0, "{err}");
    for what in [
        "CRC-32C of 64 KiB: cache hit vs recomputing",
        "CRC-32C of header + 64 KiB: combined vs one pass",
        "CRC-32C combine: ours vs the crc32c crate's",
        "Internet checksum of header + 64 KiB: combined vs one pass",
        "ETag of header + 64 KiB: cache hit vs BLAKE3 one pass",
    ] {
        assert!(
            out.contains(&format!("\"comparison\":\"{what}\"")),
            "no row {what}: {out}"
        );
    }
    // The channels case: every size, ferry's buffers beside each kernel
    // channel, in time and in CPU (every message's bytes counted on
    // arrival and its words checked before anything is timed).
    for kib in [1, 4, 16, 64, 256, 1024] {
        for base in ["pipe", "vmsplice→splice", "unix", "tcp"] {
            let what = format!("{kib} KiB messages: ipc buffers vs {base}");
            assert!(
                out.contains(&format!("\"comparison\":\"{what}\"")),
                "no row {what}"
            );
        }
        for what in [
            format!("{kib} KiB messages: ipc bytes vs pipe"),
            format!("{kib} KiB messages: CPU, ipc buffers vs pipe"),
        ] {
            assert!(
                out.contains(&format!("\"comparison\":\"{what}\"")),
                "no row {what}"
            );
        }
    }
    // How misses are filled: by read and by mapping, every extent size on
    // both page-cache layouts.
    for pages in ["large folios", "4 KiB pages"] {
        for kib in [64, 256, 1024, 4096] {
            let what = format!("filling {kib} KiB extents, {pages}: map vs read");
            assert!(
                out.contains(&format!("\"comparison\":\"{what}\"")),
                "no row {what}"
            );
        }
    }
    // ferry ipc beside iceoryx2: its ping-pong, both ferry wake-ups, and
    // the paper's stream (every message's bytes and words checked).
    for what in ["8 B", "4 KiB"] {
        for ferry in ["ferry ipc busy poll", "ferry ipc poll(2) wake-up"] {
            let what = format!("{what} ping-pong, one-way latency: {ferry} vs iceoryx2 busy poll");
            assert!(
                out.contains(&format!("\"comparison\":\"{what}\"")),
                "no row {what}"
            );
        }
    }
    for kib in [4, 64, 1024] {
        let what = format!("{kib} KiB messages: ipc buffers vs iceoryx2 busy poll");
        assert!(
            out.contains(&format!("\"comparison\":\"{what}\"")),
            "no row {what}"
        );
    }
    // The web servers: a row per file size and peer (a peer that is not
    // installed is named in its rows), or the case named as left out when
    // wrk is missing; every server's answers were checked before timing.
    if out.contains("\"comparison\":\"HTTP: left out\"") {
        assert!(out.contains("apt-get install wrk"), "{out}");
    } else {
        for kib in ["1 KiB", "16 KiB", "100 KiB", "1 MiB"] {
            for peer in ["nginx", "lighttpd", "h2o", "static-web-server"] {
                let row = format!(
                    "{{\"comparison\":\"HTTP GET of a {kib} file, 1 worker, 32 connections\",\"ferry\":\"ferry serve\""
                );
                let named = out
                    .split(&row)
                    .skip(1)
                    .filter_map(|rest| rest.split('}').next())
                    .any(|r| r.contains(&format!("\"baseline\":\"{peer}")));
                assert!(named, "no row for {peer} at {kib}: {out}");
            }
        }
    }
    // iceoryx2 left none of its files behind.
    let shm = std::fs::read_dir("/dev/shm").unwrap();
    assert!(
        !shm.flatten().any(|e| e
            .file_name()
            .to_string_lossy()
            .starts_with("iox2_ferry_bench_")),
        "iceoryx2 files left in /dev/shm"
    );
    // The application runs, their counts checked against each other.
    for what in [
        "wc over a cached file: FileCache vs read",
        "wc -l over a cached file: FileCache vs read",
        "permute→wc: ferry ipc vs pipe, std defaults",
        "permute→wc: ferry ipc vs pipe, 64 KiB buffers",
    ] {
        assert!(
            out.contains(&format!("\"comparison\":\"{what}\"")),
            "no row {what}"
        );
    }
    let (code, _, err) = bench(&["iolite", "--quick", "--only", "checksums,ipcc"]);
    assert_eq!(code, 1);
    assert_eq!(err.trim(), "ferry-bench: iolite: no case named 'ipcc'");
}

#[test]
fn quick_stream_ops_bench_runs_every_variant() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = bench(&[
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
    let (code, _, err) = bench(&["stream-ops", "--runs", "2"]);
    assert_eq!(code, 1);
    assert!(err.contains("too few"), "{err}");
}

#[test]
fn quick_asf_c_bench_builds_and_runs_every_program() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = bench(&[
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
    let (code, out, err) = bench(&[
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
    let (code, _, err) = bench(&["asf-c", "--quick", "--runs", "5", "--cc", "/nonexistent/cc"]);
    assert_eq!(code, 1);
    assert!(err.contains("no C compiler '/nonexistent/cc'"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = bench(&[
        "asf-c",
        "--quick",
        "--runs",
        "5",
        "--lib",
        empty.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("no libferry.so in"), "{err}");
    let (code, _, err) = bench(&["asf-c", "--runs", "5", "--only", "nope"]);
    assert_eq!(code, 1);
    assert!(err.contains("no tool in --only"), "{err}");
}

#[test]
fn quick_stream_bench_runs_its_scenarios_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = bench(&[
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

/// `ferry-bench bulk --quick`: every configuration runs, its output is
/// checked against the chunks sorted (a wrong pass is an error), cached
/// and O_DIRECT (in a directory on a disk file system), and the scratch
/// files go away.
#[test]
fn quick_bulk_bench_runs_every_configuration() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, out, err) = bench(&["bulk", "--quick", "--runs", "5", "--dir", d]);
    assert_eq!(code, 0, "{err}");
    for c in ["raf", "ds", "dsb", "bulkraf", "bulkds", "async"] {
        assert!(out.contains(&format!("| {c} |")), "no row {c}: {out}");
    }
    assert!(out.contains("target: bulkraf vs raf"), "{out}");
    let (code, out, err) = bench(&[
        "bulk", "--quick", "--runs", "5", "--direct", "--chunks", "64K", "--dir", d,
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
    let (code, _, err) = bench(&["bulk", "--quick", "--runs", "5", "--chunks", "1000"]);
    assert_eq!(code, 1);
    assert!(err.contains("multiple of 4 KiB"), "{err}");
}

/// `ferry-bench sort --quick`: ferry sort beside GNU sort (text, in memory
/// and through runs) and binary records beside the I/O floor; scratch
/// files go away.
#[test]
fn quick_sort_bench_runs_every_scenario() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, out, err) = bench(&["sort", "--quick", "--runs", "5", "--dir", d]);
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
