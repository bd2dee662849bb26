//! Large files compared on two cores: memory bandwidth, not
//! instructions, is the limit of one core here. Each thread compares its
//! half of both files; the first difference, and the newlines before it,
//! are handed to the sequential path, which reports it.

use super::{first_difference, CHUNK};
use crate::tools::common;
use ferry::Stream;
use std::ffi::OsString;
use std::io;

/// Files at least this large are compared on two threads.
pub(super) const PARALLEL_MIN: u64 = 64 << 20;

/// Each thread compares this much of both files at a time: where a stream
/// reads with `pread` (a file in 4 KiB page-cache pages) both buffers stay
/// in the CPU's cache. On a file written 4 KiB at a time: 128 KiB 3.06×
/// GNU, 256 KiB 2.95×, 1 MiB 2.87× (15 interleaved rounds; 256 KiB was
/// also faster on large folios, 67 against 82 ms).
const PARALLEL_CHUNK: usize = 256 << 10;

/// Newlines in each whole `CHUNK` compared equal, and whether its last
/// byte is one.
pub(super) type ChunkLines = Vec<(u64, bool)>;

/// The offset of the first difference in the first `n` bytes (after the
/// skips), using two threads, with the newlines of every whole `CHUNK`
/// compared equal before it (A's bytes as read, counted as they are
/// compared); `None` if the threads could not run (then the sequential
/// path decides); no offset if equal.
pub(super) fn parallel_first_difference(
    an: &OsString,
    bn: &OsString,
    skip: [u64; 2],
    n: u64,
) -> Option<(Option<u64>, ChunkLines)> {
    let half = (n / 2) - (n / 2) % CHUNK as u64;
    let part = |from: u64, to: u64| -> Option<(Option<u64>, ChunkLines)> {
        let sa = Stream::open(an, &common::input_options()).ok()?;
        let sb = Stream::open(bn, &common::input_options()).ok()?;
        let mut lines = Vec::new();
        let mut nl = 0u64;
        let mut pos = from;
        while pos < to {
            let len = ((to - pos) as usize).min(PARALLEL_CHUNK);
            let ra = sa.salloc_at(len, io::SeekFrom::Start(skip[0] + pos)).ok()?;
            let rb = sb.salloc_at(len, io::SeekFrom::Start(skip[1] + pos)).ok()?;
            if ra.len() != len || rb.len() != len {
                return None; // changed under us: let the sequential path see
            }
            let at = (ra[..] != rb[..]).then(|| first_difference(&ra, &rb));
            // A file cut short under its mapping reads as zeros where its
            // pages went, bytes it never held: the sequential path finds
            // where it ends.
            if !ra.is_intact() || !rb.is_intact() {
                return None;
            }
            if let Some(i) = at {
                return Some((Some(pos + i as u64), lines));
            }
            nl += bytecount::count(&ra, b'\n') as u64;
            pos += len as u64;
            if pos.is_multiple_of(CHUNK as u64) {
                lines.push((std::mem::take(&mut nl), ra[len - 1] == b'\n'));
            }
        }
        Some((None, lines))
    };
    let (first, second) = std::thread::scope(|s| {
        let h = s.spawn(|| part(half, n));
        let first = part(0, half);
        (first, h.join().ok().flatten())
    });
    match (first?, second?) {
        (first @ (Some(_), _), _) => Some(first),
        ((None, mut lines), (at, more)) => {
            lines.extend(more);
            Some((at, lines))
        }
    }
}
