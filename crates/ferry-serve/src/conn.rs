//! One client connection: request heads read into a page-aligned buffer
//! and parsed (pipelined requests in turn), responses queued and sent
//! without blocking — the head and the bytes in memory that follow it by
//! one gathered write, file ranges by `sendfile` — a bounded amount per
//! turn, so that one fast client cannot hold a worker.

use crate::files;
use crate::request::{self, Parsed};
use crate::response::{self, Body, Response};
use crate::site::Site;
use ferry::{Aggregate, BufMut};
use mio::net::TcpStream;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, IoSlice, Read};
use std::sync::Arc;
use std::time::Instant;

/// Bytes sent per connection per turn at most (nginx's
/// `sendfile_max_chunk` default is 2 MiB).
const TURN_BYTES: u64 = 1 << 20;

/// Responses queued per connection at most: pipelined requests past it
/// wait in the socket until the queue drains.
const MAX_QUEUED: usize = 16;

/// Slices one gathered write takes at most.
const IOV_BATCH: usize = 64;

/// A piece of a response still to send.
enum Piece {
    Mem(Aggregate),
    File { file: Arc<File>, off: u64, end: u64 },
}

struct Pending {
    head: Vec<u8>,
    head_off: usize,
    pieces: VecDeque<Piece>,
}

/// Where a connection stands after some work.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Waiting for the client (its next bytes, or room to send).
    Waiting,
    /// More to send now: its turn ended (come back soon).
    More,
    /// Done: close it.
    Closed,
}

pub(crate) struct Conn {
    sock: TcpStream,
    inbuf: BufMut,
    out: VecDeque<Pending>,
    /// The connection closes once the queue is sent.
    closing: bool,
    /// The client closed its side (or the head buffer can take no more).
    read_done: bool,
    /// When the client last sent bytes or took some.
    pub(crate) last_activity: Instant,
}

impl Conn {
    pub(crate) fn new(sock: TcpStream) -> io::Result<Conn> {
        Ok(Conn {
            sock,
            inbuf: BufMut::try_with_capacity_aligned(request::MAX_HEAD, 4096)?,
            out: VecDeque::new(),
            closing: false,
            read_done: false,
            last_activity: Instant::now(),
        })
    }

    pub(crate) fn socket(&mut self) -> &mut TcpStream {
        &mut self.sock
    }

    /// Whether a response is being sent (the send timeout applies), as
    /// opposed to waiting for a request (the header timeout).
    pub(crate) fn sending(&self) -> bool {
        !self.out.is_empty()
    }

    /// Whether a request head has begun to arrive.
    pub(crate) fn mid_request(&self) -> bool {
        !self.inbuf.is_empty()
    }

    /// Reads what the client sent, queues the responses to the whole
    /// requests, and sends what it can.
    pub(crate) fn work(&mut self, site: &Site) -> State {
        if !self.read_done && !self.closing {
            if let Err(()) = self.read_in() {
                return State::Closed;
            }
        }
        self.take_requests(site);
        let state = self.send();
        if state != State::Waiting {
            return state;
        }
        if self.out.is_empty() {
            if self.closing || (self.read_done && self.inbuf.is_empty()) {
                return State::Closed;
            }
            // Room freed in the queue: requests held back may go now.
            if !self.inbuf.is_empty() && !self.read_done {
                self.take_requests(site);
                if !self.out.is_empty() {
                    return State::More;
                }
            }
            if self.read_done {
                // A partial head and the client's end: nothing more comes.
                return State::Closed;
            }
        }
        State::Waiting
    }

    /// Reads into the head buffer until the socket has no more, the
    /// buffer is full, or the client's end. Err: the connection failed.
    fn read_in(&mut self) -> Result<(), ()> {
        loop {
            if self.inbuf.tail_room() == 0 {
                // A head this long is answered (414/431) by the parser.
                return Ok(());
            }
            match self.sock.read(self.inbuf.spare_capacity_mut()) {
                Ok(0) => {
                    self.read_done = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.inbuf.commit(n);
                    self.last_activity = Instant::now();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Err(()),
            }
        }
    }

    /// Parses whole heads from the buffer and queues their responses.
    fn take_requests(&mut self, site: &Site) {
        while !self.closing && self.out.len() < MAX_QUEUED && !self.inbuf.is_empty() {
            match request::parse(self.inbuf.as_slice()) {
                Parsed::Partial => return,
                Parsed::Done(req, n) => {
                    self.consume(n);
                    let r = files::respond(site, &req);
                    self.queue(r);
                }
                Parsed::Bad(st) => {
                    self.inbuf.clear();
                    self.queue(response::error(st, 1, false, true));
                }
            }
        }
    }

    fn consume(&mut self, n: usize) {
        let rest = self.inbuf.as_slice()[n..].to_vec();
        self.inbuf.clear();
        self.inbuf.extend_from_slice(&rest);
    }

    fn queue(&mut self, r: Response) {
        let mut pieces = VecDeque::new();
        flatten(r.body, &mut pieces);
        self.out.push_back(Pending {
            head: r.head,
            head_off: 0,
            pieces,
        });
        if r.close {
            self.closing = true;
        }
    }

    /// Sends queued responses until the socket is full (`Waiting`), the
    /// turn's bytes are spent (`More`), or the connection fails.
    fn send(&mut self) -> State {
        let mut sent: u64 = 0;
        while let Some(p) = self.out.front_mut() {
            if sent >= TURN_BYTES {
                return State::More;
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
                _ => gather_write(&self.sock, p),
            };
            match r {
                Ok(n) => {
                    sent += n as u64;
                    self.last_activity = Instant::now();
                    let p = self.out.front().expect("a response was being sent");
                    if p.head_off == p.head.len() && p.pieces.is_empty() {
                        self.out.pop_front();
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

/// One `writev` of the head's rest and the bytes in memory after it (up
/// to the next file piece); advances past what went.
fn gather_write(sock: &TcpStream, p: &mut Pending) -> io::Result<usize> {
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
    if slices.is_empty() {
        return Ok(0);
    }
    let n = rustix::io::writev(sock, &slices).map_err(io::Error::from)?;
    drop(slices);
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
    Ok(n)
}

fn flatten(body: Body, out: &mut VecDeque<Piece>) {
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
