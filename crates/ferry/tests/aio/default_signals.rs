//! Asynchronous writes with SIGPIPE and SIGXFSZ at their default
//! dispositions (as in a C program using ferry/aio.h): a write to a pipe
//! with no reader, or past RLIMIT_FSIZE, must fail with EPIPE / EFBIG,
//! not kill the process. The rest of ferry holds these signals back
//! around its writes; `aio` does not (threads.rs calls pwrite/write on a
//! worker; io_uring issues the write from the submitting thread or the
//! reaper). Each case runs in a child process (the test binary re-run with
//! `FERRY_AIO_SIGNALS_CASE` set), since a death would take the harness with it.

use ferry::aio::{AsyncFile, Backend};
use ferry::Buf;
use std::os::fd::OwnedFd;
use std::process::Command;
use std::time::Duration;

const CASES: [&str; 4] = ["pipe-uring", "pipe-threads", "fsize-uring", "fsize-threads"];

fn child(case: &str) -> ! {
    let b = if case.ends_with("uring") {
        Backend::IoUring
    } else {
        Backend::Threads
    };
    let r = if case.starts_with("pipe") {
        // SAFETY: the child process runs only this.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        let (r, w) = std::io::pipe().unwrap();
        drop(r);
        let f = AsyncFile::from_fd(OwnedFd::from(w), b).unwrap();
        f.write(Buf::from(vec![1u8; 1000])).unwrap()
    } else {
        // SAFETY: as above.
        unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_DFL) };
        rustix::process::setrlimit(
            rustix::process::Resource::Fsize,
            rustix::process::Rlimit {
                current: Some(4096),
                maximum: None,
            },
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let f = AsyncFile::with_options(
            dir.path().join("g"),
            std::fs::File::options().write(true).create(true),
            b,
        )
        .unwrap();
        let r = f.write_at(8192, Buf::from(vec![1u8; 1000])).unwrap();
        std::mem::forget(dir);
        r
    };
    let e = r.wait(Some(Duration::from_secs(5))).unwrap_err();
    println!("error: {e} ({:?})", e.raw_os_error());
    std::process::exit(0)
}

/// Runs each case in a child and wants it alive, reporting the error.
#[test]
fn aio_writes_with_default_sigpipe_and_sigxfsz() {
    if let Ok(case) = std::env::var("FERRY_AIO_SIGNALS_CASE") {
        child(&case);
    }
    let mut bad = Vec::new();
    for case in CASES {
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &test_name!(aio_writes_with_default_sigpipe_and_sigxfsz),
                "--nocapture",
                "--test-threads=1",
            ])
            .env("FERRY_AIO_SIGNALS_CASE", case)
            .output()
            .unwrap();
        let so = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            bad.push(format!(
                "{case}: {:?} {}",
                out.status,
                so.lines().find(|l| l.starts_with("error")).unwrap_or("")
            ));
        }
    }
    assert!(bad.is_empty(), "aio writes died of a signal: {bad:#?}");
}
