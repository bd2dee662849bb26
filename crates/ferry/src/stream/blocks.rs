//! Whole lines from an alloc stream, a region at a time: what line tools
//! (cut, grep, wc) share. Regions are handed over as they are (no copy)
//! up to their last line end; only a line cut by a region's end is
//! gathered in a small carry buffer.
//!
//! ```text
//!   region 1: [line line line li]   region 2: [ne line line]
//!   f(block): [line line line]      f(carry): [line]  f(block): [line line]
//! ```
//!
//! A line longer than memory cannot be gathered. Tools that can cut a line
//! as it goes by (cut) ask [`for_each_piece`] for a bound: a longer line is
//! handed over in parts, straight from the regions, and memory stays that
//! of a region and a bounded carry however long the line.
//!
//! ```text
//!   region 1: [line line lo]  region 2: [ooooooooooo]  region 3: [ong\nline\n]
//!   Lines:    [line line]     Part: [lo] [ooooooooooo]  LastPart: [ong\n]  Lines: [line\n]
//! ```
//!
//! A second byte may end the line a region's end cuts ([`Ends::or`]):
//! grep reads a binary file's NULs as line ends, so a run of NULs without
//! a newline is many short lines, not one line longer than memory. Blocks
//! still end at the region's last newline; the caller finds the NULs in
//! them, as it does anyway.

use super::Stream;
use std::io;

/// The bytes that end lines: `eol`, and a second one, `also`, for the
/// line a region's end cuts: instead of being gathered on, that line ends
/// at its last `also` (handed over in a block of its own, after the
/// region's whole lines). Other `also` bytes stay inside blocks for the
/// caller to find. A `u8` converts to `Ends` with `eol` alone.
///
/// ```
/// use ferry::stream::Ends;
/// assert_eq!(Ends::from(b'\n'), Ends::at(b'\n'));
/// assert_eq!(Ends::at(b'\n').or(0).eol(), b'\n');
/// assert_eq!(Ends::at(b'\n').or(0).also(), Some(0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ends {
    eol: u8,
    also: Option<u8>,
}

impl Ends {
    /// Lines end at `eol` only.
    pub const fn at(eol: u8) -> Ends {
        Ends { eol, also: None }
    }

    /// A line a region's end cuts ends at its last `b` (a last line with
    /// no end at all still gets `eol`).
    pub const fn or(self, b: u8) -> Ends {
        Ends {
            eol: self.eol,
            also: Some(b),
        }
    }

    /// The line end added to a last line that has none.
    pub const fn eol(&self) -> u8 {
        self.eol
    }

    /// The byte that ends a cut line too, if any.
    pub const fn also(&self) -> Option<u8> {
        self.also
    }

    /// Where the line that starts `d` ends: at the first `eol`, or, with
    /// none, at the last `also` (the line a region's end cuts).
    #[inline]
    fn end_of_first(&self, d: &[u8]) -> Option<usize> {
        memchr::memchr(self.eol, d).or_else(|| self.last_also(d))
    }

    /// Where the last `also` in `d` is.
    #[inline]
    fn last_also(&self, d: &[u8]) -> Option<usize> {
        self.also.and_then(|b| memchr::memrchr(b, d))
    }
}

impl From<u8> for Ends {
    fn from(eol: u8) -> Ends {
        Ends::at(eol)
    }
}

/// What [`for_each_piece`] hands over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Whole lines, each ending in a line end.
    Lines(&'a [u8]),
    /// Part of a line too long to gather: no line end in it; more of the
    /// line follows.
    Part(&'a [u8]),
    /// The last part of a line handed over in parts, ending in its line
    /// end (the only one in it).
    LastPart(&'a [u8]),
}

/// Calls `f` with blocks of whole lines, each ending in a line end, read
/// from `g` in regions of `region` bytes. A last line without a line end
/// comes last, with `eol` added. `f` returns `Ok(false)` to stop early. A
/// read error becomes `E` through `read_err`, as does a `region` of 0
/// bytes (`InvalidInput`) and a line that cannot be gathered for want of
/// memory (`OutOfMemory`: the carry buffer grows with `try_reserve`, so a
/// line longer than memory is an error, never an abort).
///
/// ```
/// use ferry::stream::for_each_block;
/// let s = ferry::Stream::from_bytes(b"one\ntwo\nthree".to_vec());
/// let mut lines = 0;
/// for_each_block(&s, 6, b'\n', |e| e, |block| {
///     assert!(block.ends_with(b"\n"));
///     lines += block.iter().filter(|&&b| b == b'\n').count();
///     Ok(true)
/// })?;
/// assert_eq!(lines, 3);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn for_each_block<E>(
    g: &Stream,
    region: usize,
    ends: impl Into<Ends>,
    read_err: impl Fn(io::Error) -> E,
    mut f: impl FnMut(&[u8]) -> Result<bool, E>,
) -> Result<(), E> {
    for_each_block_peek(g, region, ends, read_err, |block, _| f(block))
}

/// [`for_each_block`], with each block's `f` also shown the rest of the
/// region after it: the start of the line the region cut (grep decides
/// "binary" on what a read brought in, cut lines included).
///
/// ```
/// use ferry::stream::{for_each_block_peek, Ends};
/// let s = ferry::Stream::from_bytes(b"ab\ncd\nef".to_vec());
/// let mut seen = Vec::new();
/// for_each_block_peek(&s, 1 << 20, b'\n', |e| e, |block, rest| {
///     seen.push((block.to_vec(), rest.to_vec()));
///     Ok(true)
/// })?;
/// assert_eq!(seen[0], (b"ab\ncd\n".to_vec(), b"ef".to_vec()));
/// assert_eq!(seen[1], (b"ef\n".to_vec(), Vec::new()));
/// // A NUL ends the line a region's end cut ("cd"), not "a\0b".
/// let s = ferry::Stream::from_bytes(b"a\0b\ncd\0ef".to_vec());
/// let mut seen = Vec::new();
/// for_each_block_peek(&s, 6, Ends::at(b'\n').or(0), |e| e, |block, _| {
///     seen.push(block.to_vec());
///     Ok(true)
/// })?;
/// assert_eq!(seen, [&b"a\0b\n"[..], b"cd\0", b"ef\n"]);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn for_each_block_peek<E>(
    g: &Stream,
    region: usize,
    ends: impl Into<Ends>,
    read_err: impl Fn(io::Error) -> E,
    mut f: impl FnMut(&[u8], &[u8]) -> Result<bool, E>,
) -> Result<(), E> {
    pieces(
        g,
        region,
        ends.into(),
        usize::MAX,
        read_err,
        |piece, rest| match piece {
            Piece::Lines(block) => f(block, rest),
            // Parts come only for lines longer than a bound; there is none.
            Piece::Part(_) | Piece::LastPart(_) => Ok(true),
        },
    )
}

/// [`for_each_block`] for lines of any length: a line that a region's end
/// cuts is gathered only up to `longest` bytes; a longer one is handed
/// over in parts as the regions bring it ([`Piece::Part`], then
/// [`Piece::LastPart`] with its line end), so memory stays bounded however
/// long a line is. A line inside one region comes whole in a
/// [`Piece::Lines`], whatever its length.
///
/// ```
/// use ferry::stream::{for_each_piece, Piece};
/// let s = ferry::Stream::from_bytes(b"ab\nlong line\ncd".to_vec());
/// let mut seen = Vec::new();
/// for_each_piece(&s, 4, b'\n', 4, |e| e, |piece| {
///     seen.push(match piece {
///         Piece::Lines(b) => format!("lines {:?}", String::from_utf8_lossy(b)),
///         Piece::Part(b) => format!("part {:?}", String::from_utf8_lossy(b)),
///         Piece::LastPart(b) => format!("last {:?}", String::from_utf8_lossy(b)),
///     });
///     Ok(true)
/// })?;
/// assert_eq!(
///     seen,
///     [
///         "lines \"ab\\n\"",
///         "part \"l\"",
///         "part \"ong \"",
///         "part \"line\"",
///         "last \"\\n\"",
///         "lines \"cd\\n\"",
///     ]
/// );
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn for_each_piece<E>(
    g: &Stream,
    region: usize,
    ends: impl Into<Ends>,
    longest: usize,
    read_err: impl Fn(io::Error) -> E,
    mut f: impl FnMut(Piece<'_>) -> Result<bool, E>,
) -> Result<(), E> {
    pieces(g, region, ends.into(), longest, read_err, |piece, _| {
        f(piece)
    })
}

/// The reading behind [`for_each_block_peek`] and [`for_each_piece`]:
/// `f` gets each piece and the rest of the region after it (for a line
/// gathered from two regions, the next line's start).
fn pieces<E>(
    g: &Stream,
    region: usize,
    ends: Ends,
    longest: usize,
    read_err: impl Fn(io::Error) -> E,
    mut f: impl FnMut(Piece<'_>, &[u8]) -> Result<bool, E>,
) -> Result<(), E> {
    if region == 0 {
        // A region of nothing reads as the end of the input: every line
        // would be dropped without a word.
        return Err(read_err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "for_each_block: a region of 0 bytes",
        )));
    }
    let mut carry: Vec<u8> = Vec::new();
    // A line is being handed over in parts.
    let mut in_parts = false;
    // The last region was short: the input ended there (a region falls
    // short only at the end), so no read is made to hear it say so again.
    let mut ended = false;
    while !ended {
        let r = g.salloc(region).map_err(&read_err)?;
        if r.is_empty() {
            break;
        }
        ended = r.len() < region;
        let mut data: &[u8] = &r;
        if in_parts || !carry.is_empty() {
            let Some(i) = ends.end_of_first(data) else {
                if in_parts || carry.len().saturating_add(data.len()) > longest {
                    if !carry.is_empty() && !f(Piece::Part(&carry), &[])? {
                        return Ok(());
                    }
                    carry.clear();
                    in_parts = true;
                    if !f(Piece::Part(data), &[])? {
                        return Ok(());
                    }
                } else {
                    gather(&mut carry, data).map_err(&read_err)?;
                }
                continue;
            };
            let (line_end, rest) = data.split_at(i + 1);
            // What follows the line is the next block's first line (not
            // the whole region: `f` may scan it).
            let next = memchr::memchr(ends.eol, rest).map_or(rest, |j| &rest[..j]);
            let go = if in_parts || carry.len().saturating_add(line_end.len()) > longest {
                (carry.is_empty() || f(Piece::Part(&carry), &[])?)
                    && f(Piece::LastPart(line_end), next)?
            } else {
                gather(&mut carry, line_end).map_err(&read_err)?;
                f(Piece::Lines(&carry), next)?
            };
            carry.clear();
            in_parts = false;
            if !go {
                return Ok(());
            }
            data = rest;
        }
        let whole = memchr::memrchr(ends.eol, data).map_or(0, |i| i + 1);
        if whole > 0 && !f(Piece::Lines(&data[..whole]), &data[whole..])? {
            return Ok(());
        }
        let mut cut = &data[whole..];
        if let Some(k) = ends.last_also(cut) {
            // The line the region cuts ends at its last `also`.
            let (line, rest) = cut.split_at(k + 1);
            if !f(Piece::Lines(line), rest)? {
                return Ok(());
            }
            cut = rest;
        }
        if cut.len() > longest {
            in_parts = true;
            if !f(Piece::Part(cut), &[])? {
                return Ok(());
            }
        } else {
            gather(&mut carry, cut).map_err(&read_err)?;
        }
    }
    let eol = std::slice::from_ref(&ends.eol);
    if in_parts {
        f(Piece::LastPart(eol), &[])?;
    } else if !carry.is_empty() {
        gather(&mut carry, eol).map_err(&read_err)?;
        f(Piece::Lines(&carry), &[])?;
    }
    Ok(())
}

/// Appends `bytes` to the carry buffer, growing it (doubling) with
/// `try_reserve`: `OutOfMemory` when that fails.
fn gather(carry: &mut Vec<u8>, bytes: &[u8]) -> io::Result<()> {
    if carry.capacity() - carry.len() < bytes.len() {
        let want = bytes.len().max(carry.len());
        carry
            .try_reserve(want)
            .or_else(|_| carry.try_reserve_exact(bytes.len()))
            .map_err(|_| {
                io::Error::new(
                    io::ErrorKind::OutOfMemory,
                    "a line longer than the memory there is",
                )
            })?;
    }
    carry.extend_from_slice(bytes);
    Ok(())
}

/// Where to cut `data` in two for two threads: just after the first `eol`
/// in its second half, so that each part is whole lines and the second
/// starts a line. `None` when `data` is under 1 MiB (not worth a thread) or
/// its second half holds no `eol` before the last byte.
///
/// ```
/// use ferry::stream::split_after_line_end;
/// let mut data = vec![b'x'; 2 << 20];
/// data[(1 << 20) + 10] = b'\n';
/// assert_eq!(split_after_line_end(&data, b'\n'), Some((1 << 20) + 11));
/// assert_eq!(split_after_line_end(b"short\nlines\n", b'\n'), None);
/// ```
pub fn split_after_line_end(data: &[u8], eol: u8) -> Option<usize> {
    if data.len() < 1 << 20 {
        return None;
    }
    let half = data.len() / 2;
    memchr::memchr(eol, &data[half..])
        .map(|i| half + i + 1)
        .filter(|&m| m < data.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A region of 0 bytes is an error (it read as the end of the input,
    /// and every line was dropped); one of usize::MAX bytes takes all.
    #[test]
    fn a_region_of_nothing_is_refused_and_one_of_everything_works() {
        let s = Stream::from_bytes(b"one\ntwo".to_vec());
        let mut calls = 0;
        let r = for_each_block(
            &s,
            0,
            b'\n',
            |e| e,
            |_| {
                calls += 1;
                Ok(true)
            },
        );
        assert_eq!(r.unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(calls, 0);
        let mut all = Vec::new();
        let r = for_each_block(
            &s,
            usize::MAX,
            b'\n',
            |e| e,
            |b| {
                all.extend_from_slice(b);
                Ok(true)
            },
        );
        match r {
            Ok(()) => assert_eq!(all, b"one\ntwo\n"),
            Err(e) => assert!(all.is_empty(), "{e}"),
        }
    }

    /// Every line, gathered from the blocks, for each region size.
    #[test]
    fn blocks_are_whole_lines_whatever_the_region() {
        let text: Vec<u8> = (0..2000u32)
            .flat_map(|i| {
                let mut l = vec![b'a' + (i % 26) as u8; (i % 37) as usize];
                l.push(b'\n');
                l
            })
            .chain(*b"no end")
            .collect();
        for region in [1, 2, 7, 64, 4096, 1 << 20] {
            let s = Stream::from_bytes(text.clone());
            let mut got = Vec::new();
            for_each_block(
                &s,
                region,
                b'\n',
                |e| e,
                |b| {
                    assert_eq!(b.last(), Some(&b'\n'), "region {region}");
                    got.extend_from_slice(b);
                    Ok(true)
                },
            )
            .expect("blocks");
            let mut want = text.clone();
            want.push(b'\n');
            assert!(got == want, "region {region}");
        }
    }

    #[test]
    fn stopping_early_stops() {
        let s = Stream::from_bytes(b"a\nb\nc\n".to_vec());
        let mut calls = 0;
        for_each_block(
            &s,
            2,
            b'\n',
            |e| e,
            |_| {
                calls += 1;
                Ok(false)
            },
        )
        .expect("blocks");
        assert_eq!(calls, 1);
    }

    /// Pieces put back together are the input (with a last line end), for
    /// every region size and bound: parts hold no line end, a last part
    /// ends in one, no gathered line is longer than the bound, and a long
    /// line's parts come one after the other.
    #[test]
    fn pieces_are_the_input_whatever_the_region_and_bound() {
        // Under Miri, fewer lines and no one-byte regions: the same cases
        // in a time Miri can afford.
        let (lines, regions): (u32, &[usize]) = if cfg!(miri) {
            (14, &[3, 64, 4096])
        } else {
            (300, &[1, 2, 7, 64, 4096, 1 << 20])
        };
        let mut text: Vec<u8> = Vec::new();
        for i in 0..lines {
            let n = [0, 1, 2, 3, 50, 700, 5000][(i % 7) as usize];
            text.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, n));
            text.push(b'\n');
        }
        text.extend_from_slice(&[b'z'; 3000]);
        for &region in regions {
            for longest in [0, 1, 3, 64, 1000, usize::MAX] {
                let s = Stream::from_bytes(text.clone());
                let mut got = Vec::new();
                let mut in_line = false;
                for_each_piece(
                    &s,
                    region,
                    b'\n',
                    longest,
                    |e| e,
                    |p| {
                        let ctx = format!("region {region} longest {longest}");
                        match p {
                            Piece::Lines(b) => {
                                assert!(!in_line, "{ctx}: lines inside a long line");
                                assert_eq!(b.last(), Some(&b'\n'), "{ctx}");
                                got.extend_from_slice(b);
                            }
                            Piece::Part(b) => {
                                assert!(!b.contains(&b'\n'), "{ctx}");
                                in_line = true;
                                got.extend_from_slice(b);
                            }
                            Piece::LastPart(b) => {
                                assert!(in_line, "{ctx}: a last part with no part");
                                assert_eq!(memchr::memchr(b'\n', b), Some(b.len() - 1), "{ctx}");
                                in_line = false;
                                got.extend_from_slice(b);
                            }
                        }
                        Ok(true)
                    },
                )
                .expect("pieces");
                let mut want = text.clone();
                want.push(b'\n');
                assert!(got == want, "region {region} longest {longest}");
                assert!(!in_line);
            }
        }
    }

    /// With a bound, a line far longer than the carry may grow comes in
    /// parts, each no longer than a region, and the carry never holds it.
    #[test]
    fn a_long_line_comes_in_parts_no_longer_than_a_region() {
        let mut text = vec![b'x'; 1 << 20];
        text.push(b'\n');
        let s = Stream::from_bytes(text);
        let (mut parts, mut largest) = (0, 0);
        for_each_piece(
            &s,
            4096,
            b'\n',
            4096,
            |e| e,
            |p| {
                if let Piece::Part(b) | Piece::LastPart(b) = p {
                    parts += 1;
                    largest = largest.max(b.len());
                }
                Ok(true)
            },
        )
        .expect("pieces");
        assert!(parts >= 256, "{parts} parts");
        assert!(largest <= 4096, "a part of {largest} bytes");
    }

    /// With a second line end, a run of it without `eol` is short lines:
    /// blocks end at either byte and nothing is gathered past a region;
    /// a block that holds an `eol` ends at its last one.
    #[test]
    fn a_second_line_end_cuts_blocks_too() {
        let mut text = vec![0u8; 100_000];
        text.extend_from_slice(b"a\nb\0c");
        text.extend(b"x\0y\n".repeat(5000));
        let s = Stream::from_bytes(text.clone());
        let mut got = Vec::new();
        for_each_block(
            &s,
            4096,
            Ends::at(b'\n').or(0),
            |e| e,
            |b| {
                assert!(b.len() <= 4096 + 1, "a block of {} bytes", b.len());
                match memchr::memrchr(b'\n', b) {
                    Some(i) => assert_eq!(i, b.len() - 1),
                    None => assert_eq!(b.last(), Some(&0)),
                }
                got.extend_from_slice(b);
                Ok(true)
            },
        )
        .expect("blocks");
        assert!(got == text);
    }

    /// A pipe whose writer pauses between pieces: every region but the
    /// last is whole, so blocks stop only at the real end (the reader
    /// stops after a short region without asking again).
    #[test]
    #[cfg_attr(miri, ignore)] // a pipe and a thread
    fn a_pipe_written_in_pieces_with_pauses_is_read_to_its_end() {
        use std::io::Write;
        let (r, w) = rustix::pipe::pipe().unwrap();
        let writer = std::thread::spawn(move || {
            let mut w = std::fs::File::from(w);
            for i in 0..5 {
                let piece: Vec<u8> = format!("line {i}\n").repeat(3000).into_bytes();
                w.write_all(&piece).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(30));
            }
        });
        let s = Stream::from_fd(r).unwrap();
        let mut got = Vec::new();
        for_each_block(
            &s,
            64 << 10,
            b'\n',
            |e| e,
            |b| {
                got.extend_from_slice(b);
                Ok(true)
            },
        )
        .unwrap();
        writer.join().unwrap();
        let want: Vec<u8> = (0..5)
            .flat_map(|i| format!("line {i}\n").repeat(3000).into_bytes())
            .collect();
        assert_eq!(got.len(), want.len());
        assert!(got == want);
    }
}
