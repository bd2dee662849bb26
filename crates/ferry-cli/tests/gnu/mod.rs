//! Running ferry's tools and the real GNU tools side by side on the same
//! inputs, and comparing output, exit status and messages.

#![allow(dead_code)]

mod limits;
mod text;

// Each test binary uses some of them.
#[allow(unused_imports)]
pub use limits::*;
pub use text::texty;
use text::xorshift;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct Run {
    pub code: i32,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

pub fn run(
    prog: &str,
    args: &[String],
    stdin: Option<&[u8]>,
    dir: &Path,
    env: &[(&str, &str)],
) -> Run {
    let mut c = Command::new(prog);
    c.args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c.env_remove("LANG")
        .env_remove("LANGUAGE")
        .env("LC_ALL", "C");
    for (k, v) in env {
        c.env(k, v);
    }
    c.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let mut ch = c.spawn().unwrap_or_else(|e| panic!("{prog}: {e}"));
    if let Some(data) = stdin {
        let mut w = ch.stdin.take().unwrap();
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = w.write_all(&data);
        });
    }
    let out = ch.wait_with_output().unwrap();
    use std::os::unix::process::ExitStatusExt;
    Run {
        code: out
            .status
            .code()
            .unwrap_or(128 + out.status.signal().unwrap_or(0)),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `ferry TOOL args` and `TOOL args`; panics with a readable report
/// if stdout, the exit status or stderr (tool name aside) differ.
pub fn same(tool: &str, args: &[String], stdin: Option<&[u8]>, dir: &Path, env: &[(&str, &str)]) {
    let ferry = env!("CARGO_BIN_EXE_ferry");
    let mut fargs = vec![tool.to_string()];
    fargs.extend(args.iter().cloned());
    let ours = run(ferry, &fargs, stdin, dir, env);
    let gnu = run(tool, args, stdin, dir, env);
    let ctx = || {
        format!(
            "{tool} {args:?} (stdin: {} bytes, env {env:?})",
            stdin.map_or(0, |s| s.len())
        )
    };
    if ours.stdout != gnu.stdout {
        let at = ours
            .stdout
            .iter()
            .zip(&gnu.stdout)
            .position(|(a, b)| a != b)
            .unwrap_or(ours.stdout.len().min(gnu.stdout.len()));
        let show = |v: &[u8]| {
            String::from_utf8_lossy(&v[at.saturating_sub(40)..(at + 40).min(v.len())]).into_owned()
        };
        panic!(
            "{}: stdout differs at byte {at} (ferry {} bytes, GNU {} bytes)\n ferry: {:?}\n   GNU: {:?}",
            ctx(),
            ours.stdout.len(),
            gnu.stdout.len(),
            show(&ours.stdout),
            show(&gnu.stdout)
        );
    }
    assert_eq!(
        ours.code,
        gnu.code,
        "{}: exit status differs; stderr ferry {:?} GNU {:?}",
        ctx(),
        ours.stderr,
        gnu.stderr
    );
    let norm = ours.stderr.replace(&format!("ferry {tool}"), tool);
    assert_eq!(norm, gnu.stderr, "{}: messages differ", ctx());
}

/// Runs `ferry TOOL args` and `TOOL args` with standard output on
/// /dev/full: both must end with status 2 and the same message (tool name
/// aside), which must name the full disk.
pub fn full_disk(tool: &str, args: &[&str], dir: &Path) {
    let mut seen = Vec::new();
    for ours in [true, false] {
        let mut cmd = Command::new(if ours {
            env!("CARGO_BIN_EXE_ferry")
        } else {
            tool
        });
        if ours {
            cmd.arg(tool);
        }
        let full = std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = cmd
            .args(args)
            .env("LC_ALL", "C")
            .current_dir(dir)
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{tool} {args:?} (ferry: {ours})");
        let err = String::from_utf8_lossy(&o.stderr).replace(&format!("ferry {tool}"), tool);
        assert!(err.contains("No space left on device"), "{tool}: {err}");
        seen.push(err);
    }
    assert_eq!(seen[0], seen[1], "{tool} {args:?}: messages differ");
}

/// The inputs every tool is checked on.
pub struct Corpus {
    pub dir: tempfile::TempDir,
    pub files: Vec<String>,
}

/// About 70 MiB of `texty` bytes whose middle 9 MiB hold no newline: a
/// file large enough for the tools' two-core paths, with a 16 MiB block
/// whose second half has no line end. Seeds `seed`, `seed + 1`, `seed + 2`.
pub fn big_with_long_line(seed: u64) -> Vec<u8> {
    let mut big = texty(30 << 20, seed);
    big.extend(
        texty(9 << 20, seed + 1)
            .iter()
            .map(|&b| if b == b'\n' { b' ' } else { b }),
    );
    big.extend(texty(31 << 20, seed + 2));
    big
}

impl Corpus {
    pub fn new() -> Corpus {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        let mut add = |name: &str, bytes: &[u8]| {
            std::fs::write(dir.path().join(name), bytes).unwrap();
            files.push(name.to_string());
        };
        add("empty", b"");
        add("one-byte", b"x");
        add("newline", b"\n");
        add("no-trailing-newline", b"first line\nsecond line");
        add("blank-lines", b"\n\n\na\n\n\n\nb\n\n");
        add("crlf", b"one\r\ntwo\r\n\r\nthree\r\n");
        add("nul", b"a\0b\0\0c\n\0\n");
        let mut x = 7u64;
        let bin: Vec<u8> = (0..70_000).map(|_| xorshift(&mut x) as u8).collect();
        add("binary", &bin);
        add(
            "utf8",
            "héllo wörld\n日本語 テキスト\n\u{2003}em\u{2003}space\n\u{a0}nbsp\u{a0}\n".as_bytes(),
        );
        add("bad-utf8", b"ok \xff\xfe bad \xc3 trunc \xe2\x82 x\n\xf0\x9f\x98\x80 emoji\n\xed\xa0\x80 surrogate\n");
        let long: Vec<u8> = std::iter::repeat_n(b'L', 300_000)
            .chain(*b"\nshort\n")
            .collect();
        add("long-line", &long);
        add("text", &texty(400_000, 11));
        add("text2", &texty(5_000, 12));
        Corpus { dir, files }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// Runs the shell command line `script` in `dir` (`sh -c`, C locale), with
/// `$FERRY` naming the ferry binary: for redirections, closed descriptors
/// and signal dispositions that the command itself is started with.
pub fn sh(dir: &Path, script: &str) -> Run {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env_remove("LANG")
        .env_remove("LANGUAGE")
        .env("LC_ALL", "C")
        .env("FERRY", env!("CARGO_BIN_EXE_ferry"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    Run {
        code: out
            .status
            .code()
            .unwrap_or(128 + out.status.signal().unwrap_or(0)),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `ferry TOOL` replaced by `TOOL` in a message, to compare it with GNU's.
pub fn as_gnu(stderr: &str, tool: &str) -> String {
    stderr.replace(&format!("ferry {tool}"), tool)
}

/// Runs `prog args` in `dir` with standard output on a pipe whose reader
/// is already gone, so that its first write fails; with `ignore_sigpipe`,
/// started with SIGPIPE ignored (the disposition a shell's `trap '' PIPE`
/// hands on), else with its default action.
pub fn to_closed_pipe(prog: &str, args: &[&str], dir: &Path, ignore_sigpipe: bool) -> Run {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let trap = if ignore_sigpipe {
        "trap '' PIPE; "
    } else {
        "trap - PIPE; "
    };
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{trap}exec \"$0\" \"$@\""))
        .arg(prog)
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    Run {
        code: out
            .status
            .code()
            .unwrap_or(128 + out.status.signal().unwrap_or(0)),
        stdout: Vec::new(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `ferry TOOL args` and `TOOL args` in `dir` (C locale), arguments
/// as bytes (file names that are not UTF-8); panics unless standard
/// output, the exit status and standard error (`ferry TOOL` read as
/// `TOOL`) are the same bytes.
pub fn same_bytes(tool: &str, args: &[std::ffi::OsString], dir: &Path) {
    let run = |ours: bool| {
        let mut c = Command::new(if ours {
            env!("CARGO_BIN_EXE_ferry")
        } else {
            tool
        });
        if ours {
            c.arg(tool);
        }
        let o = c
            .args(args)
            .current_dir(dir)
            .env_remove("LANG")
            .env_remove("LANGUAGE")
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let from = format!("ferry {tool}: ");
        let to = format!("{tool}: ");
        let mut err = Vec::new();
        let mut rest = &o.stderr[..];
        while !rest.is_empty() {
            if ours && rest.starts_with(from.as_bytes()) {
                err.extend_from_slice(to.as_bytes());
                rest = &rest[from.len()..];
            } else {
                err.push(rest[0]);
                rest = &rest[1..];
            }
        }
        (o.status.code(), o.stdout, err)
    };
    let (ours, gnu) = (run(true), run(false));
    assert!(
        ours == gnu,
        "{tool} {args:?}:\n ferry: {:?}\n   GNU: {:?}",
        (
            ours.0,
            String::from_utf8_lossy(&ours.1),
            String::from_utf8_lossy(&ours.2)
        ),
        (
            gnu.0,
            String::from_utf8_lossy(&gnu.1),
            String::from_utf8_lossy(&gnu.2)
        )
    );
}

/// A directory holding files whose names are not UTF-8: `bad\xff\xfe.txt`
/// (holding "x"), `d\xfe/q\xff` (holding "y"), `bin\xff` (binary, with
/// "x"), and `b` (holding "y"); the names, as bytes, with `no\xffne`
/// (missing) last.
pub fn non_utf8_names() -> (tempfile::TempDir, Vec<std::ffi::OsString>) {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let name = |b: &[u8]| std::ffi::OsStr::from_bytes(b).to_os_string();
    std::fs::write(p.join(name(b"bad\xff\xfe.txt")), b"x\n").unwrap();
    std::fs::create_dir(p.join(name(b"d\xfe"))).unwrap();
    std::fs::write(p.join(name(b"d\xfe")).join(name(b"q\xff")), b"y\n").unwrap();
    std::fs::write(p.join(name(b"bin\xff")), b"x\0\n").unwrap();
    std::fs::write(p.join("b"), b"y\n").unwrap();
    let names = vec![
        name(b"bad\xff\xfe.txt"),
        name(b"b"),
        name(b"d\xfe"),
        name(b"bin\xff"),
        name(b"no\xffne"),
    ];
    (dir, names)
}

/// A file of `mib` MiB of numbered text lines, written in large writes.
pub fn lines_file(path: &Path, mib: usize) {
    let mut v = Vec::with_capacity(mib << 20);
    let mut i = 0u64;
    while v.len() < mib << 20 {
        v.extend_from_slice(
            format!(
                "{:016x} line of text {}\n",
                i.wrapping_mul(0x9e37_79b9_7f4a_7c15),
                i % 977
            )
            .as_bytes(),
        );
        i += 1;
    }
    std::fs::write(path, v).unwrap();
}

/// A child process stopped with SIGSTOP; on drop it is continued and
/// killed, so a failing test leaves nothing behind.
pub struct Stopped(pub std::process::Child);

impl Stopped {
    pub fn pid(&self) -> i32 {
        self.0.id() as i32
    }

    /// Continues the process and waits for its end: its status, output
    /// and messages.
    pub fn resume(self) -> (std::process::ExitStatus, Vec<u8>, String) {
        // SAFETY (test): signals to our own child.
        unsafe { libc::kill(self.pid(), libc::SIGCONT) };
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never used or dropped again.
        let child = unsafe { std::ptr::read(&me.0) };
        let o = child.wait_with_output().unwrap();
        (
            o.status,
            o.stdout,
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        // SAFETY (test): signals to our own child.
        unsafe {
            libc::kill(self.pid(), libc::SIGCONT);
            libc::kill(self.pid(), libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

/// Starts `ferry args` (output to pipes read at [`Stopped::resume`]) and stops it with
/// SIGSTOP as soon as it has `file` mapped; panics if it ends first.
pub fn stop_while_mapping(args: &[&str], dir: &Path, file: &Path) -> Stopped {
    stop_once_mapped_from(args, dir, file, 0)
}

/// `ferry args` started in `dir` (C locale) with all three standard
/// descriptors pipes to this process.
pub fn spawn_piped(args: &[&str], dir: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// [`stop_while_mapping`], once a mapping of `file` from offset `from` or
/// later shows (so the tool read what came before: streams map forward).
pub fn stop_once_mapped_from(args: &[&str], dir: &Path, file: &Path, from: u64) -> Stopped {
    // Standard input is a pipe nobody writes until `resume` closes it: a
    // tool that reads it (`cmp FILE -`) waits there with FILE mapped.
    let mut c = Stopped(spawn_piped(args, dir));
    let maps = format!("/proc/{}/maps", c.pid());
    let want = file.to_string_lossy().into_owned();
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        assert!(
            std::time::Instant::now() < give_up,
            "ferry {args:?} did not map {want} within a minute"
        );
        let mapped = |l: &str| {
            l.ends_with(&want)
                && l.split_whitespace()
                    .nth(2)
                    .and_then(|o| u64::from_str_radix(o, 16).ok())
                    .is_some_and(|o| o >= from)
        };
        if std::fs::read_to_string(&maps).is_ok_and(|m| m.lines().any(mapped)) {
            // SAFETY (test): a signal to our own child.
            unsafe { libc::kill(c.pid(), libc::SIGSTOP) };
            return c;
        }
        if let Some(st) = c.0.try_wait().unwrap() {
            panic!("ferry {args:?} ended ({st}) before it mapped {want}");
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// The lines of /proc/locks that are leases held by process `pid`.
pub fn leases_of(pid: i32) -> Vec<String> {
    std::fs::read_to_string("/proc/locks")
        .unwrap()
        .lines()
        .filter(|l| l.contains("LEASE") && l.split_whitespace().any(|w| w == pid.to_string()))
        .map(str::to_string)
        .collect()
}

/// Runs `sh -c script` under `timeout 10` (a command held back by a
/// lease fails instead of hanging the test); its exit status.
pub fn sh_bounded(script: &str, dir: &Path) -> Option<i32> {
    Command::new("timeout")
        .args(["10", "sh", "-c", script])
        .current_dir(dir)
        .stdin(Stdio::null())
        .status()
        .unwrap()
        .code()
}

/// Runs `ferry TOOL args` and `TOOL args` through `sh -c` with the
/// redirections `redir` (`> /dev/full`, `<&-`): status, output and
/// messages (tool name aside) must be GNU's.
pub fn same_redirected(tool: &str, args: &[&str], redir: &str, dir: &Path) {
    let script = format!("exec \"$@\" {redir}");
    same_through_sh(tool, args, None, dir, &script, redir);
}

/// `ferry TOOL args` and `TOOL args` as the arguments of the shell
/// `script` (which runs them as `"$@"`): status, output and messages (tool
/// name aside) must be GNU's; `what` names the case in a failure.
fn same_through_sh(
    tool: &str,
    args: &[&str],
    stdin: Option<&[u8]>,
    dir: &Path,
    script: &str,
    what: &str,
) {
    let ferry = env!("CARGO_BIN_EXE_ferry");
    let argv = |prog: &[&str]| -> Vec<String> {
        ["-c", script, "sh"]
            .iter()
            .chain(prog)
            .chain(args)
            .map(|a| a.to_string())
            .collect()
    };
    let ours = run("sh", &argv(&[ferry, tool]), stdin, dir, &[]);
    let gnu = run("sh", &argv(&[tool]), stdin, dir, &[]);
    let norm = ours.stderr.replace(&format!("ferry {tool}"), tool);
    assert_eq!(
        (String::from_utf8_lossy(&ours.stdout), ours.code, norm),
        (String::from_utf8_lossy(&gnu.stdout), gnu.code, gnu.stderr),
        "{tool} {args:?} {what}"
    );
}
