//! A file as a response: its validators (`ETag`, `Last-Modified`), the
//! conditionals (304), byte ranges (206, `multipart/byteranges`, 416) and
//! the body, from memory (cached extents) or by `sendfile` from the file.

use crate::ranges::{self, Ranges};
use crate::request::{Method, Request};
use crate::response::{self, Body, Response};
use crate::status::Status;
use ferry::Aggregate;
use std::fs::File;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where a file's bytes come from.
pub(crate) enum Source {
    /// The cached extents of the whole file.
    Mem(Aggregate),
    /// The open file, by `sendfile`.
    File(Arc<File>),
}

/// What a response of a file is made of.
pub(crate) struct Rep<'a> {
    pub size: u64,
    pub mtime: SystemTime,
    pub last_modified: &'a str,
    pub etag: &'a str,
    pub ctype: &'static str,
    /// Headers of its coding (`Content-Encoding`, `Vary`), if any.
    pub extra: &'a [(&'a str, &'a str)],
    pub source: Source,
}

/// The response to `req` of the file `rep` describes.
pub(crate) fn respond(req: &Request, rep: &Rep<'_>) -> Response {
    let head_only = req.method == Method::Head;
    let close = !req.keep_alive;
    let (size, mtime, etag, last_modified, ctype, extra) = (
        rep.size,
        rep.mtime,
        rep.etag,
        rep.last_modified,
        rep.ctype,
        rep.extra,
    );
    if precondition_failed(req, etag, mtime) {
        return response::error_with(Status::PreconditionFailed, req.minor, head_only, close, &[]);
    }
    if not_modified(req, etag, mtime) {
        let mut h: Vec<(&str, &str)> = vec![("ETag", etag), ("Last-Modified", last_modified)];
        h.extend_from_slice(extra);
        let head = response::head(Status::NotModified, req.minor, &h, 0, close);
        return Response {
            head,
            body: Body::Empty,
            close,
        };
    }
    let whole = |off: u64, len: u64| -> Body {
        match &rep.source {
            Source::Mem(a) => Body::Mem(a.slice(off as usize..(off + len) as usize)),
            Source::File(file) => Body::File {
                file: file.clone(),
                off,
                len,
            },
        }
    };
    let ranges = match (&req.range, range_applies(req, etag, last_modified)) {
        (Some(r), true) => ranges::parse(r, size),
        _ => Ranges::All,
    };
    let mut common: Vec<(&str, &str)> = vec![
        ("Content-Type", ctype),
        ("Last-Modified", last_modified),
        ("ETag", etag),
        ("Accept-Ranges", "bytes"),
    ];
    common.extend_from_slice(extra);
    match ranges {
        Ranges::All => Response {
            head: response::head(Status::Ok, req.minor, &common, size, close),
            body: if head_only {
                Body::Empty
            } else {
                whole(0, size)
            },
            close,
        },
        Ranges::Unsatisfiable => {
            let cr = format!("bytes */{size}");
            response::error_with(
                Status::RangeNotSatisfiable,
                req.minor,
                head_only,
                close,
                &[("Content-Range", &cr)],
            )
        }
        Ranges::Some(list) if list.len() == 1 => {
            let (start, end) = list[0];
            let cr = format!("bytes {start}-{}/{size}", end - 1);
            let mut h: Vec<(&str, &str)> = common.to_vec();
            h.push(("Content-Range", &cr));
            Response {
                head: response::head(Status::PartialContent, req.minor, &h, end - start, close),
                body: if head_only {
                    Body::Empty
                } else {
                    whole(start, end - start)
                },
                close,
            }
        }
        Ranges::Some(list) => {
            let boundary = format!("{:016x}", boundary_seed(etag));
            let mut parts = Vec::with_capacity(list.len() * 2 + 1);
            for &(start, end) in &list {
                let part_head = format!(
                    "\r\n--{boundary}\r\nContent-Type: {ctype}\r\nContent-Range: bytes {start}-{}/{size}\r\n\r\n",
                    end - 1
                );
                parts.push(Body::Mem(ferry::Aggregate::from(ferry::Buf::from(
                    part_head.into_bytes(),
                ))));
                parts.push(whole(start, end - start));
            }
            let tail = format!("\r\n--{boundary}--\r\n");
            parts.push(Body::Mem(ferry::Aggregate::from(ferry::Buf::from(
                tail.into_bytes(),
            ))));
            let body = Body::Parts(parts);
            let ct = format!("multipart/byteranges; boundary={boundary}");
            let mut h: Vec<(&str, &str)> = vec![
                ("Content-Type", &ct),
                ("Last-Modified", last_modified),
                ("ETag", etag),
                ("Accept-Ranges", "bytes"),
            ];
            h.extend_from_slice(extra);
            Response {
                head: response::head(Status::PartialContent, req.minor, &h, body.len(), close),
                body: if head_only { Body::Empty } else { body },
                close,
            }
        }
    }
}

/// RFC 9110, 13.1.1 and 13.1.4, evaluated first (13.2.2): `If-Match`
/// (strong comparison; `*` holds for any file), else
/// `If-Unmodified-Since` (to the second; a date that is not one is
/// ignored). True when the request's precondition fails: 412.
fn precondition_failed(req: &Request, etag: &str, mtime: SystemTime) -> bool {
    if let Some(im) = &req.if_match {
        let im = im.trim();
        if im == "*" {
            return false;
        }
        let strong = !etag.starts_with("W/");
        return !(strong && im.split(',').map(str::trim).any(|t| t == etag));
    }
    match req.if_unmodified_since {
        Some(since) => secs(mtime) > secs(since),
        None => false,
    }
}

/// Whole seconds since the epoch (HTTP dates have no finer unit).
fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}

/// RFC 9110, 13.1.2 and 13.1.3: `If-None-Match` (weak comparison), else
/// `If-Modified-Since` (to the second).
fn not_modified(req: &Request, etag: &str, mtime: SystemTime) -> bool {
    if let Some(inm) = &req.if_none_match {
        let inm = inm.trim();
        return inm == "*"
            || inm
                .split(',')
                .map(|t| t.trim().trim_start_matches("W/"))
                .any(|t| t == etag.trim_start_matches("W/"));
    }
    match req.if_modified_since {
        // RFC 9110, 13.1.3: a date later than the server's clock is
        // ignored.
        Some(since) if since > SystemTime::now() => false,
        Some(since) => secs(mtime) <= secs(since),
        None => false,
    }
}

/// RFC 9110, 13.1.5: a `Range` counts only if `If-Range` (when sent)
/// names the current representation: the same strong `ETag`, or exactly
/// its `Last-Modified` date.
fn range_applies(req: &Request, etag: &str, last_modified: &str) -> bool {
    match &req.if_range {
        None => true,
        Some(v) => {
            let v = v.trim();
            if v.starts_with('"') {
                v == etag
            } else if v.starts_with("W/") {
                false
            } else {
                v == last_modified
            }
        }
    }
}

/// A multipart boundary that no part's bytes are likely to hold: derived
/// from the ETag and the clock.
fn boundary_seed(etag: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in etag.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    h ^ now
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(inm: Option<&str>, ims: Option<SystemTime>) -> Request {
        Request {
            method: Method::Get,
            target: "/x".into(),
            minor: 1,
            keep_alive: true,
            if_match: None,
            if_unmodified_since: None,
            if_none_match: inm.map(str::to_string),
            if_modified_since: ims,
            range: None,
            if_range: None,
            accept_encoding: None,
            body: crate::request::BodyKind::None,
            expect_continue: false,
        }
    }

    #[test]
    fn conditionals_follow_rfc_9110() {
        let t = UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert!(not_modified(&req(Some("\"a\""), None), "\"a\"", t));
        assert!(not_modified(&req(Some("\"b\", W/\"a\""), None), "\"a\"", t));
        assert!(not_modified(&req(Some("*"), None), "\"a\"", t));
        assert!(!not_modified(&req(Some("\"b\""), Some(t)), "\"a\"", t));
        assert!(not_modified(
            &req(None, Some(t)),
            "\"a\"",
            t + Duration::from_millis(500)
        ));
        assert!(!not_modified(
            &req(None, Some(t)),
            "\"a\"",
            t + Duration::from_secs(1)
        ));
        assert!(!not_modified(&req(None, None), "\"a\"", t));
    }

    #[test]
    fn if_range_needs_the_strong_etag_or_the_exact_date() {
        let mut r = req(None, None);
        assert!(range_applies(&r, "\"a\"", "Thu, 01 Jan 1970 00:00:00 GMT"));
        r.if_range = Some("\"a\"".into());
        assert!(range_applies(&r, "\"a\"", "d"));
        r.if_range = Some("W/\"a\"".into());
        assert!(!range_applies(&r, "\"a\"", "d"));
        r.if_range = Some("d".into());
        assert!(range_applies(&r, "\"a\"", "d"));
        r.if_range = Some("e".into());
        assert!(!range_applies(&r, "\"a\"", "d"));
    }
}
