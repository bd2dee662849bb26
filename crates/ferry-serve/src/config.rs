//! How a server is set up.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

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
    /// Open connections per worker at most; past it new ones are closed
    /// at once.
    pub max_connections: usize,
    /// A graceful stop lets responses under way finish for this long at
    /// most; then every connection closes. (Idle connections close at
    /// once, and clients still sending a request head get two seconds.)
    pub shutdown_timeout: Duration,
    /// The access log (Common Log Format), appended to; none by default.
    pub access_log: Option<PathBuf>,
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
        }
    }
}
