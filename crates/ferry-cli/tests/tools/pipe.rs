//! `ferry pipe` as a user runs it: real files, pipes, TCP and Unix
//! sockets, processes on both ends.

use crate::gnu;
use gnu::{ferry, next_port, random_bytes};

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Runs `ferry pipe ARGS`; (status, stdout, stderr).
fn run(args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    let mut c = ferry("pipe")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut i = c.stdin.take().unwrap();
    let input = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = i.write_all(&input);
    });
    let o = c.wait_with_output().unwrap();
    feeder.join().unwrap();
    (
        o.status.code().unwrap_or(-1),
        o.stdout,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn files_stdin_and_stdout() {
    let d = tempfile::tempdir().unwrap();
    let bytes = random_bytes(1 << 20 | 333, 7);
    let src = d.path().join("src");
    std::fs::write(&src, &bytes).unwrap();
    let s = src.to_str().unwrap();
    let out = d.path().join("out");
    let o = out.to_str().unwrap();
    let (code, _, err) = run(&["--stats", s, o], b"");
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), bytes);
    assert!(err.contains("copy_file_range"), "{err}");
    // --append, then stdin to stdout.
    let (code, _, err) = run(&["--append", s, o], b"");
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&out).unwrap().len(), 2 * bytes.len());
    let (code, got, err) = run(&["-", "-"], &bytes);
    assert_eq!((code, got.len()), (0, bytes.len()), "{err}");
    assert!(got == bytes);
}

#[test]
fn fixed_records_padded_into_a_file() {
    let d = tempfile::tempdir().unwrap();
    let bytes = random_bytes(10_000, 7);
    let src = d.path().join("src");
    std::fs::write(&src, &bytes).unwrap();
    let out = d.path().join("out");
    let (code, _, err) = run(
        &[
            "--stats",
            "--fixed",
            "512",
            "--pad",
            "255",
            src.to_str().unwrap(),
            out.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(code, 0, "{err}");
    let got = std::fs::read(&out).unwrap();
    assert_eq!(got.len(), 10_240);
    assert_eq!(&got[..10_000], &bytes[..]);
    assert!(got[10_000..].iter().all(|&b| b == 255));
    assert!(
        err.contains("case 4") && err.contains("blocks 1 in, 20 out"),
        "{err}"
    );
}

/// Connects to `addr` until the listener there is up.
fn wait_for<T>(mut connect: impl FnMut() -> std::io::Result<T>) -> T {
    let start = Instant::now();
    loop {
        match connect() {
            Ok(s) => return s,
            Err(e) if start.elapsed() < Duration::from_secs(20) => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("the listener never came up: {e}"),
        }
    }
}

#[test]
fn tcp_both_ways() {
    let d = tempfile::tempdir().unwrap();
    let bytes = random_bytes(3 << 20, 7);
    let src = d.path().join("src");
    std::fs::write(&src, &bytes).unwrap();
    // A port below the ephemeral range (32768–60999): no bind(0) of a
    // test running beside this one can take it before ferry binds it.
    let port = next_port();
    // ferry listens and writes what comes to a file…
    let out = d.path().join("out");
    let listener = ferry("pipe")
        .args([
            &format!("tcp-listen:127.0.0.1:{port}"),
            out.to_str().unwrap(),
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // …and ferry sends the file to it (sendfile on the kernel's path).
    let send = || {
        let o = ferry("pipe")
            .args([
                "--stats",
                src.to_str().unwrap(),
                &format!("tcp:127.0.0.1:{port}"),
            ])
            .output()
            .unwrap();
        if o.status.success() {
            Ok(o)
        } else {
            Err(std::io::Error::other(
                String::from_utf8_lossy(&o.stderr).into_owned(),
            ))
        }
    };
    let o = wait_for(send);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("sendfile"), "{err}");
    let lo = listener.wait_with_output().unwrap();
    assert!(
        lo.status.success(),
        "{}",
        String::from_utf8_lossy(&lo.stderr)
    );
    assert!(std::fs::read(&out).unwrap() == bytes);

    // A TCP source into standard output, in 1000-byte blocks.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.write_all(&random_bytes(200_000, 7)).unwrap();
    });
    let (code, got, err) = run(
        &["--block", "1000", &format!("tcp:127.0.0.1:{port}"), "-"],
        b"",
    );
    server.join().unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(got == random_bytes(200_000, 7));
}

#[test]
fn unix_sockets_and_the_end_of_data() {
    let d = tempfile::tempdir().unwrap();
    let sock = d.path().join("s");
    let bytes = random_bytes(500_000, 7);
    let src = d.path().join("src");
    std::fs::write(&src, &bytes).unwrap();
    let listener = ferry("pipe")
        .args([&format!("unix-listen:{}", sock.display()), "-"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let send = || {
        let o = ferry("pipe")
            .args([src.to_str().unwrap(), &format!("unix:{}", sock.display())])
            .output()
            .unwrap();
        if o.status.success() {
            Ok(())
        } else {
            Err(std::io::Error::other(
                String::from_utf8_lossy(&o.stderr).into_owned(),
            ))
        }
    };
    wait_for(send);
    // The sender shut its side down: the listener saw the end and exited.
    let lo = listener.wait_with_output().unwrap();
    assert!(lo.status.success());
    assert!(lo.stdout == bytes);
    assert!(
        !sock.exists(),
        "the socket's name is removed once connected"
    );
}

#[test]
fn errors_name_the_endpoint() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("missing");
    let m = missing.to_str().unwrap();
    let (code, _, err) = run(&[m, "-"], b"");
    assert_eq!(code, 1);
    assert_eq!(err, format!("ferry pipe: {m}: No such file or directory\n"));
    // A port nobody listens on.
    let port = next_port();
    let (code, _, err) = run(&["-", &format!("tcp:127.0.0.1:{port}")], b"x");
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("tcp:127.0.0.1:{port}: Connection refused")),
        "{err}"
    );
    for (args, want) in [
        (&["a"][..], "missing operand"),
        (&["a", "b", "c"], "extra operand"),
        (&["--pad", "3", "a", "b"], "--pad needs --fixed"),
        (&["--fixed", "0", "a", "b"], "invalid block size: '0'"),
        (
            &["--fixed", "512", "--pad", "256", "a", "b"],
            "invalid padding byte",
        ),
        (&["tcp:nohostport", "-"], "expected HOST:PORT"),
    ] {
        let (code, _, err) = run(args, b"");
        assert_eq!(code, 1, "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // /dev/full: ENOSPC, with how much arrived.
    let (code, _, err) = run(&["-", "/dev/full"], &random_bytes(10_000, 7));
    assert_eq!(code, 1);
    assert!(
        err.contains("/dev/full: write error: No space left on device (0 bytes arrived)"),
        "{err}"
    );
}

/// A reader that goes away: ferry pipe ends as GNU's tools do, by SIGPIPE,
/// silently.
#[test]
fn a_closed_reader_ends_it_by_sigpipe() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    std::fs::write(&src, random_bytes(8 << 20, 7)).unwrap();
    let mut c = ferry("pipe")
        .args([src.to_str().unwrap(), "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = c.stdout.take().unwrap();
    let mut first = [0u8; 10];
    out.read_exact(&mut first).unwrap();
    drop(out);
    let o = c.wait_with_output().unwrap();
    assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{:?}", o);
    assert!(o.stderr.is_empty());
}

/// `ferry pipe f f` exited 0 and emptied f (so did a hard link or a
/// symbolic link to f as DST): the destination was truncated before
/// anything looked at it. Refused now with GNU cp's words and status.
#[test]
fn pipe_refuses_same_file() {
    let dir = tempfile::tempdir().unwrap();
    for dst in ["f", "hard", "soft"] {
        for (prog, tool) in [("$FERRY pipe", "pipe"), ("cp", "cp")] {
            let r = gnu::sh(
                dir.path(),
                &format!(
                    "rm -f f hard soft; printf 'a\\nb\\n' > f; ln f hard; ln -s f soft; {prog} f {dst}"
                ),
            );
            assert_eq!(r.code, 1, "{prog} f {dst}: {}", r.stderr);
            assert_eq!(
                gnu::as_gnu(&r.stderr, tool).replacen(tool, "", 1),
                format!(": 'f' and '{dst}' are the same file\n"),
                "{prog} f {dst}"
            );
            assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"a\nb\n");
        }
    }
}

/// `ferry pipe --append f f` and `ferry pipe f - >> f` read what they
/// wrote: a 12-byte file grew to 200 MB in 20 seconds. Refused as GNU cat
/// refuses `cat f >> f`, with its message and status.
#[test]
fn pipe_refuses_appending_a_file_to_itself() {
    let dir = tempfile::tempdir().unwrap();
    let gnu_cat = gnu::sh(dir.path(), "printf 'a\\nb\\n' > f; cat f >> f");
    for cmd in [
        "$FERRY pipe --append f f",
        "$FERRY pipe f - >> f",
        "$FERRY pipe f - 1<>f",
    ] {
        let r = gnu::sh(
            dir.path(),
            &format!("printf 'a\\nb\\n' > f; timeout 10 {cmd}"),
        );
        assert_eq!(r.code, gnu_cat.code, "{cmd}: {}", r.stderr);
        assert_eq!(
            gnu::as_gnu(&r.stderr, "pipe").replace("pipe", "cat"),
            gnu_cat.stderr,
            "{cmd}"
        );
        assert_eq!(
            std::fs::read(dir.path().join("f")).unwrap(),
            b"a\nb\n",
            "{cmd}"
        );
    }
}

/// `ferry pipe /tmp d` and `ferry pipe - d <&-` refused their source,
/// but only after d had been opened with truncation: d was lost. Both
/// ends are checked before the destination is truncated.
#[test]
fn pipe_checks_both_ends_before_truncating() {
    let dir = tempfile::tempdir().unwrap();
    for (cmd, msg) in [
        (
            "$FERRY pipe . d",
            "ferry pipe: .: a directory is not a transfer endpoint\n",
        ),
        (
            "$FERRY pipe - d <&-",
            "ferry pipe: -: Bad file descriptor\n",
        ),
        (
            "$FERRY pipe d - >&-",
            "ferry pipe: -: Bad file descriptor\n",
        ),
    ] {
        let r = gnu::sh(dir.path(), &format!("echo keep > d; {cmd}"));
        assert_eq!((r.code, r.stderr.as_str()), (1, msg), "{cmd}");
        assert_eq!(
            std::fs::read(dir.path().join("d")).unwrap(),
            b"keep\n",
            "{cmd}"
        );
    }
}

/// `ferry pipe` named a file that is not UTF-8 with U+FFFD for each stray
/// byte, and could not take such a name as a Unix socket's path. Its
/// messages write the name's bytes; the same-file refusal quotes them as
/// GNU cp does.
#[test]
fn pipe_names_files_as_bytes() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let (dir, names) = gnu::non_utf8_names();
    let o = ferry("pipe")
        .args([names[4].clone(), OsString::from("-")])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        o.stderr,
        b"ferry pipe: no\xffne: No such file or directory\n"
    );
    let ours = ferry("pipe")
        .args([names[0].clone(), names[0].clone()])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let gnu = std::process::Command::new("cp")
        .args([names[0].clone(), names[0].clone()])
        .env("LC_ALL", "C")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(ours.status.code(), gnu.status.code());
    assert_eq!(
        ours.stderr[b"ferry pipe".len()..],
        gnu.stderr[b"cp".len()..]
    );
    // A socket path that is not UTF-8.
    let sock = dir.path().join(OsString::from_vec(b"s\xff".to_vec()));
    let l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let peer = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        got
    });
    let mut spec = b"unix:".to_vec();
    spec.extend_from_slice(b"s\xff");
    let o = ferry("pipe")
        .args([OsString::from("b"), OsString::from_vec(spec)])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(peer.join().unwrap(), b"y\n");
}
