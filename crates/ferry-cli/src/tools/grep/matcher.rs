//! The compiled pattern list: one regex over whole buffers of lines (so a
//! literal is found with a vectorised substring search, not line by line),
//! plus what `-o` needs to print GNU's leftmost-longest matches.

use super::pattern::{self, Flavor, Syntax};
use regex::bytes::Regex;
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::{Anchored, Input, MatchKind};

/// How the patterns must match a line.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Whole {
    /// Anywhere in the line.
    Any,
    /// As a whole word (`-w`).
    Word,
    /// As the whole line (`-x`).
    Line,
}

pub struct Matcher {
    re: Regex,
    /// `-w`: candidates are checked for word boundaries GNU's way.
    word: bool,
    /// Characters are UTF-8 (else bytes).
    utf8: bool,
    /// Forward DFA that reports every match end (MatchKind::All): the
    /// longest match from a start for `-o`, every shorter one for `-w`.
    ends: Option<(DFA, Cache)>,
    /// A single literal pattern matched anywhere, case and all: found with
    /// a vectorised substring search (no regex call per match).
    literal: Option<memchr::memmem::Finder<'static>>,
}

impl Matcher {
    /// Compiles the pattern list (one pattern per element).
    pub fn new(
        patterns: &[Vec<u8>],
        flavor: Flavor,
        ignore_case: bool,
        whole: Whole,
    ) -> Result<Matcher, String> {
        let special: &[u8] = match flavor.syntax {
            Syntax::Fixed => b"",
            Syntax::Basic => b"\\[].*^$",
            Syntax::Extended => b"\\[].*^$+?{}()|",
        };
        let literal = match patterns {
            [p] if whole == Whole::Any
                && !ignore_case
                && !p.is_empty()
                && !p.iter().any(|b| special.contains(b)) =>
            {
                Some(memchr::memmem::Finder::new(p).into_owned())
            }
            _ => None,
        };
        let mut alts = Vec::with_capacity(patterns.len());
        for p in patterns {
            alts.push(pattern::translate(p, &flavor)?);
        }
        let core = if alts.len() == 1 {
            alts.pop().unwrap_or_default()
        } else {
            alts.iter()
                .map(|a| format!("(?:{a})"))
                .collect::<Vec<_>>()
                .join("|")
        };
        let body = match whole {
            Whole::Any | Whole::Word => core,
            Whole::Line => format!("^(?:{core})$"),
        };
        let flags = format!(
            "{}{}",
            pattern::flags(flavor.utf8),
            if ignore_case { "(?i)" } else { "" }
        );
        let full = format!("{flags}{body}");
        let re = regex::bytes::RegexBuilder::new(&full)
            .size_limit(1 << 28)
            .dfa_size_limit(1 << 28)
            .build()
            .map_err(|e| match e {
                regex::Error::CompiledTooBig(_) => "regular expression too big".to_string(),
                other => other.to_string(),
            })?;
        let ends = if whole == Whole::Word || flavor.syntax != Syntax::Fixed {
            DFA::builder()
                .configure(DFA::config().match_kind(MatchKind::All))
                .syntax(regex_automata::util::syntax::Config::new().utf8(false))
                .thompson(regex_automata::nfa::thompson::Config::new().utf8(false))
                .build(&full)
                .ok()
                .map(|d| {
                    let c = d.create_cache();
                    (d, c)
                })
        } else {
            None
        };
        Ok(Matcher {
            re,
            word: whole == Whole::Word,
            utf8: flavor.utf8,
            ends,
            literal,
        })
    }

    /// The first match at or after `at` in `hay` (which may hold many
    /// lines): its start and end. With `-w`, GNU's rule: the leftmost
    /// match, else a shorter one from the same start, else the next start,
    /// until one has no word character on either side.
    pub fn find_at(&mut self, hay: &[u8], at: usize) -> Option<(usize, usize)> {
        if !self.word {
            return self.re.find_at(hay, at).map(|m| (m.start(), m.end()));
        }
        let mut from = at;
        let mut ends = Vec::new();
        while from <= hay.len() {
            let m = self.re.find_at(hay, from)?;
            let s = m.start();
            ends.clear();
            if !self.all_ends(hay, s, &mut ends) {
                ends.clear();
                ends.push(m.end());
            }
            if !self.is_word_at(hay, s, true) {
                for &e in ends.iter().rev() {
                    if !self.is_word_at(hay, e, false) {
                        return Some((s, e));
                    }
                }
            }
            // GNU looks further on a byte at a time, even inside a
            // character.
            from = s + 1;
        }
        None
    }

    /// Every end of a match starting at `s`, ascending; false if the DFA
    /// gave up (then the caller falls back to the regex's own end).
    fn all_ends(&mut self, hay: &[u8], s: usize, out: &mut Vec<usize>) -> bool {
        let Some((dfa, cache)) = self.ends.as_mut() else {
            return false;
        };
        let input = Input::new(hay).range(s..).anchored(Anchored::Yes);
        let Ok(mut sid) = dfa.start_state_forward(cache, &input) else {
            return false;
        };
        for (k, &b) in hay[s..].iter().enumerate() {
            let Ok(next) = dfa.next_state(cache, sid, b) else {
                return false;
            };
            sid = next;
            if sid.is_tagged() {
                if sid.is_match() {
                    // Matches show one byte late.
                    out.push(s + k);
                } else if sid.is_dead() {
                    return true;
                } else if sid.is_quit() || sid.is_unknown() {
                    return false;
                }
            }
        }
        match dfa.next_eoi_state(cache, sid) {
            Ok(eoi) => {
                if eoi.is_match() {
                    out.push(hay.len());
                }
                true
            }
            Err(_) => false,
        }
    }

    /// The length of the character at `i` (1 for a byte that is none, or
    /// in a single-byte locale): searches move on by characters.
    fn char_len(&self, hay: &[u8], i: usize) -> usize {
        if !self.utf8 {
            return 1;
        }
        let hi = (i + 4).min(hay.len());
        hay.get(i..hi)
            .and_then(|t| t.utf8_chunks().next())
            .and_then(|ch| ch.valid().chars().next())
            .map_or(1, char::len_utf8)
    }

    /// True if the character just before (`before`) or at `i` is a word
    /// character: alphanumeric or `_`, as the locale decodes it (a byte
    /// that is no character is not one).
    fn is_word_at(&self, hay: &[u8], i: usize, before: bool) -> bool {
        if !self.utf8 {
            let b = if before {
                if i == 0 {
                    return false;
                }
                hay[i - 1]
            } else {
                match hay.get(i) {
                    Some(&b) => b,
                    None => return false,
                }
            };
            return b.is_ascii_alphanumeric() || b == b'_';
        }
        let c = if before {
            // The character holding the byte before `i`.
            if i == 0 {
                return false;
            }
            let lo = i.saturating_sub(4);
            (lo..i).rev().find_map(|k| {
                let t = &hay[k..(k + 4).min(hay.len())];
                let c = t.utf8_chunks().next()?.valid().chars().next()?;
                (k + c.len_utf8() > i - 1).then_some(c)
            })
        } else {
            let hi = (i + 4).min(hay.len());
            hay[i..hi]
                .utf8_chunks()
                .next()
                .and_then(|ch| ch.valid().chars().next())
        };
        c.is_some_and(|c| c.is_alphanumeric() || c == '_')
    }

    /// The start of the first match at or after `at` (a line that has one
    /// is selected).
    #[inline]
    pub fn first_line_match(&mut self, hay: &[u8], at: usize) -> Option<usize> {
        if let Some(f) = &self.literal {
            return f.find(&hay[at..]).map(|i| at + i);
        }
        if self.word {
            return self.find_at(hay, at).map(|(s, _)| s);
        }
        self.re.find_at(hay, at).map(|m| m.start())
    }

    /// The matches in one line, as GNU's `-o` prints them: leftmost, then
    /// longest, empty ones skipped.
    pub fn each_match(
        &mut self,
        line: &[u8],
        mut f: impl FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let mut at = 0;
        let mut ends = Vec::new();
        while at <= line.len() {
            let Some((s, mut e)) = self.find_at(line, at) else {
                break;
            };
            if !self.word {
                ends.clear();
                if self.all_ends(line, s, &mut ends) {
                    e = ends.last().copied().unwrap_or(e).max(e);
                }
            }
            if e == s {
                // An empty match: GNU skips it and tries one character on.
                at = s + self.char_len(line, s);
                continue;
            }
            f(&line[s..e])?;
            at = e;
        }
        Ok(())
    }
}
