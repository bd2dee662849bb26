//! The IO-Lite paper's CGI experiment (§4, Figure 6: Flash-Lite's
//! persistent CGI programs on IO-Lite against Flash's and Apache's) on
//! today's servers: a body of each size made by a program behind the
//! server — `ferry serve`'s ipc CGI (the `ipc_cgi` example, whose bodies
//! are kept in its pool and sent by reference), ferry and nginx in front
//! of php-fpm (FastCGI; Debian's packages, installed when missing), and a
//! CGI/1.1 script (a process per request) — beside ferry serving the same
//! bytes as a static file. Servers, programs and php-fpm on CPU 0, wrk on
//! CPU 1, one worker each, 32 keep-alive connections.
//!
//! Every variant's answer is checked before anything is timed.

use super::http::{self, Ctx, Running, Scratch, Server};
use crate::measure::{interleave, median, Scale, Variant};
use crate::report::{Row, Target, Unit};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Body sizes (the paper's Figure 6 runs to 200 KB).
const SIZES: &[usize] = &[1 << 10, 16 << 10, 100 << 10, 1 << 20];

const SECONDS: f64 = 4.0;

/// php-fpm's workers.
const FPM_CHILDREN: usize = 2;

/// php-fpm, killed when dropped.
struct Fpm(Child);

impl Drop for Fpm {
    fn drop(&mut self) {
        // SIGTERM: the master ends its workers (SIGKILL would orphan them).
        let pid = rustix::process::Pid::from_child(&self.0);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn fpm_binary() -> Option<PathBuf> {
    let dir = std::fs::read_dir("/usr/sbin").ok()?;
    dir.filter_map(|e| e.ok().map(|e| e.path())).find(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("php-fpm"))
    })
}

/// Starts php-fpm on a socket in `dir`, on CPU 0.
fn start_fpm(bin: &Path, dir: &Path) -> Result<(Fpm, PathBuf), String> {
    let d = dir.display();
    let conf = format!(
        "[global]\nerror_log = {d}/fpm-error.log\ndaemonize = no\npid = {d}/fpm.pid\n\
         [www]\nlisten = {d}/fpm.sock\nlisten.mode = 0666\npm = static\npm.max_children = {FPM_CHILDREN}\n\
         pm.max_requests = 0\n"
    );
    let path = dir.join("fpm.conf");
    std::fs::write(&path, conf).map_err(|e| e.to_string())?;
    let child = Command::new("taskset")
        .args(["-c", "0"])
        .arg(bin)
        .args(["-R", "-n", "-d", "display_errors=0", "-y"])
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting php-fpm: {e}"))?;
    let fpm = Fpm(child);
    let sock = dir.join("fpm.sock");
    let t = Instant::now();
    while !sock.exists() {
        if t.elapsed() > Duration::from_secs(10) {
            return Err("php-fpm: no socket after 10 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((fpm, sock))
}

fn servers() -> Vec<Server> {
    vec![
        Server {
            name: "ferry serve",
            program: "ferry",
            package: None,
            start: |c, _, port| {
                let mut cmd = http::ferry_serve(c, port);
                cmd.args(["--cgi", "/cgi-bin", "--ipc-cgi"]).arg(format!(
                    "/app={}",
                    c.ipc_program.as_ref().ok_or("no ipc program")?.display()
                ));
                if let Some(s) = &c.fpm_sock {
                    cmd.arg("--fastcgi").arg(format!(".php={}", s.display()));
                }
                cmd.arg(&c.docs);
                Ok(cmd)
            },
        },
        Server {
            name: "nginx",
            program: "nginx",
            package: Some("nginx"),
            start: |c, bin, port| {
                let sock = c.fpm_sock.as_ref().ok_or("no php-fpm")?;
                let php = format!(
                    "    location ~ \\.php$ {{\n      include /etc/nginx/fastcgi_params;\n\
                     fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\n\
                     fastcgi_pass unix:{};\n    }}",
                    sock.display()
                );
                http::nginx(c, bin, port, &php)
            },
        },
    ]
}

fn row(size: usize, ferry: f64, name: &str, base: Option<f64>, target: Target, runs: usize) -> Row {
    Row {
        what: format!(
            "a {} body made by a program, 1 worker, 32 connections",
            http::human(size)
        ),
        ferry_name: "ferry serve, ipc CGI".into(),
        ferry,
        baseline_name: name.into(),
        baseline: base,
        unit: Unit::PerRequest,
        target,
        runs,
    }
}

pub fn run(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let quick = scale.0 < 1.0;
    let ferry = crate::workspace::ferry(true)?;
    let ipc_program = crate::workspace::example("ferry-serve", "ipc_cgi", true)?;
    if !quick {
        let mut need = Vec::new();
        if http::program("nginx").is_none() {
            need.push("nginx");
        }
        if fpm_binary().is_none() {
            need.push("php-fpm");
        }
        if super::super::asf::which(&["wrk"]).is_none() {
            need.push("wrk");
        }
        if let Err(why) = crate::peers::install(&need, false) {
            eprintln!("  peers not installed: {why}");
        }
    }
    if super::super::asf::which(&["wrk"]).is_none()
        || super::super::asf::which(&["taskset"]).is_none()
    {
        return Ok(vec![row(
            0,
            f64::NAN,
            "no wrk or taskset (apt-get install wrk util-linux)",
            None,
            Target::None,
            runs,
        )]);
    }
    let dir = Scratch(std::env::temp_dir().join(format!("ferry-bench-cgi-{}", std::process::id())));
    let docs = dir.0.join("docs");
    let bin = docs.join("cgi-bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("{}: {e}", bin.display()))?;
    use std::os::unix::fs::PermissionsExt;
    for d in [&dir.0, &docs, &bin] {
        let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755));
    }
    // The same bytes everywhere: the letters the ipc program makes.
    let letters = |n: usize| -> Vec<u8> { (0..n).map(|i| b'a' + (i % 26) as u8).collect() };
    for &size in SIZES {
        std::fs::write(docs.join(format!("f-{size}.bin")), letters(size))
            .map_err(|e| e.to_string())?;
    }
    let script = bin.join("bytes.cgi");
    std::fs::write(
        &script,
        "#!/bin/sh\nprintf 'Content-Type: application/octet-stream\\r\\n\\r\\n'\nexec cat \"$DOCUMENT_ROOT/f-$QUERY_STRING.bin\"\n",
    )
    .map_err(|e| e.to_string())?;
    let _ = std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755));
    std::fs::write(
        docs.join("bytes.php"),
        "<?php\nheader('Content-Type: application/octet-stream');\nreadfile(__DIR__ . '/f-' . (int)$_GET['n'] . '.bin');\n",
    )
    .map_err(|e| e.to_string())?;

    let mut missing: Vec<String> = Vec::new();
    let fpm = match fpm_binary() {
        Some(b) => Some(start_fpm(&b, &dir.0)?),
        None => {
            missing.push("php-fpm (not installed: apt-get install php-fpm)".into());
            None
        }
    };
    let ctx = Ctx {
        ferry: ferry.clone(),
        docs: docs.clone(),
        dir: dir.0.clone(),
        root: rustix::process::geteuid().is_root(),
        ipc_program: Some(ipc_program),
        fpm_sock: fpm.as_ref().map(|(_, s)| s.clone()),
        tls: None,
    };
    let all = servers();
    let ferry_server = http::launch(&all[0], &ferry, &ctx)?;
    let nginx = match (http::program("nginx"), &fpm) {
        (Some(b), Some(_)) => Some(http::launch(&all[1], &b, &ctx)?),
        (None, _) => {
            missing.push("nginx → php-fpm (not installed: apt-get install nginx)".into());
            None
        }
        (_, None) => None,
    };

    // The variants: (name, server, path of a size).
    type PathOf = fn(usize) -> String;
    let mut variants: Vec<(&str, &Running, PathOf)> = vec![
        ("ferry serve, ipc CGI", &ferry_server, |n| {
            format!("/app/bytes/{n}")
        }),
        ("ferry serve, the static file", &ferry_server, |n| {
            format!("/f-{n}.bin")
        }),
        ("ferry serve, CGI/1.1 script", &ferry_server, |n| {
            format!("/cgi-bin/bytes.cgi?{n}")
        }),
    ];
    if fpm.is_some() {
        variants.push(("ferry serve → php-fpm", &ferry_server, |n| {
            format!("/bytes.php?n={n}")
        }));
    }
    if let Some(n) = &nginx {
        variants.push(("nginx → php-fpm", n, |n| format!("/bytes.php?n={n}")));
    }
    for &size in SIZES {
        for (name, r, path) in &variants {
            http::check(name, r, &path(size), &letters(size))?;
        }
    }
    let secs = if quick { 1.0 } else { SECONDS };
    let mut rows = Vec::new();
    for &size in SIZES {
        let mut vs: Vec<Variant<'_>> = variants
            .iter()
            .map(|(name, r, path)| {
                let url = format!("http://{}{}", r.addr, path(size));
                Variant::new(*name, move || {
                    let rate = http::wrk(&url, secs)?;
                    Ok((Duration::from_secs(1), rate))
                })
            })
            .collect();
        if !quick {
            for (_, r, path) in &variants {
                http::wrk(&format!("http://{}{}", r.addr, path(size)), 1.0)?;
            }
        }
        let s = interleave(runs, &mut vs)?;
        let ipc = median(&s[0].per_unit);
        for peer in s.iter().skip(1) {
            let target = match peer.name.as_str() {
                "ferry serve, the static file" => Target::MinRatio(0.8),
                "nginx → php-fpm" if size >= 64 << 10 => Target::MinRatio(2.0),
                _ => Target::None,
            };
            rows.push(row(
                size,
                ipc,
                &peer.name,
                Some(median(&peer.per_unit)),
                target,
                runs,
            ));
        }
        for m in &missing {
            rows.push(row(size, ipc, m, None, Target::None, runs));
        }
    }
    drop(nginx);
    drop(ferry_server);
    drop(fpm);
    Ok(rows)
}
