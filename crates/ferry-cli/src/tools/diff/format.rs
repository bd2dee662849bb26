//! The line-oriented output formats: normal, unified (`-u`) and context
//! (`-c`), with `-p`'s function lines, `-t`, `-T` and `--color`.

use super::compare::{hunks, Change};
use std::io::{self, Write};
use std::ops::Range;

/// GNU's `--palette` capabilities: reset, header, added, deleted, line
/// numbers (the SGR parameters between `\33[` and `m`).
#[derive(Clone)]
pub struct Palette {
    pub rs: String,
    pub hd: String,
    pub ad: String,
    pub de: String,
    pub ln: String,
}

impl Default for Palette {
    fn default() -> Palette {
        Palette {
            rs: "0".into(),
            hd: "1".into(),
            ad: "32".into(),
            de: "31".into(),
            ln: "36".into(),
        }
    }
}

impl Palette {
    /// Applies a `--palette` value (`ad=1;32:de=...`); unknown names are
    /// ignored, as GNU ignores them.
    pub fn apply(&mut self, spec: &str) {
        for item in spec.split(':') {
            if let Some((k, v)) = item.split_once('=') {
                let slot = match k {
                    "rs" => &mut self.rs,
                    "hd" => &mut self.hd,
                    "ad" => &mut self.ad,
                    "de" => &mut self.de,
                    "ln" => &mut self.ln,
                    _ => continue,
                };
                *slot = v.to_string();
            }
        }
    }
}

/// How lines are written.
pub struct Style<'p> {
    pub color: Option<&'p Palette>,
    /// -t
    pub expand_tabs: bool,
    /// -T
    pub initial_tab: bool,
    pub tabsize: usize,
    /// --suppress-blank-empty
    pub suppress_blank_empty: bool,
    /// -p: show the nearest line before each hunk that starts with a
    /// letter, `$` or `_`.
    pub function: bool,
}

#[derive(Clone, Copy)]
enum Hue {
    Header,
    Added,
    Deleted,
    Numbers,
}

impl Style<'_> {
    fn start(&self, out: &mut dyn Write, h: Hue) -> io::Result<()> {
        if let Some(p) = self.color {
            let code = match h {
                Hue::Header => &p.hd,
                Hue::Added => &p.ad,
                Hue::Deleted => &p.de,
                Hue::Numbers => &p.ln,
            };
            write!(out, "\x1b[{code}m")?;
        }
        Ok(())
    }

    fn end(&self, out: &mut dyn Write) -> io::Result<()> {
        if let Some(p) = self.color {
            write!(out, "\x1b[{}m", p.rs)?;
        }
        Ok(())
    }

    /// A header or numbers line (`text` without its newline), colored.
    fn marked(&self, out: &mut dyn Write, h: Hue, text: &[u8]) -> io::Result<()> {
        self.start(out, h)?;
        out.write_all(text)?;
        self.end(out)
    }

    /// One line of a file behind `prefix`, colored `h`; a last line
    /// without newline gets GNU's note.
    fn line(&self, out: &mut dyn Write, prefix: &str, l: &[u8], h: Option<Hue>) -> io::Result<()> {
        if let Some(h) = h {
            self.start(out, h)?;
        }
        let bare = self.suppress_blank_empty && l == b"\n";
        if bare {
            // Only the mark before an empty line.
            out.write_all(prefix.trim_end().as_bytes())?;
        } else if self.initial_tab {
            // -T: a tab after the mark ("< " is "<\t", "! " is "!\t", "  "
            // is " \t"), where unified's bare " " becomes the tab.
            let mark = if prefix.len() == 2 {
                &prefix[..1]
            } else {
                prefix.trim_end()
            };
            out.write_all(mark.as_bytes())?;
            out.write_all(b"\t")?;
        } else {
            out.write_all(prefix.as_bytes())?;
        }
        let (body, nl) = match l.strip_suffix(b"\n") {
            Some(b) => (b, true),
            None => (l, false),
        };
        if self.expand_tabs && memchr::memchr(b'\t', body).is_some() {
            let ts = self.tabsize.max(1);
            let mut col = 0usize;
            let mut v = Vec::with_capacity(body.len() + 16);
            for &c in body {
                match c {
                    b'\t' => {
                        let n = ts - col % ts;
                        v.extend(std::iter::repeat_n(b' ', n));
                        col += n;
                        continue;
                    }
                    b'\r' => col = 0,
                    b'\x08' => col = col.saturating_sub(1),
                    0x20..=0x7e => col += 1,
                    // Other bytes take no column (C locale).
                    _ => {}
                }
                v.push(c);
            }
            out.write_all(&v)?;
        } else {
            out.write_all(body)?;
        }
        if h.is_some() {
            self.end(out)?;
        }
        out.write_all(b"\n")?;
        if !nl {
            out.write_all(b"\\ No newline at end of file\n")?;
        }
        Ok(())
    }
}

/// `s` or `s,e` for 1-based lines s..=e (GNU's normal-format range).
fn range(r: &Range<usize>) -> String {
    if r.end <= r.start + 1 {
        format!("{}", r.start + 1)
    } else {
        format!("{},{}", r.start + 1, r.end)
    }
}

pub fn normal(
    out: &mut dyn Write,
    la: &[&[u8]],
    lb: &[&[u8]],
    changes: &[Change],
    st: &Style,
) -> io::Result<()> {
    for c in changes.iter().filter(|c| !c.ignorable) {
        let head = if c.a.is_empty() {
            format!("{}a{}", c.a.start, range(&c.b))
        } else if c.b.is_empty() {
            format!("{}d{}", range(&c.a), c.b.start)
        } else {
            format!("{}c{}", range(&c.a), range(&c.b))
        };
        st.marked(out, Hue::Numbers, head.as_bytes())?;
        out.write_all(b"\n")?;
        for l in &la[c.a.clone()] {
            st.line(out, "< ", l, Some(Hue::Deleted))?;
        }
        if !c.a.is_empty() && !c.b.is_empty() {
            out.write_all(b"---\n")?;
        }
        for l in &lb[c.b.clone()] {
            st.line(out, "> ", l, Some(Hue::Added))?;
        }
    }
    Ok(())
}

/// The two header lines of unified and context output.
pub fn headers(
    out: &mut dyn Write,
    st: &Style,
    marks: [&str; 2],
    names: [&str; 2],
) -> io::Result<()> {
    for k in 0..2 {
        st.marked(
            out,
            Hue::Header,
            format!("{} {}", marks[k], names[k]).as_bytes(),
        )?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The lines a hunk of `changes` shows: its first and last change with
/// up to `ctx` lines around them.
fn span(changes: &[Change], ctx: usize, na: usize, nb: usize) -> (Range<usize>, Range<usize>) {
    let first = &changes[0];
    let last = &changes[changes.len() - 1];
    let lead = ctx.min(first.a.start).min(first.b.start);
    let trail = ctx.min(na - last.a.end).min(nb - last.b.end);
    (
        first.a.start - lead..last.a.end + trail,
        first.b.start - lead..last.b.end + trail,
    )
}

/// `-p`: the nearest line of `la` before line `before` that starts with a
/// letter, `$` or `_`, cut to 40 bytes, trailing blanks dropped.
fn function_line<'a>(la: &[&'a [u8]], before: usize) -> Option<&'a [u8]> {
    let l = la[..before].iter().rev().find(|l| {
        l.first()
            .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'$' || c == b'_')
    })?;
    let mut t = &l[..l.len().min(40)];
    while let Some((&c, rest)) = t.split_last() {
        if !c.is_ascii_whitespace() && c != b'\x0b' {
            break;
        }
        t = rest;
    }
    Some(t)
}

/// A unified hunk range: `start,count`, `start` alone for one line, and
/// the line before with count 0 for none.
fn uni_range(r: &Range<usize>) -> String {
    match r.end - r.start {
        0 => format!("{},0", r.start),
        1 => format!("{}", r.start + 1),
        n => format!("{},{}", r.start + 1, n),
    }
}

/// Ends a hunk's header line: with `-p`/`-F`, a space and the function
/// line before `before` (the unified and context formats alike).
fn end_hunk_header(out: &mut dyn Write, la: &[&[u8]], before: usize, st: &Style) -> io::Result<()> {
    if st.function {
        if let Some(f) = function_line(la, before) {
            out.write_all(b" ")?;
            out.write_all(f)?;
        }
    }
    out.write_all(b"\n")
}

pub fn unified(
    out: &mut dyn Write,
    la: &[&[u8]],
    lb: &[&[u8]],
    changes: &[Change],
    ctx: usize,
    st: &Style,
) -> io::Result<()> {
    for h in hunks(changes, ctx) {
        let cs = &changes[h];
        let (ra, rb) = span(cs, ctx, la.len(), lb.len());
        let head = format!("@@ -{} +{} @@", uni_range(&ra), uni_range(&rb));
        st.marked(out, Hue::Numbers, head.as_bytes())?;
        end_hunk_header(out, la, ra.start, st)?;
        let mut ai = ra.start;
        for c in cs {
            for l in &la[ai..c.a.start] {
                st.line(out, " ", l, None)?;
            }
            for l in &la[c.a.clone()] {
                st.line(out, "-", l, Some(Hue::Deleted))?;
            }
            for l in &lb[c.b.clone()] {
                st.line(out, "+", l, Some(Hue::Added))?;
            }
            ai = c.a.end;
        }
        for l in &la[ai..ra.end] {
            st.line(out, " ", l, None)?;
        }
    }
    Ok(())
}

/// A context-format range: `s,e`, `s` for one line, the line before for
/// none.
fn ctx_range(r: &Range<usize>) -> String {
    match r.end - r.start {
        0 => format!("{}", r.start),
        1 => format!("{}", r.start + 1),
        _ => format!("{},{}", r.start + 1, r.end),
    }
}

/// One side of a context hunk: its lines, `marks` for changed ones ("- "
/// or "+ ", "! " where the change both deletes and inserts).
fn ctx_side(
    out: &mut dyn Write,
    lines: &[&[u8]],
    r: Range<usize>,
    cs: &[Change],
    side_a: bool,
    st: &Style,
) -> io::Result<()> {
    let hue = if side_a { Hue::Deleted } else { Hue::Added };
    let mut i = r.start;
    for c in cs {
        let own = if side_a { &c.a } else { &c.b };
        for l in &lines[i..own.start] {
            st.line(out, "  ", l, st.color.map(|_| hue))?;
        }
        let mark = if c.a.is_empty() || c.b.is_empty() {
            if side_a {
                "- "
            } else {
                "+ "
            }
        } else {
            "! "
        };
        for l in &lines[own.clone()] {
            st.line(out, mark, l, Some(hue))?;
        }
        i = own.end;
    }
    for l in &lines[i..r.end] {
        st.line(out, "  ", l, st.color.map(|_| hue))?;
    }
    Ok(())
}

pub fn context(
    out: &mut dyn Write,
    la: &[&[u8]],
    lb: &[&[u8]],
    changes: &[Change],
    ctx: usize,
    st: &Style,
) -> io::Result<()> {
    for h in hunks(changes, ctx) {
        let cs = &changes[h];
        let (ra, rb) = span(cs, ctx, la.len(), lb.len());
        out.write_all(b"***************")?;
        end_hunk_header(out, la, ra.start, st)?;
        st.marked(
            out,
            Hue::Numbers,
            format!("*** {} ****", ctx_range(&ra)).as_bytes(),
        )?;
        out.write_all(b"\n")?;
        if cs.iter().any(|c| !c.a.is_empty()) {
            ctx_side(out, la, ra, cs, true, st)?;
        }
        st.marked(
            out,
            Hue::Numbers,
            format!("--- {} ----", ctx_range(&rb)).as_bytes(),
        )?;
        out.write_all(b"\n")?;
        if cs.iter().any(|c| !c.b.is_empty()) {
            ctx_side(out, lb, rb, cs, false, st)?;
        }
    }
    Ok(())
}
