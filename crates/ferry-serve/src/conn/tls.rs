//! A connection over TLS: records read from the socket into the session
//! and the plaintext taken into the head buffer; responses given to the
//! session (the head and memory pieces by one gathered write, which
//! rustls seals across slices without copying them first; a file piece
//! read a piece at a time into the worker's page-aligned scratch buffer)
//! and its records written out, a bounded amount per turn.

use super::send::{advance, mem_slices};
use super::{Conn, Pending, Piece, State, TURN_BYTES};
use crate::response;
use crate::status::Status;
use ferry::BufMut;
use std::cell::RefCell;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::time::Instant;

/// Plaintext given to the session at a time at most: four full records
/// (16 KiB each), within rustls's default 64 KiB of queued records.
const FEED: usize = 64 << 10;

thread_local! {
    /// The worker's buffer for file bytes on their way into a record.
    static SCRATCH: RefCell<Option<BufMut>> = const { RefCell::new(None) };
}

impl Conn {
    /// Reads records until the socket has no more (or the client's end,
    /// or a full head buffer), taking their plaintext into the head
    /// buffer; writes the session's answer (the handshake's) out. Err:
    /// the connection failed, or the client broke the protocol (its alert
    /// is sent).
    pub(super) fn read_in_tls(&mut self) -> Result<(), ()> {
        if !self.tls_began && self.plain_http_on_tls() {
            return Ok(());
        }
        let Some(tls) = self.tls.as_mut() else {
            return Err(());
        };
        loop {
            if self.inbuf.tail_room() == 0 && !Self::grow_head(&mut self.inbuf) {
                self.unread = true;
                break;
            }
            match tls.reader().read(self.inbuf.spare_capacity_mut()) {
                Ok(0) => {
                    // close_notify: the client sends nothing more.
                    self.read_done = true;
                    self.unread = false;
                    break;
                }
                Ok(n) => {
                    self.inbuf.commit(n);
                    self.last_activity = Instant::now();
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The socket ended without close_notify.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    self.read_done = true;
                    self.unread = false;
                    break;
                }
                Err(_) => return Err(()),
            }
            match tls.read_tls(&mut self.sock) {
                Ok(0) => {
                    self.read_done = true;
                    self.unread = false;
                    break;
                }
                Ok(_) => {
                    self.last_activity = Instant::now();
                    if tls.process_new_packets().is_err() {
                        // Its alert goes out if the socket takes it.
                        let _ = tls.write_tls(&mut self.sock);
                        return Err(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.unread = false;
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Err(()),
            }
        }
        match self.flush_tls() {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            Err(_) => Err(()),
        }
    }

    /// Looks at the connection's first byte: a TLS handshake record
    /// begins 0x16. One that begins with a capital letter is a plain HTTP
    /// request sent to this HTTPS port: the connection goes on without
    /// TLS just long enough to answer it 400 (as nginx does) and close.
    /// True when that is so.
    fn plain_http_on_tls(&mut self) -> bool {
        let mut first = [0u8; 1];
        match rustix::net::recv(&self.sock, &mut first, rustix::net::RecvFlags::PEEK) {
            Ok((1, _)) => {}
            // Nothing yet (or the end, or an error the read will meet).
            _ => return false,
        }
        self.tls_began = true;
        if !first[0].is_ascii_uppercase() {
            return false;
        }
        self.tls = None;
        self.queue(response::error(Status::BadRequest, 1, false, true));
        true
    }

    /// Writes the session's queued records out: the bytes written, or
    /// `WouldBlock` when the socket filled first.
    pub(super) fn flush_tls(&mut self) -> io::Result<u64> {
        let Some(tls) = self.tls.as_mut() else {
            return Ok(0);
        };
        let mut sent = 0;
        while tls.wants_write() {
            match tls.write_tls(&mut self.sock) {
                Ok(n) => {
                    sent += n as u64;
                    self.last_activity = Instant::now();
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(sent)
    }

    /// Sends queued responses through the session until the socket is
    /// full (`Waiting`), the turn's bytes are spent (`More`), or the
    /// connection fails.
    pub(super) fn send_tls(&mut self, mut log: Option<&mut Vec<u8>>) -> State {
        let mut sent: u64 = 0;
        loop {
            match self.flush_tls() {
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return State::Waiting,
                Err(_) => return State::Closed,
            }
            if self.out.is_empty() {
                return State::Waiting;
            }
            if sent >= TURN_BYTES {
                return State::More;
            }
            if !self.front_ready(log.as_deref_mut()) {
                // Its program has not answered yet.
                return State::Waiting;
            }
            let (Some(tls), Some(p)) = (self.tls.as_mut(), self.out.front_mut()) else {
                return State::Closed;
            };
            let took = match feed(tls, p) {
                Ok(n) => n,
                Err(_) => return State::Closed,
            };
            if p.head_off == p.head.len() && p.pieces.is_empty() {
                self.front_done();
            } else if took == 0 && !tls.wants_write() {
                // The session takes nothing and has nothing to send (its
                // handshake is not done): wait for the client.
                return State::Waiting;
            }
        }
    }
}

/// Gives the session up to [`FEED`] bytes of `p`'s plaintext and moves
/// `p` past what it took; returns how much that was (none when its queue
/// of records is full). Err: a file ended before its piece did (it
/// shrank since its length was sent: the response cannot be finished).
fn feed(tls: &mut rustls::ServerConnection, p: &mut Pending) -> io::Result<usize> {
    let head_left = p.head.len() - p.head_off;
    if let Some(Piece::File { file, off, end }) = p.pieces.front_mut() {
        if head_left == 0 {
            let want = (*end - *off).min(FEED as u64) as usize;
            let took = SCRATCH.with(|s| -> io::Result<usize> {
                let mut s = s.borrow_mut();
                let buf = match &mut *s {
                    Some(b) => b,
                    None => s.insert(BufMut::try_with_capacity_aligned(FEED, 4096)?),
                };
                buf.clear();
                let n = file.read_at(&mut buf.spare_capacity_mut()[..want], *off)?;
                if n == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                buf.commit(n);
                io::Write::write(&mut tls.writer(), buf.as_slice())
            })?;
            *off += took as u64;
            if *off >= *end {
                p.pieces.pop_front();
            }
            return Ok(took);
        }
    }
    // The session takes what fits its queue of records (64 KiB by
    // default) and says how much that was.
    let slices = mem_slices(p);
    let n = if slices.is_empty() {
        0
    } else {
        io::Write::write_vectored(&mut tls.writer(), &slices)?
    };
    drop(slices);
    advance(p, n);
    Ok(n)
}
