//! Paths that name something other than a regular file — a FIFO, a
//! terminal — are refused as "not a regular file" without being opened:
//! opening them could wait, fail with another error, or act on them.

use ferry::cache::{CacheConfig, FileCache};
use ferry::Buf;
use std::os::fd::AsFd;
use std::path::PathBuf;

fn cache() -> FileCache {
    FileCache::new(CacheConfig::default().with_budget(1 << 20)).unwrap()
}

fn fifo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &p,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    (dir, p)
}

/// A write through the cache to a FIFO nobody reads: the cache used to
/// open it (`O_WRONLY|O_NONBLOCK`) before looking at what it was, and the
/// kernel refused that open with `ENXIO` ("No such device or address"),
/// which says nothing of the real problem. The path is now refused as not
/// a regular file before any open, for reads and writes alike, and
/// nothing waits for the FIFO's other end.
#[test]
fn a_fifo_with_no_reader_is_refused_as_not_a_regular_file() {
    let (_d, p) = fifo();
    let c = cache();
    let e = c.write(&p, 0, Buf::from_static(b"x")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("fifo: not a regular file"), "{e}");
    let e = c.read(&p, ..).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("fifo: not a regular file"), "{e}");
}

/// A terminal named by its path is never opened: a session leader with
/// no controlling terminal that opens one without `O_NOCTTY` makes it its
/// controlling terminal (and would then get its SIGHUP and job-control
/// signals). Runs in a child of its own, made a session leader by
/// `setsid`; the terminal is a fresh pty. Before the fix the read opened
/// the pty's slave and the child got a controlling terminal.
#[test]
fn a_terminal_is_refused_without_becoming_the_controlling_terminal() {
    if crate::support::in_child(&test_name!(
        a_terminal_is_refused_without_becoming_the_controlling_terminal
    )) {
        return;
    }
    rustix::process::setsid().unwrap();
    let (_master, slave) = crate::support::pty();
    let name = rustix::termios::ttyname(slave.as_fd(), Vec::new()).unwrap();
    let path = PathBuf::from(name.to_str().unwrap());
    drop(slave);
    let e = cache().read(&path, ..).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("not a regular file"), "{e}");
    // No controlling terminal: opening /dev/tty fails with ENXIO.
    let tty = std::fs::File::open("/dev/tty");
    assert_eq!(
        tty.map(|_| ()).map_err(|e| e.raw_os_error()),
        Err(Some(libc::ENXIO)),
        "the read made {} the controlling terminal",
        path.display()
    );
}
