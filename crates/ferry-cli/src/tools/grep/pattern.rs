//! GNU grep's pattern languages (BRE, ERE, fixed strings) translated into
//! the `regex` crate's syntax, for matching whole buffers of lines at once.
//!
//! The translation keeps GNU's meaning where the two differ: in brackets a
//! backslash is an ordinary character and `]` may come first; BRE's
//! `\( \) \{ \} \| \+ \?` are the operators and the bare characters are
//! literals; `*` (and ERE's `+ ? {`) at the start of an expression is a
//! literal; a `{` that does not begin a valid interval is a literal. No
//! match may cross a line end: negated classes and `\s` `\W` leave out the
//! newline, and `^` `$` are line anchors (multi-line mode).

/// Which pattern language.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Syntax {
    Basic,
    Extended,
    Fixed,
}

/// How patterns are matched.
#[derive(Clone, Copy, Debug)]
pub struct Flavor {
    pub syntax: Syntax,
    /// UTF-8 locale (characters) or single-byte (bytes).
    pub utf8: bool,
}

/// A translation error, worded as GNU grep words it.
pub type Error = String;

struct Out<'a> {
    s: String,
    /// Where the last atom (what a quantifier applies to) begins in `s`.
    atom: Option<usize>,
    /// The last thing pushed was a quantifier.
    quantified: bool,
    flavor: &'a Flavor,
}

impl Out<'_> {
    fn begin_atom(&mut self) {
        self.atom = Some(self.s.len());
        self.quantified = false;
    }

    /// A literal character (or, outside UTF-8 or for an invalid byte, a
    /// byte).
    fn literal_char(&mut self, c: Lit) {
        self.begin_atom();
        push_lit(&mut self.s, c, self.flavor.utf8);
    }

    fn raw_atom(&mut self, text: &str) {
        self.begin_atom();
        self.s.push_str(text);
    }

    /// An anchor or other zero-width assertion: quantifiers after it are
    /// literal in GNU's reading, so no atom.
    fn assertion(&mut self, text: &str) {
        self.s.push_str(text);
        self.atom = None;
        self.quantified = false;
    }

    fn quantifier(&mut self, q: &str) {
        let Some(start) = self.atom else { return };
        if self.quantified {
            // A quantifier on a quantified atom: group it first (the regex
            // crate rejects `a**`).
            self.s.insert_str(start, "(?:");
            self.s.push(')');
        }
        self.s.push_str(q);
        self.quantified = true;
    }
}

/// A pattern character: a decoded character, or a byte that is not one.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lit {
    Char(char),
    Byte(u8),
}

fn push_lit(s: &mut String, c: Lit, utf8: bool) {
    use std::fmt::Write;
    match c {
        Lit::Char(ch) if ch.is_ascii_alphanumeric() => s.push(ch),
        Lit::Char(ch) if utf8 || (ch as u32) < 0x80 => {
            let _ = write!(s, "\\x{{{:x}}}", ch as u32);
        }
        Lit::Char(ch) => {
            // Single-byte locale: the pattern's bytes are the bytes.
            let mut b = [0u8; 4];
            for x in ch.encode_utf8(&mut b).bytes() {
                let _ = write!(s, "\\x{x:02x}");
            }
        }
        Lit::Byte(b) if utf8 => {
            let _ = write!(s, "(?-u:\\x{b:02x})");
        }
        Lit::Byte(b) => {
            let _ = write!(s, "\\x{b:02x}");
        }
    }
}

/// The pattern's characters: decoded as UTF-8 in a UTF-8 locale (invalid
/// bytes stand for themselves), one per byte otherwise.
fn decode(p: &[u8], utf8: bool) -> Vec<Lit> {
    if !utf8 {
        return p
            .iter()
            .map(|&b| {
                if b < 0x80 {
                    Lit::Char(b as char)
                } else {
                    Lit::Byte(b)
                }
            })
            .collect();
    }
    let mut v = Vec::with_capacity(p.len());
    for chunk in p.utf8_chunks() {
        v.extend(chunk.valid().chars().map(Lit::Char));
        v.extend(chunk.invalid().iter().map(|&b| Lit::Byte(b)));
    }
    v
}

/// The flags a translated pattern is compiled under: line anchors, and in
/// a single-byte locale byte semantics (`.` is any byte but newline).
pub fn flags(utf8: bool) -> &'static str {
    if utf8 {
        "(?m)"
    } else {
        "(?m-u)"
    }
}

/// Translates one pattern (one line of grep's pattern list).
pub fn translate(p: &[u8], f: &Flavor) -> Result<String, Error> {
    let lits = decode(p, f.utf8);
    let mut out = Out {
        s: String::new(),
        atom: None,
        quantified: false,
        flavor: f,
    };
    if f.syntax == Syntax::Fixed {
        for &c in &lits {
            out.literal_char(c);
        }
        return Ok(out.s);
    }
    let bre = f.syntax == Syntax::Basic;
    let ch = |i: usize| match lits.get(i) {
        Some(Lit::Char(c)) => Some(*c),
        _ => None,
    };
    let mut depth = 0usize;
    // At the start of an expression (start, after a group's opening or an
    // alternation): `*` is literal there.
    let mut at_start = true;
    let mut i = 0;
    while i < lits.len() {
        let c = lits[i];
        let start_here = at_start;
        at_start = false;
        let Lit::Char(c) = c else {
            out.literal_char(c);
            i += 1;
            continue;
        };
        match c {
            '\\' => {
                let Some(&n) = lits.get(i + 1) else {
                    return Err("trailing backslash (\\)".into());
                };
                i += 2;
                let Lit::Char(n) = n else {
                    out.literal_char(n);
                    continue;
                };
                match n {
                    '(' if bre => {
                        depth += 1;
                        out.s.push('(');
                        out.atom = None;
                        at_start = true;
                        continue;
                    }
                    ')' if bre => {
                        if depth == 0 {
                            return Err("Unmatched ) or \\)".into());
                        }
                        close_group(&mut out, &mut depth);
                        continue;
                    }
                    '|' if bre => {
                        out.assertion("|");
                        at_start = true;
                        continue;
                    }
                    '{' if bre => {
                        if start_here {
                            out.literal_char(Lit::Char('{'));
                            continue;
                        }
                        match interval(&lits, i, true) {
                            Some((q, next)) => {
                                out.quantifier(&q);
                                i = next;
                            }
                            None => return Err("Unmatched \\{".into()),
                        }
                        continue;
                    }
                    '+' | '?' if bre => {
                        if start_here || out.atom.is_none() {
                            out.literal_char(Lit::Char(n));
                        } else {
                            out.quantifier(if n == '+' { "+" } else { "?" });
                        }
                        continue;
                    }
                    '1'..='9' => {
                        return Err("back-references are not supported by ferry grep".into())
                    }
                    'w' => out.raw_atom(if f.utf8 { "[\\w]" } else { "(?-u:[\\w])" }),
                    'W' => out.raw_atom(if f.utf8 {
                        "[^\\w\\n]"
                    } else {
                        "(?-u:[^\\w\\n])"
                    }),
                    's' => out.raw_atom(if f.utf8 {
                        "[\\s&&[^\\n]]"
                    } else {
                        "(?-u:[\\s&&[^\\n]])"
                    }),
                    'S' => out.raw_atom(if f.utf8 { "[\\S]" } else { "(?-u:[\\S])" }),
                    'b' => out.assertion(if f.utf8 { "\\b" } else { "(?-u:\\b)" }),
                    'B' => out.assertion(if f.utf8 { "\\B" } else { "(?-u:\\B)" }),
                    '<' => out.assertion(if f.utf8 {
                        "\\b{start}"
                    } else {
                        "(?-u:\\b{start})"
                    }),
                    '>' => out.assertion(if f.utf8 { "\\b{end}" } else { "(?-u:\\b{end})" }),
                    '`' => out.assertion("^"),
                    '\'' => out.assertion("$"),
                    other => out.literal_char(Lit::Char(other)),
                }
                continue;
            }
            '[' => {
                let (class, next) = bracket(&lits, i + 1, f)?;
                out.raw_atom(&class);
                i = next;
                continue;
            }
            '.' => out.raw_atom(if f.utf8 { "." } else { "(?-u:.)" }),
            '*' => {
                if start_here || out.atom.is_none() {
                    // GNU: a leading `*` (or one after an anchor) is literal.
                    out.literal_char(Lit::Char('*'));
                } else {
                    out.quantifier("*");
                }
            }
            '^' => {
                if !bre || start_here {
                    out.assertion("^");
                    at_start = bre;
                } else {
                    out.literal_char(Lit::Char('^'));
                }
            }
            '$' => {
                let at_end = i + 1 == lits.len()
                    || (bre
                        && ch(i + 1) == Some('\\')
                        && matches!(ch(i + 2), Some(')') | Some('|')));
                if !bre || at_end {
                    out.assertion("$");
                } else {
                    out.literal_char(Lit::Char('$'));
                }
            }
            '(' if !bre => {
                depth += 1;
                out.s.push('(');
                out.atom = None;
                at_start = true;
            }
            ')' if !bre => {
                if depth == 0 {
                    // POSIX leaves a lone `)` to the implementation; GNU
                    // takes it literally.
                    out.literal_char(Lit::Char(')'));
                } else {
                    close_group(&mut out, &mut depth);
                }
            }
            '|' if !bre => {
                out.assertion("|");
                at_start = true;
            }
            '+' | '?' if !bre => {
                if start_here || out.atom.is_none() {
                    out.literal_char(Lit::Char(c));
                } else {
                    out.quantifier(if c == '+' { "+" } else { "?" });
                }
            }
            '{' if !bre => {
                match (
                    start_here || out.atom.is_none(),
                    interval(&lits, i + 1, false),
                ) {
                    (false, Some((q, next))) => {
                        out.quantifier(&q);
                        i = next;
                        continue;
                    }
                    // Not an interval: a literal brace, as GNU reads it.
                    _ => out.literal_char(Lit::Char('{')),
                }
            }
            other => out.literal_char(Lit::Char(other)),
        }
        i += 1;
    }
    if depth > 0 {
        return Err("Unmatched ( or \\(".into());
    }
    Ok(out.s)
}

fn close_group(out: &mut Out<'_>, depth: &mut usize) {
    *depth -= 1;
    out.s.push(')');
    // The group is the atom a following quantifier applies to.
    let mut level = 0i32;
    let bytes = out.s.as_bytes();
    let mut k = bytes.len();
    let escaped_at = |j: usize| {
        let mut n = 0;
        while j > n && bytes[j - n - 1] == b'\\' {
            n += 1;
        }
        n % 2 == 1
    };
    while k > 0 {
        k -= 1;
        match bytes[k] {
            b')' if !escaped_at(k) => level += 1,
            b'(' if !escaped_at(k) => {
                level -= 1;
                if level == 0 {
                    break;
                }
            }
            _ => {}
        }
    }
    out.atom = Some(k);
    out.quantified = false;
}

/// An interval `{m}`, `{m,}`, `{,n}`, `{m,n}` starting after the brace at
/// `i`; in BRE it closes with `\}`. Returns the regex quantifier and the
/// index after it.
fn interval(lits: &[Lit], mut i: usize, bre: bool) -> Option<(String, usize)> {
    let num = |i: &mut usize| -> Option<u32> {
        let mut v: Option<u32> = None;
        while let Some(Lit::Char(c)) = lits.get(*i) {
            let Some(d) = c.to_digit(10) else { break };
            v = Some(v.unwrap_or(0).checked_mul(10)?.checked_add(d)?);
            *i += 1;
        }
        v
    };
    let lo = num(&mut i);
    let mut hi = lo;
    let mut comma = false;
    if lits.get(i) == Some(&Lit::Char(',')) {
        comma = true;
        i += 1;
        hi = num(&mut i);
    }
    if bre {
        if lits.get(i) != Some(&Lit::Char('\\')) {
            return None;
        }
        i += 1;
    }
    if lits.get(i) != Some(&Lit::Char('}')) {
        return None;
    }
    if lo.is_none() && !comma {
        return None;
    }
    let lo = lo.unwrap_or(0);
    if let Some(h) = hi {
        if h < lo || h > 32767 {
            return None;
        }
    }
    let q = match (comma, hi) {
        (false, _) => format!("{{{lo}}}"),
        (true, None) => format!("{{{lo},}}"),
        (true, Some(h)) => format!("{{{lo},{h}}}"),
    };
    Some((q, i + 1))
}

/// A bracket expression whose `[` was just before `i`: POSIX rules (a
/// first `]` is literal, backslash is literal, `[:class:]`, `[=c=]`,
/// `[.c.]`, ranges). Returns the regex class and the index after `]`.
fn bracket(lits: &[Lit], mut i: usize, f: &Flavor) -> Result<(String, usize), Error> {
    let unmatched = || "Unmatched [, [^, [:, [., or [=".to_string();
    let mut s = String::from("[");
    let neg = lits.get(i) == Some(&Lit::Char('^'));
    if neg {
        i += 1;
        s.push('^');
        s.push_str("\\n");
    }
    let mut first = true;
    loop {
        let Some(&c) = lits.get(i) else {
            return Err(unmatched());
        };
        if c == Lit::Char(']') && !first {
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
                    s.push_str(&class(&name, f.utf8).ok_or("Invalid character class name")?);
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
            let (lo, hi) = (lit_value(c), lit_value(e));
            if lo > hi {
                return Err("Invalid range end".into());
            }
            class_lit(&mut s, c, f.utf8);
            s.push('-');
            class_lit(&mut s, e, f.utf8);
            i += 3;
            continue;
        }
        class_lit(&mut s, c, f.utf8);
        i += 1;
    }
    s.push(']');
    if !f.utf8 {
        s = format!("(?-u:{s})");
    }
    Ok((s, i))
}

fn lit_value(l: Lit) -> u32 {
    match l {
        Lit::Char(c) => c as u32,
        Lit::Byte(b) => b as u32,
    }
}

/// A character inside a class: always escaped, so nothing is special.
fn class_lit(s: &mut String, c: Lit, utf8: bool) {
    use std::fmt::Write;
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

/// A POSIX character class; in a UTF-8 locale the letter classes take in
/// every script, as glibc's do.
fn class(name: &str, utf8: bool) -> Option<String> {
    let ascii = matches!(
        name,
        "alpha"
            | "digit"
            | "alnum"
            | "upper"
            | "lower"
            | "space"
            | "blank"
            | "punct"
            | "print"
            | "graph"
            | "cntrl"
            | "xdigit"
    );
    if !ascii {
        return None;
    }
    if utf8 {
        let u = match name {
            "alpha" => Some("\\p{Alphabetic}"),
            "alnum" => Some("\\p{Alphabetic}\\p{Nd}"),
            "upper" => Some("\\p{Uppercase}"),
            "lower" => Some("\\p{Lowercase}"),
            "space" => Some("\\s&&[^\\n]"),
            _ => None,
        };
        if let Some(u) = u {
            return Some(if name == "space" {
                "[\\s&&[^\\n]]".to_string()
            } else {
                u.to_string()
            });
        }
    }
    Some(format!("[:{name}:]"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str, syntax: Syntax) -> regex::bytes::Regex {
        let f = Flavor {
            syntax,
            utf8: false,
        };
        let t = translate(p.as_bytes(), &f).unwrap_or_else(|e| panic!("{p}: {e}"));
        regex::bytes::Regex::new(&format!("{}{t}", flags(false)))
            .unwrap_or_else(|e| panic!("{p} -> {t}: {e}"))
    }

    fn m(p: &str, syntax: Syntax, text: &str) -> Option<String> {
        re(p, syntax)
            .find(text.as_bytes())
            .map(|m| String::from_utf8_lossy(m.as_bytes()).into_owned())
    }

    #[test]
    fn bre_operators_are_escaped_and_bare_ones_literal() {
        use Syntax::Basic as B;
        assert_eq!(m("a\\(b\\)*c", B, "xabbbc").as_deref(), Some("abbbc"));
        assert_eq!(m("a\\(bc\\)*d", B, "xabcbd"), None);
        assert_eq!(m("a(b)", B, "a(b)").as_deref(), Some("a(b)"));
        assert_eq!(m("a+", B, "aa+").as_deref(), Some("a+"));
        assert_eq!(m("a\\+", B, "xaaa").as_deref(), Some("aaa"));
        assert_eq!(m("*a", B, "b*a").as_deref(), Some("*a"));
        assert_eq!(m("a^b$c", B, "a^b$c").as_deref(), Some("a^b$c"));
        assert_eq!(m("a\\{2\\}", B, "aaa").as_deref(), Some("aa"));
        assert_eq!(m("x\\|y", B, "y").as_deref(), Some("y"));
    }

    #[test]
    fn ere_braces_that_are_not_intervals_are_literal() {
        use Syntax::Extended as E;
        assert_eq!(m("a{2}", E, "aaa").as_deref(), Some("aa"));
        assert_eq!(m("a{x", E, "a{x").as_deref(), Some("a{x"));
        assert_eq!(m("{1}", E, "{1}").as_deref(), Some("{1}"));
        assert_eq!(m("a**", E, "aaa").as_deref(), Some("aaa"));
        assert_eq!(m("(ab)+", E, "ababx").as_deref(), Some("abab"));
        assert_eq!(m("a)", E, "a)").as_deref(), Some("a)"));
    }

    #[test]
    fn brackets_follow_posix() {
        use Syntax::Extended as E;
        assert_eq!(m("[]a]+", E, "x]a]").as_deref(), Some("]a]"));
        assert_eq!(m("[\\n]", E, "\\").as_deref(), Some("\\"));
        assert_eq!(m("[^a]", E, "a\nb").as_deref(), Some("b"));
        assert_eq!(m("[[:digit:]]+", E, "ab123c").as_deref(), Some("123"));
        assert_eq!(m("[a-c-]+", E, "x-abc-y").as_deref(), Some("-abc-"));
        assert!(translate(
            b"[a",
            &Flavor {
                syntax: E,
                utf8: false
            }
        )
        .is_err());
        assert!(translate(
            b"[[:nope:]]",
            &Flavor {
                syntax: E,
                utf8: false
            }
        )
        .is_err());
    }

    #[test]
    fn fixed_strings_are_literal_and_bytes_stay_bytes() {
        assert_eq!(
            m("a.*b[", Syntax::Fixed, "xa.*b[").as_deref(),
            Some("a.*b[")
        );
        let f = Flavor {
            syntax: Syntax::Fixed,
            utf8: false,
        };
        let t = translate(b"\xff\x00", &f).unwrap();
        let r = regex::bytes::Regex::new(&format!("{}{t}", flags(false))).unwrap();
        assert!(r.is_match(b"a\xff\x00b"));
    }
}
