//! `ferry serve` as a user starts it: it says where it serves, answers a
//! real client, stops on SIGTERM with status 0, and refuses a busy port,
//! a missing directory and bad options with a message and a status.

use crate::gnu::ferry;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn serve_says_where_answers_curl_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), b"<p>served</p>").unwrap();
    let mut child = ferry("serve")
        .args(["--listen", "127.0.0.1:0", "--workers", "1"])
        .arg(dir.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let url = line
        .trim()
        .rsplit(' ')
        .next()
        .filter(|u| u.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("{line:?}"))
        .to_string();
    assert!(line.contains(&dir.path().display().to_string()), "{line}");
    let out = Command::new("curl")
        .args(["-s", "--max-time", "10", &url])
        .output()
        .unwrap();
    assert_eq!(out.stdout, b"<p>served</p>");
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut err, &mut rest);
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(0), "{rest}");
    assert!(rest.contains("stopping"), "{rest}");
}

#[test]
fn serve_refuses_a_busy_port_a_missing_directory_and_bad_options() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let o = ferry("serve")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, msg) = run(&["--listen", &addr, dir.path().to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(
        msg.starts_with("ferry serve: ") && msg.contains(&addr),
        "{msg}"
    );
    let missing = dir.path().join("missing");
    let (code, msg) = run(&["--listen", "127.0.0.1:0", missing.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(
        msg.contains("missing") && msg.contains("No such file"),
        "{msg}"
    );
    let (code, msg) = run(&["--workers", "0"]);
    assert_eq!(code, Some(2));
    assert!(msg.contains("invalid number of workers"), "{msg}");
    let (code, msg) = run(&["--bogus"]);
    assert_eq!(code, Some(2));
    assert!(msg.contains("bogus"), "{msg}");
    let (code, _) = run(&["a", "b"]);
    assert_eq!(code, Some(2));
    for (opt, v, what) in [
        ("--header-timeout", "0", "invalid time for --header-timeout"),
        ("--send-timeout", "5h", "invalid time for --send-timeout"),
        ("--max-connections", "0", "invalid number of connections"),
    ] {
        let (code, msg) = run(&[opt, v]);
        assert_eq!(code, Some(2), "{opt} {v}");
        assert!(msg.contains(what), "{msg}");
    }
    let (code, msg) = run(&["--tls-cert", "c.pem"]);
    assert_eq!(code, Some(2));
    assert!(msg.contains("--tls-cert needs --tls-key"), "{msg}");
    let not_pem = dir.path().join("c.pem");
    std::fs::write(&not_pem, "not PEM\n").unwrap();
    let p = not_pem.to_str().unwrap();
    let (code, msg) = run(&["--listen", "127.0.0.1:0", "--tls-cert", p, "--tls-key", p]);
    assert_eq!(code, Some(1));
    assert!(msg.starts_with("ferry serve: ") && msg.contains(p), "{msg}");
}

#[test]
fn serve_closes_a_silent_connection_after_the_header_timeout_it_was_given() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let (served, addr, _err) = start(dir.path(), &["--header-timeout".as_ref(), "500ms".as_ref()]);
    let mut c = std::net::TcpStream::connect(&addr).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let t = std::time::Instant::now();
    let mut got = Vec::new();
    c.read_to_end(&mut got).unwrap();
    assert!(got.is_empty());
    // The sweep runs each second: well under the 60 s default.
    assert!(
        t.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        t.elapsed()
    );
    drop(served);
}

/// A `ferry serve` process, killed if a test fails before it stops.
struct Served(std::process::Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `ferry serve` on a free port with one worker and `extra`
/// options: the process, its address, and its standard error (kept open:
/// the server writes to it when it stops).
fn start(
    dir: &std::path::Path,
    extra: &[&std::ffi::OsStr],
) -> (Served, String, BufReader<std::process::ChildStderr>) {
    let mut child = ferry("serve")
        .args(["--listen", "127.0.0.1:0", "--workers", "1"])
        .args(extra)
        .arg(dir)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .rsplit(' ')
        .next()
        .and_then(|u| u.strip_prefix("http://"))
        .unwrap_or_else(|| panic!("{line:?}"))
        .trim_end_matches('/')
        .to_string();
    (Served(child), addr, err)
}

#[test]
fn serve_out_of_descriptors_takes_the_waiting_connections_once_some_close() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let (mut served, addr, _err) = start(dir.path(), &[]);
    let pid = rustix::process::Pid::from_child(&served.0);
    // Leave the server three descriptors beyond those it holds now.
    let open = std::fs::read_dir(format!("/proc/{}/fd", served.0.id()))
        .unwrap()
        .count() as u64;
    let limit = rustix::process::Rlimit {
        current: Some(open + 3),
        maximum: Some(open + 3),
    };
    rustix::process::prlimit(Some(pid), rustix::process::Resource::Nofile, limit).unwrap();
    // Ten clients at once: most wait in the listen queue while accept
    // fails with EMFILE. Each asks for something answered without opening
    // a file (a broken escape: 400), then the server closes it.
    let clients: Vec<std::net::TcpStream> = (0..10)
        .map(|_| {
            let mut c = std::net::TcpStream::connect(&addr).unwrap();
            c.set_read_timeout(Some(std::time::Duration::from_secs(15)))
                .unwrap();
            c.write_all(b"GET /%zz HTTP/1.1\r\nHost: h\r\n\r\n")
                .unwrap();
            c
        })
        .collect();
    // Each client reads its answer and closes, which frees a descriptor.
    for (i, mut c) in clients.into_iter().enumerate() {
        let mut got = Vec::new();
        let r = c.read_to_end(&mut got);
        assert!(
            r.is_ok() && got.starts_with(b"HTTP/1.1 400 "),
            "client {i}: {r:?} {:?}",
            String::from_utf8_lossy(&got)
        );
    }
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    assert_eq!(served.0.wait().unwrap().code(), Some(0));
}

#[test]
fn serve_logs_each_response_and_reopens_its_log_on_sighup() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), b"hello").unwrap();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("access.log");
    let (served, addr, _err) = start(dir.path(), &["--access-log".as_ref(), log.as_os_str()]);
    let ask = |req: &str| {
        let mut c = std::net::TcpStream::connect(&addr).unwrap();
        c.write_all(req.as_bytes()).unwrap();
        let mut got = Vec::new();
        c.read_to_end(&mut got).unwrap();
        got
    };
    ask("GET /a.txt HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
    ask("GET /missing HTTP/1.0\r\n\r\n");
    // Lines are appended at the end of the worker's turn.
    let wait_for = |path: &std::path::Path, lines: usize| {
        for _ in 0..100 {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            if text.lines().count() >= lines {
                return text;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("{} has fewer than {lines} lines", path.display());
    };
    let text = wait_for(&log, 2);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("127.0.0.1 - - ["), "{text}");
    assert!(
        lines[0].ends_with("] \"GET /a.txt HTTP/1.1\" 200 5"),
        "{text}"
    );
    // The 404 has its small error page as its body.
    let (head, bytes) = lines[1].rsplit_once(' ').unwrap();
    assert!(head.ends_with("] \"GET /missing HTTP/1.0\" 404"), "{text}");
    assert!(bytes.parse::<u64>().unwrap() > 0, "{text}");
    // A rotator moves the log away and sends SIGHUP: new lines go to a
    // new file at the old path.
    let moved = logs.path().join("access.log.1");
    std::fs::rename(&log, &moved).unwrap();
    let pid = rustix::process::Pid::from_child(&served.0);
    rustix::process::kill_process(pid, rustix::process::Signal::HUP).unwrap();
    for _ in 0..100 {
        if log.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    ask("GET /a.txt?again HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
    let text = wait_for(&log, 1);
    assert!(
        text.contains("\"GET /a.txt?again HTTP/1.1\" 200 5"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&moved).unwrap().lines().count(), 2);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let mut served = served;
    assert_eq!(served.0.wait().unwrap().code(), Some(0));
}
