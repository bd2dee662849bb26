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
    /// Creating a temporary file in a directory (its name).
    TempDir(String, io::Error),
    /// An input of records whose size is not a whole number of them.
    Partial(String, u64, usize),
}

/// Reads `r` onto the end of `buf` until its end or `room` bytes, growing
/// `buf` with `try_reserve` (doubling, at least 1 MiB at a time): memory
/// that cannot be had is `OutOfMemory` (GNU's "memory exhausted"), not an
/// abort. The bytes read.
pub fn read_growing(r: &mut impl Read, buf: &mut Vec<u8>, room: usize) -> io::Result<usize> {
    let mut got = 0;
    while got < room {
        if buf.len() == buf.capacity() {
            let grow = (room - got).min(buf.capacity().max(1 << 20));
            buf.try_reserve_exact(grow)
                .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        }
        let spare = (buf.capacity() - buf.len()).min(room - got);
        // Within the spare capacity read_to_end does not grow the buffer.
        let n = Read::by_ref(r).take(spare as u64).read_to_end(buf)?;
        got += n;
        if n < spare {
            break;
        }
    }
    Ok(got)
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
    /// A piece's memory given back, to hold the next.
    spare: Vec<u8>,
    /// The output (`-o`), which may be one of the inputs.
    output: Option<&'a OsString>,
}

impl<'a> Pieces<'a> {
    /// Names the output (`-o`): an input that is the output keeps its
    /// lease (`input_options_for`).
    pub fn output(mut self, output: Option<&'a OsString>) -> Pieces<'a> {
        self.output = output;
        self
    }

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
            spare: Vec::new(),
            output: None,
        }
    }

    /// The next piece: whole lines (the last one terminated, or the
    /// input's last line without its terminator), at most the limit
    /// unless one line is longer; `None` at the end. A piece of one
    /// mapped input is its pages, by reference (no copy); pieces of
    /// streams that are not mapped, and small inputs gathered into one
    /// piece, are read into memory.
    pub fn next_piece(&mut self) -> Result<Option<Piece>, Fail> {
        if let (false, Some((s, name))) = (self.carry.is_empty(), self.cur.as_ref()) {
            // The unfinished line or record read last is the current
            // input's: on a mapped input, read it again from there.
            if s.is_mapped() {
                let back = -(self.carry.len() as i64);
                s.seek_to(std::io::SeekFrom::Current(back))
                    .map_err(|e| Fail::Read(name.clone(), super::super::common::os_only(e)))?;
                self.read -= self.carry.len() as u64;
                self.carry.clear();
            }
        }
        if self.carry.is_empty() {
            if let Some(p) = self.mapped_piece()? {
                return Ok(Some(Piece::Mapped(p)));
            }
        }
        Ok(self.read_piece()?.map(Piece::Owned))
    }

    /// Opens the next input if none is open; false when there is none.
    fn open_next(&mut self) -> Result<bool, Fail> {
        if self.cur.is_some() {
            return Ok(true);
        }
        if self.next == self.files.len() {
            return Ok(false);
        }
        let f = &self.files[self.next];
        self.next += 1;
        let name = super::super::common::quotef(f);
        let s = if f == "-" {
            Stream::stdin()
        } else {
            Stream::open(f, &super::input_options_for(f, self.output))
        };
        let s = s.map_err(|e| Fail::Read(name.clone(), super::super::common::os_only(e)))?;
        self.cur = Some((s, name));
        self.read = 0;
        Ok(true)
    }

    /// A piece of the current input by reference, where it is mapped and
    /// has at least half a piece left; `None` (nothing taken) otherwise.
    fn mapped_piece(&mut self) -> Result<Option<Buf>, Fail> {
        if !self.open_next()? {
            return Ok(None);
        }
        let Some((s, name)) = self.cur.as_mut() else {
            return Ok(None);
        };
        if !s.is_mapped() {
            return Ok(None);
        }
        let io = |e: io::Error| Fail::Read(name.clone(), super::super::common::os_only(e));
        let at = s.position();
        let r = s.salloc(self.limit).map_err(io)?;
        let done = r.len() < self.limit;
        if done && r.len() < self.limit / 2 && self.next < self.files.len() {
            // A small input: read with the next into one piece.
            drop(r);
            s.seek_to(std::io::SeekFrom::Start(at)).map_err(io)?;
            return Ok(None);
        }
        let b = r.into_buf();
        if b.is_empty() {
            self.cur = None;
            return self.mapped_piece();
        }
        let b = match self.framing {
            Framing::Records(n) => {
                let total = self.read + b.len() as u64;
                if done && !total.is_multiple_of(n as u64) {
                    return Err(Fail::Partial(name.clone(), total, n));
                }
                b
            }
            Framing::Lines(_) if done => b,
            Framing::Lines(eol) => match memchr::memrchr(eol, &b) {
                Some(i) => {
                    // The unfinished last line starts the next piece.
                    let back = (b.len() - i - 1) as i64;
                    s.seek_to(std::io::SeekFrom::Current(-back)).map_err(io)?;
                    b.slice(..i + 1)
                }
                None => {
                    // One line longer than a piece: read as before.
                    drop(b);
                    s.seek_to(std::io::SeekFrom::Start(at)).map_err(io)?;
                    return Ok(None);
                }
            },
        };
        self.read += b.len() as u64;
        if done {
            self.cur = None;
        }
        Ok(Some(b))
    }

    /// The next piece read into memory.
    fn read_piece(&mut self) -> Result<Option<Vec<u8>>, Fail> {
        let mut buf = std::mem::take(&mut self.spare);
        buf.clear();
        if buf.capacity() < self.carry.len() {
            buf = std::mem::take(&mut self.carry);
        } else {
            buf.extend_from_slice(&self.carry);
            self.carry.clear();
        }
        loop {
            if !self.open_next()? {
                break;
            }
            let Some((s, name)) = self.cur.as_mut() else {
                break;
            };
            // What the piece has room for; grown as it comes (no
            // buffer of the whole limit up front).
            let room = self.limit.saturating_sub(buf.len()).max(1 << 16);
            let got = match read_growing(s, &mut buf, room) {
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
                let r = self.read_piece();
                self.limit = more;
                return r;
            }
        }
        Ok(Some(buf))
    }
}

impl Pieces<'_> {
    /// Gives a piece's memory back: the next piece is read into it (no
    /// new pages to fault in).
    pub fn recycle(&mut self, piece: Piece) {
        if let Piece::Owned(v) = piece {
            if v.capacity() > self.spare.capacity() {
                self.spare = v;
            }
        }
    }
}

/// A piece of the input: read into memory, or a mapped input's pages.
pub enum Piece {
    Owned(Vec<u8>),
    Mapped(Buf),
}

impl std::ops::Deref for Piece {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Piece::Owned(v) => v,
            Piece::Mapped(b) => b,
        }
    }
}

impl Default for Piece {
    fn default() -> Piece {
        Piece::Owned(Vec::new())
    }
}

/// Writes sorted lines as a run into a new temporary file in `dir`,
/// started asynchronously; the request gives the buffer back.
pub fn start_run(
    dir: &Path,
    lines: &[&[u8]],
    framing: Framing,
    unique: Option<&Cmp>,
    spare: Option<BufMut>,
) -> Result<(Run, AsyncFile, Request<Buf>), Fail> {
    let term = framing.terminator();
    let total: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut out = buffer(spare, total).map_err(|e| Fail::Temp(dir.display().to_string(), e))?;
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
    start_run_of(dir, out.freeze())
}

/// Writes `data` (a sorted run) into a new temporary file in `dir`,
/// started asynchronously; the request gives the buffer back.
pub fn start_run_of(dir: &Path, data: Buf) -> Result<(Run, AsyncFile, Request<Buf>), Fail> {
    let (file, name) = temp_file(dir)?;
    let dup = file.try_clone().map_err(|e| Fail::Temp(name.clone(), e))?;
    let af =
        AsyncFile::from_fd(dup.into(), Backend::Auto).map_err(|e| Fail::Temp(name.clone(), e))?;
    let req = af
        .write_at(0, data)
        .map_err(|e| Fail::Temp(name.clone(), e))?;
    Ok((Run { file, name }, af, req))
}

/// How many runs one merge reads at once: a quarter of the descriptors
/// the process may open (each run holds one, and its mapping's lease may
/// take another), at most 64 and at least 2.
pub fn fan_in() -> usize {
    let open = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(1024);
    (open.saturating_sub(32) / 4).clamp(2, 64) as usize
}

impl Run {
    /// A run in `file` (written), named `name` in messages.
    pub fn new(file: File, name: String) -> Run {
        Run { file, name }
    }

    /// The run as a stream read from its start: its pages mapped where
    /// the file allows it (a read-only descriptor, reopened through
    /// `/proc/self/fd`, once the writable one is closed: a mapping is
    /// taken under a read lease, which no writer may hold), else read
    /// into the stream's buffers.
    pub fn into_stream(self) -> Result<(Stream, String), (Option<String>, io::Error)> {
        use std::os::fd::AsRawFd;
        let Run { file, name } = self;
        let fail = |e| (Some(name.clone()), e);
        let file = match File::open(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            Ok(ro) => {
                drop(file);
                let dup = ro.try_clone().map_err(fail)?;
                if let Ok(s) =
                    Stream::from_fd_with(dup.into(), &name, ferry::stream::Backend::Mapped)
                {
                    return Ok((s, name));
                }
                ro
            }
            Err(_) => file,
        };
        let s = Stream::from_fd(file.into()).map_err(fail)?;
        s.seek_to(std::io::SeekFrom::Start(0)).map_err(fail)?;
        Ok((s, name))
    }
}

/// Waits for a run's write; its error names the file. The run's memory
/// comes back for the next run where no one else holds it.
pub fn finish_run(run: &Run, af: AsyncFile, req: Request<Buf>) -> Result<Option<BufMut>, Fail> {
    let r = req.wait(None);
    let spare = req.into_inner().try_into_mut().ok();
    let c = af.close();
    r.and(c)
        .map(|_| spare)
        .map_err(|e| Fail::Temp(run.name.clone(), super::super::common::os_only(e)))
}

/// An empty page-aligned buffer of at least `len` bytes: `spare` if it is
/// large enough.
pub fn buffer(spare: Option<BufMut>, len: usize) -> io::Result<BufMut> {
    match spare {
        Some(mut b) if b.capacity() >= len => {
            b.clear();
            Ok(b)
        }
        // Rounded up: the next run, a few lines longer, fits too.
        _ => BufMut::try_with_capacity_aligned(
            len.checked_next_multiple_of(1 << 20)
                .and_then(|n| n.checked_add(1 << 20))
                .unwrap_or(len)
                .max(1),
            4096,
        ),
    }
}

/// A temporary file in `dir` that no name ever reaches (`O_TMPFILE`), so
/// that nothing is left behind whenever the program stops, Ctrl-C
/// included; where the file system has no such files, a named one
/// unlinked at once. The name returned is for messages.
pub fn temp_file(dir: &Path) -> Result<(File, String), Fail> {
    use std::os::unix::fs::OpenOptionsExt;
    let unnamed = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(dir);
    match unnamed {
        Ok(f) => {
            let name = format!("{} (an unnamed temporary file)", dir.join("sort").display());
            return Ok((f, name));
        }
        // No O_TMPFILE here (EOPNOTSUPP; EISDIR from kernels that ignore
        // the flag): a named file. Other errors are the directory's.
        Err(e) if !matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR)) => {
            return Err(Fail::TempDir(dir.display().to_string(), e));
        }
        Err(_) => {}
    }
    let t = tempfile::Builder::new()
        .prefix("sort")
        .tempfile_in(dir)
        .map_err(|e| Fail::TempDir(dir.display().to_string(), e))?;
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
        let (s, name) = r.into_stream()?;
        streams.push(s);
        names.push(name);
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
