//! What the C library's tests share: libferry built for this profile
//! (once per test run), the headers' directory, running a program under a
//! deadline, and seeded inputs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Builds libferry (this profile) once and returns the directory holding
/// libferry.so.
pub fn libdir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("test path");
        // target/<profile>/deps/this-test → target/<profile>
        let dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target dir")
            .to_path_buf();
        let profile = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("debug")
            .to_string();
        let cargo = option_env!("CARGO").unwrap_or("cargo");
        let mut c = Command::new(cargo);
        c.args(["build", "-p", "ferry-c"]);
        if profile == "release" {
            c.arg("--release");
        }
        let st = c.status().expect("running cargo build -p ferry-c");
        assert!(st.success(), "building libferry failed");
        assert!(
            dir.join("libferry.so").exists(),
            "no libferry.so in {}",
            dir.display()
        );
        dir
    })
}

pub fn include() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// Compiles tests/c/ferry-only/NAME.c against libferry (`-Werror`, the
/// library found at run time by rpath) into `dir`; the program's path.
pub fn build_ferry_only(name: &str, dir: &Path) -> PathBuf {
    let exe = dir.join(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/ferry-only/{name}.c"));
    let lib = libdir();
    let o = Command::new("cc")
        .args(["-std=gnu11", "-O1", "-Wall", "-Werror"])
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .arg("-I")
        .arg(include())
        .arg("-L")
        .arg(lib)
        .arg("-lferry")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .output()
        .expect("running cc");
    assert!(
        o.status.success(),
        "compiling {name}.c failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    exe
}

/// How long a test program may run before it counts as hung (killed,
/// status None).
pub const DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

/// Waits for `child`, feeding it `stdin` from a thread if its stdin is
/// piped; a program still running after `deadline` (hung, deadlocked) is
/// killed with SIGKILL, so its status then says so.
pub fn wait_with_deadline(
    mut child: std::process::Child,
    stdin: Vec<u8>,
    deadline: std::time::Duration,
) -> std::process::Output {
    let feeder = child.stdin.take().map(|mut sin| {
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = sin.write_all(&stdin);
        })
    });
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(deadline).is_err() {
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(pid.to_string())
                .status();
        }
    });
    let o = child.wait_with_output().expect("waiting");
    let _ = tx.send(());
    let _ = watchdog.join();
    if let Some(f) = feeder {
        let _ = f.join();
    }
    o
}

/// A seeded generator (xorshift64*): the same inputs on every run.
pub struct Gen(u64);

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    /// Text: words of a small vocabulary, lines of 0 to ~120 bytes, the
    /// last line with or without its newline.
    pub fn text(&mut self, n: usize) -> Vec<u8> {
        const WORDS: [&str; 12] = [
            "ferry", "stdio", "buffer", "a", "the", "x", "0x1F", "-3.5e2", "\t", "héllo", "line",
            "42",
        ];
        let mut v = Vec::with_capacity(n + 16);
        while v.len() < n {
            if self.below(9) == 0 {
                v.push(b'\n');
            } else {
                v.extend_from_slice(WORDS[self.below(WORDS.len() as u64) as usize].as_bytes());
                v.push(b' ');
            }
        }
        v.truncate(n);
        v
    }
}
