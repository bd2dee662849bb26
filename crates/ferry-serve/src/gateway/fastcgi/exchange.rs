//! FastCGI exchanges in a worker's event loop: the connection to the
//! application server is non-blocking and watched by the worker's poll,
//! the request's records go as the socket takes them, and the output's
//! records are read and scanned as they come. No helper thread and no
//! hop between threads: the response is in the connection's slot in the
//! same turn as the END_REQUEST record that finishes it.
//!
//! An application server that cannot be reached, ends the connection
//! early, breaks the protocol or sends more than [`OUTPUT_MAX`] costs
//! the request a 502; one that sends nothing for the gateway timeout (or
//! takes four of them for the whole exchange, as CGI programs may), a
//! 504.

use super::{encode, new_chunk, Records};
use crate::config::GatewayAddr;
use crate::gateway::{reply, Awaited, Job, OUTPUT_MAX};
use crate::response::error;
use crate::status::Status;
use ferry::{Aggregate, BufMut};
use mio::event::Source;
use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

/// Exchanges' tokens start here: above every connection's (a worker's
/// connections are far fewer), below the ipc programs' and the waker's
/// (at the top of the range).
pub(crate) const FIRST_TOKEN: usize = usize::MAX / 2;

/// Bytes of output one exchange reads in one turn; past them it waits
/// for the next turn, so that one fast application server cannot hold
/// the worker.
const TURN_BYTES: usize = 1 << 20;

enum Sock {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Sock {
    fn connect(addr: &GatewayAddr) -> io::Result<Sock> {
        Ok(match addr {
            GatewayAddr::Tcp(a) => Sock::Tcp(TcpStream::connect(*a)?),
            // A full queue of connections is EAGAIN here, at once: the
            // application server is that far behind (502, as nginx).
            GatewayAddr::Unix(p) => Sock::Unix(UnixStream::connect(p)?),
        })
    }

    fn source(&mut self) -> &mut dyn Source {
        match self {
            Sock::Tcp(s) => s,
            Sock::Unix(s) => s,
        }
    }

    /// A connection still being made (TCP): its error once it failed.
    fn take_error(&self) -> io::Result<Option<io::Error>> {
        match self {
            Sock::Tcp(s) => s.take_error(),
            Sock::Unix(s) => s.take_error(),
        }
    }

    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.read(b),
            Sock::Unix(s) => s.read(b),
        }
    }

    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.write(b),
            Sock::Unix(s) => s.write(b),
        }
    }
}

/// One request on its way through an application server.
struct Exchange {
    sock: Sock,
    /// The request's records, and how far they went.
    request: Vec<u8>,
    sent: usize,
    records: Records,
    output: Aggregate,
    chunk: BufMut,
    awaited: Awaited,
    conn: usize,
    head_only: bool,
    minor: u8,
    close: bool,
    began: Instant,
    last_activity: Instant,
    /// What the application server is, for the error log.
    addr: GatewayAddr,
    /// The request could not be sent whole (the peer stopped reading).
    send_error: Option<io::Error>,
}

/// How a turn of an exchange ended.
enum Turn {
    /// It waits for its socket.
    Waiting,
    /// It has more to read now (its turn's bytes are spent).
    More,
    /// It is over: the response (or the error status) is known.
    Done(Result<Aggregate, Status>),
}

impl Exchange {
    fn turn(&mut self) -> Turn {
        let failed = |addr: &GatewayAddr, what: &str, e: io::Error| {
            eprintln!("ferry serve: FastCGI {addr:?}: {what}: {e}");
            Turn::Done(Err(Status::BadGateway))
        };
        while self.sent < self.request.len() {
            match self.sock.write(&self.request[self.sent..]) {
                Ok(n) => {
                    self.sent += n;
                    self.last_activity = Instant::now();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A TCP connection still being made: its writable event
                // comes back here.
                Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                    return match self.sock.take_error() {
                        Ok(Some(e)) | Err(e) => failed(&self.addr, "connect", e),
                        Ok(None) => Turn::Waiting,
                    }
                }
                // The application server stopped reading (it may answer
                // without reading a body it does not want, then close):
                // what it sent is read, and only a response that does not
                // end well is its 502.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
                    ) =>
                {
                    self.send_error = Some(e);
                    self.sent = self.request.len();
                }
                Err(e) => return failed(&self.addr, "send", e),
            }
        }
        if self.sent == self.request.len() && !self.request.is_empty() {
            // Sent whole: its memory goes now, not with the exchange.
            self.request = Vec::new();
            self.sent = 0;
        }
        let mut read = 0;
        loop {
            if read >= TURN_BYTES {
                return Turn::More;
            }
            let n = match self.sock.read(self.chunk.spare_capacity_mut()) {
                Ok(0) => {
                    match &self.send_error {
                        Some(e) => eprintln!("ferry serve: FastCGI {:?}: send: {e}", self.addr),
                        None => eprintln!(
                            "ferry serve: FastCGI {:?}: the connection ended before the request did",
                            self.addr
                        ),
                    }
                    return Turn::Done(Err(Status::BadGateway));
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Turn::Waiting,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::NotConnected => return Turn::Waiting,
                Err(e) => return failed(&self.addr, "receive", e),
            };
            read += n;
            self.last_activity = Instant::now();
            let from = self.chunk.len();
            self.chunk.commit(n);
            let ended = match self.records.scan(&self.chunk.as_slice()[from..], from) {
                Ok(e) => e,
                Err(st) => return Turn::Done(Err(st)),
            };
            if ended || self.chunk.tail_room() == 0 {
                let next = match new_chunk() {
                    Ok(c) => c,
                    Err(st) => return Turn::Done(Err(st)),
                };
                let full = std::mem::replace(&mut self.chunk, next).freeze();
                self.records.settle(&full, &mut self.output);
                if self.output.len() > OUTPUT_MAX {
                    eprintln!(
                        "ferry serve: FastCGI {:?}: more than {OUTPUT_MAX} bytes of output",
                        self.addr
                    );
                    return Turn::Done(Err(Status::BadGateway));
                }
            }
            if ended {
                if !self.records.errors.is_empty() {
                    eprintln!(
                        "ferry serve: FastCGI {:?}: {}",
                        self.addr,
                        String::from_utf8_lossy(&self.records.errors).trim_end()
                    );
                }
                return Turn::Done(Ok(std::mem::take(&mut self.output)));
            }
        }
    }

    /// Answers the connection: the program's response, or `status`.
    fn answer(self, out: Result<Aggregate, Status>, ready: &mut Vec<usize>) {
        self.awaited.fill(match out {
            Ok(out) => reply::respond(out, self.head_only, self.minor, self.close),
            Err(st) => error(st, self.minor, self.head_only, self.close),
        });
        ready.push(self.conn);
    }
}

/// A worker's FastCGI exchanges under way.
#[derive(Default)]
pub(crate) struct Exchanges {
    slots: Vec<Option<Exchange>>,
    free: Vec<usize>,
    /// Exchanges whose turn ended with more to read.
    more: Vec<usize>,
}

impl Exchanges {
    /// Starts `job` on the application server at `addr`; its response
    /// fills `awaited` later (the connection `conn` is pushed on `ready`
    /// then). Err: the status to answer with now.
    pub(crate) fn start(
        &mut self,
        registry: &Registry,
        addr: &GatewayAddr,
        job: &Job,
        awaited: Awaited,
        conn: usize,
    ) -> Result<(), Status> {
        let mut sock = Sock::connect(addr).map_err(|e| {
            eprintln!("ferry serve: FastCGI {addr:?}: connect: {e}");
            Status::BadGateway
        })?;
        let k = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        if let Err(e) = registry.register(
            sock.source(),
            Token(FIRST_TOKEN + k),
            Interest::READABLE | Interest::WRITABLE,
        ) {
            eprintln!("ferry serve: FastCGI {addr:?}: watching the connection: {e}");
            self.free.push(k);
            return Err(Status::InternalError);
        }
        let chunk = match new_chunk() {
            Ok(c) => c,
            Err(st) => {
                self.free.push(k);
                return Err(st);
            }
        };
        let now = Instant::now();
        self.slots[k] = Some(Exchange {
            sock,
            request: encode(job),
            sent: 0,
            records: Records::default(),
            output: Aggregate::new(),
            chunk,
            awaited,
            conn,
            head_only: job.head_only,
            minor: job.minor,
            close: job.close,
            began: now,
            last_activity: now,
            addr: addr.clone(),
            send_error: None,
        });
        // The socket is writable at once (its event comes too, but the
        // request need not wait a turn for it).
        self.more.push(k);
        Ok(())
    }

    /// Whether an exchange has more to do without waiting for its socket.
    pub(crate) fn pending(&self) -> bool {
        !self.more.is_empty()
    }

    /// The poll reported exchange `token`'s socket.
    pub(crate) fn on_ready(&mut self, token: Token, ready: &mut Vec<usize>) {
        self.work(token.0 - FIRST_TOKEN, ready);
    }

    /// Gives the exchanges that had more to do their turn.
    pub(crate) fn run_pending(&mut self, ready: &mut Vec<usize>) {
        let mut more = std::mem::take(&mut self.more);
        more.sort_unstable();
        more.dedup();
        for k in more {
            self.work(k, ready);
        }
    }

    fn work(&mut self, k: usize, ready: &mut Vec<usize>) {
        let Some(x) = self.slots.get_mut(k).and_then(Option::as_mut) else {
            return;
        };
        if x.awaited.abandoned() {
            // Its client went away: nothing more is read for nobody.
            self.end(k);
            return;
        }
        match x.turn() {
            Turn::Waiting => {}
            Turn::More => self.more.push(k),
            Turn::Done(out) => {
                if let Some(x) = self.end(k) {
                    x.answer(out, ready);
                }
            }
        }
    }

    /// Ends exchange `k` (closing its socket takes it out of the poll).
    fn end(&mut self, k: usize) -> Option<Exchange> {
        let x = self.slots.get_mut(k)?.take()?;
        self.free.push(k);
        Some(x)
    }

    /// Ends the exchanges whose clients went away, and answers 504 for
    /// those whose application server sent nothing for `timeout` (or has
    /// taken `total` for the whole exchange).
    pub(crate) fn sweep(&mut self, timeout: Duration, total: Duration, ready: &mut Vec<usize>) {
        for k in 0..self.slots.len() {
            let Some(x) = &self.slots[k] else { continue };
            if x.awaited.abandoned() {
                self.end(k);
                continue;
            }
            let silent = x.last_activity.elapsed() >= timeout;
            if silent || x.began.elapsed() >= total {
                eprintln!(
                    "ferry serve: FastCGI {:?}: no whole response in {:?}",
                    x.addr,
                    if silent { timeout } else { total }
                );
                if let Some(x) = self.end(k) {
                    x.answer(Err(Status::GatewayTimeout), ready);
                }
            }
        }
    }
}
