//! `ferry serve`: an HTTP/1.1 server of static files on ferry's I/O, after
//! the IO-Lite paper's Flash-Lite (section 4): small files from the
//! unified file cache ([`ferry::cache::FileCache`]), their bytes sent with
//! the response head by one gathered write, never copied into a response
//! buffer; large files by `sendfile`, their bytes never in this process;
//! strong `ETag`s of cached files from the checksum cache
//! ([`ferry::cache::Checksums`]), computed once per content.
//!
//! ```text
//!  worker (one thread, one epoll loop, its own SO_REUSEPORT listener)
//!    accept ─► Conn: read head (8 KiB page-aligned) ─► httparse
//!      ─► target: decode, resolve . and .. (never above the root)
//!      ─► openat2(root, RESOLVE_BENEATH) ─► fstat
//!      ─► ≤ 64 KiB: FileCache Aggregate ─┐        > 64 KiB: the File ─┐
//!                                         ▼                            ▼
//!          writev(head + cached extents)          writev(head), sendfile(file)
//! ```
//!
//! What it answers: `GET` and `HEAD` (others 405 with `Allow`), keep-alive
//! and pipelining, `Content-Length`, `Content-Type` by name, `Date`,
//! `Server`, `Last-Modified`, `ETag`, `If-None-Match` and
//! `If-Modified-Since` (304), `Range` and `If-Range` (206, several ranges
//! as `multipart/byteranges`, 416), `index.html`, listings (`--list`),
//! pre-compressed siblings (`.br`, `.zst`, `.gz`) by `Accept-Encoding`,
//! a redirect of `/dir` to `/dir/`; 400 for malformed requests (and a
//! `..` above the root), 414 and 431 past 8 KiB of head, 416 for byte
//! ranges that do not parse, 403 for links leading out of the root
//! (unless `--follow-symlinks`; a link that leads back in is followed)
//! and unreadable files, 404 (also for FIFOs and devices), 417 for an `Expect` other
//! than `100-continue`, 501 for a transfer coding other than chunked, 505
//! for HTTP/2 and later on this port. A connection must send a whole head
//! within the header timeout of when it began to wait for one; clients
//! that take nothing past the send timeout are closed. A request body of
//! up to 1 MiB is read and dropped (the connection goes on); after a
//! longer or chunked one, and after any answer that ends the connection,
//! the server shuts its side and reads what the client still sends
//! (a lingering close, as nginx's) so that no reset destroys the answer.
//!
//! ```no_run
//! # fn main() -> std::io::Result<()> {
//! let server = ferry_serve::Server::start(ferry_serve::Config::new("."))?;
//! server.wait();
//! # Ok(()) }
//! ```

pub mod cgi;
mod config;
mod conn;
mod encoding;
mod files;
mod gateway;
mod hot;
mod listing;
mod log;
mod ranges;
mod represent;
mod request;
mod response;
mod server;
mod site;
mod status;
mod target;
mod tls;

pub use config::{Config, FastCgi, GatewayAddr, IpcCgi};
pub use server::Server;
pub use tls::TlsFiles;
