//! One client connection: request heads read into a page-aligned buffer
//! and parsed (pipelined requests in turn), responses queued and sent
//! without blocking — the head and the bytes in memory that follow it by
//! one gathered write, file ranges by `sendfile` — a bounded amount per
//! turn, so that one fast client cannot hold a worker. `program.rs`
//! holds requests for programs (their bodies read, their responses
//! awaited), `send.rs` the sending, `tls.rs` the same over a TLS
//! session.

mod chunked;
mod program;
mod send;
mod tls;

use program::Collecting;
use send::flatten;

use crate::config::Config;
use crate::files;
use crate::gateway::{self, Awaited, Dispatch};
use crate::request::{self, BodyKind, Parsed};
use crate::response::{self, Response};
use crate::site::Site;
use ferry::{Aggregate, BufMut};
use mio::net::TcpStream;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes sent per connection per turn at most (nginx's
/// `sendfile_max_chunk` default is 2 MiB).
const TURN_BYTES: u64 = 1 << 20;

/// Responses queued per connection at most: pipelined requests past it
/// wait in the socket until the queue drains.
const MAX_QUEUED: usize = 16;

/// Slices one gathered write takes at most.
const IOV_BATCH: usize = 64;

/// A request body of at most this many bytes (by `Content-Length`) is
/// read and dropped, and the connection kept; a longer one, a chunked
/// one, or one held back behind `Expect: 100-continue` ends the
/// connection after the response (with a lingering close).
const DISCARD_MAX: u64 = 1 << 20;

/// A lingering close (after the response, the server's side shut,
/// what the client still sends read and dropped so that the kernel does
/// not answer it with a reset that destroys the response) lasts until
/// the client closes, no byte comes for this long, or [`LINGER_TOTAL`]
/// passes (nginx's `lingering_timeout` and `lingering_time`).
const LINGER_IDLE: Duration = Duration::from_secs(5);
const LINGER_TOTAL: Duration = Duration::from_secs(30);

/// A body being read and dropped must be whole within this time of its
/// head, or the header timeout if shorter (nginx's `lingering_time`
/// bounds its discarding so): a body dripped a byte at a time does not
/// hold the connection for ever.
const DISCARD_TOTAL: Duration = Duration::from_secs(30);

/// Bytes in memory of queued responses past which no further pipelined
/// request is taken until they are sent (a client that asks for large
/// built pages and never reads holds at most this much, plus one).
const QUEUED_MEM_MAX: u64 = 1 << 20;

/// Rounds of read, parse and send one turn takes at most.
const ROUNDS: usize = 4;

/// A piece of a response still to send.
enum Piece {
    Mem(Aggregate),
    File { file: Arc<File>, off: u64, end: u64 },
}

struct Pending {
    head: Vec<u8>,
    head_off: usize,
    pieces: VecDeque<Piece>,
    /// A program's response, still to come: nothing of this one (or of
    /// those after it) is sent until it has. The request line is kept
    /// for the access log.
    awaited: Option<(Awaited, Option<Vec<u8>>)>,
    /// When it was queued.
    since: Instant,
}

/// Where a connection stands after some work.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Waiting for the client (its next bytes, or room to send).
    Waiting,
    /// More to do now: its turn ended (come back soon).
    More,
    /// Done: close it.
    Closed,
}

pub(crate) struct Conn {
    sock: TcpStream,
    /// Its index in the worker's table (how a program's runner names it).
    index: usize,
    /// A program's request whose body is being read.
    collecting: Option<Box<Collecting>>,
    /// The client's address (for the access log).
    peer: Option<std::net::SocketAddr>,
    inbuf: BufMut,
    out: VecDeque<Pending>,
    /// The connection closes once the queue is sent.
    closing: bool,
    /// The client closed its side.
    read_done: bool,
    /// The poller said the client closed its side (EPOLLRDHUP): reading
    /// goes on to the end, not only to a short read.
    peer_closed: bool,
    /// Reading stopped at a full head buffer: the socket may hold more,
    /// and no new readiness event will say so.
    unread: bool,
    /// Requests stopped at a full queue: the buffer may hold whole heads.
    held: bool,
    /// Body bytes of the last request still to read and drop.
    discard: u64,
    /// Since when the body being dropped is read.
    discard_since: Instant,
    /// Since when the connection waits for a request head (accepted, or
    /// its responses all sent): the header timeout counts from here, so a
    /// client dripping a head byte by byte gains nothing.
    waiting_since: Instant,
    /// Lingering close: since when.
    lingering: Option<Instant>,
    /// When the client last sent bytes or took some.
    last_activity: Instant,
    /// TCP_CORK is set: a response with a file body goes out in full
    /// segments (its head joined to the file's first bytes), pushed when
    /// it ends.
    corked: bool,
    /// The last response's bytes may wait in the socket (sent with
    /// `MSG_MORE`, or corked): the close must push them out first.
    held_back: bool,
    /// The TLS session, on an HTTPS listener (`tls.rs`).
    tls: Option<Box<rustls::ServerConnection>>,
    /// The session's close_notify is queued.
    tls_closed: bool,
    /// The client's first byte was looked at (`tls::plain_http_on_tls`).
    tls_began: bool,
    /// The server's end of the connection, once a program's request
    /// needed it (one `getsockname` per connection, not per request).
    local: Option<std::net::SocketAddr>,
    /// The poller said the socket may have bytes (or it was never read):
    /// a turn with no such word and nothing left unread makes no read
    /// that would only say EAGAIN (a program's response coming, say).
    readable: bool,
}

impl Conn {
    /// A connection on `sock` from `peer` (as `accept` gave it), reading
    /// request heads into `head` (its contents dropped; at least
    /// `request::FIRST_HEAD` of capacity), over TLS with `tls` if given.
    pub(crate) fn new(
        sock: TcpStream,
        peer: std::net::SocketAddr,
        index: usize,
        mut head: BufMut,
        tls: Option<&Arc<rustls::ServerConfig>>,
    ) -> io::Result<Conn> {
        head.clear();
        debug_assert!(head.capacity() >= request::FIRST_HEAD);
        let now = Instant::now();
        let tls = tls.map(crate::tls::session).transpose()?;
        Ok(Conn {
            tls,
            tls_closed: false,
            tls_began: false,
            local: None,
            readable: true,
            peer: Some(peer),
            sock,
            index,
            collecting: None,
            inbuf: head,
            out: VecDeque::new(),
            closing: false,
            read_done: false,
            peer_closed: false,
            unread: false,
            held: false,
            discard: 0,
            discard_since: now,
            waiting_since: now,
            lingering: None,
            last_activity: now,
            corked: false,
            held_back: false,
        })
    }

    /// Closes the connection, giving back its request-head buffer.
    pub(crate) fn into_head(self) -> BufMut {
        self.inbuf
    }

    pub(crate) fn socket(&mut self) -> &mut TcpStream {
        &mut self.sock
    }

    /// The poller reported the client's end of sending (EPOLLRDHUP).
    pub(crate) fn saw_peer_close(&mut self) {
        self.peer_closed = true;
        self.readable = true;
    }

    /// The poller reported the socket readable (or in error).
    pub(crate) fn saw_readable(&mut self) {
        self.readable = true;
    }

    /// The server's address on this connection (asked once).
    pub(super) fn local_addr(&mut self) -> Option<std::net::SocketAddr> {
        if self.local.is_none() {
            self.local = self.sock.local_addr().ok();
        }
        self.local
    }

    /// Whether a response is being sent (the send timeout applies), or
    /// TLS records wait to go.
    pub(crate) fn sending(&self) -> bool {
        !self.out.is_empty() || self.tls.as_ref().is_some_and(|t| t.wants_write())
    }

    /// Whether nothing is under way: no response, no head or body begun,
    /// no lingering close (a stopping server closes these at once).
    pub(crate) fn idle(&self) -> bool {
        !self.sending()
            && self.inbuf.is_empty()
            && self.discard == 0
            && self.collecting.is_none()
            && self.lingering.is_none()
    }

    /// Whether the connection may be closed to make room for a new one:
    /// idle, with no bytes waiting to be read (none the poller announced,
    /// none left unread: closing over them would reset the connection and
    /// lose a request), and past its TLS handshake.
    pub(crate) fn evictable(&self) -> bool {
        self.idle()
            && !self.readable
            && !self.unread
            && self.tls.as_ref().is_none_or(|t| !t.is_handshaking())
    }

    /// Since when the connection has waited for a request head.
    pub(crate) fn waiting_since(&self) -> Instant {
        self.waiting_since
    }

    /// Whether the connection is past its timeout at `now`: the send
    /// timeout while a response goes, the header timeout for a whole head
    /// (counted from when the connection began to wait for it) or between
    /// a body's bytes, the lingering close's limits.
    pub(crate) fn expired(&self, now: Instant, cfg: &Config) -> bool {
        let since = |t: Instant| now.saturating_duration_since(t);
        if let Some(start) = self.lingering {
            return since(self.last_activity) >= LINGER_IDLE || since(start) >= LINGER_TOTAL;
        }
        if let Some(p) = self.out.front() {
            if p.awaited.is_some() {
                // The program's runner answers (a 503 or 504 at worst)
                // within one timeout of waiting for a helper and the
                // exchange's deadline; this only backs that up.
                let bound = cfg.gateway_timeout * (gateway::classic::TOTAL_TIMEOUTS + 2);
                return since(p.since) >= bound;
            }
        }
        if self.sending() {
            return since(self.last_activity) >= cfg.send_timeout;
        }
        if self.collecting.is_some() {
            // Between a body's bytes, as nginx's `client_body_timeout`,
            // and four of those for the whole body.
            return since(self.last_activity) >= cfg.header_timeout
                || since(self.discard_since) >= cfg.header_timeout * 4;
        }
        if self.discard > 0 {
            return since(self.last_activity) >= cfg.header_timeout
                || since(self.discard_since) >= DISCARD_TOTAL.min(cfg.header_timeout);
        }
        since(self.waiting_since) >= cfg.header_timeout
    }

    /// Reads what the client sent, queues the responses to the whole
    /// requests, and sends what it can.
    /// `log`: the worker's access-log lines, when there is a log.
    pub(crate) fn work(
        &mut self,
        site: &Site,
        gw: &mut Dispatch<'_>,
        mut log: Option<&mut Vec<u8>>,
    ) -> State {
        if self.lingering.is_some() {
            return self.linger();
        }
        for _ in 0..ROUNDS {
            if !self.read_done && !self.closing {
                if let Err(()) = self.read_in() {
                    return State::Closed;
                }
            }
            self.take_requests(site, gw, log.as_deref_mut());
            match self.send(log.as_deref_mut()) {
                State::Waiting => {}
                other => return other,
            }
            if self.read_done && self.out.front().is_some_and(|p| p.awaited.is_some()) {
                // The client left while a program works for it (nginx:
                // "client prematurely closed connection"): closing drops
                // the response's slot, and the program's exchange ends.
                // Only the end read from the socket says so, never the
                // poller's word alone: an event of a connection closed a
                // moment ago can come with this one's token (a child
                // being spawned holds a copy of every descriptor until it
                // execs, and with it the old socket's place in the epoll
                // set).
                return State::Closed;
            }
            if self.sending() {
                // The socket is full: its writable event comes back here.
                return State::Waiting;
            }
            if self.closing {
                return self.start_lingering();
            }
            let again = self.held || (self.unread && !self.read_done);
            if !again {
                // A partial head, or nothing, and the client's end:
                // nothing more comes.
                return if self.read_done {
                    State::Closed
                } else {
                    State::Waiting
                };
            }
        }
        State::More
    }

    /// Grows a full head buffer to what one head may take (a long head,
    /// or pipelined ones), where memory allows; false if it cannot grow.
    fn grow_head(inbuf: &mut BufMut) -> bool {
        if inbuf.capacity() >= request::MAX_HEAD {
            return false;
        }
        match BufMut::try_with_capacity_aligned(request::MAX_HEAD, 4096) {
            Ok(mut bigger) => {
                bigger.extend_from_slice(inbuf.as_slice());
                *inbuf = bigger;
                true
            }
            Err(_) => false,
        }
    }

    /// Reads into the head buffer until the socket has no more, the
    /// buffer is full, or the client's end. Err: the connection failed.
    fn read_in(&mut self) -> Result<(), ()> {
        if self.tls.is_some() {
            return self.read_in_tls();
        }
        if !self.readable && !self.unread {
            // Nothing came since the socket was read dry.
            return Ok(());
        }
        loop {
            if self.inbuf.tail_room() == 0 && !Self::grow_head(&mut self.inbuf) {
                // Come back once requests are taken from the buffer (a
                // head this long is answered 414/431 by the parser).
                self.unread = true;
                return Ok(());
            }
            match self.sock.read(self.inbuf.spare_capacity_mut()) {
                Ok(0) => {
                    self.read_done = true;
                    self.unread = false;
                    return Ok(());
                }
                Ok(n) => {
                    let asked = self.inbuf.tail_room();
                    self.inbuf.commit(n);
                    self.last_activity = Instant::now();
                    if n < asked && !self.peer_closed {
                        // A short read took all the socket held: bytes that
                        // come later raise a new edge (as nginx reasons), so
                        // the read that would say EAGAIN is saved. Its end
                        // (a FIN already here) is told by EPOLLRDHUP.
                        self.unread = false;
                        self.readable = false;
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.unread = false;
                    self.readable = false;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Err(()),
            }
        }
    }

    /// Drops body bytes still owed, then parses whole heads from the
    /// buffer and queues their responses.
    fn take_requests(&mut self, site: &Site, gw: &mut Dispatch<'_>, mut log: Option<&mut Vec<u8>>) {
        self.held = false;
        loop {
            if self.collecting.is_some() {
                if !self.collect(site, gw) {
                    return;
                }
                continue;
            }
            if self.discard > 0 {
                let take = self.discard.min(self.inbuf.len() as u64);
                self.consume(take as usize);
                self.discard -= take;
                if self.discard > 0 {
                    return;
                }
            }
            if self.closing || self.inbuf.is_empty() {
                return;
            }
            // A program's response is counted only once it comes, so one
            // at a time per connection (its output is bounded by the
            // gateway's limit) keeps what a client can queue bounded.
            if self.out.len() >= MAX_QUEUED
                || self.queued_mem() > QUEUED_MEM_MAX
                || self.out.iter().any(|p| p.awaited.is_some())
            {
                self.held = true;
                return;
            }
            let parsed = request::parse(self.inbuf.as_slice());
            let line: Vec<u8> = match (&log, &parsed) {
                (Some(_), Parsed::Done(..) | Parsed::Bad(_)) => {
                    let b = self.inbuf.as_slice();
                    let end = b
                        .windows(2)
                        .position(|w| w == b"\r\n")
                        .unwrap_or(b.len().min(256));
                    b[..end].to_vec()
                }
                _ => Vec::new(),
            };
            match parsed {
                Parsed::Partial => return,
                Parsed::Done(mut req, n) => {
                    if let Some(route) = gw.route(site, &req.target) {
                        let keep_line = log.is_some().then_some(line);
                        self.for_program(route, req, n, keep_line, log.as_deref_mut(), gw);
                        continue;
                    }
                    self.consume(n);
                    match req.body {
                        BodyKind::None => {}
                        BodyKind::Length(len) if len <= DISCARD_MAX && !req.expect_continue => {
                            self.discard = len;
                            self.discard_since = Instant::now();
                        }
                        // Not read: the connection ends after the response.
                        BodyKind::Length(_) | BodyKind::Chunked => req.keep_alive = false,
                    }
                    let r = files::respond(site, &req);
                    if let Some(out) = log.as_deref_mut() {
                        self.log_line(out, &line, &r);
                    }
                    self.queue(r);
                }
                Parsed::Bad(st) => {
                    // A HEAD gets no body, even in answer to a head that
                    // did not parse.
                    let head_only = self.inbuf.as_slice().starts_with(b"HEAD ");
                    self.inbuf.clear();
                    let r = response::error(st, 1, head_only, true);
                    if let Some(out) = log.as_deref_mut() {
                        self.log_line(out, &line, &r);
                    }
                    self.queue(r);
                }
            }
        }
    }

    /// Bytes in memory that the queued responses still hold.
    fn queued_mem(&self) -> u64 {
        self.out
            .iter()
            .flat_map(|p| &p.pieces)
            .map(|piece| match piece {
                Piece::Mem(a) => a.len() as u64,
                Piece::File { .. } => 0,
            })
            .sum()
    }

    fn log_line(&self, out: &mut Vec<u8>, request_line: &[u8], r: &Response) {
        // The head starts `HTTP/1.1 NNN `.
        let status = r.head.get(9..12).unwrap_or(b"000");
        crate::log::line(out, self.peer, request_line, status, r.body.len());
    }

    fn consume(&mut self, n: usize) {
        let len = self.inbuf.len();
        self.inbuf.as_mut_slice().copy_within(n..len, 0);
        self.inbuf.truncate(len - n);
    }

    fn queue(&mut self, r: Response) {
        let mut pieces = VecDeque::new();
        flatten(r.body, &mut pieces);
        self.out.push_back(Pending {
            head: r.head,
            head_off: 0,
            pieces,
            awaited: None,
            since: Instant::now(),
        });
        if r.close {
            self.closing = true;
        }
    }

    /// The response is sent and the connection ends: shut the server's
    /// side, and read (and drop) what the client still sends until it
    /// closes, so that its unread bytes do not turn the close into a reset
    /// that would destroy the response in flight.
    ///
    /// When nothing of the client's is left unread — no bytes in the
    /// buffer or the socket, no body owed — it is closed at once, as
    /// nginx does (its lingering close is for clients that may still be
    /// sending): a `Connection: close` request costs no further turn.
    fn start_lingering(&mut self) -> State {
        if let Some(tls) = self.tls.as_mut().filter(|_| !self.tls_closed) {
            // The session's end first (its alert written as the queue
            // was: the caller comes back here once it has gone).
            tls.send_close_notify();
            self.tls_closed = true;
            match self.flush_tls() {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return State::Waiting,
                Err(_) => return State::Closed,
            }
        }
        if self.read_done {
            return State::Closed;
        }
        let nothing_left = self.inbuf.is_empty()
            && self.discard == 0
            && self.collecting.is_none()
            && rustix::io::ioctl_fionread(&self.sock).is_ok_and(|n| n == 0);
        if nothing_left {
            if self.held_back {
                // The held bytes and the FIN go now, in one segment: a
                // byte the client sends between here and the close can
                // then turn the close into a reset only after the whole
                // response left, never before (the kernel drops what
                // is unsent when it resets).
                let _ = self.sock.shutdown(std::net::Shutdown::Write);
            }
            return State::Closed;
        }
        if self.sock.shutdown(std::net::Shutdown::Write).is_err() {
            return State::Closed;
        }
        let now = Instant::now();
        self.lingering = Some(now);
        self.last_activity = now;
        self.linger()
    }

    fn linger(&mut self) -> State {
        for _ in 0..16 {
            self.inbuf.clear();
            match self.sock.read(self.inbuf.spare_capacity_mut()) {
                Ok(0) => return State::Closed,
                Ok(_) => self.last_activity = Instant::now(),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return State::Waiting,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return State::Closed,
            }
        }
        self.inbuf.clear();
        State::More
    }
}
