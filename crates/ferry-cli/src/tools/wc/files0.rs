//! `wc --files0-from=F`: the inputs are the NUL-separated names read
//! from F (`-`: standard input), as GNU wc reads them.

use super::{number_width, Report, Want};
use crate::tools::common::{self, Tool};
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// GNU reads a list held in a regular file of at most this many bytes
/// first, and sizes the columns to the named files; a longer one, or one
/// from a pipe, is read as it goes, with columns of width 1.
const READ_FIRST_MAX: u64 = 10 << 20;

pub(super) fn run(
    t: &Tool,
    from: &OsString,
    want: &Want,
    report: impl FnOnce(usize) -> Report,
) -> i32 {
    let from_name = common::os_to_string(from);
    let stdin = from == "-";
    let source: Box<dyn Read> = if stdin {
        Box::new(io::stdin())
    } else {
        match std::fs::File::open(from) {
            Ok(f) => Box::new(f),
            Err(e) => {
                t.error(format_args!(
                    "cannot open {} for reading: {}",
                    common::quote_always(&from_name),
                    common::describe(&e)
                ));
                return 1;
            }
        }
    };
    let small_regular = {
        let st = if stdin {
            rustix::fs::fstat(io::stdin())
        } else {
            rustix::fs::stat(from.as_os_str())
        };
        st.is_ok_and(|s| common::is_reg(&s) && (s.st_size as u64) <= READ_FIRST_MAX)
    };
    let mut names = BufReader::new(source).split(0);
    let mut first: Vec<OsString> = Vec::new();
    if small_regular {
        for n in names.by_ref() {
            match n {
                Ok(n) => first.push(OsString::from_vec(n)),
                Err(e) => return read_error(t, &from_name, &e),
            }
        }
    }
    let width = if small_regular && !first.is_empty() {
        number_width(&first, want).0
    } else {
        1
    };
    let mut r = report(width);
    let mut seen = 0usize;
    let mut pending = first.into_iter();
    loop {
        let name = match pending.next() {
            Some(n) => n,
            None => match names.next() {
                Some(Ok(n)) => OsString::from_vec(n),
                Some(Err(e)) => {
                    if let Err(status) = r.flush_out(t) {
                        return status;
                    }
                    read_error(t, &from_name, &e);
                    r.status = 1;
                    break;
                }
                None => break,
            },
        };
        seen += 1;
        if (stdin && name == "-") || name.is_empty() {
            if let Err(status) = r.flush_out(t) {
                return status;
            }
        }
        if stdin && name == "-" {
            t.error(format_args!(
                "when reading file names from stdin, no file name of {} allowed",
                common::quote_always("-")
            ));
            r.status = 1;
            continue;
        }
        if name.is_empty() {
            t.error(format_args!(
                "{from_name}:{seen}: invalid zero-length file name"
            ));
            r.status = 1;
            continue;
        }
        if let Err(status) = r.file(t, &name, Some(name.as_bytes()), None) {
            return status;
        }
    }
    r.finish(t, seen > 1)
}

fn read_error(t: &Tool, from: &str, e: &io::Error) -> i32 {
    t.error(format_args!("{from}: read error: {}", common::describe(e)));
    1
}
