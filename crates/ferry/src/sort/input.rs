//! The inputs, read a piece at a time: whole lines (or records), at most
//! a piece's worth, taken by reference where the input allows it.
//!
//! A piece of a mapped input is its pages ([`Buf`], from `salloc`): no
//! byte is copied to be sorted, and the unfinished last line is left to
//! start the next piece (the stream seeks back to it). A piece of memory
//! the caller lent is a slice of it. Inputs that are not mapped (pipes,
//! terminals, small files gathered together) are read into a buffer that
//! grows as the bytes come ([`read_growing`]: fallibly, so that memory
//! that cannot be had is an error, not an abort) and is given back to
//! hold the next piece once the run is written ([`Pieces::recycle`]).
//!
//! Inputs are opened one at a time, when their turn comes, so that any
//! number of them can be sorted together.

use super::error::{os_only, Fail};
use super::Framing;
use crate::{Buf, OpenOptions, Stream};
use std::io::{self, Read, SeekFrom};
use std::path::PathBuf;

/// One input of a sort: a file by name, standard input, an open stream,
/// or bytes in memory. Its name is what errors call it
/// ([`Place::Input`](super::Place::Input)); [`named`](Input::named)
/// changes it.
///
/// ```
/// use ferry::sort::Input;
/// let a = Input::path("/etc/hostname");
/// let b = Input::bytes(b"in memory\n").named("the list");
/// assert_eq!(a.name(), "/etc/hostname");
/// assert_eq!(b.name(), "the list");
/// ```
pub struct Input<'a> {
    source: Source<'a>,
    name: String,
}

enum Source<'a> {
    Path(PathBuf, OpenOptions),
    Stdin,
    Stream(Box<Stream>),
    Bytes(&'a [u8]),
}

impl<'a> Input<'a> {
    /// The file at `path`, opened read-only (mapped where it can be,
    /// under a read lease) when its turn comes.
    pub fn path(path: impl Into<PathBuf>) -> Input<'static> {
        Input::path_with(path, OpenOptions::read_only())
    }

    /// The file at `path`, opened with `opts` when its turn comes.
    pub fn path_with(path: impl Into<PathBuf>, opts: OpenOptions) -> Input<'static> {
        let path = path.into();
        let name = path.display().to_string();
        Input {
            source: Source::Path(path, opts),
            name,
        }
    }

    /// Standard input (named `-`).
    pub fn stdin() -> Input<'static> {
        Input {
            source: Source::Stdin,
            name: "-".into(),
        }
    }

    /// An open stream, read from its position to its end.
    pub fn stream(stream: Stream) -> Input<'static> {
        let name = stream.name();
        Input {
            source: Source::Stream(Box::new(stream)),
            name,
        }
    }

    /// Bytes in memory, sorted by reference (pieces are slices of them).
    pub fn bytes(data: &'a [u8]) -> Input<'a> {
        Input {
            source: Source::Bytes(data),
            name: "memory".into(),
        }
    }

    /// The same input, called `name` in errors.
    pub fn named(self, name: impl Into<String>) -> Input<'a> {
        Input {
            name: name.into(),
            ..self
        }
    }

    /// What errors call this input.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The input, open: a stream or the bytes.
    fn open(self) -> io::Result<Cur<'a>> {
        Ok(match self.source {
            Source::Path(p, opts) => Cur::Stream(Box::new(Stream::open(p, &opts)?)),
            Source::Stdin => Cur::Stream(Box::new(Stream::stdin()?)),
            Source::Stream(s) => Cur::Stream(s),
            Source::Bytes(b) => Cur::Bytes(b, 0),
        })
    }

    /// All of the input, read into memory (lent bytes stay lent).
    pub(crate) fn read_whole(self, index: usize) -> Result<Whole<'a>, Fail> {
        let name = self.name.clone();
        let fail = |e| Fail::Read(index, name.clone(), os_only(e));
        match self.open().map_err(fail)? {
            Cur::Bytes(b, _) => Ok(Whole::Lent(b)),
            Cur::Stream(mut s) => {
                let mut v = Vec::new();
                read_growing(&mut *s, &mut v, usize::MAX).map_err(fail)?;
                Ok(Whole::Read(v))
            }
        }
    }
}

/// A whole input in memory.
pub(crate) enum Whole<'a> {
    Read(Vec<u8>),
    Lent(&'a [u8]),
}

impl std::ops::Deref for Whole<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Whole::Read(v) => v,
            Whole::Lent(b) => b,
        }
    }
}

/// An open input.
enum Cur<'a> {
    Stream(Box<Stream>),
    /// Bytes and how far they have been taken.
    Bytes(&'a [u8], usize),
}

impl<'a> Cur<'a> {
    /// Whether pieces can be taken by reference (and the position moved
    /// back).
    fn by_reference(&self) -> bool {
        match self {
            Cur::Stream(s) => s.is_mapped(),
            Cur::Bytes(..) => true,
        }
    }

    fn position(&self) -> u64 {
        match self {
            Cur::Stream(s) => s.position(),
            Cur::Bytes(_, at) => *at as u64,
        }
    }

    /// Moves the position `back` bytes back, or to `Some(at)`.
    fn seek(&mut self, to: SeekFrom) -> io::Result<()> {
        match self {
            Cur::Stream(s) => s.seek_to(to).map(drop),
            Cur::Bytes(_, at) => {
                *at = match to {
                    SeekFrom::Start(n) => n as usize,
                    SeekFrom::Current(d) => at.saturating_add_signed(d as isize),
                    SeekFrom::End(_) => unreachable!("pieces never seek from the end"),
                };
                Ok(())
            }
        }
    }

    /// Up to `limit` bytes by reference.
    fn take(&mut self, limit: usize) -> io::Result<Piece<'a>> {
        match self {
            Cur::Stream(s) => Ok(Piece::Mapped(s.salloc(limit)?.into_buf())),
            Cur::Bytes(b, at) => {
                let from = (*at).min(b.len());
                let n = (b.len() - from).min(limit);
                *at = from + n;
                Ok(Piece::Lent(&b[from..from + n]))
            }
        }
    }

    /// [`read_growing`] from the input.
    fn read_growing(&mut self, buf: &mut Vec<u8>, room: usize) -> io::Result<usize> {
        match self {
            Cur::Stream(s) => read_growing(&mut **s, buf, room),
            Cur::Bytes(b, at) => {
                let mut rest = &b[(*at).min(b.len())..];
                let n = read_growing(&mut rest, buf, room)?;
                *at += n;
                Ok(n)
            }
        }
    }
}

/// Reads `r` onto the end of `buf` until its end or `room` bytes, growing
/// `buf` with `try_reserve` (doubling, at least 1 MiB at a time): memory
/// that cannot be had is `OutOfMemory`, not an abort. The bytes read.
pub(crate) fn read_growing(r: &mut impl Read, buf: &mut Vec<u8>, room: usize) -> io::Result<usize> {
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

/// Pieces of whole lines, read from the inputs in turn.
pub(crate) struct Pieces<'a> {
    inputs: std::vec::IntoIter<Input<'a>>,
    /// The number of the next input.
    next: usize,
    /// The open input, its number and name.
    cur: Option<(Cur<'a>, usize, String)>,
    carry: Vec<u8>,
    framing: Framing,
    limit: usize,
    /// Bytes of the current input read so far.
    read: u64,
    /// A piece's memory given back, to hold the next.
    spare: Vec<u8>,
}

impl<'a> Pieces<'a> {
    /// Pieces of at most `limit` bytes (at least 64 KiB) unless one line
    /// is longer.
    pub(crate) fn new(inputs: Vec<Input<'a>>, framing: Framing, limit: usize) -> Pieces<'a> {
        let limit = limit.max(1 << 16);
        let limit = match framing {
            // Whole records, at least one.
            Framing::Records(n) => (limit / n).max(1).saturating_mul(n),
            Framing::Lines(_) => limit,
        };
        Pieces {
            inputs: inputs.into_iter(),
            next: 0,
            cur: None,
            carry: Vec::new(),
            framing,
            limit,
            read: 0,
            spare: Vec::new(),
        }
    }

    /// The next piece: whole lines (the last one terminated, or the
    /// input's last line without its terminator), at most the limit
    /// unless one line is longer; `None` at the end. A piece of one
    /// mapped input is its pages, by reference (no copy); pieces of
    /// streams that are not mapped, and small inputs gathered into one
    /// piece, are read into memory.
    pub(crate) fn next_piece(&mut self) -> Result<Option<Piece<'a>>, Fail> {
        if let (false, Some((c, i, name))) = (self.carry.is_empty(), self.cur.as_mut()) {
            // The unfinished line or record read last is the current
            // input's: where it is still there, take it again from there.
            if c.by_reference() {
                let back = -(self.carry.len() as i64);
                c.seek(SeekFrom::Current(back))
                    .map_err(|e| Fail::Read(*i, name.clone(), os_only(e)))?;
                self.read -= self.carry.len() as u64;
                self.carry.clear();
            }
        }
        if self.carry.is_empty() {
            if let Some(p) = self.piece_by_reference()? {
                return Ok(Some(p));
            }
        }
        Ok(self.read_piece()?.map(Piece::Owned))
    }

    /// Opens the next input if none is open; false when there is none.
    fn open_next(&mut self) -> Result<bool, Fail> {
        if self.cur.is_some() {
            return Ok(true);
        }
        let Some(input) = self.inputs.next() else {
            return Ok(false);
        };
        let index = self.next;
        self.next += 1;
        let name = input.name.clone();
        let c = input
            .open()
            .map_err(|e| Fail::Read(index, name.clone(), os_only(e)))?;
        self.cur = Some((c, index, name));
        self.read = 0;
        Ok(true)
    }

    /// A piece of the current input by reference, where it is mapped (or
    /// memory) and has at least half a piece left; `None` (nothing taken)
    /// otherwise.
    fn piece_by_reference(&mut self) -> Result<Option<Piece<'a>>, Fail> {
        if !self.open_next()? {
            return Ok(None);
        }
        let more_inputs = self.inputs.len() > 0;
        let Some((c, index, name)) = self.cur.as_mut() else {
            return Ok(None);
        };
        if !c.by_reference() {
            return Ok(None);
        }
        let (index, name) = (*index, name.clone());
        let io = |e: io::Error| Fail::Read(index, name.clone(), os_only(e));
        let at = c.position();
        let r = c.take(self.limit).map_err(io)?;
        let done = r.len() < self.limit;
        if done && r.len() < self.limit / 2 && more_inputs {
            // A small input: read with the next into one piece.
            drop(r);
            c.seek(SeekFrom::Start(at)).map_err(io)?;
            return Ok(None);
        }
        if r.is_empty() {
            self.cur = None;
            return self.piece_by_reference();
        }
        let r = match self.framing {
            Framing::Records(n) => {
                let total = self.read + r.len() as u64;
                if done && !total.is_multiple_of(n as u64) {
                    return Err(Fail::Partial(index, name, total, n));
                }
                r
            }
            Framing::Lines(_) if done => r,
            Framing::Lines(eol) => match memchr::memrchr(eol, &r) {
                Some(i) => {
                    // The unfinished last line starts the next piece.
                    let back = (r.len() - i - 1) as i64;
                    c.seek(SeekFrom::Current(-back)).map_err(io)?;
                    r.cut(i + 1)
                }
                None => {
                    // One line longer than a piece: read as before.
                    drop(r);
                    c.seek(SeekFrom::Start(at)).map_err(io)?;
                    return Ok(None);
                }
            },
        };
        self.read += r.len() as u64;
        if done {
            self.cur = None;
        }
        Ok(Some(r))
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
            let Some((c, index, name)) = self.cur.as_mut() else {
                break;
            };
            // What the piece has room for; grown as it comes (no
            // buffer of the whole limit up front).
            let room = self.limit.saturating_sub(buf.len()).max(1 << 16);
            let got = match c.read_growing(&mut buf, room) {
                Ok(n) => n,
                Err(e) => return Err(Fail::Read(*index, name.clone(), os_only(e))),
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
                            return Err(Fail::Partial(*index, name.clone(), self.read, n));
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

    /// Gives a piece's memory back: the next piece is read into it (no
    /// new pages to fault in).
    pub(crate) fn recycle(&mut self, piece: Piece<'_>) {
        if let Piece::Owned(v) = piece {
            if v.capacity() > self.spare.capacity() {
                self.spare = v;
            }
        }
    }
}

/// A piece of the input: read into memory, a mapped input's pages, or a
/// slice of lent memory.
pub(crate) enum Piece<'a> {
    Owned(Vec<u8>),
    Mapped(Buf),
    Lent(&'a [u8]),
}

impl Piece<'_> {
    /// The first `n` bytes.
    fn cut(self, n: usize) -> Self {
        match self {
            Piece::Owned(mut v) => {
                v.truncate(n);
                Piece::Owned(v)
            }
            Piece::Mapped(b) => Piece::Mapped(b.slice(..n)),
            Piece::Lent(b) => Piece::Lent(&b[..n]),
        }
    }
}

impl std::ops::Deref for Piece<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Piece::Owned(v) => v,
            Piece::Mapped(b) => b,
            Piece::Lent(b) => b,
        }
    }
}

impl Default for Piece<'_> {
    fn default() -> Self {
        Piece::Owned(Vec::new())
    }
}
