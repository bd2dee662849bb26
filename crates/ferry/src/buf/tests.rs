//! Unit and model tests of the memory layer's buffers (run under Miri too).

use super::*;
use crate::test_support::{iters, proptest_config};
use proptest::prelude::*;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, IoSlice, Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

static STATIC_BYTES: [u8; 64] = {
    let mut a = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        a[i] = (i * 7 + 3) as u8;
        i += 1;
    }
    a
};

// ---------------------------------------------------------------- Buf ----

#[test]
fn from_vec_string_box_take_the_allocation() {
    let v = vec![1u8, 2, 3, 4, 5];
    let p = v.as_ptr();
    let b = Buf::from(v);
    assert_eq!(b.as_ptr(), p, "From<Vec<u8>> must not copy");
    assert_eq!(b, [1, 2, 3, 4, 5]);

    let s = String::from("hello");
    let p = s.as_ptr();
    let b = Buf::from(s);
    assert_eq!(b.as_ptr(), p, "From<String> must not copy");

    let bx: Box<[u8]> = vec![9u8; 10].into_boxed_slice();
    let p = bx.as_ptr();
    assert_eq!(Buf::from(bx).as_ptr(), p, "From<Box<[u8]>> must not copy");

    let mut big = Vec::with_capacity(100);
    big.extend_from_slice(b"abc");
    let b = Buf::from(big);
    assert_eq!(b.len(), 3);
    assert_eq!(Buf::from(Vec::new()).len(), 0);
}

#[test]
fn from_static_points_at_the_static() {
    let b = Buf::from_static(&STATIC_BYTES);
    assert_eq!(b.as_ptr(), STATIC_BYTES.as_ptr());
    let s = b.slice(10..20);
    assert_eq!(s.as_ptr(), STATIC_BYTES[10..].as_ptr());
    assert!(!b.is_unique(), "static bytes are never unique");
    assert!(b.try_into_mut().is_err(), "static bytes are never writable");
}

#[test]
fn from_owner_drops_the_owner_once_with_the_last_reference() {
    struct Owner(Vec<u8>, Arc<AtomicUsize>);
    impl AsRef<[u8]> for Owner {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }
    impl Drop for Owner {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let b = Buf::from_owner(Owner(b"owned bytes".to_vec(), drops.clone()));
    let s = b.slice(6..);
    drop(b);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    assert_eq!(s, *b"bytes");
    let t = s.clone();
    drop(s);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(t);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    // An inline array owner: its bytes must stay valid after the move.
    let arr = Buf::from_owner([5u8; 100]);
    assert!(arr.iter().all(|&x| x == 5));
}

#[test]
fn clone_and_slices_share_the_block() {
    let b = Buf::from(vec![7u8; 1000]);
    let c = b.clone();
    let s = b.slice(100..200);
    assert_eq!(c.as_ptr(), b.as_ptr());
    assert_eq!(s.as_ptr(), b[100..].as_ptr());
    assert!(s.shares_block_with(&b));
    assert!(!b.is_unique());
    drop((c, s));
    assert!(b.is_unique());
}

#[test]
#[should_panic(expected = "out of bounds")]
fn slice_past_the_end_panics() {
    let _ = Buf::from(vec![1u8, 2, 3]).slice(1..5);
}

#[test]
#[should_panic(expected = "past its end")]
fn reversed_slice_panics() {
    #[allow(clippy::reversed_empty_ranges)]
    let _ = Buf::from(vec![1u8, 2, 3]).slice(2..1);
}

#[test]
#[should_panic(expected = "split_to")]
fn split_to_past_the_end_panics() {
    let _ = Buf::from(vec![1u8, 2, 3]).split_to(4);
}

#[test]
#[should_panic(expected = "advance")]
fn advance_past_the_end_panics() {
    Buf::from(vec![1u8]).advance(2);
}

#[test]
fn try_into_mut_only_when_unique_and_ferrys_memory() {
    let b = Buf::from(b"abcdef".to_vec());
    let c = b.clone();
    let b = b.try_into_mut().expect_err("shared");
    drop(c);
    let id = b.content_id();
    let mut m = b.try_into_mut().expect("unique heap memory");
    assert_eq!(&m[..], b"abcdef");
    m[0] = b'X';
    let b2 = m.freeze();
    assert_eq!(b2, *b"Xbcdef");
    assert_eq!(b2.content_id().block, id.block);
    assert_ne!(b2.content_id(), id, "generation must move on");

    // A slice keeps its place in the block: head room in front.
    let mut whole = Buf::from(b"0123456789".to_vec());
    let tail = whole.split_off(4);
    drop(whole);
    let m = tail.try_into_mut().expect("unique");
    assert_eq!(m.head_room(), 4);
    assert_eq!(&m[..], b"456789");

    let owner = Buf::from_owner(vec![1u8, 2]);
    assert!(
        owner.try_into_mut().is_err(),
        "foreign owners are read-only"
    );
}

#[test]
fn content_ids_name_bytes() {
    let b = Buf::from(b"hello world".to_vec());
    let x = b.slice(0..5);
    let y = b.slice(0..5);
    assert_eq!(x.content_id(), y.content_id());
    assert_ne!(x.content_id(), b.slice(1..6).content_id());
    assert_ne!(x.content_id(), b.slice(0..4).content_id());
    let other = Buf::from(b"hello world".to_vec());
    assert_ne!(other.content_id().block, b.content_id().block);
    // Static slices: equal address and length means equal bytes.
    let s1 = Buf::from_static(&STATIC_BYTES[..8]);
    let s2 = Buf::from_static(&STATIC_BYTES[..8]);
    assert_eq!(s1.content_id(), s2.content_id());
    assert_ne!(
        s1.content_id(),
        Buf::from_static(&STATIC_BYTES[1..9]).content_id()
    );
}

#[test]
fn eq_ord_hash_go_by_content() {
    let a = Buf::from(b"same".to_vec());
    let b = Buf::from_static(b"same");
    assert_eq!(a, b);
    assert!(Buf::from_static(b"abc") < Buf::from_static(b"abd"));
    let h = |x: &dyn Fn(&mut DefaultHasher)| {
        let mut s = DefaultHasher::new();
        x(&mut s);
        s.finish()
    };
    assert_eq!(h(&|s| a.hash(s)), h(&|s| b"same"[..].hash(s)));
    let mut set = HashSet::new();
    set.insert(a);
    assert!(set.contains(&b"same"[..]), "Borrow<[u8]> lookup must work");
}

#[test]
fn debug_escapes_and_elides() {
    assert_eq!(
        format!("{:?}", Buf::from_static(b"a\n\x00")),
        r#"b"a\n\x00""#
    );
    let long = format!("{:?}", Buf::from(vec![b'x'; 1000]));
    assert!(long.contains("936 bytes"), "{long}");
    assert!(long.len() < 200);
}

// ------------------------------------------------------------- BufMut ----

#[test]
fn bufmut_alignment() {
    let page = crate::sys::page_size();
    for cap in [page, 8192, 65536, 131072] {
        let m = BufMut::with_capacity(cap);
        assert_eq!(m.as_ptr() as usize % page, 0, "cap {cap} not page aligned");
    }
    let m = BufMut::with_capacity(100);
    assert_eq!(m.as_ptr() as usize % 16, 0);
    let m = BufMut::with_capacity_aligned(1000, 1 << 14);
    assert_eq!(m.as_ptr() as usize % (1 << 14), 0);
}

#[test]
fn bufmut_growth_keeps_alignment_head_room_and_bytes() {
    let mut m = BufMut::with_capacity_aligned(10, 256);
    m.reserve_head(8);
    m.extend_from_slice(b"0123456789");
    let head = m.head_room();
    assert!(head >= 8);
    m.extend_from_slice(&[b'z'; 5000]);
    assert_eq!(m.head_room(), head, "growth keeps head room");
    assert_eq!(
        (m.as_ptr() as usize - head) % 256,
        0,
        "growth keeps alignment"
    );
    assert_eq!(&m[..10], b"0123456789");
    assert_eq!(m.len(), 5010);
    m.prepend(b"HDR");
    assert_eq!(&m[..13], b"HDR0123456789");
    m.prepend(&[b'p'; 300]);
    assert_eq!(m.len(), 5313);
    assert_eq!(&m[300..306], b"HDR012");
}

#[test]
fn bufmut_reserve_commit_and_write() {
    let mut m = BufMut::with_capacity(16);
    let spare = m.spare_capacity_mut();
    assert!(spare.len() >= 16);
    spare[..4].copy_from_slice(b"abcd");
    m.commit(4);
    let n = 12;
    write!(m, "{n}-x").unwrap();
    assert_eq!(&m[..], b"abcd12-x");
    m.truncate(2);
    assert_eq!(&m[..], b"ab");
    m.clear();
    assert!(m.is_empty());
    assert_eq!(BufMut::new().capacity(), 0);
}

#[test]
#[should_panic(expected = "tail room")]
fn commit_past_tail_room_panics() {
    let mut m = BufMut::with_capacity(4);
    let cap = m.tail_room();
    m.commit(cap + 1);
}

#[test]
fn empty_bufmut_grows_on_write() {
    let mut m = BufMut::new();
    m.extend_from_slice(b"x");
    m.prepend(b"y");
    assert_eq!(m.freeze(), *b"yx");
}

// ---------------------------------------------------------- Aggregate ----

#[test]
fn more_than_iov_max_slices() {
    let n = crate::IOV_MAX * 2 + 500;
    let src = Buf::from((0..n).map(|i| i as u8).collect::<Vec<u8>>());
    let a: Aggregate = (0..n).map(|i| src.slice(i..i + 1)).collect();
    assert_eq!(a.slice_count(), n);
    let mut iov = vec![IoSlice::new(&[]); n];
    let (k, bytes) = a.fill_io_slices(&mut iov);
    assert_eq!((k, bytes), (crate::IOV_MAX, crate::IOV_MAX));
    assert_eq!(iov[5][0], 5);
    let mut few = [IoSlice::new(&[]); 3];
    assert_eq!(a.fill_io_slices(&mut few), (3, 3));
    assert_eq!(a, src[..]);
}

#[test]
fn split_in_the_middle_of_many_slices_shares_blocks() {
    let src = Buf::from(vec![3u8; 10_000]);
    let mut a: Aggregate = (0..1000).map(|i| src.slice(i * 10..i * 10 + 10)).collect();
    let front = a.split_to(5005);
    assert_eq!(front.len(), 5005);
    assert_eq!(a.len(), 4995);
    assert_eq!(front.slice_count() + a.slice_count(), 1001);
    assert_eq!(front.stats().blocks, 1);
    // No copy: every slice of both halves points into the source block.
    let range = src.as_ptr() as usize..src.as_ptr() as usize + src.len();
    for c in front.chunks().chain(a.chunks()) {
        assert!(
            range.contains(&(c.as_ptr() as usize)),
            "a slice was copied out of the block"
        );
    }
}

#[test]
fn reader_reads_across_slices() {
    let a: Aggregate = ["ab\ncd", "", "e\n", "fgh"]
        .iter()
        .map(|s| Buf::from_static(s.as_bytes()))
        .collect();
    let mut r = a.reader();
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert_eq!(line, "ab\n");
    let mut three = [0u8; 3];
    r.read_exact(&mut three).unwrap();
    assert_eq!(&three, b"cde");
    assert_eq!(r.remaining(), 4);
    let mut rest = Vec::new();
    r.read_to_end(&mut rest).unwrap();
    assert_eq!(rest, b"\nfgh");
    assert_eq!(r.fill_buf().unwrap(), b"");
}

#[test]
fn stats_describe_fragments() {
    let a: Aggregate = [
        Buf::from(vec![1u8; 10]),
        Buf::from_static(b"xy"),
        Buf::from(vec![0u8; 3]),
    ]
    .into_iter()
    .collect();
    let s = a.stats();
    assert_eq!(
        (s.bytes, s.slices, s.smallest, s.largest, s.blocks),
        (15, 3, 2, 10, 3)
    );
    assert_eq!(Aggregate::new().stats(), FragmentStats::default());
}

// --------------------------------------------------------- model tests ---

/// How a test buffer's bytes are made: every kind of block.
#[derive(Debug, Clone)]
enum Source {
    Vec(Vec<u8>),
    Static(usize, usize),
    Copy(Vec<u8>),
    Owner(Vec<u8>),
    Frozen(Vec<u8>, usize),
}

fn source() -> impl Strategy<Value = Source> + Clone {
    let bytes = proptest::collection::vec(any::<u8>(), 0..48);
    prop_oneof![
        bytes.clone().prop_map(Source::Vec),
        (0usize..64, 0usize..64).prop_map(|(a, b)| Source::Static(a.min(b), a.max(b))),
        bytes.clone().prop_map(Source::Copy),
        bytes.clone().prop_map(Source::Owner),
        (bytes, 0usize..32).prop_map(|(b, h)| Source::Frozen(b, h)),
    ]
}

fn make(src: &Source) -> (Buf, Vec<u8>) {
    match src {
        Source::Vec(v) => (Buf::from(v.clone()), v.clone()),
        Source::Static(a, b) => (
            Buf::from_static(&STATIC_BYTES[*a..*b]),
            STATIC_BYTES[*a..*b].to_vec(),
        ),
        Source::Copy(v) => (Buf::copy_from_slice(v), v.clone()),
        Source::Owner(v) => (Buf::from_owner(v.clone()), v.clone()),
        Source::Frozen(v, head) => {
            let mut m = BufMut::with_head_room(*head, 8);
            m.extend_from_slice(v);
            (m.freeze(), v.clone())
        }
    }
}

#[derive(Debug, Clone)]
enum BufOp {
    Slice(usize, usize),
    SplitTo(usize, bool),
    SplitOff(usize, bool),
    Truncate(usize),
    Advance(usize),
    Clone,
    RoundTripMut(u8),
}

fn buf_op() -> impl Strategy<Value = BufOp> {
    let i = 0usize..64;
    prop_oneof![
        (i.clone(), i.clone()).prop_map(|(a, b)| BufOp::Slice(a, b)),
        (i.clone(), any::<bool>()).prop_map(|(a, k)| BufOp::SplitTo(a, k)),
        (i.clone(), any::<bool>()).prop_map(|(a, k)| BufOp::SplitOff(a, k)),
        i.clone().prop_map(BufOp::Truncate),
        i.prop_map(BufOp::Advance),
        Just(BufOp::Clone),
        any::<u8>().prop_map(BufOp::RoundTripMut),
    ]
}

proptest! {
    #![proptest_config(proptest_config(256))]

    #[test]
    fn buf_matches_vec_model(src in source(), ops in proptest::collection::vec(buf_op(), 0..24)) {
        let (mut b, mut model) = make(&src);
        let mut keep = Vec::new();
        for op in ops {
            let len = model.len();
            match op {
                BufOp::Slice(x, y) => {
                    let (s, e) = (x % (len + 1), y % (len + 1));
                    let (s, e) = (s.min(e), s.max(e));
                    let sl = b.slice(s..e);
                    prop_assert_eq!(&sl[..], &model[s..e]);
                    keep.push((sl, model[s..e].to_vec()));
                }
                BufOp::SplitTo(x, keep_front) => {
                    let at = x % (len + 1);
                    let front = b.split_to(at);
                    let mfront: Vec<u8> = model.drain(..at).collect();
                    prop_assert_eq!(&front[..], &mfront[..]);
                    if keep_front { keep.push((front, mfront)); }
                }
                BufOp::SplitOff(x, keep_back) => {
                    let at = x % (len + 1);
                    let back = b.split_off(at);
                    let mback = model.split_off(at);
                    prop_assert_eq!(&back[..], &mback[..]);
                    if keep_back { keep.push((back, mback)); }
                }
                BufOp::Truncate(x) => { b.truncate(x); model.truncate(x); }
                BufOp::Advance(x) => { let n = x % (len + 1); b.advance(n); model.drain(..n); }
                BufOp::Clone => { keep.push((b.clone(), model.clone())); }
                BufOp::RoundTripMut(x) => {
                    let id = b.content_id();
                    b = match b.try_into_mut() {
                        Ok(mut m) => {
                            if let Some(first) = m.first_mut() { *first = x; }
                            if let Some(first) = model.first_mut() { *first = x; }
                            let nb = m.freeze();
                            prop_assert_ne!(nb.content_id(), id);
                            nb
                        }
                        Err(b) => b,
                    };
                }
            }
            prop_assert_eq!(&b[..], &model[..]);
            prop_assert_eq!(b.len(), model.len());
        }
        // Nothing that was handed out changed behind its holder's back.
        for (k, m) in &keep {
            prop_assert_eq!(&k[..], &m[..]);
        }
    }
}

#[derive(Debug, Clone)]
enum AggOp {
    Append(Source),
    Prepend(Source),
    AppendAgg(Vec<Source>),
    PrependAgg(Vec<Source>),
    AppendMany(usize),
    SplitTo(usize, bool),
    SplitOff(usize, bool),
    Truncate(usize),
    Advance(usize),
    Replace(usize, usize, Vec<u8>),
    Splice(usize, usize, Vec<Source>),
    SliceOf(usize, usize),
    Coalesce,
    Clear,
}

fn agg_op() -> impl Strategy<Value = AggOp> {
    let i = 0usize..4096;
    let srcs = proptest::collection::vec(source(), 0..5);
    prop_oneof![
        4 => source().prop_map(AggOp::Append),
        2 => source().prop_map(AggOp::Prepend),
        1 => srcs.clone().prop_map(AggOp::AppendAgg),
        1 => srcs.clone().prop_map(AggOp::PrependAgg),
        1 => (0usize..1500).prop_map(AggOp::AppendMany),
        2 => (i.clone(), any::<bool>()).prop_map(|(a, k)| AggOp::SplitTo(a, k)),
        2 => (i.clone(), any::<bool>()).prop_map(|(a, k)| AggOp::SplitOff(a, k)),
        1 => i.clone().prop_map(AggOp::Truncate),
        1 => i.clone().prop_map(AggOp::Advance),
        2 => (i.clone(), i.clone(), proptest::collection::vec(any::<u8>(), 0..20))
            .prop_map(|(a, b, v)| AggOp::Replace(a, b, v)),
        1 => (i.clone(), i.clone(), srcs).prop_map(|(a, b, s)| AggOp::Splice(a, b, s)),
        1 => (i.clone(), i).prop_map(|(a, b)| AggOp::SliceOf(a, b)),
        1 => Just(AggOp::Coalesce),
        1 => Just(AggOp::Clear),
    ]
}

fn agg_of(srcs: &[Source]) -> (Aggregate, Vec<u8>) {
    let mut a = Aggregate::new();
    let mut m = Vec::new();
    for s in srcs {
        let (b, v) = make(s);
        a.append_buf(b);
        m.extend_from_slice(&v);
    }
    (a, m)
}

fn range_in(x: usize, y: usize, len: usize) -> (usize, usize) {
    let (s, e) = (x % (len + 1), y % (len + 1));
    (s.min(e), s.max(e))
}

/// Every way of looking at the aggregate agrees with the model.
fn check_agg(a: &Aggregate, model: &[u8], probe: usize) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.len(), model.len());
    prop_assert_eq!(a.is_empty(), model.is_empty());
    let joined: Vec<u8> = a.chunks().flatten().copied().collect();
    prop_assert_eq!(&joined[..], model);
    prop_assert!(a.chunks().all(|c| !c.is_empty()), "empty slice stored");
    prop_assert!(*a == *model);
    prop_assert_eq!(a.stats().bytes, model.len());
    prop_assert_eq!(a.stats().slices, a.slice_count());
    // copy_to_slice at an arbitrary offset
    let off = probe % (model.len() + 1);
    let mut out = vec![0u8; (probe / 7) % 40];
    let n = a.copy_to_slice(off, &mut out);
    let want = &model[off..(off + out.len()).min(model.len())];
    prop_assert_eq!(&out[..n], want);
    // the reader
    let mut r = Vec::new();
    a.reader().read_to_end(&mut r).unwrap();
    prop_assert_eq!(&r[..], model);
    // iovec export
    let mut iov = vec![IoSlice::new(&[]); a.slice_count().min(crate::IOV_MAX) + 1];
    let (k, bytes) = a.fill_io_slices(&mut iov);
    prop_assert_eq!(k, a.slice_count().min(crate::IOV_MAX));
    let first: usize = a.chunks().take(k).map(|c| c.len()).sum();
    prop_assert_eq!(bytes, first);
    Ok(())
}

proptest! {
    #![proptest_config(proptest_config(256))]

    #[test]
    fn aggregate_matches_vec_model(
        ops in proptest::collection::vec(agg_op(), 0..(if cfg!(miri) { 8 } else { 40 })),
        probe in any::<usize>(),
    ) {
        let mut a = Aggregate::new();
        let mut model: Vec<u8> = Vec::new();
        let mut kept: Vec<(Aggregate, Vec<u8>)> = Vec::new();
        let many = Buf::from((0..=255u8).collect::<Vec<u8>>());
        for op in ops {
            let len = model.len();
            match op {
                AggOp::Append(s) => { let (b, v) = make(&s); a.append_buf(b); model.extend_from_slice(&v); }
                AggOp::Prepend(s) => {
                    let (b, v) = make(&s);
                    a.prepend_buf(b);
                    model.splice(0..0, v);
                }
                AggOp::AppendAgg(ss) => { let (x, v) = agg_of(&ss); a.append(x); model.extend_from_slice(&v); }
                AggOp::PrependAgg(ss) => { let (x, v) = agg_of(&ss); a.prepend(x); model.splice(0..0, v); }
                AggOp::AppendMany(n) => {
                    let n = if cfg!(miri) { n % 40 } else { n };
                    for i in 0..n {
                        let at = i % 256;
                        a.append_buf(many.slice(at..at + 1));
                        model.push(at as u8);
                    }
                }
                AggOp::SplitTo(x, k) => {
                    let at = x % (len + 1);
                    let front = a.split_to(at);
                    let mf: Vec<u8> = model.drain(..at).collect();
                    check_agg(&front, &mf, probe)?;
                    if k { kept.push((front, mf)); }
                }
                AggOp::SplitOff(x, k) => {
                    let at = x % (len + 1);
                    let back = a.split_off(at);
                    let mb = model.split_off(at);
                    check_agg(&back, &mb, probe)?;
                    if k { kept.push((back, mb)); }
                }
                AggOp::Truncate(x) => { a.truncate(x); model.truncate(x); }
                AggOp::Advance(x) => { let n = x % (len + 1); a.advance(n); model.drain(..n); }
                AggOp::Replace(x, y, v) => {
                    let (s, e) = range_in(x, y, len);
                    let before = a.slice_count();
                    a.replace(s..e, &v);
                    model.splice(s..e, v.iter().copied());
                    // Never more than: the old slices, one split, one new.
                    prop_assert!(a.slice_count() <= before + 2);
                }
                AggOp::Splice(x, y, ss) => {
                    let (s, e) = range_in(x, y, len);
                    let (w, v) = agg_of(&ss);
                    a.splice(s..e, w);
                    model.splice(s..e, v);
                }
                AggOp::SliceOf(x, y) => {
                    let (s, e) = range_in(x, y, len);
                    kept.push((a.clone(), model.clone()));
                    a = a.slice(s..e);
                    model = model[s..e].to_vec();
                }
                AggOp::Coalesce => {
                    let b = a.coalesce();
                    prop_assert_eq!(&b[..], &model[..]);
                    prop_assert!(a.slice_count() <= 1);
                }
                AggOp::Clear => { a.clear(); model.clear(); }
            }
            check_agg(&a, &model, probe)?;
        }
        for (k, m) in &kept {
            check_agg(k, m, probe)?;
        }
    }
}

#[test]
fn shared_buffers_survive_heavy_cloning_across_threads() {
    let b = Buf::from((0..200u8).collect::<Vec<u8>>());
    let n = iters(2000);
    std::thread::scope(|s| {
        for t in 0..2 {
            let b = b.clone();
            s.spawn(move || {
                for i in 0..n {
                    let at = (i + t) % 200;
                    let x = b.slice(at..);
                    assert_eq!(x[0], at as u8);
                    drop(x.clone());
                }
            });
        }
    });
    assert!(b.is_unique());
}
