//! The sequential comparison: both files a chunk at a time, newlines
//! counted as the bytes are compared where a line number may be printed.
//!
//! A file mapped without a lease can be cut short by another process
//! while cmp reads it: the pages it lost read as zeros (the SIGBUS guard),
//! bytes the file never held, where GNU's read would have stopped at the
//! file's end. So each chunk's bytes, once read, count only up to where
//! the file ends now ([`own`]); the file ends there, in GNU's words, in
//! every mode. Under -l the chunk's lines are kept until that is known.

use super::{first_difference, shown, Mode, Opts, CHUNK};
use crate::tools::common::{self, Tool};
use ferry::stream::Region;
use ferry::Stream;
use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;

/// -l compares this much at a time: its lines for a chunk are kept until
/// the chunk's bytes are known to be the files' (up to 8 MiB of lines for
/// a chunk that differs everywhere).
const LIST_CHUNK: usize = 256 << 10;

/// -l looks for differences this many bytes at a time (a vectorised
/// comparison), then byte by byte in a block that differs.
const LIST_BLOCK: usize = 64;

/// How many of the first `n` bytes of region `r` of `s` (all read) are
/// the file's. A mapped file now shorter than they reach was cut short
/// under the mapping: its bytes end where it ends now. One that lost
/// pages and has grown again since cannot say which bytes are zeros: none
/// of the region counts (those before it were checked as they were read).
fn own(s: &Stream, r: &Region<'_>, n: usize) -> usize {
    if !s.is_mapped() {
        return n;
    }
    match s.len() {
        Ok(size) if size < r.offset() + n as u64 => size.saturating_sub(r.offset()) as usize,
        _ if !r.is_intact() => 0,
        _ => n,
    }
}

/// The sequential comparison, from `start` bytes past the skips, `before`
/// holding the newlines of A's bytes before `start` and whether the last
/// of them was one.
pub(super) fn finish_from(
    t: &Tool,
    (an, bn): (&OsString, &OsString),
    sa: Stream,
    sb: Stream,
    skip: [u64; 2],
    (start, before): (u64, (u64, bool)),
    o: Opts,
) -> io::Result<i32> {
    let (na, nb) = (an.as_bytes(), bn.as_bytes());
    let mode = o.mode;
    let limit = o.limit.unwrap_or(u64::MAX);
    if start > 0 {
        sa.seek_to(io::SeekFrom::Start(skip[0] + start))?;
        sb.seek_to(io::SeekFrom::Start(skip[1] + start))?;
    }
    let chunk = if mode == Mode::All { LIST_CHUNK } else { CHUNK };
    let mut list = (mode == Mode::All).then(|| {
        let m = [
            super::remaining(an, &sa),
            super::remaining(bn, &sb),
            o.limit,
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(i64::MAX as u64);
        Listing::new(m.to_string().len(), o.bytes)
    });
    // Bytes compared and equal so far.
    let mut offset = start;
    // Lines of A are counted as its bytes are compared (`before`: those
    // before `start`) where a line number may be printed (First), and in
    // the chunk where a file ends.
    let (mut newlines, mut last_was_nl) = before;
    let mut out = crate::tools::output::stdout();
    let (ga, gb) = (&sa, &sb);
    loop {
        if offset >= limit {
            // Equal as far as -n looks.
            break;
        }
        let want = (limit - offset).min(chunk as u64) as usize;
        let ra = match ga.salloc(want) {
            Ok(r) => r,
            Err(e) => {
                t.file_error_bytes(na, &common::os_only(e));
                return Ok(2);
            }
        };
        let rb = match gb.salloc(want) {
            Ok(r) => r,
            Err(e) => {
                t.file_error_bytes(nb, &common::os_only(e));
                return Ok(2);
            }
        };
        let n = ra.len().min(rb.len());
        let (x, y) = (&ra[..n], &rb[..n]);
        // The bytes are read (a lost page says so once touched), then
        // taken as far as both files held them.
        let diff = match list.as_mut() {
            Some(l) => {
                l.lines(x, y, offset);
                None
            }
            None => (x != y).then(|| first_difference(x, y)),
        };
        let own = [own(ga, &ra, n), own(gb, &rb, n)];
        let m = own[0].min(own[1]);
        if let Some(l) = list.as_mut() {
            if m < n {
                l.lines(&x[..m], &y[..m], offset);
            }
            l.write();
        }
        if let Some(i) = diff.filter(|&i| i < m) {
            if mode == Mode::Silent {
                return Ok(1);
            }
            let nl = newlines + bytecount::count(&x[..i], b'\n') as u64;
            let at = offset + i as u64 + 1;
            let (p, q) = (x[i], y[i]);
            let msg = if o.bytes {
                format!(
                    " differ: byte {at}, line {} is {p:>3o} {} {q:>3o} {}\n",
                    nl + 1,
                    shown(p),
                    shown(q)
                )
            } else {
                // POSIX says "char" in the C locale; diffutils says
                // "byte" elsewhere.
                let unit = if crate::tools::locale::messages_in_c_locale() {
                    "char"
                } else {
                    "byte"
                };
                format!(" differ: {unit} {at}, line {}\n", nl + 1)
            };
            out.write(&[na, b" ", nb, msg.as_bytes()].concat())?;
            out.flush()?;
            return Ok(1);
        }
        // Where each file ends in this chunk, if it does: where it was cut
        // short, or where its bytes ran out first.
        let ended = |k: usize, len: usize| (own[k] < n || (len == n && n < want)).then_some(own[k]);
        let ends = [ended(0, ra.len()), ended(1, rb.len())];
        if ends == [None, None] {
            if mode == Mode::First && n > 0 {
                newlines += bytecount::count(x, b'\n') as u64;
                last_was_nl = x[n - 1] == b'\n';
            }
            offset += n as u64;
            continue;
        }
        let [ea, eb] = ends.map(|e| e.unwrap_or(usize::MAX));
        if ea == eb {
            // Both end at the same byte: equal as far as they go.
            break;
        }
        let (short, end) = if ea < eb { (na, ea) } else { (nb, eb) };
        let seen = &x[..end];
        let newlines = newlines + bytecount::count(seen, b'\n') as u64;
        let last_was_nl = seen.last().map_or(last_was_nl, |&c| c == b'\n');
        let end = offset + end as u64;
        drop((ra, rb));
        if let Some(l) = list.as_mut() {
            l.written_by_stdio();
        }
        if mode != Mode::Silent {
            out.flush()?;
            let at = if end == 0 {
                " which is empty".to_string()
            } else if mode == Mode::All {
                format!(" after byte {end}")
            } else if last_was_nl {
                format!(" after byte {end}, line {newlines}")
            } else {
                format!(" after byte {end}, in line {}", newlines + 1)
            };
            t.error_bytes(&[b"EOF on ", short, at.as_bytes()].concat());
        }
        let ending = list.as_mut().and_then(|l| l.finish());
        return Ok(listing_end(t, ending).unwrap_or(1));
    }
    let ending = list.as_mut().and_then(|l| l.finish());
    out.flush()?;
    let differ = list.is_some_and(|l| l.any());
    Ok(listing_end(t, ending).unwrap_or(differ as i32))
}

/// Reports an error writing -l's lines as GNU's `check_stdout` does at
/// the end: "write failed" if its stdio had written a buffer's worth (the
/// error seen then), else the final flush's error. Status 2.
fn listing_end(t: &Tool, ending: Option<(io::Error, bool)>) -> Option<i32> {
    let (e, seen_before) = ending?;
    common::end_if_sigpipe(&e);
    if seen_before {
        t.error(format_args!("write failed"));
    } else {
        t.error(format_args!("standard output: {}", common::describe(&e)));
    }
    Some(2)
}

/// -l's lines: each chunk's kept until its bytes are known to be the
/// files', then written as GNU's stdio writes them — in whole buffers,
/// the last one at the end — so that a message comes after the same
/// lines as GNU's (`cmp -l a b 2>&1`), and a write error does not stop
/// the comparison (stdio keeps it for the end).
struct Listing {
    width: usize,
    bytes: bool,
    /// The current chunk's lines.
    lines: Vec<u8>,
    /// Lines stdio would still hold or have written since the last write
    /// here; starts at a buffer's boundary.
    held: Vec<u8>,
    /// stdio's buffer size.
    block: usize,
    /// Bytes of lines listed.
    written: u64,
    failed: Option<io::Error>,
}

/// The lines held before they are written.
const HOLD: usize = 256 << 10;

impl Listing {
    fn new(width: usize, bytes: bool) -> Listing {
        Listing {
            width,
            bytes,
            lines: Vec::new(),
            held: Vec::new(),
            block: common::stdio_buffer_size() as usize,
            written: 0,
            failed: None,
        }
    }

    /// The lines of the differing bytes of `x` and `y`, which start
    /// `offset` bytes in: in place of those of the chunk so far.
    fn lines(&mut self, x: &[u8], y: &[u8], offset: u64) {
        self.lines.clear();
        if x == y {
            return;
        }
        let width = self.width;
        let differing = x
            .chunks(LIST_BLOCK)
            .zip(y.chunks(LIST_BLOCK))
            .enumerate()
            .filter(|(_, (bx, by))| bx != by)
            .flat_map(|(k, (bx, by))| {
                let pairs = bx.iter().zip(by).enumerate();
                pairs
                    .filter_map(move |(i, (&p, &q))| (p != q).then_some((k * LIST_BLOCK + i, p, q)))
            });
        for (i, p, q) in differing {
            let at = offset + i as u64 + 1;
            // Writing into a Vec cannot fail.
            let _ = if self.bytes {
                writeln!(
                    self.lines,
                    "{at:>width$} {p:>3o} {:<4} {q:>3o} {}",
                    shown(p),
                    shown(q)
                )
            } else {
                writeln!(self.lines, "{at:>width$} {p:>3o} {q:>3o}")
            };
        }
    }

    /// Lists the chunk's lines.
    fn write(&mut self) {
        self.written += self.lines.len() as u64;
        self.held.extend_from_slice(&self.lines);
        self.lines.clear();
        if self.held.len() >= HOLD {
            self.written_by_stdio();
        }
    }

    /// Writes what stdio would have written by now: every full buffer but
    /// the last (it writes one when a line no longer fits).
    fn written_by_stdio(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let n = (self.held.len() - 1) / self.block * self.block;
        self.put(n);
    }

    /// Writes the first `n` bytes held.
    fn put(&mut self, n: usize) {
        if self.failed.is_none() && n > 0 {
            if let Err(e) = crate::tools::output::write_all_fd(&self.held[..n]) {
                // A reader gone: GNU's stdio met it here too.
                common::end_if_sigpipe(&e);
                self.failed = Some(e);
            }
        }
        self.held.drain(..n);
    }

    /// Writes the rest, as stdio at the end: the error to report, if any,
    /// and whether stdio met it before the end (more than a buffer
    /// written).
    fn finish(&mut self) -> Option<(io::Error, bool)> {
        self.put(self.held.len());
        let before = self.written > self.block as u64;
        self.failed.take().map(|e| (e, before))
    }

    /// Some line was listed.
    fn any(&self) -> bool {
        self.written > 0
    }
}
