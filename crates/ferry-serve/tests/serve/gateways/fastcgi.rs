//! FastCGI to php-fpm (Debian's package), started here on a Unix socket.

use super::super::{pattern, Site};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A php-fpm of its own, in a directory of its own.
struct PhpFpm {
    child: Child,
    dir: tempfile::TempDir,
}

impl PhpFpm {
    fn start() -> PhpFpm {
        let bin = std::fs::read_dir("/usr/sbin")
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("php-fpm"))
            })
            .expect("php-fpm is not installed (Debian's php-fpm package; .ci/run installs it)");
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let conf = format!(
            "[global]\nerror_log = {d}/error.log\ndaemonize = no\npid = {d}/fpm.pid\n\
             [www]\nlisten = {d}/fpm.sock\npm = static\npm.max_children = 2\n\
             catch_workers_output = yes\n"
        );
        std::fs::write(dir.path().join("fpm.conf"), conf).unwrap();
        // -R: the tests may run as root; -n: no php.ini of the host, and
        // errors logged, not shown (a fatal error is then PHP's 500).
        let child = Command::new(bin)
            .args(["-R", "-n", "-d", "display_errors=0", "-y"])
            .arg(dir.path().join("fpm.conf"))
            .spawn()
            .unwrap();
        let sock = dir.path().join("fpm.sock");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !sock.exists() {
            assert!(Instant::now() < deadline, "php-fpm did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        PhpFpm { child, dir }
    }

    fn sock(&self) -> PathBuf {
        self.dir.path().join("fpm.sock")
    }
}

impl Drop for PhpFpm {
    fn drop(&mut self) {
        // SIGTERM: the master ends its workers (SIGKILL would orphan them).
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn site(sock: &Path) -> Site {
    let sock = sock.to_path_buf();
    Site::new(
        |d| {
            std::fs::write(
                d.join("info.php"),
                "<?php\nheader('X-From: php');\n\
                 echo $_SERVER['REQUEST_METHOD'], '|', $_SERVER['QUERY_STRING'], '|', $_SERVER['PATH_INFO'] ?? '', '|', $_SERVER['SCRIPT_NAME'], '|', $_GET['a'] ?? '';\n",
            )
            .unwrap();
            std::fs::write(
                d.join("echo.php"),
                "<?php\necho file_get_contents('php://input');\n",
            )
            .unwrap();
            std::fs::write(
                d.join("big.php"),
                "<?php\n$n = (int)$_GET['n'];\nfor ($i = 0; $i < $n; $i++) { echo chr(97 + $i % 26); }\n",
            )
            .unwrap();
            std::fs::write(
                d.join("status.php"),
                "<?php\nhttp_response_code(404);\necho 'gone';\n",
            )
            .unwrap();
            std::fs::write(d.join("fatal.php"), "<?php\nundefined_function();\n").unwrap();
            std::fs::write(d.join("plain.txt"), "text").unwrap();
            std::fs::create_dir(d.join("lib.php")).unwrap();
            std::fs::write(d.join("lib.php/readme.txt"), "below a directory named .php").unwrap();
        },
        |c| {
            c.fastcgi = vec![ferry_serve::FastCgi {
                ext: ".php".into(),
                addr: ferry_serve::GatewayAddr::Unix(sock),
            }];
            c.gateway_timeout = Duration::from_secs(20);
        },
    )
}

#[test]
fn php_fpm_answers_through_the_server() {
    let fpm = PhpFpm::start();
    let s = site(&fpm.sock());
    let r = s.curl("/info.php/more/path?a=b", &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-from"), Some("php"));
    assert_eq!(
        String::from_utf8(r.body).unwrap(),
        "GET|a=b|/more/path|/info.php|b"
    );
    // A REST API's methods reach PHP, as behind nginx.
    for m in ["PUT", "DELETE", "PATCH", "OPTIONS"] {
        let r = s.curl("/info.php?a=c", &["-X", m]);
        assert_eq!(r.status, 200, "{m}");
        assert_eq!(
            String::from_utf8(r.body).unwrap(),
            format!("{m}|a=c||/info.php|c")
        );
    }
    let r = s.curl("/echo.php", &["-X", "PUT", "--data-binary", "put body"]);
    assert_eq!(r.body, b"put body");
    // A body streamed without a length (chunked) reaches PHP whole.
    let big = pattern(300_000, 3);
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), &big).unwrap();
    let r = s.curl(
        "/echo.php",
        &[
            "-H",
            "Transfer-Encoding: chunked",
            "-H",
            "Content-Type: application/octet-stream",
            "--data-binary",
            &format!("@{}", f.path().display()),
        ],
    );
    assert_eq!(r.status, 200);
    assert!(r.body == big, "a chunked body came back changed");
    // A body of each size reaches PHP whole.
    for len in [5usize, 70_000, 900_000] {
        let body = pattern(len, 9);
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), &body).unwrap();
        // Not a form: PHP would parse it (and warn in the output).
        let r = s.curl(
            "/echo.php",
            &[
                "-H",
                "Content-Type: application/octet-stream",
                "--data-binary",
                &format!("@{}", f.path().display()),
            ],
        );
        assert_eq!(r.status, 200);
        assert!(r.body == body, "a {len}-byte body came back changed");
    }
    // An output of many records comes back whole.
    let r = s.curl("/big.php?n=1500000", &[]);
    assert_eq!(r.body.len(), 1_500_000);
    assert!(r
        .body
        .iter()
        .enumerate()
        .all(|(i, &b)| b == b'a' + (i % 26) as u8));
    assert_eq!(s.curl("/status.php", &[]).status, 404);
    // A PHP fatal error is PHP's own 500.
    assert_eq!(s.curl("/fatal.php", &[]).status, 500);
    assert_eq!(s.curl("/missing.php", &[]).status, 404);
    assert_eq!(s.curl("/plain.txt", &[]).body, b"text");
    // A directory whose name ends in .php holds files, not scripts.
    assert_eq!(
        s.curl("/lib.php/readme.txt", &[]).body,
        b"below a directory named .php"
    );
}

#[test]
fn an_application_server_that_accepts_nothing_is_a_504_not_a_hang() {
    use socket2::{Domain, SockAddr, Socket, Type};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full.sock");
    // A listener whose queue is full and that never accepts.
    let l = Socket::new(Domain::UNIX, Type::STREAM, None).unwrap();
    l.bind(&SockAddr::unix(&path).unwrap()).unwrap();
    l.listen(0).unwrap();
    let mut fillers = Vec::new();
    for _ in 0..4 {
        let c = Socket::new(Domain::UNIX, Type::STREAM, None).unwrap();
        c.set_nonblocking(true).unwrap();
        if c.connect(&SockAddr::unix(&path).unwrap()).is_err() {
            break;
        }
        fillers.push(c);
    }
    let sock = path.clone();
    let s = Site::new(
        |d| std::fs::write(d.join("x.php"), "<?php echo 1;").unwrap(),
        move |c| {
            c.fastcgi = vec![ferry_serve::FastCgi {
                ext: ".php".into(),
                addr: ferry_serve::GatewayAddr::Unix(sock),
            }];
            c.gateway_timeout = Duration::from_secs(1);
        },
    );
    let start = Instant::now();
    let status = s.curl("/x.php", &[]).status;
    assert!(status == 504 || status == 502, "{status}");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    drop(l);
}

#[test]
fn an_application_server_that_is_not_there_is_a_502() {
    let gone = tempfile::tempdir().unwrap();
    let s = site(&gone.path().join("no.sock"));
    assert_eq!(s.curl("/info.php", &[]).status, 502);
    assert_eq!(s.curl("/plain.txt", &[]).body, b"text");
}
