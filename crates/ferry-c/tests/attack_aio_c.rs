//! Attacks on ferry/aio.h: each program in tests/c/attack/ is built
//! against ferry/aio.h and libferry and must exit 0 printing "ok" (as a
//! correct library would let it).

mod common;

use common::{include, libdir};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn attack(name: &str) {
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

/// fy_aio_done says 1 after cancel + clear while the kernel (a worker in
/// write(2)) still reads the buffer the header says is the program's.
#[test]
fn attack_aio_done_after_clear_while_the_buffer_is_lent() {
    attack("aio_clear_lent.c");
}

/// fy_aio_set_timeout: huge and negative timeouts never fire early, a
/// request queued behind a blocked one times out at its own deadline
/// (ETIMEDOUT), on both backends.
#[test]
fn attack_aio_timeout_edges() {
    attack("aio_timeout_edges.c");
}
