//! `transfer::between` on real descriptors: the kernel's paths where the
//! endpoints allow, the overlay where a record size is imposed, a file
//! range is asked or the source is memory; bytes, block counts, copies,
//! padding and errors checked against what was sent.

use crate::support::{nz, random_bytes, temp_file_with};
use ferry::transfer::endpoint::Endpoint;
use ferry::transfer::overlay::{BlockType, Case, ChannelParams};
use ferry::transfer::{between, Method, Side, TransferOptions};
use ferry::{Aggregate, Buf};
use proptest::prelude::*;
use std::io::{Read, Seek};
use std::os::fd::AsFd;

/// A pipe whose reader collects everything on a thread.
fn collecting_pipe() -> (std::io::PipeWriter, std::thread::JoinHandle<Vec<u8>>) {
    let (mut r, w) = std::io::pipe().unwrap();
    let t = std::thread::spawn(move || {
        let mut v = Vec::new();
        r.read_to_end(&mut v).unwrap();
        v
    });
    (w, t)
}

#[test]
fn descriptors_on_their_own_parameters_take_the_kernel_path() {
    let bytes = random_bytes(300_000, 1);
    let input = temp_file_with(&bytes);
    let (w, reader) = collecting_pipe();
    let st = between(
        &Endpoint::fd(input.as_fd()).unwrap(),
        &Endpoint::fd(w.as_fd()).unwrap(),
        &TransferOptions::new(),
    )
    .unwrap();
    drop(w);
    assert_eq!(reader.join().unwrap(), bytes);
    assert_eq!(st.bytes, 300_000);
    assert_eq!(st.bytes_by(Method::Splice), 300_000);
    assert_eq!(st.user_copied(), 0);
    assert!(st.case.is_some() && st.overlay.is_none(), "{st:?}");
}

#[test]
fn fixed_records_into_a_pipe_by_reference() {
    // A file (1 MiB blocks) into 512-byte records a sink cannot gather:
    // 1 MiB is a multiple of 512, so no record straddles two reads.
    let bytes = random_bytes(3 << 20 | 100, 2);
    let input = temp_file_with(&bytes);
    let (w, reader) = collecting_pipe();
    let sink = Endpoint::fd(w.as_fd())
        .unwrap()
        .impose(ChannelParams::fixed(nz(512)).gather(false));
    let st = between(
        &Endpoint::fd(input.as_fd()).unwrap(),
        &sink,
        &TransferOptions::new(),
    )
    .unwrap();
    drop(w);
    assert_eq!(reader.join().unwrap(), bytes);
    let ov = st.overlay.unwrap();
    assert_eq!(st.case, Some(Case::Aggregate)); // variable file into fixed records
    assert_eq!(ov.blocks_out, (bytes.len() as u64).div_ceil(512));
    assert_eq!(ov.bytes_copied, 0);
    assert_eq!(st.bytes, bytes.len() as u64);
    assert!(st.calls.write >= ov.blocks_out);
}

#[test]
fn memory_into_padded_records_of_a_file() {
    // Pieces of odd sizes: records straddle them; the sink cannot gather,
    // so exactly the straddling records are copied.
    let pieces: Vec<Buf> = [1000, 3000, 5000, 1]
        .iter()
        .enumerate()
        .map(|(i, &l)| Buf::from(random_bytes(l, i as u64 + 10)))
        .collect();
    let all: Vec<u8> = pieces.iter().flat_map(|b| b.iter().copied()).collect();
    let out = tempfile::tempfile().unwrap();
    let src = Endpoint::memory(Aggregate::from(pieces));
    let dst = Endpoint::fd(out.as_fd())
        .unwrap()
        .impose(ChannelParams::fixed(nz(4096)).gather(false));
    let st = between(&src, &dst, &TransferOptions::new().pad_last(b'#')).unwrap();
    let mut got = Vec::new();
    (&out).rewind().unwrap();
    (&out).read_to_end(&mut got).unwrap();
    let mut want = all.clone();
    want.resize(12288, b'#');
    assert_eq!(got, want);
    let ov = st.overlay.unwrap();
    assert_eq!((ov.blocks_out, ov.padding), (3, 12288 - 9001));
    // Pieces end at 1000, 4000, 9000 and 9001: record [0,4096) straddles
    // two ends, [4096,8192) lies in the 5000-byte piece (a reference), and
    // the last holds two pieces and the padding: two records copied.
    assert_eq!(ov.bytes_copied, 8192);
    assert_eq!(st.bytes, 12288);
}

#[test]
fn a_file_range_into_a_socket_in_small_blocks() {
    let bytes = random_bytes(100_000, 3);
    let input = temp_file_with(&bytes);
    let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        b.read_to_end(&mut v).unwrap();
        v
    });
    let src = Endpoint::file_range(input.as_fd(), 12_345, Some(50_000)).unwrap();
    let dst = Endpoint::fd(a.as_fd())
        .unwrap()
        .impose(ChannelParams::variable(nz(1000)));
    // The progress callback hears of each write's bytes, adding up to all.
    let heard = std::sync::atomic::AtomicU64::new(0);
    let add = |k: u64| {
        heard.fetch_add(k, std::sync::atomic::Ordering::Relaxed);
    };
    let st = between(&src, &dst, &TransferOptions::new().progress(&add)).unwrap();
    assert_eq!(heard.into_inner(), 50_000);
    drop(a);
    assert_eq!(reader.join().unwrap(), &bytes[12_345..62_345]);
    assert_eq!(st.case, Some(Case::Split));
    assert_eq!(st.overlay.unwrap().blocks_out, 50);
    // The descriptor's own offset is not used or moved by a range.
    assert_eq!((&input).stream_position().unwrap(), 0);
}

#[test]
fn a_range_past_the_end_is_an_error_after_what_there_was() {
    let bytes = random_bytes(10_000, 4);
    let input = temp_file_with(&bytes);
    let (w, reader) = collecting_pipe();
    let src = Endpoint::file_range(input.as_fd(), 4_000, Some(20_000)).unwrap();
    let dst = Endpoint::fd(w.as_fd()).unwrap();
    let e = between(&src, &dst, &TransferOptions::new()).unwrap_err();
    drop(w);
    assert_eq!(reader.join().unwrap(), &bytes[4_000..]);
    assert_eq!(e.side(), Side::Read);
    assert_eq!(e.io_error().kind(), std::io::ErrorKind::UnexpectedEof);
    assert!(e.to_string().contains("offset 10000"), "{e}");
    assert_eq!(e.bytes(), 6_000);
}

#[test]
fn a_full_device_and_a_memory_sink_are_errors() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let src = Endpoint::memory(Buf::from(vec![1u8; 5000]));
    let dst = Endpoint::fd(full.as_fd())
        .unwrap()
        .impose(ChannelParams::variable(nz(4096)));
    let e = between(&src, &dst, &TransferOptions::new()).unwrap_err();
    assert_eq!(
        (e.side(), e.raw_os_error(), e.bytes()),
        (Side::Write, Some(libc::ENOSPC), 0)
    );
    let e = between(&src, &Endpoint::memory(Buf::new()), &TransferOptions::new()).unwrap_err();
    assert_eq!(e.side(), Side::Write);
    assert_eq!(e.io_error().kind(), std::io::ErrorKind::InvalidInput);
}

/// A non-blocking sink whose reader is slow: EAGAIN is waited out, nothing
/// is lost or repeated.
#[test]
fn a_non_blocking_sink_is_waited_for() {
    let bytes = random_bytes(2 << 20, 5);
    let (mut r, w) = std::io::pipe().unwrap();
    rustix::fs::fcntl_setfl(&w, rustix::fs::OFlags::NONBLOCK).unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let mut buf = [0u8; 7000];
        loop {
            std::thread::sleep(std::time::Duration::from_micros(200));
            match r.read(&mut buf).unwrap() {
                0 => return v,
                k => v.extend_from_slice(&buf[..k]),
            }
        }
    });
    let src = Endpoint::memory(Buf::from(bytes.clone()));
    let dst = Endpoint::fd(w.as_fd())
        .unwrap()
        .impose(ChannelParams::variable(nz(100_000)));
    let st = between(&src, &dst, &TransferOptions::new()).unwrap();
    drop(w);
    assert_eq!(reader.join().unwrap(), bytes);
    assert_eq!(st.bytes, bytes.len() as u64);
}

#[derive(Debug, Clone)]
struct Case_ {
    len: usize,
    from_memory: bool,
    input: Option<ChannelParams>,
    output: Option<ChannelParams>,
    pad: Option<u8>,
}

fn params() -> impl Strategy<Value = Option<ChannelParams>> {
    proptest::option::of(
        (any::<bool>(), 1usize..5000, any::<bool>()).prop_map(|(f, b, g)| {
            let p = if f {
                ChannelParams::fixed(nz(b))
            } else {
                ChannelParams::variable(nz(b))
            };
            p.gather(g)
        }),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any sizes, any imposed parameters on either side, from a file or
    /// from memory into a pipe: the bytes that arrive are the bytes sent
    /// (and the padding a fixed padded output adds), and the stats say so.
    #[test]
    fn whatever_the_parameters_the_bytes_arrive(c in (0usize..60_000, any::<bool>(), params(), params(), any::<Option<u8>>())
        .prop_map(|(len, from_memory, input, output, pad)| Case_ { len, from_memory, input, output, pad })) {
        let bytes = random_bytes(c.len, c.len as u64 + 7);
        let input = temp_file_with(&bytes);
        let (w, reader) = collecting_pipe();
        let mut src = if c.from_memory {
            Endpoint::memory(Buf::from(bytes.clone()))
        } else {
            Endpoint::fd(input.as_fd()).unwrap()
        };
        if let Some(p) = c.input {
            src = src.impose(p);
        }
        let mut dst = Endpoint::fd(w.as_fd()).unwrap();
        if let Some(p) = c.output {
            dst = dst.impose(p);
        }
        let mut opts = TransferOptions::new();
        if let Some(b) = c.pad {
            opts = opts.pad_last(b);
        }
        let st = between(&src, &dst, &opts).unwrap();
        drop(dst);
        drop(w);
        let got = reader.join().unwrap();
        let mut want = bytes.clone();
        if let (Some(p), Some(b)) = (c.output, c.pad) {
            if p.block == BlockType::Fixed && c.len % p.max.get() != 0 {
                want.resize(c.len.next_multiple_of(p.max.get()), b);
            }
        }
        prop_assert_eq!(got.len(), want.len());
        prop_assert!(got == want);
        prop_assert_eq!(st.bytes, want.len() as u64);
        if let Some(ov) = st.overlay {
            prop_assert_eq!(ov.bytes_out, want.len() as u64);
            if c.output.is_none_or(|p| p.gather) {
                prop_assert_eq!(ov.bytes_copied, 0);
            }
        }
    }
}

/// Offsets at the top of the range: an error, not an overflow.
#[test]
fn a_range_at_the_largest_offsets_is_an_error() {
    let input = temp_file_with(b"abc");
    let (w, reader) = collecting_pipe();
    for (off, len) in [
        (u64::MAX, Some(10)),
        (u64::MAX - 1, None),
        (i64::MAX as u64, Some(1)),
    ] {
        let src = Endpoint::file_range(input.as_fd(), off, len).unwrap();
        let r = between(
            &src,
            &Endpoint::fd(w.as_fd()).unwrap(),
            &TransferOptions::new(),
        );
        match r {
            // Past the end of a 3-byte file: nothing to read is the end
            // (no length) or an early end (a length).
            Ok(st) => assert!(len.is_none() && st.bytes == 0, "{off} {len:?}: {st:?}"),
            Err(e) => assert_eq!((e.side(), e.bytes()), (Side::Read, 0), "{off} {len:?}: {e}"),
        }
    }
    drop(w);
    assert!(reader.join().unwrap().is_empty());
}
