//! `ferry cat`: GNU cat. Plain concatenation takes the kernel's copy paths
//! (no byte passes through user space for file → file and file → pipe);
//! the formatting options run a GNU-identical state machine over stream
//! regions.

use super::common::{self, Input, Tool};
use super::output::{stdout_fd, Out};
use ferry::transfer::{self, FdKind, Side, TransferOptions};
use ferry::Stream;
use std::ffi::OsString;
use std::io;

#[derive(Default, Clone, Copy)]
struct Opts {
    number: bool,
    number_nonblank: bool,
    squeeze: bool,
    show_ends: bool,
    show_tabs: bool,
    show_nonprinting: bool,
}

impl Opts {
    fn plain(&self) -> bool {
        !(self.number
            || self.number_nonblank
            || self.squeeze
            || self.show_ends
            || self.show_tabs
            || self.show_nonprinting)
    }
}

const HELP: &str = "Usage: ferry cat [OPTION]... [FILE]...
Concatenate FILE(s) to standard output.

With no FILE, or when FILE is -, read standard input.

  -A, --show-all           equivalent to -vET
  -b, --number-nonblank    number nonempty output lines, overrides -n
  -e                       equivalent to -vE
  -E, --show-ends          display $ at end of each line
  -n, --number             number all output lines
  -s, --squeeze-blank      suppress repeated empty output lines
  -t                       equivalent to -vT
  -T, --show-tabs          display TAB characters as ^I
  -u                       (ignored)
  -v, --show-nonprinting   use ^ and M- notation, except for LFD and TAB
      --help        display this help and exit
      --version     output version information and exit
";

pub fn main(t: &Tool, args: Vec<OsString>) -> i32 {
    use lexopt::prelude::*;
    let mut o = Opts::default();
    let mut files: Vec<OsString> = Vec::new();
    let mut p = lexopt::Parser::from_args(args);
    loop {
        let arg = common::next_arg!(t, p, HELP, 1);
        match arg {
            Short('A') | Long("show-all") => {
                o.show_nonprinting = true;
                o.show_ends = true;
                o.show_tabs = true;
            }
            Short('b') | Long("number-nonblank") => {
                o.number = true;
                o.number_nonblank = true;
            }
            Short('e') => {
                o.show_nonprinting = true;
                o.show_ends = true;
            }
            Short('E') | Long("show-ends") => o.show_ends = true,
            Short('n') | Long("number") => o.number = true,
            Short('s') | Long("squeeze-blank") => o.squeeze = true,
            Short('t') => {
                o.show_nonprinting = true;
                o.show_tabs = true;
            }
            Short('T') | Long("show-tabs") => o.show_tabs = true,
            Short('u') => {}
            Short('v') | Long("show-nonprinting") => o.show_nonprinting = true,
            Value(v) => files.push(v),
            other => {
                t.bad_option(other.unexpected());
                return 1;
            }
        }
    }
    if files.is_empty() {
        files.push("-".into());
    }
    let out_fd = stdout_fd();
    let out_st = match common::file_type(out_fd) {
        Ok(s) => Some(s),
        Err(e) => {
            t.error(format_args!("standard output: {}", common::describe(&e)));
            return 1;
        }
    };
    let mut status = 0;
    let mut fmt = Format::new(o);
    let mut out = super::output::stdout();
    for f in &files {
        let name = common::quotef(f);
        if let Err((side, e)) = cat_one(f, o, out_st.as_ref(), &mut fmt, &mut out) {
            match side {
                Side::Write => return common::write_failed(t, &e),
                Side::Read => {
                    if let Some(msg) = e.get_ref().filter(|_| e.raw_os_error().is_none()) {
                        t.error(format_args!("{name}: {msg}"));
                    } else {
                        t.file_error(&name, &e);
                    }
                    status = 1;
                }
            }
        }
    }
    if let Err(e) = fmt.finish(&mut out).and_then(|_| out.flush()) {
        return common::write_failed(t, &e);
    }
    // GNU's cat closes a standard input it read, and reports a failure:
    // one it was started without cannot be closed.
    if files.iter().any(|f| f == "-") && common::stdin_was_closed() {
        t.error(format_args!(
            "closing standard input: {}",
            common::describe(&io::Error::from_raw_os_error(libc::EBADF))
        ));
        return 1;
    }
    status
}

fn cat_one(
    file: &OsString,
    o: Opts,
    out_st: Option<&rustix::fs::Stat>,
    fmt: &mut Format,
    out: &mut Out,
) -> Result<(), (Side, io::Error)> {
    let input = open_input(file).map_err(|e| (Side::Read, e))?;
    let in_st = common::file_type(input.fd()).map_err(|e| (Side::Read, e))?;
    if common::reads_own_output(&in_st, out_st, common::SelfFeed::Cat(input.fd())) {
        return Err((Side::Read, io::Error::other("input file is output file")));
    }
    if o.plain() {
        out.flush().map_err(|e| (Side::Write, e))?;
        // The kinds from the stats made above (no more fstat), and the
        // signals as the tool set them (SIGPIPE ignored: EPIPE, reported
        // as GNU does; SIGXFSZ ends it as it ends GNU's cat).
        let out_kind = out_st.map_or(FdKind::Other, |s| FdKind::from_mode(s.st_mode));
        let opts = TransferOptions::new()
            .with_kinds(FdKind::from_mode(in_st.st_mode), out_kind)
            .leave_signals();
        transfer::copy(input.fd(), stdout_fd(), &opts).map_err(|e| e.into_parts())?;
        return Ok(());
    }
    // Formatting: read through a stream, transform, write.
    let fd = input
        .fd()
        .try_clone_to_owned()
        .map_err(|e| (Side::Read, e))?;
    let stream = Stream::from_fd(fd).map_err(|e| (Side::Read, common::os_only(e)))?;
    // From a pipe or a terminal, what has come is written before waiting
    // for more, as GNU's cat does (a reader sees each line as it arrives):
    // one read at a time, output flushed after each.
    if !common::is_reg(&in_st) {
        let mut stream = stream;
        loop {
            let n = {
                let b = io::BufRead::fill_buf(&mut stream)
                    .map_err(|e| (Side::Read, common::os_only(e)))?;
                if b.is_empty() {
                    break;
                }
                fmt.feed(b, out).map_err(|e| (Side::Write, e))?;
                b.len()
            };
            io::BufRead::consume(&mut stream, n);
            out.flush().map_err(|e| (Side::Write, e))?;
        }
        return Ok(());
    }
    let g = &stream;
    loop {
        let r = g
            .salloc(128 << 10)
            .map_err(|e| (Side::Read, common::os_only(e)))?;
        if r.is_empty() {
            break;
        }
        fmt.feed(&r, out).map_err(|e| (Side::Write, e))?;
    }
    Ok(())
}

fn open_input(file: &OsString) -> io::Result<Input> {
    if file == "-" {
        return Ok(Input::Stdin(io::stdin()));
    }
    Ok(Input::File(std::fs::File::open(file)?))
}

/// GNU cat's formatting state, kept across files as GNU keeps it.
struct Format {
    o: Opts,
    /// -1: inside a line; 0: at the start of a line after a non-empty one;
    /// 1: after one empty line; 2: after two or more (GNU's `newlines`).
    newlines: i32,
    line: u64,
    /// With -E, a `\r` that ended the last chunk: `^M` if a newline comes
    /// next (GNU 9 shows `\r\n` as `^M$`), else the `\r` itself.
    pending_cr: bool,
}

impl Format {
    fn new(o: Opts) -> Format {
        Format {
            o,
            newlines: 0,
            line: 0,
            pending_cr: false,
        }
    }

    fn number(&mut self, out: &mut Out) -> io::Result<()> {
        self.line += 1;
        let s = format!("{:>6}\t", self.line);
        out.write(s.as_bytes())
    }

    /// Outputs a `\r` held back at a chunk boundary.
    fn settle_cr(&mut self, next_is_newline: bool, out: &mut Out) -> io::Result<()> {
        if std::mem::take(&mut self.pending_cr) {
            if next_is_newline {
                out.write(b"^M")?;
            } else {
                put_char(b'\r', self.o, out)?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Out) -> io::Result<()> {
        self.settle_cr(false, out)
    }

    fn feed(&mut self, bytes: &[u8], out: &mut Out) -> io::Result<()> {
        let o = self.o;
        if let Some(&first) = bytes.first() {
            self.settle_cr(first == b'\n', out)?;
        }
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            if c == b'\n' {
                self.newlines += 1;
                if self.newlines > 0 {
                    if self.newlines >= 2 {
                        self.newlines = 2;
                        if o.squeeze {
                            i += 1;
                            continue;
                        }
                    }
                    if o.number && !o.number_nonblank {
                        self.number(out)?;
                    }
                }
                if o.show_ends {
                    out.byte(b'$')?;
                }
                out.byte(b'\n')?;
                i += 1;
                continue;
            }
            if self.newlines >= 0 && o.number {
                self.number(out)?;
            }
            self.newlines = -1;
            // The rest of the line up to the next newline.
            let end = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |k| i + k);
            let mut run = &bytes[i..end];
            let mut cr_newline = false;
            if o.show_ends && run.last() == Some(&b'\r') {
                run = &run[..run.len() - 1];
                if end < bytes.len() {
                    cr_newline = true;
                } else {
                    self.pending_cr = true;
                }
            }
            if !o.show_nonprinting && !o.show_tabs {
                out.write(run)?;
            } else {
                for &ch in run {
                    put_char(ch, o, out)?;
                }
            }
            if cr_newline {
                out.write(b"^M")?;
            }
            i = end;
        }
        Ok(())
    }
}

fn put_char(ch: u8, o: Opts, out: &mut Out) -> io::Result<()> {
    if o.show_nonprinting {
        if ch >= 32 {
            if ch < 127 {
                out.byte(ch)
            } else if ch == 127 {
                out.write(b"^?")
            } else {
                out.write(b"M-")?;
                if ch >= 128 + 32 {
                    if ch < 128 + 127 {
                        out.byte(ch - 128)
                    } else {
                        out.write(b"^?")
                    }
                } else {
                    out.write(&[b'^', ch - 128 + 64])
                }
            }
        } else if ch == b'\t' && !o.show_tabs {
            out.byte(b'\t')
        } else {
            out.write(&[b'^', ch + 64])
        }
    } else if ch == b'\t' && o.show_tabs {
        out.write(b"^I")
    } else {
        out.byte(ch)
    }
}
