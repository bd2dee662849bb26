//! Sort keys as GNU sort reads and finds them: `-k POS1[,POS2]` with
//! `F[.C][OPTS]` positions, the global options a key without its own
//! inherits, and where a key begins and ends in a line (GNU's `begfield`
//! and `limfield`, blank-separated fields or `-t` ones).

/// How a key's text compares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// Bytes, or the locale's collation.
    #[default]
    Text,
    /// `-n`: integers and decimals, arbitrarily long.
    Numeric,
    /// `-g`: floating point (`strtod`).
    General,
    /// `-h`: numbers with an SI suffix (2K < 1M).
    Human,
    /// `-M`: month names.
    Month,
}

/// One key, or the global options (`-b -d -f -i -n -g -h -M -r`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Key {
    /// First field (0-based); `None`: the start of the line.
    pub sword: Option<usize>,
    /// Characters into it (0-based).
    pub schar: usize,
    /// Last field (0-based); `None`: the end of the line.
    pub eword: Option<usize>,
    /// Characters into it (0: to the end of the field).
    pub echar: usize,
    pub skip_start_blanks: bool,
    pub skip_end_blanks: bool,
    /// `-f`.
    pub fold: bool,
    /// `-d` or `-i`.
    pub ignore: Ignore,
    numeric: bool,
    general: bool,
    human: bool,
    month: bool,
    pub reverse: bool,
}

/// Characters a key's text comparison passes over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ignore {
    #[default]
    None,
    /// `-d`: all but blanks and alphanumerics.
    Dictionary,
    /// `-i`: the nonprinting ones.
    Nonprinting,
}

impl Key {
    /// No ordering option set (GNU's `default_key_compare`): such a key
    /// takes the global options.
    pub fn has_no_options(&self) -> bool {
        !(self.skip_start_blanks
            || self.skip_end_blanks
            || self.fold
            || self.ignore != Ignore::None
            || self.numeric
            || self.general
            || self.human
            || self.month
            || self.reverse)
    }

    /// How the key's text compares.
    pub fn order(&self) -> Order {
        if self.numeric {
            Order::Numeric
        } else if self.general {
            Order::General
        } else if self.human {
            Order::Human
        } else if self.month {
            Order::Month
        } else {
            Order::Text
        }
    }

    /// Takes `g`'s options (for a key that has none of its own).
    pub fn inherit(&mut self, g: &Key) {
        self.skip_start_blanks = g.skip_start_blanks;
        self.skip_end_blanks = g.skip_end_blanks;
        self.fold = g.fold;
        self.ignore = g.ignore;
        self.numeric = g.numeric;
        self.general = g.general;
        self.human = g.human;
        self.month = g.month;
        self.reverse = g.reverse;
    }

    /// Sets one ordering option by its letter; false if it is not one.
    /// `start`: a `b` here is for the key's start (else its end).
    pub fn set_option(&mut self, c: u8, start: bool) -> Result<bool, String> {
        match c {
            b'b' => {
                if start {
                    self.skip_start_blanks = true
                } else {
                    self.skip_end_blanks = true
                }
            }
            b'd' => self.ignore = Ignore::Dictionary,
            b'f' => self.fold = true,
            b'g' => self.general = true,
            b'h' => self.human = true,
            b'i' => {
                if self.ignore == Ignore::None {
                    self.ignore = Ignore::Nonprinting
                }
            }
            b'M' => self.month = true,
            b'n' => self.numeric = true,
            b'r' => self.reverse = true,
            b'R' | b'V' => {
                return Err(format!(
                    "ordering option '{}' is not supported by ferry sort",
                    c as char
                ))
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// GNU's check: at most one of -n -g -h -M and an ignore table;
    /// the key's options as GNU lists them otherwise.
    pub fn incompatible(&self) -> Option<String> {
        let n = [
            self.numeric,
            self.general,
            self.human,
            self.month,
            self.ignore != Ignore::None,
        ]
        .iter()
        .filter(|&&x| x)
        .count();
        if n <= 1 {
            return None;
        }
        let mut o = String::new();
        for (on, c) in [
            (self.skip_start_blanks || self.skip_end_blanks, 'b'),
            (self.ignore == Ignore::Dictionary, 'd'),
            (self.fold, 'f'),
            (self.general, 'g'),
            (self.human, 'h'),
            (self.ignore == Ignore::Nonprinting, 'i'),
            (self.month, 'M'),
            (self.numeric, 'n'),
            (self.reverse, 'r'),
        ] {
            if on {
                o.push(c);
            }
        }
        Some(o)
    }
}

/// Parses `-k`'s argument into a key, with GNU's messages.
pub fn parse(spec: &str) -> Result<Key, String> {
    let bad = |why: &str| {
        format!(
            "{why}: invalid field specification {}",
            crate::tools::common::quote(spec)
        )
    };
    let b = spec.as_bytes();
    let mut i = 0;
    let mut k = Key::default();
    let num = |i: &mut usize, what: &str| -> Result<usize, String> {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        if start == *i {
            return Err(format!(
                "{what}: invalid count at start of {}",
                crate::tools::common::quote(&spec[start..])
            ));
        }
        // GNU clamps huge counts to SIZE_MAX.
        Ok(spec[start..*i].parse::<usize>().unwrap_or(usize::MAX))
    };
    let f = num(&mut i, "invalid number at field start")?;
    if f == 0 {
        return Err(bad("field number is zero"));
    }
    let mut sword = f - 1;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let c = num(&mut i, "invalid number after '.'")?;
        if c == 0 {
            return Err(bad("character offset is zero"));
        }
        k.schar = c - 1;
    }
    if sword == 0 && k.schar == 0 {
        // Field 1, character 1: the start of the line.
        sword = usize::MAX;
    }
    k.sword = (sword != usize::MAX).then_some(sword);
    while i < b.len() && b[i] != b',' {
        if !k.set_option(b[i], true)? {
            return Err(bad("stray character in field spec"));
        }
        i += 1;
    }
    if i < b.len() {
        i += 1;
        let f = num(&mut i, "invalid number after ','")?;
        if f == 0 {
            return Err(bad("field number is zero"));
        }
        k.eword = Some(f - 1);
        if b.get(i) == Some(&b'.') {
            i += 1;
            k.echar = num(&mut i, "invalid number after '.'")?;
        }
        while i < b.len() {
            if !k.set_option(b[i], false)? {
                return Err(bad("stray character in field spec"));
            }
            i += 1;
        }
    }
    Ok(k)
}

/// Blanks, as GNU sort counts them in the C locale (and `\n`, which only
/// `-z` lines hold).
#[inline]
pub fn blank(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n')
}

/// Where field-based key `k` starts in `line` (GNU's `begfield`).
pub fn begfield(line: &[u8], k: &Key, tab: Option<u8>) -> usize {
    let lim = line.len();
    let mut p = 0;
    let mut sword = k.sword.unwrap_or(0);
    match tab {
        Some(t) => {
            while p < lim && sword > 0 {
                sword -= 1;
                while p < lim && line[p] != t {
                    p += 1;
                }
                if p < lim {
                    p += 1;
                }
            }
        }
        None => {
            while p < lim && sword > 0 {
                sword -= 1;
                while p < lim && blank(line[p]) {
                    p += 1;
                }
                while p < lim && !blank(line[p]) {
                    p += 1;
                }
            }
        }
    }
    if k.skip_start_blanks {
        while p < lim && blank(line[p]) {
            p += 1;
        }
    }
    lim.min(p.saturating_add(k.schar))
}

/// Where key `k` ends in `line` (GNU's `limfield`); `k.eword` is set.
pub fn limfield(line: &[u8], k: &Key, tab: Option<u8>) -> usize {
    let lim = line.len();
    let mut p = 0;
    let mut eword = k.eword.unwrap_or(usize::MAX);
    let echar = k.echar;
    if echar == 0 {
        eword = eword.saturating_add(1);
    }
    match tab {
        Some(t) => {
            while p < lim && eword > 0 {
                eword -= 1;
                while p < lim && line[p] != t {
                    p += 1;
                }
                if p < lim && (eword > 0 || echar > 0) {
                    p += 1;
                }
            }
        }
        None => {
            while p < lim && eword > 0 {
                eword -= 1;
                while p < lim && blank(line[p]) {
                    p += 1;
                }
                while p < lim && !blank(line[p]) {
                    p += 1;
                }
            }
        }
    }
    if echar != 0 {
        if k.skip_end_blanks {
            while p < lim && blank(line[p]) {
                p += 1;
            }
        }
        p = lim.min(p.saturating_add(echar));
    }
    p
}

/// The bytes of key `k` in `line` (empty where it ends before it begins).
pub fn span<'l>(line: &'l [u8], k: &Key, tab: Option<u8>) -> &'l [u8] {
    let lim = if k.eword.is_some() {
        limfield(line, k, tab)
    } else {
        line.len()
    };
    let beg = if k.sword.is_some() {
        begfield(line, k, tab)
    } else {
        let mut b = 0;
        if k.skip_start_blanks {
            while b < lim && blank(line[b]) {
                b += 1;
            }
        }
        b
    };
    if lim <= beg {
        &[]
    } else {
        &line[beg..lim]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_as_gnu_reads_them() {
        let k = parse("2,3").unwrap();
        assert_eq!(
            (k.sword, k.schar, k.eword, k.echar),
            (Some(1), 0, Some(2), 0)
        );
        let k = parse("1.2nr,1.4b").unwrap();
        assert_eq!(
            (k.sword, k.schar, k.eword, k.echar),
            (Some(0), 1, Some(0), 4)
        );
        assert!(k.reverse && k.order() == Order::Numeric && k.skip_end_blanks);
        assert_eq!(parse("1").unwrap().sword, None);
        assert!(parse("0").unwrap_err().contains("field number is zero"));
        assert!(parse("1.0")
            .unwrap_err()
            .contains("character offset is zero"));
        assert!(parse("1x").unwrap_err().contains("stray character"));
        assert!(parse("a")
            .unwrap_err()
            .contains("invalid number at field start"));
    }

    #[test]
    fn fields_found_as_gnu_finds_them() {
        let line = b"  a  bb ccc";
        let k = parse("2,2").unwrap();
        assert_eq!(span(line, &k, None), b"  bb");
        let k = parse("2b,2").unwrap();
        assert_eq!(span(line, &k, None), b"bb");
        let k = parse("3.2,3.3").unwrap();
        assert_eq!(span(line, &k, None), b"cc");
        let k = parse("2,2").unwrap();
        assert_eq!(span(b"x:y:z", &k, Some(b':')), b"y");
        assert_eq!(span(b"x:y:z", &parse("2").unwrap(), Some(b':')), b"y:z");
        assert_eq!(span(b"x", &parse("3,3").unwrap(), Some(b':')), b"");
    }
}
