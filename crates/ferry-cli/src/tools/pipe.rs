//! `ferry pipe SRC DST`: a socat/netcat-like mover on ferry's transfer
//! engine (`ferry::transfer::between`). The CLI opens the two ends and
//! formats what happened; the engine picks the path.

use super::common::{self, describe, Tool};
use ferry::ipc::{Receiver, Sender, SenderConfig};
use ferry::transfer::endpoint::Endpoint;
use ferry::transfer::overlay::{BlockType, ChannelParams};
use ferry::transfer::{between, Method, Path, Side, TransferOptions, TransferStats};
use std::ffi::{OsStr, OsString};
use std::io;
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::num::NonZeroUsize;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Mutex;

const HELP: &str = "Usage: ferry pipe [OPTION]... SRC DST
Move everything from SRC to DST with ferry's transfer engine: the kernel's
copy paths (copy_file_range, splice, sendfile) where the two ends allow,
reference buffers laid over the destination's blocks where a block size
is imposed.

SRC and DST are each one of:
  FILE                     a file (as DST: created, or truncated)
  -                        standard input (SRC) or standard output (DST)
  tcp:HOST:PORT            a connection to a TCP server ([HOST] for IPv6)
  tcp-listen:[HOST:]PORT   one TCP connection accepted (HOST: 0.0.0.0)
  unix:PATH                a connection to a Unix stream socket
  unix-listen:PATH         one connection accepted on a new Unix socket
  ipc:PATH                 a connection to a ferry ipc-listen:PATH
  ipc-listen:PATH          one ferry ipc connection accepted on PATH

An ipc end passes buffers by reference between two ferry processes: the
sending side (DST) reads its SRC straight into a shared memory pool and
sends each buffer's place in it, the receiving side (SRC) writes them out
from the pool. PATH only names the meeting point: it is an abstract Unix
socket name (ferry-ipc: and PATH made absolute), never a file, so
nothing is created on disk and nothing is left behind, even if either
side is killed; PATH need not exist. The receiving side reads the
sender's pages in place and trusts it to leave a buffer alone until it
is given back, as every ferry sender does: connect it only to ferry.

Options:
      --block N        DST takes transfers of at most N bytes
      --fixed N        DST takes blocks of exactly N bytes (the last one
                         short, or filled up with --pad)
      --pad BYTE       fill a fixed DST's last block with BYTE (0-255)
      --in-block N     SRC gives transfers of at most N bytes
      --in-fixed N     SRC gives blocks of exactly N bytes
      --append         a DST file is appended to, not truncated
      --stats          say on standard error what moved how
      --progress       a progress bar on standard error (a terminal)
      --help           display this help and exit
      --version        output version information and exit

A socket DST is shut down for writing at the end, so that its peer sees
the end of the data. Exit status is 0 if everything arrived, 1 otherwise.
";

#[derive(Default)]
struct Opts {
    out: Option<ChannelParams>,
    input: Option<ChannelParams>,
    pad: Option<u8>,
    append: bool,
    stats: bool,
    progress: bool,
}

pub fn main(t: &Tool, args: Vec<OsString>) -> i32 {
    use lexopt::prelude::*;
    let mut o = Opts::default();
    let mut operands: Vec<OsString> = Vec::new();
    let mut p = lexopt::Parser::from_args(args);
    loop {
        let arg = common::next_arg!(t, p, HELP, 1);
        let size = |p: &mut lexopt::Parser, what: &str| -> Result<NonZeroUsize, i32> {
            let v = p.value().map_err(|e| {
                t.bad_option(e);
                1
            })?;
            let s = v.to_string_lossy();
            s.parse::<NonZeroUsize>().map_err(|_| {
                t.usage_error(format_args!(
                    "invalid {what} size: {}",
                    common::quote_always(&s)
                ));
                1
            })
        };
        match arg {
            Long(name) if matches!(name, "block" | "fixed" | "in-block" | "in-fixed") => {
                let (fixed, input) = (name.ends_with("fixed"), name.starts_with("in-"));
                let n = match size(&mut p, "block") {
                    Ok(n) => n,
                    Err(c) => return c,
                };
                let params = if fixed {
                    ChannelParams::fixed(n)
                } else {
                    ChannelParams::variable(n)
                };
                if input {
                    o.input = Some(params);
                } else {
                    o.out = Some(params);
                }
            }
            Long("pad") => {
                let v = match p.value() {
                    Ok(v) => v.to_string_lossy().into_owned(),
                    Err(e) => {
                        t.bad_option(e);
                        return 1;
                    }
                };
                match v.parse::<u8>() {
                    Ok(b) => o.pad = Some(b),
                    Err(_) => {
                        t.usage_error(format_args!(
                            "invalid padding byte: {} (0-255)",
                            common::quote_always(&v)
                        ));
                        return 1;
                    }
                }
            }
            Long("append") => o.append = true,
            Long("stats") => o.stats = true,
            Long("progress") => o.progress = true,
            Value(v) => operands.push(v),
            other => {
                t.bad_option(other.unexpected());
                return 1;
            }
        }
    }
    if operands.len() != 2 {
        let what = if operands.len() < 2 {
            "missing operand"
        } else {
            "extra operand"
        };
        t.usage_error(format_args!("{what}: expected SRC and DST"));
        return 1;
    }
    if o.pad.is_some() && !o.out.is_some_and(|p| p.block == BlockType::Fixed) {
        t.usage_error(format_args!("--pad needs --fixed"));
        return 1;
    }
    run(t, &o, &operands[0], &operands[1])
}

fn run(t: &Tool, o: &Opts, src_name: &OsStr, dst_name: &OsStr) -> i32 {
    fn endpoint<'e>(
        t: &Tool,
        e: &'e End,
        params: Option<ChannelParams>,
        name: &OsStr,
    ) -> Result<Endpoint<'e>, i32> {
        let ep = match e {
            End::IpcIn(rx) => Ok(Endpoint::ipc_receiver(rx)),
            End::IpcOut(tx) => Ok(Endpoint::ipc_sender(tx)),
            _ => e.usable().and_then(|()| Endpoint::fd(e.fd()?)),
        };
        ep.map(|ep| match params {
            Some(p) => ep.impose(p),
            None => ep,
        })
        .map_err(|err| {
            t.file_error_bytes(name.as_bytes(), &err);
            1
        })
    }
    // Opened in order: a listening SRC waits before DST is opened. Every
    // check is made before a DST file is truncated: `ferry pipe /tmp d`
    // and `ferry pipe - d <&-` refused, but only after emptying d.
    let src = match End::open(src_name, true, o.append) {
        Ok(e) => e,
        Err(e) => {
            t.file_error_bytes(src_name.as_bytes(), &e);
            return 1;
        }
    };
    let s = match endpoint(t, &src, o.input, src_name) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let dst = match End::open(dst_name, false, o.append) {
        Ok(e) => e,
        Err(e) => {
            t.file_error_bytes(dst_name.as_bytes(), &e);
            return 1;
        }
    };
    let d = match endpoint(t, &dst, o.out, dst_name) {
        Ok(d) => d,
        Err(c) => return c,
    };
    let fstat = |e: &End| e.fd().and_then(|fd| Ok(rustix::fs::fstat(fd)?));
    if let (Ok(in_st), Ok(out_st), Ok(in_fd)) = (fstat(&src), fstat(&dst), src.fd()) {
        // A file into itself: truncating it loses it (`ferry pipe f f`
        // emptied f), appending to it grows it for ever (`--append f f`,
        // `ferry pipe f - >> f`). Refused as GNU's cp and cat refuse.
        let truncates = matches!(dst, End::File(_)) && !o.append;
        if truncates && common::is_reg(&out_st) && common::same_inode(&in_st, &out_st) {
            t.error(format_args!(
                "{} and {} are the same file",
                common::shell_quote_os(src_name),
                common::shell_quote_os(dst_name)
            ));
            return 1;
        }
        if common::reads_own_output(&in_st, Some(&out_st), common::SelfFeed::Cat(in_fd)) {
            t.name_error(
                src_name.as_bytes(),
                format_args!("input file is output file"),
            );
            return 1;
        }
    }
    // O_TRUNC's work, now; like O_TRUNC, only a regular file's (a
    // device's size cannot be set).
    let regular = fstat(&dst).is_ok_and(|st| common::is_reg(&st));
    if let (End::File(f), false, true) = (&dst, o.append, regular) {
        if let Err(e) = f.set_len(0) {
            t.file_error_bytes(dst_name.as_bytes(), &e);
            return 1;
        }
    }
    let bar = Bar::new(o.progress, src.size());
    let add = |n: u64| bar.add(n);
    let mut opts = TransferOptions::new().progress(&add);
    if let Some(b) = o.pad {
        opts = opts.pad_last(b);
    }
    let r = between(&s, &d, &opts);
    bar.finish();
    let status = match &r {
        Ok(st) => {
            if o.stats {
                eprintln!("{}", describe_stats(t, st));
            }
            0
        }
        Err(e) => {
            if o.stats {
                eprintln!("{}", describe_stats(t, e.stats()));
            }
            let (name, what) = match e.side() {
                Side::Read => (src_name, "read error"),
                Side::Write => (dst_name, "write error"),
            };
            if e.side() == Side::Write && dst_name == "-" {
                common::end_if_sigpipe(e.io_error());
            }
            t.name_error(
                name.as_bytes(),
                format_args!(
                    "{what}: {} ({} bytes arrived)",
                    describe(e.io_error()),
                    e.bytes()
                ),
            );
            1
        }
    };
    drop((s, d));
    if let Err(e) = dst.finish(status == 0) {
        t.file_error_bytes(dst_name.as_bytes(), &e);
        return 1;
    }
    status
}

/// One opened end.
enum End {
    Std(BorrowedFd<'static>),
    File(std::fs::File),
    Tcp(TcpStream),
    Unix(UnixStream),
    /// The receiving end of an ipc channel (a SRC).
    IpcIn(Box<Mutex<Receiver>>),
    /// The sending end of an ipc channel (a DST).
    IpcOut(Box<Mutex<Sender>>),
}

/// The pool an ipc DST sends through: slots of ferry's transfer unit.
const IPC_SLOT: usize = ferry::transfer::endpoint::FILE_BLOCK;
const IPC_SLOTS: usize = 16;

/// The abstract socket name an ipc PATH stands for: PATH made absolute
/// (lexically, against the current directory), so that both sides agree
/// on it from anywhere; nothing of it is ever a file.
fn ipc_name(rest: &[u8]) -> io::Result<String> {
    let p = std::path::Path::new(OsStr::from_bytes(rest));
    if rest.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "expected a PATH",
        ));
    }
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()?.join(p)
    };
    let name = format!(
        "ferry-ipc:{}",
        abs.to_str().ok_or_else(|| io::Error::new(
            io::ErrorKind::InvalidInput,
            "an ipc PATH must be valid UTF-8"
        ))?
    );
    // The kernel's limit: 108 bytes of sun_path, one for the leading NUL.
    if name.len() > 107 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "an ipc PATH made absolute must be at most 97 bytes",
        ));
    }
    Ok(name)
}

/// An ipc socket becomes the receiving end for a SRC, the sending end for
/// a DST.
fn ipc_end(sock: ferry::ipc::Socket, source: bool) -> io::Result<End> {
    if source {
        // SAFETY: the user named this connection as a ferry ipc end
        // (the help says to connect it only to ferry): its peer is a
        // ferry Sender, which writes a slot again only once released.
        let rx = unsafe { Receiver::new(sock, None)? };
        Ok(End::IpcIn(Box::new(Mutex::new(rx))))
    } else {
        let config = SenderConfig {
            slot_size: IPC_SLOT,
            slots: IPC_SLOTS,
            // As long as the receiver lives, as a pipe's writer waits.
            timeout: None,
            ..SenderConfig::default()
        };
        Ok(End::IpcOut(Box::new(Mutex::new(Sender::new(
            sock, config,
        )?))))
    }
}

impl End {
    /// Opens `spec`; a DST file is created but not yet truncated (`run`
    /// truncates it once both ends have been checked).
    fn open(spec: &OsStr, source: bool, append: bool) -> io::Result<End> {
        if spec == "-" {
            // SAFETY: descriptors 0 and 1 stay open for the process's life.
            return Ok(End::Std(unsafe {
                BorrowedFd::borrow_raw(if source { 0 } else { 1 })
            }));
        }
        // A network address is text; a path is bytes.
        fn text(rest: &[u8]) -> io::Result<&str> {
            std::str::from_utf8(rest)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "expected HOST:PORT"))
        }
        let path = |rest: &[u8]| OsStr::from_bytes(rest).to_os_string();
        let spec_bytes = spec.as_bytes();
        if let Some(rest) = spec_bytes.strip_prefix(b"tcp:") {
            let rest = text(rest)?;
            let (host, port) = host_port(rest)?;
            let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
            for a in (host, port).to_socket_addrs()? {
                match TcpStream::connect(a) {
                    Ok(s) => return Ok(End::Tcp(s)),
                    Err(e) => last = e,
                }
            }
            return Err(last);
        }
        if let Some(rest) = spec_bytes.strip_prefix(b"tcp-listen:") {
            let rest = text(rest)?;
            let (host, port) = match rest.parse::<u16>() {
                Ok(p) => ("0.0.0.0", p),
                Err(_) => host_port(rest)?,
            };
            let l = TcpListener::bind((host, port))?;
            return Ok(End::Tcp(l.accept()?.0));
        }
        if let Some(rest) = spec_bytes.strip_prefix(b"unix:") {
            let path = path(rest);
            return Ok(End::Unix(UnixStream::connect(path)?));
        }
        if let Some(rest) = spec_bytes.strip_prefix(b"ipc:") {
            return ipc_end(ferry::ipc::connect(&ipc_name(rest)?)?, source);
        }
        if let Some(rest) = spec_bytes.strip_prefix(b"ipc-listen:") {
            let l = ferry::ipc::Listener::bind(&ipc_name(rest)?)?;
            return ipc_end(l.accept(None)?, source);
        }
        if let Some(rest) = spec_bytes.strip_prefix(b"unix-listen:") {
            let path = path(rest);
            let l = UnixListener::bind(&path)?;
            let accepted = l.accept();
            // The socket's name is not needed once connected.
            let _ = std::fs::remove_file(&path);
            return Ok(End::Unix(accepted?.0));
        }
        let f = if source {
            std::fs::File::open(spec)?
        } else {
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .append(append)
                .truncate(false)
                .open(spec)?
        };
        Ok(End::File(f))
    }

    /// Fails for a standard input or output the process was started
    /// without (taken by /dev/null opened the other way, main.rs), as
    /// reading or writing it would.
    fn usable(&self) -> io::Result<()> {
        if let End::Std(fd) = self {
            let mode = rustix::fs::fcntl_getfl(fd)?;
            let want_read = fd.as_raw_fd() == 0;
            let acc = mode & rustix::fs::OFlags::RWMODE;
            let ok = if want_read {
                acc != rustix::fs::OFlags::WRONLY
            } else {
                acc != rustix::fs::OFlags::RDONLY
            };
            if !ok {
                return Err(io::Error::from_raw_os_error(libc::EBADF));
            }
        }
        Ok(())
    }

    /// The descriptor (an ipc end has none a transfer may use).
    fn fd(&self) -> io::Result<BorrowedFd<'_>> {
        match self {
            End::Std(fd) => Ok(*fd),
            End::File(f) => Ok(f.as_fd()),
            End::Tcp(s) => Ok(s.as_fd()),
            End::Unix(s) => Ok(s.as_fd()),
            End::IpcIn(_) | End::IpcOut(_) => Err(io::Error::from_raw_os_error(libc::EBADF)),
        }
    }

    /// The size to show progress against (a regular file's).
    fn size(&self) -> Option<u64> {
        let st = rustix::fs::fstat(self.fd().ok()?).ok()?;
        common::is_reg(&st).then_some(st.st_size as u64)
    }

    /// A socket is shut down for writing, so that its peer sees the end;
    /// an ipc sender that sent everything (`complete`) closes in order,
    /// one that failed just goes (its receiver sees the sender gone, not
    /// an end of data).
    fn finish(self, complete: bool) -> io::Result<()> {
        let r = match self {
            End::Tcp(s) => s.shutdown(Shutdown::Write),
            End::Unix(s) => s.shutdown(Shutdown::Write),
            End::IpcOut(tx) => {
                let tx = (*tx).into_inner().unwrap_or_else(|p| p.into_inner());
                if complete {
                    tx.close()
                } else {
                    tx.abort();
                    Ok(())
                }
            }
            _ => Ok(()),
        };
        // A peer already gone has seen the end.
        match r {
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(()),
            r => r,
        }
    }
}

/// `HOST:PORT`, `[V6]:PORT`.
fn host_port(s: &str) -> io::Result<(&str, u16)> {
    let bad = || io::Error::new(io::ErrorKind::InvalidInput, "expected HOST:PORT");
    let (host, port) = s.rsplit_once(':').ok_or_else(bad)?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let port = port.parse::<u16>().map_err(|_| bad())?;
    Ok((host, port))
}

/// `--progress` on a terminal: a bar (or a byte counter for a stream of
/// unknown length).
struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    fn new(asked: bool, size: Option<u64>) -> Bar {
        use std::io::IsTerminal;
        if !asked || !io::stderr().is_terminal() {
            return Bar(None);
        }
        let (bar, template) = match size {
            Some(n) => (
                indicatif::ProgressBar::new(n),
                "{bytes}/{total_bytes} [{wide_bar}] {bytes_per_sec} {eta}",
            ),
            None => (
                indicatif::ProgressBar::no_length(),
                "{bytes} {bytes_per_sec} {elapsed}",
            ),
        };
        if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        Bar(Some(bar))
    }

    fn add(&self, n: u64) {
        if let Some(b) = &self.0 {
            b.inc(n);
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish();
        }
    }
}

/// `--stats`: one line of what moved how.
fn describe_stats(t: &Tool, st: &TransferStats) -> String {
    use std::fmt::Write;
    let mut s = format!("{}: {} bytes", t.name, st.bytes);
    if let Some(c) = st.case {
        let _ = write!(s, "; case {}", c.number());
    }
    let by: Vec<String> = Method::ALL
        .iter()
        .filter(|&&m| st.bytes_by(m) > 0)
        .map(|&m| format!("{} {}", method_name(m), st.bytes_by(m)))
        .collect();
    if !by.is_empty() {
        let _ = write!(s, "; by {}", by.join(", "));
    }
    let c = &st.calls;
    let _ = write!(
        s,
        "; calls: copy_file_range {}, splice {}, sendfile {}, read {}, write {}, other {}",
        c.copy_file_range, c.splice, c.sendfile, c.read, c.write, c.other
    );
    if let Some(ov) = st.overlay {
        let _ = write!(
            s,
            "; blocks {} in, {} out; copied in user space {}; padding {}",
            ov.blocks_in, ov.blocks_out, ov.bytes_copied, ov.padding
        );
    }
    if st.switches.count() > 0 {
        let pairs: Vec<String> = st
            .switches
            .iter()
            .map(|(a, b, k)| format!("{}->{} {k}", path_name(a), path_name(b)))
            .collect();
        let _ = write!(
            s,
            "; switches {} ({})",
            st.switches.count(),
            pairs.join(", ")
        );
    }
    if st.peak_buffer_bytes > 0 {
        let _ = write!(
            s,
            "; peak buffers {} bytes; stops at share {}",
            st.peak_buffer_bytes, st.share_waits
        );
    }
    s
}

fn path_name(p: Path) -> &'static str {
    match p {
        Path::Kernel => "kernel",
        Path::Through => "through",
        Path::Buffered => "buffered",
    }
}

fn method_name(m: Method) -> &'static str {
    match m {
        Method::CopyFileRange => "copy_file_range",
        Method::Splice => "splice",
        Method::Sendfile => "sendfile",
        Method::Mapped => "mapped",
        Method::ReadWrite => "read/write",
    }
}
