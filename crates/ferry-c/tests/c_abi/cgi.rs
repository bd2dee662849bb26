//! ferry/cgi.h from C: a program (tests/c/ferry-only/cgi.c) run by a
//! ferry serve (`--ipc-cgi`), asked by curl: bodies built in the pool and
//! sent again by reference, the request's variables and body, the calls
//! that must refuse, and a handler's failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn program() -> &'static Path {
    static EXE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &EXE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let exe = crate::common::build_ferry_only("cgi", dir.path());
        (dir, exe)
    })
    .1
}

struct Served {
    server: Option<ferry_serve::Server>,
    addr: std::net::SocketAddr,
    _dir: tempfile::TempDir,
}

impl Served {
    fn start() -> Served {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = ferry_serve::Config::new(dir.path());
        cfg.listen = vec!["127.0.0.1:0".parse().unwrap()];
        cfg.workers = 1;
        cfg.ipc_cgi = vec![ferry_serve::IpcCgi {
            prefix: "/c".into(),
            program: program().to_path_buf(),
        }];
        let server = ferry_serve::Server::start(cfg).unwrap();
        let addr = server.local_addrs()[0];
        Served {
            server: Some(server),
            addr,
            _dir: dir,
        }
    }

    /// The status and body of `curl ARGS URL`.
    fn get(&self, path: &str, args: &[&str]) -> (u16, Vec<u8>) {
        let out = Command::new("curl")
            .args(["-s", "--max-time", "20", "-w", "\n%{http_code}"])
            .args(args)
            .arg(format!("http://{}{path}", self.addr))
            .output()
            .expect("running curl");
        let mut body = out.stdout;
        let at = body.iter().rposition(|&b| b == b'\n').unwrap();
        let code = std::str::from_utf8(&body[at + 1..])
            .unwrap()
            .parse()
            .unwrap();
        body.truncate(at);
        (code, body)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown();
        }
    }
}

fn letters(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + (i % 26) as u8).collect()
}

#[test]
fn a_c_program_sends_kept_bodies_by_reference_whole() {
    let s = Served::start();
    for n in [1usize, 65_536, 65_537, 1_000_000] {
        for round in 0..2 {
            let (code, body) = s.get(&format!("/c/bytes/{n}"), &[]);
            assert_eq!(code, 200);
            assert!(body == letters(n), "{n} bytes, round {round}");
        }
    }
    assert_eq!(s.get("/c/nothing", &[]).0, 404);
}

#[test]
fn a_c_program_reads_the_variables_and_the_body_in_place_and_copied() {
    let s = Served::start();
    let body: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), &body).unwrap();
    let (code, got) = s.get(
        "/c/echo?k=v",
        &["--data-binary", &format!("@{}", f.path().display())],
    );
    assert_eq!(code, 200);
    let head = b"REQUEST_METHOD=POST\nPATH_INFO=/echo\nQUERY_STRING=k=v\n";
    assert!(
        got.starts_with(head),
        "{:?}",
        String::from_utf8_lossy(&got[..80.min(got.len())])
    );
    let rest = &got[head.len()..];
    assert_eq!(rest.len(), 2 * body.len());
    assert!(rest[..body.len()] == body[..], "the body's pieces in place");
    assert!(rest[body.len()..] == body[..], "the body copied");
}

#[test]
fn a_c_program_is_refused_what_would_break_the_reply() {
    let s = Served::start();
    let (code, body) = s.get("/c/refuse", &["-i"]);
    assert_eq!(code, 200);
    let text = String::from_utf8_lossy(&body).into_owned();
    assert!(!text.contains("Injected"), "{text}");
    assert!(text.ends_with("-1 1 -1 1 -1 1 -1 1\n"), "{text}");
    assert_eq!(s.get("/c/fail", &[]).0, 500);
    // The program goes on after a failed handler.
    assert_eq!(s.get("/c/bytes/3", &[]).1, b"abc");
}
