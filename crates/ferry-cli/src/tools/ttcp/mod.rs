//! `ferry ttcp`: the classic ttcp (Test TCP) on ferry's I/O paths. One
//! side transmits (`-t HOST`), the other receives (`-r`); each prints the
//! bytes, the real time, the throughput, the I/O calls and the CPU time
//! (user and system) — and the CPU per GiB, the figure fbufs' Table 3 is
//! about. `--io` picks how the bytes cross the user/kernel boundary; the
//! loops live in `io.rs`, on library calls only.

mod exchange;
mod io;

use super::common::{self, describe, Tool};
use std::ffi::OsString;
use std::time::Duration;

const HELP: &str = "Usage: ferry ttcp -t [OPTION]... HOST
  or:  ferry ttcp -r [OPTION]...
Test TCP: transmit to (-t) or receive from (-r) a ttcp on another host
(or on this one), and report throughput and CPU time per GiB.

  -t              transmit: connect to HOST and send
  -r              receive: accept one connection and read to its end
  -s              -t: send a generated pattern instead of standard input;
                  -r: throw the data away instead of writing it to
                  standard output
  -l LEN          bytes per I/O call (default 8192; K, M suffixes)
  -n NUM          with -t -s: buffers of LEN bytes to send (default 2048)
  -p PORT         TCP port (default 5001)
  -b SIZE         socket send (-t) or receive (-r) buffer size
  -D              -t: TCP_NODELAY (no Nagle delay)
      --io MODE   how bytes cross into and out of the kernel:
                    read-write  read(2)/write(2) through a LEN-byte buffer
                                (the default, the classic ttcp)
                    exchange    ferry's buffer exchange (fbufs): each buffer
                                handed over by ownership (read_buf and
                                write_buf; large ones go by reference)
                    splice      page references through a pipe: -t -s
                                splices a memfd's pattern pages into the
                                socket; -r splices the socket into a pipe
                                and on to the output (or /dev/null)
                    sendfile    -t: sendfile(2) of the pattern's memfd (or
                                of standard input, a file); -r as splice
      --help      display this help and exit
      --version   output version information and exit

Reports go to standard error, one line each, prefixed `ttcp-t:` or
`ttcp-r:`. Exit status is 0 if every byte moved, 1 otherwise: the
transmitter waits for the receiver to close the connection, and a
receiver that fails resets it, so that the transmitter fails too.
";

/// How bytes cross the boundary (`--io`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    ReadWrite,
    Exchange,
    Splice,
    Sendfile,
}

impl Mode {
    fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "read-write" | "rw" => Mode::ReadWrite,
            "exchange" => Mode::Exchange,
            "splice" => Mode::Splice,
            "sendfile" => Mode::Sendfile,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Mode::ReadWrite => "read-write",
            Mode::Exchange => "exchange",
            Mode::Splice => "splice",
            Mode::Sendfile => "sendfile",
        }
    }
}

/// The parsed command line.
#[derive(Debug, Clone)]
pub(crate) struct Opts {
    pub transmit: bool,
    pub pattern_or_sink: bool,
    pub len: usize,
    pub count: u64,
    pub port: u16,
    pub sockbuf: Option<usize>,
    pub nodelay: bool,
    pub mode: Mode,
    pub host: Option<String>,
}

/// What one side did, for the report.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub bytes: u64,
    pub calls: u64,
    pub real: Duration,
    pub user: Duration,
    pub sys: Duration,
}

pub fn main(t: &Tool, args: Vec<OsString>) -> i32 {
    use lexopt::prelude::*;
    let mut o = Opts {
        transmit: false,
        pattern_or_sink: false,
        len: 8192,
        count: 2048,
        port: 5001,
        sockbuf: None,
        nodelay: false,
        mode: Mode::ReadWrite,
        host: None,
    };
    let (mut t_seen, mut r_seen) = (false, false);
    let mut operands: Vec<String> = Vec::new();
    let mut p = lexopt::Parser::from_args(args);
    loop {
        let arg = common::next_arg!(t, p, HELP, 1);
        // Owned, so that the parser can be asked for option values.
        let arg = match arg {
            Short(c) => Tok::Short(c),
            Long(l) => Tok::Long(l.to_string()),
            Value(v) => Tok::Value(v.to_string_lossy().into_owned()),
        };
        let r = option(
            t,
            &mut p,
            arg,
            &mut o,
            &mut t_seen,
            &mut r_seen,
            &mut operands,
        );
        if let Err(c) = r {
            return c;
        }
    }
    if t_seen == r_seen {
        t.usage_error(format_args!("exactly one of -t and -r is needed"));
        return 1;
    }
    o.transmit = t_seen;
    match (o.transmit, operands.len()) {
        (true, 1) => o.host = operands.pop(),
        (true, 0) => {
            t.usage_error(format_args!("missing operand: -t needs HOST"));
            return 1;
        }
        (false, 0) => {}
        _ => {
            t.usage_error(format_args!(
                "extra operand {}",
                common::quote_always(&operands[usize::from(o.transmit)])
            ));
            return 1;
        }
    }
    run(t, &o)
}

/// One command-line argument, owned.
enum Tok {
    Short(char),
    Long(String),
    Value(String),
}

/// Takes one argument (and its value) into `o`.
fn option(
    t: &Tool,
    p: &mut lexopt::Parser,
    arg: Tok,
    o: &mut Opts,
    t_seen: &mut bool,
    r_seen: &mut bool,
    operands: &mut Vec<String>,
) -> Result<(), i32> {
    let mut value = || -> Result<String, i32> {
        p.value()
            .map(|v| v.to_string_lossy().into_owned())
            .map_err(|e| {
                t.bad_option(e);
                1
            })
    };
    let number = |s: &str, what: &str, max: u64| -> Result<u64, i32> {
        match crate::size::parse_size(s) {
            Ok(n) if n >= 1 && n <= max => Ok(n),
            _ => {
                t.usage_error(format_args!("invalid {what}: {}", common::quote_always(s)));
                Err(1)
            }
        }
    };
    match arg {
        Tok::Short('t') => *t_seen = true,
        Tok::Short('r') => *r_seen = true,
        Tok::Short('s') => o.pattern_or_sink = true,
        Tok::Short('D') => o.nodelay = true,
        // At most 1 GiB per call: a buffer is allocated whole.
        Tok::Short('l') => o.len = number(&value()?, "buffer length", 1 << 30)? as usize,
        Tok::Short('n') => o.count = number(&value()?, "buffer count", u64::MAX)?,
        Tok::Short('p') => o.port = number(&value()?, "port", 65535)? as u16,
        Tok::Short('b') => {
            o.sockbuf = Some(number(&value()?, "socket buffer size", 1 << 30)? as usize)
        }
        Tok::Short('u') => {
            t.usage_error(format_args!(
                "UDP (-u) is not supported: ferry ttcp is TCP only"
            ));
            return Err(1);
        }
        Tok::Long(l) if l == "io" => {
            let v = value()?;
            o.mode = Mode::parse(&v).ok_or_else(|| {
                t.usage_error(format_args!(
                    "invalid I/O mode: {} (read-write, exchange, splice, sendfile)",
                    common::quote_always(&v)
                ));
                1
            })?;
        }
        Tok::Value(v) => operands.push(v),
        Tok::Short(c) => {
            t.bad_option(lexopt::Arg::Short(c).unexpected());
            return Err(1);
        }
        Tok::Long(l) => {
            t.bad_option(lexopt::Arg::Long(&l).unexpected());
            return Err(1);
        }
    }
    Ok(())
}

fn run(t: &Tool, o: &Opts) -> i32 {
    let side = if o.transmit { "ttcp-t" } else { "ttcp-r" };
    let target = match &o.host {
        Some(h) => format!("  tcp  -> {h}"),
        None => "  tcp".to_string(),
    };
    let count = if o.transmit && o.pattern_or_sink {
        format!(", nbuf={}", o.count)
    } else {
        String::new()
    };
    eprintln!(
        "{side}: buflen={}{count}, port={}, io={}{target}",
        o.len,
        o.port,
        o.mode.name()
    );
    let r = if o.transmit {
        io::transmit(o)
    } else {
        io::receive(o)
    };
    match r {
        Ok(out) => {
            report(side, &out);
            0
        }
        Err(e) => {
            t.error(format_args!("{}", describe_failure(&e)));
            1
        }
    }
}

/// A failure with where it happened (`connect 127.0.0.1:5001: ...`).
fn describe_failure(e: &io::Failure) -> String {
    let mut s = format!("{}: {}", e.what, describe(&e.error));
    if let Some(b) = e.bytes {
        s.push_str(&format!(" ({b} bytes moved)"));
    }
    s
}

fn report(side: &str, o: &Outcome) {
    let secs = o.real.as_secs_f64().max(1e-9);
    let gib = o.bytes as f64 / (1u64 << 30) as f64;
    let cpu = (o.user + o.sys).as_secs_f64();
    eprintln!(
        "{side}: {} bytes in {:.3} real seconds = {:.2} MiB/s ({:.3} Gbit/s) +++",
        o.bytes,
        secs,
        o.bytes as f64 / secs / (1u64 << 20) as f64,
        o.bytes as f64 * 8.0 / secs / 1e9
    );
    let calls = o.calls.max(1) as f64;
    eprintln!(
        "{side}: {} I/O calls, msec/call = {:.4}, calls/sec = {:.1}",
        o.calls,
        secs * 1e3 / calls,
        o.calls as f64 / secs
    );
    let per_gib = if gib > 0.0 {
        format!("{:.3}", cpu / gib)
    } else {
        "-".to_string()
    };
    eprintln!(
        "{side}: {:.3}user {:.3}sys {:.3}real {:.0}% CPU, {per_gib} s CPU per GiB",
        o.user.as_secs_f64(),
        o.sys.as_secs_f64(),
        secs,
        cpu / secs * 100.0
    );
}
