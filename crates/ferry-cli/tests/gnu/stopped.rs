//! Tools caught in the middle of their work: a `ferry` process stopped
//! (SIGSTOP) once it has a file mapped, the leases it holds, and shell
//! commands that must not wait for it.

use super::FERRY;
use std::path::Path;
use std::process::{Command, Stdio};

/// A child process stopped with SIGSTOP; on drop it is continued and
/// killed, so a failing test leaves nothing behind.
pub struct Stopped(pub std::process::Child);

impl Stopped {
    pub fn pid(&self) -> i32 {
        self.0.id() as i32
    }

    /// Continues the process and waits for its end: its status, output
    /// and messages.
    pub fn resume(self) -> (std::process::ExitStatus, Vec<u8>, String) {
        // SAFETY (test): signals to our own child.
        unsafe { libc::kill(self.pid(), libc::SIGCONT) };
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never used or dropped again.
        let child = unsafe { std::ptr::read(&me.0) };
        let o = child.wait_with_output().unwrap();
        (
            o.status,
            o.stdout,
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        // SAFETY (test): signals to our own child.
        unsafe {
            libc::kill(self.pid(), libc::SIGCONT);
            libc::kill(self.pid(), libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

/// Starts `ferry args` (output to pipes read at [`Stopped::resume`]) and stops it with
/// SIGSTOP as soon as it has `file` mapped; panics if it ends first.
pub fn stop_while_mapping(args: &[&str], dir: &Path, file: &Path) -> Stopped {
    stop_once_mapped_from(args, dir, file, 0)
}

/// `ferry args` started in `dir` (C locale) with all three standard
/// descriptors pipes to this process.
pub fn spawn_piped(args: &[&str], dir: &Path) -> std::process::Child {
    Command::new(FERRY)
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// [`stop_while_mapping`], once a mapping of `file` from offset `from` or
/// later shows (so the tool read what came before: streams map forward).
pub fn stop_once_mapped_from(args: &[&str], dir: &Path, file: &Path, from: u64) -> Stopped {
    // Standard input is a pipe nobody writes until `resume` closes it: a
    // tool that reads it (`cmp FILE -`) waits there with FILE mapped.
    let mut c = Stopped(spawn_piped(args, dir));
    let maps = format!("/proc/{}/maps", c.pid());
    let want = file.to_string_lossy().into_owned();
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        assert!(
            std::time::Instant::now() < give_up,
            "ferry {args:?} did not map {want} within a minute"
        );
        let mapped = |l: &str| {
            l.ends_with(&want)
                && l.split_whitespace()
                    .nth(2)
                    .and_then(|o| u64::from_str_radix(o, 16).ok())
                    .is_some_and(|o| o >= from)
        };
        if std::fs::read_to_string(&maps).is_ok_and(|m| m.lines().any(mapped)) {
            // SAFETY (test): a signal to our own child.
            unsafe { libc::kill(c.pid(), libc::SIGSTOP) };
            return c;
        }
        if let Some(st) = c.0.try_wait().unwrap() {
            panic!("ferry {args:?} ended ({st}) before it mapped {want}");
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// The lines of /proc/locks that are leases held by process `pid`.
pub fn leases_of(pid: i32) -> Vec<String> {
    std::fs::read_to_string("/proc/locks")
        .unwrap()
        .lines()
        .filter(|l| l.contains("LEASE") && l.split_whitespace().any(|w| w == pid.to_string()))
        .map(str::to_string)
        .collect()
}

/// Runs `sh -c script` under `timeout 10` (a command held back by a
/// lease fails instead of hanging the test); its exit status.
pub fn sh_bounded(script: &str, dir: &Path) -> Option<i32> {
    Command::new("timeout")
        .args(["10", "sh", "-c", script])
        .current_dir(dir)
        .stdin(Stdio::null())
        .status()
        .unwrap()
        .code()
}
