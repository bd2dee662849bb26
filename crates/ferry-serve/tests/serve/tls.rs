//! HTTPS (`Config::tls`): the same answers as over plain HTTP, checked by
//! curl trusting a certificate made here; clients that are not TLS
//! clients, or stop half-way through a handshake, cost only their own
//! connection.

use crate::{pattern, self_signed, Site};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

const SMALL: usize = 1000;
const MID: usize = 50_000;
const BIG: usize = 3_000_000;

fn site() -> Site {
    Site::new_tls(
        |d| {
            std::fs::write(d.join("small.txt"), pattern(SMALL, 1)).unwrap();
            std::fs::write(d.join("mid.bin"), pattern(MID, 2)).unwrap();
            std::fs::write(d.join("big.bin"), pattern(BIG, 3)).unwrap();
            std::fs::write(d.join("index.html"), b"<p>hello</p>\n").unwrap();
        },
        |_| {},
    )
}

#[test]
fn https_sends_every_file_whole_with_the_same_headers_as_http() {
    let s = site();
    for (name, len, seed) in [
        ("/small.txt", SMALL, 1),
        ("/mid.bin", MID, 2),
        ("/big.bin", BIG, 3),
    ] {
        let r = s.curl(name, &[]);
        assert_eq!(r.status, 200, "{name}");
        assert_eq!(r.body, pattern(len, seed), "{name}");
        assert_eq!(r.header("content-length"), Some(&*len.to_string()));
        let etag = r.header("etag").expect("an ETag").to_string();
        let h = s.curl(name, &["-I"]);
        assert_eq!(h.status, 200);
        assert!(h.body.is_empty());
        assert_eq!(h.header("etag"), Some(&*etag));
        let again = s.curl(name, &["-H", &format!("If-None-Match: {etag}")]);
        assert_eq!(again.status, 304, "{name}");
        assert!(again.body.is_empty());
    }
    assert_eq!(s.curl("/", &[]).body, b"<p>hello</p>\n");
}

#[test]
fn byte_ranges_over_https_are_the_file_s_bytes() {
    let s = site();
    let file = pattern(BIG, 3);
    let r = s.curl("/big.bin", &["-r", "1000-1999"]);
    assert_eq!(r.status, 206);
    assert_eq!(r.body, &file[1000..2000]);
    let r = s.curl("/big.bin", &["-r", "0-9,2999990-"]);
    assert_eq!(r.status, 206);
    let ct = r.header("content-type").unwrap();
    assert!(ct.starts_with("multipart/byteranges"), "{ct}");
    let body = String::from_utf8_lossy(&r.body);
    assert!(body.contains("Content-Range: bytes 0-9/3000000"), "{body}");
    assert!(body.contains("Content-Range: bytes 2999990-2999999/3000000"));
    let r = s.curl("/big.bin", &["-r", "3000000-"]);
    assert_eq!(r.status, 416);
}

#[test]
fn one_connection_carries_several_requests_over_https() {
    let s = site();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let out = Command::new("curl")
        .args(["-s", "--max-time", "20", "--cacert"])
        .arg(&s.tls.as_ref().unwrap().1)
        .args(["-w", "%{num_connects}\n"])
        .arg(s.url("/mid.bin"))
        .arg("-o")
        .arg(&a)
        .arg(s.url("/big.bin"))
        .arg("-o")
        .arg(&b)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read(&a).unwrap(), pattern(MID, 2));
    assert_eq!(std::fs::read(&b).unwrap(), pattern(BIG, 3));
    // One new connection for the first transfer, none for the second.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n0\n");
}

#[test]
fn a_slow_reader_over_https_gets_the_whole_file() {
    let s = site();
    let r = s.curl("/big.bin", &["--limit-rate", "3M"]);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, pattern(BIG, 3));
}

#[test]
fn plain_http_to_the_https_port_gets_400_and_a_close() {
    let s = site();
    let got = s.raw(b"GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 400 "), "{text}");
    assert!(text.contains("Connection: close"), "{text}");
}

#[test]
fn a_client_sending_garbage_for_a_handshake_is_closed_and_others_are_served() {
    let s = site();
    let start = Instant::now();
    // A handshake record header followed by nonsense.
    let got = s.raw(b"\x16\x03\x01\x00\x10not a client hello!!");
    assert!(start.elapsed() < Duration::from_secs(5));
    // At most the server's alert: no HTTP.
    assert!(!got.starts_with(b"HTTP"), "{got:?}");
    assert_eq!(s.curl("/small.txt", &[]).body, pattern(SMALL, 1));
}

#[test]
fn a_client_that_stops_mid_handshake_is_closed_after_the_header_timeout() {
    let s = Site::new_tls(
        |d| std::fs::write(d.join("a"), b"a").unwrap(),
        |c| c.header_timeout = Duration::from_secs(1),
    );
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // The first bytes of a handshake record, and no more.
    c.write_all(b"\x16\x03\x01").unwrap();
    let start = Instant::now();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(900), "{took:?}");
    assert!(took < Duration::from_secs(8), "{took:?}");
    assert_eq!(s.curl("/a", &[]).body, b"a");
}

#[test]
fn a_certificate_and_key_that_do_not_belong_together_stop_the_start_naming_the_key() {
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (cert, _) = self_signed(one.path());
    let (_, key) = self_signed(two.path());
    let www = tempfile::tempdir().unwrap();
    let mut cfg = ferry_serve::Config::new(www.path());
    cfg.listen = vec!["127.0.0.1:0".parse().unwrap()];
    cfg.tls = Some(ferry_serve::TlsFiles {
        cert,
        key: key.clone(),
    });
    let e = match ferry_serve::Server::start(cfg) {
        Ok(s) => {
            s.shutdown();
            panic!("a server started with a key of another certificate")
        }
        Err(e) => e,
    };
    assert!(e.to_string().contains(&*key.to_string_lossy()), "{e}");
}
