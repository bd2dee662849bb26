//! Counting one input: lines with SIMD, words with a branch-free table
//! loop that only leaves the fast path for non-ASCII bytes, on both cores
//! for large files.

use super::super::common;
use super::super::locale::{self, Charset, WideTable, NEUTRAL, SEP, WORD};
use ferry::Stream;
use std::ffi::OsString;
use std::io;

mod halves;

#[derive(Clone, Copy, Default)]
pub(super) struct Want {
    pub lines: bool,
    pub words: bool,
    pub chars: bool,
    pub bytes: bool,
    pub maxlen: bool,
}

impl Want {
    pub fn count(&self) -> usize {
        [self.lines, self.words, self.chars, self.bytes, self.maxlen]
            .iter()
            .filter(|x| **x)
            .count()
    }
}

#[derive(Clone, Copy, Default)]
pub(super) struct Counts {
    pub lines: u64,
    pub words: u64,
    pub chars: u64,
    pub bytes: u64,
    pub maxlen: u64,
}

/// Byte classes in the C locale (and for ASCII in UTF-8): printable
/// non-space characters make words; space, \t \n \v \f \r separate them;
/// everything else is neither.
static CLASS: [u8; 256] = {
    let mut t = [NEUTRAL; 256];
    let mut b = 0x21;
    while b <= 0x7E {
        t[b] = WORD;
        b += 1;
    }
    t[b' ' as usize] = SEP;
    let mut c = 9;
    while c <= 13 {
        t[c] = SEP;
        c += 1;
    }
    t
};

/// Counting state carried across chunks.
struct Counter {
    want: Want,
    charset: Charset,
    c: Counts,
    in_word: bool,
    linepos: u64,
    /// A UTF-8 sequence cut by the end of a chunk.
    pending: Vec<u8>,
    mbstate: libc::mbstate_t,
}

enum Utf8 {
    Char(u32, usize),
    Invalid,
    Incomplete,
}

/// Decodes one UTF-8 character at the start of `s` (`s[0] >= 0x80`) with the
/// GNU C library's rules, which GNU wc inherits: no overlong forms and no
/// surrogates, but the old 5- and 6-byte forms and code points past
/// U+10FFFF are characters (up to U+7FFFFFFF).
#[inline]
fn decode(s: &[u8]) -> Utf8 {
    let b0 = s[0];
    let (len, lo, hi) = match b0 {
        0xC2..=0xDF => (2, 0x80, 0xBF),
        0xE0 => (3, 0xA0, 0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
        0xED => (3, 0x80, 0x9F),
        0xF0 => (4, 0x90, 0xBF),
        0xF1..=0xF7 => (4, 0x80, 0xBF),
        0xF8 => (5, 0x88, 0xBF),
        0xF9..=0xFB => (5, 0x80, 0xBF),
        0xFC => (6, 0x84, 0xBF),
        0xFD => (6, 0x80, 0xBF),
        _ => return Utf8::Invalid,
    };
    let mut cp = (b0 as u32) & (0x7F >> len);
    for k in 1..len {
        let Some(&b) = s.get(k) else {
            return Utf8::Incomplete;
        };
        let (l, h) = if k == 1 { (lo, hi) } else { (0x80, 0xBF) };
        if b < l || b > h {
            return Utf8::Invalid;
        }
        cp = cp << 6 | (b as u32 & 0x3F);
    }
    Utf8::Char(cp, len)
}

impl Counter {
    fn new(want: Want, charset: Charset) -> Counter {
        Counter {
            want,
            charset,
            c: Counts::default(),
            in_word: false,
            linepos: 0,
            pending: Vec::new(),
            // SAFETY: an all-zero mbstate_t is the initial shift state.
            mbstate: unsafe { std::mem::zeroed() },
        }
    }

    fn feed(&mut self, data: &[u8], wide: &mut WideTable) {
        self.c.bytes += data.len() as u64;
        let w = self.want;
        if !(w.words || w.chars || w.maxlen) {
            if w.lines {
                self.c.lines += bytecount::count(data, b'\n') as u64;
            }
            return;
        }
        match self.charset {
            Charset::SingleByte => {
                if w.maxlen {
                    self.scalar_single(data);
                } else {
                    if w.lines {
                        self.c.lines += bytecount::count(data, b'\n') as u64;
                    }
                    self.words_ascii(data);
                }
                self.c.chars += data.len() as u64;
            }
            Charset::Utf8 => self.utf8(data, wide),
            Charset::OtherMultiByte => self.other_mb(data, wide),
        }
    }

    /// As `feed`, on two threads: the second half of `data`, from just
    /// after a newline, goes to `helper` (reset first), then its counts and
    /// state are taken over. After a newline the state of a count is the
    /// starting state (not in a word, column 0, no cut character), so the
    /// result is the one-thread result. Data with no newline in its second
    /// half, or too small to be worth a thread, is counted here.
    fn feed_two(
        &mut self,
        data: &[u8],
        wide: &mut WideTable,
        helper: &mut Counter,
        hw: &mut WideTable,
    ) {
        let Some(mid) = ferry::stream::split_after_line_end(data, b'\n') else {
            return self.feed(data, wide);
        };
        let (a, b) = data.split_at(mid);
        *helper = Counter::new(self.want, self.charset);
        std::thread::scope(|s| {
            s.spawn(|| helper.feed(b, hw));
            self.feed(a, wide);
        });
        self.absorb(helper);
    }

    /// Takes over the counts and end state of `next`, which counted the
    /// bytes that follow this counter's, starting just after a newline
    /// (where every count's state is the starting state). A file
    /// rewritten or cut short while it is counted (nothing holds writers
    /// back) may leave this counter elsewhere — inside a word or a line:
    /// the counts are then those of the mixed bytes, as GNU's are.
    fn absorb(&mut self, next: &mut Counter) {
        let h = &next.c;
        self.c.lines += h.lines;
        self.c.words += h.words;
        self.c.chars += h.chars;
        self.c.bytes += h.bytes;
        self.c.maxlen = self.c.maxlen.max(h.maxlen);
        self.in_word = next.in_word;
        self.linepos = next.linepos;
        self.pending = std::mem::take(&mut next.pending);
    }

    /// Words in bytes of a single-byte charset (or an ASCII run of UTF-8):
    /// eight bytes at a time with SWAR masks, byte by byte only for groups
    /// holding bytes that are neither word nor separator characters.
    #[inline]
    fn words_ascii(&mut self, data: &[u8]) {
        self.words_until(data, false);
    }

    /// As `words_ascii`; with `stop_at_high`, stops before the first
    /// eight-byte group holding a byte >= 0x80 and returns where it stopped.
    #[inline]
    fn words_until(&mut self, data: &[u8], stop_at_high: bool) -> usize {
        const LO: u64 = 0x0101_0101_0101_0101;
        const HI: u64 = 0x8080_8080_8080_8080;
        const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
        let mut in_word = self.in_word;
        let mut words = 0u64;
        let mut groups = data.chunks_exact(8);
        let mut done = 0;
        for g in &mut groups {
            let x = u64::from_le_bytes(g.try_into().unwrap_or([0; 8]));
            let high = x & HI;
            if stop_at_high && high != 0 {
                self.in_word = in_word;
                self.c.words += words;
                return done;
            }
            done += 8;
            let y = x & LOW7;
            // Per byte, bit 7 of each mask: y >= 0x21, y >= 0x7F, ...
            let ge21 = (y + 0x5F * LO) & HI;
            let ge7f = (y + LO) & HI;
            let word = ge21 & !ge7f & !high;
            let ge09 = (y + 0x77 * LO) & HI;
            let ge0e = (y + 0x72 * LO) & HI;
            let z = y ^ (0x20 * LO);
            let space = !((z + LOW7) | z) & HI;
            let sep = ((ge09 & !ge0e) | space) & !high;
            if (word | sep) == HI {
                // No neutral bytes: a word starts where a word byte follows a
                // separator (or the word state carried in).
                let prev = (word << 8) | if in_word { 0x80 } else { 0 };
                // Bit 7 of each byte marks a start: sum the bytes.
                words += ((word & !prev) >> 7).wrapping_mul(LO) >> 56;
                in_word = word & 0x8000_0000_0000_0000 != 0;
            } else {
                for &b in g {
                    let c = CLASS[b as usize];
                    if c == WORD {
                        words += !in_word as u64;
                        in_word = true;
                    } else if c == SEP {
                        in_word = false;
                    }
                }
            }
        }
        for &b in groups.remainder() {
            if stop_at_high && b >= 0x80 {
                break;
            }
            let c = CLASS[b as usize];
            if c == WORD {
                words += !in_word as u64;
                in_word = true;
            } else if c == SEP {
                in_word = false;
            }
            done += 1;
        }
        self.in_word = in_word;
        self.c.words += words;
        done
    }

    /// Every count including -L, one byte at a time (single-byte locales).
    fn scalar_single(&mut self, data: &[u8]) {
        for &b in data {
            self.ascii_char(b);
        }
    }

    /// GNU's per-character step for a single-byte or ASCII character.
    #[inline]
    fn ascii_char(&mut self, b: u8) {
        match b {
            b'\n' | b'\r' | 0x0C => {
                if b == b'\n' {
                    self.c.lines += 1;
                }
                self.c.maxlen = self.c.maxlen.max(self.linepos);
                self.linepos = 0;
                self.sep();
            }
            b'\t' => {
                self.linepos += 8 - self.linepos % 8;
                self.sep();
            }
            b' ' => {
                self.linepos += 1;
                self.sep();
            }
            0x0B => self.sep(),
            0x21..=0x7E => {
                self.linepos += 1;
                if !self.in_word {
                    self.in_word = true;
                    self.c.words += 1;
                }
            }
            _ => {}
        }
    }

    #[inline]
    fn sep(&mut self) {
        self.in_word = false;
    }

    /// A decoded non-ASCII character.
    #[inline]
    fn wide_char(&mut self, cp: u32, wide: &mut WideTable) {
        self.c.chars += 1;
        let (class, width) = wide.get(cp);
        match class {
            SEP => {
                self.linepos += width as u64;
                self.sep();
            }
            WORD => {
                self.linepos += width as u64;
                if !self.in_word {
                    self.in_word = true;
                    self.c.words += 1;
                }
            }
            _ => {}
        }
    }

    fn utf8(&mut self, data: &[u8], wide: &mut WideTable) {
        let mut i = 0;
        // Finish a character cut by the last chunk's end: decode from the
        // held bytes plus the first few of this chunk (a character is at
        // most 4 bytes), then go on in this chunk after what was used.
        if !self.pending.is_empty() {
            let plen = self.pending.len();
            let mut tmp = std::mem::take(&mut self.pending);
            tmp.extend_from_slice(&data[..data.len().min(4)]);
            let mut j = 0;
            while j < plen {
                match decode(&tmp[j..]) {
                    Utf8::Char(cp, n) => {
                        self.wide_char(cp, wide);
                        j += n;
                    }
                    Utf8::Invalid => j += 1,
                    Utf8::Incomplete => {
                        // Still cut (this chunk is tiny): hold it all.
                        self.pending = tmp[j..].to_vec();
                        return;
                    }
                }
            }
            i = j - plen;
        }
        let maxlen = self.want.maxlen;
        while i < data.len() {
            // ASCII bytes up to (about) the next byte >= 0x80.
            let end = if maxlen {
                let end = next_non_ascii(data, i);
                for &b in &data[i..end] {
                    self.ascii_char(b);
                }
                end
            } else {
                let mut end = i + self.words_until(&data[i..], true);
                // The group that stopped it, up to its first high byte.
                while end < data.len() && data[end] < 0x80 {
                    let c = CLASS[data[end] as usize];
                    if c == WORD {
                        self.c.words += !self.in_word as u64;
                        self.in_word = true;
                    } else if c == SEP {
                        self.in_word = false;
                    }
                    end += 1;
                }
                if self.want.lines {
                    self.c.lines += bytecount::count(&data[i..end], b'\n') as u64;
                }
                end
            };
            self.c.chars += (end - i) as u64;
            i = end;
            // Non-ASCII characters.
            while i < data.len() && data[i] >= 0x80 {
                match decode(&data[i..]) {
                    Utf8::Char(cp, n) => {
                        self.wide_char(cp, wide);
                        i += n;
                    }
                    Utf8::Invalid => i += 1,
                    Utf8::Incomplete => {
                        self.pending.extend_from_slice(&data[i..]);
                        i = data.len();
                    }
                }
            }
        }
    }

    fn other_mb(&mut self, data: &[u8], wide: &mut WideTable) {
        let mut buf = std::mem::take(&mut self.pending);
        buf.extend_from_slice(data);
        let mut i = 0;
        while i < buf.len() {
            let b = buf[i];
            if b < 0x80 && locale_basic(b) {
                self.c.chars += 1;
                self.ascii_char(b);
                i += 1;
                continue;
            }
            match locale::mbrtowc_step(&buf[i..], &mut self.mbstate) {
                None => i += 1,
                Some((0, _)) => {
                    self.pending = buf[i..].to_vec();
                    return;
                }
                Some((n, cp)) => {
                    if cp < 0x80 {
                        self.c.chars += 1;
                        self.ascii_char(cp as u8);
                    } else {
                        self.wide_char(cp, wide);
                    }
                    i += n;
                }
            }
        }
    }

    fn finish(mut self) -> Counts {
        self.c.maxlen = self.c.maxlen.max(self.linepos);
        self.c
    }
}

/// The index of the first byte >= 0x80 at or after `from` (or the length).
fn next_non_ascii(data: &[u8], from: usize) -> usize {
    let mut i = from;
    while i + 8 <= data.len() {
        let x = u64::from_le_bytes(data[i..i + 8].try_into().unwrap_or([0; 8]));
        let high = x & 0x8080_8080_8080_8080;
        if high != 0 {
            return i + (high.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < data.len() && data[i] < 0x80 {
        i += 1;
    }
    i
}

/// ASCII characters every multi-byte encoding shares.
fn locale_basic(b: u8) -> bool {
    (0x20..0x7F).contains(&b) || (9..=13).contains(&b)
}

pub(super) type Failure = (io::Error, Option<Counts>);

/// Counts `f`; `size`: its size when it was looked at as a regular file,
/// if it was (it only decides whether both cores count it).
pub(super) fn count_file(
    f: &OsString,
    size: Option<u64>,
    w: Want,
    charset: Charset,
    wide: &mut WideTable,
) -> Result<Counts, Failure> {
    let stream = if f == "-" {
        Stream::stdin()
    } else {
        Stream::open(f, &common::input_options())
    };
    let stream = match stream {
        Ok(s) => s,
        // GNU opens a directory, fails to read it, and still prints zeros.
        Err(e) if ferry::stream::os_error(&e) == Some(libc::EISDIR) => {
            return Err((common::os_only(e), Some(Counts::default())))
        }
        Err(e) => return Err((common::os_only(e), None)),
    };
    // Bytes only, of a regular file: its size, mostly unread (as GNU
    // does). The size is trusted up to the last block below it; the rest is
    // read, so a file whose size says nothing (/proc, /sys: 0 or one page)
    // is counted by reading it.
    let mut skipped = 0u64;
    if w.bytes && w.count() == 1 {
        if let (Ok(n), Some(blk)) = (stream.len(), regular_blksize(f)) {
            let pos = stream.position();
            let hi = n - n % (blk + 1);
            if pos < hi && stream.seek_to(io::SeekFrom::Start(hi)).is_ok() {
                skipped = hi - pos;
            }
        }
    }
    // A large file: both cores. A named file is split in two halves at a
    // line end, each read by a stream of its own in 1 MiB regions (which
    // the stream reads into a buffer or maps, whichever its page cache
    // favours); standard input, each 16 MiB region in two.
    let large = charset != Charset::OtherMultiByte
        && size
            .map_or_else(|| stream.len(), Ok)
            .is_ok_and(|n| n.saturating_sub(stream.position()) >= TWO_CORES_MIN)
        && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    if large && f != "-" {
        if let Some(r) = halves::count(f, &stream, w, charset, wide) {
            return r.map(|mut c| {
                c.bytes += skipped;
                c
            });
        }
    }
    let two = large && (w.words || w.chars || w.maxlen);
    let mut helper = two.then(|| (Counter::new(w, charset), WideTable::new()));
    let mut counter = Counter::new(w, charset);
    let stream = stream;
    let g = &stream;
    let region = if two { 16 << 20 } else { 1 << 20 };
    loop {
        let r = match g.salloc(region) {
            Ok(r) => r,
            Err(e) => {
                let partial = std::mem::replace(&mut counter, Counter::new(w, charset)).finish();
                return Err((common::os_only(e), Some(partial)));
            }
        };
        if r.is_empty() {
            break;
        }
        match helper.as_mut() {
            Some((h, hw)) => counter.feed_two(&r, wide, h, hw),
            None => counter.feed(&r, wide),
        }
        // A region falls short only at the end: nothing more to ask.
        if r.len() < region {
            break;
        }
    }
    let mut c = counter.finish();
    c.bytes += skipped;
    Ok(c)
}

/// Files at least this long are counted on two cores.
const TWO_CORES_MIN: u64 = 64 << 20;

/// The block size of `f` if it is a regular file.
fn regular_blksize(f: &OsString) -> Option<u64> {
    let st = if f == "-" {
        rustix::fs::fstat(std::io::stdin())
    } else {
        rustix::fs::stat(f.as_os_str())
    }
    .ok()?;
    common::is_reg(&st).then(|| (st.st_blksize as u64).max(1))
}
