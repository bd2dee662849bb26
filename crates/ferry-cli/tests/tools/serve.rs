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
}
