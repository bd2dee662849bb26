//! One output line as GNU grep writes it: the group separator, the head
//! (file name, line number, byte offset, each followed by `:` on a
//! selected line and `-` on a context line; `-Z` puts a NUL after the
//! name, `-T` pads the numbers and adds a tab), the text with its matches
//! coloured, and the line end.

use super::search::{valid_for_glibc, Search};
use std::io;

impl Search<'_> {
    /// The line data[ls..le] of the current data: selected, or context.
    pub(super) fn emit(
        &mut self,
        data: &[u8],
        ls: usize,
        le: usize,
        selected: bool,
        group: bool,
    ) -> io::Result<()> {
        let n = if self.o.numbers {
            self.line_at(data, ls)
        } else {
            0
        };
        let off = self.base + ls as u64;
        self.emit_line(&data[ls..le], off, n, selected, group)
    }

    /// A line at file offset `off`, numbered `n` (when numbers are shown).
    /// `group`: it starts a group (a selected line, or the first of its
    /// leading context), where a group separator may go.
    pub(super) fn emit_line(
        &mut self,
        line: &[u8],
        off: u64,
        n: u64,
        selected: bool,
        group: bool,
    ) -> io::Result<()> {
        if self.o.context() && group {
            if self.printed && self.last_end != Some(off) {
                if let Some(sep) = &self.o.group_sep {
                    let mut b = std::mem::take(&mut self.scratch);
                    b.clear();
                    match &self.o.color {
                        Some(c) => c.wrap(&c.se, sep, &mut b),
                        None => b.extend_from_slice(sep),
                    }
                    b.push(b'\n');
                    let r = self.out.write(&b);
                    self.scratch = b;
                    r?;
                }
            }
            self.printed = true;
        }
        if !self.o.only && !self.o.text && self.o.utf8 && !valid_for_glibc(line) {
            // Not valid in the locale: GNU calls the file binary and holds
            // the line back (its group still counts as output).
            self.encoding_held_back = true;
            return Ok(());
        }
        if self.o.context() {
            self.last_end = Some(off + line.len() as u64 + 1);
        }
        if self.o.only {
            // Context lines are not shown, though they still join groups.
            if !selected || self.o.invert {
                return Ok(());
            }
            return self.only_matching(line, off, n);
        }
        let mut b = std::mem::take(&mut self.scratch);
        b.clear();
        self.head(&mut b, off, n, selected, !line.is_empty());
        self.text(&mut b, line, selected);
        b.push(self.o.eol());
        let r = self.out.write(&b);
        self.scratch = b;
        r?;
        if self.o.line_buffered {
            self.out.flush()?;
        }
        Ok(())
    }

    /// `-o`: each match on a line of its own, with the head (its byte
    /// offset is the match's).
    fn only_matching(&mut self, line: &[u8], off: u64, n: u64) -> io::Result<()> {
        let Some(m) = self.m.as_deref_mut() else {
            return Ok(());
        };
        let mut parts = Vec::new();
        m.each_match(line, |s, e| {
            parts.push((s, e));
            Ok(())
        })?;
        let mut b = std::mem::take(&mut self.scratch);
        for (s, e) in parts {
            let part = &line[s..e];
            if !self.o.text && self.o.utf8 && !valid_for_glibc(part) {
                self.encoding_held_back = true;
                continue;
            }
            b.clear();
            self.head(&mut b, off + s as u64, n, true, true);
            match &self.o.color {
                Some(c) => {
                    c.start(&c.ms, &mut b);
                    self.push_text(&mut b, part);
                    c.end(&c.ms, &mut b);
                }
                None => self.push_text(&mut b, part),
            }
            b.push(self.o.eol());
            self.out.write(&b)?;
            if self.o.line_buffered {
                self.out.flush()?;
            }
        }
        self.scratch = b;
        Ok(())
    }

    /// The head of an output line into `b` (`-T`'s tab only before text).
    fn head(&self, b: &mut Vec<u8>, off: u64, n: u64, selected: bool, text: bool) {
        let o = self.o;
        let sep: &[u8] = if selected { b":" } else { b"-" };
        let c = o.color.as_ref();
        let put_sep = |b: &mut Vec<u8>| match c {
            Some(c) => c.wrap(&c.se, sep, b),
            None => b.extend_from_slice(sep),
        };
        let mut any = false;
        if self.with_name {
            match c {
                Some(c) => c.wrap(&c.fn_, self.name, b),
                None => b.extend_from_slice(self.name),
            }
            if o.null_name {
                b.push(0);
            } else {
                put_sep(b);
            }
            any = true;
        }
        let number = |b: &mut Vec<u8>, v: u64, cap: Option<&String>| {
            let s = if o.initial_tab {
                format!("{v:>w$}", w = self.width)
            } else {
                v.to_string()
            };
            match (c, cap) {
                (Some(c), Some(cap)) => c.wrap(cap, s.as_bytes(), b),
                _ => b.extend_from_slice(s.as_bytes()),
            }
            put_sep(b);
        };
        if o.numbers {
            number(b, n, c.map(|c| &c.ln));
            any = true;
        }
        if o.byte_offset {
            number(b, off, c.map(|c| &c.bn));
            any = true;
        }
        if o.initial_tab && any && text {
            b.push(b'\t');
        }
    }

    /// The text of a line into `b`, coloured as GNU colours it: matches
    /// in a line that matches (a selected one, or a context one with -v),
    /// the rest in the line's colour.
    fn text(&mut self, b: &mut Vec<u8>, line: &[u8], selected: bool) {
        let o = self.o;
        let Some(c) = o.color.as_ref() else {
            self.push_text(b, line);
            return;
        };
        let swap = c.rv && self.o.invert;
        let line_cap = if selected != swap { &c.sl } else { &c.cx };
        let match_cap = if selected { &c.ms } else { &c.mc };
        let mut cur = 0;
        if selected != self.o.invert && !match_cap.is_empty() {
            if let Some(m) = self.m.as_deref_mut() {
                let mut parts = Vec::new();
                let _ = m.each_match(line, |s, e| {
                    parts.push((s, e));
                    Ok(())
                });
                for (s, e) in parts {
                    c.start(line_cap, b);
                    self.push_text(b, &line[cur..s]);
                    c.start(match_cap, b);
                    self.push_text(b, &line[s..e]);
                    c.end(match_cap, b);
                    cur = e;
                }
            }
        }
        if cur < line.len() {
            c.start(line_cap, b);
            self.push_text(b, &line[cur..]);
            c.end(line_cap, b);
        }
    }

    /// Line bytes as they were read: with -z, newlines and NULs were
    /// swapped for the search and are swapped back.
    fn push_text(&self, b: &mut Vec<u8>, t: &[u8]) {
        if self.o.nul_data {
            b.extend(t.iter().map(|&x| match x {
                0 => b'\n',
                b'\n' => 0,
                x => x,
            }));
        } else {
            b.extend_from_slice(t);
        }
    }
}
