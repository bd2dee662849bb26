//! `ferry ttcp --io exchange`: fbufs' interface. The transmitter hands
//! each buffer over by ownership (`write_buf`): with `-s` a clone of one
//! frozen pattern buffer (immutable, so the kernel may hold its pages by
//! reference), otherwise each buffer `read_buf` brought from standard
//! input. The receiver takes each buffer the I/O system fills
//! (`read_buf`) and, without `-s`, hands it on to standard output.

use super::io::{fail, pattern, stdin, Failure};
use super::Opts;
use ferry::exchange;
use std::net::TcpStream;
use std::os::fd::BorrowedFd;

fn write_failed(what: &str, done: u64) -> impl FnOnce(std::io::Error) -> Failure + '_ {
    move |e| {
        let bytes = exchange::bytes_out(&e).map_or(done, |b| done + b);
        fail(what, Some(bytes))(e)
    }
}

/// (bytes, calls) sent.
pub(crate) fn transmit(o: &Opts, sock: &TcpStream, source: bool) -> Result<(u64, u64), Failure> {
    let (mut bytes, mut calls) = (0u64, 0u64);
    if source {
        let pat = pattern(o.len)?.freeze();
        for _ in 0..o.count {
            calls += 1;
            bytes += exchange::write_buf(sock, pat.clone())
                .map_err(write_failed("write_buf", bytes))? as u64;
        }
        return Ok((bytes, calls));
    }
    loop {
        calls += 1;
        let b = exchange::read_buf(stdin(), o.len)
            .map_err(fail("read_buf standard input", Some(bytes)))?;
        if b.is_empty() {
            return Ok((bytes, calls));
        }
        calls += 1;
        bytes += exchange::write_buf(sock, b).map_err(write_failed("write_buf", bytes))? as u64;
    }
}

/// (bytes, calls) received.
pub(crate) fn receive(
    o: &Opts,
    sock: &TcpStream,
    out: BorrowedFd<'_>,
) -> Result<(u64, u64), Failure> {
    let (mut bytes, mut calls) = (0u64, 0u64);
    loop {
        calls += 1;
        let b = exchange::read_buf(sock, o.len).map_err(fail("read_buf", Some(bytes)))?;
        if b.is_empty() {
            return Ok((bytes, calls));
        }
        let n = b.len() as u64;
        if !o.pattern_or_sink {
            calls += 1;
            exchange::write_buf(out, b)
                .map_err(write_failed("write_buf standard output", bytes))?;
        }
        bytes += n;
    }
}
