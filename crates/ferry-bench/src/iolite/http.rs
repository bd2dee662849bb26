//! The IO-Lite paper's web-server experiment (§4, Figures 4 and 5: HTTP
//! throughput by document size, Flash-Lite beside Flash and Apache) on
//! today's servers: `ferry serve` beside nginx, lighttpd and h2o (Debian's
//! packages, installed when missing) and static-web-server (crates.io's
//! `static-web-server` binary, used when on the PATH), each with one
//! worker on loopback, loaded by wrk (one thread, 32 keep-alive
//! connections) asking for one file again and again, one file per size.
//! Servers run on CPU 0 and wrk on CPU 1 (`taskset`), so that on a
//! two-core machine neither takes the other's core.
//!
//! Before anything is timed every server's answer to every file is
//! checked (status 200, the file's bytes); a wrk run that saw a non-2xx
//! answer or a socket error fails the bench. A peer that is not there is
//! named in its rows, which then have no baseline.

use crate::measure::{interleave, median, Scale, Variant};
use crate::report::{Row, Target, Unit};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Document sizes (the paper's figures run from 500 bytes to 200 KB;
/// 1 MiB adds a file well past nginx's `sendfile` crossover).
const SIZES: &[usize] = &[1 << 10, 16 << 10, 100 << 10, 1 << 20];

/// Seconds of load per measured run (scaled down by `--quick`).
const SECONDS: f64 = 4.0;

/// wrk's connections.
const CONNECTIONS: usize = 32;

pub(super) struct Scratch(pub(super) PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A server process, killed when dropped.
pub(super) struct Running {
    pub(super) child: Child,
    pub(super) addr: SocketAddr,
}

impl Drop for Running {
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

/// One server: its name, the program it needs, where that comes from,
/// and how to start it on `port` over `docs` (scratch files in `dir`).
pub(super) struct Server {
    pub(super) name: &'static str,
    pub(super) program: &'static str,
    pub(super) package: Option<&'static str>,
    pub(super) start: fn(&Ctx, &str, u16) -> Result<Command, String>,
}

pub(super) struct Ctx {
    pub(super) ferry: String,
    pub(super) docs: PathBuf,
    pub(super) dir: PathBuf,
    pub(super) root: bool,
    /// The programs behind the servers (the CGI case): the ipc program,
    /// and php-fpm's socket.
    pub(super) ipc_program: Option<PathBuf>,
    pub(super) fpm_sock: Option<PathBuf>,
    /// HTTPS (the `https` case): the certificate and key, in PEM.
    pub(super) tls: Option<(PathBuf, PathBuf)>,
}

fn servers() -> Vec<Server> {
    vec![
        ferry_server(),
        Server {
            name: "nginx",
            program: "nginx",
            package: Some("nginx"),
            start: |c, bin, port| nginx(c, bin, port, ""),
        },
        Server {
            name: "lighttpd",
            program: "lighttpd",
            package: Some("lighttpd"),
            start: |c, bin, port| {
                let d = c.dir.join(format!("lighttpd-{port}"));
                std::fs::create_dir_all(&d).map_err(|e| e.to_string())?;
                let conf = format!(
                    "server.document-root = \"{docs}\"\nserver.bind = \"127.0.0.1\"\nserver.port = {port}\n\
                     server.errorlog = \"{d}/error.log\"\nserver.max-keep-alive-requests = 100000000\n\
                     mimetype.assign = ( \".bin\" => \"application/octet-stream\" )\n",
                    docs = c.docs.display(),
                    d = d.display(),
                );
                let path = d.join("lighttpd.conf");
                std::fs::write(&path, conf).map_err(|e| e.to_string())?;
                let mut cmd = Command::new(bin);
                cmd.arg("-D").arg("-f").arg(&path);
                Ok(cmd)
            },
        },
        Server {
            name: "h2o",
            program: "h2o",
            package: Some("h2o"),
            start: |c, bin, port| {
                let d = c.dir.join(format!("h2o-{port}"));
                std::fs::create_dir_all(&d).map_err(|e| e.to_string())?;
                let conf = format!(
                    "{user}listen:\n  host: 127.0.0.1\n  port: {port}\nnum-threads: 1\n\
                     error-log: {d}/error.log\npid-file: {d}/h2o.pid\n\
                     hosts:\n  default:\n    paths:\n      /:\n        file.dir: {docs}\n",
                    user = if c.root { "user: root\n" } else { "" },
                    d = d.display(),
                    docs = c.docs.display(),
                );
                let path = d.join("h2o.conf");
                std::fs::write(&path, conf).map_err(|e| e.to_string())?;
                let mut cmd = Command::new(bin);
                cmd.arg("-c").arg(&path);
                Ok(cmd)
            },
        },
        Server {
            name: "static-web-server",
            program: "static-web-server",
            package: None,
            start: |c, bin, port| {
                let mut cmd = Command::new(bin);
                cmd.args(["--host", "127.0.0.1", "--port"])
                    .arg(port.to_string())
                    .arg("--root")
                    .arg(&c.docs)
                    .args(["--threads-multiplier", "1", "--log-level", "error"]);
                Ok(cmd)
            },
        },
    ]
}

/// `ferry serve` with one worker on `port` (its options and directory
/// still to add).
pub(super) fn ferry_serve(c: &Ctx, port: u16) -> Command {
    let mut cmd = Command::new(&c.ferry);
    cmd.args(["serve", "--workers", "1", "--listen"])
        .arg(format!("127.0.0.1:{port}"));
    if let Some((cert, key)) = &c.tls {
        cmd.arg("--tls-cert").arg(cert).arg("--tls-key").arg(key);
    }
    cmd
}

/// nginx with one worker on `port` over the documents, `sendfile` and
/// `tcp_nopush` on, no access log; `locations` go inside its `server`.
/// With `Ctx::tls`, HTTPS on that port (its defaults: TLS 1.2 and 1.3,
/// OpenSSL's ciphers) with a session cache.
pub(super) fn nginx(c: &Ctx, bin: &str, port: u16, locations: &str) -> Result<Command, String> {
    let d = c.dir.join(format!("nginx-{port}"));
    std::fs::create_dir_all(&d).map_err(|e| e.to_string())?;
    let (ssl, ssl_conf) = match &c.tls {
        Some((cert, key)) => (
            " ssl",
            format!(
                "  ssl_certificate {};\n  ssl_certificate_key {};\n  ssl_session_cache shared:SSL:10m;\n",
                cert.display(),
                key.display()
            ),
        ),
        None => ("", String::new()),
    };
    let conf = format!(
        "{user}worker_processes 1;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{ worker_connections 4096; }}\n\
         http {{\n  include /etc/nginx/mime.types;\n  default_type application/octet-stream;\n\
         access_log off;\n  sendfile on;\n  tcp_nopush on;\n  keepalive_requests 100000000;\n\
         client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n\
         uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
         server {{ listen 127.0.0.1:{port}{ssl}; root {docs};\n{ssl_conf}{locations}\n  }}\n}}\n",
        user = if c.root { "user root;\n" } else { "" },
        d = d.display(),
        docs = c.docs.display(),
    );
    let path = d.join("nginx.conf");
    std::fs::write(&path, conf).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(bin);
    cmd.arg("-p")
        .arg(&d)
        .arg("-c")
        .arg(&path)
        .arg("-e")
        .arg(d.join("error.log"));
    Ok(cmd)
}

/// `name` on the PATH, or in /usr/sbin (not on every user's PATH).
pub(super) fn program(name: &str) -> Option<String> {
    super::super::asf::which(&[name]).or_else(|| {
        let p = format!("/usr/sbin/{name}");
        Path::new(&p).is_file().then_some(p)
    })
}

/// A port no one listens on now.
pub(super) fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("binding a port: {e}"))?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

/// Starts `s` on CPU 0 and waits until it accepts connections.
pub(super) fn launch(s: &Server, bin: &str, ctx: &Ctx) -> Result<Running, String> {
    let port = free_port()?;
    let cmd = (s.start)(ctx, bin, port)?;
    let mut pinned = Command::new("taskset");
    pinned
        .arg("-c")
        .arg("0")
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = pinned
        .spawn()
        .map_err(|e| format!("{}: starting: {e}", s.name))?;
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let mut r = Running { child, addr };
    let t = Instant::now();
    loop {
        if TcpStream::connect(addr).is_ok() {
            return Ok(r);
        }
        if let Ok(Some(st)) = r.child.try_wait() {
            return Err(format!("{}: exited at start ({st})", s.name));
        }
        if t.elapsed() > Duration::from_secs(10) {
            return Err(format!("{}: not listening after 10 s", s.name));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Asks `r` for `path` once; Err unless it answers 200 with `want`.
pub(super) fn check(name: &str, r: &Running, path: &str, want: &[u8]) -> Result<(), String> {
    let mut c = TcpStream::connect(r.addr).map_err(|e| format!("{name}: {e}"))?;
    c.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    c.write_all(
        // HTTP/1.0: the body comes as it is, never chunked.
        format!("GET {path} HTTP/1.0\r\nHost: bench\r\n\r\n").as_bytes(),
    )
    .map_err(|e| format!("{name}: {e}"))?;
    let mut got = Vec::new();
    c.read_to_end(&mut got)
        .map_err(|e| format!("{name}: {e}"))?;
    let end = got
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("{name}: no response head for {path}"))?;
    let status =
        String::from_utf8_lossy(&got[..got[..end].iter().position(|&b| b == b'\r').unwrap_or(end)])
            .into_owned();
    if !status.contains(" 200") {
        return Err(format!("{name}: {path}: {status}"));
    }
    if &got[end + 4..] != want {
        return Err(format!(
            "{name}: {path}: {} bytes came, not the file's {}",
            got.len() - end - 4,
            want.len()
        ));
    }
    Ok(())
}

/// CPU time (user + system, in clock ticks) that process `root` and its
/// descendants have used, the children they reaped included: a server's
/// whole cost (nginx's workers are its master's children; ferry's
/// threads are its own).
pub(super) fn tree_cpu_ticks(root: u32) -> u64 {
    let mut parent: Vec<(u32, u32, u64)> = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command's closing parenthesis: state is 3,
        // ppid 4, utime 14, stime 15, cutime 16, cstime 17.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let num = |i: usize| {
            f.get(i - 3)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        parent.push((pid, num(4) as u32, num(14) + num(15) + num(16) + num(17)));
    }
    let mut inside = vec![root];
    let mut total = 0;
    let mut grew = true;
    while grew {
        grew = false;
        for (pid, ppid, _) in &parent {
            if !inside.contains(pid) && inside.contains(ppid) {
                inside.push(*pid);
                grew = true;
            }
        }
    }
    for (pid, _, t) in &parent {
        if inside.contains(pid) {
            total += t;
        }
    }
    total
}

/// One wrk run against `url` for `secs` (whole seconds, at least one):
/// requests per second.
pub(super) fn wrk(url: &str, secs: f64) -> Result<f64, String> {
    wrk_with(url, secs, false)
}

/// [`wrk`], with `close`: `Connection: close` on every request (a new
/// connection per request).
pub(super) fn wrk_with(url: &str, secs: f64, close: bool) -> Result<f64, String> {
    let mut cmd = Command::new("taskset");
    cmd.args(["-c", "1", "wrk", "-t1"]);
    if close {
        cmd.args(["-H", "Connection: close"]);
    }
    let o = cmd
        .arg(format!("-c{CONNECTIONS}"))
        .arg(format!("-d{}s", secs.round().max(1.0) as u64))
        .args(["--timeout", "5s"])
        .arg(url)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running wrk: {e}"))?;
    let out = String::from_utf8_lossy(&o.stdout);
    if !o.status.success() {
        return Err(format!(
            "wrk {url}: {}{}",
            out,
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    for bad in ["Non-2xx", "Socket errors"] {
        if let Some(l) = out.lines().find(|l| l.contains(bad)) {
            // With a connection per request, a server that resets the
            // connection after its whole response (static-web-server
            // does) shows as read errors: the responses still came.
            let only_reads =
                l.contains("connect 0,") && l.contains("write 0,") && l.contains("timeout 0");
            if close && bad == "Socket errors" && only_reads {
                continue;
            }
            return Err(format!("wrk {url}: {}", l.trim()));
        }
    }
    out.lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|&r| r > 0.0)
        .ok_or_else(|| format!("wrk {url}: no request rate in {out:?}"))
}

/// A scratch directory (`ferry-bench-TAG-PID`, removed when dropped)
/// with `docs/` in it holding one file per size of [`SIZES`], both
/// world-readable (for servers whose workers drop privileges): the
/// directory, `docs/`, and (URL path, bytes, size) of each file.
pub(super) type Documents = (Scratch, PathBuf, Vec<(String, Vec<u8>, usize)>);

pub(super) fn documents(tag: &str) -> Result<Documents, String> {
    let dir =
        Scratch(std::env::temp_dir().join(format!("ferry-bench-{tag}-{}", std::process::id())));
    let docs = dir.0.join("docs");
    std::fs::create_dir_all(&docs).map_err(|e| format!("{}: {e}", docs.display()))?;
    use std::os::unix::fs::PermissionsExt;
    for d in [&dir.0, &docs] {
        let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755));
    }
    let mut files = Vec::new();
    for &size in SIZES {
        let name = format!("f-{size}.bin");
        let bytes: Vec<u8> = (0..size)
            .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[2])
            .collect();
        std::fs::write(docs.join(&name), &bytes).map_err(|e| e.to_string())?;
        files.push((format!("/{name}"), bytes, size));
    }
    Ok((dir, docs, files))
}

/// `ferry serve` over the documents with nothing else (HTTPS when the
/// context has a certificate).
pub(super) fn ferry_server() -> Server {
    Server {
        name: "ferry serve",
        program: "ferry",
        package: None,
        start: |c, _, port| {
            let mut cmd = ferry_serve(c, port);
            cmd.arg(&c.docs);
            Ok(cmd)
        },
    }
}

pub(super) fn human(n: usize) -> String {
    if n >= 1 << 20 {
        format!("{} MiB", n >> 20)
    } else {
        format!("{} KiB", n >> 10)
    }
}

pub fn run(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let quick = scale.0 < 1.0;
    let ferry = crate::workspace::ferry(true)?;
    let all = servers();
    if !quick {
        let need: Vec<&str> = all
            .iter()
            .filter(|s| program(s.program).is_none())
            .filter_map(|s| s.package)
            .chain(
                super::super::asf::which(&["wrk"])
                    .is_none()
                    .then_some("wrk"),
            )
            .collect();
        if let Err(why) = crate::peers::install(&need, false) {
            eprintln!("  peers not installed: {why}");
        }
    }
    if super::super::asf::which(&["wrk"]).is_none()
        || super::super::asf::which(&["taskset"]).is_none()
    {
        return Ok(vec![Row {
            what: "HTTP: left out".into(),
            ferry_name: "ferry serve".into(),
            ferry: f64::NAN,
            baseline_name: "no wrk or taskset (apt-get install wrk util-linux)".into(),
            baseline: None,
            unit: Unit::PerRequest,
            target: Target::None,
            runs,
        }]);
    }
    let (dir, docs, files) = documents("http")?;
    let ctx = Ctx {
        ferry: ferry.clone(),
        docs: docs.clone(),
        dir: dir.0.clone(),
        root: rustix::process::geteuid().is_root(),
        ipc_program: None,
        fpm_sock: None,
        tls: None,
    };
    // Every server that is there, started and checked on every file.
    let mut up: Vec<(&'static str, Running)> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    for s in &all {
        let bin = if s.program == "ferry" {
            Some(ferry.clone())
        } else {
            program(s.program)
        };
        let Some(bin) = bin else {
            missing.push(format!(
                "{} (not installed: {})",
                s.name,
                s.package
                    .map_or("cargo install static-web-server".to_string(), |p| {
                        format!("apt-get install {p}")
                    })
            ));
            continue;
        };
        let r = launch(s, &bin, &ctx)?;
        for (path, bytes, _) in &files {
            check(s.name, &r, path, bytes)?;
        }
        up.push((s.name, r));
    }
    let rows = measure(&up, &missing, &files, runs, quick, "http", "HTTP GET")?;
    drop(up);
    Ok(rows)
}

/// The interleaved wrk runs against every server `up` (ferry's first), by
/// file and with keep-alive and a connection per request, over `scheme`:
/// rows of requests/s and of server CPU per request, `what` naming the
/// case; the servers `missing` are named in rows without a baseline.
pub(super) fn measure(
    up: &[(&'static str, Running)],
    missing: &[String],
    files: &[(String, Vec<u8>, usize)],
    runs: usize,
    quick: bool,
    scheme: &str,
    what: &str,
) -> Result<Vec<Row>, String> {
    // wrk counts whole seconds.
    let secs = if quick { 1.0 } else { SECONDS };
    let mut rows = Vec::new();
    let cases = [false, true]
        .into_iter()
        .flat_map(|close| files.iter().map(move |f| (close, f)));
    for (close, (path, _, size)) in cases {
        let how = if close {
            ", a connection per request"
        } else {
            ""
        };
        // The server's CPU per request of each run, beside its rate.
        let cpu: Vec<std::cell::RefCell<Vec<f64>>> = up
            .iter()
            .map(|_| std::cell::RefCell::new(Vec::new()))
            .collect();
        let tick = 1.0 / rustix::param::clock_ticks_per_second() as f64;
        let mut vs: Vec<Variant<'_>> = up
            .iter()
            .zip(&cpu)
            .map(|((name, r), cpu)| {
                let url = format!("{scheme}://{}{path}", r.addr);
                let pid = r.child.id();
                Variant::new(*name, move || {
                    let before = tree_cpu_ticks(pid);
                    let rate = wrk_with(&url, secs, close)?;
                    let used = tree_cpu_ticks(pid).saturating_sub(before) as f64 * tick;
                    let requests = rate * secs.round().max(1.0);
                    cpu.borrow_mut().push(used / requests.max(1.0));
                    Ok((Duration::from_secs(1), rate))
                })
            })
            .collect();
        // Warm: each server serves the file for a moment first.
        if !quick {
            for (_, r) in up {
                wrk_with(&format!("{scheme}://{}{path}", r.addr), 1.0, close)?;
            }
        }
        let s = interleave(runs, &mut vs)?;
        drop(vs);
        let ferry_med = median(&s[0].per_unit);
        let ferry_cpu = median(&cpu[0].borrow());
        for (i, peer) in s.iter().enumerate().skip(1) {
            rows.push(Row {
                what: format!(
                    "{what}: server CPU per request, a {} file, 1 worker, {CONNECTIONS} connections{how}",
                    human(*size)
                ),
                ferry_name: "ferry serve".into(),
                ferry: ferry_cpu,
                baseline_name: peer.name.clone(),
                baseline: Some(median(&cpu[i].borrow())),
                unit: Unit::CpuPerRequest,
                // ≤ 0.8× nginx's CPU per request.
                target: if peer.name == "nginx" {
                    Target::MinRatio(1.25)
                } else {
                    Target::None
                },
                runs,
            });
        }
        for peer in s.iter().skip(1) {
            rows.push(Row {
                what: format!(
                    "{what} of a {} file, 1 worker, {CONNECTIONS} connections{how}",
                    human(*size)
                ),
                ferry_name: "ferry serve".into(),
                ferry: ferry_med,
                baseline_name: peer.name.clone(),
                baseline: Some(median(&peer.per_unit)),
                unit: Unit::PerRequest,
                target: if peer.name == "nginx" {
                    Target::MinRatio(1.0)
                } else {
                    Target::None
                },
                runs,
            });
        }
        for m in missing {
            rows.push(Row {
                what: format!(
                    "{what} of a {} file, 1 worker, {CONNECTIONS} connections{how}",
                    human(*size)
                ),
                ferry_name: "ferry serve".into(),
                ferry: ferry_med,
                baseline_name: m.clone(),
                baseline: None,
                unit: Unit::PerRequest,
                target: Target::None,
                runs,
            });
        }
    }
    Ok(rows)
}
