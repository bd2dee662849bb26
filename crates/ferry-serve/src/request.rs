//! Request heads: parsed by `httparse`, within nginx's default limits,
//! into what the static-file path needs.

use crate::status::Status;
use std::time::SystemTime;

/// A request head may take this many bytes at most (nginx's
/// `large_client_header_buffers 4 8k` gives each line 8 KiB): past it, a
/// request line still unfinished is 414, else the headers are 431.
pub(crate) const MAX_HEAD: usize = 8192;

/// Header lines a head may have at most (431 past it).
const MAX_HEADERS: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Head,
    /// Another method: 405, with `Allow`.
    Other,
}

/// What the server uses of a request head.
#[derive(Debug)]
pub(crate) struct Request {
    pub method: Method,
    /// The request target as sent (origin form, or absolute form).
    pub target: String,
    /// `HTTP/1.minor`.
    pub minor: u8,
    /// The connection stays open after the response.
    pub keep_alive: bool,
    pub if_none_match: Option<String>,
    pub if_modified_since: Option<SystemTime>,
    pub range: Option<String>,
    pub if_range: Option<String>,
    /// The request says it has a body (`Content-Length` above 0 or any
    /// `Transfer-Encoding`): not read here, so the connection closes after
    /// the response.
    pub has_body: bool,
}

/// What the bytes received so far make.
#[derive(Debug)]
pub(crate) enum Parsed {
    /// Not a whole head yet.
    Partial,
    /// A head of that many bytes.
    Done(Request, usize),
    /// A head the server refuses: the status to answer with, then close.
    Bad(Status),
}

/// Parses the head at the start of `buf`.
pub(crate) fn parse(buf: &[u8]) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let n = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            if buf.len() < MAX_HEAD {
                return Parsed::Partial;
            }
            return Parsed::Bad(too_long(buf));
        }
        Err(httparse::Error::TooManyHeaders) => return Parsed::Bad(Status::HeadersTooLarge),
        Err(_) => return Parsed::Bad(Status::BadRequest),
    };
    if n > MAX_HEAD {
        return Parsed::Bad(too_long(buf));
    }
    let (Some(method), Some(path), Some(minor)) = (req.method, req.path, req.version) else {
        return Parsed::Bad(Status::BadRequest);
    };
    let method = match method {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        _ => Method::Other,
    };
    let mut r = Request {
        method,
        target: path.to_string(),
        minor,
        keep_alive: minor >= 1,
        if_none_match: None,
        if_modified_since: None,
        range: None,
        if_range: None,
        has_body: false,
    };
    let mut host = false;
    for h in req.headers.iter() {
        let Ok(v) = std::str::from_utf8(h.value) else {
            // Only the headers read here need to be text.
            if is(h.name, "host") {
                return Parsed::Bad(Status::BadRequest);
            }
            continue;
        };
        let v = v.trim();
        if is(h.name, "host") {
            if host {
                return Parsed::Bad(Status::BadRequest);
            }
            host = true;
        } else if is(h.name, "connection") {
            for token in v.split(',').map(str::trim) {
                if token.eq_ignore_ascii_case("close") {
                    r.keep_alive = false;
                } else if token.eq_ignore_ascii_case("keep-alive") && minor == 0 {
                    r.keep_alive = true;
                }
            }
        } else if is(h.name, "if-none-match") {
            r.if_none_match = Some(v.to_string());
        } else if is(h.name, "if-modified-since") {
            r.if_modified_since = httpdate::parse_http_date(v).ok();
        } else if is(h.name, "range") {
            r.range = Some(v.to_string());
        } else if is(h.name, "if-range") {
            r.if_range = Some(v.to_string());
        } else if is(h.name, "content-length") {
            match v.parse::<u64>() {
                Ok(len) => r.has_body |= len > 0,
                Err(_) => return Parsed::Bad(Status::BadRequest),
            }
        } else if is(h.name, "transfer-encoding") {
            r.has_body = true;
        }
    }
    // HTTP/1.1 requires a Host (RFC 9112, 3.2).
    if minor >= 1 && !host {
        return Parsed::Bad(Status::BadRequest);
    }
    if r.has_body {
        r.keep_alive = false;
    }
    Parsed::Done(r, n)
}

fn is(name: &str, want: &str) -> bool {
    name.eq_ignore_ascii_case(want)
}

/// A head past the limit: 414 if its request line never ended, else 431.
fn too_long(buf: &[u8]) -> Status {
    let line_end = buf[..buf.len().min(MAX_HEAD)]
        .windows(2)
        .position(|w| w == b"\r\n");
    match line_end {
        None => Status::UriTooLong,
        Some(_) => Status::HeadersTooLarge,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(s: &str) -> (Request, usize) {
        match parse(s.as_bytes()) {
            Parsed::Done(r, n) => (r, n),
            other => panic!("{s:?}: {other:?}"),
        }
    }

    fn bad(s: &[u8]) -> Status {
        match parse(s) {
            Parsed::Bad(st) => st,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_whole_head_and_what_follows_it() {
        let s = "GET /a%20b?x=1 HTTP/1.1\r\nHost: h\r\nRange: bytes=0-1\r\n\r\nGET /next";
        let (r, n) = done(s);
        assert_eq!(&s[n..], "GET /next");
        assert_eq!(r.method, Method::Get);
        assert_eq!(r.target, "/a%20b?x=1");
        assert!(r.keep_alive);
        assert_eq!(r.range.as_deref(), Some("bytes=0-1"));
    }

    #[test]
    fn keep_alive_follows_the_version_and_connection_header() {
        assert!(!done("GET / HTTP/1.0\r\n\r\n").0.keep_alive);
        assert!(
            done("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
                .0
                .keep_alive
        );
        assert!(
            !done("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
                .0
                .keep_alive
        );
        assert!(
            !done("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n")
                .0
                .keep_alive
        );
    }

    #[test]
    fn malformed_and_oversized_heads_are_refused() {
        assert!(matches!(
            parse(b"GET / HTTP/1.1\r\nHost: h\r\n"),
            Parsed::Partial
        ));
        assert_eq!(bad(b"GET / HTTP/1.1\r\n\r\n"), Status::BadRequest);
        assert_eq!(
            bad(b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
            Status::BadRequest
        );
        assert_eq!(bad(b"G\0T / HTTP/1.1\r\n\r\n"), Status::BadRequest);
        assert_eq!(bad(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), Status::BadRequest);
        let long_line = format!("GET /{} HTTP/1.1\r\n", "a".repeat(MAX_HEAD));
        assert_eq!(bad(long_line.as_bytes()), Status::UriTooLong);
        let long_head = format!("GET / HTTP/1.1\r\nX: {}\r\n", "a".repeat(MAX_HEAD));
        assert_eq!(bad(long_head.as_bytes()), Status::HeadersTooLarge);
        let many: String = (0..MAX_HEADERS + 1)
            .map(|i| format!("X{i}: y\r\n"))
            .collect();
        let s = format!("GET / HTTP/1.1\r\nHost: h\r\n{many}\r\n");
        assert_eq!(bad(s.as_bytes()), Status::HeadersTooLarge);
    }

    #[test]
    fn other_methods_are_parsed_for_a_405() {
        assert_eq!(
            done("POST / HTTP/1.1\r\nHost: h\r\n\r\n").0.method,
            Method::Other
        );
        assert_eq!(
            done("HEAD / HTTP/1.1\r\nHost: h\r\n\r\n").0.method,
            Method::Head
        );
    }
}
