//! The server: listeners bound at start (so that a busy port is a
//! start-up error), and one worker thread per `--workers`, each an epoll
//! event loop (`mio`) with its own `SO_REUSEPORT` listener on every
//! address — the kernel spreads new connections over the workers.
//!
//! epoll, not io_uring: a static file's body goes by `sendfile` or one
//! `writev`, one system call either way, and a readiness loop keeps a
//! connection's state in one place; io_uring's batching would save the
//! `epoll_wait` per wake-up, which is not where the time goes when the
//! files are cached.

use crate::config::Config;
use crate::conn::{Conn, State};
use crate::site::Site;
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token, Waker};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const WAKER: Token = Token(usize::MAX);

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
    stop: Arc<AtomicBool>,
    wakers: Vec<Arc<Waker>>,
    workers: Vec<JoinHandle<()>>,
}

impl Server {
    /// Opens the directory, binds every address (a port of 0 gets one
    /// from the kernel, the same for every worker) and starts the
    /// workers. Errors name what failed: the directory, or the address.
    pub fn start(cfg: Config) -> io::Result<Server> {
        let site = Arc::new(Site::open(&cfg)?);
        let workers = cfg.workers.max(1);
        // Listeners per worker, per address.
        let mut per_worker: Vec<Vec<std::net::TcpListener>> =
            (0..workers).map(|_| Vec::new()).collect();
        let mut addrs = Vec::with_capacity(cfg.listen.len());
        for &want in &cfg.listen {
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
        for (i, listeners) in per_worker.into_iter().enumerate() {
            let poll = Poll::new()?;
            let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
            wakers.push(waker);
            let mut w = Worker {
                poll,
                listeners: listeners.into_iter().map(TcpListener::from_std).collect(),
                conns: Vec::new(),
                free: Vec::new(),
                site: site.clone(),
                cfg: cfg.clone(),
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
            stop,
            wakers,
            workers: handles,
        })
    }

    /// The addresses listened on (ports resolved).
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
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

    /// Waits for the workers (until the stop flag is set and they finish).
    pub fn wait(self) {
        for h in self.workers {
            let _ = h.join();
        }
    }
}

/// A listening socket on `addr` with `SO_REUSEPORT` (and
/// `SO_REUSEADDR`), non-blocking.
fn bind(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{addr}: {e}"));
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None).map_err(named)?;
    s.set_reuse_address(true).map_err(named)?;
    s.set_reuse_port(true).map_err(named)?;
    s.set_nonblocking(true).map_err(named)?;
    s.bind(&addr.into()).map_err(named)?;
    s.listen(1024).map_err(named)?;
    Ok(s.into())
}

struct Worker {
    poll: Poll,
    listeners: Vec<TcpListener>,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    site: Arc<Site>,
    cfg: Config,
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
        let mut stopping = false;
        let mut last_sweep = Instant::now();
        loop {
            let timeout = if more.is_empty() {
                Duration::from_millis(500)
            } else {
                Duration::ZERO
            };
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    return;
                }
            }
            if !stopping && self.stop.load(Ordering::SeqCst) {
                stopping = true;
                for l in &mut self.listeners {
                    let _ = self.poll.registry().deregister(l);
                }
            }
            let mut touched: Vec<usize> = std::mem::take(&mut more);
            for ev in events.iter() {
                let t = ev.token();
                if t == WAKER {
                    continue;
                }
                if t.0 < n_listeners {
                    if !stopping {
                        self.accept(t.0, &mut touched);
                    }
                    continue;
                }
                touched.push(t.0 - n_listeners);
            }
            touched.sort_unstable();
            touched.dedup();
            for i in touched {
                if let Some(c) = self.conns.get_mut(i).and_then(Option::as_mut) {
                    match c.work(&self.site) {
                        State::Waiting => {}
                        State::More => more.push(i),
                        State::Closed => self.close(i),
                    }
                }
            }
            if stopping || last_sweep.elapsed() >= Duration::from_secs(1) {
                last_sweep = Instant::now();
                self.sweep(stopping);
            }
            if stopping && self.conns.iter().all(Option::is_none) {
                return;
            }
        }
    }

    fn accept(&mut self, l: usize, touched: &mut Vec<usize>) {
        let n_listeners = self.listeners.len();
        loop {
            let (sock, _) = match self.listeners[l].accept() {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // Out of descriptors or memory: try again at the next event.
                Err(_) => return,
            };
            let open = self.conns.len() - self.free.len();
            if open >= self.cfg.max_connections {
                drop(sock);
                continue;
            }
            let _ = sock.set_nodelay(true);
            let Ok(mut c) = Conn::new(sock) else {
                continue;
            };
            let i = match self.free.pop() {
                Some(i) => i,
                None => {
                    self.conns.push(None);
                    self.conns.len() - 1
                }
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

    fn close(&mut self, i: usize) {
        if let Some(mut c) = self.conns[i].take() {
            let _ = self.poll.registry().deregister(c.socket());
            self.free.push(i);
        }
    }

    /// Closes connections past their timeouts; when stopping, the idle
    /// ones too.
    fn sweep(&mut self, stopping: bool) {
        let now = Instant::now();
        for i in 0..self.conns.len() {
            let Some(c) = &self.conns[i] else { continue };
            let idle = now.duration_since(c.last_activity);
            let expired = if c.sending() {
                idle >= self.cfg.send_timeout
            } else {
                (stopping && !c.mid_request()) || idle >= self.cfg.header_timeout
            };
            if expired || (stopping && !c.sending() && idle >= Duration::from_secs(5)) {
                self.close(i);
            }
        }
    }
}
