//! The whole run: the matchers, every file of every operand, the exit
//! status.

use super::args::Args;
use super::walk::Found;
use super::*;

pub(super) fn run(t: &Tool, a: Args) -> i32 {
    let Args {
        o,
        patterns,
        origins,
        flavor,
        ignore_case,
        whole,
        mut ops,
        walk,
    } = a;
    // GNU's shortcuts: nothing can be selected, so no file is read (not
    // even to count it, nor to notice it is missing).
    let selects_nothing = o.max_count == Some(0)
        || (o.invert
            && whole == Whole::Any
            && !patterns.is_empty()
            && patterns.iter().all(|p| p.is_empty()));
    if selects_nothing {
        return 1;
    }
    let implicit = ops.is_empty() && walk.recursive();
    if ops.is_empty() {
        ops.push(if implicit { "." } else { "-" }.into());
    }
    let many = ops.len() > 1;
    // An empty list (from an empty -f file) matches nothing.
    let mut m = if patterns.is_empty() {
        None
    } else {
        match Matcher::new(&patterns, flavor, ignore_case, whole) {
            Ok(m) => {
                for w in &m.warnings {
                    t.error(format_args!("warning: {w}"));
                }
                Some(m)
            }
            Err((at, e)) => {
                match at.and_then(|k| origins.get(k)).and_then(Option::as_ref) {
                    Some((file, line)) => t.error(format_args!("{file}:{line}: {e}")),
                    None => t.error(format_args!("{e}")),
                }
                return 2;
            }
        }
    };
    // A second matcher for the second core (counting large files).
    let mut m2 = if o.report == Report::Count && o.max_count.is_none() && !o.nul_data {
        m.as_ref()
            .and_then(|_| Matcher::new(&patterns, flavor, ignore_case, whole).ok())
    } else {
        None
    };
    // GNU's output-is-input check, where lines are written: not for -q,
    // -l, -L, -c or -m 1.
    let own_output = (o.report == Report::Lines && o.max_count.is_none_or(|n| n > 1))
        .then(common::stdout_stat)
        .flatten();
    let mut out = crate::tools::output::stdout();
    let mut any = false;
    let mut trouble = false;
    // Something was printed (a group separator goes before the next group).
    let mut printed = false;
    let quiet_errors = o.no_messages;
    let read_trouble = std::cell::Cell::new(false);
    let mut one = |f: Found<'_>| -> walk::Next {
        let name = if f.path == "-" && !f.walked {
            o.label.as_bytes()
        } else {
            f.name
        };
        let with_name = o.with_name.unwrap_or(many || f.walked);
        let mut s = Search::new(&o, m.as_mut(), m2.as_mut(), &mut out, name, with_name);
        s.printed = printed;
        let mut opened = true;
        let in_st = if f.path == "-" {
            rustix::fs::fstat(std::io::stdin())
        } else {
            rustix::fs::stat(f.path)
        };
        let r = match in_st {
            Ok(st)
                if common::reads_own_output(&st, own_output.as_ref(), common::SelfFeed::Grep) =>
            {
                Err(Failure::Open(io::Error::other(
                    "input file is also the output",
                )))
            }
            _ => s.file(f.path),
        };
        match r {
            Ok(()) => {}
            Err(Failure::Open(e)) => {
                opened = false;
                if !o.no_messages {
                    if let Err(e) = s.out.flush() {
                        return Err(write_failed(t, &e));
                    }
                    t.file_error_bytes(name, &e);
                }
                read_trouble.set(true);
            }
            // Memory gone (a line longer than it): GNU's fatal message.
            Err(Failure::Read(e)) if e.kind() == io::ErrorKind::OutOfMemory => {
                if let Err(e) = s.out.flush() {
                    return Err(write_failed(t, &e));
                }
                t.error(format_args!("memory exhausted"));
                return Err(2);
            }
            Err(Failure::Read(e)) => {
                if !o.no_messages {
                    // Lines already found go out before the message.
                    if let Err(e) = s.out.flush() {
                        return Err(write_failed(t, &e));
                    }
                    t.file_error_bytes(name, &e);
                }
                read_trouble.set(true);
            }
            Err(Failure::Write(e)) => return Err(write_failed(t, &e)),
        }
        let selected = s.selected;
        let binary_msg = s.binary_message();
        printed = s.printed;
        if !opened {
            return Ok(true);
        }
        if let Err(e) = s.finish() {
            return Err(write_failed(t, &e));
        }
        if binary_msg {
            if let Err(e) = out.flush() {
                return Err(write_failed(t, &e));
            }
            t.name_error(name, format_args!("binary file matches"));
        }
        if selected > 0 {
            any = true;
            if o.report == Report::Quiet {
                return Ok(false);
            }
        }
        Ok(true)
    };
    for op in &ops {
        let mut tr = false;
        let r = walk.operand(t, op, implicit, quiet_errors, &mut tr, &mut one);
        trouble |= tr | read_trouble.get();
        match r {
            Ok(true) => {}
            Ok(false) => return 0,
            Err(code) => return code,
        }
    }
    trouble |= read_trouble.get();
    if let Err(e) = out.flush() {
        return write_failed(t, &e);
    }
    if m.iter().chain(m2.iter()).any(Matcher::gave_up) {
        // Better a failure than a quiet wrong answer.
        t.error(format_args!(
            "back-reference search ran past its step limit: lines may have been missed"
        ));
        return 2;
    }
    if trouble {
        2
    } else if any {
        0
    } else {
        1
    }
}
