//! Real, well-known C programs, built unmodified: each with its own build
//! system, once against glibc and once with `-include ferry/stdio.h` and
//! libferry, then both run on the same generated inputs (and error cases)
//! and compared byte for byte — status, stdout, stderr, and the files
//! they leave. The sources are fetched once from Debian's archive and
//! their sha256 checked (scripts/real-sources.sh); none is kept in the
//! repository. bzip2 (a compressor), Lua (an interpreter, its io library)
//! and GNU ed (a line editor with a tmpfile scratch buffer); and gnulib's
//! stdio tests.
//!
//! This module holds what they share: fetching a program's source,
//! building it twice with its own build system, running both builds on the
//! same input in two directories set up alike, and comparing status,
//! stdout, stderr and every file the run left behind.

pub mod bzip2;
pub mod ed;
pub mod lua;

pub use crate::common::Gen;
use crate::common::{include, libdir};
use std::collections::BTreeMap;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The unpacked source of `name` (scripts/real-sources.sh): downloaded
/// once into the cache, its tarball's sha256 checked. No network and no
/// cache is a failure that says so, never a pass.
pub fn source(name: &str) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/real-sources.sh");
    let o = Command::new("bash")
        .arg(&script)
        .arg(name)
        .output()
        .expect("running scripts/real-sources.sh");
    assert!(
        o.status.success(),
        "the source of {name} is not to be had: {}\n(the test needs it; with no \
         network, run scripts/real-sources.sh all where there is one, to fill the cache)",
        String::from_utf8_lossy(&o.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
}

/// The two builds of one program.
pub struct Pair {
    pub glibc: PathBuf,
    pub ferry: PathBuf,
}

/// Where this test binary builds the programs (under the target directory,
/// fresh on each run: libferry may have changed).
fn build_root() -> PathBuf {
    libdir().join("real-programs")
}

/// A copy of `src` in `dir` (each build gets its own tree: the programs'
/// build systems build in place).
pub fn copy_tree(src: &Path, dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.parent().expect("parent")).expect("mkdir");
    let st = Command::new("cp")
        .arg("-r")
        .arg(src)
        .arg(dir)
        .status()
        .expect("cp");
    assert!(st.success(), "copying {}", src.display());
}

/// The flags that make a build use ferry: for the compiler (CPPFLAGS) and
/// for the link (after the objects, or with --no-as-needed before them).
pub fn ferry_cppflags() -> String {
    format!("-I{} -include ferry/stdio.h", include().display())
}

pub fn ferry_libs() -> String {
    let lib = libdir();
    format!(
        "-L{} -Wl,--no-as-needed -lferry -Wl,-rpath,{}",
        lib.display(),
        lib.display()
    )
}

/// Runs a build step; its output goes into the failure message.
pub fn sh(dir: &Path, what: &str, cmd: &mut Command) {
    let o = cmd.current_dir(dir).output().expect(what);
    assert!(
        o.status.success(),
        "{what} in {} failed:\n{}\n{}",
        dir.display(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Builds `name` for both sides once per test run with `build(side_dir,
/// ferry) -> executable`.
pub fn pair(
    cell: &'static OnceLock<Pair>,
    name: &str,
    build: fn(&Path, bool) -> PathBuf,
) -> &'static Pair {
    cell.get_or_init(|| {
        let root = build_root().join(name);
        let glibc = build(&root.join("glibc"), false);
        let ferry = build(&root.join("ferry"), true);
        Pair { glibc, ferry }
    })
}

/// What a run's standard output is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Out {
    /// A pipe read to its end.
    Pipe,
    /// /dev/full: every write fails with ENOSPC.
    Full,
    /// A pipe whose reading end is closed before the program starts.
    Closed,
}

/// One run: the arguments, standard input, where stdout goes, the files
/// the directory starts with.
pub struct Case<'a> {
    pub args: Vec<String>,
    pub stdin: Vec<u8>,
    /// Standard input from this file of the directory (else `stdin`).
    pub stdin_file: Option<&'a str>,
    pub out: Out,
    pub files: Vec<(String, Vec<u8>)>,
}

impl<'a> Case<'a> {
    pub fn new(args: &[&str]) -> Case<'a> {
        Case {
            args: args.iter().map(|s| s.to_string()).collect(),
            stdin: Vec::new(),
            stdin_file: None,
            out: Out::Pipe,
            files: Vec::new(),
        }
    }
    pub fn file(mut self, name: &str, data: &[u8]) -> Self {
        self.files.push((name.to_string(), data.to_vec()));
        self
    }
    pub fn stdin(mut self, data: &[u8]) -> Self {
        self.stdin = data.to_vec();
        self
    }
    pub fn stdin_file(mut self, name: &'a str) -> Self {
        self.stdin_file = Some(name);
        self
    }
    pub fn out(mut self, out: Out) -> Self {
        self.out = out;
        self
    }
}

/// What a run did.
#[derive(PartialEq, Eq)]
pub struct Ran {
    pub status: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Every file in the directory afterwards, with its bytes.
    pub files: BTreeMap<String, Vec<u8>>,
}

/// How long one run may take before it counts as hung.
const DEADLINE: Duration = Duration::from_secs(300);

/// Runs `exe` (as `argv0`) on `case` in the fresh directory `dir`.
pub fn run(exe: &Path, argv0: &str, dir: &Path, case: &Case) -> Ran {
    std::fs::create_dir_all(dir).expect("mkdir");
    for (name, data) in &case.files {
        std::fs::write(dir.join(name), data).expect("writing an input");
    }
    let mut c = Command::new(exe);
    c.arg0(argv0).args(&case.args).current_dir(dir);
    c.env("LC_ALL", "C").env("TZ", "UTC");
    c.stderr(Stdio::piped());
    match case.stdin_file {
        Some(name) => c.stdin(std::fs::File::open(dir.join(name)).expect("stdin file")),
        None => c.stdin(Stdio::piped()),
    };
    let mut closed_reader = None;
    match case.out {
        Out::Pipe => {
            c.stdout(Stdio::piped());
        }
        Out::Full => {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .expect("/dev/full");
            c.stdout(full);
        }
        Out::Closed => {
            let (r, w) = std::io::pipe().expect("pipe");
            closed_reader = Some(r);
            c.stdout(w);
        }
    }
    drop(closed_reader.take());
    let child = c.spawn().expect("running a program");
    drop(c);
    let o = crate::common::wait_with_deadline(child, case.stdin.clone(), DEADLINE);
    let mut files = BTreeMap::new();
    for e in std::fs::read_dir(dir).expect("readdir").flatten() {
        let p = e.path();
        if p.is_file() {
            let name = e.file_name().to_string_lossy().into_owned();
            files.insert(name, std::fs::read(&p).unwrap_or_default());
        }
    }
    Ran {
        status: o.status.code(),
        signal: o.status.signal(),
        stdout: o.stdout,
        stderr: o.stderr,
        files,
    }
}

fn show(r: &Ran) -> String {
    let cut = |v: &[u8]| {
        let s = String::from_utf8_lossy(&v[..v.len().min(2000)]).into_owned();
        if v.len() > 2000 {
            format!("{s}… ({} bytes)", v.len())
        } else {
            s
        }
    };
    let files: Vec<String> = r
        .files
        .iter()
        .map(|(n, d)| format!("{n} ({} bytes)", d.len()))
        .collect();
    format!(
        "status {:?} signal {:?}\n--- stdout\n{}\n--- stderr\n{}\n--- files: {}",
        r.status,
        r.signal,
        cut(&r.stdout),
        cut(&r.stderr),
        files.join(", ")
    )
}

/// The first place two runs differ, for the failure message.
fn first_difference(a: &Ran, b: &Ran) -> String {
    let at = |x: &[u8], y: &[u8]| x.iter().zip(y).position(|(p, q)| p != q);
    if a.status != b.status || a.signal != b.signal {
        return "exit status".into();
    }
    if a.stdout != b.stdout {
        return format!(
            "stdout ({} vs {} bytes, first at {:?})",
            a.stdout.len(),
            b.stdout.len(),
            at(&a.stdout, &b.stdout)
        );
    }
    if a.stderr != b.stderr {
        return "stderr".into();
    }
    for (n, d) in &a.files {
        match b.files.get(n) {
            None => return format!("file {n} only on glibc's side"),
            Some(e) if e != d => return format!("file {n} ({} vs {} bytes)", d.len(), e.len()),
            _ => {}
        }
    }
    "the set of files".into()
}

/// Runs both builds on `case` in fresh directories and requires the same
/// result. `what` names the case in a failure. Returns glibc's run.
pub fn same(p: &Pair, argv0: &str, what: &str, case: &Case) -> Ran {
    let work = tempfile::tempdir().expect("tempdir");
    let a = run(&p.glibc, argv0, &work.path().join("d"), case);
    let b = run(&p.ferry, argv0, &work.path().join("e"), case);
    assert!(
        a == b,
        "{argv0} {what}: glibc's and ferry's builds differ in {}\n=== glibc\n{}\n=== ferry\n{}",
        first_difference(&a, &b),
        show(&a),
        show(&b)
    );
    a
}

/// Input sizes around the usual buffer sizes, and past 1 MiB.
pub const SIZES: [usize; 9] = [0, 1, 2, 4095, 4096, 4097, 65537, 131072, (1 << 20) + 3];

/// gnulib's stdio tests (scripts/stdio-conformance.sh) that glibc passes
/// and ferry passes too: each built against both, both must pass. The
/// others, and why, are in docs/C_CONFORMANCE.md.
#[test]
fn gnulib_stdio_tests() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/stdio-conformance.sh");
    let tests = [
        "test-fdopen",
        "test-fflush",
        "test-fgetc",
        "test-fopen",
        "test-fputc",
        "test-fread",
        "test-freopen",
        "test-fseek",
        "test-fseeko",
        "test-fseeko3",
        "test-fseeko4",
        "test-ftell",
        "test-ftell3",
        "test-ftello",
        "test-ftello3",
        "test-fwrite",
        "test-getdelim",
        "test-getline",
        "test-perror",
        "test-perror2",
        "test-vfprintf-posix",
        "test-fpending",
        "test-fpurge",
        "test-freading",
    ];
    let o = Command::new("bash")
        .arg(&script)
        .args(tests)
        .env("FERRY_LIBDIR", libdir())
        .output()
        .expect("running scripts/stdio-conformance.sh");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && table.matches("| PASS | PASS |").count() == tests.len(),
        "gnulib's stdio tests:\n{table}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
