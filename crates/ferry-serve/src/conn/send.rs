//! Sending a connection's queued responses: the head and the bytes in
//! memory after it by one gathered write, file ranges by `sendfile`, a
//! bounded amount per turn.

use super::{Conn, Pending, Piece, State, IOV_BATCH, TURN_BYTES};
use crate::response::Body;
use mio::net::TcpStream;
use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::time::Instant;

impl Conn {
    /// Sends queued responses until the socket is full (`Waiting`), the
    /// turn's bytes are spent (`More`), or the connection fails.
    pub(super) fn send(&mut self, mut log: Option<&mut Vec<u8>>) -> State {
        if self.tls.is_some() {
            return self.send_tls(log);
        }
        let mut sent: u64 = 0;
        while !self.out.is_empty() {
            if sent >= TURN_BYTES {
                return State::More;
            }
            if !self.front_ready(log.as_deref_mut()) {
                // Its program has not answered yet.
                return State::Waiting;
            }
            // The connection's last response: its bytes may wait in the
            // socket (`MSG_MORE`, the cork left on) for the shutdown that
            // follows at once (`start_lingering`), which sends them with
            // the FIN in one segment rather than two.
            let last = self.closing && self.out.len() == 1;
            if last {
                self.held_back = true;
            }
            let Some(p) = self.out.front_mut() else { break };
            // As nginx's `tcp_nopush`: corked while a file body goes, so
            // that the kernel sends full segments rather than one per
            // write (docs/BENCHMARKS.md, the web-server section).
            let file_body = p.pieces.iter().any(|x| matches!(x, Piece::File { .. }));
            if file_body && !self.corked {
                self.corked = rustix::net::sockopt::set_tcp_cork(&self.sock, true).is_ok();
            }
            let head_left = p.head.len() - p.head_off;
            let r = match p.pieces.front_mut() {
                Some(Piece::File { file, off, end }) if head_left == 0 => {
                    let want = (*end - *off).min(TURN_BYTES) as usize;
                    match rustix::fs::sendfile(&self.sock, &**file, Some(off), want) {
                        // The file ended early (it shrank since its size
                        // was sent): the response cannot be finished.
                        Ok(0) => return State::Closed,
                        Ok(n) => {
                            if *off >= *end {
                                p.pieces.pop_front();
                            }
                            Ok(n)
                        }
                        Err(e) => Err(io::Error::from(e)),
                    }
                }
                _ => gather_write(&self.sock, p, last),
            };
            match r {
                Ok(n) => {
                    sent += n as u64;
                    self.last_activity = Instant::now();
                    let p = self.out.front().expect("a response was being sent");
                    if p.head_off == p.head.len() && p.pieces.is_empty() {
                        self.front_done();
                        if self.corked && !last {
                            // The response's last bytes go now.
                            let _ = rustix::net::sockopt::set_tcp_cork(&self.sock, false);
                            self.corked = false;
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return State::Waiting,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return State::Closed,
            }
        }
        State::Waiting
    }
}

impl Conn {
    /// Makes the front response ready to send: a program's response that
    /// has come takes its place (and is logged). False: it has not come.
    pub(super) fn front_ready(&mut self, log: Option<&mut Vec<u8>>) -> bool {
        let Some(p) = self.out.front_mut() else {
            return true;
        };
        let Some((a, _)) = &p.awaited else {
            return true;
        };
        let Some(r) = a.take() else {
            return false;
        };
        let line = p.awaited.take().and_then(|(_, l)| l);
        if let (Some(out), Some(line)) = (log, line) {
            let status = r.head.get(9..12).unwrap_or(b"000");
            crate::log::line(out, self.peer, &line, status, r.body.len());
        }
        p.head = r.head;
        flatten(r.body, &mut p.pieces);
        if r.close {
            self.closing = true;
        }
        true
    }

    /// The front response is sent whole: it leaves the queue.
    pub(super) fn front_done(&mut self) {
        self.out.pop_front();
        if self.out.is_empty() {
            // The next request's time starts now.
            self.waiting_since = self.last_activity;
        }
    }
}

/// The head's rest and the bytes in memory after it (up to the next file
/// piece), at most [`IOV_BATCH`] slices.
pub(super) fn mem_slices(p: &Pending) -> Vec<IoSlice<'_>> {
    let mut slices: Vec<IoSlice<'_>> = Vec::with_capacity(IOV_BATCH);
    if p.head_off < p.head.len() {
        slices.push(IoSlice::new(&p.head[p.head_off..]));
    }
    for piece in &p.pieces {
        let Piece::Mem(a) = piece else { break };
        for c in a.chunks() {
            if slices.len() == IOV_BATCH {
                break;
            }
            slices.push(IoSlice::new(c));
        }
        if slices.len() == IOV_BATCH {
            break;
        }
    }
    slices
}

/// Moves `p` past `n` bytes of its head and the memory pieces after it
/// (as [`mem_slices`] listed them).
pub(super) fn advance(p: &mut Pending, n: usize) {
    let mut left = n;
    let head_left = p.head.len() - p.head_off;
    let from_head = left.min(head_left);
    p.head_off += from_head;
    left -= from_head;
    while left > 0 {
        let Some(Piece::Mem(a)) = p.pieces.front_mut() else {
            break;
        };
        let take = left.min(a.len());
        a.advance(take);
        left -= take;
        if a.is_empty() {
            p.pieces.pop_front();
        }
    }
    // Empty memory pieces ahead go too.
    while matches!(p.pieces.front(), Some(Piece::Mem(a)) if a.is_empty()) {
        p.pieces.pop_front();
    }
}

/// One gathered write of the head's rest and the bytes in memory after it
/// (up to the next file piece); advances past what went. `more`: more
/// is to follow (the close's FIN at least): the kernel may hold a partial
/// segment for it.
fn gather_write(sock: &TcpStream, p: &mut Pending, more: bool) -> io::Result<usize> {
    let slices = mem_slices(p);
    if slices.is_empty() {
        return Ok(0);
    }
    let n = if more {
        rustix::net::sendmsg(
            sock,
            &slices,
            &mut rustix::net::SendAncillaryBuffer::default(),
            rustix::net::SendFlags::MORE | rustix::net::SendFlags::NOSIGNAL,
        )
    } else {
        rustix::io::writev(sock, &slices)
    }
    .map_err(io::Error::from)?;
    drop(slices);
    advance(p, n);
    Ok(n)
}

pub(super) fn flatten(body: Body, out: &mut VecDeque<Piece>) {
    match body {
        Body::Empty => {}
        Body::Mem(a) => {
            if !a.is_empty() {
                out.push_back(Piece::Mem(a));
            }
        }
        Body::File { file, off, len } => {
            if len > 0 {
                out.push_back(Piece::File {
                    file,
                    off,
                    end: off + len,
                });
            }
        }
        Body::Parts(parts) => {
            for p in parts {
                flatten(p, out);
            }
        }
    }
}
