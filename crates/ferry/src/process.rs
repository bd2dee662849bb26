//! Programs started without a `fork`: `posix_spawn`, whose child execs at
//! once. A `fork` in a process that holds ipc channels makes the child
//! copy every pool it maps before the parent's `fork` returns (so that a
//! forked child's `Buf`s keep their bytes: see [`crate::ipc`]); a child
//! that only execs a program throws that copy away. A server that runs a
//! program per request (a CGI script) starts it here, and pays for
//! nothing it does not use.
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! use ferry::process::Spawn;
//! let (r, w) = rustix::pipe::pipe()?;
//! let mut child = Spawn::new("/bin/sh")
//!     .arg("-c")
//!     .arg("echo $GREETING from $(pwd)")
//!     .env("GREETING", "hello")
//!     .current_dir("/")
//!     .stdout(w)
//!     .spawn()?;
//! let status = child.wait()?;
//! assert!(status.success());
//! let mut out = String::new();
//! std::io::Read::read_to_string(&mut std::fs::File::from(r), &mut out)?;
//! assert_eq!(out, "hello from /\n");
//! # Ok(()) }
//! ```

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;

/// A program to start: its path (not looked up on `PATH`), arguments,
/// environment (empty unless given: nothing of this process's is
/// passed), directory, standard descriptors and process group.
#[derive(Debug)]
pub struct Spawn {
    program: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: Option<CString>,
    stdio: [Option<OwnedFd>; 3],
    new_group: bool,
    /// A NUL in a string given: refused at `spawn`.
    bad: bool,
}

fn c(s: &[u8], bad: &mut bool) -> CString {
    CString::new(s).unwrap_or_else(|_| {
        *bad = true;
        CString::default()
    })
}

impl Spawn {
    /// The program at `program`, its `argv[0]` the same path.
    pub fn new(program: impl AsRef<OsStr>) -> Spawn {
        let mut bad = false;
        let p = c(program.as_ref().as_bytes(), &mut bad);
        Spawn {
            argv: vec![p.clone()],
            program: p,
            envp: Vec::new(),
            cwd: None,
            stdio: [None, None, None],
            new_group: false,
            bad,
        }
    }

    /// Adds an argument.
    pub fn arg(&mut self, a: impl AsRef<OsStr>) -> &mut Spawn {
        let v = c(a.as_ref().as_bytes(), &mut self.bad);
        self.argv.push(v);
        self
    }

    /// Adds `key=value` to the environment.
    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Spawn {
        let (k, v) = (key.as_ref().as_bytes(), value.as_ref().as_bytes());
        if k.is_empty() || k.contains(&b'=') {
            self.bad = true;
        }
        let mut kv = Vec::with_capacity(k.len() + 1 + v.len());
        kv.extend_from_slice(k);
        kv.push(b'=');
        kv.extend_from_slice(v);
        let e = c(&kv, &mut self.bad);
        self.envp.push(e);
        self
    }

    /// Passes this process's environment too (before what `env` adds).
    pub fn inherit_env(&mut self) -> &mut Spawn {
        let mut bad = self.bad;
        let mut envp: Vec<CString> = std::env::vars_os()
            .map(|(k, v)| {
                let mut kv = k.as_bytes().to_vec();
                kv.push(b'=');
                kv.extend_from_slice(v.as_bytes());
                c(&kv, &mut bad)
            })
            .collect();
        envp.append(&mut self.envp);
        self.envp = envp;
        self.bad = bad;
        self
    }

    /// The child's working directory.
    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Spawn {
        self.cwd = Some(c(dir.as_ref().as_os_str().as_bytes(), &mut self.bad));
        self
    }

    /// The child's standard input (by default this process's).
    pub fn stdin(&mut self, fd: impl Into<OwnedFd>) -> &mut Spawn {
        self.stdio[0] = Some(fd.into());
        self
    }

    /// The child's standard output.
    pub fn stdout(&mut self, fd: impl Into<OwnedFd>) -> &mut Spawn {
        self.stdio[1] = Some(fd.into());
        self
    }

    /// The child's standard error.
    pub fn stderr(&mut self, fd: impl Into<OwnedFd>) -> &mut Spawn {
        self.stdio[2] = Some(fd.into());
        self
    }

    /// The child leads a process group of its own ([`Child::kill_group`]
    /// ends whatever it started too).
    pub fn new_process_group(&mut self) -> &mut Spawn {
        self.new_group = true;
        self
    }

    /// Starts it, with no signal blocked and SIGPIPE at its default. The
    /// descriptors given are the child's now (closed here once it runs).
    /// An error names the program (`ENOENT`, `EACCES`, `ENOEXEC`, a
    /// directory that is not there).
    pub fn spawn(&mut self) -> io::Result<Child> {
        let named = |e: io::Error, p: &CString| {
            io::Error::new(e.kind(), format!("{}: {e}", p.to_string_lossy()))
        };
        if self.bad {
            return Err(named(
                io::Error::new(io::ErrorKind::InvalidInput, "a NUL, or an `=` in a name"),
                &self.program,
            ));
        }
        let stdio = [0, 1, 2].map(|i| self.stdio[i].as_ref().map(|f| f.as_raw_fd()));
        let spec = crate::sys::spawn::SpawnSpec {
            program: &self.program,
            argv: &self.argv,
            envp: &self.envp,
            cwd: self.cwd.as_ref(),
            stdio,
            new_group: self.new_group,
        };
        let pid = crate::sys::spawn::spawn(&spec).map_err(|e| named(e, &self.program))?;
        // The child has its copies.
        self.stdio = [None, None, None];
        Ok(Child { pid, status: None })
    }
}

/// A started program. Dropping it neither waits nor kills: reap it
/// with [`wait`](Self::wait) or [`try_wait`](Self::try_wait).
#[derive(Debug)]
pub struct Child {
    pid: libc::pid_t,
    status: Option<ExitStatus>,
}

impl Child {
    /// Its process id.
    pub fn id(&self) -> u32 {
        self.pid as u32
    }

    /// Its exit status if it has ended (reaping it), else `None`.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if let Some(s) = self.status {
            return Ok(Some(s));
        }
        let pid = rustix::process::Pid::from_raw(self.pid).ok_or(io::ErrorKind::InvalidInput)?;
        match rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG)? {
            Some((_, st)) => {
                let s = ExitStatus::from_raw(st.as_raw());
                self.status = Some(s);
                Ok(Some(s))
            }
            None => Ok(None),
        }
    }

    /// Waits for it to end; its exit status.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(s) = self.status {
            return Ok(s);
        }
        let pid = rustix::process::Pid::from_raw(self.pid).ok_or(io::ErrorKind::InvalidInput)?;
        loop {
            match rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty()) {
                Ok(Some((_, st))) => {
                    let s = ExitStatus::from_raw(st.as_raw());
                    self.status = Some(s);
                    return Ok(s);
                }
                Ok(None) => continue,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Sends it SIGKILL (nothing if it was reaped already).
    pub fn kill(&mut self) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        let pid = rustix::process::Pid::from_raw(self.pid).ok_or(io::ErrorKind::InvalidInput)?;
        Ok(rustix::process::kill_process(
            pid,
            rustix::process::Signal::KILL,
        )?)
    }

    /// Sends SIGKILL to its process group (it must lead one:
    /// [`Spawn::new_process_group`]); the group's other members may live
    /// on after it was reaped, so this works after a `wait` too.
    pub fn kill_group(&mut self) -> io::Result<()> {
        let pid = rustix::process::Pid::from_raw(self.pid).ok_or(io::ErrorKind::InvalidInput)?;
        match rustix::process::kill_process_group(pid, rustix::process::Signal::KILL) {
            Ok(()) | Err(rustix::io::Errno::SRCH) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use std::io::Read;

    fn run(s: &mut Spawn) -> (ExitStatus, String) {
        let (r, w) = rustix::pipe::pipe().unwrap();
        let mut child = s.stdout(w).spawn().unwrap();
        let mut out = String::new();
        std::fs::File::from(r).read_to_string(&mut out).unwrap();
        (child.wait().unwrap(), out)
    }

    #[test]
    fn the_child_gets_only_the_environment_given() {
        let (st, out) = run(Spawn::new("/bin/sh")
            .arg("-c")
            .arg("env")
            .env("ONLY", "this"));
        assert!(st.success());
        let vars: Vec<&str> = out.lines().filter(|l| !l.starts_with("PWD=")).collect();
        assert_eq!(vars, ["ONLY=this"]);
    }

    #[test]
    fn the_child_runs_in_its_directory_and_group_with_sigpipe_default() {
        let dir = tempfile::tempdir().unwrap();
        let (st, out) = run(Spawn::new("/bin/sh")
            .arg("-c")
            .arg("pwd; ps -o pgid= -p $$; ps -o pid= -p $$; grep SigIgn /proc/$$/status")
            .env("PATH", "/usr/bin:/bin")
            .current_dir(dir.path())
            .new_process_group());
        assert!(st.success(), "{out}");
        let lines: Vec<&str> = out.lines().map(str::trim).collect();
        assert_eq!(Path::new(lines[0]), dir.path().canonicalize().unwrap());
        assert_eq!(lines[1], lines[2], "the child leads its own group");
        // SIGPIPE (13) is bit 12 of the ignored mask: not set.
        let ign = u64::from_str_radix(lines[3].split_whitespace().nth(1).unwrap(), 16).unwrap();
        assert_eq!(ign & (1 << 12), 0, "{}", lines[3]);
    }

    #[test]
    fn input_goes_to_the_child_and_its_status_comes_back() {
        let (r, w) = rustix::pipe::pipe().unwrap();
        let (r2, w2) = rustix::pipe::pipe().unwrap();
        let mut child = Spawn::new("/bin/sh")
            .arg("-c")
            .arg("read x; echo got $x; exit 7")
            .stdin(r)
            .stdout(w2)
            .spawn()
            .unwrap();
        rustix::io::write(&w, b"hi\n").unwrap();
        drop(w);
        let mut out = String::new();
        std::fs::File::from(r2).read_to_string(&mut out).unwrap();
        assert_eq!(out, "got hi\n");
        assert_eq!(child.wait().unwrap().code(), Some(7));
        // Reaped once; asked again, the same answer.
        assert_eq!(child.try_wait().unwrap().unwrap().code(), Some(7));
    }

    #[test]
    fn a_program_that_cannot_start_is_an_error_naming_it() {
        let e = Spawn::new("/no/such/program").spawn().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("/no/such/program"), "{e}");
        let e = Spawn::new("/bin/sh")
            .current_dir("/no/such/dir")
            .spawn()
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let e = Spawn::new("/bin/sh").arg("a\0b").spawn().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        let e = Spawn::new("/bin/sh").env("A=B", "c").spawn().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn a_killed_group_takes_the_grandchildren_with_it() {
        let (r, w) = rustix::pipe::pipe().unwrap();
        let mut child = Spawn::new("/bin/sh")
            .arg("-c")
            .arg("sleep 60 & echo $!; wait")
            .stdout(w)
            .new_process_group()
            .spawn()
            .unwrap();
        let mut line = [0u8; 32];
        let n = rustix::io::read(&r, &mut line).unwrap();
        let grandchild: i32 = std::str::from_utf8(&line[..n])
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        child.kill_group().unwrap();
        assert!(child.wait().unwrap().signal().is_some());
        // The grandchild is gone, or a zombie awaiting its adopter.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let alive =
                std::fs::read_to_string(format!("/proc/{grandchild}/stat")).is_ok_and(|s| {
                    !s.rsplit(')')
                        .next()
                        .unwrap_or("")
                        .trim_start()
                        .starts_with('Z')
                });
            if !alive {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the grandchild lived on"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
