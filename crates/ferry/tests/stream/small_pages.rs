//! Files whose page cache sits in 4 KiB pages (written 4 KiB at a time) are
//! read by the mapped backend partly through `pread`: windows found in
//! small pages are not used, their span is read into buffers. Every read
//! must still see the file's bytes wherever a request starts and ends —
//! across window, span and huge-page boundaries, forwards and backwards.

use ferry::stream::Backend;
use ferry::{OpenOptions, Stream};
use proptest::prelude::*;
use std::io::{SeekFrom, Write};
use std::sync::OnceLock;

const LEN: u64 = 40 << 20;

/// The byte at `off`: a pattern that differs at every offset mod 2^32.
fn expected(off: u64) -> u8 {
    (off.wrapping_mul(2_654_435_761) >> 13) as u8
}

/// A 40 MiB file written in 4 KiB writes (so its cache is in 4 KiB pages),
/// made once per test process.
fn file() -> &'static std::path::Path {
    static F: OnceLock<(tempfile::TempDir, std::path::PathBuf)> = OnceLock::new();
    let (_, p) = F.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("small-pages");
        let mut f = std::fs::File::create(&p).unwrap();
        let mut off = 0u64;
        while off < LEN {
            let page: Vec<u8> = (off..off + 4096).map(expected).collect();
            f.write_all(&page).unwrap();
            off += 4096;
        }
        (d, p)
    });
    p
}

fn check(region: &[u8], at: u64) -> Result<(), TestCaseError> {
    for (i, &b) in region.iter().enumerate() {
        let off = at + i as u64;
        prop_assert_eq!(b, expected(off), "byte at {}", off);
    }
    Ok(())
}

#[test]
fn sequential_reads_see_every_byte() {
    let s = Stream::open(file(), &OpenOptions::read_only().backend(Backend::Mapped)).unwrap();
    let mut at = 0u64;
    let mut n = 1usize;
    loop {
        let r = s.salloc(n).unwrap();
        if r.is_empty() {
            break;
        }
        check(&r, at).unwrap();
        at += r.len() as u64;
        // Sizes that cross window and span ends at odd places.
        n = (n * 7 + 4093) % (3 << 20) + 1;
    }
    assert_eq!(at, LEN);
}

#[derive(Debug, Clone)]
enum Op {
    Next(usize),
    At(u64, usize),
    Read(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1usize..(2 << 20)).prop_map(Op::Next),
        (0..LEN + 8192, 1usize..(3 << 20)).prop_map(|(o, n)| Op::At(o, n)),
        (1usize..(1 << 20)).prop_map(Op::Read),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn any_order_of_reads_sees_the_file(ops in proptest::collection::vec(op(), 1..24)) {
        let mut s = Stream::open(file(), &OpenOptions::read_only().backend(Backend::Mapped)).unwrap();
        let mut pos = 0u64;
        for o in ops {
            match o {
                Op::Next(n) => {
                    let r = s.salloc(n).unwrap();
                    prop_assert_eq!(r.len() as u64, (n as u64).min(LEN - pos));
                    check(&r, pos)?;
                    pos += r.len() as u64;
                }
                Op::At(off, n) => {
                    let r = s.salloc_at(n, SeekFrom::Start(off)).unwrap();
                    prop_assert_eq!(r.len() as u64, (n as u64).min(LEN.saturating_sub(off)));
                    check(&r, off)?;
                    pos = off.min(LEN) + r.len() as u64;
                    pos = pos.max(off);
                }
                Op::Read(n) => {
                    let mut v = vec![0u8; n];
                    let got = std::io::Read::read(&mut s, &mut v).unwrap();
                    check(&v[..got], pos)?;
                    prop_assert_eq!(got == 0, pos >= LEN);
                    pos += got as u64;
                }
            }
            prop_assert_eq!(s.position(), pos);
        }
    }
}
