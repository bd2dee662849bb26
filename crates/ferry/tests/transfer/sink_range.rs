//! A file range as the sink of `transfer::between`: "a range of a regular
//! file, at explicit offsets (the descriptor's own offset is neither used
//! nor moved)", says `Endpoint::file_range`. As a sink it was neither:
//! the flow wrote with `write(2)` at the descriptor's own offset and moved
//! it, so ten bytes sent "to offset 100" of an empty file landed at 0.

use ferry::transfer::endpoint::Endpoint;
use ferry::transfer::{between, TransferOptions};
use std::io::Seek;
use std::os::fd::AsFd;

#[test]
fn a_file_range_sink_is_written_at_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("g");
    std::fs::write(&p, b"").unwrap();
    let mut g = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&p)
        .unwrap();
    let st = between(
        &Endpoint::memory(ferry::Buf::from(b"0123456789".to_vec())),
        &Endpoint::file_range(g.as_fd(), 100, None).unwrap(),
        &TransferOptions::new(),
    )
    .unwrap();
    assert_eq!(st.bytes, 10);
    let got = std::fs::read(&p).unwrap();
    assert_eq!(got.len(), 110, "{got:?}");
    assert!(got[..100].iter().all(|&b| b == 0) && &got[100..] == b"0123456789");
    assert_eq!(
        g.stream_position().unwrap(),
        0,
        "the descriptor's offset did not move"
    );
}

/// From a file, through the flow's reads (no kernel path may write at the
/// descriptor's offset), and a range with a length: it takes that many
/// bytes and the transfer fails saying the range is full.
#[test]
fn a_file_range_sink_takes_a_file_and_no_more_than_its_length() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(&src, &data).unwrap();
    let input = std::fs::File::open(&src).unwrap();
    let p = dir.path().join("g");
    std::fs::write(&p, vec![b'.'; 50]).unwrap();
    let g = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    let st = between(
        &Endpoint::fd(input.as_fd()).unwrap(),
        &Endpoint::file_range(g.as_fd(), 10, None).unwrap(),
        &TransferOptions::new(),
    )
    .unwrap();
    assert_eq!(st.bytes, data.len() as u64);
    let got = std::fs::read(&p).unwrap();
    assert!(got[..10] == [b'.'; 10] && got[10..] == data[..]);

    std::fs::write(&p, b"").unwrap();
    let e = between(
        &Endpoint::memory(ferry::Buf::from(data.clone())),
        &Endpoint::file_range(g.as_fd(), 5, Some(1000)).unwrap(),
        &TransferOptions::new(),
    )
    .unwrap_err();
    let (_, e) = e.into_parts();
    assert_eq!(e.kind(), std::io::ErrorKind::WriteZero, "{e}");
    let got = std::fs::read(&p).unwrap();
    assert_eq!(got.len(), 1005);
    assert!(got[5..] == data[..1000]);
}
