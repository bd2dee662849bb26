//! One file's search: regions of lines through the matcher, GNU's binary
//! file rules, and the output of selected lines, counts and names.

use super::*;
use ferry::stream::Ends;
use std::os::fd::AsFd;

/// Why a file's search stopped.
pub(super) enum Failure {
    /// The file could not be opened: it has no count or name to report.
    Open(io::Error),
    Read(io::Error),
    Write(io::Error),
}

/// One file's search.
pub(super) struct Search<'a> {
    pub(super) o: &'a Opts,
    pub(super) m: Option<&'a mut Matcher>,
    /// With a second core: counts the second half of each block.
    pub(super) m2: Option<&'a mut Matcher>,
    pub(super) out: &'a mut Out,
    pub(super) name: &'a [u8],
    pub(super) with_name: bool,
    /// Lines before the current block.
    pub(super) lineno: u64,
    pub(super) selected: u64,
    /// Binary (NULs seen) from here on.
    pub(super) binary: bool,
    pub(super) selected_at_binary: u64,
    pub(super) encoding_held_back: bool,
    /// File offset of the current block.
    pub(super) offset: u64,
    /// File offset of the data being scanned, and how far into it lines
    /// are counted (in `lineno`) and handled (printed or passed over).
    pub(super) base: u64,
    pub(super) counted: usize,
    pub(super) floor: usize,
    /// Something was printed, in this file or an earlier one (a group
    /// separator goes before the next group).
    pub(super) printed: bool,
    /// The file offset just past the last line printed in this file.
    pub(super) last_end: Option<u64>,
    /// Trailing context lines still to print.
    pub(super) after_left: usize,
    /// `-m` reached: only trailing context is still printed.
    pub(super) draining: bool,
    /// Up to `-B` unprinted lines from before the current data: bytes,
    /// file offset, line number.
    pub(super) carry: std::collections::VecDeque<(Vec<u8>, u64, u64)>,
    /// `-T`: the width numbers are padded to.
    pub(super) width: usize,
    /// Reused for building an output line.
    pub(super) scratch: Vec<u8>,
    /// File offset of a NUL just after the current block, in the line the
    /// region cut.
    pub(super) tail_nul: Option<u64>,
}

impl<'a> Search<'a> {
    /// A search of one file (named `name` in output) with the matchers.
    pub(super) fn new(
        o: &'a Opts,
        m: Option<&'a mut Matcher>,
        m2: Option<&'a mut Matcher>,
        out: &'a mut Out,
        name: &'a [u8],
        with_name: bool,
    ) -> Search<'a> {
        Search {
            o,
            m,
            m2,
            out,
            name,
            with_name,
            lineno: 0,
            selected: 0,
            binary: false,
            selected_at_binary: 0,
            encoding_held_back: false,
            offset: 0,
            base: 0,
            counted: 0,
            floor: 0,
            printed: false,
            last_end: None,
            after_left: 0,
            draining: false,
            carry: Default::default(),
            width: 0,
            scratch: Vec::new(),
            tail_nul: None,
        }
    }

    pub(super) fn file(&mut self, f: &std::ffi::OsStr) -> Result<(), Failure> {
        let s = if f == "-" {
            Stream::stdin()
        } else {
            Stream::open(f, &common::input_options())
        };
        let s = s.map_err(|e| {
            let e = common::os_only(e);
            // A directory is opened by GNU, and fails on the read.
            if e.raw_os_error() == Some(libc::EISDIR) {
                Failure::Read(e)
            } else {
                Failure::Open(e)
            }
        })?;
        if self.o.initial_tab {
            // GNU pads to the digits of the file's size (of the largest
            // offset for a pipe).
            self.width = match s.len() {
                Ok(n) if is_regular(f) => n.to_string().len(),
                _ => 19,
            };
        }
        if !self.o.text && !self.o.nul_data && has_hole(f, &s) {
            if self.o.skip_binary {
                return Ok(());
            }
            self.go_binary();
        }
        let eol = self.o.eol();
        // A NUL turns the file binary, and NULs then end lines: a line cut
        // by a region's end ends at its last NUL rather than being
        // gathered on (a run of NULs is many empty lines, not one line
        // longer than memory).
        let ends = if self.o.text || self.o.nul_data {
            Ends::at(eol)
        } else {
            Ends::at(eol).or(0)
        };
        // Counting a large file: both cores, each on half of every block.
        let two = self.m2.is_some()
            && !self.o.text
            && s.len().is_ok_and(|l| l >= 64 << 20)
            && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
        // A last line without a newline is searched as if it had one.
        let as_they_come = self.o.line_buffered && !s.is_mapped() && !is_regular(f);
        let each = |block: &[u8], rest: &[u8]| {
            // A NUL in the cut line after the block, where GNU's read
            // would bring it in with the block's last lines.
            self.tail_nul = if self.o.nul_data || self.o.text {
                None
            } else {
                memchr::memchr(0, rest).map(|i| self.offset + (block.len() + i) as u64)
            };
            let flow = if two {
                self.count_two(block)?
            } else {
                self.block(block)?
            };
            Ok(flow == Flow::Go)
        };
        match s.raw_fd() {
            // --line-buffered on a pipe or terminal: lines are searched as
            // they come, not once a region is full.
            Some(fd) if as_they_come => {
                // SAFETY: the stream owns the descriptor and outlives this
                // borrow of it.
                let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
                as_it_comes(fd, ends, each)
            }
            _ => ferry::stream::for_each_block_peek(
                &s,
                if two { 16 << 20 } else { 4 << 20 },
                ends,
                |e| Failure::Read(common::os_only(e)),
                each,
            ),
        }
    }

    /// Counts the selected lines of a block on two cores. A half with a NUL
    /// sends the block down the ordinary path, which turns binary where GNU
    /// does.
    fn count_two(&mut self, data: &[u8]) -> Result<Flow, Failure> {
        let mid = ferry::stream::split_after_line_end(data, b'\n');
        let (false, Some(mid)) = (self.binary, mid) else {
            return self.block(data);
        };
        let (a, b) = data.split_at(mid);
        let invert = self.o.invert;
        let (Some(m), Some(m2)) = (self.m.as_deref_mut(), self.m2.as_deref_mut()) else {
            return self.block(data);
        };
        let (ca, cb) = std::thread::scope(|sc| {
            let h = sc.spawn(move || count_text(m2, b, invert));
            let ca = count_text(m, a, invert);
            (ca, h.join().ok().flatten())
        });
        match (ca, cb) {
            (Some(ca), Some(cb)) => {
                self.offset += data.len() as u64;
                self.selected += ca + cb;
                Ok(Flow::Go)
            }
            _ => self.block(data),
        }
    }

    fn go_binary(&mut self) {
        self.binary = true;
        self.selected_at_binary = self.selected;
    }

    /// GNU stops a binary file at its first selected line, except when
    /// counting.
    fn stops_at_first(&self) -> bool {
        self.binary && self.o.report != Report::Count
    }

    /// True when the file's lines were held back because it is binary.
    pub(super) fn binary_message(&self) -> bool {
        self.o.report == Report::Lines
            && !self.o.skip_binary
            && (self.encoding_held_back || (self.binary && self.selected > self.selected_at_binary))
    }

    /// Searches a block of whole lines (each ending in a newline, or a
    /// NUL in a binary file). While the file may still turn binary, it
    /// goes in pieces of about 256 KiB so that the NUL check and the
    /// search read the piece from the cache; the NUL check runs a GNU
    /// buffer ahead of the piece, since GNU turns binary where the buffer
    /// holding a NUL starts, which may be in the piece before.
    fn block(&mut self, data: &[u8]) -> Result<Flow, Failure> {
        const PIECE: usize = 256 << 10;
        let ahead = GNU_BUFFER as usize;
        let base = self.offset;
        // The first NUL among the block's bytes before `scanned`.
        let (mut scanned, mut nul) = (0usize, None::<usize>);
        let mut from = 0;
        while data.len() - from > PIECE && !self.binary && !self.o.text && !self.o.nul_data {
            let rest = &data[from..];
            let end = from
                + match memchr::memrchr(b'\n', &rest[..PIECE]) {
                    Some(i) => i + 1,
                    None => {
                        memchr::memchr(b'\n', &rest[PIECE..]).map_or(rest.len(), |i| PIECE + i + 1)
                    }
                };
            let reach = (end + ahead).min(data.len());
            if nul.is_none() && scanned < reach {
                nul = memchr::memchr(0, &data[scanned..reach]).map(|i| scanned + i);
                scanned = reach;
            }
            let at = nul.map(|p| base + p as u64);
            if self.piece(&data[from..end], at)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
            from = end;
        }
        if nul.is_none() && scanned < data.len() && !self.binary && !self.o.text && !self.o.nul_data
        {
            nul = memchr::memchr(0, &data[scanned..]).map(|i| scanned + i);
        }
        let at = nul.map(|p| base + p as u64);
        self.piece(&data[from..], at)
    }

    /// Searches whole lines, turning binary at a NUL as GNU does: `nul`
    /// is the file offset of the first NUL from the start of `data` on, as
    /// far as it was looked for.
    fn piece(&mut self, data: &[u8], nul: Option<u64>) -> Result<Flow, Failure> {
        let start = self.offset;
        self.offset += data.len() as u64;
        if data.is_empty() {
            return Ok(Flow::Go);
        }
        if self.o.nul_data {
            // NULs end lines: newlines and NULs swap places, so that the
            // matcher sees lines as usual (output swaps them back).
            let swapped: Vec<u8> = data
                .iter()
                .map(|&b| match b {
                    0 => b'\n',
                    b'\n' => 0,
                    b => b,
                })
                .collect();
            self.base = start;
            return self.scan(&swapped);
        }
        if !self.binary && !self.o.text {
            let nul = nul.or(self.tail_nul);
            let buf_start = nul.map(|p| (p / GNU_BUFFER * GNU_BUFFER).max(start));
            if let Some(buf_start) = buf_start.filter(|&b| b < start + data.len() as u64) {
                // GNU notices the NUL at the start of the buffer holding it,
                // which begins with a whole line.
                let at = (buf_start - start) as usize;
                let line_start = memchr::memrchr(b'\n', &data[..at]).map_or(0, |i| i + 1);
                self.base = start;
                if self.lines(&data[..line_start])? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
                if self.o.skip_binary {
                    // -I: the file counts as having no selected line.
                    self.selected = 0;
                    return Ok(Flow::Stop);
                }
                self.go_binary();
                self.base = start + line_start as u64;
                return self.lines(&data[line_start..]);
            }
        }
        self.base = start;
        self.lines(data)
    }

    /// Searches whole lines in the current text/binary mode.
    fn lines(&mut self, data: &[u8]) -> Result<Flow, Failure> {
        if data.is_empty() {
            return Ok(Flow::Go);
        }
        if self.binary {
            // NULs end lines in a binary file.
            let zapped: Vec<u8> = data
                .iter()
                .map(|&b| if b == 0 { b'\n' } else { b })
                .collect();
            return self.scan(&zapped);
        }
        self.scan(data)
    }

    /// Finds the selected lines of `data` (whole lines, starting at file
    /// offset `self.base`) and reports them.
    fn scan(&mut self, data: &[u8]) -> Result<Flow, Failure> {
        self.counted = 0;
        self.floor = 0;
        let mut pos = 0usize;
        let mut flow = Flow::Go;
        while pos < data.len() {
            if self.draining {
                // -m reached: the rest is trailing context at most.
                break;
            }
            let hit = match self.m.as_deref_mut() {
                Some(m) => m.first_line_match(data, pos),
                None => None,
            };
            let (ls, le) = match hit {
                Some(h) => {
                    let ls = memchr::memrchr(b'\n', &data[pos..h]).map_or(pos, |i| pos + i + 1);
                    if ls >= data.len() {
                        (data.len(), data.len())
                    } else {
                        let le = memchr::memchr(b'\n', &data[h..]).map_or(data.len(), |i| h + i);
                        (ls, le)
                    }
                }
                None => (data.len(), data.len()),
            };
            if self.o.invert {
                // Every line from pos up to the matching one is selected.
                let mut a = pos;
                while a < ls {
                    let e = memchr::memchr(b'\n', &data[a..ls]).map_or(ls, |i| a + i);
                    if self.select(data, a, e)? == Flow::Stop {
                        flow = Flow::Stop;
                        break;
                    }
                    if self.draining {
                        break;
                    }
                    a = e + 1;
                }
                if flow == Flow::Stop {
                    break;
                }
            } else if ls < data.len() && self.select(data, ls, le)? == Flow::Stop {
                flow = Flow::Stop;
                break;
            }
            pos = le + 1;
        }
        if flow == Flow::Go
            && self.o.report == Report::Lines
            && self.o.context()
            && self.end_of_data(data).map_err(Failure::Write)? == Flow::Stop
        {
            flow = Flow::Stop;
        }
        if self.o.numbers && self.o.report == Report::Lines {
            self.lineno += bytecount::count(&data[self.counted..], b'\n') as u64;
        }
        Ok(flow)
    }

    /// The number of the line starting at `ls` in the current data (lines
    /// are asked for in order).
    pub(super) fn line_at(&mut self, data: &[u8], ls: usize) -> u64 {
        self.lineno += bytecount::count(&data[self.counted..ls], b'\n') as u64;
        self.counted = ls;
        self.lineno + 1
    }

    /// One selected line, data[ls..le].
    fn select(&mut self, data: &[u8], ls: usize, le: usize) -> Result<Flow, Failure> {
        self.selected += 1;
        if self.stops_at_first() {
            // Held back, but a group separator still comes before the
            // next file's lines (as in GNU).
            self.printed = true;
            return Ok(Flow::Stop);
        }
        let hit_max = self.o.max_count.is_some_and(|m| self.selected >= m);
        match self.o.report {
            Report::Lines => {
                let started =
                    self.o.context() && self.context_before(data, ls).map_err(Failure::Write)?;
                self.emit(data, ls, le, true, !started)
                    .map_err(Failure::Write)?;
                self.floor = le + 1;
                self.after_left = self.o.after;
                if hit_max && self.o.after > 0 {
                    self.draining = true;
                    return Ok(Flow::Go);
                }
            }
            Report::Count => {}
            Report::FilesWith | Report::FilesWithout | Report::Quiet => return Ok(Flow::Stop),
        }
        Ok(if hit_max { Flow::Stop } else { Flow::Go })
    }

    /// The per-file report: the count, or the name for -l / -L.
    pub(super) fn finish(&mut self) -> io::Result<()> {
        let mut b = Vec::new();
        let name = |b: &mut Vec<u8>, then: &[u8]| {
            match &self.o.color {
                Some(c) => c.wrap(&c.fn_, self.name, b),
                None => b.extend_from_slice(self.name),
            }
            if self.o.null_name {
                b.push(0);
            } else {
                match &self.o.color {
                    Some(c) if then == b":" => c.wrap(&c.se, then, b),
                    _ => b.extend_from_slice(then),
                }
            }
        };
        match self.o.report {
            Report::Count => {
                if self.with_name {
                    name(&mut b, b":");
                }
                let n = match self.o.max_count {
                    Some(m) => self.selected.min(m),
                    None => self.selected,
                };
                b.extend_from_slice(n.to_string().as_bytes());
                b.push(b'\n');
            }
            Report::FilesWith if self.selected > 0 => name(&mut b, b"\n"),
            Report::FilesWithout if self.selected == 0 => name(&mut b, b"\n"),
            _ => {}
        }
        self.out.write(&b)?;
        if self.o.line_buffered && !b.is_empty() {
            self.out.flush()?;
        }
        Ok(())
    }
}

/// True if glibc's UTF-8 decoder takes every byte (it refuses overlong
/// forms and surrogates, as Rust does, but takes 4-byte forms past
/// U+10FFFF).
pub(super) fn valid_for_glibc(s: &[u8]) -> bool {
    if std::str::from_utf8(s).is_ok() {
        return true;
    }
    let mut st = locale::initial_state();
    let mut i = 0;
    while i < s.len() {
        if s[i] < 0x80 {
            i += 1;
            continue;
        }
        match locale::mbrtowc_step(&s[i..], &mut st) {
            Some((n, _)) if n > 0 => i += n,
            _ => return false,
        }
    }
    true
}

/// The number of selected lines in `data` (whole lines), or `None` if it
/// holds a NUL. Goes in pieces that stay in the cache between the NUL check
/// and the search.
fn count_text(m: &mut Matcher, mut data: &[u8], invert: bool) -> Option<u64> {
    const PIECE: usize = 256 << 10;
    let mut n = 0u64;
    while !data.is_empty() {
        let end = if data.len() <= PIECE {
            data.len()
        } else {
            match memchr::memrchr(b'\n', &data[..PIECE]) {
                Some(i) => i + 1,
                None => memchr::memchr(b'\n', &data[PIECE..]).map_or(data.len(), |i| PIECE + i + 1),
            }
        };
        let piece = &data[..end];
        if memchr::memchr(0, piece).is_some() {
            return None;
        }
        let mut hits = 0u64;
        let mut pos = 0;
        while pos < piece.len() {
            let Some(h) = m.first_line_match(piece, pos) else {
                break;
            };
            if h >= piece.len() {
                break;
            }
            hits += 1;
            pos = memchr::memchr(b'\n', &piece[h..]).map_or(piece.len(), |i| h + i + 1);
        }
        n += if invert {
            memchr::memchr_iter(b'\n', piece).count() as u64 - hits
        } else {
            hits
        };
        data = &data[end..];
    }
    Some(n)
}

/// A regular file with a hole before its end (GNU reads that as NULs and
/// calls the file binary before reading it).
fn has_hole(name: &std::ffi::OsStr, s: &Stream) -> bool {
    if name == "-" || !s.is_mapped() {
        return false;
    }
    let Ok(f) = std::fs::File::open(name) else {
        return false;
    };
    let Ok(st) = f.metadata() else { return false };
    let size = st.len();
    if size == 0 {
        return false;
    }
    match rustix::fs::seek(&f, rustix::fs::SeekFrom::Hole(0)) {
        Ok(h) => h < size,
        Err(_) => false,
    }
}

/// True for a regular file (standard input included, when it is one).
fn is_regular(name: &std::ffi::OsStr) -> bool {
    if name == "-" {
        return common::file_type(std::io::stdin().as_fd()).is_ok_and(|st| common::is_reg(&st));
    }
    std::fs::metadata(name).is_ok_and(|m| m.is_file())
}

/// Blocks of whole lines from `fd` as each read brings them in (a last
/// line without a line end comes last, with one added), with the cut line
/// after each block, for `f` as in `ferry::stream::for_each_block_peek`;
/// a line a read cuts ends at its last `ends.also()` byte, as there.
fn as_it_comes(
    fd: std::os::fd::BorrowedFd<'_>,
    ends: Ends,
    mut f: impl FnMut(&[u8], &[u8]) -> Result<bool, Failure>,
) -> Result<(), Failure> {
    let eol = ends.eol();
    let mut buf = vec![0u8; GNU_BUFFER as usize];
    let mut have = 0;
    loop {
        if have == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = match rustix::io::read(fd, &mut buf[have..]) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(Failure::Read(e.into())),
        };
        if n == 0 {
            break;
        }
        let from = have;
        have += n;
        let new = &buf[from..have];
        // Only a read can bring in an `also` byte: none stays behind.
        let also = ends.also().filter(|&b| memchr::memchr(b, new).is_some());
        if also.is_none() && memchr::memchr(eol, new).is_none() {
            continue;
        }
        let mut whole = memchr::memrchr(eol, &buf[..have]).map_or(0, |i| i + 1);
        if whole > 0 && !f(&buf[..whole], &buf[whole..have])? {
            return Ok(());
        }
        if let Some(k) = also.and_then(|b| memchr::memrchr(b, &buf[whole..have])) {
            // The cut line ends at its last `also`, in a block of its own.
            let end = whole + k + 1;
            if !f(&buf[whole..end], &buf[end..have])? {
                return Ok(());
            }
            whole = end;
        }
        buf.copy_within(whole..have, 0);
        have -= whole;
    }
    if have > 0 {
        buf.truncate(have);
        buf.push(eol);
        f(&buf, &[])?;
    }
    Ok(())
}
