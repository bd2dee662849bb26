//! `Endpoint::stream`: a ferry alloc stream as either end of
//! `transfer::between` — mapped files, buffered files, pipes and memory
//! streams as sources (regions by reference), streams as sinks (blocks
//! into their buffers, or a descriptor read straight into their write
//! regions), against every other endpoint, with any record size imposed.

use crate::support::{nz, write_file};
use ferry::stream::Backend;
use ferry::transfer::endpoint::{Endpoint, EndpointKind};
use ferry::transfer::overlay::ChannelParams;
use ferry::transfer::{between, Side, TransferOptions};
use ferry::{Buf, OpenOptions, Stream};
use proptest::prelude::*;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31) ^ (i >> 9) as u8 ^ seed)
        .collect()
}

/// `data` padded to whole `rec`-byte records with `pad`.
fn padded(data: &[u8], rec: usize, pad: Option<u8>) -> Vec<u8> {
    let mut v = data.to_vec();
    if let Some(p) = pad {
        if !v.len().is_multiple_of(rec) {
            v.resize(v.len().next_multiple_of(rec), p);
        }
    }
    v
}

#[test]
fn a_mapped_stream_into_a_memory_sink_is_its_pages_by_reference() {
    let dir = tempfile::tempdir().unwrap();
    let data = bytes(3 << 20, 1);
    let p = write_file(dir.path(), "in", &data);
    let s = Stream::open(&p, &OpenOptions::read_only().backend(Backend::Mapped)).unwrap();
    assert!(s.is_mapped());
    let src = Endpoint::stream(&s);
    assert_eq!(src.kind(), EndpointKind::Stream);
    let dst = Endpoint::collect();
    let st = between(&src, &dst, &TransferOptions::new()).unwrap();
    assert_eq!(st.bytes, data.len() as u64);
    assert_eq!((st.user_copied(), st.memcpy_bytes), (0, 0));
    let got = dst.into_collected().unwrap();
    assert_eq!(got, data[..]);
}

#[test]
fn a_file_descriptor_into_a_stream_is_read_into_its_write_regions() {
    let dir = tempfile::tempdir().unwrap();
    let data = bytes(5_000_001, 2);
    let input = std::fs::File::open(write_file(dir.path(), "in", &data)).unwrap();
    let out_path = dir.path().join("out");
    let out = Stream::open(&out_path, &OpenOptions::write_truncate()).unwrap();
    let st = between(
        &Endpoint::fd(input.as_fd()).unwrap(),
        &Endpoint::stream(&out),
        &TransferOptions::new(),
    )
    .unwrap();
    assert_eq!(st.bytes, data.len() as u64);
    assert_eq!(
        st.memcpy_bytes, 0,
        "read straight into the stream's regions"
    );
    // between flushed: the file has every byte before the stream closes.
    assert_eq!(std::fs::read(&out_path).unwrap(), data);
    out.close().unwrap();
}

#[test]
fn records_imposed_on_a_stream_sink_are_copied_into_it_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let data = bytes(10_000, 3);
    let input = std::fs::File::open(write_file(dir.path(), "in", &data)).unwrap();
    let out = Stream::memory();
    let st = between(
        &Endpoint::fd(input.as_fd()).unwrap(),
        &Endpoint::stream(&out).impose(ChannelParams::fixed(nz(4096))),
        &TransferOptions::new().pad_last(0xEE),
    )
    .unwrap();
    assert_eq!(st.bytes, 12_288);
    assert_eq!(st.memcpy_bytes, 12_288);
    assert_eq!(out.into_vec().unwrap(), padded(&data, 4096, Some(0xEE)));
}

#[test]
fn a_stream_keeps_what_it_read_ahead_and_what_it_holds_unwritten() {
    // Source: 10 bytes already taken by the program; the transfer moves
    // the rest. Sink: bytes written before the transfer come first.
    let src = Stream::from_bytes(bytes(100_000, 4));
    let head = src.salloc(10).unwrap();
    assert_eq!(&head[..], &bytes(100_000, 4)[..10]);
    drop(head);
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out");
    let out = Stream::open(&out_path, &OpenOptions::write_truncate()).unwrap();
    (&out).write_all(b"prefix:").unwrap();
    let st = between(
        &Endpoint::stream(&src),
        &Endpoint::stream(&out),
        &TransferOptions::new(),
    )
    .unwrap();
    assert_eq!(st.bytes, 99_990);
    let mut want = b"prefix:".to_vec();
    want.extend_from_slice(&bytes(100_000, 4)[10..]);
    assert_eq!(std::fs::read(&out_path).unwrap(), want);
}

#[test]
fn a_pipe_stream_into_a_file_descriptor() {
    let (r, mut w) = std::io::pipe().unwrap();
    let data = bytes(1_000_003, 5);
    let feed = data.clone();
    let writer = std::thread::spawn(move || {
        for c in feed.chunks(7_777) {
            w.write_all(c).unwrap();
        }
    });
    let s = Stream::from_fd(OwnedFd::from(r)).unwrap();
    let mut out = tempfile::tempfile().unwrap();
    let st = between(
        &Endpoint::stream(&s),
        &Endpoint::fd(out.as_fd()).unwrap(),
        &TransferOptions::new(),
    )
    .unwrap();
    writer.join().unwrap();
    assert_eq!(st.bytes, data.len() as u64);
    let mut got = Vec::new();
    std::io::Seek::rewind(&mut out).unwrap();
    out.read_to_end(&mut got).unwrap();
    assert_eq!(got, data);
}

#[test]
fn a_full_device_behind_a_stream_sink_counts_nothing_as_moved() {
    let dev = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Stream::from_fd(OwnedFd::from(dev)).unwrap();
    let e = between(
        &Endpoint::memory(Buf::from(bytes(300_000, 6))),
        &Endpoint::stream(&out),
        &TransferOptions::new(),
    )
    .unwrap_err();
    assert_eq!(e.side(), Side::Write);
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
    assert_eq!(e.bytes(), 0, "nothing reached /dev/full");
    // The stream drops what it could not write (as stdio does) and closes.
    out.discard_unwritten();
    drop(out);
}

#[test]
fn a_file_shrinking_under_a_mapped_stream_source_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let data = bytes(8 << 20, 7);
    let p = write_file(dir.path(), "in", &data);
    let s = Stream::open(&p, &OpenOptions::read_only().backend(Backend::Mapped)).unwrap();
    // Map the first window, then cut the file to 1 MiB.
    drop(s.salloc(4096).unwrap());
    s.seek_to(std::io::SeekFrom::Start(0)).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(1 << 20).unwrap();
    let dst = Endpoint::collect();
    match between(&Endpoint::stream(&s), &dst, &TransferOptions::new()) {
        Ok(st) => {
            // The stream saw the new length: only bytes that exist.
            assert!(st.bytes <= 1 << 20, "{}", st.bytes);
            let got = dst.into_collected().unwrap().copy_to_vec();
            assert_eq!(got[..], data[..got.len()]);
        }
        Err(e) => {
            assert_eq!(e.side(), Side::Read, "{e}");
            let got = dst.into_collected().unwrap().copy_to_vec();
            assert_eq!(got.len() as u64, e.bytes());
            assert_eq!(got[..], data[..got.len()]);
        }
    }
}

#[test]
fn one_stream_on_both_ends_is_refused() {
    let s = Stream::from_bytes(b"loop".to_vec());
    let e = between(
        &Endpoint::stream(&s),
        &Endpoint::stream(&s),
        &TransferOptions::new(),
    )
    .unwrap_err();
    assert_eq!(e.io_error().kind(), std::io::ErrorKind::InvalidInput);
}

#[test]
fn a_shared_stream_through_its_guard() {
    let shared = ferry::SharedStream::new(Stream::from_bytes(bytes(50_000, 8)));
    let g = shared.lock();
    let dst = Endpoint::collect();
    let st = between(&Endpoint::stream(&g), &dst, &TransferOptions::new()).unwrap();
    drop(g);
    assert_eq!(st.bytes, 50_000);
    assert_eq!(dst.into_collected().unwrap(), bytes(50_000, 8)[..]);
}

/// Where the input comes from.
#[derive(Debug, Clone, Copy)]
enum From {
    MemoryStream,
    MappedStream,
    BufferedStream,
    PipeStream,
    File,
    Memory,
}

/// Where it goes.
#[derive(Debug, Clone, Copy)]
enum To {
    MemoryStream,
    FileStream,
    FileFd,
    Collect,
}

fn run_case(
    data: &[u8],
    from: From,
    to: To,
    rec: Option<(bool, usize)>,
    pad: Option<u8>,
) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let inp = write_file(dir.path(), "in", data);
    let mut holder: Vec<Stream> = Vec::new();
    let file;
    let mut writer = None;
    match from {
        From::MemoryStream => holder.push(Stream::from_bytes(data.to_vec())),
        From::MappedStream => holder
            .push(Stream::open(&inp, &OpenOptions::read_only().backend(Backend::Mapped)).unwrap()),
        From::BufferedStream => holder.push(
            Stream::open(
                &inp,
                &OpenOptions::read_only()
                    .backend(Backend::Buffered)
                    .buffer_size(8192),
            )
            .unwrap(),
        ),
        From::PipeStream => {
            let (r, mut w) = std::io::pipe().unwrap();
            let feed = data.to_vec();
            writer = Some(std::thread::spawn(move || {
                for c in feed.chunks(3001) {
                    w.write_all(c).unwrap();
                }
            }));
            holder.push(Stream::from_fd(OwnedFd::from(r)).unwrap());
        }
        From::File | From::Memory => {}
    }
    file = std::fs::File::open(&inp).unwrap();
    let src = match from {
        From::File => Endpoint::fd(file.as_fd()).unwrap(),
        From::Memory => Endpoint::memory(Buf::from(data.to_vec())),
        _ => Endpoint::stream(&holder[0]),
    };
    let outp = dir.path().join("out");
    let out_file = std::fs::File::create(&outp).unwrap();
    let out_stream = match to {
        To::MemoryStream => Some(Stream::memory()),
        To::FileStream => Some(Stream::open(&outp, &OpenOptions::write_truncate()).unwrap()),
        _ => None,
    };
    let mut dst = match (to, &out_stream) {
        (To::Collect, _) => Endpoint::collect(),
        (To::FileFd, _) => Endpoint::fd(out_file.as_fd()).unwrap(),
        (_, Some(s)) => Endpoint::stream(s),
        _ => unreachable!(),
    };
    let mut opts = TransferOptions::new();
    let mut want = data.to_vec();
    if let Some((fixed, n)) = rec {
        let p = if fixed {
            ChannelParams::fixed(nz(n))
        } else {
            ChannelParams::variable(nz(n))
        };
        dst = dst.impose(p);
        if fixed {
            if let Some(b) = pad {
                opts = opts.pad_last(b);
                want = padded(data, n, Some(b));
            }
        }
    }
    let st = between(&src, &dst, &opts).map_err(|e| TestCaseError::fail(e.to_string()))?;
    if let Some(w) = writer {
        w.join().unwrap();
    }
    prop_assert_eq!(st.bytes, want.len() as u64);
    let got = match to {
        To::Collect => dst.into_collected().unwrap().copy_to_vec(),
        To::MemoryStream => {
            drop(dst);
            out_stream.unwrap().into_vec().unwrap()
        }
        To::FileStream => {
            drop(dst);
            out_stream.unwrap().close().unwrap();
            std::fs::read(&outp).unwrap()
        }
        To::FileFd => std::fs::read(&outp).unwrap(),
    };
    prop_assert_eq!(got, want);
    Ok(())
}

fn from_any() -> impl Strategy<Value = From> {
    prop_oneof![
        Just(From::MemoryStream),
        Just(From::MappedStream),
        Just(From::BufferedStream),
        Just(From::PipeStream),
        Just(From::File),
        Just(From::Memory),
    ]
}

fn to_any() -> impl Strategy<Value = To> {
    prop_oneof![
        Just(To::MemoryStream),
        Just(To::FileStream),
        Just(To::FileFd),
        Just(To::Collect),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Any stream source into any sink, any stream sink from any source,
    /// with or without a record size imposed: the output is the input
    /// (padded to whole records where asked), and bytes counts it.
    #[test]
    fn streams_move_every_byte(
        len in prop_oneof![0usize..20_000, 100_000usize..400_000],
        seed in any::<u8>(),
        from in from_any(),
        to in to_any(),
        rec in proptest::option::of((any::<bool>(), 1usize..70_000)),
        pad in proptest::option::of(any::<u8>()),
    ) {
        // A stream on one end at least.
        let to = match (from, to) {
            (From::File | From::Memory, To::FileFd | To::Collect) => To::FileStream,
            _ => to,
        };
        run_case(&bytes(len, seed), from, to, rec, pad)?;
    }
}
