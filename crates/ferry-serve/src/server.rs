//! The server: listeners bound at start (so that a busy port is a
//! start-up error), and one worker thread per `--workers`, each an epoll
//! event loop (`mio`) with its own `SO_REUSEPORT` listener on every
//! address — the kernel spreads new connections over the workers.
//!
//! epoll, not io_uring: a static file's body goes by `sendfile` or one
//! `writev`, one system call either way, and a readiness loop keeps a
//! connection's state in one place. io_uring's batching could save only
//! the system calls' entry and exit and epoll's own work: about 4 % of a
//! worker's CPU with keep-alive and 6 % with a connection per request
//! (docs/BENCHMARKS.md, "iolite http: epoll or io_uring", 2026-11-29).

use crate::config::Config;
use crate::conn::{Conn, State};
use crate::gateway::classic::{Groups, TOTAL_TIMEOUTS};
use crate::gateway::fastcgi::exchange::{Exchanges, FIRST_TOKEN as FIRST_FASTCGI};
use crate::gateway::helpers::Helpers;
use crate::gateway::ipc::Program;
use crate::gateway::{Dispatch, Notify};
use crate::log::AccessLog;
use crate::request;
use crate::site::Site;
use ferry::BufMut;
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token, Waker};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const WAKER: Token = Token(usize::MAX);

/// After `accept` fails for want of descriptors or memory, it is tried
/// again this much later (the listener's readiness will not be signalled
/// again for the connections already waiting).
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// How long the kernel holds back a new connection that has sent nothing.
const DEFER_ACCEPT: Duration = Duration::from_secs(1);

/// Request-head buffers a worker keeps for its next connections (8 KiB
/// each: 2 MiB at most).
const MAX_SPARE_HEADS: usize = 256;

/// A stopping server gives a client still sending its request head this
/// long before closing its connection.
const STOP_HEAD_GRACE: Duration = Duration::from_secs(2);

/// A running server.
///
/// ```no_run
/// # fn main() -> std::io::Result<()> {
/// let mut cfg = ferry_serve::Config::new("/srv/www");
/// cfg.listen = vec!["127.0.0.1:0".parse().unwrap()];
/// let server = ferry_serve::Server::start(cfg)?;
/// println!("serving on {}", server.local_addrs()[0]);
/// server.shutdown();
/// # Ok(()) }
/// ```
pub struct Server {
    addrs: Vec<SocketAddr>,
    log: Option<Arc<AccessLog>>,
    stop: Arc<AtomicBool>,
    wakers: Vec<Arc<Notify>>,
    workers: Vec<JoinHandle<()>>,
    /// The CGI programs running.
    groups: Groups,
}

impl Server {
    /// Opens the directory, binds every address (a port of 0 gets one
    /// from the kernel, the same for every worker) and starts the
    /// workers. Errors name what failed: the directory, or the address.
    pub fn start(cfg: Config) -> io::Result<Server> {
        let site = Arc::new(Site::open(&cfg)?);
        let tls = cfg
            .tls
            .as_ref()
            .map(crate::tls::server_config)
            .transpose()?;
        let log = match &cfg.access_log {
            Some(p) => Some(Arc::new(AccessLog::open(p)?)),
            None => None,
        };
        let workers = cfg.workers.max(1);
        // Listeners per worker, per address.
        let mut per_worker: Vec<Vec<std::net::TcpListener>> =
            (0..workers).map(|_| Vec::new()).collect();
        let mut addrs = Vec::with_capacity(cfg.listen.len());
        for &want in &cfg.listen {
            if want.port() != 0 {
                check_free(want)?;
            }
            let first = bind(want)?;
            let addr = first.local_addr()?;
            addrs.push(addr);
            per_worker[0].push(first);
            for w in per_worker.iter_mut().skip(1) {
                w.push(bind(addr)?);
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let mut wakers = Vec::with_capacity(workers);
        let mut handles = Vec::with_capacity(workers);
        let helpers = Helpers::default();
        let groups = Groups::default();
        for (i, listeners) in per_worker.into_iter().enumerate() {
            let poll = Poll::new()?;
            let notify = Arc::new(Notify::new(Waker::new(poll.registry(), WAKER)?));
            wakers.push(notify.clone());
            let mut programs = Vec::with_capacity(cfg.ipc_cgi.len());
            for (k, spec) in cfg.ipc_cgi.iter().enumerate() {
                let mut p = Program::new(spec.clone(), Token(WAKER.0 - 1 - k));
                p.start(poll.registry())?;
                programs.push(p);
            }
            let mut w = Worker {
                notify,
                helpers: helpers.clone(),
                groups: groups.clone(),
                programs,
                fastcgi: Exchanges::default(),
                due_programs: Vec::new(),
                ready: Vec::new(),
                poll,
                listeners: listeners.into_iter().map(TcpListener::from_std).collect(),
                conns: Vec::new(),
                free: Vec::new(),
                spare_heads: Vec::new(),
                nodelay_each: None,
                accept_retry: None,
                log: log.clone(),
                log_lines: Vec::new(),
                site: site.clone(),
                cfg: cfg.clone(),
                tls: tls.clone(),
                stop: stop.clone(),
            };
            handles.push(
                std::thread::Builder::new()
                    .name(format!("ferry-serve-{i}"))
                    .spawn(move || w.run())?,
            );
        }
        Ok(Server {
            addrs,
            log,
            stop,
            wakers,
            workers: handles,
            groups,
        })
    }

    /// The addresses listened on (ports resolved).
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Opens the access log's path anew (after a log rotator moved the
    /// file away: the CLI does on SIGHUP). Nothing to do without a log.
    pub fn reopen_logs(&self) -> io::Result<()> {
        match &self.log {
            Some(l) => l.reopen(),
            None => Ok(()),
        }
    }

    /// A flag that, once set, shuts the server down as
    /// [`shutdown`](Self::shutdown) does (for a signal handler).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Stops accepting, lets the responses under way finish (idle
    /// connections close), and waits for the workers.
    pub fn shutdown(self) {
        self.stop.store(true, Ordering::SeqCst);
        for w in &self.wakers {
            let _ = w.wake();
        }
        self.wait();
    }

    /// Waits for the workers (until the stop flag is set and they
    /// finish); then no CGI program the server started lives on.
    pub fn wait(self) {
        for h in self.workers {
            let _ = h.join();
        }
        self.groups.kill_all();
    }
}

/// Fails (`EADDRINUSE`, naming `addr`) if something listens on `addr`
/// already — another `ferry serve` too: its listeners' `SO_REUSEPORT`
/// would otherwise let this server's join them and the kernel split the
/// connections between the two. A socket without `SO_REUSEPORT` cannot
/// bind beside any listener.
fn check_free(addr: SocketAddr) -> io::Result<()> {
    use socket2::{Domain, Socket, Type};
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{addr}: {e}"));
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None).map_err(named)?;
    // Connections of an earlier run in TIME_WAIT do not count.
    s.set_reuse_address(true).map_err(named)?;
    s.bind(&addr.into()).map_err(named)
}

/// A listening socket on `addr` with `SO_REUSEPORT` (and
/// `SO_REUSEADDR`), non-blocking, with `TCP_NODELAY` for its connections
/// and `TCP_DEFER_ACCEPT`.
fn bind(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{addr}: {e}"));
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None).map_err(named)?;
    s.set_reuse_address(true).map_err(named)?;
    s.set_reuse_port(true).map_err(named)?;
    s.set_nonblocking(true).map_err(named)?;
    // Accepted sockets take it from the listener (Linux copies the
    // listener's TCP options into each connection): no `setsockopt` per
    // connection. A worker checks that on its first connection.
    s.set_tcp_nodelay(true).map_err(named)?;
    // A connection reaches `accept` with its request (nginx's `deferred`):
    // no read that finds nothing and no wake-up per connection before it.
    // One that sends nothing comes after about a second and meets the
    // header timeout as any other.
    ferry::net::defer_accept(&s, DEFER_ACCEPT).map_err(named)?;
    s.bind(&addr.into()).map_err(named)?;
    s.listen(1024).map_err(named)?;
    Ok(s.into())
}

struct Worker {
    poll: Poll,
    notify: Arc<Notify>,
    helpers: Helpers,
    groups: Groups,
    /// The ipc programs' instances of this worker (tokens below WAKER's).
    programs: Vec<Program>,
    /// FastCGI exchanges under way (tokens from `FIRST_FASTCGI`).
    fastcgi: Exchanges,
    /// The ipc programs whose replies waited when the worker would have
    /// slept (indices in `programs`).
    due_programs: Vec<usize>,
    /// Connections whose programs' responses came (by the ipc programs).
    ready: Vec<usize>,
    listeners: Vec<TcpListener>,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    /// Request-head buffers of closed connections, for the next ones
    /// (a connection per request would otherwise allocate, fault in and
    /// give back a page-aligned buffer each time).
    spare_heads: Vec<BufMut>,
    /// Whether accepted sockets must be given `TCP_NODELAY` one by one:
    /// unknown until the first connection, then whether it came without.
    nodelay_each: Option<bool>,
    /// When to try `accept` again after it failed for want of resources.
    accept_retry: Option<Instant>,
    log: Option<Arc<AccessLog>>,
    /// Access-log lines of this turn, appended at its end.
    log_lines: Vec<u8>,
    site: Arc<Site>,
    cfg: Config,
    /// The HTTPS session configuration, when the server speaks HTTPS.
    tls: Option<Arc<rustls::ServerConfig>>,
    stop: Arc<AtomicBool>,
}

impl Worker {
    fn run(&mut self) {
        for (i, l) in self.listeners.iter_mut().enumerate() {
            if self
                .poll
                .registry()
                .register(l, Token(i), Interest::READABLE)
                .is_err()
            {
                return;
            }
        }
        let n_listeners = self.listeners.len();
        let mut events = Events::with_capacity(1024);
        let mut more: Vec<usize> = Vec::new();
        let mut stopped_at: Option<Instant> = None;
        let mut last_sweep = Instant::now();
        loop {
            // Programs whose replies wait in their rings are taken now;
            // the others ring the poll's socket at their next reply.
            self.due_programs.clear();
            for (k, p) in self.programs.iter_mut().enumerate() {
                if p.will_wait() {
                    self.due_programs.push(k);
                }
            }
            let mut timeout =
                if more.is_empty() && !self.fastcgi.pending() && self.due_programs.is_empty() {
                    Duration::from_millis(500)
                } else {
                    Duration::ZERO
                };
            if let Some(at) = self.accept_retry {
                timeout = timeout.min(at.saturating_duration_since(Instant::now()));
            }
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    return;
                }
            }
            if stopped_at.is_none() && self.stop.load(Ordering::SeqCst) {
                stopped_at = Some(Instant::now());
                self.accept_retry = None;
                // Closed, not only left unwatched: new connections are
                // refused at once (not accepted by the kernel and left
                // waiting), and a new server may bind the port.
                for mut l in self.listeners.drain(..) {
                    let _ = self.poll.registry().deregister(&mut l);
                }
            }
            let stopping = stopped_at.is_some();
            let mut touched: Vec<usize> = std::mem::take(&mut more);
            if self.accept_retry.is_some_and(|at| at <= Instant::now()) {
                self.accept_retry = None;
                for l in 0..self.listeners.len() {
                    self.accept(l, &mut touched);
                }
            }
            let first_program = WAKER.0 - self.programs.len();
            for ev in events.iter() {
                let t = ev.token();
                if t == WAKER {
                    self.notify.drain_into(&mut touched);
                    continue;
                }
                if t.0 >= first_program {
                    let k = WAKER.0 - 1 - t.0;
                    if let Some(p) = self.programs.get_mut(k) {
                        p.on_ready(self.poll.registry(), &mut touched);
                    }
                    continue;
                }
                if t.0 >= FIRST_FASTCGI {
                    self.fastcgi.on_ready(t, &mut touched);
                    continue;
                }
                if t.0 < n_listeners {
                    if !stopping && t.0 < self.listeners.len() {
                        self.accept(t.0, &mut touched);
                    }
                    continue;
                }
                let i = t.0 - n_listeners;
                if let Some(c) = self.conns.get_mut(i).and_then(Option::as_mut) {
                    if ev.is_read_closed() {
                        c.saw_peer_close();
                    }
                    if ev.is_readable() || ev.is_error() {
                        c.saw_readable();
                    }
                }
                touched.push(i);
            }
            self.fastcgi.run_pending(&mut touched);
            for &k in &self.due_programs {
                if let Some(p) = self.programs.get_mut(k) {
                    p.on_ready(self.poll.registry(), &mut touched);
                }
            }
            touched.sort_unstable();
            touched.dedup();
            for i in touched {
                if let Some(c) = self.conns.get_mut(i).and_then(Option::as_mut) {
                    let lines = self.log.is_some().then_some(&mut self.log_lines);
                    let mut gw = Dispatch {
                        cfg: &self.cfg,
                        helpers: &self.helpers,
                        groups: &self.groups,
                        notify: &self.notify,
                        programs: &mut self.programs,
                        fastcgi: &mut self.fastcgi,
                        registry: self.poll.registry(),
                        ready: &mut self.ready,
                    };
                    match c.work(&self.site, &mut gw, lines) {
                        State::Waiting => {}
                        State::More => more.push(i),
                        State::Closed => self.close(i),
                    }
                }
            }
            // Responses that came while connections were worked on.
            more.append(&mut self.ready);
            if let Some(l) = &self.log {
                l.append(&mut self.log_lines);
            }
            if stopping || last_sweep.elapsed() >= Duration::from_secs(1) {
                last_sweep = Instant::now();
                self.sweep(stopped_at);
                more.append(&mut self.ready);
            }
            if stopping && self.conns.iter().all(Option::is_none) {
                for p in &mut self.programs {
                    p.close(self.poll.registry());
                }
                return;
            }
        }
    }

    fn accept(&mut self, l: usize, touched: &mut Vec<usize>) {
        // Connection tokens come after the listeners' (as many as at the
        // start: accept runs only while they are all there).
        let n_listeners = self.listeners.len();
        loop {
            let (sock, peer) = match self.listeners[l].accept() {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // Out of descriptors or memory (or a connection that
                // failed before it was taken): try again soon.
                Err(_) => {
                    let at = Instant::now() + ACCEPT_RETRY;
                    self.accept_retry = Some(self.accept_retry.map_or(at, |t| t.min(at)));
                    return;
                }
            };
            let open = self.conns.len() - self.free.len();
            if open >= self.cfg.max_connections && !self.close_longest_idle() {
                drop(sock);
                continue;
            }
            let each = *self
                .nodelay_each
                .get_or_insert_with(|| !sock.nodelay().unwrap_or(false));
            if each {
                let _ = sock.set_nodelay(true);
            }
            let i = match self.free.pop() {
                Some(i) => i,
                None => {
                    self.conns.push(None);
                    self.conns.len() - 1
                }
            };
            let head = match self.spare_heads.pop() {
                Some(b) => b,
                None => match BufMut::try_with_capacity_aligned(request::FIRST_HEAD, 4096) {
                    Ok(b) => b,
                    Err(_) => {
                        self.free.push(i);
                        continue;
                    }
                },
            };
            let Ok(mut c) = Conn::new(sock, peer, i, head, self.tls.as_ref()) else {
                self.free.push(i);
                continue;
            };
            if self
                .poll
                .registry()
                .register(
                    c.socket(),
                    Token(n_listeners + i),
                    Interest::READABLE | Interest::WRITABLE,
                )
                .is_err()
            {
                self.free.push(i);
                continue;
            }
            self.conns[i] = Some(c);
            // Bytes may have come with the connection.
            touched.push(i);
        }
    }

    /// Closes connection `i`. Closing its socket takes it out of the
    /// epoll set, with no `EPOLL_CTL_DEL` first — once no other process
    /// holds it: a CGI child being spawned holds a copy of every
    /// descriptor until it execs, and an event of the old socket may
    /// then come with the token of the connection that takes its place.
    /// Connections act on no event without looking at the socket itself
    /// (a read, a write), so such an event costs a system call at most.
    /// At the connection limit, makes room for a new connection as nginx
    /// does ("reusing connections"): the connection that has waited
    /// longest for a request with nothing under way and nothing to read
    /// is closed (a client
    /// retries a request it sends on a kept-alive connection the server
    /// closed). False when every connection is busy.
    fn close_longest_idle(&mut self) -> bool {
        let longest = self
            .conns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                c.as_ref()
                    .filter(|c| c.evictable())
                    .map(|c| (c.waiting_since(), i))
            })
            .min();
        match longest {
            Some((_, i)) => {
                self.close(i);
                true
            }
            None => false,
        }
    }

    fn close(&mut self, i: usize) {
        if let Some(c) = self.conns[i].take() {
            self.free.push(i);
            let head = c.into_head();
            // A buffer grown for a long head goes (spares stay 8 KiB).
            if self.spare_heads.len() < MAX_SPARE_HEADS && head.capacity() == request::FIRST_HEAD {
                self.spare_heads.push(head);
            }
        }
    }

    /// Closes connections past their timeouts; when stopping, the idle
    /// ones at once, those still sending a head after a short grace, and
    /// every one after the shutdown timeout. Programs that answer
    /// nothing for the gateway timeout are given up.
    fn sweep(&mut self, stopped_at: Option<Instant>) {
        let timeout = self.cfg.gateway_timeout;
        self.fastcgi
            .sweep(timeout, timeout * TOTAL_TIMEOUTS, &mut self.ready);
        for p in &mut self.programs {
            p.sweep(
                self.poll.registry(),
                self.cfg.gateway_timeout,
                &mut self.ready,
            );
        }
        let now = Instant::now();
        let stop_for = stopped_at.map(|t| now.saturating_duration_since(t));
        for i in 0..self.conns.len() {
            let Some(c) = &self.conns[i] else { continue };
            let close = c.expired(now, &self.cfg)
                || match stop_for {
                    None => false,
                    Some(d) => {
                        c.idle()
                            || (!c.sending() && d >= STOP_HEAD_GRACE)
                            || d >= self.cfg.shutdown_timeout
                    }
                };
            if close {
                self.close(i);
            }
        }
    }
}
