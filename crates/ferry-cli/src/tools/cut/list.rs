//! cut's LIST argument ("1,3-5,7-"), read as GNU reads it, with GNU's
//! messages for each fault.

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Bytes,
    Fields,
}

/// Selected positions: sorted, merged, 1-based inclusive ranges.
pub(super) struct Ranges(pub(super) Vec<(u64, u64)>);

impl Ranges {
    #[inline]
    pub(super) fn selects(&self, i: u64) -> bool {
        self.0.iter().any(|&(lo, hi)| lo <= i && i <= hi)
    }

    pub(super) fn complement(&self) -> Ranges {
        let mut out = Vec::new();
        let mut next = 1u64;
        for &(lo, hi) in &self.0 {
            if lo > next {
                out.push((next, lo - 1));
            }
            if hi == u64::MAX {
                return Ranges(out);
            }
            next = hi + 1;
        }
        out.push((next, u64::MAX));
        Ranges(out)
    }
}

/// Quotes a value in messages as gnulib does: 'x' in the C locale, ‘x’ in
/// UTF-8 ones.
fn quote(s: &str, utf8: bool) -> String {
    if utf8 {
        format!("\u{2018}{s}\u{2019}")
    } else {
        format!("'{s}'")
    }
}

/// Parses a LIST ("1,3-5,7-") as GNU does, with GNU's messages.
pub(super) fn parse_list(list: &str, kind: Kind, utf8: bool) -> Result<Ranges, String> {
    // GNU's reading of a list, character by character: numbers, `-` for a
    // range, `,` or a blank between items; the first fault ends it with
    // GNU's message for that fault.
    let fields = kind == Kind::Fields;
    let numbered = if fields {
        "fields are numbered from 1"
    } else {
        "byte/character positions are numbered from 1"
    };
    let mut v: Vec<(u64, u64)> = Vec::new();
    let b = list.as_bytes();
    let (mut value, mut initial) = (0u64, 1u64);
    let (mut lhs, mut rhs, mut dash) = (false, false, false);
    let mut digits_from: Option<usize> = None;
    let mut i = 0;
    loop {
        match b.get(i).copied() {
            Some(b'-') => {
                digits_from = None;
                if dash {
                    return Err(if fields {
                        "invalid field range"
                    } else {
                        "invalid byte or character range"
                    }
                    .into());
                }
                dash = true;
                if lhs && value == 0 {
                    return Err(numbered.into());
                }
                initial = if lhs { value } else { 1 };
                value = 0;
                i += 1;
            }
            c @ (None | Some(b',' | b' ' | b'\t')) => {
                digits_from = None;
                if dash {
                    dash = false;
                    if !lhs && !rhs {
                        return Err("invalid range with no endpoint: -".into());
                    }
                    if !rhs {
                        v.push((initial, u64::MAX));
                    } else if value < initial {
                        return Err("invalid decreasing range".into());
                    } else {
                        v.push((initial, value));
                    }
                } else if value == 0 {
                    return Err(numbered.into());
                } else {
                    v.push((value, value));
                }
                value = 0;
                if c.is_none() {
                    break;
                }
                i += 1;
                lhs = false;
                rhs = false;
            }
            Some(d) if d.is_ascii_digit() => {
                let from = *digits_from.get_or_insert(i);
                if dash {
                    rhs = true;
                } else {
                    lhs = true;
                }
                match value
                    .checked_mul(10)
                    .and_then(|x| x.checked_add(u64::from(d - b'0')))
                    .filter(|&x| x != u64::MAX)
                {
                    Some(x) => value = x,
                    None => {
                        let run = b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
                        return Err(format!(
                            "{} {} is too large",
                            if fields {
                                "field number"
                            } else {
                                "byte/character offset"
                            },
                            quote(&list[from..from + run], utf8)
                        ));
                    }
                }
                i += 1;
            }
            // Only ASCII came before, so `i` starts a character.
            Some(_) => {
                return Err(format!(
                    "invalid {} {}",
                    if fields {
                        "field value"
                    } else {
                        "byte/character position"
                    },
                    quote(&list[i..], utf8)
                ))
            }
        }
    }
    v.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (lo, hi) in v {
        match merged.last_mut() {
            // Overlapping ranges merge; adjacent ones stay apart (an output
            // delimiter goes between them).
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    Ok(Ranges(merged))
}
