//! A long-lived program on ferry's ipc (the `ipc_cgi` example).

use super::super::Site;
use super::pipelined;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The example program, built beside this test (`cargo test` builds the
/// package's examples).
fn program() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let p = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/ipc_cgi");
    assert!(
        p.exists(),
        "{} is not built (cargo build --examples)",
        p.display()
    );
    p
}

fn site(workers: usize, timeout: Duration) -> Site {
    Site::new(
        |d| std::fs::write(d.join("index.html"), "static").unwrap(),
        |c| {
            c.workers = workers;
            c.ipc_cgi = vec![ferry_serve::IpcCgi {
                prefix: "/app".into(),
                program: program(),
            }];
            c.gateway_timeout = timeout;
        },
    )
}

fn expected(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + (i % 26) as u8).collect()
}

#[test]
fn replies_come_whole_at_every_size_and_again_from_the_kept_buffers() {
    let s = site(2, Duration::from_secs(20));
    for n in [0usize, 1, 4095, 4096, 65_536, 65_537, 1 << 20, 3_000_001] {
        for round in 0..2 {
            let r = s.curl(&format!("/app/bytes/{n}"), &[]);
            assert_eq!(r.status, 200);
            assert_eq!(r.header("content-length"), Some(n.to_string().as_str()));
            assert!(r.body == expected(n), "{n} bytes, round {round}");
        }
    }
    let r = s.curl("/app/bytes/10", &["-I"]);
    assert_eq!((r.status, r.body.len()), (200, 0));
    assert_eq!(s.curl("/app/status/204", &[]).status, 204);
    assert_eq!(s.curl("/app/nothing", &[]).status, 404);
    assert_eq!(s.curl("/", &[]).body, b"static");
}

#[test]
fn the_program_gets_the_variables_and_the_body() {
    let s = site(1, Duration::from_secs(20));
    let body = super::super::pattern(200_000, 5);
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), &body).unwrap();
    let r = s.curl(
        "/app/echo/x?q=1",
        &["--data-binary", &format!("@{}", f.path().display())],
    );
    assert_eq!(r.status, 200);
    let at = r.body.windows(5).position(|w| w == b"body=").unwrap();
    let vars = String::from_utf8_lossy(&r.body[..at]).into_owned();
    assert!(vars.contains("REQUEST_METHOD=POST\n"), "{vars}");
    assert!(vars.contains("SCRIPT_NAME=/app\n"), "{vars}");
    assert!(vars.contains("PATH_INFO=/echo/x\n"), "{vars}");
    assert!(vars.contains("QUERY_STRING=q=1\n"), "{vars}");
    assert!(vars.contains("CONTENT_LENGTH=200000\n"), "{vars}");
    assert!(r.body[at + 5..] == body[..], "the body came back changed");
}

#[test]
fn pipelined_requests_keep_their_order() {
    let s = site(1, Duration::from_secs(20));
    let mut req = Vec::new();
    let sizes: Vec<usize> = (0..40).map(|i| (i * 7919) % 70_000).collect();
    for n in &sizes {
        req.extend_from_slice(format!("GET /app/bytes/{n} HTTP/1.1\r\nHost: h\r\n\r\n").as_bytes());
    }
    let got = pipelined(s.addr, &req, sizes.len());
    for (n, (status, body)) in sizes.iter().zip(got) {
        assert_eq!(status, 200);
        assert!(body == expected(*n), "{n}");
    }
}

#[test]
fn a_program_that_dies_costs_a_502_and_is_started_again() {
    let s = site(1, Duration::from_secs(20));
    assert_eq!(s.curl("/app/bytes/3", &[]).body, b"abc");
    assert_eq!(s.curl("/app/exit", &[]).status, 502);
    // Started again within about a second.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = s.curl("/app/bytes/3", &[]);
        if r.status == 200 {
            assert_eq!(r.body, b"abc");
            break;
        }
        assert_eq!(r.status, 502);
        assert!(
            Instant::now() < deadline,
            "the program was not started again"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_program_that_hangs_costs_a_504_and_is_replaced() {
    let s = site(1, Duration::from_secs(1));
    let start = Instant::now();
    assert_eq!(s.curl("/app/hang", &[]).status, 504);
    assert!(start.elapsed() < Duration::from_secs(10));
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.curl("/app/bytes/2", &[]).status != 200 {
        assert!(Instant::now() < deadline, "the program was not replaced");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_body_larger_than_the_channel_is_refused_alone() {
    let s = Site::new(
        |d| std::fs::write(d.join("index.html"), "static").unwrap(),
        |c| {
            c.workers = 1;
            c.body_max = 8 << 20;
            c.ipc_cgi = vec![ferry_serve::IpcCgi {
                prefix: "/app".into(),
                program: program(),
            }];
        },
    );
    assert_eq!(s.curl("/app/bytes/3", &[]).body, b"abc");
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), vec![b'x'; 5 << 20]).unwrap();
    let r = s.curl(
        "/app/echo",
        &["--data-binary", &format!("@{}", f.path().display())],
    );
    assert_eq!(r.status, 413);
    // The program lives on: the next request is answered at once.
    assert_eq!(s.curl("/app/bytes/3", &[]).body, b"abc");
}
