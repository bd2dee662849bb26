//! How a server is set up.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Where an application server (FastCGI) listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatewayAddr {
    /// A TCP address (`127.0.0.1:9000`).
    Tcp(SocketAddr),
    /// A Unix socket's path (`/run/php/php-fpm.sock`).
    Unix(PathBuf),
}

impl std::str::FromStr for GatewayAddr {
    type Err = String;

    /// `HOST:PORT`, or a path (absolute, or starting `unix:`).
    ///
    /// ```
    /// use ferry_serve::GatewayAddr;
    /// assert_eq!("unix:/run/a.sock".parse(), Ok(GatewayAddr::Unix("/run/a.sock".into())));
    /// assert!(matches!("127.0.0.1:9000".parse(), Ok(GatewayAddr::Tcp(_))));
    /// assert!("nowhere".parse::<GatewayAddr>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<GatewayAddr, String> {
        if let Some(p) = s.strip_prefix("unix:") {
            return Ok(GatewayAddr::Unix(p.into()));
        }
        if s.starts_with('/') {
            return Ok(GatewayAddr::Unix(s.into()));
        }
        s.parse()
            .map(GatewayAddr::Tcp)
            .map_err(|_| format!("not an address (HOST:PORT, or a socket's path): {s}"))
    }
}

/// Files whose names end in `ext` are run by the FastCGI application
/// server at `addr` (php-fpm for `.php`).
#[derive(Debug, Clone)]
pub struct FastCgi {
    /// The ending, with its dot (`.php`).
    pub ext: String,
    pub addr: GatewayAddr,
}

/// Requests below `prefix` go to `program`, a long-lived process on
/// ferry's ipc ([`crate::cgi`]): one instance per worker, started with
/// the server and again if it dies.
#[derive(Debug, Clone)]
pub struct IpcCgi {
    /// The URL path it answers below (`/app`).
    pub prefix: String,
    pub program: PathBuf,
}

/// A server's settings (`ferry serve`'s options).
///
/// ```
/// let c = ferry_serve::Config::new(".");
/// assert_eq!(c.listen, vec!["127.0.0.1:8080".parse().unwrap()]);
/// assert!(!c.list);
/// ```
#[derive(Debug, Clone)]
pub struct Config {
    /// The directory served.
    pub root: PathBuf,
    /// Addresses to listen on (each worker listens on every one, with
    /// `SO_REUSEPORT`).
    pub listen: Vec<SocketAddr>,
    /// Worker threads, one event loop each.
    pub workers: usize,
    /// Directory listings for directories without `index.html`.
    pub list: bool,
    /// Symbolic links are followed wherever they lead (by default a link
    /// that leads out of the root is refused with 403).
    pub follow_symlinks: bool,
    /// Bytes the file cache may hold.
    pub cache_bytes: usize,
    /// A connection that sends no whole request head for this long (a new
    /// one, or one kept alive between requests) is closed (nginx's
    /// `client_header_timeout` and `keepalive_timeout`).
    pub header_timeout: Duration,
    /// A response whose client takes nothing for this long is dropped
    /// (nginx's `send_timeout`).
    pub send_timeout: Duration,
    /// Open connections per worker at most; past it the connection that
    /// has waited longest for a request with nothing under way is closed
    /// to make room (nginx's reuse of kept-alive connections), or, when
    /// every one is busy, the new one.
    pub max_connections: usize,
    /// A graceful stop lets responses under way finish for this long at
    /// most; then every connection closes. (Idle connections close at
    /// once, and clients still sending a request head get two seconds.)
    pub shutdown_timeout: Duration,
    /// The access log (Common Log Format), appended to; none by default.
    pub access_log: Option<PathBuf>,
    /// URL path prefixes (`/cgi-bin`) below which executable files run as
    /// CGI/1.1 programs (RFC 3875), a process per request.
    pub cgi: Vec<String>,
    /// FastCGI application servers, by file ending.
    pub fastcgi: Vec<FastCgi>,
    /// Long-lived programs on ferry's ipc, by URL path prefix.
    pub ipc_cgi: Vec<IpcCgi>,
    /// A program (CGI, FastCGI, ipc) that sends nothing for this long is
    /// given up: 504 (nginx's `fastcgi_read_timeout`).
    pub gateway_timeout: Duration,
    /// Request bodies (to programs) of more bytes are refused with 413
    /// (nginx's `client_max_body_size`).
    pub body_max: u64,
    /// HTTPS on every listener, with this certificate and key; plain HTTP
    /// when none.
    pub tls: Option<crate::TlsFiles>,
}

impl Config {
    /// Serves `root` on 127.0.0.1:8080 with one worker per CPU.
    pub fn new(root: impl Into<PathBuf>) -> Config {
        Config {
            root: root.into(),
            listen: vec![SocketAddr::from(([127, 0, 0, 1], 8080))],
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            list: false,
            follow_symlinks: false,
            cache_bytes: 64 << 20,
            header_timeout: Duration::from_secs(60),
            send_timeout: Duration::from_secs(60),
            max_connections: 1024,
            shutdown_timeout: Duration::from_secs(30),
            access_log: None,
            cgi: Vec::new(),
            fastcgi: Vec::new(),
            ipc_cgi: Vec::new(),
            gateway_timeout: Duration::from_secs(60),
            body_max: 1 << 20,
            tls: None,
        }
    }
}
