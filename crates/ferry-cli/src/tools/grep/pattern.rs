//! GNU grep's pattern languages (BRE, ERE, fixed strings) translated into
//! the `regex` crate's syntax, for matching whole buffers of lines at once.
//!
//! The translation keeps GNU's meaning where the two differ: in brackets a
//! backslash is an ordinary character and `]` may come first; BRE's
//! `\( \) \{ \} \| \+ \?` are the operators and the bare characters are
//! literals; a BRE `*` at the start of an expression is a literal, while an
//! ERE `*` `+` `?` `{m,n}` there is dropped with GNU's warning (after `^` it
//! repeats the anchor); braces follow glibc (see `interval`). No match may
//! cross a line end: no class takes the newline (see `bracket`), and `^`
//! `$` are line anchors (multi-line mode).
//!
//! Back-references (`\1`-`\9`, in BRE and as GNU's ERE extension) come out
//! as `\k<N>`, numbered across the whole pattern list; a pattern list with
//! any goes to the backtracking engine (see `matcher`).

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
    /// `-i`: GNU then reads `[:upper:]` and `[:lower:]` as `[:alpha:]`.
    pub icase: bool,
    /// `-z`: the search sees each newline in the data as a NUL (they
    /// swap places, so that NULs end lines), so the space class and its
    /// complement count NUL as the newline they stand for.
    pub nul_data: bool,
}

use super::bracket;
use super::interval::interval;

/// A translation error, worded as GNU grep words it.
pub type Error = String;

struct Out<'a> {
    s: String,
    /// Where the last atom (what a quantifier applies to) begins in `s`.
    atom: Option<usize>,
    /// The last thing pushed was a quantifier.
    quantified: bool,
    /// This branch (since the start, `(` or `|`) has an atom that is not
    /// an anchor: an ERE quantifier before one is "at start of expression".
    real: bool,
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
        self.real = true;
        push_lit(&mut self.s, c, self.flavor.utf8);
    }

    fn raw_atom(&mut self, text: &str) {
        self.begin_atom();
        self.real = true;
        self.s.push_str(text);
    }

    /// An anchor (`^ $ \< \> \b \B`): an atom a quantifier can repeat
    /// when `atom`, else a plain assertion. Returns `atom`.
    fn anchor(&mut self, text: &str, atom: bool) -> bool {
        if !atom {
            self.assertion(text);
            return false;
        }
        let real = self.real;
        self.raw_atom(&format!("(?:{text})"));
        self.real = real;
        true
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
pub enum Lit {
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

/// A translated pattern.
#[derive(Debug, Default)]
pub struct Translated {
    /// The regex, in the `regex` crate's syntax (with `\k<N>` for a
    /// back-reference, which only the backtracking engine knows).
    pub re: String,
    /// It has back-references: only a backtracking engine can run it.
    pub backrefs: bool,
    /// The capturing groups it opens (a later pattern's are numbered after
    /// them).
    pub groups: usize,
    /// GNU's warnings about it (`* at start of expression`), for stderr.
    pub warnings: Vec<String>,
}

/// The back-references a branch may make: groups 1-9 closed before it
/// (GNU does not let one alternative refer to another's groups).
struct Refs {
    /// Closed groups visible here (bit N for group N).
    visible: u16,
    /// Per open group (and the whole pattern): visible at its start, and
    /// closed in its earlier alternatives.
    levels: Vec<(u16, u16)>,
    /// The local number of each open group.
    open: Vec<usize>,
    /// Groups opened so far.
    count: usize,
}

impl Refs {
    fn open(&mut self) -> usize {
        self.count += 1;
        self.open.push(self.count);
        self.levels.push((self.visible, 0));
        self.count
    }

    fn alternative(&mut self) {
        if let Some(l) = self.levels.last_mut() {
            l.1 |= self.visible;
            self.visible = l.0;
        }
    }

    fn close(&mut self) {
        if let Some((_, acc)) = self.levels.pop() {
            self.visible |= acc;
        }
        if let Some(n) = self.open.pop() {
            if n <= 9 {
                self.visible |= 1 << n;
            }
        }
    }
}

/// Translates one pattern (one line of grep's pattern list) whose groups
/// come after `group_base` others in the combined regex.
pub fn translate(p: &[u8], f: &Flavor, group_base: usize) -> Result<Translated, Error> {
    let lits = decode(p, f.utf8);
    let mut out = Out {
        s: String::new(),
        atom: None,
        quantified: false,
        real: false,
        flavor: f,
    };
    let mut t = Translated::default();
    if f.syntax == Syntax::Fixed {
        for &c in &lits {
            out.literal_char(c);
        }
        t.re = out.s;
        return Ok(t);
    }
    let bre = f.syntax == Syntax::Basic;
    let ch = |i: usize| match lits.get(i) {
        Some(Lit::Char(c)) => Some(*c),
        _ => None,
    };
    let mut refs = Refs {
        visible: 0,
        levels: vec![(0, 0)],
        open: Vec::new(),
        count: 0,
    };
    // At the start of an expression (start, after a group's opening or an
    // alternation): `*` is literal there.
    let mut at_start = true;
    // ERE: the last thing was `^` (a quantifier then repeats it).
    let mut caret = false;
    // ERE in a multibyte locale: the last thing was a word anchor, which
    // GNU leaves to glibc's regex (a `{` after it is dropped alone).
    let mut word_anchor = false;
    let mut i = 0;
    while i < lits.len() {
        let c = lits[i];
        let start_here = at_start;
        at_start = false;
        let after_caret = std::mem::take(&mut caret);
        let after_word_anchor = std::mem::take(&mut word_anchor);
        let Lit::Char(c) = c else {
            out.literal_char(c);
            i += 1;
            continue;
        };
        match c {
            '\\' => {
                let Some(&n) = lits.get(i + 1) else {
                    return Err("Trailing backslash".into());
                };
                i += 2;
                let Lit::Char(n) = n else {
                    out.literal_char(n);
                    continue;
                };
                match n {
                    '(' if bre => {
                        refs.open();
                        out.s.push('(');
                        out.atom = None;
                        out.real = false;
                        at_start = true;
                        continue;
                    }
                    ')' if bre => {
                        if refs.open.is_empty() {
                            return Err("Unmatched ) or \\)".into());
                        }
                        refs.close();
                        close_group(&mut out);
                        continue;
                    }
                    '|' if bre => {
                        refs.alternative();
                        out.assertion("|");
                        out.real = false;
                        at_start = true;
                        continue;
                    }
                    '{' if bre => {
                        if start_here || !out.real {
                            out.literal_char(Lit::Char('{'));
                            continue;
                        }
                        match interval(&lits, i, true)? {
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
                        let k = n as usize - '0' as usize;
                        if refs.visible & (1 << k) == 0 {
                            return Err("Invalid back reference".into());
                        }
                        t.backrefs = true;
                        out.raw_atom(&format!("\\k<{}>", group_base + k));
                    }
                    'w' | 'W' | 's' | 'S' => {
                        out.raw_atom(&bracket::escape_class(n, f.utf8, f.nul_data))
                    }
                    'b' | 'B' | '<' | '>' | '`' | '\'' => {
                        let text = match (n, f.utf8) {
                            ('b', true) => "\\b",
                            ('b', false) => "(?-u:\\b)",
                            ('B', true) => "\\B",
                            ('B', false) => "(?-u:\\B)",
                            ('<', true) => "\\b{start}",
                            ('<', false) => "(?-u:\\b{start})",
                            ('>', true) => "\\b{end}",
                            ('>', false) => "(?-u:\\b{end})",
                            ('`', _) => "^",
                            _ => "$",
                        };
                        // GNU's dfa repeats a quantified anchor; in a
                        // multibyte locale it leaves the word anchors to
                        // glibc's regex, which drops the quantifier in ERE
                        // and reads a BRE `*` after them as a literal.
                        let word = matches!(n, 'b' | 'B' | '<' | '>');
                        caret = out.anchor(text, if word { !f.utf8 } else { !bre });
                        word_anchor = word && f.utf8 && !bre;
                    }
                    other => out.literal_char(Lit::Char(other)),
                }
                continue;
            }
            '[' => {
                let (class, next) = bracket::bracket(&lits, i + 1, f)?;
                out.raw_atom(&class);
                i = next;
                continue;
            }
            '.' => out.raw_atom(if f.utf8 { "." } else { "(?-u:.)" }),
            '*' if bre && (start_here || out.atom.is_none() || !out.real) => {
                // GNU: a leading `*` (or one after only anchors) is literal.
                out.literal_char(Lit::Char('*'));
            }
            '*' | '+' | '?' if !bre && (out.atom.is_none() || after_caret) => {
                // GNU's ERE: a quantifier with nothing to repeat is
                // dropped, with a warning; after an anchor it repeats the
                // anchor (warning if nothing else came first).
                if !out.real {
                    t.warnings.push(format!("{c} at start of expression"));
                    if ch(i + 1) == Some(')') && !refs.open.is_empty() {
                        // glibc then reads the `)` as closing nothing.
                        return Err("Unmatched ( or \\(".into());
                    }
                }
                if after_caret {
                    out.quantifier(&c.to_string());
                    caret = true;
                }
            }
            '*' => out.quantifier("*"),
            '^' if !bre => caret = out.anchor("^", true),
            '^' => {
                // BRE: an anchor at the start (not a second `^`).
                if start_here && !after_caret {
                    out.assertion("^");
                    at_start = true;
                    caret = true;
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
                    caret = out.anchor("$", !bre);
                } else {
                    out.literal_char(Lit::Char('$'));
                }
            }
            '(' if !bre => {
                refs.open();
                out.s.push('(');
                out.atom = None;
                out.real = false;
                at_start = true;
            }
            ')' if !bre => {
                if refs.open.is_empty() {
                    // POSIX leaves a lone `)` to the implementation; GNU
                    // takes it literally.
                    out.literal_char(Lit::Char(')'));
                } else {
                    refs.close();
                    close_group(&mut out);
                }
            }
            '|' if !bre => {
                refs.alternative();
                out.assertion("|");
                out.real = false;
                at_start = true;
            }
            '+' | '?' if !bre => out.quantifier(if c == '+' { "+" } else { "?" }),
            '{' if !bre => {
                if out.atom.is_none() || after_caret {
                    // Nothing to repeat: a valid interval is dropped with
                    // a warning, anything else is a literal brace.
                    match interval(&lits, i + 1, false) {
                        Ok(Some((q, next))) => {
                            if !out.real {
                                t.warnings.push("{...} at start of expression".into());
                            }
                            if after_word_anchor {
                                // glibc drops the `{`; the rest is text.
                                i += 1;
                                continue;
                            }
                            if after_caret {
                                out.quantifier(&q);
                                caret = true;
                            }
                            i = next;
                            continue;
                        }
                        _ => out.literal_char(Lit::Char('{')),
                    }
                } else {
                    match interval(&lits, i + 1, false)? {
                        Some((q, next)) => {
                            out.quantifier(&q);
                            i = next;
                            continue;
                        }
                        // Not an interval: a literal brace, as GNU reads it.
                        None => out.literal_char(Lit::Char('{')),
                    }
                }
            }
            other => out.literal_char(Lit::Char(other)),
        }
        i += 1;
    }
    if !refs.open.is_empty() {
        return Err("Unmatched ( or \\(".into());
    }
    t.re = out.s;
    t.groups = refs.count;
    Ok(t)
}

fn close_group(out: &mut Out<'_>) {
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
    out.real = true;
}

#[cfg(test)]
#[path = "pattern_tests.rs"]
mod tests;
