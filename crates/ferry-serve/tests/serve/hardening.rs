//! Requests that try to leave the served directory, malformed or
//! oversized heads, methods the server does not serve.

use crate::{Reply, Site};
use std::fs;
use std::os::unix::fs::symlink;

fn site(follow: bool) -> Site {
    Site::new(
        |d| {
            fs::write(d.join("in.txt"), b"inside").unwrap();
            symlink("/etc/passwd", d.join("out-link")).unwrap();
            symlink("in.txt", d.join("in-link")).unwrap();
            fs::create_dir(d.join("sub")).unwrap();
            symlink("/etc", d.join("sub/etc")).unwrap();
        },
        |c| c.follow_symlinks = follow,
    )
}

#[test]
fn no_target_reaches_above_the_root() {
    let s = site(false);
    for t in [
        "/../etc/passwd",
        "/%2e%2e/etc/passwd",
        "/sub/../../etc/passwd",
        "/..%2f..%2fetc%2fpasswd",
        "/%2E%2E%2F%2E%2E/etc/passwd",
    ] {
        let r = s.curl(t, &[]);
        assert_eq!(r.status, 400, "{t}");
        assert!(!String::from_utf8_lossy(&r.body).contains("root:"), "{t}");
    }
    assert_eq!(s.curl("/in%00.txt", &[]).status, 400);
    assert_eq!(s.curl("/sub/../in.txt", &[]).body, b"inside");
    assert_eq!(s.curl("/./in.txt", &[]).body, b"inside");
}

#[test]
fn links_out_of_the_root_are_refused_unless_followed() {
    let s = site(false);
    assert_eq!(s.curl("/out-link", &[]).status, 403);
    assert_eq!(s.curl("/sub/etc/passwd", &[]).status, 403);
    assert_eq!(s.curl("/in-link", &[]).body, b"inside");
    let f = site(true);
    let r = f.curl("/out-link", &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, fs::read("/etc/passwd").unwrap());
}

#[test]
fn unreadable_and_missing_files_are_403_and_404() {
    let s = site(false);
    assert_eq!(s.curl("/missing", &[]).status, 404);
    assert_eq!(s.curl("/in.txt/x", &[]).status, 404);
    let p = s.dir.path().join("locked.txt");
    fs::write(&p, b"x").unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&p, fs::Permissions::from_mode(0o000)).unwrap();
    // root reads any file: only an unprivileged run sees the 403.
    let want = if rustix::process::geteuid().is_root() {
        200
    } else {
        403
    };
    assert_eq!(s.curl("/locked.txt", &[]).status, want);
}

#[test]
fn other_methods_are_405_with_allow() {
    let s = site(false);
    for m in ["POST", "PUT", "DELETE", "OPTIONS", "BREW"] {
        let r = s.curl("/in.txt", &["-X", m]);
        assert_eq!(r.status, 405, "{m}");
        assert_eq!(r.header("allow"), Some("GET, HEAD"), "{m}");
    }
}

#[test]
fn malformed_and_oversized_heads_get_an_error_and_a_close() {
    let s = site(false);
    let cases: [(&[u8], u16); 5] = [
        (b"GET / HTTP/1.1\r\n\r\n", 400),
        (b"GARBAGE\r\n\r\n", 400),
        (b"GET /in.txt HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        (
            b"GET /in.txt HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n",
            400,
        ),
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400),
    ];
    for (req, want) in cases {
        let got = s.raw(req);
        let r = Reply::parse(&got);
        assert_eq!(r.status, want, "{:?}", String::from_utf8_lossy(req));
        assert_eq!(r.header("connection"), Some("close"));
    }
    let long_line = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(9000));
    assert_eq!(Reply::parse(&s.raw(long_line.as_bytes())).status, 414);
    let long_head = format!(
        "GET / HTTP/1.1\r\nHost: a\r\nX: {}\r\n\r\n",
        "a".repeat(9000)
    );
    assert_eq!(Reply::parse(&s.raw(long_head.as_bytes())).status, 431);
    // Past 32 KiB in all, though no line is longer than 8 KiB: 431.
    let many_lines: String = (0..8)
        .map(|i| format!("X{i}: {}\r\n", "b".repeat(5000)))
        .collect();
    let huge = format!("GET /in.txt HTTP/1.1\r\nHost: a\r\n{many_lines}\r\n");
    assert_eq!(Reply::parse(&s.raw(huge.as_bytes())).status, 431);
}

#[test]
fn heads_within_nginx_s_limits_are_served_however_they_come() {
    // nginx's large_client_header_buffers 4 8k: lines of up to 8 KiB, a
    // head of several of them, and any number of short lines.
    let s = site(false);
    let big_cookies: String = (0..3)
        .map(|i| format!("Cookie-{i}: {}\r\n", "c".repeat(3000)))
        .collect();
    let many: String = (0..1000).map(|i| format!("X-{i}: y\r\n")).collect();
    let line_8k = format!("X: {}\r\n", "d".repeat(8000));
    for extra in [big_cookies, many, line_8k.repeat(3)] {
        let head = format!("GET /in.txt HTTP/1.1\r\nHost: a\r\n{extra}Connection: close\r\n\r\n");
        assert!(head.len() > 8 << 10);
        // All at once, and dripped in pieces smaller than a buffer.
        let r = Reply::parse(&s.raw(head.as_bytes()));
        assert_eq!(r.status, 200, "{} bytes", head.len());
        let mut c = std::net::TcpStream::connect(s.addr).unwrap();
        c.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        for piece in head.as_bytes().chunks(3000) {
            std::io::Write::write_all(&mut c, piece).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let mut got = Vec::new();
        std::io::Read::read_to_end(&mut c, &mut got).unwrap();
        assert_eq!(Reply::parse(&got).status, 200);
    }
    // Two long heads pipelined on one connection: both answered.
    let one = format!("GET /in.txt HTTP/1.1\r\nHost: a\r\n{line_8k}\r\n");
    let two = format!(
        "{one}{}",
        one.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n")
    );
    let got = s.raw(two.as_bytes());
    assert_eq!(
        String::from_utf8_lossy(&got)
            .matches("HTTP/1.1 200")
            .count(),
        2
    );
}

#[test]
fn a_directory_redirect_never_leads_to_another_site() {
    let s = site(false);
    for (target, want) in [
        ("//evil.example/../sub", "/sub/"),
        ("/%2F%2Fevil.example/../sub", "/sub/"),
        ("/sub?x=1", "/sub/?x=1"),
        ("http://evil.example/sub", "/sub/"),
        ("/./sub", "/sub/"),
        ("/sub?\u{e9}=1", "/sub/?%C3%A9=1"),
    ] {
        let req = format!("GET {target} HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
        let r = Reply::parse(&s.raw(req.as_bytes()));
        assert_eq!(r.status, 301, "{target}");
        assert_eq!(r.header("location"), Some(want), "{target}");
    }
}

#[test]
fn a_listing_gives_no_name_a_scheme_and_keeps_names_that_are_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let s = Site::new(
        |d| {
            fs::create_dir(d.join("l")).unwrap();
            fs::write(d.join("l/javascript:alert(1)"), b"js").unwrap();
            let raw = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
            fs::write(d.join("l").join(raw), b"latin1").unwrap();
        },
        |c| c.list = true,
    );
    let page = String::from_utf8(s.curl("/l/", &[]).body).unwrap();
    assert!(!page.contains("href=\"javascript:"), "{page}");
    assert!(
        page.contains("href=\"javascript%3Aalert%281%29\""),
        "{page}"
    );
    assert!(page.contains("href=\"caf%E9.txt\""), "{page}");
    // Each href leads to its file.
    assert_eq!(s.curl("/l/javascript%3Aalert%281%29", &[]).body, b"js");
    assert_eq!(s.curl("/l/caf%E9.txt", &[]).body, b"latin1");
}

#[test]
fn framing_headers_that_could_smuggle_a_request_are_refused() {
    let s = site(false);
    let h = "GET /in.txt HTTP/1.1\r\nHost: a\r\n";
    let cases: [(&str, u16); 9] = [
        ("Content-Length: 0\r\nContent-Length: 0\r\n", 400),
        ("Content-Length: 1\r\nContent-Length: 2\r\n", 400),
        ("Content-Length: +0\r\n", 400),
        ("Content-Length: -1\r\n", 400),
        ("Content-Length: 1, 1\r\n", 400),
        ("Content-Length: 1\r\nTransfer-Encoding: chunked\r\n", 400),
        ("Transfer-Encoding: gzip\r\n", 501),
        ("Transfer-Encoding: chunked, gzip\r\n", 501),
        (
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
            501,
        ),
    ];
    for (extra, want) in cases {
        let req = format!("{h}{extra}\r\n");
        let r = Reply::parse(&s.raw(req.as_bytes()));
        assert_eq!(r.status, want, "{extra:?}");
        assert_eq!(r.header("connection"), Some("close"), "{extra:?}");
    }
    let r = Reply::parse(
        &s.raw(b"GET /in.txt HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    );
    assert_eq!(r.status, 400);
}

#[test]
fn versions_escapes_schemes_and_hosts_as_nginx_takes_them() {
    let s = site(false);
    let ask = |req: &[u8]| Reply::parse(&s.raw(req));
    // A later 1.x is served as 1.1; a later major version is 505.
    let r = ask(b"GET /in.txt HTTP/1.2\r\nHost: a\r\nConnection: close\r\n\r\n");
    assert_eq!((r.status, r.body.as_slice()), (200, &b"inside"[..]));
    assert_eq!(ask(b"GET /in.txt HTTP/2.0\r\nHost: a\r\n\r\n").status, 505);
    assert_eq!(ask(b"GET /in.txt HTTP/1.1x\r\nHost: a\r\n\r\n").status, 400);
    // Broken escapes are 400.
    assert_eq!(
        ask(b"GET /in%zz.txt HTTP/1.1\r\nHost: a\r\n\r\n").status,
        400
    );
    assert_eq!(ask(b"GET /in.txt% HTTP/1.1\r\nHost: a\r\n\r\n").status, 400);
    // The scheme of an absolute target is case-insensitive.
    let r = ask(b"GET HTTP://a/in.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    assert_eq!(r.body, b"inside");
    // A Host of bytes that are not UTF-8 is no reason to refuse.
    let r = ask(b"GET /in.txt HTTP/1.1\r\nHost: \xe9t\xe9\r\nConnection: close\r\n\r\n");
    assert_eq!(r.status, 200);
}

#[test]
fn the_type_follows_the_file_served_and_only_regular_files_are_served() {
    let s = Site::new(
        |d| {
            fs::write(d.join("page.html"), b"<p>").unwrap();
            rustix::fs::mknodat(
                rustix::fs::CWD,
                d.join("fifo"),
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .unwrap();
        },
        |_| {},
    );
    let r = s.curl("/page%2ehtml", &[]);
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    let r = s.curl("/page.html?x=.png", &[]);
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(s.curl("/fifo", &[]).status, 404);
    // An If-Modified-Since later than the server's clock is ignored.
    let r = s.curl(
        "/page.html",
        &["-H", "If-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT"],
    );
    assert_eq!(r.status, 200);
}

#[test]
fn links_that_lead_back_into_the_root_are_followed() {
    let s = Site::new(
        |d| {
            fs::write(d.join("in.txt"), b"inside").unwrap();
            let name = d.file_name().unwrap().to_str().unwrap().to_string();
            // Absolute, into the root; relative, out and back in.
            symlink(d.join("in.txt"), d.join("abs-in")).unwrap();
            symlink(format!("../{name}/in.txt"), d.join("back-in")).unwrap();
            symlink("/etc/hostname", d.join("abs-out")).unwrap();
            symlink("/dev/zero", d.join("dev-out")).unwrap();
        },
        |_| {},
    );
    assert_eq!(s.curl("/abs-in", &[]).body, b"inside");
    assert_eq!(s.curl("/back-in", &[]).body, b"inside");
    assert_eq!(s.curl("/abs-out", &[]).status, 403);
    assert_eq!(s.curl("/dev-out", &[]).status, 403);
}
