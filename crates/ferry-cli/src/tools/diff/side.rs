//! Side-by-side output (`-y`, `-W`, `--left-column`,
//! `--suppress-common-lines`), laid out as GNU diff lays it out, worked
//! out from its output:
//!
//! - with tab stops `t` (1 under `-t`), `off` = (W + t + 3) / 2t × t; each
//!   column holds `half` = max(0, min(off − 3, W − off)) print columns;
//!   the right one starts at `col2` = `off` if `half` < `off`, else W, but
//!   never past W;
//! - the gutter mark (`|`, `<`, `>`, `(`; `\` or `/` when only the left
//!   or right line lacks its newline) sits at `half` + (`col2` − `half`
//!   − 1) / 2;
//! - a text is cut where its next character would pass `half` columns
//!   (under `-t` a tab's spaces are written up to the edge); a tab that
//!   would end exactly at the edge is written in the left column only;
//!   gaps are filled with tabs as far as tab stops allow (spaces under
//!   `-t`), then spaces; nothing trails a line's last text or mark;
//! - a row ends with a newline unless none of its lines has one.

use super::compare::Change;
use super::format::Palette;
use super::Opts;
use std::io::{self, Write};

struct Layout {
    half: usize,
    col2: usize,
    mark: usize,
    tab: usize,
    expand: bool,
}

impl Layout {
    fn new(o: &Opts) -> Layout {
        let w = o.width;
        let tab = if o.expand_tabs { 1 } else { o.tabsize.max(1) };
        let off = (w + tab + 3) / (2 * tab) * tab;
        let half = off.saturating_sub(3).min(w.saturating_sub(off));
        let col2 = if half < off { off } else { w }.min(w);
        let mark = half + (col2.saturating_sub(half + 1)) / 2;
        Layout {
            half,
            col2,
            mark,
            tab: o.tabsize.max(1),
            expand: o.expand_tabs,
        }
    }

    /// Fills from column `from` to `to` with tabs (unless -t) and spaces.
    fn pad(&self, v: &mut Vec<u8>, mut from: usize, to: usize) {
        if !self.expand {
            while (from / self.tab + 1) * self.tab <= to {
                v.push(b'\t');
                from = (from / self.tab + 1) * self.tab;
            }
        }
        while from < to {
            v.push(b' ');
            from += 1;
        }
    }

    /// Writes what fits of line `l` (newline aside) in a column: `at` is
    /// where the text has got to, `to` where the output has; characters
    /// past the edge are skipped, but a carriage return starts over.
    /// Returns the output's column, counted from the column's start.
    fn text(&self, v: &mut Vec<u8>, l: &[u8], right: bool) -> usize {
        let body = l.strip_suffix(b"\n").unwrap_or(l);
        let (mut at, mut to) = (0usize, 0usize);
        for &c in body {
            match c {
                b'\t' => {
                    let next = (at / self.tab + 1) * self.tab;
                    if at == to {
                        if self.expand {
                            // Under -t a tab is spaces, as many as fit.
                            while to < next.min(self.half) {
                                v.push(b' ');
                                to += 1;
                            }
                        } else if next < self.half || (next == self.half && !right) {
                            v.push(b'\t');
                            to = next;
                        }
                    }
                    at = next;
                }
                b'\r' => {
                    // Back to the line's start, and over to the column's.
                    v.push(c);
                    if right {
                        self.pad(v, 0, self.col2);
                    }
                    at = 0;
                    to = 0;
                }
                b'\x08' => {
                    if at > 0 {
                        at -= 1;
                        if to > at {
                            v.push(c);
                            to = at;
                        }
                    }
                }
                0x20..=0x7e => {
                    if at < self.half && at == to {
                        v.push(c);
                        to += 1;
                    }
                    at += 1;
                }
                _ => {
                    if at < self.half {
                        v.push(c);
                    }
                }
            }
        }
        to
    }
}

/// One row: `left` and/or `right` with `mark` between (b' ' for common
/// lines).
fn row(
    out: &mut dyn Write,
    lay: &Layout,
    color: Option<&Palette>,
    left: Option<&[u8]>,
    mark: u8,
    right: Option<&[u8]>,
) -> io::Result<()> {
    let mut v = Vec::with_capacity(lay.col2 + lay.half + 2);
    let mut col = match left {
        Some(l) => lay.text(&mut v, l, false),
        None => 0,
    };
    if mark != b' ' {
        lay.pad(&mut v, col, lay.mark);
        v.push(mark);
        col = lay.mark + 1;
    }
    if let Some(r) = right {
        if !r.is_empty() && r != b"\n" {
            lay.pad(&mut v, col, lay.col2);
            lay.text(&mut v, r, true);
        }
    }
    let nl = |l: Option<&[u8]>| l.is_some_and(|l| l.ends_with(b"\n"));
    if nl(left) || nl(right) {
        v.push(b'\n');
    }
    // --color: deleted and added rows whole, the reset after the newline.
    let hue = match (color, mark) {
        (Some(p), b'<') => Some(p.de.as_str()),
        (Some(p), b'>') => Some(p.ad.as_str()),
        _ => None,
    };
    if let (Some(h), Some(p)) = (hue, color) {
        write!(out, "\x1b[{h}m")?;
        out.write_all(&v)?;
        return write!(out, "\x1b[{}m", p.rs);
    }
    out.write_all(&v)
}

pub fn side_by_side(
    out: &mut dyn Write,
    la: &[&[u8]],
    lb: &[&[u8]],
    changes: &[Change],
    o: &Opts,
) -> io::Result<()> {
    let lay = Layout::new(o);
    let color = o.color.then_some(&o.palette);
    let (mut i, mut j) = (0usize, 0usize);
    let common = |out: &mut dyn Write, i: usize, j: usize| -> io::Result<()> {
        if o.suppress_common {
            Ok(())
        } else if o.left_column {
            row(out, &lay, color, Some(la[i]), b'(', None)
        } else {
            row(out, &lay, color, Some(la[i]), b' ', Some(lb[j]))
        }
    };
    for c in changes {
        while i < c.a.start {
            common(out, i, j)?;
            i += 1;
            j += 1;
        }
        let (na, nb) = (c.a.len(), c.b.len());
        for k in 0..na.max(nb) {
            let l = (k < na).then(|| la[c.a.start + k]);
            let r = (k < nb).then(|| lb[c.b.start + k]);
            let mark = match (l, r) {
                // Exactly one side without its newline: `\\` (the left)
                // or `/` (the right).
                (Some(x), Some(y)) => match (x.ends_with(b"\n"), y.ends_with(b"\n")) {
                    (false, true) => b'\\',
                    (true, false) => b'/',
                    _ => b'|',
                },
                (Some(_), None) => b'<',
                _ => b'>',
            };
            row(out, &lay, color, l, mark, r)?;
        }
        i = c.a.end;
        j = c.b.end;
    }
    while i < la.len() && j < lb.len() {
        common(out, i, j)?;
        i += 1;
        j += 1;
    }
    Ok(())
}
