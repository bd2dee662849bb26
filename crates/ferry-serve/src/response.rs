//! Responses: a head (status line and headers, built in one buffer) and
//! a body that is nothing, bytes of the file cache (an `Aggregate`, sent
//! by one gathered write with the head) or a range of an open file (sent
//! by `sendfile`: its bytes never enter this process).

use crate::status::Status;
use ferry::Aggregate;
use std::cell::RefCell;
use std::fmt::Write as _;
use std::fs::File;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// What follows the head.
pub(crate) enum Body {
    Empty,
    /// Bytes in memory: cached extents of a file, or a page built here.
    Mem(Aggregate),
    /// `len` bytes of `file` from `off`, by `sendfile`.
    File {
        file: Arc<File>,
        off: u64,
        len: u64,
    },
    /// Several pieces in turn (a `multipart/byteranges` body).
    Parts(Vec<Body>),
}

impl Body {
    pub(crate) fn len(&self) -> u64 {
        match self {
            Body::Empty => 0,
            Body::Mem(a) => a.len() as u64,
            Body::File { len, .. } => *len,
            Body::Parts(p) => p.iter().map(Body::len).sum(),
        }
    }
}

/// A response ready to send.
pub(crate) struct Response {
    pub head: Vec<u8>,
    pub body: Body,
    /// The connection closes once it is sent.
    pub close: bool,
}

/// Builds a head: the status line, `Server`, `Date`, the `extra` headers
/// (each `Name: value`), `Content-Length` of `length` (none for 304), and
/// `Connection` as `close` and the version need.
pub(crate) fn head(
    status: Status,
    minor: u8,
    extra: &[(&str, &str)],
    length: u64,
    close: bool,
) -> Vec<u8> {
    let mut lines = String::with_capacity(128);
    for (k, v) in extra {
        let _ = write!(lines, "{k}: {v}\r\n");
    }
    let length = (status != Status::NotModified).then_some(length);
    head_lines(status.code(), status.reason(), minor, &lines, length, close)
}

/// [`head`] for any status: `lines` are whole header lines (each ending
/// `\r\n`); no `Content-Length` when `length` is `None`.
pub(crate) fn head_lines(
    code: u16,
    reason: &str,
    minor: u8,
    lines: &str,
    length: Option<u64>,
    close: bool,
) -> Vec<u8> {
    let mut h = String::with_capacity(lines.len() + 160);
    let _ = write!(
        h,
        "HTTP/1.1 {code} {reason}\r\nServer: ferry\r\nDate: {}\r\n{lines}",
        date_now()
    );
    if let Some(length) = length {
        let _ = write!(h, "Content-Length: {length}\r\n");
    }
    if close {
        h.push_str("Connection: close\r\n");
    } else if minor == 0 {
        h.push_str("Connection: keep-alive\r\n");
    }
    h.push_str("\r\n");
    h.into_bytes()
}

/// An error response with a small HTML page (none for HEAD).
pub(crate) fn error(status: Status, minor: u8, head_only: bool, close: bool) -> Response {
    error_with(status, minor, head_only, close, &[])
}

/// [`error`] with headers of its own (`Allow`, `Location`, `Content-Range`).
pub(crate) fn error_with(
    status: Status,
    minor: u8,
    head_only: bool,
    close: bool,
    extra: &[(&str, &str)],
) -> Response {
    let close = close || status.closes();
    let page = format!(
        "<html>\r\n<head><title>{c} {r}</title></head>\r\n<body>\r\n<center><h1>{c} {r}</h1></center>\r\n<hr><center>ferry</center>\r\n</body>\r\n</html>\r\n",
        c = status.code(),
        r = status.reason()
    );
    let mut headers: Vec<(&str, &str)> = vec![("Content-Type", "text/html")];
    headers.extend_from_slice(extra);
    Response {
        head: head(status, minor, &headers, page.len() as u64, close),
        body: if head_only {
            Body::Empty
        } else {
            Body::Mem(Aggregate::from(ferry::Buf::from(page.into_bytes())))
        },
        close,
    }
}

/// The `Date` header's value, formatted once per second per thread.
pub(crate) fn date_now() -> String {
    thread_local! {
        static CACHED: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
    }
    once_per_second(&CACHED, httpdate::fmt_http_date)
}

/// `format(now)`, kept in `cache` and formatted anew only when the second
/// changes.
pub(crate) fn once_per_second(
    cache: &'static std::thread::LocalKey<RefCell<(u64, String)>>,
    format: impl FnOnce(SystemTime) -> String,
) -> String {
    let now = SystemTime::now();
    let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    cache.with(|c| {
        let mut c = c.borrow_mut();
        if c.0 != secs {
            *c = (secs, format(now));
        }
        c.1.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_says_what_the_version_and_closing_need() {
        let h = String::from_utf8(head(Status::Ok, 1, &[("ETag", "\"x\"")], 5, false)).unwrap();
        assert!(h.starts_with("HTTP/1.1 200 OK\r\nServer: ferry\r\nDate: "));
        assert!(h.contains("\r\nETag: \"x\"\r\nContent-Length: 5\r\n\r\n"));
        assert!(!h.contains("Connection"));
        let h = String::from_utf8(head(Status::Ok, 0, &[], 0, false)).unwrap();
        assert!(h.contains("Connection: keep-alive\r\n"));
        let h = String::from_utf8(head(Status::NotModified, 1, &[], 9, true)).unwrap();
        assert!(!h.contains("Content-Length"));
        assert!(h.contains("Connection: close\r\n"));
    }

    #[test]
    fn an_error_that_distrusts_the_request_closes() {
        assert!(error(Status::BadRequest, 1, false, false).close);
        assert!(!error(Status::NotFound, 1, false, false).close);
        assert_eq!(error(Status::NotFound, 1, true, false).body.len(), 0);
        assert!(error(Status::NotFound, 1, false, false).body.len() > 0);
    }
}
