//! `ferry ttcp` as a user runs it: a receiving process and a transmitting
//! process over loopback TCP, every pair of I/O modes, data from a file,
//! a pipe and the generated pattern, to standard output and to the sink.

use crate::gnu::{ferry, next_port, random_bytes};
use std::io::Write;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

const MODES: [&str; 4] = ["read-write", "exchange", "splice", "sendfile"];

/// A receiver listening on a port of its own: (child, port). A port some
/// other program holds makes the receiver fail at once; the next is tried.
fn receiver(args: &[&str]) -> (Rx, u16) {
    receiver_to(args, Stdio::piped)
}

/// A receiver whose output is read while it runs: a transmitter ends only
/// once the receiver has taken all the data, so the receiver must not be
/// held up writing a pipe nobody reads yet.
struct Rx(std::thread::JoinHandle<std::io::Result<Output>>);

impl Rx {
    fn wait_with_output(self) -> std::io::Result<Output> {
        self.0.join().unwrap()
    }
}

/// [`receiver`], with standard output `out()`.
fn receiver_to(args: &[&str], out: impl Fn() -> Stdio) -> (Rx, u16) {
    for _ in 0..50 {
        let port = next_port();
        let mut c = ferry("ttcp")
            .args(["-r", "-p", &port.to_string()])
            .args(args)
            .stdout(out())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if wait_listening(port, &mut c) {
            return (Rx(std::thread::spawn(move || c.wait_with_output())), port);
        }
    }
    panic!("no port to listen on");
}

/// Waits (up to 10 s) until the receiver `c` listens on TCP `port`, as
/// /proc/net/tcp shows it (connecting to find out would be the one
/// connection it accepts). False if it ended first (the port was taken).
fn wait_listening(port: u16, c: &mut Child) -> bool {
    let want = format!(":{port:04X} 00000000:0000 0A");
    for _ in 0..1000 {
        let t = std::fs::read_to_string("/proc/net/tcp").unwrap();
        if t.lines().any(|l| l.contains(&want)) {
            // Ours, unless it already ended (and another program holds it).
            return c.try_wait().unwrap().is_none();
        }
        if c.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("nothing listens on port {port}");
}

/// Runs a transmitter to `port` (where a receiver listens).
fn transmit(port: u16, args: &[&str], stdin: Stdio) -> Output {
    ferry("ttcp")
        .args(["-t", "-p", &port.to_string()])
        .args(args)
        .stdin(stdin)
        .output()
        .unwrap()
}

/// The number before " bytes in" on the report line.
fn bytes_reported(stderr: &[u8]) -> u64 {
    let s = String::from_utf8_lossy(stderr);
    let line = s
        .lines()
        .find(|l| l.contains(" bytes in "))
        .unwrap_or_else(|| panic!("no report in {s}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn the_pattern_reaches_the_sink_in_every_pair_of_modes() {
    for tx in MODES {
        for rx in MODES {
            let (r, port) = receiver(&["-s", "--io", rx]);
            let t = transmit(
                port,
                &["-s", "-l", "20000", "-n", "37", "--io", tx, "127.0.0.1"],
                Stdio::null(),
            );
            let r = r.wait_with_output().unwrap();
            assert!(
                t.status.success(),
                "{tx}->{rx}: {}",
                String::from_utf8_lossy(&t.stderr)
            );
            assert!(
                r.status.success(),
                "{tx}->{rx}: {}",
                String::from_utf8_lossy(&r.stderr)
            );
            assert_eq!(bytes_reported(&t.stderr), 20000 * 37, "{tx}->{rx}");
            assert_eq!(bytes_reported(&r.stderr), 20000 * 37, "{tx}->{rx}");
            let rep = String::from_utf8_lossy(&t.stderr);
            assert!(rep.contains("CPU per GiB"), "{rep}");
            assert!(r.stdout.is_empty());
        }
    }
}

#[test]
fn the_pattern_is_printable_ascii_in_order() {
    let (r, port) = receiver(&[]);
    let t = transmit(
        port,
        &["-s", "-l", "300", "-n", "3", "127.0.0.1"],
        Stdio::null(),
    );
    let r = r.wait_with_output().unwrap();
    assert!(t.status.success() && r.status.success());
    let want: Vec<u8> = (0..900).map(|i| b' ' + ((i % 300) % 95) as u8).collect();
    assert_eq!(r.stdout, want);
}

#[test]
fn standard_input_arrives_on_standard_output_whole() {
    let bytes = random_bytes(3 << 20 | 12345, 11);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in");
    std::fs::write(&path, &bytes).unwrap();
    for tx in MODES {
        for rx in MODES {
            // From a regular file.
            let (r, port) = receiver(&["--io", rx, "-l", "65536"]);
            let f = std::fs::File::open(&path).unwrap();
            let t = transmit(port, &["--io", tx, "127.0.0.1"], Stdio::from(f));
            let r = r.wait_with_output().unwrap();
            assert!(
                t.status.success(),
                "{tx}->{rx}: {}",
                String::from_utf8_lossy(&t.stderr)
            );
            assert!(r.status.success(), "{tx}->{rx}");
            assert!(
                r.stdout == bytes,
                "{tx}->{rx} from a file: {} bytes",
                r.stdout.len()
            );
        }
        // From a pipe, written by another process.
        let (r, port) = receiver(&[]);
        let mut cat = Command::new("cat")
            .arg(&path)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let t = transmit(
            port,
            &["--io", tx, "127.0.0.1"],
            Stdio::from(cat.stdout.take().unwrap()),
        );
        cat.wait().unwrap();
        let r = r.wait_with_output().unwrap();
        assert!(t.status.success() && r.status.success(), "{tx} from a pipe");
        assert!(
            r.stdout == bytes,
            "{tx} from a pipe: {} bytes",
            r.stdout.len()
        );
    }
}

#[test]
fn no_receiver_is_an_error_naming_the_address() {
    let port = next_port();
    let out = ferry("ttcp")
        .args(["-t", "-s", "-p", &port.to_string(), "127.0.0.1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("connect 127.0.0.1:{port}: Connection refused")),
        "{err}"
    );
}

#[test]
fn a_receiver_that_goes_away_is_a_write_error_with_the_bytes_moved() {
    for tx in MODES {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let peer = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut b = [0u8; 1000];
            std::io::Read::read_exact(&mut s, &mut b).unwrap();
            // Closing with unread data makes the kernel reset the connection.
        });
        let out = ferry("ttcp")
            .args(["-t", "-s", "-l", "1M", "-n", "100000", "--io", tx])
            .args(["-p", &port.to_string(), "127.0.0.1"])
            .output()
            .unwrap();
        peer.join().unwrap();
        assert_eq!(out.status.code(), Some(1), "{tx}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("Connection reset") || err.contains("Broken pipe"),
            "{tx}: {err}"
        );
        assert!(err.contains("bytes moved)"), "{tx}: {err}");
    }
}

#[test]
fn usage_errors_say_what_is_wrong() {
    let cases: [(&[&str], &str); 6] = [
        (&["-t", "-r"], "exactly one of -t and -r"),
        (&[], "exactly one of -t and -r"),
        (&["-t"], "-t needs HOST"),
        (&["-r", "host"], "extra operand 'host'"),
        (
            &["-r", "--io", "carrier-pigeon"],
            "invalid I/O mode: 'carrier-pigeon'",
        ),
        (&["-t", "-u", "h"], "UDP (-u) is not supported"),
    ];
    for (args, want) in cases {
        let out = ferry("ttcp").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
    for bad in ["0", "2G", "x"] {
        let out = ferry("ttcp").args(["-r", "-l", bad]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "-l {bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("invalid buffer length"));
    }
    let mut c = ferry("ttcp")
        .arg("--help")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = c.stdin.take().map(|mut i| i.flush());
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--io MODE"));
}

/// `ferry ttcp -r > /dev/full`: the receiver failed clearly, but a
/// transmitter whose writes all fit in the socket buffers exited 0. The
/// receiver now resets the connection when it fails, and the transmitter
/// waits for the receiver's end of it: a reset is its failure too.
#[test]
fn a_receiver_that_fails_makes_the_transmitter_fail() {
    for rx in MODES {
        for n in ["1", "4"] {
            let full = || {
                Stdio::from(
                    std::fs::File::options()
                        .write(true)
                        .open("/dev/full")
                        .unwrap(),
                )
            };
            let (r, port) = receiver_to(&["--io", rx], full);
            let out = transmit(port, &["-s", "-n", n, "127.0.0.1"], Stdio::null());
            let r = r.wait_with_output().unwrap();
            let rerr = String::from_utf8_lossy(&r.stderr);
            assert_eq!(r.status.code(), Some(1), "{rx}: {rerr}");
            assert!(rerr.contains("No space left on device"), "{rx}: {rerr}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{rx} -n {n}: {err}");
            assert!(
                err.contains("Connection reset by peer"),
                "{rx} -n {n}: {err}"
            );
        }
    }
}
