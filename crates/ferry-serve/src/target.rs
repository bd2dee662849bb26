//! From a request target to a path below the served directory: the
//! query and fragment cut, percent-decoding, and `.`/`..` segments
//! resolved lexically, so that no target names anything above the root
//! (a `..` that would leave it is a 400, as nginx answers). Symbolic links
//! are the opening's business (`files::open_beneath`).

use crate::status::Status;
use percent_encoding::{percent_decode, percent_encode, AsciiSet, CONTROLS};
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Bytes a path segment keeps in a URL this server writes (a `Location`,
/// a listing's href); the rest are percent-encoded. `:` is among them, so
/// that no segment reads as a scheme (`javascript:`), and `/`, so that a
/// name stays one segment.
pub(crate) const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'/')
    .add(b'\\')
    .add(b'\'')
    .add(b'&')
    .add(b':')
    .add(b'(')
    .add(b')')
    .add(b';')
    .add(b'|')
    .add(b'^')
    .add(b'[')
    .add(b']');

/// One name's bytes (any, not only UTF-8) as a URL path segment.
pub(crate) fn encode_segment(name: &[u8]) -> String {
    percent_encode(name, SEGMENT).to_string()
}

/// `rel` (below the root) as an absolute URL path: `/a%20b/c`, or `/`.
pub(crate) fn encode_path(rel: &Path) -> String {
    let mut out = String::from("/");
    for (i, c) in rel.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(&encode_segment(c.as_bytes()));
    }
    out
}

/// A resolved target.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Target {
    /// Below the root, without a leading `/` (empty: the root itself).
    pub rel: PathBuf,
    /// The target's path ended with `/` (a directory is asked for).
    pub slash: bool,
    /// The query as sent (after `?`, before any `#`), kept by redirects.
    pub query: Option<String>,
}

/// Resolves `target` (origin form `/a/b?q`, or absolute form
/// `http://host/a/b`).
pub(crate) fn resolve(target: &str) -> Result<Target, Status> {
    let after_scheme = ["http://", "https://"].iter().find_map(|scheme| {
        let head = target.get(..scheme.len())?;
        head.eq_ignore_ascii_case(scheme)
            .then(|| &target[scheme.len()..])
    });
    let path = match after_scheme {
        // Absolute form: the path starts at the first `/` after the host.
        Some(rest) => match rest.find(['/', '?', '#']) {
            Some(i) if rest.as_bytes()[i] == b'/' => &rest[i..],
            Some(i) => return resolve(&format!("/{}", &rest[i..])),
            None => "/",
        },
        None => target,
    };
    if !path.starts_with('/') {
        return Err(Status::BadRequest);
    }
    let before_fragment = path.split('#').next().unwrap_or("/");
    let (path, query) = match before_fragment.split_once('?') {
        Some((p, q)) => (p, Some(q.to_string())),
        None => (before_fragment, None),
    };
    if !escapes_are_whole(path.as_bytes()) {
        return Err(Status::BadRequest);
    }
    let bytes: Vec<u8> = percent_decode(path.as_bytes()).collect();
    if bytes.contains(&0) {
        return Err(Status::BadRequest);
    }
    let mut parts: Vec<&[u8]> = Vec::new();
    for seg in bytes.split(|&b| b == b'/') {
        match seg {
            b"" | b"." => {}
            b".." => {
                if parts.pop().is_none() {
                    return Err(Status::BadRequest);
                }
            }
            s => parts.push(s),
        }
    }
    let slash = bytes.ends_with(b"/")
        || bytes.ends_with(b"/.")
        || bytes.ends_with(b"/..")
        || parts.is_empty();
    let rel = parts.join(&b'/');
    Ok(Target {
        rel: PathBuf::from(OsString::from_vec(rel)),
        slash,
        query,
    })
}

/// Every `%` starts an escape of two hex digits (nginx answers a broken
/// one with 400, and so does this server).
fn escapes_are_whole(path: &[u8]) -> bool {
    let mut i = 0;
    while i < path.len() {
        if path[i] == b'%' {
            let hex = |j: usize| path.get(j).is_some_and(u8::is_ascii_hexdigit);
            if !hex(i + 1) || !hex(i + 2) {
                return false;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rel(t: &str) -> Result<String, Status> {
        resolve(t).map(|t| t.rel.to_string_lossy().into_owned())
    }

    #[test]
    fn segments_resolve_lexically_and_never_above_the_root() {
        assert_eq!(rel("/"), Ok(String::new()));
        assert_eq!(rel("/a/./b/../c?x=/../..#f"), Ok("a/c".into()));
        assert_eq!(rel("/a%2Fb"), Ok("a/b".into()));
        assert_eq!(rel("/%2e%2e/etc/passwd"), Err(Status::BadRequest));
        assert_eq!(rel("/a/../../etc"), Err(Status::BadRequest));
        assert_eq!(rel("/..%2f..%2fetc"), Err(Status::BadRequest));
        assert_eq!(rel("/a%00b"), Err(Status::BadRequest));
        assert_eq!(rel("a/b"), Err(Status::BadRequest));
        assert_eq!(rel("*"), Err(Status::BadRequest));
        assert_eq!(rel("http://h/x/y"), Ok("x/y".into()));
        assert_eq!(rel("HTTP://h/x/y"), Ok("x/y".into()));
        assert_eq!(rel("http://h?q"), Ok(String::new()));
        assert_eq!(rel("/a%zzb"), Err(Status::BadRequest));
        assert_eq!(rel("/a%2"), Err(Status::BadRequest));
        assert_eq!(rel("/a\\..\\b"), Ok("a\\..\\b".into()));
    }

    #[test]
    fn a_trailing_slash_asks_for_a_directory() {
        assert!(resolve("/d/").unwrap().slash);
        assert!(resolve("/d/x/..").unwrap().slash);
        assert!(!resolve("/d").unwrap().slash);
        assert_eq!(resolve("/d%20e?q").unwrap().query.as_deref(), Some("q"));
        assert_eq!(resolve("/d%20e#f?q").unwrap().query, None);
    }

    #[test]
    fn paths_written_back_are_encoded_per_segment() {
        assert_eq!(encode_path(Path::new("")), "/");
        assert_eq!(
            encode_path(Path::new("a b/javascript:x()")),
            "/a%20b/javascript%3Ax%28%29"
        );
        assert_eq!(encode_segment(b"\xff/\\"), "%FF%2F%5C");
        // `//evil` resolves to `evil`: a Location from it is a path.
        let t = resolve("//evil.example/../d").unwrap();
        assert_eq!(encode_path(&t.rel), "/d");
    }

    proptest! {
        /// Whatever the target, a resolved path has no `..`, `.` or empty
        /// segment, no NUL, and is relative.
        #[test]
        fn resolved_paths_stay_below_the_root(t in "[/a.%2fF0e\\\\?]{0,40}") {
            if let Ok(r) = resolve(&t) {
                prop_assert!(r.rel.is_relative());
                for c in r.rel.components() {
                    prop_assert!(matches!(c, std::path::Component::Normal(_)), "{:?}", r.rel);
                }
            }
        }
    }
}
