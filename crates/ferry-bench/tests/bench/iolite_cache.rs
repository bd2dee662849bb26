//! The iolite suite's file cache case in its `--quick` form: FileCache,
//! quick_cache and moka run every trace (each lookup's length checked
//! against the file), the hit ratios are printed, and the scratch files
//! are gone afterwards.

use std::process::{Command, Stdio};

#[test]
fn quick_iolite_cache_case_runs_every_trace_beside_its_peers() {
    let child = Command::new(crate::BENCH)
        .args([
            "iolite", "--quick", "--only", "cache", "--json", "--runs", "5",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ferry-bench");
    let pid = child.id();
    let out = child.wait_with_output().expect("wait for ferry-bench");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    let traces = [
        "zipf α 0.7",
        "zipf α 1.0",
        "zipf α 1.2",
        "scan + hot 10 %",
        "web (SURGE sizes, Zipf 0.75, locality)",
    ];
    for t in traces {
        assert!(
            stderr.contains(&format!("| {t} | ")),
            "no hit ratios for {t}: {stderr}"
        );
        for threads in [1, 2] {
            for peer in ["quick_cache", "moka"] {
                let what = format!("{t}, {threads} thr: time per lookup, FileCache vs {peer}");
                assert!(
                    stdout.contains(&format!("\"comparison\":\"{what}\"")),
                    "no row {what}: {stdout}"
                );
            }
        }
    }
    for what in [
        "cache hit, 1 MiB file: lookup by path + Aggregate",
        "cache hit, 1 MiB file: lookup by held File + Aggregate",
    ] {
        assert!(
            stdout.contains(&format!("\"comparison\":\"{what}\"")),
            "no row {what}: {stdout}"
        );
    }
    let scratch = std::env::temp_dir().join(format!("ferry-bench-cache-{pid}"));
    assert!(!scratch.exists(), "{} left behind", scratch.display());
}
