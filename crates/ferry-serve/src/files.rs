//! Static files: a request's target opened below the served directory,
//! its validators (`ETag`, `Last-Modified`), the conditionals and ranges,
//! and the body — cached extents for small files (sent with the head in
//! one gathered write), the open file for large ones (`sendfile`).

use crate::encoding;
use crate::listing;
use crate::ranges::{self, Ranges};
use crate::request::{Method, Request};
use crate::response::{self, Body, Response};
use crate::site::Site;
use crate::status::Status;
use crate::target::{self, encode_path, Target};
use ferry::cache::Looked;
use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Bytes of a query kept in a `Location` as they are; the rest (controls,
/// spaces, bytes past ASCII) are percent-encoded.
const QUERY: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'`');

/// Files up to this size are served from the file cache (their bytes in
/// memory, sent with the head by one `writev`); larger ones by
/// `sendfile` from the file.
pub(crate) const CACHED_MAX: u64 = 64 << 10;

/// The response to `req`.
pub(crate) fn respond(site: &Site, req: &Request) -> Response {
    let head_only = req.method == Method::Head;
    let close = !req.keep_alive;
    if req.method == Method::Other {
        return response::error_with(
            Status::MethodNotAllowed,
            req.minor,
            false,
            close,
            &[("Allow", "GET, HEAD")],
        );
    }
    let t = match target::resolve(&req.target) {
        Ok(t) => t,
        Err(st) => return response::error(st, req.minor, head_only, close),
    };
    let file = match open(site, &t.rel) {
        Ok(f) => f,
        Err(st) => return response::error(st, req.minor, head_only, close),
    };
    // One look (fstat) serves both this decision and the cache lookup.
    let looked = match site.cache.look(&file) {
        Ok(l) => l,
        Err(e) => return response::error(status_of(e), req.minor, head_only, close),
    };
    let meta = looked.metadata();
    if meta.is_dir() {
        directory(site, req, &t, meta)
    } else if meta.is_file() {
        if t.slash && !t.rel.as_os_str().is_empty() {
            // `/file/`: no such directory.
            return response::error(Status::NotFound, req.minor, head_only, close);
        }
        file_or_sibling(site, req, &file, &looked, &t.rel)
    } else {
        // A FIFO, socket or device is not served (404, as nginx answers).
        response::error(Status::NotFound, req.minor, head_only, close)
    }
}

/// Opens `rel` below the root (`Site::open_beneath`) and looks at it.
fn open(site: &Site, rel: &Path) -> Result<Arc<File>, Status> {
    use rustix::fs::OFlags;
    // A FIFO or device opened non-blocking is refused after a look at
    // it; a regular file reads the same either way.
    let fd = site
        .open_beneath(rel, OFlags::NOCTTY | OFlags::NONBLOCK)
        .map_err(status_of)?;
    Ok(Arc::new(File::from(fd)))
}

fn status_of(e: io::Error) -> Status {
    match e.raw_os_error() {
        Some(c)
            if c == rustix::io::Errno::NOENT.raw_os_error()
                || c == rustix::io::Errno::NOTDIR.raw_os_error() =>
        {
            Status::NotFound
        }
        Some(c) if c == rustix::io::Errno::NAMETOOLONG.raw_os_error() => Status::NotFound,
        Some(c)
            if c == rustix::io::Errno::ACCESS.raw_os_error()
                || c == rustix::io::Errno::PERM.raw_os_error()
                // A link leading out of the root (RESOLVE_BENEATH), or a
                // loop of them.
                || c == rustix::io::Errno::XDEV.raw_os_error()
                || c == rustix::io::Errno::LOOP.raw_os_error() =>
        {
            Status::Forbidden
        }
        _ => Status::InternalError,
    }
}

/// A directory: `/dir` is redirected to `/dir/`; `/dir/` serves its
/// `index.html`, else its listing (with `--list`), else 403.
fn directory(site: &Site, req: &Request, t: &Target, meta: &Metadata) -> Response {
    let head_only = req.method == Method::Head;
    let close = !req.keep_alive;
    if !t.slash {
        // Built from the resolved path, never from the target as sent: a
        // target such as `//host/..//d` must not become `Location: //host…`
        // (a redirect to another site).
        let mut location = encode_path(&t.rel);
        location.push('/');
        if let Some(q) = &t.query {
            // Kept as sent, but for bytes a header must not carry raw.
            location.push('?');
            location.extend(percent_encoding::percent_encode(q.as_bytes(), QUERY));
        }
        return response::error_with(
            Status::MovedPermanently,
            req.minor,
            head_only,
            close,
            &[("Location", &location)],
        );
    }
    let index = t.rel.join("index.html");
    match open(site, &index).and_then(|f| match site.cache.look(&f) {
        Ok(l) if l.metadata().is_file() => Ok(Some(file_or_sibling(site, req, &f, &l, &index))),
        Ok(_) => Ok(None),
        Err(e) => Err(status_of(e)),
    }) {
        Ok(Some(r)) => return r,
        Ok(None) | Err(Status::NotFound) => {}
        Err(st) => return response::error(st, req.minor, head_only, close),
    }
    if !site.list {
        return response::error(Status::Forbidden, req.minor, head_only, close);
    }
    match listing::cached_page(site, &t.rel, meta) {
        Ok(page) => {
            let len = page.len() as u64;
            Response {
                head: response::head(
                    Status::Ok,
                    req.minor,
                    &[("Content-Type", "text/html; charset=utf-8")],
                    len,
                    close,
                ),
                body: if head_only {
                    Body::Empty
                } else {
                    Body::Mem(ferry::Aggregate::from(page))
                },
                close,
            }
        }
        Err(st) => response::error(st, req.minor, head_only, close),
    }
}

/// A regular file, or the pre-compressed sibling of it the client
/// accepts (`rel.br`, `.zst`, `.gz`: see `encoding`), with
/// `Content-Encoding`, `Vary` and the type of `rel`.
fn file_or_sibling(
    site: &Site,
    req: &Request,
    file: &Arc<File>,
    looked: &Looked<'_>,
    rel: &Path,
) -> Response {
    let ctype = content_type(rel);
    if let Some(accept) = &req.accept_encoding {
        for coding in encoding::acceptable(accept) {
            let mut name = rel.as_os_str().to_owned();
            name.push(coding.suffix);
            let sibling = Path::new(&name);
            let Ok(f) = open(site, sibling) else { continue };
            let Ok(l) = site.cache.look(&f) else { continue };
            if l.metadata().is_file() {
                let extra = [
                    ("Content-Encoding", coding.name),
                    ("Vary", "Accept-Encoding"),
                ];
                return file_response(site, req, &f, &l, sibling, ctype, &extra);
            }
        }
    }
    file_response(site, req, file, looked, rel, ctype, &[])
}

/// A regular file: validators, conditionals, ranges, body. `rel` names
/// it in errors; `ctype` is its type, `extra` headers of its coding.
/// `rel` is the file's path below the root (its name gives the type).
fn file_response(
    site: &Site,
    req: &Request,
    file: &Arc<File>,
    looked: &Looked<'_>,
    rel: &Path,
    ctype: &'static str,
    extra: &[(&str, &str)],
) -> Response {
    let meta = looked.metadata();
    let head_only = req.method == Method::Head;
    let close = !req.keep_alive;
    let size = meta.len();
    let mtime = meta.modified().unwrap_or(UNIX_EPOCH);
    let last_modified = httpdate::fmt_http_date(mtime);
    // Small files: their bytes from the cache, and an ETag of their
    // content (strong, the same after a restart for the same bytes).
    let cached = if size <= CACHED_MAX {
        match site.cache.read_looked(looked, rel, ..) {
            Ok(a) if a.len() as u64 == size => Some(a),
            // Changed while read: serve what the file says now, by
            // sendfile, with a validator of its stamp.
            _ => None,
        }
    } else {
        None
    };
    let etag = match &cached {
        Some(a) => match site.checksums.etag(a) {
            Ok(e) => e,
            Err(_) => stamp_etag(meta),
        },
        None => stamp_etag(meta),
    };
    if not_modified(req, &etag, mtime) {
        let mut h: Vec<(&str, &str)> = vec![("ETag", &etag), ("Last-Modified", &last_modified)];
        h.extend_from_slice(extra);
        let head = response::head(Status::NotModified, req.minor, &h, 0, close);
        return Response {
            head,
            body: Body::Empty,
            close,
        };
    }
    let whole = |off: u64, len: u64| -> Body {
        match &cached {
            Some(a) => Body::Mem(a.slice(off as usize..(off + len) as usize)),
            None => Body::File {
                file: file.clone(),
                off,
                len,
            },
        }
    };
    let ranges = match (&req.range, range_applies(req, &etag, &last_modified)) {
        (Some(r), true) => ranges::parse(r, size),
        _ => Ranges::All,
    };
    let mut common: Vec<(&str, &str)> = vec![
        ("Content-Type", ctype),
        ("Last-Modified", &last_modified),
        ("ETag", &etag),
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
            let boundary = format!("{:016x}", boundary_seed(&etag));
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
                ("Last-Modified", &last_modified),
                ("ETag", &etag),
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

/// An `ETag` from the file's stamp (device, inode, size, modification
/// time to the nanosecond): for files served by `sendfile`, whose bytes
/// are not read here. The same after a restart while the file is
/// unchanged.
fn stamp_etag(meta: &Metadata) -> String {
    format!(
        "\"{:x}-{:x}-{:x}-{:x}\"",
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec()
    )
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
        Some(since) => {
            let secs = |t: SystemTime| {
                t.duration_since(UNIX_EPOCH)
                    .unwrap_or(Duration::ZERO)
                    .as_secs()
            };
            secs(mtime) <= secs(since)
        }
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

/// The `Content-Type` of a file, by its name.
fn content_type(path: &Path) -> &'static str {
    match mime_guess::from_path(path).first_raw() {
        Some("text/html") => "text/html; charset=utf-8",
        Some("text/plain") => "text/plain; charset=utf-8",
        Some("text/css") => "text/css; charset=utf-8",
        Some("text/javascript") | Some("application/javascript") => {
            "text/javascript; charset=utf-8"
        }
        Some(m) => m,
        None => "application/octet-stream",
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

    /// The whole request path — parsing, the target, opening, validators,
    /// conditionals, ranges — never panics, whatever the head holds, and
    /// a response's head always says its body's length.
    #[test]
    fn no_request_head_makes_the_request_path_panic() {
        use proptest::prelude::*;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), b"0123456789").unwrap();
        std::fs::write(dir.path().join("big"), vec![1u8; 100_000]).unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::os::unix::fs::symlink("/etc", dir.path().join("out")).unwrap();
        let mut cfg = crate::config::Config::new(dir.path());
        cfg.list = true;
        let site = Site::open(&cfg).unwrap();
        let target = "(/|/f\\.txt|/big|/d|/d/|/out/passwd|/%2e%2e/|/f\\.txt/|[/a-z.%0-9?#]{0,12})";
        let header =
            "(Range|If-Range|If-None-Match|If-Modified-Since|Connection|Host|Content-Length)";
        let value = "(bytes=[0-9,-]{0,12}|\"[a-z0-9]{0,4}\"|\\*|W/\"x\"|close|[ -~]{0,16})";
        let strat = (
            "(GET|HEAD|POST|get|G\\x00T)",
            target,
            "(1\\.1|1\\.0|2\\.0|1\\.x)",
            proptest::collection::vec((header, value), 0..5),
        );
        proptest!(ProptestConfig::with_cases(512), |((method, target, version, headers) in strat)| {
            let mut head = format!("{method} {target} HTTP/{version}\r\nHost: h\r\n");
            for (k, v) in &headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let r = match crate::request::parse(head.as_bytes()) {
                crate::request::Parsed::Done(req, _) => respond(&site, &req),
                crate::request::Parsed::Bad(st) => response::error(st, 1, false, true),
                crate::request::Parsed::Partial => return Ok(()),
            };
            let h = String::from_utf8(r.head.clone()).unwrap();
            if let Some(len) = h.split("\r\n").find_map(|l| l.strip_prefix("Content-Length: ")) {
                let len: u64 = len.parse().unwrap();
                let is_head = method == "HEAD";
                prop_assert!(is_head || r.body.len() == len, "{head:?} → {h:?}");
            }
        });
    }

    #[test]
    fn content_types_by_name() {
        let t = |p: &str| content_type(Path::new(p));
        assert_eq!(t("a/b.html"), "text/html; charset=utf-8");
        assert_eq!(t("d/index.html"), "text/html; charset=utf-8");
        assert_eq!(t("p.png"), "image/png");
        assert_eq!(t("noext"), "application/octet-stream");
    }
}
