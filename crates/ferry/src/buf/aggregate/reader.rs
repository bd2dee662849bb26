//! Reading an aggregate through `std::io`.

use super::Aggregate;
use std::io::{self, BufRead, Read};

/// A cursor over an [`Aggregate`] implementing `Read` and `BufRead`.
/// `fill_buf` returns the rest of the current slice itself: no copy.
///
/// ```
/// use std::io::BufRead;
/// let a: ferry::Aggregate = [ferry::Buf::from_static(b"a\nb"), ferry::Buf::from_static(b"c\n")]
///     .into_iter()
///     .collect();
/// let lines: Vec<String> = a.reader().lines().map(|l| l.unwrap()).collect();
/// assert_eq!(lines, ["a", "bc"]);
/// ```
#[derive(Clone, Debug)]
pub struct AggregateReader<'a> {
    agg: &'a Aggregate,
    /// Index of the current slice.
    idx: usize,
    /// Offset inside the current slice.
    off: usize,
    /// Bytes consumed so far.
    pos: usize,
}

impl<'a> AggregateReader<'a> {
    pub(super) fn new(agg: &'a Aggregate) -> Self {
        AggregateReader {
            agg,
            idx: 0,
            off: 0,
            pos: 0,
        }
    }

    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> usize {
        self.agg.len() - self.pos
    }

    fn current(&self) -> &'a [u8] {
        match self.agg.bufs.get(self.idx) {
            Some(b) => &b.as_slice()[self.off..],
            None => &[],
        }
    }
}

impl Read for AggregateReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut done = 0;
        while done < out.len() {
            let c = self.current();
            if c.is_empty() {
                break;
            }
            let n = c.len().min(out.len() - done);
            out[done..done + n].copy_from_slice(&c[..n]);
            done += n;
            self.consume(n);
        }
        Ok(done)
    }
}

impl BufRead for AggregateReader<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        Ok(self.current())
    }

    fn consume(&mut self, mut amt: usize) {
        amt = amt.min(self.remaining());
        self.pos += amt;
        while amt > 0 {
            let left = self.agg.bufs[self.idx].len() - self.off;
            if amt < left {
                self.off += amt;
                return;
            }
            amt -= left;
            self.idx += 1;
            self.off = 0;
        }
    }
}
