//! ferry/ipc.h from C: a program (tests/c/ferry-only/ipc.c) that forks and
//! passes buffers between the two processes over a pair and an abstract
//! name, checks every byte in place, and kills a sender. It checks itself:
//! exit 0 and "ok".

use crate::common::{self, include, libdir};
use std::path::Path;
use std::process::Command;

#[test]
fn ipc_header_passes_buffers_between_two_c_processes() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("ipc");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/ferry-only/ipc.c");
    let lib = libdir();
    let o = Command::new("cc")
        .args(["-std=gnu11", "-O1", "-Wall", "-Werror"])
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .arg("-I")
        .arg(include())
        .arg("-L")
        .arg(lib)
        .arg("-lferry")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .output()
        .expect("running cc");
    assert!(
        o.status.success(),
        "compiling ipc.c failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let child = Command::new(&exe)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = common::wait_with_deadline(child, Vec::new(), std::time::Duration::from_secs(120));
    assert!(
        out.status.success() && out.stdout == b"ok\n",
        "status {:?}\nstdout {}\nstderr {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
