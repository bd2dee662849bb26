//! Bad input gets a clear error that names the file; nothing is lost.

use ferry::stream::os_error;
use ferry::{OpenOptions, Stream};
use std::io::{ErrorKind, Read, SeekFrom, Write};

#[test]
fn missing_file() {
    let e = Stream::open("/nonexistent/dir/file", &OpenOptions::read_only()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(os_error(&e), Some(libc::ENOENT));
    assert_eq!(
        e.to_string(),
        "opening /nonexistent/dir/file: No such file or directory"
    );
}

#[test]
fn directory() {
    let dir = tempfile::tempdir().unwrap();
    let e = Stream::open(dir.path(), &OpenOptions::read_only()).unwrap_err();
    assert_eq!(os_error(&e), Some(libc::EISDIR));
    assert!(e.to_string().contains(dir.path().to_str().unwrap()), "{e}");
    assert!(e.to_string().ends_with("Is a directory"), "{e}");
}

#[test]
fn neither_read_nor_write() {
    let e = Stream::open("/etc/hostname", &OpenOptions::new()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
}

#[test]
fn create_new_on_existing_file() {
    let f = tempfile::NamedTempFile::new().unwrap();
    let e = Stream::open(f.path(), &OpenOptions::new().write(true).create_new(true)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
}

#[test]
fn reading_a_write_only_stream_and_writing_a_read_only_one() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("w");
    let s = Stream::open(&p, &OpenOptions::write_truncate()).unwrap();
    let e = s.salloc(10).unwrap_err();
    assert_eq!(os_error(&e), Some(libc::EBADF), "{e}");
    assert!(e.to_string().contains("reading"), "{e}");
    assert!(e.to_string().contains(p.to_str().unwrap()), "{e}");
    let mut buf = [0u8; 4];
    assert_eq!(
        os_error(&(&s).read(&mut buf).unwrap_err()),
        Some(libc::EBADF)
    );
    s.salloc_mut(3).unwrap().copy_from_slice(b"abc");
    s.close().unwrap();

    let r = Stream::open(&p, &OpenOptions::read_only()).unwrap();
    let e = r.salloc_mut(1).unwrap_err();
    assert_eq!(os_error(&e), Some(libc::EBADF), "{e}");
    assert!(e.to_string().contains("writing"), "{e}");
    assert_eq!(
        &r.salloc(10).unwrap()[..],
        b"abc",
        "an error must not disturb the stream"
    );
}

#[test]
fn salloc_at_on_a_pipe_is_espipe() {
    let (r, w) = std::io::pipe().unwrap();
    drop(w);
    let s = Stream::from_fd(r.into()).unwrap();
    let e = s.salloc_at(1, SeekFrom::Start(0)).unwrap_err();
    assert_eq!(os_error(&e), Some(libc::ESPIPE), "{e}");
    assert!(e.to_string().starts_with("seeking fd "), "{e}");
    assert_eq!(
        s.seek_to(SeekFrom::Current(0)).unwrap(),
        0,
        "asking the offset is fine"
    );
}

#[test]
fn closed_pipe_is_epipe_on_flush_and_close() {
    let (r, w) = std::io::pipe().unwrap();
    drop(r);
    let s = Stream::from_fd(w.into()).unwrap();
    s.salloc_mut(10).unwrap().fill(b'x');
    let e = s.flush().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BrokenPipe, "{e}");
    assert!(e.to_string().starts_with("writing fd "), "{e}");
}

#[test]
fn disk_full_is_reported_and_named() {
    let s = Stream::open("/dev/full", &OpenOptions::new().write(true)).unwrap();
    let mut w = &s;
    w.write_all(&[1u8; 1000]).unwrap(); // buffered
    let e = s.flush().unwrap_err();
    assert_eq!(os_error(&e), Some(libc::ENOSPC), "{e}");
    assert_eq!(e.to_string(), "writing /dev/full: No space left on device");
    // A big write goes straight through and fails at once.
    let s = Stream::open("/dev/full", &OpenOptions::new().write(true)).unwrap();
    let e = (&s).write(&vec![0u8; 1 << 20]).unwrap_err();
    assert_eq!(os_error(&e), Some(libc::ENOSPC));
    // Close reports what drop could not.
    let s = Stream::open("/dev/full", &OpenOptions::new().write(true)).unwrap();
    s.salloc_mut(5).unwrap().fill(1);
    assert_eq!(os_error(&s.close().unwrap_err()), Some(libc::ENOSPC));
}

#[test]
fn permission_denied_is_named() {
    // Root ignores file modes, so the check runs in a child process that
    // has become `nobody`.
    if std::env::var_os("FERRY_PERM_CHILD").is_some() {
        let p = std::env::var("FERRY_PERM_PATH").unwrap();
        let e = Stream::open(&p, &OpenOptions::read_only()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PermissionDenied, "{e}");
        assert_eq!(e.to_string(), format!("opening {p}: Permission denied"));
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let p = dir.path().join("secret");
    std::fs::write(&p, b"x").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    // The child runs a copy of this test binary kept beside the file: the
    // build directory may be one `nobody` cannot reach (a target directory
    // under a private home).
    let exe = dir.path().join("child");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = std::process::Command::new(&exe);
    cmd.args([
        "--exact",
        &test_name!(permission_denied_is_named),
        "--nocapture",
    ])
    .current_dir(dir.path())
    .env("FERRY_PERM_CHILD", "1")
    .env("FERRY_PERM_PATH", &p);
    if rustix::process::getuid().is_root() {
        // SAFETY: setgid/setuid between fork and exec are async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let out = match cmd.output() {
        Err(e) if e.kind() == ErrorKind::PermissionDenied => {
            // The temporary directory itself is out of `nobody`'s reach.
            eprintln!(
                "permission_denied_is_named: skipped: {} cannot be run by uid 65534: {e}",
                exe.display()
            );
            return;
        }
        r => r.unwrap(),
    };
    assert!(
        out.status.success(),
        "child failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
}

#[test]
fn write_regions_never_freed_are_reported_at_close() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    let s = Stream::open(&p, &OpenOptions::write_truncate()).unwrap();
    s.salloc_mut(3).unwrap().copy_from_slice(b"one");
    std::mem::forget(s.salloc_mut(3).unwrap());
    s.salloc_mut(3).unwrap().copy_from_slice(b"two");
    let e = s.close().unwrap_err();
    assert!(e.to_string().contains("never freed"), "{e}");
    // What came before the lost region is in the file; nothing after it
    // was written out of order.
    assert_eq!(std::fs::read(&p).unwrap(), b"one");
}

#[test]
fn realloc_of_an_older_region_is_refused() {
    let s = Stream::memory();
    let mut a = s.salloc_mut(4).unwrap();
    let b = s.salloc_mut(4).unwrap();
    let e = a.realloc(2).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.to_string().contains("most recent"), "{e}");
    drop((a, b));
}
