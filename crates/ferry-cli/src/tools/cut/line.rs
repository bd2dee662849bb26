//! Cutting whole lines: a line handed over in one piece, cut in place,
//! only the selected bytes copied into the output.

use super::list::{Kind, Ranges};
use super::Out;
use std::io;

/// What to cut and how, from the options.
pub(super) struct Cut {
    pub(super) kind: Kind,
    pub(super) ranges: Ranges,
    pub(super) delim: u8,
    pub(super) out_delim: Option<Vec<u8>>,
    pub(super) only_delimited: bool,
    pub(super) eol: u8,
    /// For -b: the selected prefix is one range from 1 (the common case).
    pub(super) prefix: Option<u64>,
}

impl Cut {
    /// Cuts one line (without its terminator) and ends it.
    #[inline]
    pub(super) fn line(&self, line: &[u8], out: &mut Out) -> io::Result<()> {
        match self.kind {
            Kind::Bytes => self.bytes(line, out),
            Kind::Fields => self.fields(line, out),
        }
    }

    #[inline]
    fn bytes(&self, line: &[u8], out: &mut Out) -> io::Result<()> {
        if let Some(n) = self.prefix {
            let k = (n.min(line.len() as u64)) as usize;
            out.write(&line[..k])?;
            return out.byte(self.eol);
        }
        let mut printed = false;
        for &(lo, hi) in &self.ranges.0 {
            if lo > line.len() as u64 {
                break;
            }
            let a = (lo - 1) as usize;
            let b = hi.min(line.len() as u64) as usize;
            if let Some(d) = &self.out_delim {
                if printed {
                    out.write(d)?;
                }
            }
            out.write(&line[a..b])?;
            printed = true;
        }
        out.byte(self.eol)
    }

    fn fields(&self, line: &[u8], out: &mut Out) -> io::Result<()> {
        if memchr::memchr(self.delim, line).is_none() {
            if self.only_delimited {
                return Ok(());
            }
            out.write(line)?;
            return out.byte(self.eol);
        }
        let od: &[u8] = match &self.out_delim {
            Some(d) => d,
            None => std::slice::from_ref(&self.delim),
        };
        let mut printed = false;
        for (k, field) in line.split(|&b| b == self.delim).enumerate() {
            if self.ranges.selects(k as u64 + 1) {
                if printed {
                    out.write(od)?;
                }
                out.write(field)?;
                printed = true;
            }
        }
        out.byte(self.eol)
    }
}
