//! The server's side of ipc CGI ([`crate::cgi`]): each worker starts its
//! own instance of every `--ipc-cgi` program, sends it requests on one
//! channel (its standard input) and takes replies from another (its
//! standard output), in its own event loop: the replies' socket is
//! watched by the worker's poll, and a reply is read when its packet
//! comes. A reply's body is the program's buffers, mapped read-only
//! here, and goes to the client from them.
//!
//! A program that dies, breaks the channel's protocol, or writes a reply
//! that is not a CGI response costs the requests it held a 502 (the
//! last, only that request); one that answers nothing for the gateway
//! timeout is killed, and its requests get a 504. Either way it is
//! started again (at most once a second).

use super::{reply, Awaited, Job};
use crate::config::IpcCgi;
use crate::response::{self, Response};
use crate::status::Status;
use ferry::ipc::{Receiver, Sender, SenderConfig, Socket};
use ferry::process::{Child, Spawn};
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// The requests' pool: slots of 64 KiB. A request (its variables and
/// body) must fit in it whole: a larger one is refused with 413.
const REQUEST_SLOTS: usize = 64;
const REQUEST_POOL: usize = REQUEST_SLOTS * (64 << 10);

/// A program is started again at most this often.
const RESTART_EVERY: Duration = Duration::from_secs(1);

/// A request on its way to a program, and where its reply goes.
struct Waiting {
    awaited: Awaited,
    conn: usize,
    head_only: bool,
    minor: u8,
    close: bool,
    since: Instant,
}

/// One program's instance, in one worker.
pub(crate) struct Program {
    spec: IpcCgi,
    token: Token,
    child: Option<Child>,
    tx: Option<Sender>,
    rx: Option<Receiver>,
    /// The replies' socket, until the program's pool came on it.
    hello: Option<Socket>,
    /// A copy of the replies' socket, registered with the poll.
    watched: Option<OwnedFd>,
    waiting: VecDeque<Waiting>,
    started: Option<Instant>,
}

impl Program {
    pub(crate) fn new(spec: IpcCgi, token: Token) -> Program {
        Program {
            spec,
            token,
            child: None,
            tx: None,
            rx: None,
            hello: None,
            watched: None,
            waiting: VecDeque::new(),
            started: None,
        }
    }

    /// Starts the program (its channels' sockets as standard input and
    /// output), its replies' socket watched by `registry`.
    pub(crate) fn start(&mut self, registry: &Registry) -> io::Result<()> {
        self.started = Some(Instant::now());
        let (req_here, req_there) = ferry::ipc::pair()?;
        let (rep_here, rep_there) = ferry::ipc::pair()?;
        // Spawned, not forked: see `classic::run`.
        let child = Spawn::new(&self.spec.program)
            .inherit_env()
            .env("FERRY_CGI", "1")
            .stdin(OwnedFd::from(req_there))
            .stdout(OwnedFd::from(rep_there))
            .spawn()?;
        self.child = Some(child);
        let tx = Sender::new(
            req_here,
            SenderConfig {
                slot_size: 64 << 10,
                slots: REQUEST_SLOTS,
                // A program that reads no request is one that hangs: its
                // requests end by the gateway timeout, not by a wait here.
                timeout: Some(Duration::ZERO),
                // Rings: while the program is awake, requests and
                // releases pass with no system call; the worker rings
                // it only when it sleeps.
                ring: true,
            },
        );
        let watched = rep_here.as_fd().try_clone_to_owned()?;
        registry.register(
            &mut SourceFd(&watched.as_raw_fd()),
            self.token,
            Interest::READABLE,
        )?;
        self.watched = Some(watched);
        self.hello = Some(rep_here);
        self.tx = Some(tx?);
        Ok(())
    }

    /// Sends `job` to the program; its reply fills `awaited` later (the
    /// worker told, by `conn`). Err: the status to answer with now.
    pub(crate) fn submit(
        &mut self,
        registry: &Registry,
        job: &Job,
        awaited: Awaited,
        conn: usize,
        ready: &mut Vec<usize>,
    ) -> Result<(), Status> {
        if self.tx.is_none() {
            self.restart(registry);
        }
        let Some(tx) = &mut self.tx else {
            return Err(Status::BadGateway);
        };
        let msg = crate::cgi::encode_request(&job.env, &job.body);
        if msg.len() > REQUEST_POOL {
            // More than the channel's pool holds, ever.
            return Err(Status::PayloadTooLarge);
        }
        match tx.send_bytes(&msg) {
            Ok(()) => {}
            // No slot or no room: the program is that far behind.
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                return Err(Status::ServiceUnavailable)
            }
            // This message only (nothing of it was sent).
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                return Err(Status::ServiceUnavailable)
            }
            Err(e) => {
                eprintln!("ferry serve: {}: {e}", self.spec.program.display());
                self.fail(registry, Status::BadGateway, ready);
                return Err(Status::BadGateway);
            }
        }
        self.waiting.push_back(Waiting {
            awaited,
            conn,
            head_only: job.head_only,
            minor: job.minor,
            close: job.close,
            since: Instant::now(),
        });
        Ok(())
    }

    /// The replies' socket is readable: takes every reply there, fills
    /// the responses, and names their connections in `ready`.
    pub(crate) fn on_ready(&mut self, registry: &Registry, ready: &mut Vec<usize>) {
        if self.rx.is_none() {
            let Some(sock) = self.hello.take() else {
                return;
            };
            // SAFETY: the peer is the program this worker started with
            // this socket as its standard output, the operator's own
            // (`--ipc-cgi`), which links `ferry_serve::cgi` and sends
            // with a ferry `Sender`. A program that broke the protocol
            // could change only the bytes of its own replies while they
            // are sent; it cannot make this process read outside its pool
            // (see `ferry::ipc`).
            match unsafe { Receiver::new(sock, Some(Duration::from_secs(1))) } {
                Ok(mut rx) => {
                    rx.set_timeout(Some(Duration::ZERO));
                    self.rx = Some(rx);
                }
                Err(e) => {
                    eprintln!("ferry serve: {}: {e}", self.spec.program.display());
                    self.fail(registry, Status::BadGateway, ready);
                    return;
                }
            }
        }
        loop {
            let Some(rx) = &mut self.rx else { return };
            match rx.recv() {
                Ok(Some(msg)) => {
                    let Some(w) = self.waiting.pop_front() else {
                        eprintln!(
                            "ferry serve: {}: a reply to no request",
                            self.spec.program.display()
                        );
                        self.fail(registry, Status::BadGateway, ready);
                        return;
                    };
                    w.awaited
                        .fill(reply::respond(msg, w.head_only, w.minor, w.close));
                    ready.push(w.conn);
                }
                Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                    // With rings, the ring is empty and its doorbells
                    // taken (the worker says it will wait before it
                    // sleeps: `will_wait`).
                    if rx.has_rings() {
                        return;
                    }
                    // A receive with no time to wait takes one packet and
                    // stops if it did not end a message: the poll is
                    // edge-triggered, so what is queued still must be
                    // taken now.
                    let queued = self
                        .watched
                        .as_ref()
                        .and_then(|w| rustix::io::ioctl_fionread(w).ok())
                        .unwrap_or(0);
                    if queued == 0 {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(None) | Err(_) => {
                    eprintln!(
                        "ferry serve: {}: the program ended",
                        self.spec.program.display()
                    );
                    self.fail(registry, Status::BadGateway, ready);
                    return;
                }
            }
        }
    }

    /// Before the worker sleeps: says so to the replies' channel (its
    /// program then rings the socket the poll watches at its next
    /// reply); true if replies wait already (take them now, with
    /// [`on_ready`](Self::on_ready), rather than sleep).
    pub(crate) fn will_wait(&mut self) -> bool {
        match &mut self.rx {
            // An error is for `recv` to meet and report.
            Some(rx) => rx.will_wait().unwrap_or(true),
            None => false,
        }
    }

    /// Gives up on a program that answered nothing for `timeout`.
    pub(crate) fn sweep(&mut self, registry: &Registry, timeout: Duration, ready: &mut Vec<usize>) {
        if self
            .waiting
            .front()
            .is_some_and(|w| w.since.elapsed() >= timeout)
        {
            eprintln!(
                "ferry serve: {}: no reply in {timeout:?}; killed",
                self.spec.program.display()
            );
            self.fail(registry, Status::GatewayTimeout, ready);
        }
    }

    /// Ends the instance: its waiting requests answered with `status`.
    fn fail(&mut self, registry: &Registry, status: Status, ready: &mut Vec<usize>) {
        for w in self.waiting.drain(..) {
            w.awaited
                .fill(response::error(status, w.minor, w.head_only, w.close));
            ready.push(w.conn);
        }
        self.stop(registry);
    }

    /// Ends the program in order, as the server stops: its requests'
    /// channel closed (its `serve` returns), a second to exit, then
    /// killed.
    pub(crate) fn close(&mut self, registry: &Registry) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.close();
        }
        if let Some(c) = &mut self.child {
            let deadline = Instant::now() + Duration::from_secs(1);
            while Instant::now() < deadline {
                if !matches!(c.try_wait(), Ok(None)) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        self.stop(registry);
    }

    /// Kills and reaps the program, closes its channels.
    pub(crate) fn stop(&mut self, registry: &Registry) {
        if let Some(w) = &self.watched {
            let _ = registry.deregister(&mut SourceFd(&w.as_raw_fd()));
        }
        self.end();
    }

    /// [`stop`](Self::stop), the poll gone (its registrations with it).
    fn end(&mut self) {
        // The program first: with it gone, closing the channels waits
        // for nothing (a receiver's releases have nobody to wait for).
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.watched = None;
        self.hello = None;
        if let Some(tx) = self.tx.take() {
            tx.abort();
        }
        self.rx = None;
    }

    /// Starts the program again, unless it was started within the last
    /// [`RESTART_EVERY`].
    fn restart(&mut self, registry: &Registry) {
        if self.started.is_some_and(|t| t.elapsed() < RESTART_EVERY) {
            return;
        }
        self.stop(registry);
        if let Err(e) = self.start(registry) {
            eprintln!("ferry serve: {e}");
            self.stop(registry);
        }
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        self.end();
    }
}

/// A response for a request whose program could not take it.
pub(crate) fn refused(status: Status, job: &Job) -> Response {
    response::error(status, job.minor, job.head_only, job.close)
}
