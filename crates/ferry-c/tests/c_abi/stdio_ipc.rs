//! Pipes between two C programs on ferry stdio, upgraded to an ipc
//! channel when both ask (`FERRY_STDIO_IPC=1`): a producer
//! (bench/pipeline/produce.c: printf, fputs, fwrite, putchar) and a
//! consumer (consume.c: fgets, getc, fread; it prints a count and a hash
//! of what came, and on standard error whether it mapped a ferry pool).
//! Each pairing of glibc and ferry builds, with and without the variable,
//! prints what glibc | glibc prints; the channel is used only when both
//! ends are ferry programs that asked. Also: two producers in turn into
//! one consumer, a producer killed mid-stream, a reader that is not ferry
//! (GNU wc), and a third process that took the channel's name first.

use crate::common::{include, libdir, wait_with_deadline, DEADLINE};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

struct Builds {
    _dir: tempfile::TempDir,
    produce: [PathBuf; 2],
    consume: [PathBuf; 2],
    beside: [PathBuf; 2],
    slow_reader: [PathBuf; 2],
    stdin_beside: [PathBuf; 2],
    fork_reader: [PathBuf; 2],
}

/// Compiles `src` (under the crate) to `out`, for ferry or glibc.
fn compile(src: &str, out: &Path, ferry: bool) {
    let name = src;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(src);
    let mut c = Command::new("cc");
    c.args(["-std=gnu11", "-O2", "-Wall", "-Werror"]);
    c.arg("-o").arg(out).arg(&src);
    if ferry {
        let lib = libdir();
        c.arg("-I").arg(include());
        c.args(["-include", "ferry/stdio.h"]);
        c.arg("-L").arg(lib).arg("-lferry");
        c.arg(format!("-Wl,-rpath,{}", lib.display()));
    }
    let o = c.output().expect("running cc");
    assert!(
        o.status.success(),
        "compiling {name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// produce and consume, built for glibc ([0]) and for ferry ([1]).
fn builds() -> &'static Builds {
    static B: OnceLock<Builds> = OnceLock::new();
    B.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = |n: &str| dir.path().join(n);
        let b = Builds {
            produce: [path("produce-glibc"), path("produce-ferry")],
            consume: [path("consume-glibc"), path("consume-ferry")],
            beside: [path("beside-glibc"), path("beside-ferry")],
            slow_reader: [path("slow-glibc"), path("slow-ferry")],
            stdin_beside: [path("stdin-beside-glibc"), path("stdin-beside-ferry")],
            fork_reader: [path("fork-reader-glibc"), path("fork-reader-ferry")],
            _dir: dir,
        };
        for (i, ferry) in [false, true].into_iter().enumerate() {
            compile("bench/pipeline/produce.c", &b.produce[i], ferry);
            compile("bench/pipeline/consume.c", &b.consume[i], ferry);
            compile("tests/c/pipe_beside.c", &b.beside[i], ferry);
            compile("tests/c/slow_reader.c", &b.slow_reader[i], ferry);
            compile("tests/c/stdin_beside.c", &b.stdin_beside[i], ferry);
            compile("tests/c/fork_reader.c", &b.fork_reader[i], ferry);
        }
        b
    })
}

struct Run {
    stdout: String,
    channel: bool,
    producer_ok: bool,
}

/// `producer ARGS | consumer` through a pipe made here, each with
/// `FERRY_STDIO_IPC=1` if asked.
fn pipeline(
    producer: &Path,
    args: &[&str],
    consumer: &Path,
    ask: (bool, bool),
    consumer_args: &[&str],
) -> Run {
    let env = |c: &mut Command, on: bool| {
        if on {
            c.env("FERRY_STDIO_IPC", "1");
        } else {
            c.env_remove("FERRY_STDIO_IPC");
        }
    };
    let mut p = Command::new(producer);
    p.args(args).stdout(Stdio::piped());
    env(&mut p, ask.0);
    let mut p = p.spawn().unwrap();
    let mut c = Command::new(consumer);
    c.args(consumer_args)
        .stdin(p.stdout.take().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    env(&mut c, ask.1);
    let out = wait_with_deadline(c.spawn().unwrap(), Vec::new(), DEADLINE);
    let producer_ok = p.wait().unwrap().success();
    assert!(
        out.status.success(),
        "consumer: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Run {
        stdout: String::from_utf8(out.stdout).unwrap(),
        channel: String::from_utf8_lossy(&out.stderr).contains("channel yes"),
        producer_ok,
    }
}

#[test]
fn every_pairing_prints_what_glibc_prints_and_only_ferry_pairs_that_ask_take_the_channel() {
    let b = builds();
    for args in [&["3000", "1"][..], &["1", "2"], &["40000", "3"]] {
        let want = pipeline(&b.produce[0], args, &b.consume[0], (false, false), &[]);
        assert!(want.producer_ok && !want.channel);
        assert!(want.stdout.starts_with("bytes "), "{}", want.stdout);
        for p in 0..2 {
            for c in 0..2 {
                for ask in [(false, false), (true, true), (true, false), (false, true)] {
                    let got = pipeline(&b.produce[p], args, &b.consume[c], ask, &[]);
                    let what = format!("{args:?} producer {p} consumer {c} asked {ask:?}");
                    assert_eq!(got.stdout, want.stdout, "{what}");
                    assert!(got.producer_ok, "{what}");
                    let both = p == 1 && c == 1 && ask == (true, true);
                    assert_eq!(got.channel, both, "{what}");
                }
            }
        }
    }
}

/// Two producers in turn into one consumer (`{ a; b; }`): the first takes
/// the channel, the second finds nobody listening and writes the pipe;
/// the consumer reads the channel, then the pipe, in order.
#[test]
fn two_producers_in_turn_reach_one_consumer_in_order() {
    let b = builds();
    let script = |p: &Path, c: &Path| {
        format!(
            "{{ '{p}' 500 7; '{p}' 300 8; }} | '{c}'",
            p = p.display(),
            c = c.display()
        )
    };
    let run = |p: &Path, c: &Path, ask: bool| {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &script(p, c)])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if ask {
            cmd.env("FERRY_STDIO_IPC", "1");
        }
        let o = wait_with_deadline(cmd.spawn().unwrap(), Vec::new(), DEADLINE);
        assert!(o.status.success());
        (
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8_lossy(&o.stderr).contains("channel yes"),
        )
    };
    let (want, _) = run(&b.produce[0], &b.consume[0], false);
    let (got, channel) = run(&b.produce[1], &b.consume[1], true);
    assert_eq!(got, want);
    assert!(channel);
}

/// Two consumers in turn on one pipe (`{ consume 1000; consume; }`): the
/// first takes the channel and leaves after a few lines; the producer
/// goes on through the pipe, as it does when a glibc reader leaves with
/// bytes in its buffer, and the second consumer reads to the producer's
/// end. What the first took and left unread is lost as a glibc reader's
/// buffer is: the two together never see more than was written.
#[test]
fn a_second_reader_after_the_first_leaves_gets_the_rest_through_the_pipe() {
    let b = builds();
    let run = |p: &Path, c: &Path, ask: bool| {
        let script = format!(
            "'{p}' 200000 1 | {{ '{c}' 1000; '{c}'; }}",
            p = p.display(),
            c = c.display()
        );
        let mut cmd = Command::new("bash");
        cmd.args(["-o", "pipefail", "-c", &script])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if ask {
            cmd.env("FERRY_STDIO_IPC", "1");
        }
        let o = wait_with_deadline(cmd.spawn().unwrap(), Vec::new(), DEADLINE);
        let out = String::from_utf8(o.stdout).unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let counts: Vec<u64> = out
            .lines()
            .map(|l| l.split(' ').nth(1).unwrap().parse().unwrap())
            .collect();
        (o.status.success(), counts, err)
    };
    let (ok, want, _) = run(&b.produce[0], &b.consume[0], false);
    assert!(ok && want.len() == 2);
    let total = Command::new(&b.produce[0])
        .args(["200000", "1"])
        .output()
        .unwrap()
        .stdout
        .len() as u64;
    let (ok, got, err) = run(&b.produce[1], &b.consume[1], true);
    assert!(ok, "the producer or a consumer failed: {got:?} {err}");
    assert_eq!(got.len(), 2, "{err}");
    assert!(err.starts_with("channel yes"), "{err}");
    assert!(
        got[0] >= 1000 && got[0] + got[1] <= total,
        "{got:?} of {total}"
    );
    // Lost: what the first held unread, a few buffers (glibc: one).
    assert!(
        got[0] + got[1] + (1 << 20) >= total,
        "{got:?} of {total} (glibc: {want:?})"
    );
}

/// A reader that forks before reading: the child reads a line (and
/// leaves without exit handlers), then the parent reads the rest. The
/// child reads the pipe, never the writer's offer (had it taken the
/// channel, the writer's pool would have gone with it); the writer, whom
/// nobody took up at its first write, writes the pipe, and the parent
/// gets the rest but what the child read ahead, as with glibc.
#[test]
fn a_child_forked_before_the_first_read_reads_the_pipe() {
    let b = builds();
    let args = ["200000", "1"];
    let want = pipeline(&b.produce[0], &args, &b.fork_reader[0], (false, false), &[]);
    let total = Command::new(&b.produce[0])
        .args(args)
        .output()
        .unwrap()
        .stdout
        .len() as u64;
    let parent = |r: &Run| -> u64 {
        let l = r
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("parent "))
            .unwrap();
        l.parse().unwrap()
    };
    let first = |r: &Run| r.stdout.lines().next().unwrap().to_string();
    let got = pipeline(&b.produce[1], &args, &b.fork_reader[1], (true, true), &[]);
    assert!(got.producer_ok && want.producer_ok);
    assert_eq!(first(&got), first(&want));
    assert!(!got.channel);
    let (g, w) = (parent(&got), parent(&want));
    assert!(
        g <= total && g + (1 << 20) >= total,
        "parent read {g} of {total} (glibc: {w})"
    );
}

/// A producer killed (SIGKILL) while it writes through the channel: the
/// consumer ends as it would on a pipe — what arrived, then the end —
/// and exits 0, with no hang.
#[test]
fn a_producer_killed_mid_stream_ends_the_consumers_input() {
    let b = builds();
    let mut p = Command::new(&b.produce[1]);
    p.arg("0")
        .env("FERRY_STDIO_IPC", "1")
        .stdout(Stdio::piped());
    let mut p = p.spawn().unwrap();
    let c = Command::new(&b.consume[1])
        .env("FERRY_STDIO_IPC", "1")
        .stdin(p.stdout.take().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    p.kill().unwrap();
    p.wait().unwrap();
    let out = wait_with_deadline(c, Vec::new(), DEADLINE);
    assert!(out.status.success(), "{:?}", out.status);
    let s = String::from_utf8(out.stdout).unwrap();
    let bytes: u64 = s.split(' ').nth(1).unwrap().parse().unwrap();
    assert!(bytes > 0, "{s}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("channel yes"));
}

/// A consumer that stops reading and exits while the producer writes
/// through the channel: the producer dies of SIGPIPE, as it does when the
/// reader of a pipe goes (`produce | head`), and the consumer prints what
/// it read.
#[test]
fn a_producer_whose_consumer_left_dies_of_sigpipe() {
    use std::os::unix::process::ExitStatusExt;
    let b = builds();
    for (i, ask) in [(0, false), (1, true)] {
        let mut p = Command::new(&b.produce[i]);
        p.arg("0").stdout(Stdio::piped());
        let mut c = Command::new(&b.consume[i]);
        c.arg("100000");
        if ask {
            p.env("FERRY_STDIO_IPC", "1");
            c.env("FERRY_STDIO_IPC", "1");
        }
        let mut p = p.spawn().unwrap();
        c.stdin(p.stdout.take().unwrap())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = c.spawn().unwrap();
        // The Command holds the pipe's reading end until it goes.
        drop(c);
        let out = wait_with_deadline(child, Vec::new(), DEADLINE);
        assert!(out.status.success());
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).contains("channel yes"),
            ask
        );
        let st = wait_with_deadline(p, Vec::new(), DEADLINE).status;
        assert_eq!(st.signal(), Some(SIGPIPE), "{i}: {st:?}");
    }
}

/// A producer that writes its standard output beside its stream too — a
/// child run by `system()` (a shell command, or a ferry program that
/// asks for the channel itself) and its own `write(2)` — keeps the order
/// glibc | glibc gives, and a child that writes more than a pipe holds is
/// never left waiting: the consumer reads the pipe beside the channel.
#[test]
fn bytes_written_beside_the_channel_keep_their_order_and_never_wait() {
    let b = builds();
    let child = format!("'{}' 3000 7", b.produce[1].display());
    for (cmd, rounds, lines) in [
        ("seq 1 100000", "3", "2000"),
        ("", "50", "100"),
        (child.as_str(), "2", "500"),
        ("printf 'x%.0s' $(seq 1 5000)", "4", "20000"),
    ] {
        let args = [cmd, rounds, lines];
        let want = pipeline(&b.beside[0], &args, &b.consume[0], (false, false), &[]);
        let got = pipeline(&b.beside[1], &args, &b.consume[1], (true, true), &[]);
        assert_eq!(got.stdout, want.stdout, "beside {args:?}");
        assert!(got.producer_ok && want.producer_ok, "beside {args:?}");
        assert!(got.channel, "the channel was not taken for {args:?}");
    }
}

/// A reader that empties the pipe, then is busy a while, as its writer
/// flushes a line into the channel and writes the next beside it: the
/// flushed line still comes first (the reader counts what waits in the
/// pipe, then looks at the channel, then reads no more than it counted).
#[test]
fn a_busy_reader_takes_the_channel_before_later_pipe_bytes() {
    let b = builds();
    for (rounds, lines, pause_writer, pause_reader) in
        [("6", "1", "1000", "10000"), ("4", "3", "2000", "20000")]
    {
        let args = ["", rounds, lines, pause_writer];
        let want = pipeline(
            &b.beside[0],
            &args,
            &b.slow_reader[0],
            (false, false),
            &[pause_reader, "w"],
        );
        let got = pipeline(
            &b.beside[1],
            &args,
            &b.slow_reader[1],
            (true, true),
            &[pause_reader, "w"],
        );
        assert_eq!(got.stdout, want.stdout, "rounds {rounds}");
        assert!(got.channel, "the channel was not taken");
    }
}

/// A writer on the channel that forks children printing by stdio: the
/// children write the pipe (the channel stays the parent's, untouched by
/// their exit), and the output is glibc's, line for line.
#[test]
fn a_forked_writer_child_writes_the_pipe_and_leaves_the_channel_to_its_parent() {
    let b = builds();
    for (rounds, fork_lines) in [("5", "1"), ("3", "20000")] {
        let args = ["", rounds, "10", "0", fork_lines];
        let want = pipeline(&b.beside[0], &args, &b.consume[0], (false, false), &[]);
        let got = pipeline(&b.beside[1], &args, &b.consume[1], (true, true), &[]);
        assert_eq!(got.stdout, want.stdout, "forks of {fork_lines} lines");
        assert!(got.producer_ok && want.producer_ok);
        assert!(got.channel, "the channel was not taken");
    }
}

/// A reader whose standard input is also read beside its stream (a child
/// it runs reads descriptor 0, where the channel leaves nothing) is not
/// left waiting: its writer, finding the channel not read, goes on
/// through the pipe, and both end.
#[test]
fn a_reader_whose_descriptor_0_is_read_beside_its_stream_is_not_left_waiting() {
    let b = builds();
    let args = ["", "1", "400000"];
    let got = pipeline(&b.beside[1], &args, &b.stdin_beside[1], (true, true), &[]);
    assert!(got.producer_ok);
    let lines: u64 = got
        .stdout
        .trim()
        .strip_prefix("lines ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{:?}", got.stdout));
    // 400 000 lines and two more; head took at most 100 bytes beside
    // the stream, the stream at most what it had taken in.
    assert!(lines > 1 && lines <= 400_002, "{lines}");
}

/// Linux's number for SIGPIPE.
const SIGPIPE: i32 = 13;

/// A producer that asks, into GNU `wc` (no ferry): it waits a moment for a
/// reader that never answers, then writes the pipe: wc counts what glibc's
/// producer writes.
#[test]
fn a_producer_that_asks_writes_the_pipe_to_a_reader_that_does_not() {
    let b = builds();
    let wc = |p: &Path| {
        let o = Command::new("sh")
            .args(["-c", &format!("'{}' 2000 9 | wc", p.display())])
            .env("FERRY_STDIO_IPC", "1")
            .output()
            .unwrap();
        assert!(o.status.success());
        o.stdout
    };
    assert_eq!(wc(&b.produce[1]), wc(&b.produce[0]));
}

/// A third process of the same user took the channel's name (for the
/// pipe's inode) before either end: the producer, connecting to it, finds
/// it does not hold the pipe as its standard input and writes the pipe;
/// the consumer cannot listen and reads the pipe. Nothing reaches the
/// squatter, and the consumer gets every byte.
#[test]
fn a_process_that_took_the_name_gets_nothing() {
    let b = builds();
    let (r, w): (OwnedFd, OwnedFd) = rustix::pipe::pipe().unwrap();
    let ino = rustix::fs::fstat(&r).unwrap().st_ino;
    let squat = ferry::ipc::Listener::bind(&format!("ferry-stdio-pipe-{ino}")).unwrap();
    let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    let seen = got.clone();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = stop.clone();
    let squatter = std::thread::spawn(move || {
        let mut conns = Vec::new();
        while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
            if let Ok(s) = squat.accept(Some(Duration::from_millis(20))) {
                conns.push(OwnedFd::from(s));
            }
            for c in &conns {
                let mut buf = [0u8; 4096];
                if let Ok((n, _)) = rustix::net::recv(c, &mut buf, rustix::net::RecvFlags::DONTWAIT)
                {
                    seen.lock().unwrap().extend_from_slice(&buf[..n]);
                }
            }
        }
        conns.len()
    });
    let p = Command::new(&b.produce[1])
        .args(["3000", "5"])
        .env("FERRY_STDIO_IPC", "1")
        .stdout(Stdio::from(w))
        .spawn()
        .unwrap();
    let c = Command::new(&b.consume[1])
        .env("FERRY_STDIO_IPC", "1")
        .stdin(Stdio::from(r))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_with_deadline(c, Vec::new(), DEADLINE);
    let mut p = p;
    assert!(p.wait().unwrap().success());
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let connections = squatter.join().unwrap();
    let want = pipeline(
        &b.produce[0],
        &["3000", "5"],
        &b.consume[0],
        (false, false),
        &[],
    );
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want.stdout);
    assert!(String::from_utf8_lossy(&out.stderr).contains("channel no"));
    assert!(connections >= 1, "the producer never tried the name");
    assert!(got.lock().unwrap().is_empty(), "bytes reached the squatter");
}
