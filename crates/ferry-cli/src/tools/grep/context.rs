//! Context lines (`-A`, `-B`, `-C`): found from the selected lines, so a
//! search without context never looks at them.
//!
//! Within the data being scanned, `floor` is where unhandled lines start:
//! lines before it were printed or passed over. Lines after a selected
//! one are trailing context while `after_left` lasts; the `-B` lines
//! before a selected one are looked for backwards from it, down to
//! `floor`, and before the data's start in `carry` (the last unprinted
//! lines of the data before).

use super::search::Search;
use std::io;

impl Search<'_> {
    /// Prints what is due before the selected line at `ls`: trailing
    /// context of earlier lines, then leading context.
    /// True if leading context started the selected line's group.
    pub(super) fn context_before(&mut self, data: &[u8], ls: usize) -> io::Result<bool> {
        self.trailing(data, ls)?;
        let want = self.o.before;
        if want == 0 || self.in_binary() {
            self.carry.clear();
            return Ok(false);
        }
        // Starts of up to `want` lines just before `ls`, not below floor.
        let mut starts = Vec::new();
        let mut p = ls;
        while starts.len() < want && p > self.floor {
            let s = memchr::memrchr(b'\n', &data[self.floor..p - 1])
                .map_or(self.floor, |i| self.floor + i + 1);
            starts.push(s);
            p = s;
        }
        let mut started = false;
        if starts.len() < want && self.floor == 0 {
            let from_carry = (want - starts.len()).min(self.carry.len());
            let skip = self.carry.len() - from_carry;
            let carried: Vec<_> = self.carry.drain(..).skip(skip).collect();
            for (line, off, n) in carried {
                self.emit_line(&line, off, n, false, !started)?;
                started = true;
            }
        }
        self.carry.clear();
        for &s in starts.iter().rev() {
            let e = memchr::memchr(b'\n', &data[s..]).map_or(data.len(), |i| s + i);
            self.emit(data, s, e, false, !started)?;
            started = true;
        }
        Ok(started)
    }

    /// Prints trailing context from `floor` up to `to` (at most
    /// `after_left` lines), moving `floor` past them.
    fn trailing(&mut self, data: &[u8], to: usize) -> io::Result<()> {
        if self.in_binary() {
            self.after_left = 0;
        }
        while self.after_left > 0 && self.floor < to {
            let s = self.floor;
            let e = memchr::memchr(b'\n', &data[s..to]).map_or(to, |i| s + i);
            self.emit(data, s, e, false, false)?;
            self.after_left -= 1;
            self.floor = e + 1;
        }
        Ok(())
    }

    /// At the end of the data: trailing context, then the lines kept for
    /// the next selected line's leading context. Stop once `-m` was
    /// reached and its trailing context is out.
    pub(super) fn end_of_data(&mut self, data: &[u8]) -> io::Result<super::Flow> {
        self.trailing(data, data.len())?;
        if self.draining && (self.after_left == 0 || self.floor < data.len()) {
            return Ok(super::Flow::Stop);
        }
        let want = self.o.before;
        if want == 0 || self.floor >= data.len() || self.in_binary() {
            if self.floor > 0 || want == 0 {
                self.carry.clear();
            }
            return Ok(super::Flow::Go);
        }
        let mut starts = Vec::new();
        let mut p = data.len();
        while starts.len() < want && p > self.floor {
            let s = memchr::memrchr(b'\n', &data[self.floor..p - 1])
                .map_or(self.floor, |i| self.floor + i + 1);
            starts.push(s);
            p = s;
        }
        if self.floor > 0 {
            self.carry.clear();
        }
        for &s in starts.iter().rev() {
            let e = memchr::memchr(b'\n', &data[s..]).map_or(data.len(), |i| s + i);
            let n = if self.o.numbers {
                self.line_at(data, s)
            } else {
                0
            };
            let off = self.base + s as u64;
            self.carry.push_back((data[s..e].to_vec(), off, n));
            if self.carry.len() > want {
                self.carry.pop_front();
            }
        }
        Ok(super::Flow::Go)
    }

    /// Output stops where a file turns binary (unless `-a`).
    fn in_binary(&self) -> bool {
        self.binary && !self.o.text
    }
}
