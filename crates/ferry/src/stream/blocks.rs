//! Whole lines from an alloc stream, a region at a time: what line tools
//! (cut, grep, wc) share. Regions are handed over as they are (no copy)
//! up to their last line end; only a line cut by a region's end is
//! gathered in a small carry buffer.
//!
//! ```text
//!   region 1: [line line line li]   region 2: [ne line line]
//!   f(block): [line line line]      f(carry): [line]  f(block): [line line]
//! ```

use super::Stream;
use std::io;

/// Calls `f` with blocks of whole lines, each ending in `eol`, read from
/// `g` in regions of `region` bytes. A last line without `eol` comes last,
/// with `eol` added. `f` returns `Ok(false)` to stop early. A read error
/// becomes `E` through `read_err`, as does a `region` of 0 bytes
/// (`InvalidInput`) and a line that cannot be gathered for want of memory
/// (`OutOfMemory`: the carry buffer grows with `try_reserve`, so a line
/// longer than memory is an error, never an abort).
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
    eol: u8,
    read_err: impl Fn(io::Error) -> E,
    mut f: impl FnMut(&[u8]) -> Result<bool, E>,
) -> Result<(), E> {
    for_each_block_peek(g, region, eol, read_err, |block, _| f(block))
}

/// [`for_each_block`], with each block's `f` also shown the rest of the
/// region after it: the start of the line the region cut (grep decides
/// "binary" on what a read brought in, cut lines included).
///
/// ```
/// use ferry::stream::for_each_block_peek;
/// let s = ferry::Stream::from_bytes(b"ab\ncd\nef".to_vec());
/// let mut seen = Vec::new();
/// for_each_block_peek(&s, 1 << 20, b'\n', |e| e, |block, rest| {
///     seen.push((block.to_vec(), rest.to_vec()));
///     Ok(true)
/// })?;
/// assert_eq!(seen[0], (b"ab\ncd\n".to_vec(), b"ef".to_vec()));
/// assert_eq!(seen[1], (b"ef\n".to_vec(), Vec::new()));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn for_each_block_peek<E>(
    g: &Stream,
    region: usize,
    eol: u8,
    read_err: impl Fn(io::Error) -> E,
    mut f: impl FnMut(&[u8], &[u8]) -> Result<bool, E>,
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
    loop {
        let r = g.salloc(region).map_err(&read_err)?;
        if r.is_empty() {
            break;
        }
        let mut data: &[u8] = &r;
        if !carry.is_empty() {
            match memchr::memchr(eol, data) {
                Some(i) => {
                    gather(&mut carry, &data[..=i]).map_err(&read_err)?;
                    data = &data[i + 1..];
                    // What follows the gathered line is the next block's
                    // first line (not the whole region: `f` may scan it).
                    let next = memchr::memchr(eol, data).map_or(data, |j| &data[..j]);
                    let go = f(&carry, next)?;
                    carry.clear();
                    if !go {
                        return Ok(());
                    }
                }
                None => {
                    gather(&mut carry, data).map_err(&read_err)?;
                    continue;
                }
            }
        }
        let whole = memchr::memrchr(eol, data).map_or(0, |i| i + 1);
        if whole > 0 && !f(&data[..whole], &data[whole..])? {
            return Ok(());
        }
        gather(&mut carry, &data[whole..]).map_err(&read_err)?;
    }
    if !carry.is_empty() {
        gather(&mut carry, &[eol]).map_err(&read_err)?;
        f(&carry, &[])?;
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
}
