//! HTTPS: `ferry serve --tls-cert --tls-key` beside nginx's HTTPS
//! (`listen … ssl`, Debian's package) on the same files, certificate and
//! load as the `http` case — one worker each on CPU 0, wrk (OpenSSL) on
//! CPU 1, keep-alive and a connection per request (a handshake each).
//! The certificate is an ECDSA P-256 one made by `openssl req` for
//! 127.0.0.1. Every server's answer to every file is checked first
//! (`curl`, the file's bytes).

use super::http::{self, Ctx, Running, Server};
use crate::measure::Scale;
use crate::report::{Row, Target, Unit};
use std::path::Path;
use std::process::{Command, Stdio};

fn servers() -> [Server; 2] {
    [
        http::ferry_server(),
        Server {
            name: "nginx",
            program: "nginx",
            package: Some("nginx"),
            start: |c, bin, port| http::nginx(c, bin, port, ""),
        },
    ]
}

/// An ECDSA P-256 certificate for 127.0.0.1 and its key, in `dir`.
fn certificate(dir: &Path) -> Result<(std::path::PathBuf, std::path::PathBuf), String> {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let o = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "30"])
        .args(["-subj", "/CN=localhost", "-addext"])
        .arg("subjectAltName=DNS:localhost,IP:127.0.0.1")
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("openssl (apt-get install openssl): {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "openssl req: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok((cert, key))
}

/// Asks `r` for `path` over HTTPS (curl, trusting `cert`); Err unless
/// the body is `want`.
fn check(name: &str, r: &Running, cert: &Path, path: &str, want: &[u8]) -> Result<(), String> {
    let o = Command::new("curl")
        .args(["-s", "--fail", "--max-time", "20", "--cacert"])
        .arg(cert)
        .arg(format!("https://{}{path}", r.addr))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("curl: {e}"))?;
    if !o.status.success() || o.stdout != want {
        return Err(format!(
            "{name}: https {path}: {} bytes came (curl {}), not the file's {}",
            o.stdout.len(),
            o.status,
            want.len()
        ));
    }
    Ok(())
}

pub fn run(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let quick = scale.0 < 1.0;
    let ferry = crate::workspace::ferry(true)?;
    if !quick {
        let mut need = Vec::new();
        if http::program("nginx").is_none() {
            need.push("nginx");
        }
        for (cmd, pkg) in [("wrk", "wrk"), ("openssl", "openssl"), ("curl", "curl")] {
            if super::super::asf::which(&[cmd]).is_none() {
                need.push(pkg);
            }
        }
        if let Err(why) = crate::peers::install(&need, false) {
            eprintln!("  peers not installed: {why}");
        }
    }
    for cmd in ["wrk", "taskset", "openssl", "curl"] {
        if super::super::asf::which(&[cmd]).is_none() {
            return Ok(vec![Row {
                what: "HTTPS: left out".into(),
                ferry_name: "ferry serve".into(),
                ferry: f64::NAN,
                baseline_name: format!("no {cmd} here"),
                baseline: None,
                unit: Unit::PerRequest,
                target: Target::None,
                runs,
            }]);
        }
    }
    let (dir, docs, files) = http::documents("https")?;
    let (cert, key) = certificate(&dir.0)?;
    // nginx's workers read the key as themselves.
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644));
    let ctx = Ctx {
        ferry: ferry.clone(),
        docs,
        dir: dir.0.clone(),
        root: rustix::process::geteuid().is_root(),
        ipc_program: None,
        fpm_sock: None,
        tls: Some((cert.clone(), key)),
    };
    let mut up: Vec<(&'static str, Running)> = Vec::new();
    let mut missing = Vec::new();
    for s in servers() {
        let bin = if s.program == "ferry" {
            Some(ferry.clone())
        } else {
            http::program(s.program)
        };
        let Some(bin) = bin else {
            missing.push(format!("{} (not installed: apt-get install nginx)", s.name));
            continue;
        };
        let r = http::launch(&s, &bin, &ctx)?;
        for (path, bytes, _) in &files {
            check(s.name, &r, &cert, path, bytes)?;
        }
        up.push((s.name, r));
    }
    let mut rows = http::measure(&up, &missing, &files, runs, quick, "https", "HTTPS GET")?;
    // The target for HTTPS is the rate (≥ nginx's); CPU per request is
    // reported without one.
    for r in &mut rows {
        if matches!(r.unit, Unit::CpuPerRequest) {
            r.target = Target::None;
        }
    }
    drop(up);
    Ok(rows)
}
