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
}
