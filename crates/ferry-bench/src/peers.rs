//! The peers a suite compares with, installed from Debian's packages
//! when they are missing (as root, with `apt-get`), so that a run on a
//! fresh machine puts ferry beside them rather than alone. A peer that
//! cannot be installed is named under the table, never silently dropped.

use std::process::{Command, Stdio};

/// Installs `packages` with apt-get; says why not where it cannot.
pub fn install(packages: &[&str], quiet: bool) -> Result<(), String> {
    if packages.is_empty() {
        return Ok(());
    }
    if !rustix::process::geteuid().is_root() {
        return Err("not root".into());
    }
    if crate::asf::which(&["apt-get"]).is_none() {
        return Err("no apt-get".into());
    }
    if !quiet {
        eprintln!("  installing {} (Debian packages) …", packages.join(" "));
    }
    // The package lists may be stale or absent on a fresh machine: update
    // them once when the first try fails.
    let install = ["install", "-y", "-qq"];
    if apt(&install, packages)? || (apt(&["update", "-qq"], &[])? && apt(&install, packages)?) {
        return Ok(());
    }
    Err(format!("apt-get install {} failed", packages.join(" ")))
}

fn apt(args: &[&str], packages: &[&str]) -> Result<bool, String> {
    Command::new("apt-get")
        .args(args)
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map(|s| s.success())
        .map_err(|e| format!("apt-get: {e}"))
}
