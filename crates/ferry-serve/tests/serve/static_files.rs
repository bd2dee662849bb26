//! Files as a browser or curl asks for them: whole, by HEAD, with
//! validators and conditionals, by byte ranges; directories.

use crate::{pattern, Site};
use std::fs;
use std::time::Duration;

fn site() -> Site {
    Site::new(
        |d| {
            fs::write(d.join("small.txt"), b"hello world\n").unwrap();
            fs::write(d.join("mid.bin"), pattern(50_000, 1)).unwrap();
            fs::write(d.join("big.bin"), pattern(3 << 20, 2)).unwrap();
            fs::write(d.join("page.html"), b"<p>x</p>").unwrap();
            fs::create_dir(d.join("dir")).unwrap();
            fs::write(d.join("dir/index.html"), b"<h1>index</h1>").unwrap();
            fs::create_dir(d.join("bare")).unwrap();
            fs::write(d.join("bare/a b&c.txt"), b"a").unwrap();
            fs::create_dir(d.join("bare/sub")).unwrap();
        },
        |_| {},
    )
}

#[test]
fn get_sends_every_file_whole_and_head_sends_the_same_headers_without_a_body() {
    let s = site();
    for (name, len) in [("small.txt", 12), ("mid.bin", 50_000), ("big.bin", 3 << 20)] {
        let want = fs::read(s.dir.path().join(name)).unwrap();
        let r = s.curl(&format!("/{name}"), &[]);
        assert_eq!(r.status, 200, "{name}");
        assert_eq!(r.body, want, "{name}");
        assert_eq!(r.header("content-length"), Some(len.to_string().as_str()));
        assert!(r.header("etag").is_some_and(|e| e.starts_with('"')));
        assert!(r.header("last-modified").is_some());
        assert!(r.header("date").is_some());
        assert_eq!(r.header("accept-ranges"), Some("bytes"));
        let h = s.curl(&format!("/{name}"), &["-I"]);
        assert_eq!(h.status, 200);
        assert!(h.body.is_empty());
        for k in ["content-length", "etag", "last-modified", "content-type"] {
            assert_eq!(h.header(k), r.header(k), "{name} {k}");
        }
    }
    assert_eq!(
        s.curl("/page.html", &[]).header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(
        s.curl("/small.txt", &[]).header("content-type"),
        Some("text/plain; charset=utf-8")
    );
}

#[test]
fn a_matching_etag_or_a_later_date_answers_304() {
    let s = site();
    for name in ["/small.txt", "/big.bin"] {
        let r = s.curl(name, &["-I"]);
        let etag = r.header("etag").unwrap().to_string();
        let lm = r.header("last-modified").unwrap().to_string();
        let nm = s.curl(name, &["-H", &format!("If-None-Match: {etag}")]);
        assert_eq!(nm.status, 304, "{name}");
        assert!(nm.body.is_empty());
        assert_eq!(nm.header("etag"), Some(etag.as_str()));
        assert_eq!(
            s.curl(name, &["-H", "If-None-Match: \"other\""]).status,
            200
        );
        assert_eq!(
            s.curl(name, &["-H", &format!("If-Modified-Since: {lm}")])
                .status,
            304
        );
        let old = "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT";
        assert_eq!(s.curl(name, &["-H", old]).status, 200);
        // If-None-Match wins over If-Modified-Since.
        let both = s.curl(
            name,
            &[
                "-H",
                "If-None-Match: \"other\"",
                "-H",
                &format!("If-Modified-Since: {lm}"),
            ],
        );
        assert_eq!(both.status, 200);
    }
}

#[test]
fn if_match_or_if_unmodified_since_that_fails_answers_412() {
    let s = site();
    for name in ["/small.txt", "/big.bin"] {
        let r = s.curl(name, &["-I"]);
        let etag = r.header("etag").unwrap().to_string();
        let lm = r.header("last-modified").unwrap().to_string();
        let status = |h: &[&str]| {
            let mut args = Vec::new();
            for x in h {
                args.push("-H");
                args.push(x);
            }
            s.curl(name, &args).status
        };
        let im = format!("If-Match: {etag}");
        assert_eq!(status(&[&im]), 200, "{name}");
        assert_eq!(status(&["If-Match: *"]), 200);
        assert_eq!(status(&[&format!("If-Match: \"x\", {etag}")]), 200);
        assert_eq!(status(&["If-Match: \"other\""]), 412, "{name}");
        // A weak tag never matches strongly.
        assert_eq!(status(&[&format!("If-Match: W/{etag}")]), 412);
        let ius = format!("If-Unmodified-Since: {lm}");
        assert_eq!(status(&[&ius]), 200);
        let old = "If-Unmodified-Since: Thu, 01 Jan 1970 00:00:00 GMT";
        assert_eq!(status(&[old]), 412, "{name}");
        assert_eq!(status(&["If-Unmodified-Since: not a date"]), 200);
        // If-Match is evaluated first, and before a Range.
        assert_eq!(status(&[&im, old]), 200);
        assert_eq!(status(&["If-Match: \"other\"", "Range: bytes=0-0"]), 412);
        assert_eq!(status(&[&im, "Range: bytes=0-0"]), 206);
        let head = s.curl(name, &["-I", "-H", "If-Match: \"other\""]);
        assert_eq!((head.status, head.body.len()), (412, 0));
    }
}

#[test]
fn the_etag_of_unchanged_content_is_the_same_from_another_server() {
    let s = site();
    let first = s
        .curl("/small.txt", &[])
        .header("etag")
        .unwrap()
        .to_string();
    let other = Site::new(
        |d| fs::write(d.join("small.txt"), b"hello world\n").unwrap(),
        |_| {},
    );
    assert_eq!(
        other.curl("/small.txt", &[]).header("etag"),
        Some(first.as_str())
    );
    fs::write(other.dir.path().join("small.txt"), b"hello World\n").unwrap();
    assert_ne!(
        other.curl("/small.txt", &[]).header("etag"),
        Some(first.as_str())
    );
}

#[test]
fn byte_ranges_single_suffix_several_and_unsatisfiable() {
    let s = site();
    for name in ["mid.bin", "big.bin"] {
        let want = fs::read(s.dir.path().join(name)).unwrap();
        let n = want.len();
        let r = s.curl(&format!("/{name}"), &["-r", "100-199"]);
        assert_eq!(r.status, 206);
        assert_eq!(r.body, &want[100..200]);
        assert_eq!(
            r.header("content-range"),
            Some(format!("bytes 100-199/{n}").as_str())
        );
        let r = s.curl(&format!("/{name}"), &["-r", "-10"]);
        assert_eq!(r.body, &want[n - 10..]);
        let r = s.curl(&format!("/{name}"), &["-r", &format!("{}-", n - 3)]);
        assert_eq!(r.body, &want[n - 3..]);
        let r = s.curl(&format!("/{name}"), &["-r", "0-9,20-29"]);
        assert_eq!(r.status, 206);
        let ct = r.header("content-type").unwrap();
        let boundary = ct.strip_prefix("multipart/byteranges; boundary=").unwrap();
        let body = String::from_utf8_lossy(&r.body).into_owned();
        assert_eq!(body.matches(&format!("--{boundary}")).count(), 3);
        assert!(body.contains(&format!("Content-Range: bytes 0-9/{n}")));
        assert!(body.contains(&format!("Content-Range: bytes 20-29/{n}")));
        assert!(r.body.windows(10).any(|w| w == &want[20..30]));
        assert_eq!(
            r.header("content-length"),
            Some(r.body.len().to_string().as_str())
        );
        let r = s.curl(&format!("/{name}"), &["-r", &format!("{n}-")]);
        assert_eq!(r.status, 416);
        assert_eq!(
            r.header("content-range"),
            Some(format!("bytes */{n}").as_str())
        );
    }
}

#[test]
fn if_range_with_another_validator_sends_the_whole_file() {
    let s = site();
    let etag = s
        .curl("/mid.bin", &["-I"])
        .header("etag")
        .unwrap()
        .to_string();
    let r = s.curl(
        "/mid.bin",
        &["-r", "0-9", "-H", &format!("If-Range: {etag}")],
    );
    assert_eq!(r.status, 206);
    let r = s.curl("/mid.bin", &["-r", "0-9", "-H", "If-Range: \"stale\""]);
    assert_eq!(r.status, 200);
    assert_eq!(r.body.len(), 50_000);
}

#[test]
fn directories_redirect_serve_their_index_or_a_listing_only_when_asked() {
    let s = site();
    let r = s.curl("/dir", &[]);
    assert_eq!(r.status, 301);
    assert_eq!(r.header("location"), Some("/dir/"));
    assert_eq!(s.curl("/dir/", &[]).body, b"<h1>index</h1>");
    assert_eq!(s.curl("/bare/", &[]).status, 403);
    assert_eq!(s.curl("/small.txt/", &[]).status, 404);
    let l = Site::new(
        |d| {
            fs::create_dir(d.join("bare")).unwrap();
            fs::write(d.join("bare/a b&c.txt"), b"a").unwrap();
            fs::write(d.join("bare/<x>.txt"), b"a").unwrap();
            fs::create_dir(d.join("bare/sub")).unwrap();
        },
        |c| c.list = true,
    );
    let r = l.curl("/bare/", &[]);
    assert_eq!(r.status, 200);
    let page = String::from_utf8(r.body).unwrap();
    assert!(
        page.contains("<a href=\"a%20b%26c.txt\">a b&amp;c.txt</a>"),
        "{page}"
    );
    assert!(page.contains("&lt;x&gt;.txt"), "{page}");
    assert!(page.contains("<a href=\"sub/\">sub/</a>"), "{page}");
}

#[test]
fn precompressed_siblings_are_served_to_clients_that_accept_them() {
    let s = Site::new(
        |d| {
            let text = "a line of text that compresses well\n".repeat(2000);
            fs::write(d.join("a.txt"), &text).unwrap();
            let gz = std::process::Command::new("gzip")
                .args(["-k", "-9"])
                .arg(d.join("a.txt"))
                .status()
                .unwrap();
            assert!(gz.success());
            // Only its bytes matter to the server.
            fs::write(d.join("a.txt.br"), b"brotli bytes").unwrap();
            fs::write(d.join("only-gz.css"), b"body{}").unwrap();
            fs::write(d.join("only-gz.css.gz"), b"not really gzip").unwrap();
        },
        |_| {},
    );
    let text = fs::read(s.dir.path().join("a.txt")).unwrap();
    // curl decodes what it asked for: the original bytes come back.
    let r = s.curl("/a.txt", &["-H", "Accept-Encoding: gzip", "--compressed"]);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(r.header("vary"), Some("Accept-Encoding"));
    assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(r.body, text);
    // brotli first when both are accepted at the same q; q decides first.
    let r = s.curl("/a.txt", &["-H", "Accept-Encoding: gzip, deflate, br"]);
    assert_eq!(
        (r.header("content-encoding"), r.body.as_slice()),
        (Some("br"), &b"brotli bytes"[..])
    );
    let r = s.curl("/a.txt", &["-H", "Accept-Encoding: br;q=0.5, gzip"]);
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    // Refused codings, or none asked: the file itself.
    for ae in ["br;q=0, gzip;q=0", "identity"] {
        let r = s.curl("/a.txt", &["-H", &format!("Accept-Encoding: {ae}")]);
        assert_eq!(
            (r.header("content-encoding"), &r.body),
            (None, &text),
            "{ae}"
        );
    }
    assert_eq!(s.curl("/a.txt", &[]).body, text);
    // The file itself varies by Accept-Encoding too (a cache keeping it
    // for everyone would hand it to clients the sibling was for), asked
    // once and again from the worker's kept files.
    for _ in 0..3 {
        let r = s.curl("/a.txt", &[]);
        assert_eq!(r.header("vary"), Some("Accept-Encoding"));
        assert_eq!(r.header("content-encoding"), None);
    }
    // The coded file has validators and ranges of its own.
    let gz = fs::read(s.dir.path().join("a.txt.gz")).unwrap();
    let r = s.curl("/a.txt", &["-H", "Accept-Encoding: gzip", "-r", "0-9"]);
    assert_eq!((r.status, r.body.as_slice()), (206, &gz[..10]));
    let plain = s.curl("/a.txt", &[]).header("etag").unwrap().to_string();
    let coded = s.curl("/a.txt", &["-H", "Accept-Encoding: gzip"]);
    assert_ne!(coded.header("etag"), Some(plain.as_str()));
    let etag = coded.header("etag").unwrap().to_string();
    let r = s.curl(
        "/a.txt",
        &[
            "-H",
            "Accept-Encoding: gzip",
            "-H",
            &format!("If-None-Match: {etag}"),
        ],
    );
    assert_eq!(
        (r.status, r.header("content-encoding")),
        (304, Some("gzip"))
    );
    // The type is the original's, not the sibling's.
    let r = s.curl("/only-gz.css", &["-H", "Accept-Encoding: br, gzip"]);
    assert_eq!(r.header("content-type"), Some("text/css; charset=utf-8"));
    assert_eq!(r.body, b"not really gzip");
}

#[test]
fn a_kept_listing_follows_its_directory() {
    let s = Site::new(
        |d| {
            fs::create_dir(d.join("l")).unwrap();
            fs::write(d.join("l/one"), b"1").unwrap();
        },
        |c| c.list = true,
    );
    // A directory changed more than a second ago has its page kept.
    std::thread::sleep(Duration::from_millis(2100));
    let a = s.curl("/l/", &[]).body;
    assert_eq!(s.curl("/l/", &[]).body, a);
    assert!(String::from_utf8_lossy(&a).contains("href=\"one\""));
    fs::write(s.dir.path().join("l/two"), b"2").unwrap();
    let b = String::from_utf8(s.curl("/l/", &[]).body).unwrap();
    assert!(
        b.contains("href=\"two\"") && b.contains("href=\"one\""),
        "{b}"
    );
    fs::remove_file(s.dir.path().join("l/one")).unwrap();
    let c = String::from_utf8(s.curl("/l/", &[]).body).unwrap();
    assert!(!c.contains("href=\"one\""), "{c}");
}

/// Small files a worker keeps (checked by one statx per request) are
/// served as they are now: rewritten in place with the same size, renamed
/// over, removed, or reached through a link swapped in — and a kept file
/// still answers ranges and conditionals.
#[test]
fn a_kept_small_file_is_never_served_stale() {
    let s = Site::new(
        |d| {
            fs::create_dir(d.join("sub")).unwrap();
            fs::write(d.join("sub/f.txt"), b"first state").unwrap();
            fs::write(d.join("g.txt"), b"gggg").unwrap();
        },
        |c| c.workers = 1,
    );
    // Kept only once its last change is over a second old.
    std::thread::sleep(Duration::from_millis(2100));
    for _ in 0..3 {
        assert_eq!(s.curl("/sub/f.txt", &[]).body, b"first state");
    }
    let r = s.curl("/sub/f.txt", &["-r", "6-10"]);
    assert_eq!((r.status, r.body.as_slice()), (206, &b"state"[..]));
    let etag = s
        .curl("/sub/f.txt", &[])
        .header("etag")
        .unwrap()
        .to_string();
    let r = s.curl("/sub/f.txt", &["-H", &format!("If-None-Match: {etag}")]);
    assert_eq!(r.status, 304);
    // In place, the same size.
    let path = s.dir.path().join("sub/f.txt");
    fs::write(&path, b"other state").unwrap();
    assert_eq!(s.curl("/sub/f.txt", &[]).body, b"other state");
    // Renamed over.
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(s.curl("/sub/f.txt", &[]).body, b"other state");
    let tmp = s.dir.path().join("sub/new");
    fs::write(&tmp, b"third state").unwrap();
    fs::rename(&tmp, &path).unwrap();
    assert_eq!(s.curl("/sub/f.txt", &[]).body, b"third state");
    // The directory swapped for a link that leads out of the root.
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(s.curl("/sub/f.txt", &[]).body, b"third state");
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("f.txt"), b"outside!!!!").unwrap();
    fs::rename(s.dir.path().join("sub"), s.dir.path().join("old-sub")).unwrap();
    std::os::unix::fs::symlink(outside.path(), s.dir.path().join("sub")).unwrap();
    assert_eq!(s.curl("/sub/f.txt", &[]).status, 403);
    // Removed.
    assert_eq!(s.curl("/g.txt", &[]).body, b"gggg");
    fs::remove_file(s.dir.path().join("g.txt")).unwrap();
    assert_eq!(s.curl("/g.txt", &[]).status, 404);
}
