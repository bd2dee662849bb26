//! What the library's integration tests share: every test binary of the
//! crate (`tests/AREA/main.rs`, one module per behaviour) includes this
//! module with `#[macro_use] #[path = "../support/mod.rs"] mod support;`,
//! first, so that its macro is in scope in the modules after it.
//!
//! Write a function used by two test files here instead of again.

#![allow(dead_code, unused_macros)]

use std::io::{Read, Seek, Write};
use std::num::NonZeroUsize;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The name the test harness knows test function `$name` of the current
/// module by (`module::name`, as `--list` prints it), for `--exact` in a
/// child process of the test binary ([`in_child`], or a test's own
/// command). Names the function, so a renamed test does not compile
/// until its child's name follows.
macro_rules! test_name {
    ($name:ident) => {{
        let _: fn() = $name;
        crate::support::harness_name(module_path!(), stringify!($name))
    }};
}

/// `module_path` (a test binary's crate, then modules) and a function's
/// `name` as the harness names the test: without the crate's name.
pub fn harness_name(module_path: &str, name: &str) -> String {
    match module_path.split_once("::") {
        Some((_, modules)) => format!("{modules}::{name}"),
        None => name.to_string(),
    }
}

/// The environment variable that marks a child process of a test binary.
const CHILD: &str = "FERRY_TEST_CHILD";

/// For tests that change what is the whole process's (an rlimit, a signal
/// disposition): in the test binary as the harness runs it, runs test
/// `name` alone in a child process of the same binary, checks that it
/// passed there, and returns true (the caller then returns); in that
/// child, returns false (the caller goes on with the test's body). `name`
/// is the test's full name: `in_child(&test_name!(the_test))`.
pub fn in_child(name: &str) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return false;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "child: {:?}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// Sets this process's file size limit (`RLIMIT_FSIZE`) to `bytes`: a
/// write past it raises SIGXFSZ, or fails with EFBIG where the signal is
/// ignored or blocked. For a test body run by [`in_child`].
pub fn limit_file_size(bytes: u64) {
    rustix::process::setrlimit(
        rustix::process::Resource::Fsize,
        rustix::process::Rlimit {
            current: Some(bytes),
            maximum: None,
        },
    )
    .unwrap();
}

/// Another process opens `path` read-only with `O_TRUNC` (perl's
/// `sysopen`): Linux empties the file for anyone allowed to write it, and
/// a read-only open does not break a read lease.
pub fn child_opens_read_only_with_o_trunc(path: &std::path::Path) {
    let st = std::process::Command::new("perl")
        .args([
            "-MFcntl",
            "-e",
            "sysopen(my $f, $ARGV[0], O_RDONLY|O_TRUNC) or die \"open: $!\"",
        ])
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success(), "perl: {st:?}");
}

/// [`in_child`] for a test whose child must start inside something only
/// a command can set up (a mount namespace of its own: `unshare -m`):
/// runs `prefix`, then `arg` (the prefix's `$0` where it is `sh -c`), then
/// this binary's command line for test `name`, with `arg` in the
/// environment as `var` (the child sees it there and runs the body).
/// `Ok` if the test passed in the child; otherwise its output is shown
/// and the exit status returned (`None`: the prefix could not be run, or
/// was killed).
pub fn in_child_under(
    name: &str,
    prefix: &[&str],
    arg: &std::path::Path,
    var: &str,
) -> Result<(), Option<i32>> {
    let Some((program, args)) = prefix.split_first() else {
        return Err(None);
    };
    let out = std::process::Command::new(program)
        .args(args)
        .arg(arg)
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env(var, arg)
        .output()
        .map_err(|_| None)?;
    if out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed") {
        return Ok(());
    }
    eprintln!(
        "child: {:?}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Err(out.status.code())
}

/// `n` as a `NonZeroUsize`.
pub fn nz(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

/// `len` pseudo-random bytes (xorshift from `seed`): no period a piece
/// moved to the wrong place could hide in.
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// `n` bytes with no zero among them, so that zeros in their place show.
pub fn bytes_without_zeros(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8 + 1).collect()
}

/// A private temporary file (unnamed, open for reading and writing, so it
/// cannot be leased) holding `bytes`, its offset back at 0.
pub fn temp_file_with(bytes: &[u8]) -> std::fs::File {
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(bytes).unwrap();
    f.rewind().unwrap();
    f
}

/// A file `f` in a fresh directory, written and closed (no writer left
/// open, so it can be leased); the directory goes with the guard.
pub fn file_with(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = write_file(dir.path(), "f", bytes);
    (dir, p)
}

/// [`file_with`], opened again read-only (`Buf::map_file` maps it).
pub fn read_only_file_with(bytes: &[u8]) -> (tempfile::TempDir, std::fs::File) {
    let (dir, p) = file_with(bytes);
    (dir, std::fs::File::open(&p).unwrap())
}

/// File `name` in `dir`, written with `bytes` and closed; its path.
pub fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// A thread reading `r` to its end.
pub fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut all = Vec::new();
        r.read_to_end(&mut all).unwrap();
        all
    })
}

/// Sets `O_NONBLOCK` on `fd`'s open file description.
pub fn set_nonblocking(fd: impl AsFd) {
    let fl = rustix::fs::fcntl_getfl(&fd).unwrap();
    rustix::fs::fcntl_setfl(&fd, fl | rustix::fs::OFlags::NONBLOCK).unwrap();
}

/// A terminal: its master and slave, both blocking, closed on exec (so
/// that no child another test starts meanwhile keeps the terminal open).
pub fn pty() -> (OwnedFd, OwnedFd) {
    let (mut m, mut s) = (-1, -1);
    // SAFETY: openpty writes two descriptors into `m` and `s`; the name,
    // termios and winsize pointers may be null.
    let r = unsafe {
        libc::openpty(
            &mut m,
            &mut s,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: openpty succeeded: `m` and `s` are new descriptors owned here.
    let pair = unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) };
    for fd in [&pair.0, &pair.1] {
        rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC).unwrap();
    }
    pair
}

/// Waits up to `limit` for child `pid` (forked by the caller) to end: its
/// exit status, or 128 + the signal that killed it; `None`, after killing
/// and reaping it, if it was still running.
pub fn wait_child(pid: libc::pid_t, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    loop {
        let mut st = 0;
        // SAFETY: waitpid on our own child.
        let r = unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG) };
        if r == pid {
            return Some(if libc::WIFEXITED(st) {
                libc::WEXITSTATUS(st)
            } else {
                128 + libc::WTERMSIG(st)
            });
        }
        if start.elapsed() > limit {
            // SAFETY: our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut st, 0);
            }
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `f`'s offset (the open file description's, as `lseek` tells it).
pub fn offset(f: &mut std::fs::File) -> u64 {
    f.stream_position().unwrap()
}

/// A pipe's read end as an `AsyncFile` on backend `b` (a slow device:
/// nothing arrives until the test writes), and its write end.
pub fn async_pipe_reader(b: ferry::aio::Backend) -> (ferry::aio::AsyncFile, std::io::PipeWriter) {
    let (r, w) = std::io::pipe().unwrap();
    (
        ferry::aio::AsyncFile::from_fd(OwnedFd::from(r), b).unwrap(),
        w,
    )
}
