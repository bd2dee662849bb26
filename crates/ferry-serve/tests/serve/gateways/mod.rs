//! Programs behind the server: CGI/1.1 scripts (a process per request),
//! php-fpm over FastCGI, and a long-lived program on ferry's ipc — each
//! asked by curl, and each made to fail (crash, hang, garbage) to show
//! that a program's failure costs its request a 502 or 504 and nothing
//! else.

mod classic;
mod fastcgi;
mod fastcgi_peer;
mod ipc;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Waits (5 s at most) until process `pid` is gone, or a zombie waiting
/// for whoever adopted it; fails naming `what` if it still runs.
pub fn assert_ends(pid: &str, what: &str) {
    let stat = format!("/proc/{}/stat", pid.trim());
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let alive = std::fs::read_to_string(&stat).is_ok_and(|st| {
            !st.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        });
        if !alive {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what} ({}) lived on",
            pid.trim()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `bytes` on one connection and reads `n` responses (each framed
/// by its Content-Length), returning their statuses and bodies.
pub fn pipelined(addr: std::net::SocketAddr, bytes: &[u8], n: usize) -> Vec<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(bytes).unwrap();
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let mut chunk = [0u8; 65536];
    while out.len() < n {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let status: u16 = head[9..12].parse().unwrap();
            let len: usize = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                out.push((status, buf[end + 4..end + 4 + len].to_vec()));
                buf.drain(..end + 4 + len);
                continue;
            }
        }
        let k = s.read(&mut chunk).expect("reading responses");
        assert!(k > 0, "the connection ended after {} responses", out.len());
        buf.extend_from_slice(&chunk[..k]);
    }
    out
}
