//! The support every module of the tools' tests shares: running ferry's
//! tools and the real GNU tools side by side on the same inputs and
//! comparing output, exit status and messages; the `ferry` command itself;
//! generated inputs; ports, limits and stopped processes.

#![allow(dead_code)]

mod limits;
mod stopped;
mod text;

pub use limits::*;
pub use stopped::*;
pub use text::{texty, xorshift};

use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// The `ferry` binary under test.
pub const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

/// `ferry TOOL`, to add arguments, descriptors and a directory to.
pub fn ferry(tool: &str) -> Command {
    let mut c = Command::new(FERRY);
    c.arg(tool);
    c
}

/// Owned arguments from literals, for [`run`] and [`same`]:
/// `s(&["-n", "file"])`.
pub fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// An exit status as a shell shows it: the code, or 128 plus the signal
/// that ended the process.
pub fn exit_code(st: ExitStatus) -> i32 {
    st.code().unwrap_or(128 + st.signal().unwrap_or(0))
}

/// Makes `c` start with an open-file limit (RLIMIT_NOFILE, soft and hard)
/// of `n`, set in the child between fork and exec: this process keeps its
/// own limit.
pub fn with_open_file_limit(c: &mut Command, n: u64) -> &mut Command {
    // SAFETY: only setrlimit, async-signal-safe, runs between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let r = libc::rlimit {
                rlim_cur: n,
                rlim_max: n,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// `len` pseudo-random bytes (xorshift64 from `seed` and `len`), the same
/// for the same `len` and `seed`.
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = (seed ^ len as u64) | 1;
    (0..len).map(|_| xorshift(&mut x) as u8).collect()
}

/// A TCP port for a test's listener: below the kernel's ephemeral range
/// (32768-60999), so no `bind(0)` of a test running beside it takes the
/// port between the choice and the bind; different per process and per
/// call, so concurrent tests (`pipe`, `ttcp`) never pick the same one.
pub fn next_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let k = NEXT.fetch_add(1, Ordering::Relaxed);
    10_000 + ((std::process::id() as u16 % 200) * 90 + k) % 22_000
}

/// A xorshift64 generator for generated inputs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        xorshift(&mut self.0)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// One of `v`.
    pub fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len() as u64) as usize]
    }
}

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
    Run {
        code: exit_code(out.status),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `ferry TOOL args` and `TOOL args`; panics with a readable report
/// if stdout, the exit status or stderr (tool name aside) differ.
pub fn same(tool: &str, args: &[String], stdin: Option<&[u8]>, dir: &Path, env: &[(&str, &str)]) {
    let ferry = FERRY;
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
        let mut cmd = Command::new(if ours { FERRY } else { tool });
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
        .env("FERRY", FERRY)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    Run {
        code: exit_code(out.status),
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
    Run {
        code: exit_code(out.status),
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
        let mut c = Command::new(if ours { FERRY } else { tool });
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
    let ferry = FERRY;
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
