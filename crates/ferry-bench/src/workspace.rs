//! What the suites run that this workspace builds: the `ferry` binary
//! (package ferry-cli) and `libferry.so` (ferry-c), found in the directory
//! of this executable.
//!
//! When this executable is a cargo build in the workspace's target
//! directory (`cargo run --release -p ferry-bench`, or the tests'
//! `target/debug/ferry-bench`), the package is built there first, with the
//! same profile — a no-op when it is up to date — so a suite never times a
//! stale build of the tools. Elsewhere (the binary copied away, or a
//! target directory of another layout) the file must already be beside
//! it, and the error says how to build it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `ferry` binary to time: its path (see the module doc).
pub fn ferry(quiet: bool) -> Result<String, String> {
    let dir = built("ferry-cli", "ferry", quiet)?;
    Ok(dir.join("ferry").to_string_lossy().into_owned())
}

/// The directory of this executable, once `file` of `package` is there
/// (built first where cargo can: see the module doc).
pub fn built(package: &str, file: &str, quiet: bool) -> Result<PathBuf, String> {
    build(package, &[], file, quiet)
}

/// The path of example `name` of `package`, built first as [`built`]
/// builds a package.
pub fn example(package: &str, name: &str, quiet: bool) -> Result<PathBuf, String> {
    let file = format!("examples/{name}");
    let dir = build(package, &["--example", name], &file, quiet)?;
    Ok(dir.join(file))
}

fn build(package: &str, extra: &[&str], file: &str, quiet: bool) -> Result<PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    let here = me
        .parent()
        .ok_or("this program has no directory")?
        .to_path_buf();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let profile = here.file_name().and_then(|n| n.to_str()).unwrap_or("");
    // Cargo marks the top of a target directory with CACHEDIR.TAG.
    let target_dir = here.parent().filter(|t| {
        t.join("CACHEDIR.TAG").is_file()
            && root.join("Cargo.toml").is_file()
            && matches!(profile, "release" | "debug")
    });
    if let Some(target_dir) = target_dir {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        if !quiet {
            eprintln!("  building {package} ({profile}) …");
        }
        let mut c = Command::new(&cargo);
        c.args(["build", "-q", "-p", package])
            .args(extra)
            .arg("--manifest-path")
            .arg(root.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(target_dir);
        if profile == "release" {
            c.arg("--release");
        }
        match c.status() {
            Ok(st) if st.success() => {}
            Ok(st) => return Err(format!("building {package} failed ({st})")),
            // No cargo here: what is beside this program is what there is.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("running {cargo}: {e}")),
        }
    }
    if here.join(file).is_file() {
        Ok(here)
    } else {
        let release = if profile == "debug" { "" } else { "--release " };
        Err(format!(
            "no {file} next to {} (build it with `cargo build {release}-p {package}{}`)",
            me.display(),
            extra.iter().map(|a| format!(" {a}")).collect::<String>()
        ))
    }
}
