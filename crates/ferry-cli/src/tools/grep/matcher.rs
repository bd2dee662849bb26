//! The compiled pattern list: one regex over whole buffers of lines (so a
//! literal is found with a vectorised substring search, not line by line),
//! plus what `-o` needs to print GNU's leftmost-longest matches.

use super::pattern::{self, Flavor, Syntax};
use crate::tools::locale;
use regex::bytes::Regex;
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::{Anchored, Input, MatchKind};
use std::cell::Cell;

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

/// The engine the pattern list runs on.
enum Engine {
    /// The `regex` crate: no back-references, linear time.
    Fast(Regex),
    /// fancy-regex, a backtracking engine: only for patterns with
    /// back-references. True in a UTF-8 locale; set once a search gave up
    /// (ran past the step limit).
    Back(fancy_regex::Regex, bool, Cell<bool>),
}

/// A backtracking search from `at`. In a UTF-8 locale fancy-regex moves
/// its start on by the length a lead byte announces, so after an invalid
/// byte it would start inside characters: each stretch of valid UTF-8 is
/// searched on its own (anchors still see the whole haystack), then a
/// match starting at the invalid byte itself. A search that runs past the
/// step limit counts as no match and sets `gave_up`.
fn back_find(
    re: &fancy_regex::Regex,
    hay: &[u8],
    at: usize,
    utf8: bool,
    gave_up: &Cell<bool>,
) -> Option<(usize, usize)> {
    use fancy_regex::RegexInput;
    let run = |inp: RegexInput<'_, [u8]>| match re.find_input(inp) {
        Ok(m) => m.map(|m| (m.start(), m.end())),
        Err(_) => {
            gave_up.set(true);
            None
        }
    };
    let mut pos = at;
    loop {
        let bad = if utf8 {
            pos + hay[pos..]
                .utf8_chunks()
                .next()
                .map_or(hay.len() - pos, |c| c.valid().len())
        } else {
            hay.len()
        };
        if bad >= hay.len() {
            return run(RegexInput::new(hay).from_pos(pos));
        }
        if let Some(m) = run(RegexInput::new(hay).range(pos..bad)) {
            return Some(m);
        }
        if let Some(m) = run(RegexInput::new(hay).from_pos(bad).anchored(true)) {
            return Some(m);
        }
        pos = bad + 1;
    }
}

impl Engine {
    /// The leftmost match at or after `at`. (A backtracking search that
    /// runs past its step limit counts as no match, and is noted.)
    #[inline]
    fn find_at(&self, hay: &[u8], at: usize) -> Option<(usize, usize)> {
        match self {
            Engine::Fast(re) => re.find_at(hay, at).map(|m| (m.start(), m.end())),
            Engine::Back(re, utf8, gave_up) => back_find(re, hay, at, *utf8, gave_up),
        }
    }
}

pub struct Matcher {
    re: Engine,
    /// GNU's warnings about the patterns (`* at start of expression`).
    pub warnings: Vec<String>,
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
    /// Compiles the pattern list (one pattern per element). An error
    /// comes with the index of the pattern at fault, where there is one.
    pub fn new(
        patterns: &[Vec<u8>],
        flavor: Flavor,
        ignore_case: bool,
        whole: Whole,
    ) -> Result<Matcher, (Option<usize>, String)> {
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
        let mut warnings = Vec::new();
        let mut groups = 0;
        let mut backrefs = false;
        for (k, p) in patterns.iter().enumerate() {
            let t = pattern::translate(p, &flavor, groups).map_err(|e| (Some(k), e))?;
            groups += t.groups;
            backrefs |= t.backrefs;
            warnings.extend(t.warnings);
            alts.push(t.re);
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
        let re = if backrefs {
            // Only a pattern list with back-references goes to the
            // backtracking engine; the rest keep the fast one.
            Engine::Back(
                fancy_regex::RegexBuilder::new(&full)
                    .bytes_mode(if flavor.utf8 {
                        fancy_regex::BytesMode::UnicodeBytes
                    } else {
                        fancy_regex::BytesMode::Ascii
                    })
                    .backtrack_limit(1 << 30)
                    .build()
                    .map_err(|e| (None, e.to_string()))?,
                flavor.utf8,
                Cell::new(false),
            )
        } else {
            Engine::Fast(
                regex::bytes::RegexBuilder::new(&full)
                    .size_limit(1 << 28)
                    .dfa_size_limit(1 << 28)
                    .build()
                    .map_err(|e| match e {
                        regex::Error::CompiledTooBig(_) => {
                            (None, "regular expression too big".to_string())
                        }
                        other => (None, other.to_string()),
                    })?,
            )
        };
        let ends = if !backrefs && (whole == Whole::Word || flavor.syntax != Syntax::Fixed) {
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
            warnings,
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
            return self.re.find_at(hay, at);
        }
        let mut from = at;
        let mut ends = Vec::new();
        while from <= hay.len() {
            let (s, m_end) = self.re.find_at(hay, from)?;
            ends.clear();
            if !self.all_ends(hay, s, &mut ends) {
                ends.clear();
                ends.push(m_end);
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
        c.is_some_and(|c| c == '_' || locale::is_alnum(c))
    }

    /// True if a backtracking search gave up somewhere (its lines may have
    /// been missed).
    pub fn gave_up(&self) -> bool {
        matches!(&self.re, Engine::Back(_, _, g) if g.get())
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
        self.re.find_at(hay, at).map(|(s, _)| s)
    }

    /// The matches in one line, as GNU's `-o` prints them: leftmost, then
    /// longest, empty ones skipped. `f` gets each one's start and end.
    pub fn each_match(
        &mut self,
        line: &[u8],
        mut f: impl FnMut(usize, usize) -> std::io::Result<()>,
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
            f(s, e)?;
            at = e;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn back(p: &str, utf8: bool, limit: usize) -> fancy_regex::Regex {
        fancy_regex::RegexBuilder::new(p)
            .bytes_mode(if utf8 {
                fancy_regex::BytesMode::UnicodeBytes
            } else {
                fancy_regex::BytesMode::Ascii
            })
            .backtrack_limit(limit)
            .build()
            .unwrap()
    }

    #[test]
    fn backtracking_restarts_after_invalid_utf8() {
        let re = back("(?m)(.)\\k<1>", true, 1 << 20);
        let g = Cell::new(false);
        // An invalid byte, then `x` and `éé`.
        let hay = b"\xffx\xc3\xa9\xc3\xa9";
        assert_eq!(back_find(&re, hay, 0, true, &g), Some((2, 6)));
        assert!(!g.get());
    }

    #[test]
    fn a_search_past_the_step_limit_is_noted() {
        let re = back("(?m)(a*)*\\k<1>b", false, 50);
        let g = Cell::new(false);
        assert_eq!(back_find(&re, &[b'a'; 40], 0, false, &g), None);
        assert!(g.get());
    }
}
