//! A directory's listing (`--list`): names sorted, directories marked
//! with `/`, hrefs percent-encoded and text HTML-escaped.

use crate::site::Site;
use crate::status::Status;
use crate::target::{encode_path, encode_segment};
use std::fmt::Write as _;
use std::path::Path;

/// The listing of `rel` (below the root).
pub(crate) fn page(site: &Site, rel: &Path) -> Result<Vec<u8>, Status> {
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
