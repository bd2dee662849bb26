//! A stream's count of the regions lent from its current read buffer does
//! not wrap, however many regions are forgotten: a region detached with
//! the safe `Region::into_raw` (or `mem::forget`) keeps its bytes.
//!
//! The bug this caught: the count was a `u32` (`ReadCur::leases`,
//! `Slot::leases`) with plain `+= 1`. Detached regions are never returned,
//! so 2^32 of them wrapped the count to 0 in a release build; the next
//! fill retired the buffer as unleased and freed it while a live region
//! still pointed into it: its bytes changed under it (use after free,
//! promise (1) and (2) broken from safe code). The count is a `u64` now.
//!
//! Run in a build without overflow checks (a debug build panics on the
//! overflow instead), e.g.:
//!   cargo test -p ferry --release --test stream -- --ignored region_count::
//! or with `--config 'profile.dev.package.ferry.overflow-checks=false'
//! --config 'profile.dev.package.ferry.opt-level=3'`.

use ferry::Stream;
use std::io::SeekFrom;

#[test]
#[ignore = "long: 2^32 sallocs (about 7 s optimized); the u64 lease count cannot wrap. Run: cargo test -p ferry --release --test stream -- --ignored region_count::"]
fn forgotten_regions_do_not_wrap_the_lease_count() {
    if cfg!(debug_assertions) {
        eprintln!("needs a build without overflow checks (see the file's doc)");
    }
    // 0..256 KiB is 'A', the rest 'B'.
    let mut data = vec![b'A'; 256 << 10];
    data.resize(2 << 20, b'B');
    let s = Stream::from_bytes(data);
    let keep = s.salloc(4).unwrap();
    assert_eq!(&keep[..], b"AAAA");
    // u32::MAX more leases on the same buffer: the count wraps to 0.
    for _ in 0..u32::MAX {
        let _ = s.salloc(0).unwrap().into_raw();
    }
    // A fill elsewhere retires the buffer `keep` points into; with a
    // count of 0 it is freed (back to the pool)…
    drop(s.salloc_at(8, SeekFrom::Start(600 << 10)).unwrap());
    // …and the next fill reuses that memory for other bytes.
    drop(s.salloc_at(8, SeekFrom::Start(1200 << 10)).unwrap());
    let now = keep[..].to_vec();
    std::mem::forget(keep);
    assert_eq!(
        now, b"AAAA",
        "a live region's bytes changed: its buffer was freed and reused"
    );
}
