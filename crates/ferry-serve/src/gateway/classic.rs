//! CGI/1.1 (RFC 3875): a process per request. The program runs in its
//! own process group with only the meta-variables for environment, its
//! directory as working directory, the request body on its standard
//! input, its standard output read into page-aligned buffers (the
//! response's body is those buffers), its standard error the server's.

use super::{Job, OUTPUT_MAX};
use crate::status::Status;
use ferry::process::{Child, Spawn};
use ferry::{Aggregate, BufMut};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

/// Bytes read from a program per buffer.
pub(crate) const CHUNK: usize = 64 << 10;

/// A program must be done within this many gateway timeouts of its start
/// (and send something within each): one that trickles its output does
/// not hold a helper for ever.
pub(crate) const TOTAL_TIMEOUTS: u32 = 4;

/// The process groups of the programs running (a server's): killed when
/// the server stops, so that no script outlives it.
#[derive(Clone, Default)]
pub(crate) struct Groups(std::sync::Arc<std::sync::Mutex<std::collections::HashSet<u32>>>);

impl Groups {
    fn add(&self, pid: u32) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(pid);
    }

    fn remove(&self, pid: u32) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&pid);
    }

    /// Kills every group still running.
    pub(crate) fn kill_all(&self) {
        for pid in self.0.lock().unwrap_or_else(|p| p.into_inner()).drain() {
            if let Some(p) = rustix::process::Pid::from_raw(pid as i32) {
                let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
            }
        }
    }
}

/// How long a program that closed its output is given to exit before its
/// output is answered with anyway (and the program left to the reaper).
const EXIT_GRACE: Duration = Duration::from_millis(100);

/// A pipe, both ends close-on-exec (the child gets its end by `dup2`).
fn pipe() -> Result<(OwnedFd, OwnedFd), Status> {
    rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|_| Status::ServiceUnavailable)
}

/// Runs `job`'s program; its whole output, or the status that answers
/// for it: 502 if it cannot start, dies by a signal or writes too much,
/// 504 if it sends nothing for `timeout`.
///
/// Started by `posix_spawn`, not `fork`: a fork of this process would
/// copy every ipc pool it maps into the child (ferry's fork handlers),
/// tens of milliseconds for a child that execs at once.
pub(crate) fn run(job: &Job, timeout: Duration, groups: &Groups) -> Result<Aggregate, Status> {
    let Some(file) = &job.route.script_file else {
        return Err(Status::InternalError);
    };
    let mut cmd = Spawn::new(file);
    cmd.env("PATH", "/usr/local/bin:/usr/bin:/bin")
        // Its own group: a timeout ends whatever it started too.
        .new_process_group();
    for (k, v) in job.env.iter() {
        cmd.env(
            std::ffi::OsStr::from_bytes(k),
            std::ffi::OsStr::from_bytes(v),
        );
    }
    if let Some(dir) = file.parent() {
        cmd.current_dir(dir);
    }
    let (out_r, out_w) = pipe()?;
    cmd.stdout(out_w);
    let stdin = if job.body.is_empty() {
        let null = rustix::fs::open(
            "/dev/null",
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|_| Status::ServiceUnavailable)?;
        cmd.stdin(null);
        None
    } else {
        let (in_r, in_w) = pipe()?;
        cmd.stdin(in_r);
        Some(in_w)
    };
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ferry serve: {e}");
            return Err(Status::BadGateway);
        }
    };
    // The child's ends went with it: the body's end is seen when it ends.
    drop(cmd);
    let pid = child.id();
    groups.add(pid);
    let r = finish(child, stdin, out_r, job, timeout, groups);
    if !matches!(r, Ok((_, true))) {
        groups.remove(pid);
    }
    r.map(|(out, _)| out)
}

/// The exchange with a started program, and its end: its output, and
/// whether it lives on (left to the reaper).
fn finish(
    mut child: Child,
    stdin: Option<OwnedFd>,
    out_r: OwnedFd,
    job: &Job,
    timeout: Duration,
    groups: &Groups,
) -> Result<(Aggregate, bool), Status> {
    let file = job
        .route
        .script_file
        .as_deref()
        .unwrap_or(std::path::Path::new("?"));
    let deadline = Instant::now() + timeout * TOTAL_TIMEOUTS;
    match exchange(stdin, out_r, &job.body, timeout, deadline) {
        Ok(output) => match wait(&mut child, EXIT_GRACE) {
            Some(st) if st.signal().is_some() => {
                eprintln!("ferry serve: {}: {st}", file.display());
                // Whatever it left running goes with it.
                let _ = child.kill_group();
                Err(Status::BadGateway)
            }
            Some(_) => Ok((output, false)),
            None => {
                // Its output is whole (it closed it); it is reaped later,
                // and killed with its group at the deadline.
                reaper::adopt(child, deadline, groups.clone());
                Ok((output, true))
            }
        },
        Err(st) => {
            kill(&mut child);
            Err(st)
        }
    }
}

/// Writes `body` to the program and reads its output to the end.
fn exchange(
    mut stdin: Option<OwnedFd>,
    stdout: OwnedFd,
    body: &[u8],
    timeout: Duration,
    deadline: Instant,
) -> Result<Aggregate, Status> {
    use rustix::event::{poll, PollFd, PollFlags};
    for fd in stdin.iter().map(|s| s.as_fd()).chain([stdout.as_fd()]) {
        let flags = rustix::fs::fcntl_getfl(fd).map_err(|_| Status::InternalError)?;
        rustix::fs::fcntl_setfl(fd, flags | rustix::fs::OFlags::NONBLOCK)
            .map_err(|_| Status::InternalError)?;
    }
    let mut written = 0usize;
    let mut output = Aggregate::new();
    let mut chunk = new_chunk()?;
    let mut last = Instant::now();
    loop {
        if stdin.is_some() && written == body.len() {
            // The whole body went: the program sees its end.
            stdin = None;
        }
        let left = timeout
            .saturating_sub(last.elapsed())
            .min(deadline.saturating_duration_since(Instant::now()));
        if left.is_zero() {
            return Err(Status::GatewayTimeout);
        }
        let (out_ready, in_ready) = {
            let mut fds = vec![PollFd::new(&stdout, PollFlags::IN)];
            if let Some(i) = &stdin {
                fds.push(PollFd::new(i, PollFlags::OUT));
            }
            let ts = rustix::event::Timespec::try_from(left).unwrap_or(rustix::event::Timespec {
                tv_sec: 1,
                tv_nsec: 0,
            });
            match poll(&mut fds, Some(&ts)) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(_) => return Err(Status::InternalError),
            }
            (
                !fds[0].revents().is_empty(),
                fds.get(1).is_some_and(|f| !f.revents().is_empty()),
            )
        };
        if in_ready {
            if let Some(i) = &stdin {
                match rustix::io::write(i, &body[written..]) {
                    Ok(n) => written += n,
                    Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => {}
                    // The program stopped reading (it may answer anyway).
                    Err(_) => stdin = None,
                }
            }
        }
        if out_ready {
            loop {
                if chunk.tail_room() == 0 {
                    output.append_buf(std::mem::replace(&mut chunk, new_chunk()?).freeze());
                }
                match rustix::io::read(&stdout, chunk.spare_capacity_mut()) {
                    Ok(0) => {
                        if !chunk.is_empty() {
                            output.append_buf(chunk.freeze());
                        }
                        return Ok(output);
                    }
                    Ok(n) => {
                        chunk.commit(n);
                        last = Instant::now();
                        if output.len() + chunk.len() > OUTPUT_MAX {
                            eprintln!(
                                "ferry serve: a CGI program wrote more than {OUTPUT_MAX} bytes"
                            );
                            return Err(Status::BadGateway);
                        }
                    }
                    Err(rustix::io::Errno::AGAIN) => break,
                    Err(rustix::io::Errno::INTR) => {}
                    Err(_) => return Err(Status::BadGateway),
                }
            }
        }
    }
}

fn new_chunk() -> Result<BufMut, Status> {
    BufMut::try_with_capacity_aligned(CHUNK, 4096).map_err(|_| Status::ServiceUnavailable)
}

/// The program's end, waited for at most `timeout` (it closed its
/// output; it may still hang before exiting).
fn wait(child: &mut Child, timeout: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(50);
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return Some(st),
            Ok(None) if start.elapsed() < timeout => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            _ => return None,
        }
    }
}

/// Ends the program's group and reaps the program.
fn kill(child: &mut Child) {
    let _ = child.kill_group();
    let _ = child.kill();
    let _ = child.wait();
}

/// Programs that closed their output but had not exited: reaped by one
/// thread as they end, and killed with their group at their deadline.
mod reaper {
    use ferry::process::Child;
    use std::sync::{Mutex, OnceLock};
    use std::time::{Duration, Instant};

    type Adopted = (Child, Instant, super::Groups);
    static ADOPTED: OnceLock<Mutex<Vec<Adopted>>> = OnceLock::new();

    pub(super) fn adopt(child: Child, deadline: Instant, groups: super::Groups) {
        let mut started = false;
        let list = ADOPTED.get_or_init(|| {
            started = true;
            Mutex::new(Vec::new())
        });
        list.lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((child, deadline, groups));
        if started {
            let _ = std::thread::Builder::new()
                .name("ferry-serve-reaper".into())
                .spawn(|| loop {
                    std::thread::sleep(Duration::from_millis(100));
                    let Some(list) = ADOPTED.get() else { return };
                    let mut l = list.lock().unwrap_or_else(|p| p.into_inner());
                    let now = Instant::now();
                    l.retain_mut(|(c, deadline, groups)| {
                        let ended = !matches!(c.try_wait(), Ok(None));
                        if !ended && now < *deadline {
                            return true;
                        }
                        if !ended {
                            super::kill(c);
                        }
                        groups.remove(c.id());
                        false
                    });
                });
        }
    }
}
