//! Programs behind the server (RFC 3875's "gateways"): CGI/1.1 programs
//! run a process per request (`classic`), FastCGI application servers
//! such as php-fpm (`fastcgi`), and long-lived programs on ferry's ipc
//! (`ipc`) — the IO-Lite paper's CGI, whose bodies reach the client from
//! the program's own buffers without a copy.
//!
//! ```text
//!  Conn: head ─► route() ─► body read (≤ body_max) ─► Job
//!     classic: a helper thread runs it (blocking, with timeouts)
//!     FastCGI: the worker's own loop connects, sends, reads the records
//!     ipc: the worker's own loop sends it and waits for the reply's packet
//!  reply (CGI response: header block, then body) ─► reply::respond
//!     ─► the Conn's awaited slot filled ─► the worker told (Waker)
//! ```
//!
//! The server extends no trust to a program's output: a program that
//! cannot be started, dies (by a signal), writes something that is not a
//! CGI response, or writes more than [`OUTPUT_MAX`] costs its request a
//! 502; one that sends nothing for the gateway timeout, a 504. Either
//! way the connection and the server go on.

pub(crate) mod classic;
pub(crate) mod env;
pub(crate) mod fastcgi;
pub(crate) mod helpers;
pub(crate) mod ipc;
pub(crate) mod reply;

use crate::config::Config;
use crate::response::Response;
use crate::site::Site;
use crate::status::Status;
use crate::target::Target;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A program's output (header block and body) may take this many bytes
/// at most; past it the request is a 502.
pub(crate) const OUTPUT_MAX: usize = 64 << 20;

/// Which program answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An executable below a `--cgi` prefix, a process per request.
    Classic,
    /// The FastCGI server of `Config::fastcgi[i]`.
    FastCgi(usize),
    /// The ipc program of `Config::ipc_cgi[i]`.
    Ipc(usize),
}

/// Where a request goes: the program, and how its path splits into the
/// script's part and the rest (RFC 3875, 4.1.5 and 4.1.13).
#[derive(Debug, Clone)]
pub(crate) struct Route {
    pub kind: Kind,
    /// The script's URL path (`/cgi-bin/env.cgi`), decoded.
    pub script_name: Vec<u8>,
    /// What follows it (`/a/b`), decoded; empty if nothing.
    pub path_info: Vec<u8>,
    /// The script's file (absolute; none for an ipc program).
    pub script_file: Option<PathBuf>,
}

/// Whether `req`'s target goes to a program: `None` for a static file,
/// else the route or the status that refuses it (404 for no such script,
/// 403 for one that cannot be run).
pub(crate) fn route(site: &Site, cfg: &Config, t: &Target) -> Option<Result<Route, Status>> {
    if cfg.cgi.is_empty() && cfg.fastcgi.is_empty() && cfg.ipc_cgi.is_empty() {
        return None;
    }
    let parts: Vec<&[u8]> = t
        .rel
        .components()
        .map(|c| c.as_os_str().as_bytes())
        .collect();
    for (i, p) in cfg.ipc_cgi.iter().enumerate() {
        let pre = prefix_parts(&p.prefix);
        if parts.starts_with(&pre) {
            return Some(Ok(Route {
                kind: Kind::Ipc(i),
                script_name: join(&pre),
                path_info: join_tail(&parts[pre.len()..], t.slash),
                script_file: None,
            }));
        }
    }
    for c in &cfg.cgi {
        let pre = prefix_parts(c);
        if parts.starts_with(&pre) {
            if parts.len() == pre.len() {
                // The directory of programs itself: never listed.
                return Some(Err(Status::Forbidden));
            }
            // A directory below it (or a FIFO): nothing to run, nothing
            // listed.
            let found = find_script(site, &parts, pre.len(), t.slash, |_| true, Kind::Classic);
            return Some(found.and_then(|r| r.ok_or(Status::Forbidden)));
        }
    }
    for (i, f) in cfg.fastcgi.iter().enumerate() {
        let ext = f.ext.as_bytes();
        let fits = |p: &[u8]| p.len() > ext.len() && p.ends_with(ext);
        if let Some(k) = parts.iter().position(|p| fits(p)) {
            // A directory whose name ends so is walked through: a file
            // below it that is no script is served as files are.
            return find_script(site, &parts, k, t.slash, fits, Kind::FastCgi(i)).transpose();
        }
    }
    None
}

fn prefix_parts(prefix: &str) -> Vec<&[u8]> {
    prefix
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .map(str::as_bytes)
        .collect()
}

fn join(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in parts {
        out.push(b'/');
        out.extend_from_slice(p);
    }
    out
}

fn join_tail(parts: &[&[u8]], slash: bool) -> Vec<u8> {
    let mut out = join(parts);
    if slash {
        out.push(b'/');
    }
    out
}

/// The first regular file among `parts[..=k]`, `parts[..=k+1]`, … whose
/// last part `fits`: the script (it must be executable for a CGI
/// program); what follows it is the path info. `Ok(None)`: the walk
/// met something else than a directory first, or no file at all.
fn find_script(
    site: &Site,
    parts: &[&[u8]],
    from: usize,
    slash: bool,
    fits: impl Fn(&[u8]) -> bool,
    kind: Kind,
) -> Result<Option<Route>, Status> {
    use rustix::fs::{FileType, OFlags};
    for k in from..parts.len() {
        let rel: PathBuf = parts[..=k]
            .iter()
            .map(|p| Path::new(std::ffi::OsStr::from_bytes(p)))
            .collect();
        let fd = match site.open_beneath(&rel, OFlags::PATH) {
            Ok(fd) => fd,
            Err(e) => return Err(crate::files::status_of(e)),
        };
        let st = rustix::fs::fstat(&fd).map_err(|_| Status::InternalError)?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Directory => continue,
            FileType::RegularFile if fits(parts[k]) => {
                if kind == Kind::Classic && st.st_mode & 0o111 == 0 {
                    return Err(Status::Forbidden);
                }
                return Ok(Some(Route {
                    kind,
                    script_name: join(&parts[..=k]),
                    path_info: join_tail(&parts[k + 1..], slash),
                    script_file: Some(site.root_path.join(&rel)),
                }));
            }
            _ => return Ok(None),
        }
    }
    Ok(None)
}

/// A request for a program, its body read.
pub(crate) struct Job {
    pub route: Route,
    /// The meta-variables (RFC 3875, 4.1), built from the head.
    pub env: env::Vars,
    pub body: Vec<u8>,
    pub head_only: bool,
    pub minor: u8,
    pub close: bool,
}

/// Where a response that comes later is put: the connection's queue
/// holds one, the program's runner the other.
#[derive(Clone)]
pub(crate) struct Awaited(Arc<Mutex<Option<Response>>>);

impl Awaited {
    pub(crate) fn new() -> Awaited {
        Awaited(Arc::new(Mutex::new(None)))
    }

    pub(crate) fn fill(&self, r: Response) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
    }

    /// Whether nobody waits for it any more (its connection closed).
    pub(crate) fn abandoned(&self) -> bool {
        Arc::strong_count(&self.0) == 1
    }

    /// The response, once it came.
    pub(crate) fn take(&self) -> Option<Response> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// Tells a worker which connections have responses ready: their indices,
/// and a wake-up of its poll.
pub(crate) struct Notify {
    waker: mio::Waker,
    ready: Mutex<Vec<usize>>,
}

impl Notify {
    pub(crate) fn new(waker: mio::Waker) -> Notify {
        Notify {
            waker,
            ready: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn wake(&self) -> std::io::Result<()> {
        self.waker.wake()
    }

    pub(crate) fn ready(&self, conn: usize) {
        self.ready
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(conn);
        let _ = self.waker.wake();
    }

    /// Moves the ready connections' indices into `out`.
    pub(crate) fn drain_into(&self, out: &mut Vec<usize>) {
        out.append(&mut self.ready.lock().unwrap_or_else(|p| p.into_inner()));
    }
}

/// What a connection needs to hand requests to programs: the worker's
/// programs and helpers, and how to tell it a response came.
pub(crate) struct Dispatch<'a> {
    pub cfg: &'a Config,
    pub helpers: &'a helpers::Helpers,
    /// The CGI programs running, killed when the server stops.
    pub groups: &'a classic::Groups,
    pub notify: &'a Arc<Notify>,
    pub programs: &'a mut [ipc::Program],
    /// The worker's FastCGI exchanges under way.
    pub fastcgi: &'a mut fastcgi::exchange::Exchanges,
    pub registry: &'a mio::Registry,
    /// Connections whose responses came in the meantime.
    pub ready: &'a mut Vec<usize>,
}

impl Dispatch<'_> {
    /// Whether the request for `target` goes to a program (see [`route`]).
    pub(crate) fn route(&self, site: &Site, target: &str) -> Option<Result<Route, Status>> {
        if self.cfg.cgi.is_empty() && self.cfg.fastcgi.is_empty() && self.cfg.ipc_cgi.is_empty() {
            return None;
        }
        // A target that does not resolve is answered as for a file.
        let t = crate::target::resolve(target).ok()?;
        route(site, self.cfg, &t)
    }

    pub(crate) fn body_max(&self) -> u64 {
        self.cfg.body_max
    }

    /// Hands `job` (of connection `conn`) to its program: the response
    /// comes in the slot returned (at once, if the program cannot take it).
    pub(crate) fn run(&mut self, job: Job, conn: usize) -> Awaited {
        let awaited = Awaited::new();
        let timeout = self.cfg.gateway_timeout;
        match job.route.kind {
            Kind::Ipc(i) => {
                let Some(p) = self.programs.get_mut(i) else {
                    awaited.fill(ipc::refused(Status::InternalError, &job));
                    return awaited;
                };
                if let Err(st) = p.submit(self.registry, &job, awaited.clone(), conn, self.ready) {
                    awaited.fill(ipc::refused(st, &job));
                }
            }
            Kind::FastCgi(i) => {
                let Some(f) = self.cfg.fastcgi.get(i) else {
                    awaited.fill(crate::response::error(
                        Status::InternalError,
                        job.minor,
                        job.head_only,
                        job.close,
                    ));
                    return awaited;
                };
                if let Err(st) =
                    self.fastcgi
                        .start(self.registry, &f.addr, &job, awaited.clone(), conn)
                {
                    awaited.fill(crate::response::error(
                        st,
                        job.minor,
                        job.head_only,
                        job.close,
                    ));
                }
            }
            Kind::Classic => {
                let (slot, notify) = (awaited.clone(), self.notify.clone());
                let groups = self.groups.clone();
                let (head_only, minor, close) = (job.head_only, job.minor, job.close);
                let queued = std::time::Instant::now();
                let taken = self.helpers.run(move || {
                    if slot.abandoned() {
                        // Its client went away while it waited for a
                        // helper: nothing is run for nobody.
                        return;
                    }
                    if queued.elapsed() >= timeout {
                        // Every helper was busy for a whole timeout.
                        slot.fill(crate::response::error(
                            Status::ServiceUnavailable,
                            minor,
                            head_only,
                            close,
                        ));
                        notify.ready(conn);
                        return;
                    }
                    slot.fill(match classic::run(&job, timeout, &groups) {
                        Ok(out) => reply::respond(out, head_only, minor, close),
                        Err(st) => crate::response::error(st, minor, head_only, close),
                    });
                    notify.ready(conn);
                });
                if !taken {
                    awaited.fill(crate::response::error(
                        Status::ServiceUnavailable,
                        minor,
                        head_only,
                        close,
                    ));
                }
            }
        }
        awaited
    }
}
