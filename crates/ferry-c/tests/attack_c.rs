//! Attacks on the C library: each program in tests/c/attack/ is built
//! against ferry/stdio.h and libferry and must exit 0 printing "ok" (as a
//! correct library would let it); the ones that find a bug are ignored.

mod common;

use common::{include, libdir};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn attack(name: &str, extra: &[&str]) {
    let work = tempfile::tempdir().expect("tempdir");
    let exe = work.path().join("prog");
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c/attack")
        .join(name);
    let lib = libdir();
    let o = Command::new("cc")
        .args(["-std=gnu11", "-O1", "-Wall", "-pthread", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-I")
        .arg(include())
        .args(["-include", "ferry/stdio.h"])
        .args(extra)
        .arg("-L")
        .arg(lib)
        .arg("-lferry")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .output()
        .expect("cc");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut child = Command::new(&exe)
        .current_dir(work.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    assert!(
        status.is_some_and(|s| s.success()) && out.stdout.ends_with(b"ok\n"),
        "{name}: status {status:?} (None: hung, killed after 20 s)\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn attack_freopen_keeps_old_regions() {
    attack("freopen_regions.c", &[]);
}

#[test]
fn attack_negative_fd_waits_for_stdin_reader() {
    attack("badfd_hang.c", &["-include", "ferry/unistd.h"]);
}

#[test]
fn attack_scanf_long_token_is_quadratic() {
    attack("scan_long.c", &[]);
}
