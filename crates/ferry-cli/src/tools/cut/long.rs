//! Cutting a line handed over in parts: a line longer than a region (as
//! long as the input, from /dev/zero) is cut as it goes by, as GNU cut
//! cuts it a byte at a time, with only a little state carried from one
//! part to the next:
//!
//! ```text
//!   -b/-c:  the line's bytes so far, whether a range was printed
//!   -f:     the field number, whether a selected field was printed,
//!           and, where GNU holds it, the first field
//! ```
//!
//! GNU holds the first field until a delimiter shows (or the line ends)
//! when that decides what is printed: without -s when field 1 is not
//! selected (a line with no delimiter is printed whole), with -s when it
//! is (such a line is not printed at all). There memory grows with the
//! first field, as GNU's does, and "memory exhausted" ends the run where
//! GNU's ends. Everywhere else memory stays that of a region.
//!
//! With the line terminator as the delimiter (`-d $'\n'`) the whole input
//! is one line whose fields are the lines: it is cut here too, from the
//! regions as they come, the input's last terminator held back until the
//! next region shows whether it ends the line.

use super::line::Cut;
use super::list::Kind;
use super::{Failure, Out};
use ferry::Stream;
use std::io;

/// One line being cut in parts: [`part`](Self::part) for each part,
/// without terminator, then [`end`](Self::end).
pub(super) struct LongLine<'c> {
    cut: &'c Cut,
    /// -b/-c: bytes of the line before the current part.
    pos: u64,
    /// -b/-c: a range was printed (an output delimiter goes before the
    /// next one).
    printed: bool,
    /// -f: the current field's number, from 1.
    field: u64,
    /// -f: the current field is selected.
    selected: bool,
    /// -f: a selected field was printed (GNU's found_any_selected_field).
    found: bool,
    /// -f: the first field, while GNU holds it (see the module docs).
    first: Vec<u8>,
    /// -f: the first field is held until a delimiter.
    holds_first: bool,
}

impl<'c> LongLine<'c> {
    pub(super) fn new(cut: &'c Cut) -> LongLine<'c> {
        let mut l = LongLine {
            cut,
            pos: 0,
            printed: false,
            field: 1,
            selected: false,
            found: false,
            first: Vec::new(),
            holds_first: cut.only_delimited == cut.ranges.selects(1),
        };
        l.reset();
        l
    }

    /// The state of a line not yet begun.
    fn reset(&mut self) {
        self.pos = 0;
        self.printed = false;
        self.field = 1;
        self.selected = !self.holds_first && self.cut.ranges.selects(1);
        // A selected first field not held is "found" from its start.
        self.found = self.selected;
        self.first.clear();
        if self.first.capacity() > 1 << 20 {
            self.first = Vec::new();
        }
    }

    /// The next part of the line (no terminator in it).
    pub(super) fn part(&mut self, part: &[u8], out: &mut Out) -> io::Result<()> {
        match self.cut.kind {
            Kind::Bytes => self.bytes(part, out),
            Kind::Fields => self.fields(part, out),
        }
    }

    fn bytes(&mut self, part: &[u8], out: &mut Out) -> io::Result<()> {
        // Positions from 1: this part holds pos+1 ..= end.
        let (from, end) = (self.pos + 1, self.pos + part.len() as u64);
        self.pos = end;
        for &(lo, hi) in &self.cut.ranges.0 {
            if lo > end {
                break;
            }
            if hi < from {
                continue;
            }
            if lo >= from {
                if let (true, Some(d)) = (self.printed, &self.cut.out_delim) {
                    out.write(d)?;
                }
            }
            let a = (lo.max(from) - from) as usize;
            let b = (hi.min(end) + 1 - from) as usize;
            out.write(&part[a..b])?;
            self.printed = true;
        }
        Ok(())
    }

    fn fields(&mut self, mut part: &[u8], out: &mut Out) -> io::Result<()> {
        loop {
            let at = memchr::memchr(self.cut.delim, part);
            let field = &part[..at.unwrap_or(part.len())];
            if self.holds_first && self.field == 1 {
                hold(&mut self.first, field)?;
            } else if self.selected {
                out.write(field)?;
            }
            let Some(i) = at else { return Ok(()) };
            self.delimiter(out)?;
            part = &part[i + 1..];
        }
    }

    /// A delimiter: the current field ends, the next begins.
    fn delimiter(&mut self, out: &mut Out) -> io::Result<()> {
        if self.holds_first && self.field == 1 && self.cut.ranges.selects(1) {
            out.write(&self.first)?;
            self.found = true;
        }
        self.next_field(out)
    }

    /// The next field begins: an output delimiter before it if it is
    /// selected and one was printed before.
    fn next_field(&mut self, out: &mut Out) -> io::Result<()> {
        self.field += 1;
        self.selected = self.cut.ranges.selects(self.field);
        if self.selected {
            if self.found {
                out.write(self.out_delim())?;
            }
            self.found = true;
        }
        Ok(())
    }

    fn out_delim(&self) -> &[u8] {
        match &self.cut.out_delim {
            Some(d) => d,
            None => std::slice::from_ref(&self.cut.delim),
        }
    }

    /// The line ends: its terminator where GNU writes one, and the state
    /// of a new line.
    pub(super) fn end(&mut self, out: &mut Out) -> io::Result<()> {
        let eol = self.cut.eol;
        match self.cut.kind {
            Kind::Bytes => out.byte(eol)?,
            Kind::Fields if self.holds_first && self.field == 1 => {
                // No delimiter: the line is printed whole, unless -s.
                if !self.cut.only_delimited {
                    out.write(&self.first)?;
                    out.byte(eol)?;
                }
            }
            Kind::Fields => {
                if self.found || !(self.cut.only_delimited && self.field == 1) {
                    out.byte(eol)?;
                }
            }
        }
        self.reset();
        Ok(())
    }

    /// `-d $'\n'`: the input's last byte was the terminator and nothing
    /// follows. GNU reads a held first field up to it as delimited (a
    /// field printed then does not count as found); elsewhere it only ends
    /// the line.
    fn end_at_last_terminator(&mut self, out: &mut Out) -> io::Result<()> {
        if self.holds_first && self.field == 1 {
            if self.cut.ranges.selects(1) {
                out.write(&self.first)?;
            }
            self.next_field(out)?;
        }
        self.end(out)
    }
}

/// Appends to the held first field, growing it with `try_reserve`:
/// `OutOfMemory` (GNU's "memory exhausted") when that fails.
fn hold(first: &mut Vec<u8>, bytes: &[u8]) -> io::Result<()> {
    first
        .try_reserve(bytes.len())
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    first.extend_from_slice(bytes);
    Ok(())
}

/// Fields when the delimiter is the line terminator too (`-d $'\n'`):
/// GNU's reading, where every terminator but the input's last one
/// separates fields, so the whole input is one line, cut as its regions
/// come.
pub(super) fn delimiter_ends_lines(
    s: &Stream,
    cut: &Cut,
    region: usize,
    out: &mut Out,
) -> Result<(), Failure> {
    let mut line = LongLine::new(cut);
    let w = Failure::cutting;
    // The previous region ended in a terminator, not yet given to `line`.
    let mut held_back = false;
    let mut any = false;
    loop {
        let r = s.salloc(region).map_err(Failure::read)?;
        let Some((&last, data)) = r.split_last() else {
            break;
        };
        any = true;
        if held_back {
            line.part(&[cut.eol], out).map_err(w)?;
        }
        held_back = last == cut.eol;
        let upto = if held_back { data } else { &r[..] };
        line.part(upto, out).map_err(w)?;
    }
    if held_back {
        line.end_at_last_terminator(out).map_err(w)
    } else if any {
        line.end(out).map_err(w)
    } else {
        Ok(())
    }
}
