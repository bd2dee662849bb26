//! `Endpoint::collect`, the memory sink: output blocks appended to an
//! Aggregate by reference, from memory, file ranges and pipes, with any
//! channel parameters imposed.

use crate::support::nz;
use ferry::transfer::endpoint::Endpoint;
use ferry::transfer::overlay::{Case, ChannelParams};
use ferry::transfer::{between, Method, TransferOptions};
use ferry::{Aggregate, Buf};
use proptest::prelude::*;
use std::io::Write;
use std::os::fd::AsFd;

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(13) ^ seed).collect()
}

#[test]
fn memory_into_memory_is_slices_of_the_same_buffers() {
    let a = Buf::from(bytes(100_000, 1));
    let b = Buf::from(bytes(50_000, 2));
    let mut src = Aggregate::from(a.clone());
    src.append_buf(b.clone());
    let src = Endpoint::memory(src);
    let dst = Endpoint::collect().impose(ChannelParams::variable(nz(30_000)));
    let st = between(&src, &dst, &TransferOptions::new()).unwrap();
    assert_eq!(st.case, Some(Case::Split));
    assert_eq!((st.bytes, st.user_copied()), (150_000, 0));
    assert_eq!(st.overlay.unwrap().bytes_copied, 0);
    let got = dst.into_collected().unwrap();
    let mut want = bytes(100_000, 1);
    want.extend(bytes(50_000, 2));
    assert_eq!(got, want[..]);
    // Every piece is a view of one of the source's two blocks.
    assert!(got
        .bufs()
        .all(|x| x.shares_block_with(&a) || x.shares_block_with(&b)));
}

#[test]
fn a_file_range_into_padded_fixed_records() {
    let mut f = tempfile::tempfile().unwrap();
    let data = bytes(20_000, 3);
    f.write_all(&data).unwrap();
    let src = Endpoint::file_range(f.as_fd(), 1000, Some(10_000)).unwrap();
    let dst = Endpoint::collect().impose(ChannelParams::fixed(nz(4096)));
    let st = between(&src, &dst, &TransferOptions::new().pad_last(0xAB)).unwrap();
    let got = dst.into_collected().unwrap().copy_to_vec();
    assert_eq!(got.len(), 12_288);
    assert_eq!(&got[..10_000], &data[1000..11_000]);
    assert!(got[10_000..].iter().all(|&c| c == 0xAB));
    assert_eq!(st.bytes, 12_288);
    assert_eq!(st.bytes_by(Method::ReadWrite), 12_288);
    assert_eq!(st.overlay.unwrap().padding, 2288);
}

#[test]
fn a_pipe_into_memory_arrives_whole() {
    let (r, mut w) = std::io::pipe().unwrap();
    let data = bytes(3 << 20, 4);
    let want = data.clone();
    let writer = std::thread::spawn(move || w.write_all(&data));
    let src = Endpoint::fd(r.as_fd()).unwrap();
    let dst = Endpoint::collect();
    let st = between(&src, &dst, &TransferOptions::new()).unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(st.bytes, want.len() as u64);
    assert!(dst.into_collected().unwrap() == want[..]);
}

#[test]
fn a_short_file_range_is_an_error_keeping_what_arrived() {
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(&bytes(5000, 5)).unwrap();
    let src = Endpoint::file_range(f.as_fd(), 0, Some(9000)).unwrap();
    let dst = Endpoint::collect();
    let e = between(&src, &dst, &TransferOptions::new()).unwrap_err();
    assert_eq!(e.io_error().kind(), std::io::ErrorKind::UnexpectedEof);
    assert_eq!(e.bytes(), 5000);
    assert_eq!(dst.into_collected().unwrap(), bytes(5000, 5)[..]);
}

#[test]
fn sinks_and_sources_do_not_swap() {
    let mem = Endpoint::memory(Buf::from_static(b"abc"));
    let sink = Endpoint::collect();
    let e = between(&sink, &Endpoint::collect(), &TransferOptions::new()).unwrap_err();
    assert_eq!(e.io_error().kind(), std::io::ErrorKind::InvalidInput);
    let e = between(&sink, &mem, &TransferOptions::new()).unwrap_err();
    assert_eq!(e.io_error().kind(), std::io::ErrorKind::InvalidInput);
    let e = between(&mem, &Endpoint::memory(Buf::new()), &TransferOptions::new()).unwrap_err();
    assert_eq!(e.io_error().kind(), std::io::ErrorKind::InvalidInput);
    assert!(mem.into_collected().is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Any pieces, any parameters on both sides: the sink holds the input's
    /// bytes (padded to a whole fixed block when asked), and nothing is
    /// copied unless a fixed output block had to be made contiguous.
    #[test]
    fn any_pieces_any_parameters(
        pieces in prop::collection::vec(0usize..5000, 0..12),
        in_fixed in any::<bool>(),
        in_b in 1usize..6000,
        out_fixed in any::<bool>(),
        out_b in 1usize..6000,
        pad in prop::option::of(any::<u8>()),
    ) {
        let mut agg = Aggregate::new();
        let mut want = Vec::new();
        for (i, &n) in pieces.iter().enumerate() {
            let b = bytes(n, i as u8);
            want.extend_from_slice(&b);
            agg.append_buf(Buf::from(b));
        }
        let p = |fixed: bool, b: usize| if fixed { ChannelParams::fixed(nz(b)) } else { ChannelParams::variable(nz(b)) };
        let src = Endpoint::memory(agg).impose(p(in_fixed, in_b));
        let dst = Endpoint::collect().impose(p(out_fixed, out_b));
        let mut opts = TransferOptions::new();
        if let Some(x) = pad { opts = opts.pad_last(x); }
        let st = between(&src, &dst, &opts).unwrap();
        let got = dst.into_collected().unwrap().copy_to_vec();
        prop_assert_eq!(&got[..want.len()], &want[..]);
        let padded = out_fixed && pad.is_some() && want.len() % out_b != 0;
        if padded {
            prop_assert_eq!(got.len(), want.len().div_ceil(out_b) * out_b);
            prop_assert!(got[want.len()..].iter().all(|&c| Some(c) == pad));
        } else {
            prop_assert_eq!(got.len(), want.len());
        }
        prop_assert_eq!(st.bytes, got.len() as u64);
        prop_assert_eq!(st.user_copied(), 0);
    }
}
