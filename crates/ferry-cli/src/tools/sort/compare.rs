//! Comparing two lines as GNU sort does: key by key (text with `-f`,
//! `-d`, `-i`; `-n` by GNU's `strnumcmp`; `-g` by `strtod`; `-h` by SI
//! suffix then number; `-M` by month), each key's `-r`, then — unless
//! `-s` or `-u` — the whole lines as a last resort (reversed by a global
//! `-r`). Text compares bytewise in the C locale and by the C library's
//! collation (`strcoll`) in others.

use super::key::{self, Ignore, Key, Order};
use ferry::sort::ByteKey;
use std::cmp::Ordering;

/// Everything a comparison needs.
pub struct Cmp {
    /// Binary records: the key's offset and length; the byte order of
    /// those, then input order (stable), decides.
    pub record_key: Option<(usize, usize)>,
    pub keys: Vec<Key>,
    pub tab: Option<u8>,
    /// Whole lines compared when the keys tie.
    pub last_resort: bool,
    /// The global `-r` (for the last resort).
    pub reverse: bool,
    /// Compare text with `strcoll` (a locale whose collation is not C's).
    pub locale: bool,
    pub decimal_point: u8,
    /// `None` in the C locale.
    pub thousands_sep: Option<u8>,
}

impl Cmp {
    /// The order of lines `a` and `b`.
    pub fn lines(&self, a: &[u8], b: &[u8]) -> Ordering {
        if let Some((o, k)) = self.record_key {
            let d = a[o..o + k].cmp(&b[o..o + k]);
            return if self.reverse { d.reverse() } else { d };
        }
        // No key: the whole lines are the comparison (GNU's too, with -s
        // or -u).
        if !self.keys.is_empty() {
            let d = self.keys_only(a, b);
            if d != Ordering::Equal || !self.last_resort {
                return d;
            }
        }
        let d = self.text(a, b);
        if self.reverse {
            d.reverse()
        } else {
            d
        }
    }

    /// Equal for `-u`: by the keys, or whole lines if there is none.
    pub fn same(&self, a: &[u8], b: &[u8]) -> bool {
        if self.record_key.is_some() {
            return self.lines(a, b) == Ordering::Equal;
        }
        if self.keys.is_empty() {
            a == b || self.text(a, b) == Ordering::Equal
        } else {
            self.keys_only(a, b) == Ordering::Equal
        }
    }

    /// The order by the keys alone.
    pub fn keys_only(&self, a: &[u8], b: &[u8]) -> Ordering {
        for k in &self.keys {
            let (mut x, mut y) = (key::span(a, k, self.tab), key::span(b, k, self.tab));
            // GNU folds (and drops ignored bytes) before any ordering, a
            // numeric one too: `-k1hf` reads "6e11" as "6E11", exa.
            let (fx, fy);
            if k.fold && k.order() != Order::Text {
                fx = x.to_ascii_uppercase();
                fy = y.to_ascii_uppercase();
                x = &fx;
                y = &fy;
            }
            let d = match k.order() {
                Order::Numeric => self.numeric(x, y),
                Order::General => super::super::locale::general_numeric_order(x, y),
                Order::Human => self.human(x, y),
                Order::Month => month(x).cmp(&month(y)),
                Order::Text => self.key_text(x, y, k),
            };
            if d != Ordering::Equal {
                return if k.reverse { d.reverse() } else { d };
            }
        }
        Ordering::Equal
    }

    fn key_text(&self, x: &[u8], y: &[u8], k: &Key) -> Ordering {
        if !k.fold && k.ignore == Ignore::None {
            return self.text(x, y);
        }
        let ignore = |c: u8| match k.ignore {
            Ignore::None => false,
            Ignore::Dictionary => !(c.is_ascii_alphanumeric() || key::blank(c)),
            Ignore::Nonprinting => !(0x20..0x7f).contains(&c),
        };
        let tr = |c: u8| if k.fold { c.to_ascii_uppercase() } else { c };
        if self.locale {
            // Transformed copies, then the collation (as GNU does).
            let x: Vec<u8> = x.iter().copied().filter(|&c| !ignore(c)).map(tr).collect();
            let y: Vec<u8> = y.iter().copied().filter(|&c| !ignore(c)).map(tr).collect();
            return self.text(&x, &y);
        }
        let mut i = x.iter().copied().filter(|&c| !ignore(c)).map(tr);
        let mut j = y.iter().copied().filter(|&c| !ignore(c)).map(tr);
        loop {
            match (i.next(), j.next()) {
                (Some(a), Some(b)) if a == b => {}
                (Some(a), Some(b)) => return a.cmp(&b),
                (Some(_), None) => return Ordering::Greater,
                (None, Some(_)) => return Ordering::Less,
                (None, None) => return Ordering::Equal,
            }
        }
    }

    /// Bytes, or the collation.
    pub fn text(&self, x: &[u8], y: &[u8]) -> Ordering {
        if self.locale {
            super::super::locale::collate(x, y)
        } else {
            x.cmp(y)
        }
    }

    fn numeric(&self, x: &[u8], y: &[u8]) -> Ordering {
        strnumcmp(
            skip_blanks(x),
            skip_blanks(y),
            self.decimal_point,
            self.thousands_sep,
        )
    }

    fn human(&self, x: &[u8], y: &[u8]) -> Ordering {
        let (x, y) = (skip_blanks(x), skip_blanks(y));
        let u = |s: &[u8]| unit_order(s, self.decimal_point, self.thousands_sep);
        u(x).cmp(&u(y))
            .then_with(|| strnumcmp(x, y, self.decimal_point, self.thousands_sep))
    }
}

/// The engine's view of the comparison: GNU's order, and where that is
/// plain bytes (a record's key, or the whole line in the C locale with
/// no ordering option), the byte key the engine compares by itself.
impl ferry::sort::Compare for Cmp {
    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.lines(a, b)
    }

    #[inline]
    fn same(&self, a: &[u8], b: &[u8]) -> bool {
        Cmp::same(self, a, b)
    }

    fn byte_key(&self) -> Option<ByteKey> {
        let reverse = self.reverse;
        if let Some((offset, len)) = self.record_key {
            return Some(ByteKey {
                offset,
                len,
                reverse,
            });
        }
        (self.keys.is_empty() && !self.locale).then_some(ByteKey {
            reverse,
            ..ByteKey::WHOLE
        })
    }
}

fn skip_blanks(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&c| key::blank(c)).count();
    &s[n..]
}

/// The byte at `i`, or NUL past the end (GNU's keys end in a NUL).
#[inline]
fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

fn digit(c: u8) -> bool {
    c.is_ascii_digit()
}

fn sign(d: i32) -> Ordering {
    d.cmp(&0)
}

/// GNU's `fraccompare`: two fractions starting at a decimal point.
fn fraccompare(a: &[u8], b: &[u8], dp: u8) -> i32 {
    let (mut i, mut j) = (0, 0);
    let (mut ta, mut tb) = (at(a, 0), at(b, 0));
    if ta == dp && tb == dp {
        loop {
            i += 1;
            j += 1;
            ta = at(a, i);
            tb = at(b, j);
            if !(ta == tb && digit(ta)) {
                break;
            }
        }
        if digit(ta) && digit(tb) {
            return ta as i32 - tb as i32;
        }
        if digit(ta) {
            while ta == b'0' {
                i += 1;
                ta = at(a, i);
            }
            return digit(ta) as i32;
        }
        if digit(tb) {
            while tb == b'0' {
                j += 1;
                tb = at(b, j);
            }
            return -(digit(tb) as i32);
        }
        return 0;
    }
    if ta == dp {
        loop {
            i += 1;
            ta = at(a, i);
            if ta != b'0' {
                break;
            }
        }
        return digit(ta) as i32;
    }
    if tb == dp {
        loop {
            j += 1;
            tb = at(b, j);
            if tb != b'0' {
                break;
            }
        }
        return -(digit(tb) as i32);
    }
    0
}

/// GNU's `strnumcmp` (gnulib `numcompare`): decimal numbers of any
/// length, an optional `-`, grouping by `sep`, a fraction after `dp`.
pub fn strnumcmp(a: &[u8], b: &[u8], dp: u8, sep: Option<u8>) -> Ordering {
    let is_sep = |c: u8| sep == Some(c) && c != 0;
    let (mut i, mut j) = (0usize, 0usize);
    let mut ta = at(a, 0);
    let mut tb = at(b, 0);
    macro_rules! next_a {
        () => {{
            i += 1;
            ta = at(a, i);
        }};
    }
    macro_rules! next_b {
        () => {{
            j += 1;
            tb = at(b, j);
        }};
    }
    if ta == b'-' {
        loop {
            next_a!();
            if !(ta == b'0' || is_sep(ta)) {
                break;
            }
        }
        if tb != b'-' {
            if ta == dp {
                loop {
                    next_a!();
                    if ta != b'0' {
                        break;
                    }
                }
            }
            if digit(ta) {
                return Ordering::Less;
            }
            while tb == b'0' || is_sep(tb) {
                next_b!();
            }
            if tb == dp {
                loop {
                    next_b!();
                    if tb != b'0' {
                        break;
                    }
                }
            }
            return if digit(tb) {
                Ordering::Less
            } else {
                Ordering::Equal
            };
        }
        loop {
            next_b!();
            if !(tb == b'0' || is_sep(tb)) {
                break;
            }
        }
        while ta == tb && digit(ta) {
            loop {
                next_a!();
                if !is_sep(ta) {
                    break;
                }
            }
            loop {
                next_b!();
                if !is_sep(tb) {
                    break;
                }
            }
        }
        if (ta == dp && !digit(tb)) || (tb == dp && !digit(ta)) {
            return sign(fraccompare(&b[j..], &a[i..], dp));
        }
        let tmp = tb as i32 - ta as i32;
        let mut log_a = 0;
        while digit(ta) {
            log_a += 1;
            loop {
                next_a!();
                if !is_sep(ta) {
                    break;
                }
            }
        }
        let mut log_b = 0;
        while digit(tb) {
            log_b += 1;
            loop {
                next_b!();
                if !is_sep(tb) {
                    break;
                }
            }
        }
        if log_a != log_b {
            return if log_a < log_b {
                Ordering::Greater
            } else {
                Ordering::Less
            };
        }
        if log_a == 0 {
            return Ordering::Equal;
        }
        return sign(tmp);
    }
    if tb == b'-' {
        loop {
            next_b!();
            if !(tb == b'0' || is_sep(tb)) {
                break;
            }
        }
        if tb == dp {
            loop {
                next_b!();
                if tb != b'0' {
                    break;
                }
            }
        }
        if digit(tb) {
            return Ordering::Greater;
        }
        while ta == b'0' || is_sep(ta) {
            next_a!();
        }
        if ta == dp {
            loop {
                next_a!();
                if ta != b'0' {
                    break;
                }
            }
        }
        return if digit(ta) {
            Ordering::Greater
        } else {
            Ordering::Equal
        };
    }
    while ta == b'0' || is_sep(ta) {
        next_a!();
    }
    while tb == b'0' || is_sep(tb) {
        next_b!();
    }
    while ta == tb && digit(ta) {
        loop {
            next_a!();
            if !is_sep(ta) {
                break;
            }
        }
        loop {
            next_b!();
            if !is_sep(tb) {
                break;
            }
        }
    }
    if (ta == dp && !digit(tb)) || (tb == dp && !digit(ta)) {
        return sign(fraccompare(&a[i..], &b[j..], dp));
    }
    let tmp = ta as i32 - tb as i32;
    let mut log_a = 0;
    while digit(ta) {
        log_a += 1;
        loop {
            next_a!();
            if !is_sep(ta) {
                break;
            }
        }
    }
    let mut log_b = 0;
    while digit(tb) {
        log_b += 1;
        loop {
            next_b!();
            if !is_sep(tb) {
                break;
            }
        }
    }
    if log_a != log_b {
        return if log_a < log_b {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    if log_a == 0 {
        return Ordering::Equal;
    }
    sign(tmp)
}

/// GNU's `find_unit_order`: the SI suffix after a number (K=1 … Q=10,
/// negative for a negative number; 0 without one).
fn unit_order(s: &[u8], dp: u8, sep: Option<u8>) -> i32 {
    let minus = at(s, 0) == b'-';
    let mut p = minus as usize;
    let mut max_digit = 0u8;
    let mut ch;
    loop {
        loop {
            ch = at(s, p);
            p += 1;
            if !digit(ch) {
                break;
            }
            max_digit = max_digit.max(ch);
        }
        if !(ch == dp || (sep == Some(ch) && ch != 0)) {
            break;
        }
    }
    let order = if max_digit == 0 || max_digit == b'0' {
        0
    } else {
        match ch {
            b'K' | b'k' => 1,
            b'M' => 2,
            b'G' => 3,
            b'T' => 4,
            b'P' => 5,
            b'E' => 6,
            b'Z' => 7,
            b'Y' => 8,
            b'R' => 9,
            b'Q' => 10,
            _ => 0,
        }
    };
    if minus {
        -order
    } else {
        order
    }
}

/// `-M`: 1 to 12 for a month's name (C locale: JAN … DEC, any case,
/// after blanks), 0 for anything else.
fn month(s: &[u8]) -> u8 {
    const NAMES: [&[u8; 3]; 12] = [
        b"JAN", b"FEB", b"MAR", b"APR", b"MAY", b"JUN", b"JUL", b"AUG", b"SEP", b"OCT", b"NOV",
        b"DEC",
    ];
    let s = skip_blanks(s);
    if s.len() < 3 {
        return 0;
    }
    let up = [
        s[0].to_ascii_uppercase(),
        s[1].to_ascii_uppercase(),
        s[2].to_ascii_uppercase(),
    ];
    NAMES
        .iter()
        .position(|n| **n == up)
        .map_or(0, |i| i as u8 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(a: &str, b: &str) -> Ordering {
        strnumcmp(a.as_bytes(), b.as_bytes(), b'.', None)
    }

    #[test]
    fn numbers_compare_as_gnu_compares_them() {
        assert_eq!(n("10", "9"), Ordering::Greater);
        assert_eq!(n("-10", "-9"), Ordering::Less);
        assert_eq!(n("0", "-0"), Ordering::Equal);
        assert_eq!(n("1.5", "1.25"), Ordering::Greater);
        assert_eq!(n("007", "7"), Ordering::Equal);
        assert_eq!(n("abc", "0"), Ordering::Equal);
        assert_eq!(n("-.5", "0"), Ordering::Less);
        assert_eq!(n(".5", "-1"), Ordering::Greater);
        assert_eq!(
            n(
                "123456789012345678901234567890",
                "123456789012345678901234567891"
            ),
            Ordering::Less
        );
        assert_eq!(
            strnumcmp(b"1,000", b"999", b'.', Some(b',')),
            Ordering::Greater
        );
    }
}
