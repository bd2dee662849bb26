//! What every tool shares: GNU-style messages and exit statuses, inputs by
//! name (`-` is standard input), and quiet ends on a closed pipe.

use std::ffi::OsString;
use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

/// A running tool: its name, for messages.
pub struct Tool {
    pub name: String,
    /// Which tool it is (`cmp`), whatever it is called.
    pub id: String,
    /// diffutils (cmp, diff) prefix the --help hint with the tool's name.
    pub hint_prefix: bool,
    /// grep shows its usage line between the message and the hint.
    pub usage_line: bool,
}

impl Tool {
    /// Tool `name`, shown in messages as `shown`.
    pub fn named(name: &str, shown: &str) -> Tool {
        Tool {
            name: shown.to_string(),
            id: name.to_string(),
            hint_prefix: matches!(name, "cmp" | "diff"),
            usage_line: name == "grep",
        }
    }

    /// `ferry NAME: message` on standard error.
    pub fn error(&self, msg: fmt::Arguments<'_>) {
        eprintln!("{}: {msg}", self.name);
    }

    /// `ferry NAME: FILE: strerror` on standard error.
    pub fn file_error(&self, file: &str, e: &io::Error) {
        self.error(format_args!("{file}: {}", describe(e)));
    }

    /// GNU's usage error: the message, then the `--help` hint.
    pub fn usage_error(&self, msg: fmt::Arguments<'_>) {
        self.error(msg);
        self.hint();
    }

    /// The usage line (grep) and the `--help` hint.
    pub fn hint(&self) {
        if self.usage_line {
            eprintln!("Usage: {} [OPTION]... PATTERNS [FILE]...", self.name);
        }
        if self.hint_prefix {
            eprintln!(
                "{}: Try '{} --help' for more information.",
                self.name, self.name
            );
        } else {
            eprintln!("Try '{} --help' for more information.", self.name);
        }
    }

    /// Reports a bad option the way GNU getopt does.
    pub fn bad_option(&self, e: lexopt::Error) {
        match e {
            lexopt::Error::UnexpectedOption(o) if o.starts_with("--") => {
                self.usage_error(format_args!("unrecognized option '{o}'"))
            }
            lexopt::Error::UnexpectedOption(o) => self.usage_error(format_args!(
                "invalid option -- '{}'",
                o.trim_start_matches('-')
            )),
            lexopt::Error::MissingValue { option: Some(o) } => {
                if o.starts_with("--") {
                    self.usage_error(format_args!("option '{o}' requires an argument"))
                } else {
                    self.usage_error(format_args!(
                        "option requires an argument -- '{}'",
                        o.trim_start_matches('-')
                    ))
                }
            }
            lexopt::Error::UnexpectedValue { option, .. } => {
                self.usage_error(format_args!("option '{option}' doesn't allow an argument"))
            }
            other => self.usage_error(format_args!("{other}")),
        }
    }
}

/// The next argument of a tool's option loop: answers `--help` and
/// `--version` (returning 0), reports a bad option (returning `$status`),
/// leaves the loop at the end.
macro_rules! next_arg {
    ($t:expr, $p:expr, $help:expr, $status:expr) => {
        match $crate::tools::common::next_arg_of($t, &mut $p, $status) {
            Ok(Some(a)) => {
                if let Some(code) = $crate::tools::common::common_arg($t, &a, $help) {
                    return code;
                }
                a
            }
            Ok(None) => break,
            Err(code) => return code,
        }
    };
}
pub(crate) use next_arg;

/// The next command-line argument; a bad one is reported GNU-style and
/// becomes `Err(status)`.
pub fn next_arg_of<'p>(
    t: &Tool,
    p: &'p mut lexopt::Parser,
    status: i32,
) -> Result<Option<lexopt::Arg<'p>>, i32> {
    p.next().map_err(|e| {
        t.bad_option(e);
        status
    })
}

/// A name in single quotes, always, as GNU's `quoteaf` writes it in
/// messages: `'it'\''s'` for a name holding a quote.
pub fn quote_always(name: &str) -> String {
    format!("'{}'", name.replace('\'', "'\\''"))
}

/// A name quoted for a shell as GNU's `shell-escape-always` style writes
/// it: inside single quotes, a quote as `'\''`, and control characters
/// as `$'…'` escapes between quoted runs (`'n'$'\n''l'` for "n", newline,
/// "l"), so one name stays on one line.
pub fn shell_quote(name: &str) -> String {
    let mut out = String::from("'");
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            out.push_str("'\\''");
        } else if c.is_control() {
            out.push_str("'$'");
            let mut c = c;
            loop {
                match c {
                    '\x07' => out.push_str("\\a"),
                    '\x08' => out.push_str("\\b"),
                    '\x0c' => out.push_str("\\f"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    '\x0b' => out.push_str("\\v"),
                    _ => out.push_str(&format!("\\{:03o}", c as u32 & 0xff)),
                }
                match chars.peek() {
                    Some(&n) if n.is_control() => {
                        c = n;
                        chars.next();
                    }
                    _ => break,
                }
            }
            out.push_str("''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// The standard `--help` / `--version` answers; None for any other
/// argument.
pub fn common_arg(t: &Tool, arg: &lexopt::Arg<'_>, help: &str) -> Option<i32> {
    match arg {
        lexopt::Arg::Long("help") => Some(answer(t, format_args!("{help}"), true)),
        lexopt::Arg::Long("version") => Some(version(t)),
        _ => None,
    }
}

/// The first error met writing a line with [`say`].
static SAID_WRONG: std::sync::Mutex<Option<io::Error>> = std::sync::Mutex::new(None);

/// Writes one line of a tool's report (cp's `-v` lines) to standard output,
/// straight to the descriptor: a failure (`cp -v … > /dev/full`, or a closed
/// standard output, whose EBADF std's `Stdout` would hide) is kept for
/// [`said_wrong`], for the tool to report at its end as GNU's
/// `close_stdout` does. (cp dropped them, and ended with status 0.)
pub fn say(line: &[u8]) {
    if let Err(e) = write_fd(io::stdout().as_fd(), line) {
        let mut first = SAID_WRONG.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert(e);
    }
}

/// All of `data` to `fd` (EINTR retried, short writes resumed).
fn write_fd(fd: BorrowedFd<'_>, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match rustix::io::write(fd, data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// The status a tool ends with after its [`say`] lines: `status`, or 1
/// with GNU's `write error: …` when one could not be written (a reader
/// that went away: SIGPIPE, as [`write_failed`]).
pub fn said_wrong(t: &Tool, status: i32) -> i32 {
    let first = SAID_WRONG.lock().unwrap_or_else(|p| p.into_inner()).take();
    match first {
        Some(e) => write_failed(t, &e).max(status),
        None => status,
    }
}

/// Writes the `--version` answer: [`answer`]'s status.
pub fn version(t: &Tool) -> i32 {
    answer(
        t,
        format_args!("{} {}\n", t.name, env!("CARGO_PKG_VERSION")),
        false,
    )
}

/// Writes a `--help` (`help`) or `--version` answer to standard output:
/// status 0, or, when standard output will not take it, GNU's message and
/// status for that tool (`ferry cat --help > /dev/full` panicked in
/// `print!`, and as the panic cannot leave `main`, the process aborted). A
/// reader that went away ends the process by SIGPIPE, as
/// [`write_failed`].
pub fn answer(t: &Tool, text: fmt::Arguments<'_>, help: bool) -> i32 {
    use std::io::Write;
    let mut out = io::stdout().lock();
    let Err(e) = out.write_fmt(text).and_then(|()| out.flush()) else {
        return 0;
    };
    drop(out);
    if is_broken_pipe(&e) {
        die_of_sigpipe();
    }
    let (msg, status) = match t.id.as_str() {
        "diff" if help => ("write failed".to_string(), 2),
        "cmp" | "diff" => (format!("standard output: {}", describe(&e)), 2),
        "wc" => ("write error".to_string(), 1),
        "sort" if help => ("write error".to_string(), 2),
        "sort" => (format!("write error: {}", describe(&e)), 2),
        "grep" => (format!("write error: {}", describe(&e)), 2),
        _ => (format!("write error: {}", describe(&e)), 1),
    };
    t.error(format_args!("{msg}"));
    status
}

/// Reports an error writing standard output: a reader that went away ends
/// the process by SIGPIPE (silently, as GNU tools end); anything else is
/// `write error: …` and status 1.
pub fn write_failed(t: &Tool, e: &io::Error) -> i32 {
    if is_broken_pipe(e) {
        die_of_sigpipe();
    }
    t.error(format_args!("write error: {}", describe(e)));
    1
}

/// Drops the stream's own naming from an error, keeping the OS error:
/// tools print the operand themselves.
pub fn os_only(e: io::Error) -> io::Error {
    match ferry::stream::os_error(&e) {
        Some(n) => io::Error::from_raw_os_error(n),
        None => e,
    }
}

/// An OS error's text as C's `strerror` gives it (no "(os error N)").
pub fn describe(e: &io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if e.raw_os_error().is_some() => s[..i].to_string(),
        _ => s,
    }
}

/// `opts` with the stream backend `FERRY_BACKEND` names (`auto`, `mmap`,
/// `buffered`, `sequential`): the bench runs the tools on each. The
/// variable is the command's, not the library's; a value it does not know
/// is ignored with one warning, never fatal.
pub fn stream_options(opts: ferry::OpenOptions) -> ferry::OpenOptions {
    use ferry::stream::Backend;
    static BACKEND: std::sync::OnceLock<Backend> = std::sync::OnceLock::new();
    let b = *BACKEND.get_or_init(|| match std::env::var("FERRY_BACKEND") {
        Ok(v) => Backend::from_name(&v).unwrap_or_else(|| {
            eprintln!(
                "ferry: FERRY_BACKEND={v} ignored (expected auto, mmap, buffered or sequential)"
            );
            Backend::Auto
        }),
        Err(_) => Backend::Auto,
    });
    opts.backend(b)
}

/// How a tool opens an input file by name: read-only, on
/// [`stream_options`]'s backend, and mapped without a read lease. A lease
/// would hold other programs hostage while the tool reads: `truncate` of
/// the file fails with EAGAIN, and once the tool is stopped (Ctrl-Z) an
/// `echo x >> FILE` waits the kernel's 45 s lease-break time. GNU's tools
/// take none; a file rewritten under them reads as whatever bytes were
/// there, and so it does here.
pub fn input_options() -> ferry::OpenOptions {
    let o = stream_options(ferry::OpenOptions::read_only());
    // SAFETY: the tools read their input's bytes as plain data — counted,
    // compared, searched, copied out — and keep no `ContentId` of them; a
    // program that writes the file meanwhile gets what it gets from GNU's
    // tools too (torn or mixed contents, never an error of ours), and a
    // file that shrinks is the stream's `UnexpectedEof` (SIGBUS guard).
    unsafe { o.without_lease() }
}

/// True for a write error that means the reader went away.
pub fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// A standard input the caller left closed (`ferry cmp f - <&-`) is taken
/// by /dev/null opened write-only, as gnulib's `stdopen` does for GNU's
/// diff and cmp: reading it still fails with EBADF, as a closed descriptor
/// does, but the first file a tool opens can no longer get number 0 and
/// be read as standard input too (`cmp f -` compared f with itself and
/// said they were identical; `diff f -` compared f with what was left of
/// it). Standard output and error are left as they are: every tool
/// reports a closed one as GNU's does (`cat f >&-`: "standard output: Bad
/// file descriptor", from its fstat), which an occupied one would change.
/// std's start-up does the like for all three, but the binary starts
/// without it (main.rs).
#[cfg_attr(test, allow(dead_code))]
pub fn occupy_closed_stdin() {
    // SAFETY: F_GETFD only asks whether the number is open.
    if unsafe { libc::fcntl(0, libc::F_GETFD) } != -1
        || io::Error::last_os_error().raw_os_error() != Some(libc::EBADF)
    {
        return;
    }
    // SAFETY: open(2) of a constant path; 0 being free, it is the number
    // open returns.
    let got = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY) };
    if got > 0 {
        // Not 0 (a thread closed it meanwhile, though none exists yet):
        // give it back.
        // SAFETY: our own descriptor, just opened.
        unsafe { libc::close(got) };
    }
}

/// Ignores SIGPIPE, as std's runtime start-up does (the binary starts
/// without it): a write to a pipe nobody reads fails with `EPIPE`, and the
/// tool then ends as GNU's do ([`die_of_sigpipe`]).
#[cfg_attr(test, allow(dead_code))]
pub fn ignore_sigpipe() {
    // SAFETY: changing SIGPIPE's disposition to "ignore" at start-up,
    // before any thread exists; no handler function is involved.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}

/// Ends the process the way GNU tools end when their reader goes away:
/// killed by SIGPIPE (so shells see the same status), silently.
pub fn die_of_sigpipe() -> ! {
    // SAFETY: restoring the default action and raising the signal is what
    // a C program without a SIGPIPE handler would get.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(141)
}

/// An input: a file by name, or standard input for `-`.
pub enum Input {
    Stdin(io::Stdin),
    File(File),
}

impl Input {
    pub fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Input::Stdin(s) => s.as_fd(),
            Input::File(f) => f.as_fd(),
        }
    }
}

/// The operands as strings (GNU tools take any bytes; ours need UTF-8 for
/// messages, so non-UTF-8 names are shown lossily but opened exactly).
pub fn os_to_string(s: &OsString) -> String {
    s.to_string_lossy().into_owned()
}

/// What kind of file a descriptor is.
pub fn file_type(fd: BorrowedFd<'_>) -> io::Result<rustix::fs::Stat> {
    Ok(rustix::fs::fstat(fd)?)
}

pub fn is_reg(st: &rustix::fs::Stat) -> bool {
    rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
}
