//! Small regular files read whole: one `read` into a page-aligned buffer
//! a byte longer than the file, where a stream would map or read ahead.
//! A tree of small files costs GNU's tools an open, a read or two and a
//! close per file; this keeps ferry's tools to the same.

use ferry::{Buf, BufMut};
use std::fs::File;
use std::io::{self, Read};

/// Regular files shorter than this are read whole by [`read`]; longer
/// ones go through a `ferry::Stream` (mapped where that pays).
pub const SMALL: u64 = 1 << 20;

/// All of the regular file `f`, whose size was `size` when looked at: to
/// its end whatever it holds by then (a file that grew is read on, one
/// that shrank ends early). A read shorter than asked ends it once it
/// has reached `size`; before that (a /proc or /sys file, whose size
/// says nothing) reading goes on until a read says 0.
pub fn read(mut f: &File, size: u64) -> io::Result<Buf> {
    let first = usize::try_from(size)
        .ok()
        .and_then(|n| n.checked_add(1))
        .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
    let mut m = buffer(first.next_multiple_of(4096))?;
    loop {
        if m.tail_room() == 0 {
            let more = m.capacity().max(64 << 10);
            let mut bigger = buffer(
                m.capacity()
                    .checked_add(more)
                    .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?,
            )?;
            bigger.extend_from_slice(&m);
            m = bigger;
        }
        let asked = m.tail_room();
        let n = match f.read(m.spare_capacity_mut()) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        m.commit(n);
        // A short read that reaches the size the file gave is its end; one
        // short of it (a file that shrank, or whose size says nothing of
        // its contents: /proc, /sys, whose reads stop at a page) reads on
        // until a read says 0.
        let reached = size > 0 && m.len() as u64 >= size;
        if n == 0 || (n < asked.min(0x7fff_f000) && reached) {
            return Ok(m.freeze());
        }
    }
}

/// A page-aligned buffer of `cap` bytes: from the process's pool while it
/// has one of that size (a slot whose pages are in memory already, given
/// back when the file's bytes are dropped), else a new allocation.
fn buffer(cap: usize) -> io::Result<BufMut> {
    if cap <= SMALL as usize + 4096 {
        if let Ok(m) = ferry::Pool::global().alloc(cap) {
            return Ok(m);
        }
    }
    BufMut::try_with_capacity_aligned(cap, 4096)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_is_read_whole_whatever_its_size_said() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0usize, 1, 4095, 4096, 4097, 70_000, 300_000] {
            let p = dir.path().join(format!("f{len}"));
            let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            std::fs::write(&p, &data).unwrap();
            // The size given is right, too small (the file grew) or too
            // large (it shrank): the bytes read are the file's.
            for said in [len as u64, 0, len as u64 + 10_000] {
                let b = read(&File::open(&p).unwrap(), said).unwrap();
                assert_eq!(&b[..], &data[..], "len {len}, said {said}");
                assert_eq!(b.as_ptr() as usize % 4096, 0);
            }
        }
    }

    #[test]
    fn a_huge_size_is_an_error_not_a_panic() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"x").unwrap();
        assert!(read(&f, u64::MAX).is_err());
        assert!(read(&f, u64::MAX / 2).is_err());
    }
}
