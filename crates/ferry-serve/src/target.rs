//! From a request target to a path below the served directory: the
//! query and fragment cut, percent-decoding, and `.`/`..` segments
//! resolved lexically, so that no target names anything above the root
//! (a `..` that would leave it is a 400, as nginx answers). Symbolic links
//! are the opening's business (`files::open_beneath`).

use crate::status::Status;
use percent_encoding::percent_decode;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// A resolved target.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Target {
    /// Below the root, without a leading `/` (empty: the root itself).
    pub rel: PathBuf,
    /// The target's path ended with `/` (a directory is asked for).
    pub slash: bool,
    /// The path as sent (before decoding, without query), for redirects.
    pub raw_path: String,
}

/// Resolves `target` (origin form `/a/b?q`, or absolute form
/// `http://host/a/b`).
pub(crate) fn resolve(target: &str) -> Result<Target, Status> {
    let path = match target
        .strip_prefix("http://")
        .or(target.strip_prefix("https://"))
    {
        // Absolute form: the path starts at the first `/` after the host.
        Some(rest) => match rest.find('/') {
            Some(i) => &rest[i..],
            None => "/",
        },
        None => target,
    };
    if !path.starts_with('/') {
        return Err(Status::BadRequest);
    }
    let path = path.split(['?', '#']).next().unwrap_or("/");
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
        raw_path: path.to_string(),
    })
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
        assert_eq!(rel("/a\\..\\b"), Ok("a\\..\\b".into()));
    }

    #[test]
    fn a_trailing_slash_asks_for_a_directory() {
        assert!(resolve("/d/").unwrap().slash);
        assert!(resolve("/d/x/..").unwrap().slash);
        assert!(!resolve("/d").unwrap().slash);
        assert_eq!(resolve("/d%20e?q").unwrap().raw_path, "/d%20e");
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
