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
