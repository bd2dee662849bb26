//! ferry/ipc.h from C: a program (tests/c/ferry-only/ipc.c) that forks and
//! passes buffers between the two processes over a pair and an abstract
//! name, checks every byte in place, and kills a sender. It checks itself:
//! exit 0 and "ok".

use crate::common;
use std::process::Command;

#[test]
fn ipc_header_passes_buffers_between_two_c_processes() {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::build_ferry_only("ipc", dir.path());
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
