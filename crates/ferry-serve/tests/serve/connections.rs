//! Connections: keep-alive and pipelining, HTTP/1.0, a client that stops
//! reading or sends half a head, a file that shrinks under a response,
//! a busy port, and a stop with a response under way.

use crate::{pattern, Reply, Site};
use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Splits `raw` into its responses (each with a Content-Length; those
/// to the HEAD requests numbered in `heads` have no body).
fn responses_with_heads(mut raw: &[u8], heads: &[usize]) -> Vec<Reply> {
    let mut out = Vec::new();
    while !raw.is_empty() {
        let end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let mut r = Reply::parse(&raw[..end]);
        let len: usize = if heads.contains(&out.len()) {
            0
        } else {
            r.header("content-length").map_or(0, |l| l.parse().unwrap())
        };
        r.body = raw[end..end + len].to_vec();
        raw = &raw[end + len..];
        out.push(r);
    }
    out
}

fn responses(raw: &[u8]) -> Vec<Reply> {
    responses_with_heads(raw, &[])
}

#[test]
fn pipelined_requests_are_answered_in_order_on_one_connection() {
    let s = Site::new(
        |d| {
            fs::write(d.join("a"), b"first").unwrap();
            fs::write(d.join("b"), pattern(200_000, 3)).unwrap();
        },
        |_| {},
    );
    let mut req = Vec::new();
    for i in 0..40 {
        let p = if i % 2 == 0 { "/a" } else { "/b" };
        req.extend_from_slice(format!("GET {p} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
    }
    req.extend_from_slice(b"HEAD /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let rs = responses_with_heads(&s.raw(&req), &[40]);
    assert_eq!(rs.len(), 41);
    let b = fs::read(s.dir.path().join("b")).unwrap();
    for (i, r) in rs.iter().take(40).enumerate() {
        assert_eq!(r.status, 200);
        let want: &[u8] = if i % 2 == 0 { b"first" } else { &b };
        assert_eq!(r.body, want, "response {i}");
    }
    assert_eq!(rs[40].header("connection"), Some("close"));
}

#[test]
fn http_1_0_closes_unless_asked_to_keep_alive() {
    let s = Site::new(|d| fs::write(d.join("a"), b"x").unwrap(), |_| {});
    let r = responses(&s.raw(b"GET /a HTTP/1.0\r\n\r\n"));
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].header("connection"), Some("close"));
    let r = responses(
        &s.raw(b"GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /a HTTP/1.0\r\n\r\n"),
    );
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].header("connection"), Some("keep-alive"));
}

#[test]
fn an_idle_or_half_sent_connection_is_closed_after_the_header_timeout() {
    let s = Site::new(
        |d| fs::write(d.join("a"), b"x").unwrap(),
        |c| c.header_timeout = Duration::from_millis(300),
    );
    for first in [&b""[..], b"GET /a HTTP/1.1\r\nHo"] {
        let mut c = TcpStream::connect(s.addr).unwrap();
        c.write_all(first).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut got = Vec::new();
        let t = Instant::now();
        c.read_to_end(&mut got).unwrap();
        assert!(got.is_empty());
        assert!(t.elapsed() < Duration::from_secs(15));
    }
}

#[test]
fn a_client_silent_for_a_while_after_connecting_is_served_when_it_speaks() {
    // The listener holds back connections that have sent nothing; one that
    // speaks later, within the header timeout, is answered as any other.
    let s = Site::new(|d| fs::write(d.join("a"), b"xyz").unwrap(), |_| {});
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    c.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    c.read_to_end(&mut got).unwrap();
    let r = responses(&got);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].status, 200);
    assert_eq!(r[0].body, b"xyz");
}

#[test]
fn at_the_connection_limit_the_longest_idle_connection_makes_room() {
    let s = Site::new(
        |d| fs::write(d.join("a"), b"xyz").unwrap(),
        |c| {
            c.workers = 1;
            c.max_connections = 3;
        },
    );
    let ask = |c: &mut TcpStream| {
        c.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut got = [0u8; 4096];
        let mut n = 0;
        while !got[..n].ends_with(b"xyz") {
            let k = c.read(&mut got[n..]).unwrap();
            assert!(k > 0, "closed before the response");
            n += k;
        }
        assert!(got.starts_with(b"HTTP/1.1 200"));
    };
    // Three kept-alive connections, each served once, now idle; the
    // first has waited longest.
    let mut idle: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut c = TcpStream::connect(s.addr).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            ask(&mut c);
            std::thread::sleep(Duration::from_millis(50));
            c
        })
        .collect();
    let mut fourth = TcpStream::connect(s.addr).unwrap();
    fourth
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    ask(&mut fourth);
    // The longest idle one was closed; the others still answer.
    let mut rest = Vec::new();
    assert_eq!(idle[0].read_to_end(&mut rest).unwrap(), 0);
    ask(&mut idle[1]);
    ask(&mut idle[2]);
    // Three connections in the middle of a head are not idle: a new one
    // is turned away rather than any of them cut.
    let mut busy: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut c = TcpStream::connect(s.addr).unwrap();
            c.write_all(b"GET /a HT").unwrap();
            c
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut fifth = TcpStream::connect(s.addr).unwrap();
    fifth
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let _ = fifth.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut got = Vec::new();
    let _ = fifth.read_to_end(&mut got);
    assert!(
        got.is_empty(),
        "a fourth connection was served beside three busy ones"
    );
    for c in &mut busy {
        c.write_all(b"TP/1.1\r\nHost: x\r\n\r\n").unwrap();
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut got = [0u8; 64];
        let n = c.read(&mut got).unwrap();
        assert!(got[..n].starts_with(b"HTTP/1.1 200"));
    }
    drop(idle.remove(0));
}

#[test]
fn a_file_that_shrinks_under_its_response_ends_the_connection() {
    let s = Site::new(
        |d| fs::write(d.join("big"), pattern(8 << 20, 4)).unwrap(),
        |_| {},
    );
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 4096];
    let n = c.read(&mut first).unwrap();
    assert!(n > 0);
    // The client reads slowly; the file loses most of its bytes.
    fs::OpenOptions::new()
        .write(true)
        .open(s.dir.path().join("big"))
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let mut rest = Vec::new();
    c.read_to_end(&mut rest).unwrap();
    let total = n + rest.len();
    assert!(
        total < (8 << 20),
        "all {total} bytes came though the file shrank"
    );
}

#[test]
fn a_busy_port_is_an_error_at_start_naming_the_address() {
    let s = Site::new(|_| {}, |_| {});
    let mut cfg = ferry_serve::Config::new(s.dir.path());
    cfg.listen = vec![s.addr];
    // Another process's port: SO_REUSEPORT lets only the same user share
    // it, so bind a plain listener elsewhere and ask for its port.
    let plain = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    cfg.listen = vec![plain.local_addr().unwrap()];
    let e = ferry_serve::Server::start(cfg).err().expect("a busy port");
    assert!(
        e.to_string()
            .contains(&plain.local_addr().unwrap().to_string()),
        "{e}"
    );
    let mut cfg = ferry_serve::Config::new(s.dir.path().join("missing"));
    cfg.listen = vec!["127.0.0.1:0".parse().unwrap()];
    let e = ferry_serve::Server::start(cfg)
        .err()
        .expect("a missing directory");
    assert!(e.to_string().contains("missing"), "{e}");
}

#[test]
fn a_stop_lets_the_response_under_way_finish() {
    let mut s = Site::new(
        |d| fs::write(d.join("big"), pattern(16 << 20, 5)).unwrap(),
        |_| {},
    );
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(b"GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 65536];
    let n = c.read(&mut first).unwrap();
    let server = s.server.take().unwrap();
    let stopper = std::thread::spawn(move || server.shutdown());
    let mut rest = Vec::new();
    c.read_to_end(&mut rest).unwrap();
    stopper.join().unwrap();
    let mut all = first[..n].to_vec();
    all.extend_from_slice(&rest);
    let r = Reply::parse(&all);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, fs::read(s.dir.path().join("big")).unwrap());
    assert!(
        TcpStream::connect(s.addr).is_err() || {
            // A connection the kernel accepted before the listener went is
            // closed without an answer.
            let mut c = TcpStream::connect(s.addr).unwrap();
            let mut b = Vec::new();
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            c.read_to_end(&mut b).is_ok() && b.is_empty()
        }
    );
}

#[test]
fn a_second_server_on_a_port_in_use_fails_to_start() {
    let s = Site::new(|_| {}, |_| {});
    let mut cfg = ferry_serve::Config::new(s.dir.path());
    cfg.listen = vec![s.addr];
    let e = ferry_serve::Server::start(cfg)
        .err()
        .expect("the port is taken");
    assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse, "{e}");
    assert!(e.to_string().contains(&s.addr.to_string()), "{e}");
}

#[test]
fn a_stopping_server_refuses_new_connections_at_once() {
    let mut s = Site::new(
        |d| fs::write(d.join("big"), pattern(32 << 20, 6)).unwrap(),
        |_| {},
    );
    // A response under way keeps the server stopping for a while.
    let mut slow = TcpStream::connect(s.addr).unwrap();
    slow.write_all(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 4096];
    slow.read_exact(&mut first).unwrap();
    let server = s.server.take().unwrap();
    let stopper = std::thread::spawn(move || server.shutdown());
    std::thread::sleep(Duration::from_millis(700));
    let t = Instant::now();
    match TcpStream::connect(s.addr) {
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused, "{e}"),
        Ok(mut c) => {
            // Accepted by the kernel in the instant before the close: it
            // must end at once, not wait for the stop.
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let _ = c.write_all(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
            let mut b = Vec::new();
            let _ = c.read_to_end(&mut b);
            assert!(b.is_empty());
            assert!(t.elapsed() < Duration::from_secs(3));
        }
    }
    drop(slow);
    stopper.join().unwrap();
}

#[test]
fn a_new_connection_sees_nothing_of_a_closed_one_s_half_sent_head() {
    // Connections' head buffers are kept for the next ones: what one
    // left unparsed must not become the start of another's request.
    let s = Site::new(
        |d| {
            fs::write(d.join("a"), b"first").unwrap();
            fs::write(d.join("b"), b"second").unwrap();
        },
        |_| {},
    );
    for _ in 0..20 {
        let mut half = TcpStream::connect(s.addr).unwrap();
        half.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\nX-Left: ")
            .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        drop(half);
        std::thread::sleep(Duration::from_millis(20));
        let rs = responses(&s.raw(b"GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
        assert_eq!(rs.len(), 1);
        assert_eq!(rs[0].status, 200);
        assert_eq!(rs[0].body, b"second");
    }
}

#[test]
fn the_last_response_before_a_close_arrives_whole_from_memory_and_from_the_file() {
    // The last response's bytes may wait in the socket for the FIN; the
    // close must still send every one of them.
    let big = pattern(3 << 20, 5);
    let s = Site::new(
        |d| {
            fs::write(d.join("small"), b"tiny body").unwrap();
            fs::write(d.join("big"), &big).unwrap();
        },
        |_| {},
    );
    for _ in 0..5 {
        let rs = responses(&s.raw(b"GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
        assert_eq!(rs.len(), 1);
        assert_eq!(rs[0].body, b"tiny body");
        let rs = responses(
            &s.raw(b"GET /small HTTP/1.1\r\nHost: x\r\n\r\nGET /big HTTP/1.0\r\nHost: x\r\n\r\n"),
        );
        assert_eq!(rs.len(), 2);
        assert_eq!(rs[0].body, b"tiny body");
        assert_eq!(rs[1].body, big, "the file, sent last before the close");
    }
}

#[test]
fn a_byte_sent_after_a_closing_request_never_costs_the_response() {
    // The byte races the server's close: arriving unread, it turns the
    // close into a reset, which must come only after the whole response
    // left (the kernel drops what is unsent when it resets).
    let file = vec![b'f'; 20_000];
    let s = Site::new(
        |d| {
            fs::write(d.join("small"), b"a file").unwrap();
            fs::write(d.join("big"), &file).unwrap();
        },
        |c| c.workers = 1,
    );
    for (path, body) in [("/small", &b"a file"[..]), ("/big", &file[..])] {
        let mut cut = Vec::new();
        for i in 0..1500u64 {
            let mut c = TcpStream::connect(s.addr).unwrap();
            c.set_nodelay(true).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            c.write_all(req.as_bytes()).unwrap();
            // 0 to 390 µs later: across the server's turn.
            let wait = Duration::from_micros(i % 40 * 10);
            let t = Instant::now();
            while t.elapsed() < wait {
                std::hint::spin_loop();
            }
            let _ = c.write_all(b"X");
            let mut got = Vec::new();
            let r = c.read_to_end(&mut got);
            if !got.ends_with(body) || got.len() <= body.len() {
                cut.push((wait, got.len(), r.err().map(|e| e.kind())));
            }
        }
        assert!(cut.is_empty(), "{path}: responses cut short: {cut:?}");
    }
}
