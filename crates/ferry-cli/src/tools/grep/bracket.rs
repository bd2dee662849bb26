//! Bracket expressions and character classes of GNU's BRE and ERE, in the
//! `regex` crate's syntax.
//!
//! In a UTF-8 locale the POSIX classes (and `\w` `\s` built on them) are
//! the C library's: the ranges `iswctype` gives, so they follow glibc
//! (titlecase letters such as `ǅ` are both upper and lower case there).
//! In a single-byte locale they are the ASCII classes. No class matches
//! the newline: the regex runs over many lines at once, and a class that
//! took the line end would let a match run across it.

use super::pattern::{Error, Flavor, Lit};
use crate::tools::locale;
use std::fmt::Write;

/// A bracket expression whose `[` was just before `i`: POSIX rules (a
/// first `]` is literal, backslash is literal, `[:class:]`, `[=c=]`,
/// `[.c.]`, ranges). Returns the regex class and the index after `]`.
pub fn bracket(lits: &[Lit], mut i: usize, f: &Flavor) -> Result<(String, usize), Error> {
    let unmatched = || "Unmatched [, [^, [:, [., or [=".to_string();
    let mut s = String::from("[");
    let neg = lits.get(i) == Some(&Lit::Char('^'));
    if neg {
        i += 1;
        s.push('^');
        s.push_str("\\n");
    }
    let mut first = true;
    let content = i;
    loop {
        let Some(&c) = lits.get(i) else {
            return Err(unmatched());
        };
        if c == Lit::Char(']') && !first {
            colon_syntax(&lits[content..i])?;
            i += 1;
            break;
        }
        first = false;
        // [:class:], [=c=], [.c.]
        if c == Lit::Char('[') {
            if let Some(&Lit::Char(k @ (':' | '=' | '.'))) = lits.get(i + 1) {
                let start = i + 2;
                let mut j = start;
                while j + 1 < lits.len()
                    && !(lits[j] == Lit::Char(k) && lits[j + 1] == Lit::Char(']'))
                {
                    j += 1;
                }
                if j + 1 >= lits.len() {
                    return Err(unmatched());
                }
                let name: String = lits[start..j]
                    .iter()
                    .map(|l| match l {
                        Lit::Char(c) => *c,
                        Lit::Byte(_) => '\u{fffd}',
                    })
                    .collect();
                i = j + 2;
                if k == ':' {
                    let name = match name.as_str() {
                        "upper" | "lower" if f.icase => "alpha",
                        other => other,
                    };
                    s.push_str(&class(name, f.utf8).ok_or("Invalid character class name")?);
                    if f.nul_data && name == "space" {
                        s.push_str("\\x00");
                    }
                } else {
                    // Equivalence class or collating symbol: one character.
                    let inner = &lits[start..j];
                    if inner.len() != 1 {
                        return Err("Invalid collation character".into());
                    }
                    class_lit(&mut s, inner[0], f.utf8);
                }
                continue;
            }
        }
        // A range a-z (a `-` just before `]` is literal).
        if lits.get(i + 1) == Some(&Lit::Char('-'))
            && lits.get(i + 2).is_some_and(|&e| e != Lit::Char(']'))
        {
            let e = lits[i + 2];
            if f.utf8 && (lit_value(c) > 0x7f || lit_value(e) > 0x7f) && locale::collate_is_c() {
                // glibc's C.UTF-8 has no collation elements past ASCII
                // for a range to name.
                return Err("Invalid collation character".into());
            }
            // glibc checks the order of the ends (their upper cases with
            // -i: `[Z-a]` is then an error, `[a-Z]` not). In a single-byte
            // locale GNU then takes the characters between the ends as
            // written (none for `[a-Z]`), in UTF-8 between the upper cases.
            let (c, e) = if f.icase && f.utf8 {
                (upper(c), upper(e))
            } else {
                (c, e)
            };
            let (lo, hi) = if f.icase {
                (lit_value(upper(c)), lit_value(upper(e)))
            } else {
                (lit_value(c), lit_value(e))
            };
            if lo > hi {
                return Err("Invalid range end".into());
            }
            if lit_value(c) <= lit_value(e) {
                class_lit(&mut s, c, f.utf8);
                s.push('-');
                class_lit(&mut s, e, f.utf8);
            } else {
                // An empty set.
                s.push_str("[a&&b]");
            }
            i += 3;
            if lits.get(i) == Some(&Lit::Char('-'))
                && lits.get(i + 1).is_some_and(|&n| n != Lit::Char(']'))
            {
                // `[1-3-5]`: a range may not start at another's end.
                return Err("Invalid range end".into());
            }
            continue;
        }
        class_lit(&mut s, c, f.utf8);
        i += 1;
    }
    if !neg {
        // A range or class may take in the newline: leave it out.
        s.push_str("&&[^\\n]");
    }
    s.push(']');
    if !f.utf8 {
        s = format!("(?-u:{s})");
    }
    Ok((s, i))
}

/// GNU refuses `[:space:]` written without the outer brackets: a bracket
/// expression that starts and ends with `:` and has something else too.
fn colon_syntax(inside: &[Lit]) -> Result<(), Error> {
    let colon = Lit::Char(':');
    if inside.len() >= 3
        && inside.first() == Some(&colon)
        && inside.last() == Some(&colon)
        && inside.iter().any(|&c| c != colon)
    {
        return Err("character class syntax is [[:space:]], not [:space:]".into());
    }
    Ok(())
}

/// A character's upper case where that is one character (else itself).
fn upper(l: Lit) -> Lit {
    match l {
        Lit::Char(c) => {
            let mut u = c.to_uppercase();
            match (u.next(), u.next()) {
                (Some(x), None) => Lit::Char(x),
                _ => l,
            }
        }
        Lit::Byte(_) => l,
    }
}

fn lit_value(l: Lit) -> u32 {
    match l {
        Lit::Char(c) => c as u32,
        Lit::Byte(b) => b as u32,
    }
}

/// A character inside a class: always escaped, so nothing is special.
fn class_lit(s: &mut String, c: Lit, utf8: bool) {
    match c {
        Lit::Char(ch) if ch.is_ascii_alphanumeric() => s.push(ch),
        Lit::Char(ch) if utf8 || (ch as u32) < 0x80 => {
            let _ = write!(s, "\\x{{{:x}}}", ch as u32);
        }
        Lit::Char(ch) => {
            // Single-byte locale: the class is over bytes.
            let _ = write!(s, "\\x{:02x}", ch as u32 & 0xFF);
        }
        Lit::Byte(b) => {
            let _ = write!(s, "\\x{b:02x}");
        }
    }
}

/// A POSIX character class, as the inside of a regex class (to go between
/// `[` and `]`): the C library's code points in a UTF-8 locale, the ASCII
/// class otherwise. None for an unknown name.
pub fn class(name: &str, utf8: bool) -> Option<String> {
    let ranges = locale::class_ranges(name)?;
    if !utf8 {
        return Some(format!("[:{name}:]"));
    }
    let mut s = String::new();
    for &(lo, hi) in ranges {
        // The newline is never part of a match (see the module doc).
        for (lo, hi) in split_out(lo, hi, b'\n' as u32) {
            if lo == hi {
                let _ = write!(s, "\\x{{{lo:x}}}");
            } else {
                let _ = write!(s, "\\x{{{lo:x}}}-\\x{{{hi:x}}}");
            }
        }
    }
    Some(s)
}

/// The range `lo..=hi` without `x`: zero, one or two ranges.
fn split_out(lo: u32, hi: u32, x: u32) -> impl Iterator<Item = (u32, u32)> {
    let parts = if x < lo || x > hi {
        [Some((lo, hi)), None]
    } else {
        [(x > lo).then(|| (lo, x - 1)), (x < hi).then(|| (x + 1, hi))]
    };
    parts.into_iter().flatten()
}

/// GNU's `\w` `\W` `\s` `\S`: `[_[:alnum:]]`, `[[:space:]]` and their
/// complements, none of which matches the newline.
pub fn escape_class(e: char, utf8: bool, nul_data: bool) -> String {
    // Under -z a NUL in the searched data stands for a newline (a space).
    let nul = if nul_data { "\\x00" } else { "" };
    if !utf8 {
        return match e {
            'w' => "(?-u:[\\w])".to_string(),
            'W' => "(?-u:[^\\w\\n])".to_string(),
            's' => format!("(?-u:[\\s{nul}&&[^\\n]])"),
            _ => format!("(?-u:[^\\s{nul}])"),
        };
    }
    let (neg, inner) = match e {
        'w' => (
            false,
            format!("_{}", class("alnum", true).unwrap_or_default()),
        ),
        'W' => (
            true,
            format!("_{}", class("alnum", true).unwrap_or_default()),
        ),
        's' => (false, class("space", true).unwrap_or_default() + nul),
        _ => (true, class("space", true).unwrap_or_default() + nul),
    };
    if neg {
        format!("[^\\n{inner}]")
    } else {
        format!("[{inner}]")
    }
}
