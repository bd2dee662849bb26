//! Shared by the C test suites: libferry built for this profile, and the
//! headers' directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Builds libferry (this profile) once and returns the directory holding
/// libferry.so.
pub fn libdir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("test path");
        // target/<profile>/deps/this-test → target/<profile>
        let dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target dir")
            .to_path_buf();
        let profile = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("debug")
            .to_string();
        let cargo = option_env!("CARGO").unwrap_or("cargo");
        let mut c = Command::new(cargo);
        c.args(["build", "-p", "ferry-c"]);
        if profile == "release" {
            c.arg("--release");
        }
        let st = c.status().expect("running cargo build -p ferry-c");
        assert!(st.success(), "building libferry failed");
        assert!(
            dir.join("libferry.so").exists(),
            "no libferry.so in {}",
            dir.display()
        );
        dir
    })
}

pub fn include() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// Waits for `child`, feeding it `stdin` from a thread if its stdin is
/// piped; a program still running after `deadline` (hung, deadlocked) is
/// killed with SIGKILL, so its status then says so. (Not every test crate
/// that includes this module runs programs.)
#[allow(dead_code)]
pub fn wait_with_deadline(
    mut child: std::process::Child,
    stdin: Vec<u8>,
    deadline: std::time::Duration,
) -> std::process::Output {
    let feeder = child.stdin.take().map(|mut sin| {
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = sin.write_all(&stdin);
        })
    });
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(deadline).is_err() {
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(pid.to_string())
                .status();
        }
    });
    let o = child.wait_with_output().expect("waiting");
    let _ = tx.send(());
    let _ = watchdog.join();
    if let Some(f) = feeder {
        let _ = f.join();
    }
    o
}
