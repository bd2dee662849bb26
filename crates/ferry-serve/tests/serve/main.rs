//! `ferry_serve` from outside: a server on a loopback port over a
//! directory made here, asked by curl (a real client) and by raw sockets
//! where a client must misbehave. Each module holds one behaviour.

mod abuse;
mod browser;
mod connections;
mod gateways;
mod hardening;
mod nginx;
mod static_files;
mod tls;

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A server on 127.0.0.1 (a free port) over a directory of its own.
pub struct Site {
    pub dir: tempfile::TempDir,
    pub server: Option<ferry_serve::Server>,
    pub addr: SocketAddr,
    /// Over HTTPS: the certificate curl is to trust (and its directory).
    pub tls: Option<(tempfile::TempDir, std::path::PathBuf)>,
}

/// A self-signed certificate for 127.0.0.1 and localhost, made by
/// `openssl req` in `dir`: (certificate, key).
pub fn self_signed(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let out = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "30"])
        .args(["-subj", "/CN=localhost", "-addext"])
        .arg("subjectAltName=DNS:localhost,IP:127.0.0.1")
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl is needed for the HTTPS tests (.ci/run installs it)");
    assert!(out.status.success(), "openssl req: {out:?}");
    (cert, key)
}

impl Site {
    /// Serves a fresh directory that `fill` populates first.
    pub fn new(fill: impl FnOnce(&Path), tune: impl FnOnce(&mut ferry_serve::Config)) -> Site {
        let dir = tempfile::tempdir().unwrap();
        fill(dir.path());
        let mut cfg = ferry_serve::Config::new(dir.path());
        cfg.listen = vec!["127.0.0.1:0".parse().unwrap()];
        cfg.workers = 2;
        tune(&mut cfg);
        let server = ferry_serve::Server::start(cfg).unwrap();
        let addr = server.local_addrs()[0];
        Site {
            dir,
            server: Some(server),
            addr,
            tls: None,
        }
    }

    /// As [`Site::new`], over HTTPS with a certificate made here.
    pub fn new_tls(fill: impl FnOnce(&Path), tune: impl FnOnce(&mut ferry_serve::Config)) -> Site {
        let certs = tempfile::tempdir().unwrap();
        let (cert, key) = self_signed(certs.path());
        let tls = ferry_serve::TlsFiles {
            cert: cert.clone(),
            key,
        };
        let mut site = Site::new(fill, |c| {
            c.tls = Some(tls);
            tune(c)
        });
        site.tls = Some((certs, cert));
        site
    }

    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}{path}", self.addr)
    }

    /// `curl -s -i ARGS URL`: the status, the headers (names lower-case),
    /// the body.
    pub fn curl(&self, path: &str, args: &[&str]) -> Reply {
        let out = Command::new("curl")
            .args(["-s", "-i", "--path-as-is", "--max-time", "20"])
            .args(
                self.tls
                    .iter()
                    .flat_map(|(_, c)| [OsStr::new("--cacert"), c.as_os_str()]),
            )
            .args(args)
            .arg(self.url(path))
            .output()
            .expect("running curl");
        assert!(out.status.success(), "curl {path}: {out:?}");
        Reply::parse(&out.stdout)
    }

    /// Sends `bytes` on a new connection and reads until the server
    /// closes it (or 10 s pass).
    pub fn raw(&self, bytes: &[u8]) -> Vec<u8> {
        let mut s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(bytes).unwrap();
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        got
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown();
        }
    }
}

/// One parsed response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn parse(mut raw: &[u8]) -> Reply {
        // Interim responses (100 Continue) before the final one.
        while raw.starts_with(b"HTTP/1.1 1") {
            match raw.windows(4).position(|w| w == b"\r\n\r\n") {
                Some(i) => raw = &raw[i + 4..],
                None => break,
            }
        }
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("no head in {:?}", String::from_utf8_lossy(raw)));
        let head = std::str::from_utf8(&raw[..end]).unwrap();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        Reply {
            status,
            headers,
            body: raw[end + 4..].to_vec(),
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Bytes that differ everywhere (a pattern no shifted copy matches).
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[1] ^ seed)
        .collect()
}
