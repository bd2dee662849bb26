//! Counting a large named file on two cores: split at the first line end
//! past its middle, each half read by its own stream, the second half's
//! counts then taken over by the first (as `Counter::feed_two` does for
//! one region).

use super::{common, Counter, Counts, Failure, Want};
use crate::tools::locale::{Charset, WideTable};
use ferry::Stream;
use std::ffi::OsString;
use std::io;

/// Each half is read this much at a time: small enough that a stream
/// reading into a buffer reuses one that stays in the CPU's cache.
const REGION: usize = 256 << 10;

/// The counts of `first` (open on `f`, at its current position) to its
/// end, on two threads; `None` if the file could not be split (reopened,
/// or no line end past its middle): then the caller counts on one.
pub(super) fn count(
    f: &OsString,
    first: &Stream,
    w: Want,
    charset: Charset,
    wide: &mut WideTable,
) -> Option<Result<Counts, Failure>> {
    let start = first.position();
    let len = first.len().ok()?;
    let second = Stream::open(f, &common::input_options()).ok()?;
    let mid = line_start_after(&second, start + (len - start) / 2)?;
    second.seek_to(io::SeekFrom::Start(mid)).ok()?;
    let mut a = Counter::new(w, charset);
    let mut b = Counter::new(w, charset);
    let (ra, rb) = std::thread::scope(|s| {
        let b = &mut b;
        let h = s.spawn(move || {
            let second = second;
            let mut hw = WideTable::new();
            feed_until(&second, u64::MAX, b, &mut hw)
        });
        let ra = feed_until(first, mid, &mut a, wide);
        (ra, h.join())
    });
    let rb = rb.unwrap_or_else(|_| Err(io::Error::other("counting thread failed")));
    // Both halves' bytes count, even when one failed (GNU prints what it
    // counted before an error).
    a.absorb(&mut b);
    match ra.and(rb) {
        Ok(()) => Some(Ok(a.finish())),
        Err(e) => Some(Err((common::os_only(e), Some(a.finish())))),
    }
}

/// The offset just past the first newline at or after `from`, if any.
fn line_start_after(s: &Stream, from: u64) -> Option<u64> {
    s.seek_to(io::SeekFrom::Start(from)).ok()?;
    loop {
        let at = s.position();
        let r = s.salloc(REGION).ok()?;
        if r.is_empty() {
            return None;
        }
        if let Some(i) = memchr::memchr(b'\n', &r) {
            return Some(at + i as u64 + 1);
        }
    }
}

/// Feeds `c` with what `s` holds from its position up to offset `end` (or
/// its end of file).
fn feed_until(s: &Stream, end: u64, c: &mut Counter, wide: &mut WideTable) -> io::Result<()> {
    loop {
        let left = end.saturating_sub(s.position());
        if left == 0 {
            return Ok(());
        }
        let r = s.salloc(left.min(REGION as u64) as usize)?;
        if r.is_empty() {
            return Ok(());
        }
        c.feed(&r, wide);
    }
}
