//! Line matching: the lines of a file, the keys they are compared by under
//! `-i`, `-w`, `-b`, `-E`, `-Z`, the edit script (imara-diff's Myers, slid
//! as GNU diff slides its change groups) and the hunks GNU prints, with
//! `-B`'s ignorable changes.

use imara_diff::intern::{Interner, Token};
use std::borrow::Cow;
use std::ops::Range;

/// How lines are compared (the ignore options).
#[derive(Clone, Copy, Default)]
pub struct Ignore {
    /// -i
    pub case: bool,
    /// -w
    pub all_space: bool,
    /// -b
    pub space_change: bool,
    /// -E
    pub tab_expansion: bool,
    /// -Z
    pub trailing_space: bool,
    /// -B
    pub blank_lines: bool,
    /// Tab stops for -E.
    pub tabsize: usize,
}

impl Ignore {
    /// True when lines are compared by more than their bytes.
    pub fn any(&self) -> bool {
        self.case || self.whitespace() || self.tab_expansion || self.blank_lines
    }

    /// The options under which a missing final newline does not count.
    fn whitespace(&self) -> bool {
        self.all_space || self.space_change || self.trailing_space
    }
}

/// C's `isspace` in the C locale (the newline is not part of a key).
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\x0b' | b'\x0c' | b'\r' | b'\n')
}

/// The key line `l` is compared by, without its newline (so that `-B` can
/// see a blank line as an empty key), and whether the newline counts.
pub fn key<'a>(l: &'a [u8], ig: &Ignore) -> (Cow<'a, [u8]>, bool) {
    let (body, nl) = match l.strip_suffix(b"\n") {
        Some(b) => (b, true),
        None => (l, false),
    };
    let nl = nl && !ig.whitespace();
    if !(ig.case || ig.whitespace() || ig.tab_expansion) {
        return (Cow::Borrowed(body), nl);
    }
    let mut v: Vec<u8> = Vec::with_capacity(body.len());
    if ig.all_space {
        v.extend(body.iter().copied().filter(|&c| !is_space(c)));
    } else if ig.space_change {
        let mut space = false;
        for &c in body {
            if is_space(c) {
                space = true;
            } else {
                if space {
                    // A run of blanks, leading ones too, counts as one.
                    v.push(b' ');
                }
                space = false;
                v.push(c);
            }
        }
    } else if ig.tab_expansion {
        let ts = ig.tabsize.max(1);
        for &c in body {
            if c == b'\t' {
                let n = ts - v.len() % ts;
                v.extend(std::iter::repeat_n(b' ', n));
            } else {
                v.push(c);
            }
        }
    } else {
        v.extend_from_slice(body);
    }
    if ig.trailing_space && !ig.all_space {
        while v.last().is_some_and(|&c| is_space(c)) {
            v.pop();
        }
    }
    if ig.case {
        v.make_ascii_lowercase();
    }
    (Cow::Owned(v), nl)
}

/// The lines of `d`, each with its newline (the last may lack one).
pub fn lines(d: &[u8]) -> Vec<&[u8]> {
    let mut v = Vec::with_capacity(d.len() / 32 + 1);
    let mut start = 0;
    for i in memchr::memchr_iter(b'\n', d) {
        v.push(&d[start..=i]);
        start = i + 1;
    }
    if start < d.len() {
        v.push(&d[start..]);
    }
    v
}

/// Both files' lines as tokens (equal tokens: equal keys), and under -B
/// which lines are blank (an empty key).
#[allow(clippy::type_complexity)]
fn tokenize<'a, K: std::hash::Hash + Eq + AsKey>(
    la: &[&'a [u8]],
    lb: &[&'a [u8]],
    mut interner: Interner<K>,
    key: impl Fn(&'a [u8]) -> K,
    blank_lines: bool,
) -> (Vec<Token>, Vec<Token>, Vec<bool>, Vec<bool>, u32) {
    let mut blank_a = Vec::new();
    let mut blank_b = Vec::new();
    let mut tok = |l: &'a [u8], blanks: &mut Vec<bool>| {
        let k = key(l);
        if blank_lines {
            blanks.push(k.is_empty_key());
        }
        interner.intern(k)
    };
    let ta: Vec<Token> = la.iter().map(|&l| tok(l, &mut blank_a)).collect();
    let tb: Vec<Token> = lb.iter().map(|&l| tok(l, &mut blank_b)).collect();
    let tokens = interner.num_tokens();
    (ta, tb, blank_a, blank_b, tokens)
}

/// What -B asks of a key: is the line blank?
trait AsKey {
    fn is_empty_key(&self) -> bool;
}

impl AsKey for (Cow<'_, [u8]>, bool) {
    fn is_empty_key(&self) -> bool {
        self.0.is_empty()
    }
}

impl AsKey for &[u8] {
    /// A whole line: blank when nothing but its newline.
    fn is_empty_key(&self) -> bool {
        self.is_empty() || *self == b"\n"
    }
}

/// A change: lines `a` of the first file become lines `b` of the second.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub a: Range<usize>,
    pub b: Range<usize>,
    /// Under -B: every line it deletes or inserts is blank.
    pub ignorable: bool,
}

/// Both files' lines with their comparison tokens.
pub struct Compared<'a> {
    pub la: Vec<&'a [u8]>,
    pub lb: Vec<&'a [u8]>,
    ta: Vec<Token>,
    tb: Vec<Token>,
    blank_a: Vec<bool>,
    blank_b: Vec<bool>,
    tokens: u32,
}

impl<'a> Compared<'a> {
    pub fn new(a: &'a [u8], b: &'a [u8], ig: &Ignore) -> Compared<'a> {
        let la = lines(a);
        let lb = lines(b);
        let n = la.len() + lb.len();
        let (ta, tb, blank_a, blank_b, tokens) = if ig.case || ig.whitespace() || ig.tab_expansion {
            tokenize(&la, &lb, Interner::new(n), |l| key(l, ig), ig.blank_lines)
        } else {
            // No option changes a line's bytes: the line itself, newline
            // and all, is its key (the same classes as `key`'s body and
            // newline flag), interned without building a key per line —
            // a third of the run on two 100 MiB files.
            tokenize(&la, &lb, Interner::new(n), |l| l, ig.blank_lines)
        };
        Compared {
            la,
            lb,
            ta,
            tb,
            blank_a,
            blank_b,
            tokens,
        }
    }

    /// The edit script, its groups slid as GNU slides them, each change
    /// marked ignorable when -B makes it so.
    pub fn changes(&self, horizon: usize) -> Vec<Change> {
        let (ta, tb) = (&self.ta, &self.tb);
        // GNU diff sets aside the files' common first and last lines (all
        // but `horizon` of them) before it looks for changes, so its
        // changes and their slides stay inside that window: diff and slide
        // within the same one. Those lines are the same bytes, whatever
        // the ignore options.
        let (la, lb) = (&self.la, &self.lb);
        let prefix = la.iter().zip(lb).take_while(|(x, y)| x == y).count();
        let suffix = la[prefix..]
            .iter()
            .rev()
            .zip(lb[prefix..].iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        let lo = prefix - prefix.min(horizon);
        let keep = suffix - suffix.min(horizon);
        let (ha, hb) = (ta.len() - keep, tb.len() - keep);
        let mut da = vec![false; ta.len()];
        let mut db = vec![false; tb.len()];
        imara_diff::diff_with_tokens(
            imara_diff::Algorithm::Myers,
            &ta[lo..ha],
            &tb[lo..hb],
            self.tokens,
            |x: Range<u32>, y: Range<u32>| {
                da[lo + x.start as usize..lo + x.end as usize].fill(true);
                db[lo + y.start as usize..lo + y.end as usize].fill(true);
            },
        );
        shift_boundaries(&ta[lo..ha], &mut da[lo..ha], &db[lo..hb]);
        shift_boundaries(&tb[lo..hb], &mut db[lo..hb], &da[lo..ha]);
        let mut v = changes_of(&da, &db);
        if !self.blank_a.is_empty() || !self.blank_b.is_empty() {
            for c in &mut v {
                c.ignorable = self.blank_a[c.a.clone()].iter().all(|&x| x)
                    && self.blank_b[c.b.clone()].iter().all(|&x| x);
            }
        }
        v
    }
}

/// The hunks GNU prints with `ctx` lines of context: runs of changes
/// (ranges of indices into `changes`) closer than 2 × ctx + 1 lines — or
/// than ctx lines when the later one is ignorable — leaving out hunks
/// whose changes are all ignorable.
pub fn hunks(changes: &[Change], ctx: usize) -> Vec<Range<usize>> {
    let mut v = Vec::new();
    let mut k = 0;
    while k < changes.len() {
        let mut e = k;
        while e + 1 < changes.len() {
            let next = &changes[e + 1];
            let gap = next.a.start - changes[e].a.end;
            let limit = if next.ignorable { ctx } else { 2 * ctx + 1 };
            if gap >= limit {
                break;
            }
            e += 1;
        }
        if changes[k..=e].iter().any(|c| !c.ignorable) {
            v.push(k..e + 1);
        }
        k = e + 1;
    }
    v
}

/// GNU diff's `shift_boundaries`: each run of changed lines moves up while
/// the line before it equals its last line (merging with runs above), then
/// down while its first line equals the line after it (merging below); it
/// is left at the lowest place that lines up with a change in the other
/// file, if any, else at the bottom.
fn shift_boundaries(t: &[Token], changed: &mut [bool], other: &[bool]) {
    // Indices are signed: GNU's arrays have an unchanged sentinel on both
    // sides, which `ch`/`oc` stand in for.
    let n = t.len() as isize;
    let ch = |c: &[bool], i: isize| i >= 0 && (i as usize) < c.len() && c[i as usize];
    let oc = |j: isize| j >= 0 && (j as usize) < other.len() && other[j as usize];
    let eq = |x: isize, y: isize| t[x as usize] == t[y as usize];
    let (mut i, mut j): (isize, isize) = (0, 0);
    loop {
        // The next run of changes, with the matching point in `other`.
        while i < n && !ch(changed, i) {
            while oc(j) {
                j += 1;
            }
            j += 1;
            i += 1;
        }
        if i == n {
            break;
        }
        let mut start = i;
        i += 1;
        while ch(changed, i) {
            i += 1;
        }
        while oc(j) {
            j += 1;
        }
        let mut corresponding;
        loop {
            let runlength = i - start;
            // Back, while the line before equals the run's last line; this
            // merges with runs above.
            while start > 0 && eq(start - 1, i - 1) {
                start -= 1;
                i -= 1;
                changed[start as usize] = true;
                changed[i as usize] = false;
                while ch(changed, start - 1) {
                    start -= 1;
                }
                j -= 1;
                while oc(j) {
                    j -= 1;
                }
            }
            // The run's end where it last lined up with a change in
            // `other` (n: nowhere).
            corresponding = if oc(j - 1) { i } else { n };
            // Forward, while the run's first line equals the line after
            // it; this merges with runs below.
            while i != n && eq(start, i) {
                changed[start as usize] = false;
                changed[i as usize] = true;
                start += 1;
                i += 1;
                while ch(changed, i) {
                    i += 1;
                }
                j += 1;
                while oc(j) {
                    j += 1;
                    corresponding = i;
                }
            }
            if runlength == i - start {
                break;
            }
        }
        // Back to where the run lines up with a change in `other`.
        while corresponding < i {
            start -= 1;
            i -= 1;
            changed[start as usize] = true;
            changed[i as usize] = false;
            j -= 1;
            while oc(j) {
                j -= 1;
            }
        }
    }
}

/// The change groups from per-line "changed" marks.
fn changes_of(da: &[bool], db: &[bool]) -> Vec<Change> {
    let mut v = Vec::new();
    let (mut i, mut j) = (0usize, 0usize);
    while i < da.len() || j < db.len() {
        if i < da.len() && j < db.len() && !da[i] && !db[j] {
            i += 1;
            j += 1;
            continue;
        }
        let (a0, b0) = (i, j);
        while i < da.len() && da[i] {
            i += 1;
        }
        while j < db.len() && db[j] {
            j += 1;
        }
        if (a0, b0) == (i, j) {
            // Marks out of step (cannot happen for a valid script); stop
            // rather than loop.
            break;
        }
        v.push(Change {
            a: a0..i,
            b: b0..j,
            ignorable: false,
        });
    }
    v
}
