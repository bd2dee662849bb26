//! Request heads: parsed by `httparse`, within nginx's default limits,
//! into what the static-file path needs.

use crate::status::Status;
use std::time::SystemTime;

/// A request head may take this many bytes at most, and each of its
/// lines `MAX_LINE` (nginx's `large_client_header_buffers 4 8k`): a
/// request line longer than a line's limit is 414, a longer header line
/// or head 431.
pub(crate) const MAX_HEAD: usize = 32 << 10;

/// The longest request line or header line.
pub(crate) const MAX_LINE: usize = 8 << 10;

/// What a connection's head buffer holds at first; it grows to
/// `MAX_HEAD` for a head that needs it.
pub(crate) const FIRST_HEAD: usize = 8 << 10;

/// Header lines parsed without a second try (most heads have a few
/// dozen); a head with more is parsed again with room for `MAX_HEADERS`.
const USUAL_HEADERS: usize = 100;

/// Header lines a head may have at most (431 past it): as many as short
/// lines fit in `MAX_HEAD`, as nginx counts none.
pub(crate) const MAX_HEADERS: usize = MAX_HEAD / 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Head,
    /// Programs take it; a static file answers 405.
    Post,
    /// Refused everywhere (405): it would echo a request's credentials.
    Trace,
    /// Refused everywhere (405): for proxies.
    Connect,
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
    pub if_match: Option<String>,
    pub if_unmodified_since: Option<SystemTime>,
    pub if_none_match: Option<String>,
    pub if_modified_since: Option<SystemTime>,
    pub range: Option<String>,
    pub if_range: Option<String>,
    /// `Accept-Encoding`, as sent.
    pub accept_encoding: Option<String>,
    /// What follows the head.
    pub body: BodyKind,
    /// `Expect: 100-continue`: the client may hold its body back until
    /// told to send it (it is never told: the body is not wanted).
    pub expect_continue: bool,
}

/// The body a request head announces (RFC 9112, 6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyKind {
    /// No body.
    None,
    /// `Content-Length` bytes (above 0).
    Length(u64),
    /// `Transfer-Encoding: chunked`: its end is known only by decoding.
    Chunked,
}

/// What the bytes received so far make.
// Returned once per request and taken apart at once: boxing the request
// would cost an allocation per request for nothing.
#[allow(clippy::large_enum_variant)]
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
    let refused = match parse_as_sent(buf) {
        Ok(p) => return p,
        Err(e) => e,
    };
    // httparse knows HTTP/1.0 and 1.1 only. As nginx does, a later 1.x is
    // answered as 1.1 (RFC 9110, 6.2: same major, a later minor), and a
    // later major version is 505. The request line must be whole to tell:
    // httparse may refuse the version before its line ends.
    let Some(lf) = buf.iter().position(|&b| b == b'\n') else {
        return if refused != httparse::Error::Version {
            Parsed::Bad(Status::BadRequest)
        } else if buf.len() < MAX_HEAD && longest_line(buf) <= MAX_LINE {
            Parsed::Partial
        } else {
            Parsed::Bad(too_long(buf))
        };
    };
    let line_end = if lf > 0 && buf[lf - 1] == b'\r' {
        lf - 1
    } else {
        lf
    };
    let line = &buf[..line_end];
    let Some(sp) = line.iter().rposition(|&b| b == b' ') else {
        return Parsed::Bad(Status::BadRequest);
    };
    let version = &line[sp + 1..];
    if version == b"HTTP/1.1" || version == b"HTTP/1.0" {
        // A known version: httparse refused something else.
        return Parsed::Bad(Status::BadRequest);
    }
    match major_version(version) {
        Some(1) => {
            let mut copy = Vec::with_capacity(buf.len() + 8);
            copy.extend_from_slice(&buf[..sp + 1]);
            copy.extend_from_slice(b"HTTP/1.1");
            copy.extend_from_slice(&buf[line_end..]);
            match parse_as_sent(&copy) {
                // The head's length in the bytes as sent.
                Ok(Parsed::Done(req, n)) => Parsed::Done(req, n + version.len() - 8),
                Ok(other) => other,
                Err(_) => Parsed::Bad(Status::BadRequest),
            }
        }
        Some(_) => Parsed::Bad(Status::VersionNotSupported),
        None => Parsed::Bad(Status::BadRequest),
    }
}

/// The major version of `HTTP/d+.d+` (None: not a version).
fn major_version(v: &[u8]) -> Option<u32> {
    let v = v.strip_prefix(b"HTTP/")?;
    let dot = v.iter().position(|&b| b == b'.')?;
    let (major, minor) = (&v[..dot], &v[dot + 1..]);
    let digits = |d: &[u8]| !d.is_empty() && d.len() <= 3 && d.iter().all(u8::is_ascii_digit);
    if !digits(major) || !digits(minor) {
        return None;
    }
    std::str::from_utf8(major).ok()?.parse().ok()
}

/// Parses the head as its bytes are; Err: httparse refused it (a version
/// it does not know, among other things).
fn parse_as_sent(buf: &[u8]) -> Result<Parsed, httparse::Error> {
    let mut headers = [httparse::EMPTY_HEADER; USUAL_HEADERS];
    match parse_with(buf, &mut headers) {
        Err(httparse::Error::TooManyHeaders) => {
            // Room for the lines the bytes hold (not MAX_HEADERS at every
            // read of a head that comes a byte at a time).
            let lines = buf.iter().filter(|&&b| b == b'\n').count();
            let mut more = vec![httparse::EMPTY_HEADER; lines.clamp(USUAL_HEADERS, MAX_HEADERS)];
            match parse_with(buf, &mut more) {
                Err(httparse::Error::TooManyHeaders) => Ok(Parsed::Bad(Status::HeadersTooLarge)),
                r => r,
            }
        }
        r => r,
    }
}

fn parse_with<'b>(
    buf: &'b [u8],
    headers: &mut [httparse::Header<'b>],
) -> Result<Parsed, httparse::Error> {
    let mut req = httparse::Request::new(headers);
    let n = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            if buf.len() < MAX_HEAD && longest_line(buf) <= MAX_LINE {
                return Ok(Parsed::Partial);
            }
            return Ok(Parsed::Bad(too_long(buf)));
        }
        Err(e) => return Err(e),
    };
    if longest_line(&buf[..n]) > MAX_LINE {
        return Ok(Parsed::Bad(too_long(buf)));
    }
    Ok(finish(req, n, buf))
}

/// The length of the longest line in `buf` (a last one unfinished
/// included), its line end not counted; for a `buf` no longer than
/// `MAX_LINE`, its length (all that the limit needs).
fn longest_line(buf: &[u8]) -> usize {
    if buf.len() <= MAX_LINE {
        // No line can be longer than all of it (the usual head).
        return buf.len();
    }
    buf.split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l).len())
        .max()
        .unwrap_or(0)
}

/// What the server uses of a parsed head of `n` bytes.
fn finish(req: httparse::Request<'_, '_>, n: usize, buf: &[u8]) -> Parsed {
    if n > MAX_HEAD {
        return Parsed::Bad(too_long(buf));
    }
    let (Some(method), Some(path), Some(minor)) = (req.method, req.path, req.version) else {
        return Parsed::Bad(Status::BadRequest);
    };
    let method = match method {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        "TRACE" => Method::Trace,
        "CONNECT" => Method::Connect,
        _ => Method::Other,
    };
    let mut r = Request {
        method,
        target: path.to_string(),
        minor,
        keep_alive: minor >= 1,
        if_match: None,
        if_unmodified_since: None,
        if_none_match: None,
        if_modified_since: None,
        range: None,
        if_range: None,
        accept_encoding: None,
        body: BodyKind::None,
        expect_continue: false,
    };
    let mut host = false;
    let mut length: Option<u64> = None;
    let mut chunked: Option<bool> = None;
    for h in req.headers.iter() {
        if is(h.name, "host") {
            // Any bytes will do (nothing is looked up by the host), but
            // only one Host.
            if host {
                return Parsed::Bad(Status::BadRequest);
            }
            host = true;
            continue;
        }
        let Ok(v) = std::str::from_utf8(h.value) else {
            // Only the headers read here need to be text.
            if ["content-length", "transfer-encoding"]
                .iter()
                .any(|w| is(h.name, w))
            {
                return Parsed::Bad(Status::BadRequest);
            }
            continue;
        };
        let v = v.trim();
        if is(h.name, "connection") {
            for token in v.split(',').map(str::trim) {
                if token.eq_ignore_ascii_case("close") {
                    r.keep_alive = false;
                } else if token.eq_ignore_ascii_case("keep-alive") && minor == 0 {
                    r.keep_alive = true;
                }
            }
        } else if is(h.name, "if-match") {
            join_list(&mut r.if_match, v);
        } else if is(h.name, "if-unmodified-since") {
            r.if_unmodified_since = httpdate::parse_http_date(v).ok();
        } else if is(h.name, "if-none-match") {
            r.if_none_match = Some(v.to_string());
        } else if is(h.name, "if-modified-since") {
            r.if_modified_since = httpdate::parse_http_date(v).ok();
        } else if is(h.name, "range") {
            r.range = Some(v.to_string());
        } else if is(h.name, "if-range") {
            r.if_range = Some(v.to_string());
        } else if is(h.name, "accept-encoding") {
            join_list(&mut r.accept_encoding, v);
        } else if is(h.name, "content-length") {
            // Digits only (no sign, no list), and one Content-Length: a
            // second one, even equal, is refused as nginx does (a proxy
            // in front may have read the other).
            if length.is_some() || v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                return Parsed::Bad(Status::BadRequest);
            }
            match v.parse::<u64>() {
                Ok(len) => length = Some(len),
                Err(_) => return Parsed::Bad(Status::BadRequest),
            }
        } else if is(h.name, "transfer-encoding") {
            // RFC 9112, 6.1: chunked must come last; codings this server
            // does not know are 501.
            let last = v.rsplit(',').next().unwrap_or("").trim();
            // Exactly `chunked` (the only coding served): another coding
            // is not known here, and chunked twice is forbidden.
            let codings = v
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .count();
            if chunked.is_some() || codings != 1 || !last.eq_ignore_ascii_case("chunked") {
                return Parsed::Bad(Status::NotImplemented);
            }
            chunked = Some(true);
        } else if is(h.name, "expect") {
            if v.eq_ignore_ascii_case("100-continue") {
                r.expect_continue = true;
            } else {
                return Parsed::Bad(Status::ExpectationFailed);
            }
        }
    }
    // HTTP/1.1 requires a Host (RFC 9112, 3.2).
    if minor >= 1 && !host {
        return Parsed::Bad(Status::BadRequest);
    }
    r.body = match (length, chunked) {
        // RFC 9112, 6.1: both is a smuggling attempt; a 1.0 request
        // cannot be chunked.
        (Some(_), Some(_)) => return Parsed::Bad(Status::BadRequest),
        (None, Some(_)) if minor == 0 => return Parsed::Bad(Status::BadRequest),
        (None, Some(_)) => BodyKind::Chunked,
        (Some(0), None) | (None, None) => BodyKind::None,
        (Some(n), None) => BodyKind::Length(n),
    };
    Parsed::Done(r, n)
}

/// Adds `v` to the list header `list` holds: several lines of a list
/// header make one list (RFC 9110, 5.3).
fn join_list(list: &mut Option<String>, v: &str) {
    match list {
        Some(a) => {
            a.push(',');
            a.push_str(v);
        }
        None => *list = Some(v.to_string()),
    }
}

fn is(name: &str, want: &str) -> bool {
    name.eq_ignore_ascii_case(want)
}

/// A head past a limit: 414 if its request line is longer than a line
/// may be, else 431.
fn too_long(buf: &[u8]) -> Status {
    // After the empty lines a client may send first; a line of MAX_LINE
    // bytes ends with its CRLF at most MAX_LINE + 2 bytes in.
    let start = buf.len() - buf.trim_ascii_start().len();
    let buf = &buf[start..];
    let line_end = buf[..buf.len().min(MAX_LINE + 2)]
        .iter()
        .position(|&b| b == b'\n');
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
    }

    #[test]
    fn the_body_a_head_announces() {
        let body = |s: &str| done(s).0.body;
        assert_eq!(body("GET / HTTP/1.1\r\nHost: h\r\n\r\n"), BodyKind::None);
        assert_eq!(
            body("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"),
            BodyKind::None
        );
        assert_eq!(
            body("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n"),
            BodyKind::Length(3)
        );
        assert_eq!(
            body("GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n"),
            BodyKind::Chunked
        );
        assert_eq!(
            bad(b"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n"),
            Status::BadRequest
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
        assert_eq!(
            bad(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
            Status::VersionNotSupported
        );
        // Versions: known once the request line is whole, however the
        // bytes come.
        assert!(matches!(parse(b"GET / HTTP/1.2"), Parsed::Partial));
        assert!(matches!(parse(b"GET / HTTP/2.0"), Parsed::Partial));
        for (head, rest) in [
            (&b"GET / HTTP/1.2\r\nHost: h\r\n\r\n"[..], 0),
            (b"GET / HTTP/1.10\nHost: h\n\nabc", 3),
            (b"GET / HTTP/1.2\nHost: h\n\n", 0),
        ] {
            match parse(head) {
                Parsed::Done(r, n) => {
                    assert_eq!((r.minor, head.len() - n), (1, rest), "{head:?}");
                }
                other => panic!("{head:?}: {other:?}"),
            }
        }
        assert_eq!(
            bad(b"GET / HTTP/3.0\nHost: h\n\n"),
            Status::VersionNotSupported
        );
        assert_eq!(
            bad(b"GET / HTTP/1.x\r\nHost: h\r\n\r\n"),
            Status::BadRequest
        );
        let long_bare = format!("GET / HTTP/1.1\nX: {}", "a".repeat(MAX_LINE));
        assert_eq!(bad(long_bare.as_bytes()), Status::HeadersTooLarge);
        assert_eq!(
            bad(b"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"),
            Status::NotImplemented
        );
        let long_line = format!("GET /{} HTTP/1.1\r\n", "a".repeat(MAX_LINE));
        assert_eq!(bad(long_line.as_bytes()), Status::UriTooLong);
        let long_head = format!("GET / HTTP/1.1\r\nX: {}\r\n", "a".repeat(MAX_LINE));
        assert_eq!(bad(long_head.as_bytes()), Status::HeadersTooLarge);
        // A request line of the longest length, then a header line past
        // it: the header is too large, not the line; empty lines first
        // change nothing.
        let target = "a".repeat(MAX_LINE - "GET / HTTP/1.1".len());
        let at_limit = format!(
            "GET /{target} HTTP/1.1\r\nX: {}\r\n\r\n",
            "b".repeat(MAX_LINE)
        );
        assert_eq!(at_limit.find("\r\n"), Some(MAX_LINE));
        assert_eq!(bad(at_limit.as_bytes()), Status::HeadersTooLarge);
        let late = format!("\r\n\r\nGET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_LINE));
        assert_eq!(bad(late.as_bytes()), Status::UriTooLong);
        let many: String = (0..MAX_HEADERS + 1)
            .map(|i| format!("X{i}: y\r\n"))
            .collect();
        let s = format!("GET / HTTP/1.1\r\nHost: h\r\n{many}\r\n");
        assert_eq!(bad(s.as_bytes()), Status::HeadersTooLarge);
    }

    #[test]
    fn other_methods_are_parsed_for_a_405() {
        assert_eq!(
            done("PUT / HTTP/1.1\r\nHost: h\r\n\r\n").0.method,
            Method::Other
        );
        assert_eq!(
            done("POST / HTTP/1.1\r\nHost: h\r\n\r\n").0.method,
            Method::Post
        );
        assert_eq!(
            done("HEAD / HTTP/1.1\r\nHost: h\r\n\r\n").0.method,
            Method::Head
        );
    }
}
