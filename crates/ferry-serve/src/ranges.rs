//! `Range: bytes=…` (RFC 9110, 14.1.2 and 14.2): byte ranges of a
//! representation of known length.

/// What a `Range` header asks of a file of a given size.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Ranges {
    /// The whole file: no byte ranges (another unit, or no range at all,
    /// is ignored as RFC 9110 allows).
    All,
    /// Byte ranges none of which overlaps the file, or a range that does
    /// not parse (`5-1`, `x-1`: RFC 9110, 14.2, and nginx): 416.
    Unsatisfiable,
    /// `[start, end)` pieces, in the order asked, each within the file.
    Some(Vec<(u64, u64)>),
}

/// Ranges a request may ask for at most; more is answered with the whole
/// file (a request of thousands of tiny ranges costs the server more
/// than the file).
const MAX_RANGES: usize = 32;

/// Parses `header` for a file of `size` bytes.
pub(crate) fn parse(header: &str, size: u64) -> Ranges {
    // The unit is case-insensitive (RFC 9110, 14.1).
    let header = header.trim();
    let Some(spec) = header
        .get(..6)
        .filter(|unit| unit.eq_ignore_ascii_case("bytes="))
        .map(|_| &header[6..])
    else {
        return Ranges::All;
    };
    let mut out = Vec::new();
    let mut any = false;
    for part in spec.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        any = true;
        if out.len() >= MAX_RANGES {
            return Ranges::All;
        }
        let Some((first, last)) = part.split_once('-') else {
            return Ranges::Unsatisfiable;
        };
        let (first, last) = (first.trim(), last.trim());
        let range = if first.is_empty() {
            // A suffix: the last `n` bytes.
            let Some(n) = number(last) else {
                return Ranges::Unsatisfiable;
            };
            (n > 0 && size > 0).then(|| (size - n.min(size), size))
        } else {
            let Some(start) = number(first) else {
                return Ranges::Unsatisfiable;
            };
            let end = if last.is_empty() {
                size
            } else {
                match number(last) {
                    Some(l) if l >= start => l.saturating_add(1).min(size),
                    _ => return Ranges::Unsatisfiable,
                }
            };
            (start < size).then_some((start, end))
        };
        if let Some(r) = range {
            out.push(r);
        }
    }
    if !any {
        return Ranges::All;
    }
    if out.is_empty() {
        return Ranges::Unsatisfiable;
    }
    // Ranges that together ask for more than the file (overlapping or
    // repeated ones) get the whole file instead, as nginx answers: a
    // response is never larger than the file and its part heads.
    let asked: u64 = out.iter().map(|(s, e)| e - s).sum();
    if out.len() > 1 && asked > size {
        return Ranges::All;
    }
    Ranges::Some(out)
}

/// Digits only (no sign), as a number; past u64, the largest (a position
/// that far is past any file).
fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(s.parse().unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_forms_rfc_9110_gives() {
        assert_eq!(parse("bytes=0-499", 1000), Ranges::Some(vec![(0, 500)]));
        assert_eq!(parse("bytes=500-", 1000), Ranges::Some(vec![(500, 1000)]));
        assert_eq!(parse("bytes=-200", 1000), Ranges::Some(vec![(800, 1000)]));
        assert_eq!(parse("bytes=-2000", 1000), Ranges::Some(vec![(0, 1000)]));
        assert_eq!(
            parse("bytes=900-5000", 1000),
            Ranges::Some(vec![(900, 1000)])
        );
        assert_eq!(
            parse("bytes=0-0, -1", 1000),
            Ranges::Some(vec![(0, 1), (999, 1000)])
        );
        assert_eq!(parse("bytes=1000-", 1000), Ranges::Unsatisfiable);
        assert_eq!(parse("bytes=-0", 1000), Ranges::Unsatisfiable);
        assert_eq!(parse("bytes=0-", 0), Ranges::Unsatisfiable);
        assert_eq!(parse("bytes=5-1", 1000), Ranges::Unsatisfiable);
        assert_eq!(parse("items=0-1", 1000), Ranges::All);
        assert_eq!(parse("bytes=x-1", 1000), Ranges::Unsatisfiable);
        assert_eq!(parse("bytes=0-1,7", 1000), Ranges::Unsatisfiable);
        assert_eq!(parse("bytes=-", 1000), Ranges::Unsatisfiable);
        assert_eq!(parse("bytes=+1-2", 1000), Ranges::Unsatisfiable);
        assert_eq!(
            parse("bytes=1-99999999999999999999999", 1000),
            Ranges::Some(vec![(1, 1000)])
        );
        // Empty list elements are allowed (RFC 9110, 5.6.1).
        assert_eq!(
            parse("bytes=0-1,,2-3", 1000),
            Ranges::Some(vec![(0, 2), (2, 4)])
        );
        assert_eq!(parse("bytes=", 1000), Ranges::All);
        let many = format!("bytes={}", vec!["0-0"; MAX_RANGES + 1].join(","));
        assert_eq!(parse(&many, 1000), Ranges::All);
        assert_eq!(parse("Bytes=0-1", 1000), Ranges::Some(vec![(0, 2)]));
        assert_eq!(parse("BYTES=-1", 1000), Ranges::Some(vec![(999, 1000)]));
        // Overlaps asking for more than the file: the whole file.
        let overlapping = format!("bytes={}", vec!["0-"; MAX_RANGES].join(","));
        assert_eq!(parse(&overlapping, 1000), Ranges::All);
        assert_eq!(parse("bytes=0-599,400-999", 1000), Ranges::All);
        assert_eq!(
            parse("bytes=0-499,400-899", 1000),
            Ranges::Some(vec![(0, 500), (400, 900)])
        );
    }

    proptest! {
        /// Every range given lies within the file and is not empty, and
        /// several never ask for more bytes than the file has.
        #[test]
        fn ranges_lie_within_the_file(h in "bytes=[0-9, -]{0,30}", size in 0u64..5000) {
            if let Ranges::Some(list) = parse(&h, size) {
                let mut sum = 0;
                for &(s, e) in &list {
                    prop_assert!(s < e && e <= size, "{h}: {s}..{e} of {size}");
                    sum += e - s;
                }
                prop_assert!(list.len() == 1 || sum <= size, "{h}: {sum} of {size}");
            }
        }
    }
}
