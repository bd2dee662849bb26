//! The two sides of `ferry ttcp`, one loop per `--io` mode, each on
//! library calls only: std's sockets for read-write, `ferry::exchange`
//! for buffer exchange, `ferry::transfer::send::FileSender` and
//! `ferry::transfer::copy` for the kernel's paths.

use super::{Mode, Opts, Outcome};
use ferry::transfer::send::{FileSender, SendPath};
use ferry::transfer::{self, TransferOptions, TransferStats};
use ferry::BufMut;
use std::io::{self as stdio, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};

/// What failed, where, after how many bytes.
#[derive(Debug)]
pub(crate) struct Failure {
    pub what: String,
    pub error: stdio::Error,
    pub bytes: Option<u64>,
}

pub(crate) fn fail(
    what: impl Into<String>,
    bytes: Option<u64>,
) -> impl FnOnce(stdio::Error) -> Failure {
    let what = what.into();
    move |error| Failure { what, error, bytes }
}

/// Wall clock and process CPU time from the start of the data to its end.
struct Clock {
    wall: Instant,
    user: Duration,
    sys: Duration,
}

impl Clock {
    fn start() -> Result<Clock, Failure> {
        let (user, sys) = ferry::process_cpu_time().map_err(fail("getrusage", None))?;
        Ok(Clock {
            wall: Instant::now(),
            user,
            sys,
        })
    }

    fn stop(self, bytes: u64, calls: u64) -> Result<Outcome, Failure> {
        let real = self.wall.elapsed();
        let (user, sys) = ferry::process_cpu_time().map_err(fail("getrusage", None))?;
        Ok(Outcome {
            bytes,
            calls,
            real,
            user: user.saturating_sub(self.user),
            sys: sys.saturating_sub(self.sys),
        })
    }
}

/// ttcp's source pattern: the printable ASCII characters, over and over.
pub(crate) fn pattern(len: usize) -> Result<BufMut, Failure> {
    let mut b = BufMut::try_with_capacity_aligned(len, ferry::sys_page_size())
        .map_err(fail(format!("a {len}-byte buffer"), None))?;
    let room = &mut b.spare_capacity_mut()[..len];
    for (i, c) in room.iter_mut().enumerate() {
        *c = b' ' + (i % 95) as u8;
    }
    b.commit(len);
    Ok(b)
}

pub(crate) fn stdin() -> BorrowedFd<'static> {
    // SAFETY: descriptor 0 stays open for the process's life.
    unsafe { BorrowedFd::borrow_raw(0) }
}

fn stdout() -> BorrowedFd<'static> {
    // SAFETY: descriptor 1 stays open for the process's life.
    unsafe { BorrowedFd::borrow_raw(1) }
}

/// `write_all`, counting the calls.
fn write_counted(fd: BorrowedFd<'_>, mut data: &[u8], calls: &mut u64) -> stdio::Result<()> {
    while !data.is_empty() {
        *calls += 1;
        match rustix::io::write(fd, data) {
            Ok(0) => return Err(stdio::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

fn calls_of(st: &TransferStats) -> u64 {
    let c = st.calls;
    c.copy_file_range + c.splice + c.sendfile + c.read + c.write
}

fn connect(host: &str, port: u16) -> Result<TcpStream, Failure> {
    let what = format!("connect {host}:{port}");
    let addrs = (host, port)
        .to_socket_addrs()
        .map_err(fail(what.clone(), None))?;
    let mut last = stdio::Error::new(stdio::ErrorKind::NotFound, "the host has no address");
    for a in addrs {
        match TcpStream::connect(a) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(fail(what, None)(last))
}

/// The transmitting side (`-t`).
pub(crate) fn transmit(o: &Opts) -> Result<Outcome, Failure> {
    let host = o.host.as_deref().unwrap_or("localhost");
    let sock = connect(host, o.port)?;
    if o.nodelay {
        sock.set_nodelay(true).map_err(fail("TCP_NODELAY", None))?;
    }
    if let Some(b) = o.sockbuf {
        rustix::net::sockopt::set_socket_send_buffer_size(&sock, b)
            .map_err(|e| fail("SO_SNDBUF", None)(e.into()))?;
    }
    let total = o.count.checked_mul(o.len as u64);
    let clock = Clock::start()?;
    let (bytes, calls) = match (o.mode, o.pattern_or_sink) {
        (Mode::ReadWrite, true) => {
            let buf = pattern(o.len)?;
            let mut calls = 0;
            for i in 0..o.count {
                write_counted(sock.as_fd(), &buf, &mut calls)
                    .map_err(fail("write", Some(i * o.len as u64)))?;
            }
            (total.unwrap_or(u64::MAX), calls)
        }
        (Mode::ReadWrite, false) => {
            let mut buf = BufMut::try_with_capacity_aligned(o.len, ferry::sys_page_size())
                .map_err(fail(format!("a {}-byte buffer", o.len), None))?;
            let (mut bytes, mut calls) = (0u64, 0u64);
            loop {
                buf.clear();
                calls += 1;
                let n = match rustix::io::read(stdin(), &mut buf.spare_capacity_mut()[..o.len]) {
                    Ok(n) => n,
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(e) => return Err(fail("read standard input", Some(bytes))(e.into())),
                };
                if n == 0 {
                    break;
                }
                buf.commit(n);
                write_counted(sock.as_fd(), &buf, &mut calls)
                    .map_err(fail("write", Some(bytes)))?;
                bytes += n as u64;
            }
            (bytes, calls)
        }
        (Mode::Splice | Mode::Sendfile, true) => {
            let memfd = pattern_file(o.len)?;
            let path = if o.mode == Mode::Splice {
                SendPath::Splice
            } else {
                SendPath::Sendfile
            };
            let mut s = FileSender::new(memfd.as_fd(), sock.as_fd(), path)
                .map_err(fail("the pattern's memfd", None))?;
            for _ in 0..o.count {
                s.send(0..o.len as u64).map_err(|e| {
                    let bytes = e.bytes();
                    let (_, error) = e.into_parts();
                    fail("send", Some(bytes))(error)
                })?;
            }
            (s.stats().bytes, calls_of(s.stats()))
        }
        (Mode::Exchange, source) => super::exchange::transmit(o, &sock, source)?,
        (Mode::Splice | Mode::Sendfile, false) => {
            let st = transfer::copy(stdin(), &sock, &TransferOptions::new()).map_err(|e| {
                let bytes = e.bytes();
                let (_, error) = e.into_parts();
                fail("send standard input", Some(bytes))(error)
            })?;
            (st.bytes, calls_of(&st))
        }
    };
    match sock.shutdown(Shutdown::Write) {
        Err(e) if e.kind() != stdio::ErrorKind::NotConnected => {
            return Err(fail("shutdown", Some(bytes))(e))
        }
        _ => {}
    }
    let out = clock.stop(bytes, calls)?;
    delivered(&sock, bytes)?;
    Ok(out)
}

/// Waits for the receiver's end of the connection: an orderly close once
/// it has taken all the data, a reset when it failed ([`receive`]). The
/// last writes only reach the socket buffers: a receiver that failed on
/// them (`ferry ttcp -r > /dev/full`) went unnoticed, and the sender
/// exited 0.
fn delivered(sock: &TcpStream, bytes: u64) -> Result<(), Failure> {
    let mut scrap = [0u8; 512];
    let mut sock = sock;
    loop {
        match sock.read(&mut scrap) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == stdio::ErrorKind::Interrupted => {}
            Err(e) => return Err(fail("the receiver did not take the data", Some(bytes))(e)),
        }
    }
}

/// The pattern, `len` bytes of it, in a memfd: page-cache pages the
/// kernel can send by reference, never written again.
fn pattern_file(len: usize) -> Result<std::fs::File, Failure> {
    use rustix::fs::{memfd_create, MemfdFlags};
    let fd = memfd_create("ferry-ttcp-pattern", MemfdFlags::CLOEXEC)
        .map_err(|e| fail("memfd_create", None)(e.into()))?;
    let mut f = std::fs::File::from(fd);
    f.write_all(&pattern(len)?)
        .map_err(fail("the pattern's memfd", None))?;
    Ok(f)
}

/// The receiving side (`-r`). A receiver that fails resets the
/// connection, so that its transmitter fails too ([`delivered`]).
pub(crate) fn receive(o: &Opts) -> Result<Outcome, Failure> {
    let what = format!("listen on port {}", o.port);
    let l = TcpListener::bind(("0.0.0.0", o.port)).map_err(fail(what, None))?;
    let (mut sock, _) = l.accept().map_err(fail("accept", None))?;
    drop(l);
    let r = receive_on(o, &mut sock);
    if r.is_err() {
        // Closed with a zero linger time: a reset, not an orderly end.
        let _ = rustix::net::sockopt::set_socket_linger(&sock, Some(Duration::ZERO));
    }
    r
}

fn receive_on(o: &Opts, sock: &mut TcpStream) -> Result<Outcome, Failure> {
    if let Some(b) = o.sockbuf {
        rustix::net::sockopt::set_socket_recv_buffer_size(&sock, b)
            .map_err(|e| fail("SO_RCVBUF", None)(e.into()))?;
    }
    let devnull;
    let out = if o.pattern_or_sink {
        devnull = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .map_err(fail("/dev/null", None))?;
        devnull.as_fd()
    } else {
        stdout()
    };
    let clock = Clock::start()?;
    let (bytes, calls) = match o.mode {
        Mode::ReadWrite => {
            let mut buf = BufMut::try_with_capacity_aligned(o.len, ferry::sys_page_size())
                .map_err(fail(format!("a {}-byte buffer", o.len), None))?;
            let (mut bytes, mut calls) = (0u64, 0u64);
            loop {
                buf.clear();
                calls += 1;
                let n = match sock.read(&mut buf.spare_capacity_mut()[..o.len]) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == stdio::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(fail("read", Some(bytes))(e)),
                };
                buf.commit(n);
                if !o.pattern_or_sink {
                    write_counted(out, &buf, &mut calls)
                        .map_err(fail("write standard output", Some(bytes)))?;
                }
                bytes += n as u64;
            }
            (bytes, calls)
        }
        Mode::Exchange => super::exchange::receive(o, sock, out)?,
        Mode::Splice | Mode::Sendfile => {
            let st = transfer::copy(&*sock, out, &TransferOptions::new()).map_err(|e| {
                let bytes = e.bytes();
                let (side, error) = e.into_parts();
                let what = match side {
                    transfer::Side::Read => "read",
                    transfer::Side::Write => "write standard output",
                };
                fail(what, Some(bytes))(error)
            })?;
            (st.bytes, calls_of(&st))
        }
    };
    let _ = sock.flush();
    clock.stop(bytes, calls)
}
