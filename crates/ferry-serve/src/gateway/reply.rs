//! A program's output (RFC 3875, 6: a header block, an empty line, the
//! body) made into the HTTP response: the header block parsed by
//! `httparse`, the body kept where it lies (the program's buffers), never
//! copied.

use crate::response::{self, Body, Response};
use crate::status::Status;
use ferry::Aggregate;
use std::fmt::Write as _;

/// A header block may take this many bytes at most (502 past it).
const HEAD_MAX: usize = 16 << 10;

/// Header lines a program may send at most.
const MAX_HEADERS: usize = 100;

/// Headers of the program's that the server sets itself (or that would
/// break the framing of the connection): dropped.
const DROPPED: &[&str] = &[
    "status",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "date",
    "server",
    "upgrade",
    "trailer",
];

/// The response to send for `output`; a 502 if it is not a CGI response.
pub(crate) fn respond(output: Aggregate, head_only: bool, minor: u8, close: bool) -> Response {
    match build(output, head_only, minor, close) {
        Some(r) => r,
        None => response::error(Status::BadGateway, minor, head_only, close),
    }
}

fn build(mut output: Aggregate, head_only: bool, minor: u8, close: bool) -> Option<Response> {
    let mut head = vec![0u8; output.len().min(HEAD_MAX)];
    let n = output.copy_to_slice(0, &mut head);
    head.truncate(n);
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let (used, headers) = match httparse::parse_headers(&head, &mut slots) {
        Ok(httparse::Status::Complete((used, h))) => (used, h),
        _ => return None,
    };
    let mut status: Option<(u16, String)> = None;
    let mut location = false;
    let mut out = String::with_capacity(256);
    for h in headers.iter() {
        let Ok(value) = std::str::from_utf8(h.value) else {
            // Bytes past ASCII in a value go as they are only from text.
            return None;
        };
        let value = value.trim();
        if h.name.eq_ignore_ascii_case("status") {
            status = Some(parse_status(value)?);
        }
        if h.name.eq_ignore_ascii_case("location") {
            location = true;
        }
        if DROPPED.iter().any(|d| h.name.eq_ignore_ascii_case(d)) {
            continue;
        }
        let _ = write!(out, "{}: {}\r\n", h.name, value);
    }
    let (code, reason) = match status {
        Some(s) => s,
        // RFC 3875, 6.2.3 and 6.2.4: a Location alone redirects (a local
        // one too: it is sent to the client, as nginx does).
        None if location => (302, "Found".to_string()),
        None => (200, "OK".to_string()),
    };
    output.advance(used);
    let bodiless = code == 204 || code == 304;
    let length = (!bodiless).then_some(output.len() as u64);
    let head = response::head_lines(code, &reason, minor, &out, length, close);
    Some(Response {
        head,
        body: if head_only || bodiless {
            Body::Empty
        } else {
            Body::Mem(output)
        },
        close,
    })
}

/// `Status: 404 Not Found` (a reason is optional); only final statuses.
fn parse_status(v: &str) -> Option<(u16, String)> {
    let (code, reason) = v.split_once(' ').unwrap_or((v, ""));
    if code.len() != 3 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let code: u16 = code.parse().ok()?;
    if !(200..=599).contains(&code) {
        return None;
    }
    let reason = reason.trim();
    let reason = if reason.is_empty() {
        default_reason(code)
    } else {
        reason
    };
    Some((code, reason.to_string()))
}

fn default_reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agg(parts: &[&[u8]]) -> Aggregate {
        let mut a = Aggregate::new();
        for p in parts {
            a.append_buf(ferry::Buf::from(p.to_vec()));
        }
        a
    }

    fn text(r: &Response) -> (String, Vec<u8>) {
        let body = match &r.body {
            Body::Mem(a) => a.copy_to_vec(),
            Body::Empty => Vec::new(),
            _ => panic!("a program's body is in memory"),
        };
        (String::from_utf8(r.head.clone()).unwrap(), body)
    }

    #[test]
    fn a_document_keeps_its_headers_and_its_body_buffers() {
        let body = ferry::Buf::from(b"hello".to_vec());
        let mut out = agg(&[b"Content-Type: text/plain\nX-A: 1\n\n"]);
        out.append_buf(body.clone());
        let r = respond(out, false, 1, false);
        let (h, b) = text(&r);
        assert!(h.starts_with("HTTP/1.1 200 OK\r\n"), "{h}");
        assert!(h.contains("Content-Type: text/plain\r\nX-A: 1\r\n"), "{h}");
        assert!(h.contains("Content-Length: 5\r\n"), "{h}");
        assert_eq!(b, b"hello");
        // The body is the program's buffer itself.
        let Body::Mem(a) = &r.body else {
            unreachable!()
        };
        assert_eq!(a.bufs().next().unwrap().as_ptr(), body.as_ptr());
    }

    #[test]
    fn status_location_and_framing_headers_are_the_servers() {
        let r = respond(agg(&[b"Status: 404 Gone Fishing\r\nContent-Length: 99\r\nConnection: keep-alive\r\n\r\nno"]), false, 1, false);
        let (h, b) = text(&r);
        assert!(h.starts_with("HTTP/1.1 404 Gone Fishing\r\n"), "{h}");
        assert!(
            h.contains("Content-Length: 2\r\n") && !h.contains("99"),
            "{h}"
        );
        assert!(!h.contains("keep-alive"), "{h}");
        assert_eq!(b, b"no");
        let (h, _) = text(&respond(
            agg(&[b"Location: http://a/b\r\n\r\n"]),
            false,
            1,
            false,
        ));
        assert!(
            h.starts_with("HTTP/1.1 302 Found\r\n") && h.contains("Location: http://a/b\r\n"),
            "{h}"
        );
        let (h, b) = text(&respond(agg(&[b"Status: 204\n\n"]), false, 1, false));
        assert!(
            h.starts_with("HTTP/1.1 204 No Content\r\n") && !h.contains("Content-Length"),
            "{h}"
        );
        assert!(b.is_empty());
    }

    #[test]
    fn a_header_block_split_across_buffers_is_read_whole() {
        let r = respond(
            agg(&[b"Content-Ty", b"pe: a/b\r", b"\n\r\nbo", b"dy"]),
            false,
            1,
            false,
        );
        let (h, b) = text(&r);
        assert!(h.contains("Content-Type: a/b\r\n"), "{h}");
        assert_eq!(b, b"body");
        let (_, b) = text(&respond(agg(&[b"\r\n", b"x"]), true, 1, false));
        assert!(b.is_empty(), "HEAD: no body");
    }

    #[test]
    fn what_is_not_a_cgi_response_is_a_502() {
        for bad in [
            &b"<html>no head at all"[..],
            b"Content-Type: text/plain\n",
            b"Status: 1000\n\n",
            b"Status: 100 Continue\n\n",
            b"Status: abc\n\n",
            b"\x00\x01\x02: x\n\n",
            b"",
        ] {
            let (h, _) = text(&respond(agg(&[bad]), false, 1, false));
            assert!(
                h.starts_with("HTTP/1.1 502 "),
                "{:?}: {h}",
                String::from_utf8_lossy(bad)
            );
        }
        let long = vec![b'a'; HEAD_MAX + 10];
        let (h, _) = text(&respond(agg(&[b"X: ", &long, b"\n\n"]), false, 1, false));
        assert!(h.starts_with("HTTP/1.1 502 "), "{h}");
    }
}
