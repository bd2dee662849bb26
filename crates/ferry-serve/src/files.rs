//! Static files: a request's target opened below the served directory,
//! its validators (`ETag`, `Last-Modified`), the conditionals and ranges,
//! and the body — cached extents for small files (sent with the head in
//! one gathered write), the open file for large ones (`sendfile`).

use crate::encoding;
use crate::hot;
use crate::listing;
use crate::represent::{self, Rep, Source};
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
use std::time::UNIX_EPOCH;

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
    if !matches!(req.method, Method::Get | Method::Head) {
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
    // A small file served lately, unchanged since: one statx, no open.
    let codings = req
        .accept_encoding
        .as_deref()
        .is_some_and(|a| !encoding::acceptable(a).is_empty());
    if !t.slash && !codings {
        if let Some(r) = hot::respond(site, req, &t.rel) {
            return r;
        }
    }
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

pub(crate) fn status_of(e: io::Error) -> Status {
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
/// `Content-Encoding` and the type of `rel`; `Vary: Accept-Encoding`
/// either way.
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
    // The choice looked at Accept-Encoding (or would have, had it been
    // sent): caches must key this representation by it too (RFC 9110,
    // 12.5.5), with or without a sibling today.
    file_response(
        site,
        req,
        file,
        looked,
        rel,
        ctype,
        &[("Vary", "Accept-Encoding")],
    )
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
    let source = match cached {
        Some(a) => Source::Mem(a),
        None => Source::File(file.clone()),
    };
    let rep = Rep {
        size,
        mtime,
        last_modified: &last_modified,
        etag: &etag,
        ctype,
        extra,
        source,
    };
    let r = represent::respond(req, &rep);
    // Only the file itself is kept, not a coded sibling.
    if !extra.iter().any(|(k, _)| *k == "Content-Encoding") {
        hot::keep(rel, meta, &rep);
    }
    r
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

#[cfg(test)]
mod tests {
    use super::*;

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
