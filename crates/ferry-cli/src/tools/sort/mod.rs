//! `ferry sort`: GNU sort on the library's external sort
//! ([`ferry::sort`]). The engine reads the inputs a piece at a time
//! (lines are slices of the stream buffers, nothing copied per line),
//! sorts pieces on `--parallel` threads, writes runs to disk through
//! aio when the input is larger than the buffer (`-S`, by default a
//! quarter of memory) and merges them. What is GNU's lives here: the
//! options, the comparison (keys, numeric orders, the locale's
//! collation, the last resort, `-r`, `-s`, `-u`: [`compare::Cmp`], which
//! the engine calls by reference), the messages and the exit statuses.
//!
//! Options: `-b -d -f -g -h -i -M -n -r` (global and per key), `-k`,
//! `-t`, `-u`, `-s`, `-c`/`-C`/`--check=…`, `-m`, `-o`, `-z`, `-S`,
//! `-T`, `--parallel`, `--sort=…`, and `--record-size`/`--key-bytes`/
//! `--key-offset` for fixed-size binary records sorted by a byte range.

mod compare;
mod key;
mod options;
mod progress;

use super::common::{self, Tool};
use compare::Cmp;
use ferry::sort::{Checked, Input, Place, Sorted, Sorter};
use options::{parse, Check, Opts};
use std::ffi::OsString;
use std::io;

pub fn main(t: &Tool, args: Vec<OsString>) -> i32 {
    let charset = super::locale::init();
    let _ = charset;
    let mut o = match parse(t, args) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let user_keys = !o.keys.is_empty();
    // Keys without options of their own take the global ones; with no
    // key and some global option, the whole line is a key with them.
    for k in &mut o.keys {
        if k.has_no_options() {
            k.inherit(&o.global);
        }
    }
    if o.keys.is_empty() && !o.global.has_no_options() {
        let mut k = o.global.clone();
        k.sword = None;
        k.eword = None;
        o.keys.push(k);
    }
    for k in o.keys.iter().chain(std::iter::once(&o.global)) {
        if let Some(opts) = k.incompatible() {
            t.error(format_args!("options '-{opts}' are incompatible"));
            return 2;
        }
    }
    if let Some(n) = o.record {
        let k = o.key_bytes.unwrap_or(n - o.key_offset.min(n));
        if o.key_offset.checked_add(k).is_none_or(|end| end > n) {
            t.error(format_args!(
                "a key of {k} bytes at offset {} passes the end of a {n}-byte record",
                o.key_offset
            ));
            return 2;
        }
        if user_keys || o.tab.is_some() || o.check.is_some() || o.merge {
            t.error(format_args!(
                "--record-size sorts by --key-bytes/--key-offset: not with -k, -t, -c or -m"
            ));
            return 2;
        }
        o.key_bytes = Some(k);
        o.keys.clear();
    } else if o.key_bytes.is_some() || o.key_offset != 0 {
        t.error(format_args!(
            "--key-bytes and --key-offset need --record-size"
        ));
        return 2;
    }
    let (decimal_point, thousands_sep) = super::locale::numeric_separators();
    let cmp = Cmp {
        record_key: o.record.map(|_| (o.key_offset, o.key_bytes.unwrap_or(0))),
        keys: o.keys.clone(),
        tab: o.tab,
        last_resort: !(o.stable || o.unique),
        reverse: o.global.reverse,
        locale: !super::locale::collate_is_c(),
        decimal_point,
        thousands_sep,
    };
    if o.files.is_empty() {
        o.files.push("-".into());
    }
    if let Some(mode) = o.check {
        if o.files.len() > 1 {
            t.error(format_args!(
                "extra operand {} not allowed with -{}",
                common::quote_always(&common::os_to_string(&o.files[1])),
                if mode == Check::Quiet { 'C' } else { 'c' }
            ));
            return 2;
        }
        if o.output.is_some() {
            let c = if mode == Check::Quiet { 'C' } else { 'c' };
            t.error(format_args!("options '-{c}o' are incompatible"));
            return 2;
        }
        return check(t, &o, &cmp, mode);
    }
    if !o.merge && o.files[0] == "-" && common::stdin_was_closed() {
        return closed_stdin_first(t, &o);
    }
    let mut sorter = Sorter::new(o.framing(), &cmp)
        .memory(o.buffer)
        .threads(o.parallel)
        .unique(o.unique);
    if let Some(d) = &o.temp {
        sorter = sorter.temp_dir(d);
    }
    let result = if o.merge {
        // The library reads every input first: -o may name one.
        match sorter.merge(inputs(&o)) {
            Ok(sorted) => write_sorted(&o, sorted, &progress::Progress::none()),
            Err(e) => return fail_message(t, &o, e),
        }
    } else {
        let bar = progress::Progress::new(&o.files);
        let sorted = sorter.on_progress(|n| bar.sorted(n)).sort(inputs(&o));
        let r = match sorted {
            Ok(sorted) => {
                bar.writing(if sorted.is_external() {
                    "merging"
                } else {
                    "writing"
                });
                write_sorted(&o, sorted, &bar)
            }
            Err(e) => {
                bar.finish();
                return fail_message(t, &o, e);
            }
        };
        bar.finish();
        r
    };
    match result {
        Ok(_) => 0,
        Err((Some(n), e, _)) => {
            t.error(format_args!("open failed: {n}: {}", common::describe(&e)));
            2
        }
        Err((None, e, total)) => {
            common::end_if_sigpipe(&e);
            // GNU's words: its stdio buffer (a 4 KiB block) fills and is
            // written while sorting's output goes on, or is flushed at
            // the end; then close_stdout's "write error".
            let name = match &o.output {
                Some(p) => shell_name(&common::os_to_string(p)),
                None => "'standard output'".to_string(),
            };
            let when = if total <= 4096 { "fflush" } else { "write" };
            t.error(format_args!(
                "{when} failed: {name}: {}",
                common::describe(&e)
            ));
            t.error(format_args!("write error"));
            2
        }
    }
}

/// A sort whose first input is a standard input left closed, as GNU's
/// goes: it checks that the other inputs can be read ("cannot read") and
/// that the output opens ("open failed", creating it), then sizes its
/// buffer from an fstat of the first input, which fails: "stat failed: -:
/// Bad file descriptor", status 2. (ferry holds the closed descriptor
/// with /dev/null opened write-only, `common::occupy_closed_stdin`, so
/// reading it said "read failed".)
fn closed_stdin_first(t: &Tool, o: &Opts) -> i32 {
    for f in o.files.iter().filter(|f| *f != "-") {
        if let Err(e) = rustix::fs::access(f.as_os_str(), rustix::fs::Access::READ_OK) {
            let e = io::Error::from(e);
            t.error(format_args!(
                "cannot read: {}: {}",
                common::quotef(f),
                common::describe(&e)
            ));
            return 2;
        }
    }
    if let Some(p) = &o.output {
        use std::os::unix::fs::OpenOptionsExt;
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o666)
            .open(p);
        if let Err(e) = opened {
            t.error(format_args!(
                "open failed: {}: {}",
                common::quotef(p),
                common::describe(&e)
            ));
            return 2;
        }
    }
    let e = io::Error::from_raw_os_error(libc::EBADF);
    t.error(format_args!("stat failed: -: {}", common::describe(&e)));
    2
}

fn cannot_read(t: &Tool, name: &str, e: &io::Error) -> i32 {
    if e.kind() == io::ErrorKind::OutOfMemory {
        t.error(format_args!("memory exhausted"));
        return 2;
    }
    t.error(format_args!(
        "{}: {name}: {}",
        read_failure(name, e),
        common::describe(e)
    ));
    2
}

/// GNU sort's words for an input it could not read, by the step that
/// failed: its access check ("cannot read": absent, no permission), the
/// open ("open failed": a socket), or the reading ("read failed": a
/// directory).
fn read_failure(name: &str, e: &io::Error) -> &'static str {
    if name == "-" {
        return "read failed";
    }
    let readable = std::ffi::CString::new(name)
        .is_ok_and(|c| rustix::fs::access(c.as_c_str(), rustix::fs::Access::READ_OK).is_ok());
    if !readable {
        "cannot read"
    } else {
        read_failure_after_access(name, e)
    }
}

fn read_failure_after_access(name: &str, e: &io::Error) -> &'static str {
    if e.raw_os_error() != Some(libc::EISDIR) && std::fs::File::open(name).is_err() {
        "open failed"
    } else {
        "read failed"
    }
}

/// What writing the output gave: bytes written, or the error (with the
/// output's name for an open failure) and the bytes written before it.
type OutResult = Result<u64, (Option<String>, io::Error, u64)>;

/// Prints the message for an error of the sort engine; the exit status.
fn fail_message(t: &Tool, o: &Opts, e: io::Error) -> i32 {
    let (place, e) = match ferry::sort::Error::into_parts(e) {
        Ok(parts) => parts,
        Err(e) => {
            t.error(format_args!("{}", common::describe(&e)));
            return 2;
        }
    };
    match place {
        Place::Input { index, .. } => cannot_read(t, &common::quotef(&o.files[index]), &e),
        Place::PartialRecord {
            index, len, size, ..
        } => {
            t.error(format_args!(
                "{}: {len} bytes are not a whole number of {size}-byte records",
                common::quotef(&o.files[index])
            ));
            2
        }
        Place::Temp(n) => {
            t.error(format_args!("write failed: {n}: {}", common::describe(&e)));
            2
        }
        Place::TempDir(d) => {
            t.error(format_args!(
                "cannot create temporary file in {}: {}",
                common::quote_always(&d.display().to_string()),
                common::describe(&e)
            ));
            2
        }
        _ => {
            t.error(format_args!("{}", common::describe(&e)));
            2
        }
    }
}

/// The inputs as the engine takes them, named as GNU names them.
fn inputs(o: &Opts) -> Vec<Input<'static>> {
    o.files.iter().map(|f| input(f, o)).collect()
}

fn input(f: &OsString, o: &Opts) -> Input<'static> {
    let i = if f == "-" {
        Input::stdin()
    } else {
        Input::path_with(f, input_options_for(f, o.output.as_ref()))
    };
    i.named(common::quotef(f))
}

/// Opens the output (only now: an input may be the output) and writes
/// the sorted units to it.
fn write_sorted(o: &Opts, sorted: Sorted<'_, &Cmp>, bar: &progress::Progress) -> OutResult {
    write_bytes(o, |emit| {
        sorted
            .emit(counted(emit, bar))
            .map_err(|e| match ferry::sort::Error::into_parts(e) {
                Ok((Place::Temp(n), e)) => (Some(n), e, 0),
                Ok((_, e)) | Err(e) => (None, e, 0),
            })
    })
}

/// A file name as GNU's `quotef` shows it: bare when it needs no quotes.
fn shell_name(n: &str) -> String {
    if !n.is_empty()
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%^".contains(&b))
    {
        n.to_string()
    } else {
        common::shell_quote(n)
    }
}

/// How sort opens input `f`: without a lease (`common::input_options`),
/// except an input that is also the output (`-o`): sort opens the output
/// (truncating it) while pieces of that input may still be mapped by
/// reference, and the lease is what keeps them: its break makes ferry
/// copy the mapped windows before the truncation goes through.
fn input_options_for(f: &OsString, output: Option<&OsString>) -> ferry::OpenOptions {
    let same = |o: &OsString| {
        let (Ok(a), Ok(b)) = (
            rustix::fs::stat(f.as_os_str()),
            rustix::fs::stat(o.as_os_str()),
        ) else {
            return false;
        };
        (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
    };
    if output.is_some_and(same) {
        common::stream_options(ferry::OpenOptions::read_only())
    } else {
        common::input_options()
    }
}

/// `emit`, counting what it writes on the progress bar.
fn counted<'a>(
    emit: &'a mut dyn FnMut(&[u8]) -> io::Result<()>,
    bar: &'a progress::Progress,
) -> impl FnMut(&[u8]) -> io::Result<()> + 'a {
    move |b: &[u8]| {
        emit(b)?;
        bar.written(b.len() as u64);
        Ok(())
    }
}

/// Opens the output (only now: an input may be the output) and writes
/// the bytes `feed` gives, as they are.
fn write_bytes(
    o: &Opts,
    feed: impl FnOnce(
        &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<(), (Option<String>, io::Error, u64)>,
) -> OutResult {
    let file;
    let mut out = match &o.output {
        Some(p) => {
            file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(p)
                .map_err(|e| (Some(common::os_to_string(p)), e, 0))?;
            ferry::transfer::OrderedOut::new(std::os::fd::AsFd::as_fd(&file))
        }
        None => super::output::stdout(),
    };
    let mut total = 0u64;
    let r = feed(&mut |l: &[u8]| {
        total += l.len() as u64;
        out.write(l)
    });
    r.map_err(|(n, e, _)| (n, e, total))?;
    out.flush().map_err(|e| (None, e, total))?;
    Ok(total)
}

/// `-c`/`-C`: 0 if the input is in order (strictly, with `-u`), 1 with
/// GNU's report of the first line out of order.
fn check(t: &Tool, o: &Opts, cmp: &Cmp, mode: Check) -> i32 {
    let f = &o.files[0];
    let checked = Sorter::new(o.framing(), cmp)
        .memory(o.buffer)
        .unique(o.unique)
        .check(input(f, o));
    let e = match checked {
        Ok(Checked::Sorted) => return 0,
        Ok(Checked::Disorder { index, unit }) => {
            if mode == Check::Diagnose {
                let mut msg = format!(
                    "{}: {}:{}: disorder: ",
                    t.name,
                    common::os_to_string(f),
                    index + 1
                )
                .into_bytes();
                msg.extend_from_slice(&unit);
                msg.push(b'\n');
                let _ = std::io::Write::write_all(&mut std::io::stderr(), &msg);
            }
            return 1;
        }
        Err(e) => match ferry::sort::Error::into_parts(e) {
            Ok((_, e)) | Err(e) => e,
        },
    };
    // (-c checks no access first: an absent file is "open failed".)
    if e.kind() == io::ErrorKind::OutOfMemory {
        return cannot_read(t, &common::os_to_string(f), &e);
    }
    let name = common::os_to_string(f);
    let what = match read_failure(&name, &e) {
        "cannot read" => read_failure_after_access(&name, &e),
        w => w,
    };
    t.error(format_args!(
        "{what}: {}: {}",
        common::quotef(f),
        common::describe(&e)
    ));
    2
}
