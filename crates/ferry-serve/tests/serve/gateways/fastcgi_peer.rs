//! FastCGI to an application server made here, on a Unix socket, that
//! misbehaves on purpose: output in one-byte records sent slowly, a
//! connection ended half-way, silence after a first record, a client
//! that leaves while its request is under way, and many requests at once.
//! The server's worker runs the exchanges in its own loop: while one
//! waits, the worker goes on serving files.

use super::super::Site;
use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const STDOUT: u8 = 6;
const END_REQUEST: u8 = 3;

/// A record: header, content, padding to 8.
fn record(kind: u8, content: &[u8]) -> Vec<u8> {
    let pad = (8 - content.len() % 8) % 8;
    let mut out = vec![1, kind, 0, 1];
    out.extend_from_slice(&(content.len() as u16).to_be_bytes());
    out.extend_from_slice(&[pad as u8, 0]);
    out.extend_from_slice(content);
    out.resize(out.len() + pad, 0);
    out
}

fn end_request() -> Vec<u8> {
    record(END_REQUEST, &[0; 8])
}

/// Reads one request's records up to the empty STDIN record; the
/// PARAMS' bytes (raw name-value pairs).
fn read_request(s: &mut UnixStream) -> std::io::Result<Vec<u8>> {
    let mut params = Vec::new();
    loop {
        let mut h = [0u8; 8];
        s.read_exact(&mut h)?;
        let len = u16::from_be_bytes([h[4], h[5]]) as usize;
        let mut body = vec![0u8; len + h[6] as usize];
        s.read_exact(&mut body)?;
        if h[1] == 4 {
            params.extend_from_slice(&body[..len]);
        }
        if h[1] == 5 && len == 0 {
            return Ok(params);
        }
    }
}

/// The value of `name` among raw FastCGI name-value pairs.
fn param(mut p: &[u8], name: &str) -> Option<Vec<u8>> {
    let len = |p: &mut &[u8]| -> usize {
        if p[0] < 128 {
            let n = p[0] as usize;
            *p = &p[1..];
            n
        } else {
            let n = u32::from_be_bytes([p[0] & 0x7f, p[1], p[2], p[3]]) as usize;
            *p = &p[4..];
            n
        }
    };
    while !p.is_empty() {
        let (k, v) = (len(&mut p), len(&mut p));
        let (key, rest) = p.split_at(k);
        let (val, rest) = rest.split_at(v);
        if key == name.as_bytes() {
            return Some(val.to_vec());
        }
        p = rest;
    }
    None
}

/// An application server on `path`: each connection is handed to
/// `answer` (on a thread of its own) with its request's query string.
fn peer(
    path: &Path,
    answer: impl Fn(UnixStream, String) + Send + Sync + 'static,
) -> std::thread::JoinHandle<()> {
    let l = UnixListener::bind(path).unwrap();
    let answer = std::sync::Arc::new(answer);
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let answer = answer.clone();
            std::thread::spawn(move || {
                let Ok(params) = read_request(&mut s) else {
                    return;
                };
                let q = param(&params, "QUERY_STRING").unwrap_or_default();
                answer(s, String::from_utf8(q).unwrap());
            });
        }
    })
}

fn site(sock: PathBuf, timeout: Duration) -> Site {
    Site::new(
        |d| {
            std::fs::write(d.join("x.php"), "").unwrap();
            std::fs::write(d.join("file.txt"), "a file").unwrap();
        },
        move |c| {
            c.fastcgi = vec![ferry_serve::FastCgi {
                ext: ".php".into(),
                addr: ferry_serve::GatewayAddr::Unix(sock),
            }];
            c.gateway_timeout = timeout;
            c.workers = 1;
        },
    )
}

#[test]
fn output_in_one_byte_records_sent_slowly_comes_whole_while_files_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("peer.sock");
    let body: Vec<u8> = (0..300u32).map(|i| b'a' + (i % 26) as u8).collect();
    let sent = body.clone();
    let _p = peer(&sock, move |mut s, _| {
        let mut wire = record(STDOUT, b"Content-Type: text/plain\r\n\r\n");
        for b in &sent {
            wire.extend(record(STDOUT, &[*b]));
        }
        wire.extend(record(STDOUT, b""));
        wire.extend(end_request());
        // Over about 1.5 s, a few bytes at a time (records cut anywhere).
        for piece in wire.chunks(13) {
            if s.write_all(piece).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(6));
        }
    });
    let s = site(sock, Duration::from_secs(10));
    let url = s.url("/x.php");
    let slow = std::thread::spawn(move || {
        let out = std::process::Command::new("curl")
            .args(["-s", "-i", &url])
            .output()
            .unwrap();
        crate::Reply::parse(&out.stdout)
    });
    // Meanwhile, the one worker answers file requests at once.
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..5 {
        let t = Instant::now();
        assert_eq!(s.curl("/file.txt", &[]).body, b"a file");
        assert!(
            t.elapsed() < Duration::from_millis(700),
            "a file waited {:?} behind the FastCGI exchange",
            t.elapsed()
        );
    }
    let r = slow.join().unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.body, body);
}

#[test]
fn a_connection_ended_half_way_is_a_502_and_silence_a_504() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("peer.sock");
    let _p = peer(&sock, |mut s, q| {
        let _ = s.write_all(&record(STDOUT, b"Content-Type: text/plain\r\n\r\nhalf"));
        if q == "silent" {
            // Holds the connection, says nothing more.
            std::thread::sleep(Duration::from_secs(8));
        }
        // Else the connection ends here, without END_REQUEST.
    });
    let s = site(sock, Duration::from_secs(1));
    assert_eq!(s.curl("/x.php?cut", &[]).status, 502);
    let t = Instant::now();
    assert_eq!(s.curl("/x.php?silent", &[]).status, 504);
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "a 504 took {:?}",
        t.elapsed()
    );
    assert_eq!(s.curl("/file.txt", &[]).body, b"a file");
}

#[test]
fn a_client_that_leaves_ends_its_exchange_with_the_application_server() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("peer.sock");
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let _p = peer(&sock, move |mut s, _| {
        // Says nothing, waits for the server to close its side.
        let t = Instant::now();
        let mut b = [0u8; 16];
        let closed = matches!(s.read(&mut b), Ok(0) | Err(_));
        let _ = tx.lock().unwrap().send((closed, t.elapsed()));
    });
    let s = site(sock, Duration::from_secs(30));
    let mut c = std::net::TcpStream::connect(s.addr).unwrap();
    c.write_all(b"GET /x.php HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    drop(c);
    let (closed, after) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(closed);
    assert!(
        after < Duration::from_secs(5),
        "the exchange outlived its client by {after:?}"
    );
}

#[test]
fn many_requests_at_once_each_get_their_own_answer() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("peer.sock");
    let _p = peer(&sock, |mut s, q| {
        std::thread::sleep(Duration::from_millis(100));
        let n: usize = q.parse().unwrap();
        let body = q.repeat(n * 500);
        let mut wire = Vec::new();
        wire.extend(record(STDOUT, b"Content-Type: text/plain\r\n\r\n"));
        for piece in body.as_bytes().chunks(0xffff) {
            wire.extend(record(STDOUT, piece));
        }
        wire.extend(record(STDOUT, b""));
        wire.extend(end_request());
        let _ = s.write_all(&wire);
    });
    let s = std::sync::Arc::new(site(sock, Duration::from_secs(20)));
    let t = Instant::now();
    let clients: Vec<_> = (1..=40usize)
        .map(|n| {
            let s = s.clone();
            std::thread::spawn(move || {
                let r = s.curl(&format!("/x.php?{n}"), &[]);
                assert_eq!(r.status, 200);
                assert_eq!(
                    r.body,
                    n.to_string().repeat(n * 500).into_bytes(),
                    "request {n}"
                );
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    // 40 answers of 100 ms each, not one after another.
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
}

#[test]
fn an_answer_before_the_body_was_read_is_sent_though_the_peer_closed() {
    // The application server answers after the PARAMS, reads none of a
    // large body, and closes: its answer stands.
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("peer.sock");
    let l = UnixListener::bind(&sock).unwrap();
    let _p = std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            // Records up to the PARAMS' end, not the body's.
            loop {
                let mut h = [0u8; 8];
                if s.read_exact(&mut h).is_err() {
                    break;
                }
                let len = u16::from_be_bytes([h[4], h[5]]) as usize;
                let mut b = vec![0u8; len + h[6] as usize];
                if s.read_exact(&mut b).is_err() || (h[1] == 4 && len == 0) {
                    break;
                }
            }
            let mut wire = record(STDOUT, b"Content-Type: text/plain\r\n\r\nearly answer");
            wire.extend(record(STDOUT, b""));
            wire.extend(end_request());
            let _ = s.write_all(&wire);
            // Closed with the body unread.
        }
    });
    let s = site(sock, Duration::from_secs(10));
    let body = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(body.path(), vec![b'b'; 900_000]).unwrap();
    let r = s.curl(
        "/x.php",
        &[
            "-H",
            "Content-Type: application/octet-stream",
            "--data-binary",
            &format!("@{}", body.path().display()),
        ],
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"early answer");
}

#[test]
fn a_client_that_half_closes_gets_files_but_no_program_answer() {
    // As nginx (its 499): the end of a client's sending, while a program
    // works for it, ends the exchange.
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("peer.sock");
    let _p = peer(&sock, |mut s, _| {
        std::thread::sleep(Duration::from_millis(300));
        let mut wire = record(STDOUT, b"Content-Type: text/plain\r\n\r\nlate");
        wire.extend(record(STDOUT, b""));
        wire.extend(end_request());
        let _ = s.write_all(&wire);
    });
    let s = site(sock, Duration::from_secs(10));
    let ask = |path: &str| {
        let mut c = std::net::TcpStream::connect(s.addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        c.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .unwrap();
        c.shutdown(std::net::Shutdown::Write).unwrap();
        let mut got = Vec::new();
        let _ = c.read_to_end(&mut got);
        got
    };
    assert!(ask("/file.txt").ends_with(b"a file"));
    assert!(ask("/x.php").is_empty());
    // The server goes on.
    assert_eq!(s.curl("/x.php", &[]).body, b"late");
}
