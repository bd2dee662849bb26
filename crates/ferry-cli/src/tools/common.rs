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

    /// `ferry NAME: FILE: message` on standard error, the file name
    /// written as its bytes, unquoted, as grep and diffutils write names
    /// (a name is bytes: shown through UTF-8 it became U+FFFD).
    pub fn name_error(&self, file: &[u8], msg: fmt::Arguments<'_>) {
        let mut line = Vec::with_capacity(self.name.len() + file.len() + 64);
        line.extend_from_slice(self.name.as_bytes());
        line.extend_from_slice(b": ");
        line.extend_from_slice(file);
        line.extend_from_slice(b": ");
        line.extend_from_slice(msg.to_string().as_bytes());
        line.push(b'\n');
        let _ = io::Write::write_all(&mut io::stderr().lock(), &line);
    }

    /// `ferry NAME: message` on standard error, the message as bytes (a
    /// file name in it written as it is).
    pub fn error_bytes(&self, msg: &[u8]) {
        let mut line = Vec::with_capacity(self.name.len() + msg.len() + 3);
        line.extend_from_slice(self.name.as_bytes());
        line.extend_from_slice(b": ");
        line.extend_from_slice(msg);
        line.push(b'\n');
        let _ = io::Write::write_all(&mut io::stderr().lock(), &line);
    }

    /// [`Tool::file_error`] for a name written as its bytes
    /// ([`Tool::name_error`]).
    pub fn file_error_bytes(&self, file: &[u8], e: &io::Error) {
        self.name_error(file, format_args!("{}", describe(e)));
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
/// A value quoted in a message as gnulib's `quote` does: ‘x’ in a UTF-8
/// locale, 'x' in others.
pub fn quote(s: &str) -> String {
    if utf8_locale() {
        format!("\u{2018}{s}\u{2019}")
    } else {
        format!("'{s}'")
    }
}

pub fn quote_always(name: &str) -> String {
    format!("'{}'", name.replace('\'', "'\\''"))
}

/// A name quoted for a shell as GNU's `shell-escape-always` style writes
/// it ([`shell_quote_bytes`]).
pub fn shell_quote(name: &str) -> String {
    shell_quote_os(std::ffi::OsStr::new(name))
}

/// [`shell_quote_bytes`] of a name that may not be UTF-8, as a string:
/// the bytes that are not characters come out as escapes, so nothing is
/// lost (the name was shown through UTF-8, each such byte as U+FFFD).
pub fn shell_quote_os(name: &std::ffi::OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    let q = shell_quote_bytes(name.as_bytes());
    String::from_utf8(q).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A file name as GNU's `quotef` shows it in coreutils' messages: bare
/// when it needs no quotes, else as [`shell_quote_bytes`] quotes it.
pub fn quotef(name: &std::ffi::OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    let b = name.as_bytes();
    if !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"/._-+,:@%^".contains(c))
    {
        String::from_utf8_lossy(b).into_owned()
    } else {
        shell_quote_os(name)
    }
}

/// Whether the environment's locale is UTF-8 (LC_ALL, LC_CTYPE, LANG):
/// its printable characters are shown as they are in quoted names.
fn utf8_locale() -> bool {
    static UTF8: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *UTF8.get_or_init(|| {
        let v = ["LC_ALL", "LC_CTYPE", "LANG"]
            .iter()
            .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
            .unwrap_or_default()
            .to_ascii_lowercase();
        v.contains("utf-8") || v.contains("utf8")
    })
}

/// A name quoted for a shell as GNU's `shell-escape-always` style writes
/// it: inside single quotes, a quote as `'\''`, and what is not a
/// printable character — control characters, bytes that are not a
/// character, and in a locale other than UTF-8 every byte above 127 — as
/// `$'…'` escapes between quoted runs (`'n'$'\n''l'` for "n", newline,
/// "l"; `'bad'$'\377'` for "bad" and byte 255), so one name stays on one
/// line and the bytes can be told apart; a name whose only special
/// character is a quote goes in double quotes (`"it's"`), as GNU puts it.
pub fn shell_quote_bytes(name: &[u8]) -> Vec<u8> {
    let utf8 = utf8_locale();
    // GNU's choice for a name with a single quote and otherwise only
    // characters that mean the same in C's and the shell's double quotes:
    // double quotes ("it's").
    if name.contains(&b'\'') {
        if let Ok(text) = std::str::from_utf8(name) {
            let compat = |c: char| {
                c.is_ascii_alphanumeric()
                    || " '%+,-./:@]_".contains(c)
                    || (utf8 && !c.is_ascii() && !c.is_control())
            };
            if text.chars().all(compat) {
                return [b"\"", name, b"\""].concat();
            }
        }
    }
    let mut out = vec![b'\''];
    let mut escaping = false;
    let escape = |out: &mut Vec<u8>, b: u8, escaping: &mut bool| {
        if !*escaping {
            out.extend_from_slice(b"'$'");
            *escaping = true;
        }
        match b {
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x0b => out.extend_from_slice(b"\\v"),
            _ => out.extend_from_slice(format!("\\{b:03o}").as_bytes()),
        }
    };
    let plain = |out: &mut Vec<u8>, bytes: &[u8], escaping: &mut bool| {
        if std::mem::take(escaping) {
            out.extend_from_slice(b"''");
        }
        if bytes == b"'" {
            out.extend_from_slice(b"'\\''");
        } else {
            out.extend_from_slice(bytes);
        }
    };
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            let mut buf = [0u8; 4];
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            if c.is_control() || (!c.is_ascii() && !utf8) {
                for &b in bytes {
                    escape(&mut out, b, &mut escaping);
                }
            } else {
                plain(&mut out, bytes, &mut escaping);
            }
        }
        for &b in chunk.invalid() {
            escape(&mut out, b, &mut escaping);
        }
    }
    out.push(b'\'');
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
    end_if_sigpipe(&e);
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
/// the process by SIGPIPE (silently, as GNU tools end) unless SIGPIPE was
/// ignored ([`end_if_sigpipe`]); anything else is `write error: …` and
/// status 1.
pub fn write_failed(t: &Tool, e: &io::Error) -> i32 {
    end_if_sigpipe(e);
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
    STDIN_WAS_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
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

/// Standard input was closed when the process started.
static STDIN_WAS_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether standard input was closed when the process started
/// ([`occupy_closed_stdin`]): a GNU tool that read it then fails to close
/// it at its end, and says so (cat's "closing standard input: Bad file
/// descriptor").
pub fn stdin_was_closed() -> bool {
    STDIN_WAS_CLOSED.load(std::sync::atomic::Ordering::Relaxed)
}

/// SIGPIPE was ignored when the process started (`(trap '' PIPE; ferry
/// cat f | head -1)`).
static SIGPIPE_WAS_IGNORED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Ignores SIGPIPE, as std's runtime start-up does (the binary starts
/// without it): a write to a pipe nobody reads fails with `EPIPE`, and the
/// tool then ends as GNU's do ([`end_if_sigpipe`]). The disposition it was
/// started with is kept in mind: GNU's tools, started with SIGPIPE
/// ignored, see `EPIPE` and say so.
#[cfg_attr(test, allow(dead_code))]
pub fn ignore_sigpipe() {
    // SAFETY: changing SIGPIPE's disposition to "ignore" at start-up,
    // before any thread exists; no handler function is involved.
    let old = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    SIGPIPE_WAS_IGNORED.store(old == libc::SIG_IGN, std::sync::atomic::Ordering::Relaxed);
}

/// Ends the process the way a GNU tool ends when `e` says its reader went
/// away: killed by SIGPIPE, silently — if it was started with SIGPIPE's
/// default action. Started with SIGPIPE ignored, a GNU tool gets `EPIPE`
/// and reports it as any other write error; so does the caller, when
/// this returns.
pub fn end_if_sigpipe(e: &io::Error) {
    if is_broken_pipe(e) && !SIGPIPE_WAS_IGNORED.load(std::sync::atomic::Ordering::Relaxed) {
        die_of_sigpipe();
    }
}

/// Ends the process by SIGPIPE (so shells see the same status), silently.
fn die_of_sigpipe() -> ! {
    // SAFETY: restoring the default action and raising the signal is what
    // a C program without a SIGPIPE handler would get.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(141)
}

/// The same file: the same device and inode.
pub fn same_inode(a: &rustix::fs::Stat, b: &rustix::fs::Stat) -> bool {
    a.st_dev == b.st_dev && a.st_ino == b.st_ino
}

/// Which GNU tool's rule refuses an input that is also the output.
#[derive(Clone, Copy)]
pub enum SelfFeed<'a> {
    /// GNU cat's, on the input's descriptor: refused only while the input
    /// has bytes left to read (its offset below its size), since only then
    /// would the output grow as fast as it is read (`cat f >> f`; `cat f >
    /// f` is allowed).
    Cat(BorrowedFd<'a>),
    /// GNU grep's: refused whatever is left to read (`grep x f > f` too).
    Grep,
}

/// GNU's check that a tool is not reading its own output: the output a
/// regular file (so never /dev/null or a terminal) and the input the same
/// file, under `rule`. Without it, `grep . f >> f` fed itself until the
/// disk was full. `out` is standard output's stat (None when unknown).
pub fn reads_own_output(
    in_st: &rustix::fs::Stat,
    out: Option<&rustix::fs::Stat>,
    rule: SelfFeed<'_>,
) -> bool {
    let Some(out) = out else {
        return false;
    };
    if !is_reg(out) || !same_inode(in_st, out) {
        return false;
    }
    match rule {
        SelfFeed::Grep => true,
        SelfFeed::Cat(input) => {
            let pos = rustix::fs::seek(input, rustix::fs::SeekFrom::Current(0)).unwrap_or(0);
            pos < in_st.st_size as u64
        }
    }
}

/// The buffer glibc's stdio gives a standard output that is not a
/// terminal: BUFSIZ (8192) bytes, or the descriptor's `st_blksize` where
/// smaller (4096 for a pipe, /dev/full or most file systems). A GNU tool
/// meets a write error as soon as more than that was written, else at its
/// final flush, and words the two differently.
pub fn stdio_buffer_size() -> u64 {
    match stdout_stat() {
        Some(st) if st.st_blksize > 0 => (st.st_blksize as u64).min(8192),
        _ => 8192,
    }
}

/// Standard output's stat, None when it cannot be had.
pub fn stdout_stat() -> Option<rustix::fs::Stat> {
    rustix::fs::fstat(io::stdout().as_fd()).ok()
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
