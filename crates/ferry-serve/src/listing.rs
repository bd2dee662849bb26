//! A directory's listing (`--list`): names sorted, directories marked
//! with `/`, hrefs percent-encoded and text HTML-escaped.

use crate::site::Site;
use crate::status::Status;
use crate::target::{encode_path, encode_segment};
use ferry::Buf;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

/// Entries a listing shows at most (the rest are counted at its end): a
/// page stays a few megabytes however large the directory.
const MAX_ENTRIES: usize = 20_000;

/// Listing pages kept, and their bytes at most.
const KEPT_PAGES: usize = 64;
const KEPT_BYTES: usize = 16 << 20;

/// A directory's stamp: a change of its entries moves its times.
type DirStamp = (u64, u64, i64, i64, i64, i64);

fn dir_stamp(m: &Metadata) -> DirStamp {
    (
        m.dev(),
        m.ino(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    )
}

/// Listing pages kept for their directories' stamps, shared by every
/// response that sends one (an immutable `Buf` each: a page is built once
/// per change of its directory, not once per request).
#[derive(Default)]
pub(crate) struct Pages {
    kept: Mutex<HashMap<PathBuf, (DirStamp, Buf)>>,
}

/// The listing of `rel` (below the root), whose metadata is `meta`: the
/// kept page if the directory has not changed since, else a new one
/// (kept if the directory's last change is at least a second old, so that
/// two changes within one tick of its clock cannot share a stamp).
pub(crate) fn cached_page(site: &Site, rel: &Path, meta: &Metadata) -> Result<Buf, Status> {
    let stamp = dir_stamp(meta);
    let kept = site
        .pages
        .kept
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some((s, page)) = kept.get(rel) {
        if *s == stamp {
            return Ok(page.clone());
        }
    }
    drop(kept);
    let page = Buf::from(page(site, rel)?);
    let settled = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .is_ok_and(|now| now.as_secs() as i64 > meta.ctime() + 1);
    if settled && page.len() <= KEPT_BYTES / 4 {
        let mut kept = site
            .pages
            .kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let total =
            |k: &HashMap<PathBuf, (DirStamp, Buf)>| k.values().map(|(_, p)| p.len()).sum::<usize>();
        while !kept.is_empty()
            && (kept.len() >= KEPT_PAGES || total(&kept) + page.len() > KEPT_BYTES)
        {
            let Some(victim) = kept.keys().next().cloned() else {
                break;
            };
            kept.remove(&victim);
        }
        kept.insert(rel.to_path_buf(), (stamp, page.clone()));
    }
    Ok(page)
}

/// The listing of `rel` (below the root).
fn page(site: &Site, rel: &Path) -> Result<Vec<u8>, Status> {
    let fd = site
        .open_beneath(rel, rustix::fs::OFlags::DIRECTORY)
        .map_err(|_| Status::Forbidden)?;
    let mut dir = rustix::fs::Dir::read_from(&fd).map_err(|_| Status::Forbidden)?;
    // Names as bytes: a name that is not UTF-8 keeps its own bytes in
    // the href (shown with U+FFFD in the text).
    let mut names: Vec<(Vec<u8>, bool)> = Vec::new();
    while let Some(e) = dir.read() {
        let Ok(e) = e else {
            return Err(Status::InternalError);
        };
        let name = e.file_name().to_bytes().to_vec();
        if name == b"." || name == b"..".as_slice() {
            continue;
        }
        let is_dir = e.file_type() == rustix::fs::FileType::Directory;
        names.push((name, is_dir));
    }
    names.sort();
    let hidden = names.len().saturating_sub(MAX_ENTRIES);
    names.truncate(MAX_ENTRIES);
    let shown = encode_path(rel);
    let shown = if shown.ends_with('/') {
        shown
    } else {
        shown + "/"
    };
    let title = escape(&percent_encoding::percent_decode_str(&shown).decode_utf8_lossy());
    let mut h = String::with_capacity(256 + names.len() * 64);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of {title}</title></head>\n<body><h1>Index of {title}</h1><hr><pre>\n<a href=\"../\">../</a>\n"
    );
    for (name, is_dir) in names {
        let slash = if is_dir { "/" } else { "" };
        let _ = writeln!(
            h,
            "<a href=\"{}{slash}\">{}{slash}</a>",
            encode_segment(&name),
            escape(&String::from_utf8_lossy(&name))
        );
    }
    if hidden > 0 {
        let _ = writeln!(h, "({hidden} more entries not listed)");
    }
    h.push_str("</pre><hr></body></html>\n");
    Ok(h.into_bytes())
}

/// Text made safe inside HTML.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_escaped_in_text_and_encoded_in_hrefs() {
        assert_eq!(
            super::escape("<a href='x'>&"),
            "&lt;a href=&#39;x&#39;&gt;&amp;"
        );
        let e = super::encode_segment(b"a b/\"c?.html");
        assert_eq!(e, "a%20b%2F%22c%3F.html");
    }
}
