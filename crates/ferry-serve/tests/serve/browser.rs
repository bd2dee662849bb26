//! A real browser: headless Chromium (Debian's `chromium`) loads a page
//! from the server — HTML, a stylesheet, two images (one small enough for
//! the file cache, one sent by `sendfile`), a WebM video it seeks in
//! (range requests), and a directory listing in a frame. Three witnesses
//! say every resource arrived whole:
//! - the page itself: each element loaded (image sizes, the style
//!   applied, the video's frame size after the seek, the listing's
//!   links), and each file fetched again and hashed by the browser
//!   (`crypto.subtle`, SHA-256) against `sha256sum`'s hash of the file;
//!   ranges of the video and of an image are fetched by the page
//!   itself and hashed against the same slices of the files;
//! - Chromium's network log (`--log-net-log`): every response to the
//!   page's requests is 200 with the file's length or 206 whose
//!   `Content-Length` is its `Content-Range`'s, and the page read that
//!   many bytes — unless the browser cancelled the request (media
//!   loading stops when it has what it wants) or filled part of the
//!   range from its own cache (then at least the last range the network
//!   sent, and no more than the file); among the video's requests is a
//!   range that starts past the file's first byte;
//! - a screenshot of the page (kept as `target/browser-page.png`; the
//!   network log as `target/browser-netlog.json`).

use crate::Site;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const CHROMIUM: &str = "/usr/bin/chromium";

/// The video: 320×240, 10 frames a second, a key frame every 10, frames
/// of noise (so that it does not compress to nothing).
const W: usize = 320;
const H: usize = 240;
const FRAMES: usize = 120;
/// Where the page seeks to, in seconds.
const SEEK: f64 = 9.5;

/// A 24-bit BMP of `w`×`h` pixels (a gradient keyed by `seed`).
fn bmp(w: usize, h: usize, seed: u8) -> Vec<u8> {
    let row = (w * 3).div_ceil(4) * 4;
    let size = 54 + row * h;
    let mut b = Vec::with_capacity(size);
    b.extend_from_slice(b"BM");
    b.extend_from_slice(&(size as u32).to_le_bytes());
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(&54u32.to_le_bytes());
    b.extend_from_slice(&40u32.to_le_bytes());
    b.extend_from_slice(&(w as i32).to_le_bytes());
    b.extend_from_slice(&(h as i32).to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&24u16.to_le_bytes());
    b.extend_from_slice(&[0; 24]);
    for y in 0..h {
        for x in 0..w {
            b.extend_from_slice(&[
                (x * 255 / w) as u8,
                (y * 255 / h) as u8,
                seed.wrapping_add((x ^ y) as u8),
            ]);
        }
        b.resize(b.len() + row - w * 3, 0);
    }
    b
}

/// A WebM (VP8) clip made by `vpxenc` from frames of noise.
fn video(dir: &Path) -> Vec<u8> {
    let raw = dir.join("clip.yuv");
    let mut frames = Vec::with_capacity(FRAMES * W * H * 3 / 2);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for f in 0..FRAMES {
        for _ in 0..W * H {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            frames.push(16 + (x % 220) as u8);
        }
        frames.extend(std::iter::repeat_n((f * 2) as u8, W * H / 2));
    }
    std::fs::write(&raw, frames).unwrap();
    let out = dir.join("clip.webm");
    let o = Command::new("vpxenc")
        .args(["--codec=vp8", "--fps=10/1", "--kf-max-dist=10"])
        .args(["--target-bitrate=2000", "--good", "--cpu-used=16", "-q"])
        .arg(format!("--width={W}"))
        .arg(format!("--height={H}"))
        .arg("-o")
        .arg(&out)
        .arg(&raw)
        .stdin(Stdio::null())
        .output()
        .expect("vpxenc is needed for the browser test (vpx-tools; .ci/run installs it)");
    assert!(o.status.success(), "vpxenc: {o:?}");
    std::fs::remove_file(&raw).unwrap();
    std::fs::read(&out).unwrap()
}

fn sha256(p: &Path) -> String {
    let o = Command::new("sha256sum").arg(p).output().unwrap();
    assert!(o.status.success(), "sha256sum: {o:?}");
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// The page: its elements, and the script that checks them and writes
/// its verdict into `#verdict` (and the title).
fn page(hashes: &[(String, String)], ranges: &[(String, String, String)]) -> String {
    let want: Vec<String> = hashes
        .iter()
        .map(|(u, h)| format!("[\"{u}\", \"{h}\"]"))
        .collect();
    let want_ranges: Vec<String> = ranges
        .iter()
        .map(|(u, r, h)| format!("[\"{u}\", \"{r}\", \"{h}\"]"))
        .collect();
    format!(
        r#"<!doctype html>
<html><head><meta charset="utf-8"><title>waiting</title>
<link rel="stylesheet" href="/style.css"></head>
<body>
<h1>ferry serve</h1>
<p id="verdict">waiting</p>
<img id="small" src="/img/small.bmp"> <img id="large" src="/img/large.bmp" width="320">
<video id="clip" src="/media/clip.webm" preload="metadata" width="320"></video>
<iframe id="listing" src="/media/" width="400" height="150"></iframe>
<script>
const want = new Map([{want}]);
const fails = [];
function check(ok, what) {{ if (!ok) fails.push(what); }}
function hex(buf) {{
  return [...new Uint8Array(buf)].map(b => b.toString(16).padStart(2, "0")).join("");
}}
function event(el, name) {{ return new Promise(r => el.addEventListener(name, r, {{ once: true }})); }}
async function run() {{
  const v = document.getElementById("clip");
  if (v.readyState < 1) await event(v, "loadedmetadata");
  const seeked = event(v, "seeked");
  v.currentTime = {SEEK};
  await seeked;
  if (v.readyState < 2) await event(v, "loadeddata");
  check(v.videoWidth === {W} && v.videoHeight === {H}, "video size " + v.videoWidth + "x" + v.videoHeight);
  check(Math.abs(v.currentTime - {SEEK}) < 1, "video time " + v.currentTime);
  const small = document.getElementById("small"), large = document.getElementById("large");
  check(small.complete && small.naturalWidth === 64 && small.naturalHeight === 48, "small image");
  check(large.complete && large.naturalWidth === 640 && large.naturalHeight === 480, "large image");
  check(getComputedStyle(document.body).backgroundColor === "rgb(250, 240, 230)", "style");
  const f = document.getElementById("listing");
  const links = [...f.contentDocument.querySelectorAll("a")].map(a => a.getAttribute("href"));
  check(links.includes("clip.webm"), "listing " + links.join(","));
  for (const [url, h] of want) {{
    const body = await (await fetch(url, {{ cache: "no-store" }})).arrayBuffer();
    const got = hex(await crypto.subtle.digest("SHA-256", body));
    check(got === h, url + " hashed " + got);
  }}
  // Ranges the browser asks for itself, past its own cache: each one's
  // bytes hashed against the slice of the file.
  for (const [url, range, h] of [{want_ranges}]) {{
    const r = await fetch(url, {{ cache: "no-store", headers: {{ Range: range }} }});
    const body = await r.arrayBuffer();
    const got = hex(await crypto.subtle.digest("SHA-256", body));
    check(r.status === 206 && got === h, url + " " + range + ": " + r.status + " hashed " + got);
  }}
  say(fails.length ? "FAIL " + fails.join("; ") : "PASS");
}}
// The verdict goes on the page and to the server, whose access log the
// test reads.
function say(verdict) {{
  document.getElementById("verdict").textContent = verdict;
  document.title = verdict;
  fetch("/verdict?" + encodeURIComponent(verdict), {{ cache: "no-store" }});
}}
window.addEventListener("load", () => run().catch(e => say("FAIL " + e)));
</script>
</body></html>
"#,
        want = want.join(", "),
        want_ranges = want_ranges.join(", ")
    )
}

/// Chromium, headless, with the flags this machine needs (no sandbox as
/// root, no background network) and a profile of its own.
fn chromium(profile: &Path) -> Command {
    let mut c = Command::new(CHROMIUM);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
    ])
    .args(["--no-first-run", "--disable-background-networking"])
    .args([
        "--disable-component-update",
        "--disable-sync",
        "--mute-audio",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .stdin(Stdio::null());
    c
}

/// The page's verdict, from the server's access log (`/verdict?…`),
/// within a minute.
fn verdict(log: &Path) -> Option<String> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < until {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(l) = text.lines().find(|l| l.contains("/verdict?")) {
            let q = l.split("/verdict?").nth(1)?.split(' ').next()?;
            return Some(q.replace("%20", " ").replace("%3B", ";"));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    None
}

/// One request in the network log: its URL, request headers, response
/// status line and headers, bytes read, and its end (a network error
/// code, 0 when it ended well).
#[derive(Debug, Default)]
struct Request {
    url: String,
    sent: Vec<String>,
    status: String,
    headers: Vec<String>,
    /// The `Content-Range` of every response the request was given (the
    /// browser's cache may assemble one request's body from several
    /// network ranges and what it kept), with its `Content-Length`.
    ranges: Vec<(String, Option<u64>)>,
    bytes: u64,
    error: i64,
    /// Whether the request's end is in the log.
    ended: bool,
    /// Whether the browser cancelled it (media loading stops reading
    /// once it has what it wants).
    cancelled: bool,
}

/// The requests in a NetLog file, by source.
fn requests(log: &Path) -> Vec<Request> {
    // The network service (a process of its own) goes on writing the log
    // after the browser process has gone, and may be stopped before it
    // closes it: wait a while for whole JSON, else take the events up to
    // the last whole one (the log is the constants on one line, then one
    // event per line). Requests are checked only when their end is in
    // the log, so a cut log counts no request short.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let text = loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if serde_json::from_str::<serde_json::Value>(&text).is_ok()
            || std::time::Instant::now() > deadline
        {
            break text;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("").trim_end().trim_end_matches(',');
    let head: serde_json::Value = serde_json::from_str(&format!("{first}}}"))
        .expect("the network log starts with its constants");
    let events: Vec<serde_json::Value> = lines
        .skip_while(|l| !l.starts_with("\"events\""))
        .skip(1)
        .map_while(|l| serde_json::from_str(l.trim_end().trim_end_matches(',')).ok())
        .collect();
    let v = serde_json::json!({ "constants": head["constants"], "events": events });
    let types: HashMap<u64, String> = v["constants"]["logEventTypes"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, n)| (n.as_u64().unwrap(), k.clone()))
        .collect();
    let mut by_source: HashMap<u64, Request> = HashMap::new();
    for e in v["events"].as_array().unwrap() {
        let Some(kind) = e["type"].as_u64().and_then(|t| types.get(&t)) else {
            continue;
        };
        let id = e["source"]["id"].as_u64().unwrap_or(0);
        let p = &e["params"];
        let lines = |v: &serde_json::Value| -> Vec<String> {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        match kind.as_str() {
            "REQUEST_ALIVE" | "URL_REQUEST_START_JOB" if p["url"].is_string() => {
                by_source.entry(id).or_default().url = p["url"].as_str().unwrap_or("").into()
            }
            "HTTP_TRANSACTION_SEND_REQUEST_HEADERS" => {
                by_source.entry(id).or_default().sent = lines(&p["headers"])
            }
            "HTTP_TRANSACTION_READ_RESPONSE_HEADERS" => {
                let h = lines(&p["headers"]);
                let r = by_source.entry(id).or_default();
                r.status = h.first().cloned().unwrap_or_default();
                if let Some(range) = header(&h, "content-range") {
                    let len = header(&h, "content-length").and_then(|v| v.parse().ok());
                    r.ranges.push((range.to_string(), len));
                }
                r.headers = h;
            }
            "URL_REQUEST_JOB_FILTERED_BYTES_READ" => {
                by_source.entry(id).or_default().bytes += p["byte_count"].as_u64().unwrap_or(0)
            }
            "CANCELLED" => by_source.entry(id).or_default().cancelled = true,
            "REQUEST_ALIVE" if e["phase"].as_u64() == Some(2) => {
                let r = by_source.entry(id).or_default();
                r.error = p["net_error"].as_i64().unwrap_or(0);
                r.ended = true;
            }
            _ => {}
        }
    }
    by_source
        .into_values()
        .filter(|r| !r.url.is_empty())
        .collect()
}

fn header<'a>(lines: &'a [String], name: &str) -> Option<&'a str> {
    lines.iter().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

#[test]
fn chromium_loads_a_page_with_css_images_a_seekable_video_and_a_listing_whole() {
    assert!(
        Path::new(CHROMIUM).exists(),
        "Debian's chromium is needed for the browser test (.ci/run installs it)"
    );
    let mut files: Vec<(String, PathBuf, u64)> = Vec::new();
    let work = tempfile::tempdir().unwrap();
    let access_log = work.path().join("access.log");
    let site = Site::new(
        |d| {
            std::fs::create_dir_all(d.join("img")).unwrap();
            std::fs::create_dir_all(d.join("media")).unwrap();
            std::fs::write(
                d.join("style.css"),
                "body { background: rgb(250, 240, 230); font-family: sans-serif; }\n\
                 h1 { color: rgb(20, 60, 120); }\n",
            )
            .unwrap();
            std::fs::write(d.join("img/small.bmp"), bmp(64, 48, 7)).unwrap();
            std::fs::write(d.join("img/large.bmp"), bmp(640, 480, 99)).unwrap();
            video(&d.join("media"));
            let mut hashes = Vec::new();
            for rel in [
                "/style.css",
                "/img/small.bmp",
                "/img/large.bmp",
                "/media/clip.webm",
            ] {
                let p = d.join(&rel[1..]);
                let len = std::fs::metadata(&p).unwrap().len();
                hashes.push((rel.to_string(), sha256(&p)));
                files.push((rel.to_string(), p, len));
            }
            let mut ranges = Vec::new();
            for (rel, range) in [
                ("/media/clip.webm", "bytes=1000-70999"),
                ("/media/clip.webm", "bytes=3000000-"),
                ("/media/clip.webm", "bytes=-5000"),
                ("/img/small.bmp", "bytes=10-99"),
            ] {
                let bytes = std::fs::read(d.join(&rel[1..])).unwrap();
                let (a, b) = range[6..].split_once('-').unwrap();
                let slice = match (a.parse::<usize>(), b.parse::<usize>()) {
                    (Ok(a), Ok(b)) => &bytes[a..=b],
                    (Ok(a), Err(_)) => &bytes[a..],
                    (Err(_), Ok(n)) => &bytes[bytes.len() - n..],
                    _ => unreachable!("{range}"),
                };
                let p = work.path().join("slice");
                std::fs::write(&p, slice).unwrap();
                ranges.push((rel.to_string(), range.to_string(), sha256(&p)));
            }
            std::fs::write(d.join("index.html"), page(&hashes, &ranges)).unwrap();
            files.push(("/".into(), d.join("index.html"), 0));
        },
        |c| {
            c.list = true;
            c.access_log = Some(access_log.clone());
        },
    );
    let len_of = |path: &str| -> u64 {
        let (_, p, _) = files.iter().find(|f| f.0 == path).unwrap();
        std::fs::metadata(p).unwrap().len()
    };
    let log = work.path().join("netlog.json");
    let stderr = std::fs::File::create(work.path().join("chromium.err")).unwrap();
    let mut browser = chromium(&work.path().join("profile-a"))
        .arg(format!("--log-net-log={}", log.display()))
        .arg("--remote-debugging-port=0")
        .arg(site.url("/"))
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let said = verdict(&access_log);
    // SIGTERM: Chromium closes its network log on the way out.
    let pid = rustix::process::Pid::from_child(&browser);
    let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    let _ = browser.wait();
    assert_eq!(
        said.as_deref(),
        Some("PASS"),
        "the page's own checks; chromium said: {}",
        std::fs::read_to_string(work.path().join("chromium.err")).unwrap_or_default()
    );

    // The network log (kept as `target/browser-netlog.json`): every
    // response to the page's requests whole.
    let _ = std::fs::copy(
        &log,
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/browser-netlog.json"),
    );
    let origin = site.url("");
    let reqs: Vec<Request> = requests(&log)
        .into_iter()
        .filter(|r| r.url.starts_with(&origin) && r.ended)
        .collect();
    let mut seen_seek = false;
    for r in &reqs {
        let path = &r.url[origin.len()..];
        // The browser's own cancellations (ERR_ABORTED): media loading
        // stops once it has what it wants.
        if r.error == -3 || r.cancelled || path == "/favicon.ico" || path.starts_with("/verdict?") {
            continue;
        }
        if r.error == 0 && r.status.is_empty() {
            // Answered by the browser's cache without asking the server.
            continue;
        }
        assert_eq!(
            r.error, 0,
            "{path}: ended with net error {}: {r:?}",
            r.error
        );
        if r.status.contains(" 200") {
            if path != "/" && path != "/media/" {
                assert_eq!(r.bytes, len_of(path), "{path}: {r:?}");
            }
            let cl: u64 = header(&r.headers, "content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(u64::MAX);
            assert_eq!(
                r.bytes, cl,
                "{path}: bytes read against Content-Length: {r:?}"
            );
        } else if r.status.contains(" 206") {
            let mut sent = 0;
            let mut last = 0;
            let mut first = u64::MAX;
            for (range, len) in &r.ranges {
                let (span, total) = range.trim_start_matches("bytes ").split_once('/').unwrap();
                let (a, b) = span.split_once('-').unwrap();
                let (a, b): (u64, u64) = (a.parse().unwrap(), b.parse().unwrap());
                assert_eq!(total.parse::<u64>().unwrap(), len_of(path), "{r:?}");
                assert!(a <= b && b < len_of(path), "{path}: {range}: {r:?}");
                // A request that ended well read each response to its
                // Content-Length (else a length mismatch or a broken next
                // response is a net error): that length is the range's.
                assert_eq!(
                    *len,
                    Some(b - a + 1),
                    "{path}: Content-Length against {range}: {r:?}"
                );
                sent += b - a + 1;
                last = b - a + 1;
                first = first.min(a);
            }
            assert!(!r.ranges.is_empty(), "a 206 has Content-Range: {r:?}");
            let a = first;
            if r.ranges.len() == 1 && header(&r.sent, "if-range").is_none() {
                assert_eq!(
                    r.bytes, sent,
                    "{path}: bytes read against {:?}: {r:?}",
                    r.ranges
                );
            } else {
                // The browser's cache had part of the range (it asked
                // with If-Range, or in several pieces, or asked again):
                // the page got at least the last response the network
                // sent, and no more than the file.
                assert!(
                    r.bytes >= last && r.bytes <= len_of(path),
                    "{path}: bytes read against {:?}: {r:?}",
                    r.ranges
                );
            }
            if a > 0 {
                seen_seek = true;
            }
        } else if r.status.contains(" 304") {
            // The body comes from the browser's own cache, whole: the
            // file, or the range asked for.
            if files.iter().any(|f| f.0 == path && f.2 > 0) {
                let asked = header(&r.sent, "range")
                    .and_then(|v| v.strip_prefix("bytes="))
                    .and_then(|v| v.split_once('-'))
                    .and_then(|(a, b)| Some(b.parse::<u64>().ok()? - a.parse::<u64>().ok()? + 1));
                assert!(
                    r.bytes == 0 || r.bytes == len_of(path) || Some(r.bytes) == asked,
                    "{path}: {r:?}"
                );
            }
        } else {
            panic!("{path}: {}: {r:?}", r.status);
        }
    }
    for want in [
        "/",
        "/style.css",
        "/img/small.bmp",
        "/img/large.bmp",
        "/media/clip.webm",
        "/media/",
    ] {
        assert!(
            reqs.iter()
                .any(|r| &r.url[origin.len()..] == want && !r.status.is_empty()),
            "no request for {want} answered by the server in the network log: {:?}",
            reqs.iter()
                .map(|r| (&r.url, &r.status, r.bytes, r.error))
                .collect::<Vec<_>>()
        );
    }
    let video_ranges: Vec<&str> = reqs
        .iter()
        .filter(|r| r.url.ends_with("/media/clip.webm"))
        .filter_map(|r| header(&r.sent, "range"))
        .collect();
    assert!(
        seen_seek || video_ranges.iter().any(|r| !r.starts_with("bytes=0-")),
        "no range request past the video's start: {video_ranges:?}"
    );

    // The screenshot.
    let shot = work.path().join("page.png");
    let out = chromium(&work.path().join("profile-b"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1024,768")
        // Time for the page's script (the seek) before the picture; the
        // verdict came from the run above.
        .arg("--virtual-time-budget=10000")
        .arg(site.url("/"))
        .output()
        .unwrap();
    let png = std::fs::read(&shot).unwrap_or_else(|e| {
        panic!(
            "no screenshot ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
    let keep = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/browser-page.png");
    let _ = std::fs::write(keep, &png);
}
