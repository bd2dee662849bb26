//! Clients that misbehave: a flood of pipelined requests, a head dripped
//! a byte at a time, bodies the server does not want, ranges that ask for
//! the file many times over, and a stop while a client drips.

use crate::{pattern, Reply, Site};
use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// How many `HTTP/1.1 ` status lines `raw` holds.
fn count_responses(raw: &[u8]) -> usize {
    raw.windows(9).filter(|w| w == b"HTTP/1.1 ").count()
}

#[test]
fn pipelined_heads_past_the_head_buffer_are_all_answered() {
    let s = Site::new(|d| fs::write(d.join("a"), b"x").unwrap(), |_| {});
    // Heads of 45 bytes to 4 KiB sent at once: many times the head
    // buffer, far past the queue of responses, and a buffer that fills
    // with whole heads and part of the next.
    let n = 400;
    let mut req = Vec::new();
    for i in 0..n {
        let close = if i == n - 1 {
            "Connection: close\r\n"
        } else {
            ""
        };
        let pad = "p".repeat((i * 739) % 4000);
        req.extend_from_slice(
            format!("GET /a HTTP/1.1\r\nHost: x\r\nX-Pad: {pad}\r\n{close}\r\n").as_bytes(),
        );
    }
    let got = s.raw(&req);
    assert_eq!(count_responses(&got), n);
}

#[test]
fn a_head_dripped_a_byte_at_a_time_is_cut_off_at_the_header_timeout() {
    let s = Site::new(
        |d| fs::write(d.join("a"), b"x").unwrap(),
        |c| c.header_timeout = Duration::from_millis(800),
    );
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let t = Instant::now();
    let mut closed = false;
    // A byte every 100 ms, never the end of the head.
    for b in b"GET /a HTTP/1.1\r\nX-Pad: "
        .iter()
        .chain([b'a'; 200].iter())
    {
        if c.write_all(&[*b]).is_err() {
            closed = true;
            break;
        }
        let mut buf = [0u8; 64];
        match c.read(&mut buf) {
            Ok(0) => {
                closed = true;
                break;
            }
            Ok(_) => panic!("an answer to half a head"),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => {
                closed = true;
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        closed,
        "the connection outlived {:?} of dripping",
        t.elapsed()
    );
    assert!(t.elapsed() < Duration::from_secs(6), "{:?}", t.elapsed());
}

#[test]
fn a_stop_does_not_wait_for_a_client_dripping_a_head() {
    let mut s = Site::new(|d| fs::write(d.join("a"), b"x").unwrap(), |_| {});
    let mut c = TcpStream::connect(s.addr).unwrap();
    let dripping = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let d2 = dripping.clone();
    let drip = std::thread::spawn(move || {
        let _ = c.write_all(b"GET /a HTTP/1.1\r\n");
        while d2.load(std::sync::atomic::Ordering::Relaxed) {
            if c.write_all(b"X").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    s.server.take().unwrap().shutdown();
    let took = t.elapsed();
    dripping.store(false, std::sync::atomic::Ordering::Relaxed);
    drip.join().unwrap();
    assert!(took < Duration::from_secs(10), "the stop took {took:?}");
}

/// Sends `head` and `body`, then reads the whole answer (until the
/// server closes). A reset before the answer is read fails the read.
fn send_with_body(s: &Site, head: &str, body: &[u8], then: &[u8]) -> Vec<u8> {
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(head.as_bytes()).unwrap();
    // The server may answer and close before the body is all sent.
    let _ = c.write_all(body);
    let _ = c.write_all(then);
    let mut got = Vec::new();
    c.read_to_end(&mut got)
        .unwrap_or_else(|e| panic!("{head:?}: {e} after {} bytes", got.len()));
    got
}

#[test]
fn a_request_body_never_turns_the_answer_into_a_reset() {
    let s = Site::new(|d| fs::write(d.join("a"), b"x").unwrap(), |_| {});
    for len in [10usize, 100_000, 3 << 20] {
        let body = pattern(len, 1);
        let head = format!("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: {len}\r\n\r\n");
        let got = send_with_body(
            &s,
            &head,
            &body,
            b"GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        let r = Reply::parse(&got);
        assert_eq!(r.status, 405, "{len}");
        // A small body is read and dropped: the connection goes on and
        // the request after it is answered.
        let want = if len <= 1 << 20 { 2 } else { 1 };
        assert_eq!(count_responses(&got), want, "{len}");
    }
    // A head past the limit followed by more bytes: 431, not a reset.
    let long = format!(
        "GET /a HTTP/1.1\r\nHost: x\r\nX: {}\r\n\r\n",
        "a".repeat(9000)
    );
    let got = send_with_body(&s, &long, &pattern(200_000, 2), b"");
    assert_eq!(Reply::parse(&got).status, 431);
    // A chunked body is not decoded: answered, then the connection ends.
    let got = send_with_body(
        &s,
        "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"5\r\nhello\r\n0\r\n\r\n",
        b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n",
    );
    assert_eq!(count_responses(&got), 1);
    assert_eq!(Reply::parse(&got).body, b"x");
}

#[test]
fn a_body_held_back_behind_expect_100_continue_gets_the_final_answer() {
    let s = Site::new(|d| fs::write(d.join("a"), b"x").unwrap(), |_| {});
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(
        b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n",
    )
    .unwrap();
    // The body is never sent: the answer must come anyway.
    let mut got = Vec::new();
    c.read_to_end(&mut got).unwrap();
    assert_eq!(Reply::parse(&got).status, 405);
    let r = Reply::parse(&s.raw(b"GET /a HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\n\r\n"));
    assert_eq!(r.status, 417);
}

#[test]
fn overlapping_ranges_never_make_an_answer_larger_than_the_file() {
    let s = Site::new(
        |d| fs::write(d.join("f"), pattern(100_000, 9)).unwrap(),
        |_| {},
    );
    let many = vec!["0-"; 32].join(",");
    let r = s.curl("/f", &["-H", &format!("Range: bytes={many}")]);
    assert_eq!(r.status, 200);
    assert_eq!(r.body.len(), 100_000);
    // Disjoint ranges are still served as asked.
    let r = s.curl("/f", &["-H", "Range: bytes=0-9,20-29"]);
    assert_eq!(r.status, 206);
    assert!(r.body.len() < 1000);
    // The unit's case does not matter.
    let r = s.curl("/f", &["-H", "Range: Bytes=0-9"]);
    assert_eq!(r.status, 206);
    assert_eq!(r.body, pattern(100_000, 9)[..10]);
}

#[test]
fn a_body_dripped_a_byte_at_a_time_is_cut_off() {
    let s = Site::new(
        |d| fs::write(d.join("a"), b"x").unwrap(),
        |c| c.header_timeout = Duration::from_millis(800),
    );
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        .unwrap();
    c.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let t = Instant::now();
    let mut got = Vec::new();
    let mut closed = false;
    while t.elapsed() < Duration::from_secs(8) {
        if c.write_all(b"z").is_err() {
            closed = true;
            break;
        }
        let mut buf = [0u8; 4096];
        match c.read(&mut buf) {
            Ok(0) => {
                closed = true;
                break;
            }
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => {
                closed = true;
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // The answer came at once; the body's drip ended the connection.
    assert!(got.starts_with(b"HTTP/1.1 200 "), "{got:?}");
    assert!(closed, "still open after {:?} of dripping", t.elapsed());
}

#[test]
fn a_version_split_across_packets_is_answered_as_if_whole() {
    let s = Site::new(|d| fs::write(d.join("a"), b"x").unwrap(), |_| {});
    for (first, rest, want) in [
        (
            &b"GET /a HTTP/1.2"[..],
            &b"\r\nHost: x\r\nConnection: close\r\n\r\n"[..],
            200,
        ),
        (b"GET /a HTTP/2.0", b"\r\nHost: x\r\n\r\n", 505),
    ] {
        let mut c = TcpStream::connect(s.addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        c.write_all(first).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        c.write_all(rest).unwrap();
        let mut got = Vec::new();
        c.read_to_end(&mut got).unwrap();
        assert_eq!(Reply::parse(&got).status, want, "{first:?}");
    }
    // A HEAD refused before it parsed gets no body either.
    let got = s.raw(b"HEAD /a HTTP/1.1\r\n\r\n");
    let r = Reply::parse(&got);
    assert_eq!(r.status, 400);
    assert!(r.body.is_empty(), "{got:?}");
}
