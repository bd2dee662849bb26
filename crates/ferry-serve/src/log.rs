//! The access log: one line per response in the Common Log Format
//! (`host - - [date] "request line" status bytes`), appended to a file
//! that `Server::reopen_logs` (the CLI's SIGHUP) opens anew, so that a
//! log rotator can move it away. Each worker gathers its lines and
//! appends them with one write per turn of its loop.

use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::net::SocketAddr;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

pub(crate) struct AccessLog {
    path: PathBuf,
    file: Mutex<File>,
}

fn open(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o644)
        .open(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

impl AccessLog {
    /// Opens (creates) the log at `path` for appending.
    pub(crate) fn open(path: &Path) -> io::Result<AccessLog> {
        Ok(AccessLog {
            path: path.to_path_buf(),
            file: Mutex::new(open(path)?),
        })
    }

    /// Opens the path anew (the old file, moved away, is closed).
    pub(crate) fn reopen(&self) -> io::Result<()> {
        let f = open(&self.path)?;
        *self.file.lock().unwrap_or_else(PoisonError::into_inner) = f;
        Ok(())
    }

    /// Appends `lines` (whole lines) in one write; the batch is emptied.
    /// A log that cannot be written loses the lines, never the responses.
    pub(crate) fn append(&self, lines: &mut Vec<u8>) {
        if lines.is_empty() {
            return;
        }
        let _ = self
            .file
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .write_all(lines);
        lines.clear();
    }
}

/// Adds one line for a response to `out`: the client, the request line
/// as sent (bytes other than printable ASCII, `"` and `\` as `\xHH`, as
/// nginx writes them), the status and the body's length.
pub(crate) fn line(
    out: &mut Vec<u8>,
    peer: Option<SocketAddr>,
    request_line: &[u8],
    status: &[u8],
    body: u64,
) {
    match peer {
        Some(a) => out.extend_from_slice(a.ip().to_string().as_bytes()),
        None => out.push(b'-'),
    }
    out.extend_from_slice(b" - - [");
    out.extend_from_slice(clf_date().as_bytes());
    out.extend_from_slice(b"] \"");
    for &b in request_line {
        if (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' {
            out.push(b);
        } else {
            out.extend_from_slice(format!("\\x{b:02X}").as_bytes());
        }
    }
    out.extend_from_slice(b"\" ");
    out.extend_from_slice(status);
    out.push(b' ');
    if body == 0 {
        out.push(b'-');
    } else {
        out.extend_from_slice(body.to_string().as_bytes());
    }
    out.push(b'\n');
}

/// `10/Oct/2000:13:55:36 +0000`, formatted once per second per thread.
fn clf_date() -> String {
    thread_local! {
        static CACHED: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
    }
    crate::response::once_per_second(&CACHED, |now| {
        // `Sun, 06 Nov 1994 08:49:37 GMT` → `06/Nov/1994:08:49:37 +0000`.
        let http = httpdate::fmt_http_date(now);
        let p: Vec<&str> = http.split(' ').collect();
        match p.as_slice() {
            [_, day, mon, year, time, _] => format!("{day}/{mon}/{year}:{time} +0000"),
            _ => http.clone(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_in_common_log_format_with_the_request_escaped() {
        let mut out = Vec::new();
        let peer: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        line(&mut out, Some(peer), b"GET /a\"b\x01 HTTP/1.1", b"404", 0);
        line(&mut out, None, b"GET / HTTP/1.1", b"200", 12);
        let s = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines[0].starts_with("127.0.0.1 - - ["), "{s}");
        assert!(
            lines[0].ends_with("] \"GET /a\\x22b\\x01 HTTP/1.1\" 404 -"),
            "{s}"
        );
        assert!(lines[1].starts_with("- - - ["), "{s}");
        assert!(lines[1].ends_with("\"GET / HTTP/1.1\" 200 12"), "{s}");
        let date = &lines[0][lines[0].find('[').unwrap() + 1..lines[0].find(']').unwrap()];
        assert!(date.ends_with(" +0000") && date.len() == 26, "{date}");
        assert_eq!(&date[2..3], "/");
        assert_eq!(&date[6..7], "/");
    }
}
