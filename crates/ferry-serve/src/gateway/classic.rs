//! CGI/1.1 (RFC 3875): a process per request. The program runs in its
//! own process group with only the meta-variables for environment, its
//! directory as working directory, the request body on its standard
//! input, its standard output read into page-aligned buffers (the
//! response's body is those buffers), its standard error the server's.

use super::{Job, OUTPUT_MAX};
use crate::status::Status;
use ferry::{Aggregate, BufMut};
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Bytes read from a program per buffer.
pub(crate) const CHUNK: usize = 64 << 10;

/// Runs `job`'s program; its whole output, or the status that answers
/// for it: 502 if it cannot start, dies by a signal or writes too much,
/// 504 if it sends nothing for `timeout`.
pub(crate) fn run(job: &Job, timeout: Duration) -> Result<Aggregate, Status> {
    let Some(file) = &job.route.script_file else {
        return Err(Status::InternalError);
    };
    let mut cmd = Command::new(file);
    cmd.env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(if job.body.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        // Its own group: a timeout ends whatever it started too.
        .process_group(0);
    for (k, v) in &job.env {
        cmd.env(k, std::ffi::OsStr::from_bytes(v));
    }
    if let Some(dir) = file.parent() {
        cmd.current_dir(dir);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ferry serve: {}: {e}", file.display());
            return Err(Status::BadGateway);
        }
    };
    let out = exchange(&mut child, &job.body, timeout);
    match out {
        Ok(output) => match wait(&mut child, timeout) {
            Some(st) if st.signal().is_some() => {
                eprintln!("ferry serve: {}: {st}", file.display());
                Err(Status::BadGateway)
            }
            Some(_) => Ok(output),
            None => {
                kill(&mut child);
                Err(Status::GatewayTimeout)
            }
        },
        Err(st) => {
            kill(&mut child);
            Err(st)
        }
    }
}

/// Writes `body` to the program and reads its output to the end.
fn exchange(child: &mut Child, body: &[u8], timeout: Duration) -> Result<Aggregate, Status> {
    use rustix::event::{poll, PollFd, PollFlags};
    let mut stdin = child.stdin.take();
    let Some(stdout) = child.stdout.take() else {
        return Err(Status::InternalError);
    };
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
        let left = timeout.saturating_sub(last.elapsed());
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
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}
