//! GNU's (glibc's) reading of an interval `{m,n}` (`\{m,n\}` in BRE):
//! which braces are intervals, which are literal, which are errors.

use super::pattern::{Error, Lit};

/// GNU's (glibc's) largest repeat count.
const DUP_MAX: u32 = 32767;

/// How a number inside an interval ended.
#[derive(PartialEq, Eq)]
enum Stop {
    Comma,
    Close,
    End,
}

/// A number inside an interval, read as glibc reads it from `i`: up to a
/// `,` or the closing brace. None for no digits, Err(()) for anything
/// else in it; with where it stopped and the index after that.
#[allow(clippy::type_complexity)]
fn number(lits: &[Lit], mut i: usize, bre: bool) -> (Result<Option<u32>, ()>, Stop, usize) {
    let mut v: Result<Option<u32>, ()> = Ok(None);
    loop {
        let Some(&c) = lits.get(i) else {
            return (Err(()), Stop::End, i);
        };
        i += 1;
        let c = match c {
            Lit::Char(c) => c,
            Lit::Byte(_) => '\u{fffd}',
        };
        if c == ',' {
            return (v, Stop::Comma, i);
        }
        if bre && c == '\\' && lits.get(i) == Some(&Lit::Char('}')) {
            return (v, Stop::Close, i + 1);
        }
        if !bre && c == '}' {
            return (v, Stop::Close, i);
        }
        v = match (v, c.to_digit(10)) {
            (Ok(n), Some(d)) if c.is_ascii_digit() => {
                Ok(Some((n.unwrap_or(0) * 10 + d).min(DUP_MAX + 1)))
            }
            _ => Err(()),
        };
    }
}

/// An interval `{m}`, `{m,}`, `{,n}`, `{,}`, `{m,n}` starting after the
/// brace at `i` (in BRE it closes with `\}`), as glibc reads it: the regex
/// quantifier and the index after it; None where an ERE brace is a
/// literal (or a BRE one is unmatched); GNU's errors for `{}`, `{2,1}`
/// and counts over 32767.
pub fn interval(lits: &[Lit], i: usize, bre: bool) -> Result<Option<(String, usize)>, Error> {
    let bad = || Err("Invalid content of \\{\\}".to_string());
    let (lo, stop, j) = number(lits, i, bre);
    if stop == Stop::End {
        return Ok(None);
    }
    let lo = match lo {
        Ok(Some(n)) => n,
        Ok(None) if stop == Stop::Comma => 0,
        Ok(None) => return bad(),
        Err(()) if bre => return bad(),
        Err(()) => return Ok(None),
    };
    let (hi, next) = if stop == Stop::Close {
        (Some(lo), j)
    } else {
        let (hi, stop2, k) = number(lits, j, bre);
        let hi = match hi {
            _ if stop2 == Stop::End => return Ok(None),
            Ok(h) => h,
            Err(()) if bre => return bad(),
            Err(()) => return Ok(None),
        };
        if stop2 != Stop::Close {
            return bad();
        }
        (hi, k)
    };
    if hi.is_some_and(|h| lo > h) {
        return bad();
    }
    if hi.unwrap_or(lo) > DUP_MAX {
        return Err("Regular expression too big".into());
    }
    let q = match hi {
        Some(h) if h == lo => format!("{{{lo}}}"),
        None => format!("{{{lo},}}"),
        Some(h) => format!("{{{lo},{h}}}"),
    };
    Ok(Some((q, next)))
}
