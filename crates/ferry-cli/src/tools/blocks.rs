//! Whole lines from an alloc stream, a region at a time: what line tools
//! (cut, grep, the benchmark programs) share. Regions are handed over as
//! they are (no copy) up to their last line end; only a line cut by a
//! region's end is gathered in a small carry buffer.

use ferry::Stream;
use std::io;

/// Calls `f` with blocks of whole lines, each ending in `eol`, read from
/// `g` in regions of `region` bytes. A last line without `eol` comes last,
/// with `eol` added. `f` returns false to stop early. A read error becomes
/// `E` through `read_err`.
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
pub fn for_each_block_peek<E>(
    g: &Stream,
    region: usize,
    eol: u8,
    read_err: impl Fn(io::Error) -> E,
    mut f: impl FnMut(&[u8], &[u8]) -> Result<bool, E>,
) -> Result<(), E> {
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
                    carry.extend_from_slice(&data[..=i]);
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
                    carry.extend_from_slice(data);
                    continue;
                }
            }
        }
        let whole = memchr::memrchr(eol, data).map_or(0, |i| i + 1);
        if whole > 0 && !f(&data[..whole], &data[whole..])? {
            return Ok(());
        }
        carry.extend_from_slice(&data[whole..]);
    }
    if !carry.is_empty() {
        carry.push(eol);
        f(&carry, &[])?;
    }
    Ok(())
}

/// Where to cut `data` in two for two threads: just after the first `eol`
/// in its second half, so that each part is whole lines and the second
/// starts a line. `None` when `data` is under 1 MiB (not worth a thread) or
/// its second half holds no `eol` before the last byte.
pub fn split_after_line_end(data: &[u8], eol: u8) -> Option<usize> {
    if data.len() < 1 << 20 {
        return None;
    }
    let half = data.len() / 2;
    memchr::memchr(eol, &data[half..])
        .map(|i| half + i + 1)
        .filter(|&m| m < data.len())
}
