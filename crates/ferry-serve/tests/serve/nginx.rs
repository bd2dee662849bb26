//! The same requests to `ferry serve` and to nginx (Debian's package,
//! which CI installs) over the same directory, raw on a socket: the status
//! and the headers that matter agree, case by case. Where ferry answers
//! otherwise on purpose, the case says why and checks ferry's answer.

use crate::{Reply, Site};
use std::fs;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Nginx {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM first: a server's master (nginx's) then ends its workers;
        // SIGKILL would leave them behind, holding the port.
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn nginx_program() -> String {
    for p in ["/usr/sbin/nginx", "/usr/bin/nginx"] {
        if Path::new(p).is_file() {
            return p.into();
        }
    }
    panic!("nginx is needed for these tests: apt-get install nginx (.ci/run installs it)");
}

/// nginx with one worker over `docs`, on a free port.
fn nginx(docs: &Path) -> Nginx {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let d = dir.path().display();
    let user = if rustix::process::geteuid().is_root() {
        "user root;\n"
    } else {
        ""
    };
    let conf = format!(
        "{user}worker_processes 1;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{ worker_connections 64; }}\n\
         http {{\n  include /etc/nginx/mime.types;\n  default_type application/octet-stream;\n  access_log off;\n\
         client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n\
         uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
         server {{ listen 127.0.0.1:{port}; root {docs}; }}\n}}\n",
        docs = docs.display()
    );
    let conf_path = dir.path().join("nginx.conf");
    fs::write(&conf_path, conf).unwrap();
    let child = Command::new(nginx_program())
        .arg("-p")
        .arg(dir.path())
        .arg("-c")
        .arg(&conf_path)
        .arg("-e")
        .arg(dir.path().join("error.log"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let t = Instant::now();
    while TcpStream::connect(addr).is_err() {
        assert!(t.elapsed() < Duration::from_secs(10), "nginx did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Nginx {
        child,
        addr,
        _dir: dir,
    }
}

fn ask(addr: SocketAddr, req: &[u8]) -> Reply {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(req).unwrap();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    Reply::parse(&got)
}

/// A header as compared: the media type without parameters, a Location's
/// path (nginx writes an absolute URL).
fn normal(name: &str, v: Option<&str>) -> Option<String> {
    let v = v?;
    Some(match name {
        "content-type" => v.split(';').next().unwrap().trim().to_string(),
        "location" => match v.strip_prefix("http://") {
            Some(rest) => rest[rest.find('/').unwrap_or(rest.len())..].to_string(),
            None => v.to_string(),
        },
        _ => v.to_string(),
    })
}

fn docs(d: &Path) {
    fs::write(d.join("small.txt"), b"0123456789abcdef").unwrap();
    fs::write(d.join("page.html"), b"<p>page</p>").unwrap();
    fs::write(d.join("big.bin"), vec![7u8; 200_000]).unwrap();
    fs::create_dir(d.join("dir")).unwrap();
    fs::write(d.join("dir/index.html"), b"<h1>i</h1>").unwrap();
    fs::create_dir(d.join("bare")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    for p in [d.to_path_buf(), d.join("dir"), d.join("bare")] {
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn ferry_answers_as_nginx_does() {
    let s = Site::new(docs, |_| {});
    let n = nginx(s.dir.path());
    let mtime = httpdate::fmt_http_date(
        fs::metadata(s.dir.path().join("small.txt"))
            .unwrap()
            .modified()
            .unwrap(),
    );
    let get = |path: &str, extra: &str| {
        format!("GET {path} HTTP/1.1\r\nHost: h\r\n{extra}Connection: close\r\n\r\n")
    };
    let cases: Vec<(String, &[&str])> = vec![
        (get("/small.txt", ""), &["content-length", "content-type", "accept-ranges", "last-modified"]),
        (
            "HEAD /small.txt HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n".into(),
            &["content-length"],
        ),
        (get("/big.bin", ""), &["content-length", "content-type"]),
        (get("/page.html", ""), &["content-length", "content-type"]),
        (get("/small.txt", "Range: bytes=0-4\r\n"), &["content-length", "content-range"]),
        (get("/small.txt", "Range: bytes=-3\r\n"), &["content-length", "content-range"]),
        (get("/small.txt", "Range: bytes=10-\r\n"), &["content-length", "content-range"]),
        (get("/small.txt", "Range: bytes=4-1000\r\n"), &["content-range"]),
        (get("/small.txt", "Range: bytes=100-\r\n"), &["content-range"]),
        (get("/big.bin", "Range: bytes=0-1,100-199\r\n"), &["content-type"]),
        (get("/small.txt", "Range: items=0-1\r\n"), &["content-length"]),
        (get("/small.txt", &format!("If-Modified-Since: {mtime}\r\n")), &[]),
        (get("/small.txt", "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n"), &[]),
        (get("/small.txt", &format!("Range: bytes=0-1\r\nIf-Range: {mtime}\r\n")), &["content-range"]),
        (get("/small.txt", "Range: bytes=0-1\r\nIf-Range: Thu, 01 Jan 1970 00:00:00 GMT\r\n"), &["content-length"]),
        (get("/dir", ""), &["location"]),
        (get("/dir?a=b", ""), &["location"]),
        (get("/dir/", ""), &["content-length", "content-type"]),
        (get("/bare/", ""), &[]),
        (get("/missing", ""), &[]),
        (get("/small.txt/", ""), &[]),
        (get("/../etc/passwd", ""), &[]),
        (get("/%2e%2e/etc/passwd", ""), &[]),
        (get("/dir/../small.txt", ""), &["content-length"]),
        (get("/sm%61ll.txt", ""), &["content-length"]),
        (get("/small.txt?x=1", ""), &["content-length"]),
        (get("http://h/small.txt", ""), &["content-length"]),
        ("POST /small.txt HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc".into(), &[]),
        ("DELETE /small.txt HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n".into(), &[]),
        ("GET /small.txt HTTP/1.1\r\nConnection: close\r\n\r\n".into(), &[]),
        ("GET /small.txt HTTP/1.0\r\n\r\n".into(), &["content-length"]),
        ("GET /small.txt HTTP/2.0\r\nHost: h\r\n\r\n".into(), &[]),
        ("GET /small.txt HTTP/1.2\r\nHost: h\r\nConnection: close\r\n\r\n".into(), &["content-length"]),
        ("GET /small.txt HTTP/1.1\r\nHost: h\r\nHost: i\r\n\r\n".into(), &[]),
        ("GET /small.txt HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n".into(), &[]),
        ("GET /small.txt HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n".into(), &[]),
        ("GET /small.txt HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n".into(), &[]),
        ("GARBAGE\r\n\r\n".into(), &[]),
        (format!("GET /{} HTTP/1.1\r\nHost: h\r\n\r\n", "a".repeat(9000)), &[]),
        (get("/small.txt", "Range: bytes=5-1\r\n"), &["content-range"]),
        (get("/small.txt", "Range: bytes=x-1\r\n"), &["content-range"]),
        (get("/small.txt", "Range: bytes=\r\n"), &[]),
        (get("/small.txt", "If-None-Match: *\r\n"), &[]),
        (get("/small.txt", "If-Modified-Since: yesterday\r\n"), &[]),
        (get("/small.txt", "If-Match: \"other\"\r\n"), &[]),
        (get("/small.txt", "If-Match: *\r\n"), &["content-length"]),
        (get("/big.bin", "If-Match: \"other\"\r\nRange: bytes=0-1\r\n"), &[]),
        (get("/small.txt", "If-Unmodified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n"), &[]),
        (get("/small.txt", &format!("If-Unmodified-Since: {mtime}\r\n")), &["content-length"]),
        (get("/%zz", ""), &[]),
        (get("/a%00b", ""), &[]),
        (get("/dir/./index.html", ""), &["content-length"]),
        (get("//small.txt", ""), &["content-length"]),
        (get("/dir//", ""), &["content-length"]),
    ];
    // Where ferry answers otherwise on purpose:
    // - an empty element in a range list (`0-1,,2-3`) is allowed (RFC 9110,
    //   5.6.1): 206, where nginx answers 416;
    // - a header line past the limit is 431 (RFC 6585), where nginx
    //   answers 400.
    let f = ask(
        s.addr,
        get("/small.txt", "Range: bytes=0-1,,2-3\r\n").as_bytes(),
    );
    assert_eq!(f.status, 206);
    let long = format!(
        "GET / HTTP/1.1\r\nHost: h\r\nX: {}\r\n\r\n",
        "a".repeat(9000)
    );
    assert_eq!(ask(s.addr, long.as_bytes()).status, 431);
    assert_eq!(ask(n.addr, long.as_bytes()).status, 400);
    // The peer is nginx indeed.
    let g = ask(n.addr, get("/small.txt", "").as_bytes());
    assert!(
        g.header("server").is_some_and(|v| v.starts_with("nginx")),
        "{g:?}"
    );
    let mut differ = Vec::new();
    for (req, headers) in &cases {
        let f = ask(s.addr, req.as_bytes());
        let g = ask(n.addr, req.as_bytes());
        let mut what = Vec::new();
        if f.status != g.status {
            what.push(format!("status {} (nginx {})", f.status, g.status));
        }
        for h in *headers {
            let (a, b) = (normal(h, f.header(h)), normal(h, g.header(h)));
            if a != b {
                what.push(format!("{h}: {a:?} (nginx {b:?})"));
            }
        }
        if f.status == g.status
            && (200..300).contains(&f.status)
            && !req.starts_with("HEAD")
            && f.body != g.body
            && !f
                .header("content-type")
                .is_some_and(|t| t.starts_with("multipart"))
        {
            what.push("the body differs".into());
        }
        if !what.is_empty() {
            let first = req.lines().next().unwrap_or("");
            let first = &first[..first.len().min(60)];
            differ.push(format!(
                "{first:?} {:?}: {}",
                &req[first.len()..req.len().min(first.len() + 80)],
                what.join(", ")
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "ferry differs from nginx:\n{}",
        differ.join("\n")
    );
}
