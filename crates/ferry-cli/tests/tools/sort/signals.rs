//! `ferry sort` and the terminal: Ctrl-C (SIGINT) in the middle of an
//! external sort leaves no temporary file and the output as it was; a
//! progress bar is drawn on a terminal (a pseudo-terminal made by
//! `script(1)`) and never into a pipe or a log.

use crate::gnu;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Temporary files the process holds in `dir` (unnamed or unlinked: the
/// links of its descriptors).
fn temporaries(pid: u32, dir: &std::path::Path) -> usize {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return 0;
    };
    fds.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|l| l.starts_with(dir))
        .count()
}

#[test]
fn ctrl_c_mid_sort_leaves_no_temporary_file_and_the_output_alone() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = dir.path().join("out");
    std::fs::write(&out, b"kept\n").unwrap();
    let mut child = Command::new(gnu::FERRY)
        .args(["sort", "-S", "64K", "-T"])
        .arg(&tmp)
        .arg("-o")
        .arg(&out)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Lines enough for several runs; standard input stays open, so the
    // sort is still reading when the signal comes.
    let mut input = child.stdin.take().unwrap();
    let mut lines = Vec::new();
    for i in 0..200_000u32 {
        writeln!(lines, "{:08x} line {i}", i.wrapping_mul(2_654_435_761)).unwrap();
    }
    input.write_all(&lines).unwrap();
    let start = Instant::now();
    while temporaries(child.id(), &tmp) < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no runs written after 30 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: kill only sends a signal to the child started above.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    drop(input);
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "temporary files left"
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"kept\n");
}

/// `script` runs the command on a pseudo-terminal and keeps what it
/// printed; `None` (with the reason printed) where there is no `script`.
fn on_a_terminal(cmd: &str, dir: &std::path::Path) -> Option<(i32, String)> {
    let typescript = dir.join("typescript");
    let r = Command::new("script")
        .args(["-qec", cmd])
        .arg(&typescript)
        .env("FERRY_SORT_PROGRESS_MIN", "1")
        .current_dir(dir)
        .stdout(Stdio::null())
        .status();
    match r {
        Ok(s) => Some((
            s.code().unwrap_or(-1),
            String::from_utf8_lossy(&std::fs::read(&typescript).unwrap()).into_owned(),
        )),
        Err(e) => {
            println!("skipped: no script(1) to make a terminal: {e}");
            None
        }
    }
}

#[test]
fn a_progress_bar_on_a_terminal_and_never_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut lines = Vec::new();
    for i in 0..400_000u32 {
        writeln!(lines, "{:08x} {i}", i.wrapping_mul(2_654_435_761)).unwrap();
    }
    std::fs::write(d.join("in"), &lines).unwrap();
    let mut want: Vec<&[u8]> = lines.split_inclusive(|&b| b == b'\n').collect();
    want.sort();
    let want = want.concat();
    let me = gnu::FERRY;
    // Through runs on disk (sorting, then merging) and in memory.
    for opts in ["-S 256K -T .", ""] {
        let cmd = format!("{me} sort {opts} -o out in");
        if let Some((code, shown)) = on_a_terminal(&cmd, d) {
            assert_eq!(code, 0, "{cmd}: {shown}");
            assert!(shown.contains("sort: sorting"), "{cmd}: no bar: {shown:?}");
            if !opts.is_empty() {
                assert!(shown.contains("sort: merging"), "{cmd}: {shown:?}");
            }
            assert!(std::fs::read(d.join("out")).unwrap() == want, "{cmd}");
        }
        // Standard error a pipe: nothing on it.
        let o = Command::new(me)
            .arg("sort")
            .args(opts.split_whitespace())
            .args(["-o", "out", "in"])
            .env("FERRY_SORT_PROGRESS_MIN", "1")
            .current_dir(d)
            .output()
            .unwrap();
        assert!(o.status.success());
        assert!(
            o.stderr.is_empty(),
            "{:?}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(std::fs::read(d.join("out")).unwrap() == want);
    }
    // A failure on a terminal: the bar is cleared before the message.
    let cmd = format!("{me} sort -S 256K -T /nonexistent-dir -o out in");
    if let Some((code, shown)) = on_a_terminal(&cmd, d) {
        assert_eq!(code, 2, "{shown}");
        assert!(
            shown.contains("ferry sort: cannot create temporary file in '/nonexistent-dir'"),
            "{shown:?}"
        );
    }
}
