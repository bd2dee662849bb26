//! Inputs larger than the sort buffer (`-S`): the input is read a piece
//! at a time (whole lines, at most the buffer's worth), each piece sorted
//! and written as a run to a temporary file in `-T`'s directory (or
//! `$TMPDIR`, or `/tmp`), and the runs merged k-way.
//!
//! Reading the next piece overlaps writing the last run: each run goes to
//! its file as one asynchronous request (`ferry::aio`), waited for only
//! when its memory is needed again. Temporary files are unlinked as soon
//! as they are open, so nothing is left behind on success, failure or
//! Ctrl-C; a temporary disk that fills is an error naming the file, and
//! the output (opened only once the merge starts) is left as it was.
//! The merge reads each run through a ferry stream, its lines taken as
//! `Buf`s by reference into the stream's buffers (copied one by one only
//! for `-z`).

use super::compare::Cmp;
use ferry::aio::{AsyncFile, Backend, Request};
use ferry::{Buf, BufMut, Stream};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// How an input divides into the units sorted: lines ending in a byte,
/// or fixed-size binary records (`--record-size`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    Lines(u8),
    Records(usize),
}

impl Framing {
    /// The units of `b` (a last line without its terminator is a line; a
    /// record is whole — `Pieces` checks).
    pub fn split(self, b: &[u8]) -> Vec<&[u8]> {
        match self {
            Framing::Lines(eol) => {
                let mut v = Vec::new();
                let mut start = 0;
                for i in memchr::memchr_iter(eol, b) {
                    v.push(&b[start..i]);
                    start = i + 1;
                }
                if start < b.len() {
                    v.push(&b[start..]);
                }
                v
            }
            Framing::Records(n) => b.chunks(n).collect(),
        }
    }

    /// The terminator written after each unit (none for records).
    pub fn terminator(self) -> Option<u8> {
        match self {
            Framing::Lines(eol) => Some(eol),
            Framing::Records(_) => None,
        }
    }
}

/// An error of the external sort: where, and what.
pub enum Fail {
    /// Reading an input (its name).
    Read(String, io::Error),
    /// Writing a temporary file (its name).
    Temp(String, io::Error),
    /// An input of records whose size is not a whole number of them.
    Partial(String, u64, usize),
}

/// One sorted run on disk.
pub struct Run {
    file: File,
    name: String,
}

/// Pieces of whole lines, read from the inputs in turn.
pub struct Pieces<'a> {
    files: &'a [OsString],
    next: usize,
    cur: Option<(Stream, String)>,
    carry: Vec<u8>,
    framing: Framing,
    limit: usize,
    /// Bytes of the current input read so far.
    read: u64,
}

impl<'a> Pieces<'a> {
    pub fn new(files: &'a [OsString], framing: Framing, limit: usize) -> Pieces<'a> {
        let limit = limit.max(1 << 16);
        let limit = match framing {
            // Whole records, at least one.
            Framing::Records(n) => (limit / n).max(1).saturating_mul(n),
            Framing::Lines(_) => limit,
        };
        Pieces {
            files,
            next: 0,
            cur: None,
            carry: Vec::new(),
            framing,
            limit,
            read: 0,
        }
    }

    /// The next piece: whole lines (the last one terminated), at most
    /// the limit unless one line is longer; `None` at the end.
    pub fn next_piece(&mut self) -> Result<Option<Vec<u8>>, Fail> {
        let mut buf = std::mem::take(&mut self.carry);
        loop {
            if self.cur.is_none() {
                if self.next == self.files.len() {
                    break;
                }
                let f = &self.files[self.next];
                self.next += 1;
                let name = super::super::common::os_to_string(f);
                let s = if f == "-" {
                    Stream::stdin()
                } else {
                    Stream::open(f, &ferry::OpenOptions::read_only())
                };
                let s =
                    s.map_err(|e| Fail::Read(name.clone(), super::super::common::os_only(e)))?;
                self.cur = Some((s, name));
                self.read = 0;
            }
            let Some((s, name)) = self.cur.as_mut() else {
                break;
            };
            // What the piece has room for; grown as it comes (no
            // buffer of the whole limit up front).
            let room = self.limit.saturating_sub(buf.len()).max(1 << 16);
            let got = match Read::by_ref(s).take(room as u64).read_to_end(&mut buf) {
                Ok(n) => n,
                Err(e) => return Err(Fail::Read(name.clone(), super::super::common::os_only(e))),
            };
            self.read += got as u64;
            if got < room {
                // This input is done: its last line ends here.
                match self.framing {
                    Framing::Lines(eol) => {
                        if buf.last().is_some_and(|&c| c != eol) {
                            buf.push(eol);
                        }
                    }
                    Framing::Records(n) => {
                        if !self.read.is_multiple_of(n as u64) {
                            return Err(Fail::Partial(name.clone(), self.read, n));
                        }
                    }
                }
                self.cur = None;
            }
            if buf.len() >= self.limit {
                break;
            }
        }
        if buf.is_empty() {
            return Ok(None);
        }
        let eol = match self.framing {
            Framing::Records(n) => {
                // Whole records; the rest waits for the next piece.
                let whole = buf.len() / n * n;
                self.carry = buf.split_off(whole);
                return Ok((!buf.is_empty()).then_some(buf));
            }
            Framing::Lines(eol) => eol,
        };
        // Keep the unfinished last line for the next piece.
        match memchr::memrchr(eol, &buf) {
            Some(i) if i + 1 < buf.len() => self.carry = buf.split_off(i + 1),
            Some(_) => {}
            None => {
                // One line longer than the buffer: read on to its end.
                self.carry = buf;
                let more = self.limit;
                self.limit = self.limit.saturating_mul(2);
                let r = self.next_piece();
                self.limit = more;
                return r;
            }
        }
        Ok(Some(buf))
    }
}

/// Writes sorted lines as a run into a new temporary file in `dir`,
/// started asynchronously; the request gives the buffer back.
pub fn start_run(
    dir: &Path,
    lines: &[&[u8]],
    framing: Framing,
    unique: Option<&Cmp>,
) -> Result<(Run, AsyncFile, Request<Buf>), Fail> {
    let (file, name) = temp_file(dir)?;
    let term = framing.terminator();
    let total: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut out = BufMut::try_with_capacity_aligned(total.max(1), 4096)
        .map_err(|e| Fail::Temp(name.clone(), e))?;
    let mut prev: Option<&[u8]> = None;
    for &l in lines {
        if let (Some(c), Some(p)) = (unique, prev) {
            if c.same(p, l) {
                continue;
            }
        }
        prev = Some(l);
        out.extend_from_slice(l);
        if let Some(t) = term {
            out.extend_from_slice(&[t]);
        }
    }
    let dup = file.try_clone().map_err(|e| Fail::Temp(name.clone(), e))?;
    let af =
        AsyncFile::from_fd(dup.into(), Backend::Auto).map_err(|e| Fail::Temp(name.clone(), e))?;
    let req = af
        .write_at(0, out.freeze())
        .map_err(|e| Fail::Temp(name.clone(), e))?;
    Ok((Run { file, name }, af, req))
}

/// Waits for a run's write; its error names the file.
pub fn finish_run(run: &Run, af: AsyncFile, req: Request<Buf>) -> Result<(), Fail> {
    let r = req.wait(None);
    drop(req);
    let c = af.close();
    r.and(c)
        .map(|_| ())
        .map_err(|e| Fail::Temp(run.name.clone(), super::super::common::os_only(e)))
}

/// A temporary file in `dir`, unlinked at once (its name kept for
/// messages).
fn temp_file(dir: &Path) -> Result<(File, String), Fail> {
    let t = tempfile::Builder::new()
        .prefix("sort")
        .tempfile_in(dir)
        .map_err(|e| Fail::Temp(dir.join("sortXXXXXX").display().to_string(), e))?;
    let name = t.path().display().to_string();
    let (file, path) = t.into_parts();
    drop(path);
    Ok((file, name))
}

/// The directory for temporary files: `-T`, else `$TMPDIR`, else `/tmp`.
pub fn temp_dir(t: Option<&OsString>) -> PathBuf {
    match t {
        Some(d) => PathBuf::from(d),
        None => std::env::var_os("TMPDIR")
            .filter(|d| !d.is_empty())
            .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from),
    }
}

/// One run's next line, in the merge's heap (the smallest first; on a
/// tie the earlier run, as GNU merges).
struct Head<'c> {
    line: Buf,
    run: usize,
    cmp: &'c Cmp,
}

impl Ord for Head<'_> {
    fn cmp(&self, o: &Self) -> Ordering {
        self.cmp
            .lines(&o.line, &self.line)
            .then_with(|| o.run.cmp(&self.run))
    }
}

impl PartialOrd for Head<'_> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Head<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Head<'_> {}

/// Merges the runs (sorted line streams) into `emit`, the first of each
/// equal run only with `unique`.
pub fn merge_runs(
    runs: Vec<Run>,
    framing: Framing,
    cmp: &Cmp,
    unique: bool,
    mut emit: impl FnMut(&[u8]) -> io::Result<()>,
) -> Result<(), (Option<String>, io::Error)> {
    let mut streams: Vec<Stream> = Vec::with_capacity(runs.len());
    let mut names: Vec<String> = Vec::with_capacity(runs.len());
    for r in runs {
        let s = Stream::from_fd(r.file.into()).map_err(|e| (Some(r.name.clone()), e))?;
        s.seek_to(std::io::SeekFrom::Start(0))
            .map_err(|e| (Some(r.name.clone()), e))?;
        streams.push(s);
        names.push(r.name);
    }
    let mut sources: Vec<Source<'_>> = streams
        .iter_mut()
        .map(|s| match framing {
            Framing::Lines(b'\n') => Source::Lines(s.buf_lines()),
            Framing::Lines(eol) => Source::Other(s, eol),
            Framing::Records(n) => Source::Records(s, n),
        })
        .collect();
    let mut heap = BinaryHeap::with_capacity(sources.len());
    for k in 0..sources.len() {
        if let Some(line) = sources[k].next().map_err(|e| (Some(names[k].clone()), e))? {
            heap.push(Head { line, run: k, cmp });
        }
    }
    let mut last: Option<Buf> = None;
    while let Some(h) = heap.pop() {
        let keep = !unique || last.as_ref().is_none_or(|p| !cmp.same(p, &h.line));
        if keep {
            emit(&h.line).map_err(|e| (None, e))?;
            if unique {
                last = Some(h.line.clone());
            }
        }
        let k = h.run;
        if let Some(line) = sources[k].next().map_err(|e| (Some(names[k].clone()), e))? {
            heap.push(Head { line, run: k, cmp });
        }
    }
    Ok(())
}

/// A run's lines: `Buf`s by reference into the stream's buffers (lines
/// ending in `\n`), or read one by one (`-z`).
enum Source<'s> {
    Lines(ferry::stream::Lines<'s>),
    Other(&'s mut Stream, u8),
    /// Records: `salloc` regions of the stream, by reference.
    Records(&'s mut Stream, usize),
}

impl Source<'_> {
    fn next(&mut self) -> io::Result<Option<Buf>> {
        match self {
            Source::Lines(it) => match it.next() {
                Some(Ok(b)) => {
                    let n = b.len() - usize::from(b.ends_with(b"\n"));
                    Ok(Some(b.slice(..n)))
                }
                Some(Err(e)) => Err(e),
                None => Ok(None),
            },
            Source::Other(s, eol) => read_line(s, *eol),
            Source::Records(s, n) => {
                let r = s.salloc(*n)?;
                if r.is_empty() {
                    return Ok(None);
                }
                Ok(Some(r.into_buf()))
            }
        }
    }
}

/// The next line of a run (without its terminator), copied (`-z`).
fn read_line(s: &mut Stream, eol: u8) -> io::Result<Option<Buf>> {
    let mut v = Vec::new();
    let n = std::io::BufRead::read_until(s, eol, &mut v)?;
    if n == 0 {
        return Ok(None);
    }
    if v.last() == Some(&eol) {
        v.pop();
    }
    Ok(Some(Buf::from(v)))
}
