//! CGI/1.1 (RFC 3875): shell scripts below `/cgi-bin`.

use super::super::{pattern, Site};
use super::pipelined;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

fn script(dir: &Path, name: &str, body: &str) {
    let p = dir.join("cgi-bin").join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn site(timeout: Duration) -> Site {
    Site::new(
        |d| {
            script(
                d,
                "env.cgi",
                "printf 'Content-Type: text/plain\\r\\n\\r\\n'\nenv\n",
            );
            script(
                d,
                "echo.cgi",
                "printf 'Content-Type: application/octet-stream\\n\\n'\nexec cat\n",
            );
            script(
                d,
                "status.cgi",
                "printf 'Status: 418 Short And Stout\\nX-Extra: yes\\n\\nteapot'\n",
            );
            script(
                d,
                "redirect.cgi",
                "printf 'Location: http://example.org/elsewhere\\n\\n'\n",
            );
            script(
                d,
                "crash.cgi",
                "printf 'Content-Type: text/plain\\n\\npart'\nkill -9 $$\n",
            );
            script(
                d,
                "garbage.cgi",
                "printf 'this is not a CGI response at all'\n",
            );
            script(
                d,
                "hang.cgi",
                "sleep 60 &\necho $! > \"$DOCUMENT_ROOT/sleep.pid\"\nwait\n",
            );
            script(d, "quiet.cgi", "exit 0\n");
            script(
                d,
                "trickle.cgi",
                "printf 'Content-Type: text/plain\\n\\n'\nwhile :; do printf x; sleep 0.2; done\n",
            );
            script(
                d,
                "closeout.cgi",
                "printf 'Content-Type: text/plain\\n\\nsaid'\nexec >&-\nsleep 30\n",
            );
            script(
                d,
                "sub/deep.cgi",
                "printf 'Content-Type: text/plain\\n\\ndeep'\n",
            );
            std::fs::write(d.join("cgi-bin/plain.txt"), "not a program").unwrap();
            std::fs::write(d.join("index.html"), "static").unwrap();
        },
        |c| {
            c.cgi = vec!["/cgi-bin".into()];
            c.list = true;
            c.gateway_timeout = timeout;
            c.body_max = 4 << 20;
        },
    )
}

fn var<'a>(body: &'a str, name: &str) -> Option<&'a str> {
    body.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
}

#[test]
fn a_script_gets_the_rfc_3875_variables() {
    let s = site(Duration::from_secs(20));
    let r = s.curl(
        "/cgi-bin/env.cgi/extra/path?a=1&b=%20",
        &["-H", "X-Custom: yes", "-H", "Proxy: http://evil/"],
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/plain"));
    let body = String::from_utf8(r.body).unwrap();
    let root = std::fs::canonicalize(s.dir.path()).unwrap();
    assert_eq!(var(&body, "GATEWAY_INTERFACE"), Some("CGI/1.1"));
    assert_eq!(var(&body, "REQUEST_METHOD"), Some("GET"));
    assert_eq!(var(&body, "SCRIPT_NAME"), Some("/cgi-bin/env.cgi"));
    assert_eq!(var(&body, "PATH_INFO"), Some("/extra/path"));
    assert_eq!(var(&body, "QUERY_STRING"), Some("a=1&b=%20"));
    assert_eq!(var(&body, "SERVER_PROTOCOL"), Some("HTTP/1.1"));
    assert_eq!(
        var(&body, "SERVER_PORT"),
        Some(s.addr.port().to_string().as_str())
    );
    assert_eq!(var(&body, "REMOTE_ADDR"), Some("127.0.0.1"));
    assert_eq!(var(&body, "HTTP_X_CUSTOM"), Some("yes"));
    assert_eq!(var(&body, "HTTP_PROXY"), None, "httpoxy");
    assert_eq!(
        var(&body, "SCRIPT_FILENAME").map(Path::new),
        Some(root.join("cgi-bin/env.cgi").as_path())
    );
    // The script runs in its directory, with nothing of the server's
    // environment but a PATH.
    assert_eq!(
        var(&body, "PWD").map(Path::new),
        Some(root.join("cgi-bin").as_path())
    );
    assert_eq!(var(&body, "HOME"), None);
    // In a subdirectory too.
    assert_eq!(s.curl("/cgi-bin/sub/deep.cgi", &[]).body, b"deep");
}

#[test]
fn a_post_body_reaches_the_script_whole() {
    let s = site(Duration::from_secs(20));
    for len in [1usize, 1000, 100_000, 3 << 20] {
        let body = pattern(len, 3);
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), &body).unwrap();
        let arg = format!("@{}", f.path().display());
        // curl asks `Expect: 100-continue` for the larger bodies.
        let r = s.curl("/cgi-bin/echo.cgi", &["--data-binary", &arg]);
        assert_eq!(r.status, 200, "{len}");
        assert!(r.body == body, "{len} bytes came back changed");
    }
}

#[test]
fn status_location_and_head_are_as_the_script_says() {
    let s = site(Duration::from_secs(20));
    let r = s.curl("/cgi-bin/status.cgi", &[]);
    assert_eq!(r.status, 418);
    assert_eq!(r.header("x-extra"), Some("yes"));
    assert_eq!(r.header("status"), None);
    assert_eq!(r.body, b"teapot");
    let r = s.curl("/cgi-bin/redirect.cgi", &[]);
    assert_eq!(r.status, 302);
    assert_eq!(r.header("location"), Some("http://example.org/elsewhere"));
    let r = s.curl("/cgi-bin/status.cgi", &["-I"]);
    assert_eq!(r.status, 418);
    assert_eq!(r.header("content-length"), Some("6"));
    assert!(r.body.is_empty());
}

#[test]
fn what_cannot_run_is_refused_with_the_status_that_says_why() {
    let s = site(Duration::from_secs(20));
    assert_eq!(s.curl("/cgi-bin/none.cgi", &[]).status, 404);
    assert_eq!(
        s.curl("/cgi-bin/plain.txt", &[]).status,
        403,
        "not executable"
    );
    assert_eq!(s.curl("/cgi-bin/sub/", &[]).status, 403, "a directory");
    // Any method reaches a program (a REST API's PUT, DELETE, OPTIONS)
    // but TRACE and CONNECT.
    for m in ["PUT", "DELETE", "PATCH", "OPTIONS", "PROPFIND"] {
        let r = s.curl("/cgi-bin/env.cgi", &["-X", m, "-d", "x"]);
        assert_eq!(r.status, 200, "{m}");
        let body = String::from_utf8(r.body).unwrap();
        assert_eq!(var(&body, "REQUEST_METHOD"), Some(m));
        assert_eq!(var(&body, "CONTENT_LENGTH"), Some("1"));
    }
    let r = s.curl("/cgi-bin/env.cgi", &["-X", "TRACE"]);
    assert_eq!(r.status, 405);
    // Empty lines before the request line do not hide it.
    for m in ["TRACE", "CONNECT"] {
        let raw =
            s.raw(format!("\r\n\r\n{m} /cgi-bin/env.cgi HTTP/1.1\r\nHost: h\r\n\r\n").as_bytes());
        let text = String::from_utf8_lossy(&raw);
        assert!(text.starts_with("HTTP/1.1 405"), "{m}: {text}");
    }
    assert!(r.header("allow").is_some_and(|a| a.contains("PUT")));
    // A body sent chunked reaches the script decoded, with its length.
    let r = s.curl(
        "/cgi-bin/echo.cgi",
        &["-H", "Transfer-Encoding: chunked", "-d", "chunked body"],
    );
    assert_eq!((r.status, r.body.as_slice()), (200, &b"chunked body"[..]));
    // Chunks that are not chunks: 400, and the connection ends.
    let raw = s.raw(
        b"POST /cgi-bin/echo.cgi HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
    );
    let text = String::from_utf8_lossy(&raw);
    assert!(text.starts_with("HTTP/1.1 400"), "{text}");
    assert_eq!(text.matches("HTTP/1.1").count(), 1);
    // Past the body limit.
    let big = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(big.path(), vec![b'x'; 5 << 20]).unwrap();
    let arg = format!("@{}", big.path().display());
    assert_eq!(
        s.curl("/cgi-bin/echo.cgi", &["--data-binary", &arg]).status,
        413
    );
    // The rest of the site is still files.
    assert_eq!(s.curl("/", &[]).body, b"static");
}

#[test]
fn a_script_that_crashes_or_writes_garbage_costs_its_request_a_502() {
    let s = site(Duration::from_secs(20));
    assert_eq!(s.curl("/cgi-bin/crash.cgi", &[]).status, 502);
    assert_eq!(s.curl("/cgi-bin/garbage.cgi", &[]).status, 502);
    assert_eq!(
        s.curl("/cgi-bin/quiet.cgi", &[]).status,
        502,
        "no output at all"
    );
    // The connection goes on after a 502: a keep-alive pair.
    let req = "GET /cgi-bin/garbage.cgi HTTP/1.1\r\nHost: h\r\n\r\nGET /cgi-bin/status.cgi HTTP/1.1\r\nHost: h\r\n\r\n";
    let got = pipelined(s.addr, req.as_bytes(), 2);
    assert_eq!(got[0].0, 502);
    assert_eq!(got[1], (418, b"teapot".to_vec()));
}

#[test]
fn a_script_that_hangs_gets_a_504_and_is_killed_with_its_children() {
    let s = site(Duration::from_secs(1));
    let start = Instant::now();
    assert_eq!(s.curl("/cgi-bin/hang.cgi", &[]).status, 504);
    assert!(start.elapsed() < Duration::from_secs(15));
    // Its `sleep 60` went with it (its process group was killed): gone,
    // or a zombie waiting for whoever adopted it.
    let pid = std::fs::read_to_string(s.dir.path().join("sleep.pid")).unwrap();
    super::assert_ends(&pid, "the script's child");
    assert_eq!(s.curl("/cgi-bin/status.cgi", &[]).status, 418);
}

#[test]
fn pipelined_requests_to_scripts_and_files_are_answered_in_order() {
    let s = site(Duration::from_secs(20));
    let mut req = Vec::new();
    for i in 0..12 {
        if i % 3 == 0 {
            req.extend_from_slice(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n");
        } else if i % 3 == 1 {
            req.extend_from_slice(
                b"POST /cgi-bin/echo.cgi HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n",
            );
            req.extend_from_slice(format!("{i:03}").as_bytes());
        } else {
            req.extend_from_slice(b"GET /cgi-bin/status.cgi HTTP/1.1\r\nHost: h\r\n\r\n");
        }
    }
    let got = pipelined(s.addr, &req, 12);
    for (i, (status, body)) in got.into_iter().enumerate() {
        match i % 3 {
            0 => assert_eq!((status, body), (200, b"static".to_vec())),
            1 => assert_eq!((status, body), (200, format!("{i:03}").into_bytes())),
            _ => assert_eq!((status, body), (418, b"teapot".to_vec())),
        }
    }
}

#[test]
fn a_script_that_trickles_for_ever_is_cut_off_with_a_504() {
    let s = site(Duration::from_secs(1));
    let start = Instant::now();
    // It sends a byte every 0.2 s: never silent for the timeout, but the
    // whole exchange has a deadline of four timeouts.
    assert_eq!(s.curl("/cgi-bin/trickle.cgi", &[]).status, 504);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(s.curl("/cgi-bin/status.cgi", &[]).status, 418);
}

#[test]
fn a_script_that_closes_its_output_is_answered_at_once() {
    let s = site(Duration::from_secs(20));
    let start = Instant::now();
    let r = s.curl("/cgi-bin/closeout.cgi", &[]);
    assert_eq!((r.status, r.body.as_slice()), (200, &b"said"[..]));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn the_directory_of_programs_is_never_listed() {
    let s = site(Duration::from_secs(20));
    assert_eq!(s.curl("/cgi-bin/", &[]).status, 403);
    assert_eq!(s.curl("/cgi-bin", &[]).status, 403);
}

#[test]
fn no_script_outlives_the_server() {
    let mut s = Site::new(
        |d| {
            script(
                d,
                "hang.cgi",
                "sleep 60 &\necho $! > \"$DOCUMENT_ROOT/sleep.pid\"\nwait\n",
            )
        },
        |c| {
            c.cgi = vec!["/cgi-bin".into()];
            c.gateway_timeout = Duration::from_secs(60);
            c.shutdown_timeout = Duration::from_secs(1);
        },
    );
    let url = s.url("/cgi-bin/hang.cgi");
    let client = std::thread::spawn(move || {
        std::process::Command::new("curl")
            .args(["-s", "--max-time", "30", &url])
            .output()
            .unwrap()
    });
    let pidfile = s.dir.path().join("sleep.pid");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&pidfile).map_or(true, |p| p.trim().is_empty()) {
        assert!(Instant::now() < deadline, "the script did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    s.server.take().unwrap().shutdown();
    super::assert_ends(&pid, "the script's child, after the server stopped");
    let _ = client.join();
}
