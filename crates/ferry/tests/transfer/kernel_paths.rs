//! The transfer engine on real files, pipes and sockets: every path, the
//! two-thread split, inputs that end early, full and closed outputs, and
//! random sizes and chunkings.

use crate::support::drain;
use crate::support::offset;
use ferry::transfer::{self, FdKind, Method, Side, TransferOptions};
use proptest::prelude::*;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::thread::JoinHandle;

/// Bytes where no two nearby offsets hold the same pattern, so a piece
/// moved to the wrong place shows.
fn pattern(n: usize, seed: u64) -> Vec<u8> {
    (0..n as u64)
        .map(|i| (i.wrapping_mul(2654435761).wrapping_add(seed) >> 7) as u8)
        .collect()
}

/// A file in `dir` holding `data`, open for reading at offset 0.
fn input_file(dir: &std::path::Path, name: &str, data: &[u8]) -> File {
    let p = dir.join(name);
    std::fs::write(&p, data).expect("write the input");
    File::open(&p).expect("open the input")
}

/// A new file in `dir`, open for writing only (as a shell's `>` opens it).
fn output_file(dir: &std::path::Path, name: &str) -> (File, std::path::PathBuf) {
    let p = dir.join(name);
    (File::create(&p).expect("create the output"), p)
}

/// A thread writing `data` into `w` in pieces of the given sizes (the
/// last repeated), then closing it.
fn feed(mut w: impl Write + Send + 'static, data: Vec<u8>, pieces: Vec<usize>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut at = 0;
        let mut k = 0;
        while at < data.len() {
            let n = pieces[k.min(pieces.len() - 1)].max(1).min(data.len() - at);
            w.write_all(&data[at..at + n]).expect("feed the pipe");
            at += n;
            k += 1;
        }
    })
}

#[test]
fn file_to_file_by_copy_file_range_from_the_offsets() {
    let d = tempfile::tempdir().unwrap();
    let data = pattern(1_000_003, 1);
    let mut input = input_file(d.path(), "in", &data);
    input.seek(SeekFrom::Start(1000)).unwrap();
    let (mut out, path) = output_file(d.path(), "out");
    out.write_all(b"head:").unwrap();
    let st = transfer::copy(&input, &out, &TransferOptions::new()).expect("copy");
    assert_eq!(st.bytes, data.len() as u64 - 1000);
    assert_eq!(st.bytes_by(Method::CopyFileRange), st.bytes);
    assert_eq!(st.finished_by(), Some(Method::CopyFileRange));
    assert_eq!(st.user_copied(), 0);
    assert!(st.calls.copy_file_range >= 2, "{st:?}");
    assert_eq!(offset(&mut input), data.len() as u64);
    assert_eq!(offset(&mut out), 5 + data.len() as u64 - 1000);
    let back = std::fs::read(path).unwrap();
    assert!(back[..5] == *b"head:" && back[5..] == data[1000..]);
}

#[test]
fn file_to_pipe_by_splice() {
    let d = tempfile::tempdir().unwrap();
    let data = pattern(3 << 20, 2);
    let input = input_file(d.path(), "in", &data);
    let (r, w) = std::io::pipe().unwrap();
    let reader = drain(r);
    let st = transfer::copy(&input, &w, &TransferOptions::new()).expect("copy");
    drop(w);
    assert!(reader.join().unwrap() == data);
    assert_eq!(st.bytes, data.len() as u64);
    assert_eq!(st.bytes_by(Method::Splice), st.bytes);
    assert_eq!(st.finished_by(), Some(Method::Splice));
    assert_eq!((st.user_copied(), st.calls.read, st.calls.write), (0, 0, 0));
}

#[test]
fn pipe_to_pipe_by_splice_and_the_kinds_save_the_fstats() {
    let data = pattern(700_001, 3);
    let mut seen = Vec::new();
    for kinds in [false, true] {
        let (in_r, in_w) = std::io::pipe().unwrap();
        let (out_r, out_w) = std::io::pipe().unwrap();
        let writer = feed(in_w, data.clone(), vec![4096, 100_000, 1]);
        let reader = drain(out_r);
        let mut opts = TransferOptions::new();
        if kinds {
            opts = opts.with_kinds(FdKind::Pipe, FdKind::Pipe);
        }
        let st = transfer::copy(&in_r, &out_w, &opts).expect("copy");
        writer.join().unwrap();
        drop(out_w);
        assert!(reader.join().unwrap() == data);
        assert_eq!(st.bytes_by(Method::Splice), data.len() as u64);
        assert_eq!(st.user_copied(), 0);
        seen.push(st.calls.other);
    }
    // Told the kinds, the transfer makes no fstat of its own.
    assert_eq!(seen[0], seen[1] + 2, "other calls without and with kinds");
}

#[test]
fn pipe_to_file_every_byte_in_order() {
    let d = tempfile::tempdir().unwrap();
    let data = pattern(555_555, 4);
    let (r, w) = std::io::pipe().unwrap();
    let writer = feed(w, data.clone(), vec![1, 2, 3, 65536, 7]);
    let (mut out, path) = output_file(d.path(), "out");
    let st = transfer::copy(&r, &out, &TransferOptions::new()).expect("copy");
    writer.join().unwrap();
    assert_eq!(st.bytes, data.len() as u64);
    assert!(st.finished_by().is_some());
    assert_eq!(offset(&mut out), data.len() as u64);
    assert!(std::fs::read(path).unwrap() == data);
}

#[test]
fn file_to_socket_by_sendfile() {
    let d = tempfile::tempdir().unwrap();
    let data = pattern(2 << 20, 5);
    let input = input_file(d.path(), "in", &data);
    let (a, b) = UnixStream::pair().unwrap();
    let reader = drain(b);
    let st = transfer::copy(&input, &a, &TransferOptions::new()).expect("copy");
    a.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(reader.join().unwrap() == data);
    assert_eq!(st.bytes_by(Method::Sendfile), data.len() as u64);
    assert_eq!(st.finished_by(), Some(Method::Sendfile));
    assert_eq!(st.user_copied(), 0);
}

/// A socket into a file goes through a private pipe by splice (see
/// tests/transfer/splice.rs for the fallbacks), in whatever pieces the
/// writer sends.
#[test]
fn socket_to_file_by_splice() {
    let d = tempfile::tempdir().unwrap();
    let data = pattern(400_000, 6);
    let (a, b) = UnixStream::pair().unwrap();
    let writer = feed(a, data.clone(), vec![10_000, 3]);
    let (out, path) = output_file(d.path(), "out");
    let st = transfer::copy(&b, &out, &TransferOptions::new()).expect("copy");
    writer.join().unwrap();
    assert_eq!(st.bytes_by(Method::Splice), data.len() as u64);
    assert_eq!(st.user_copied(), 0);
    assert!(std::fs::read(path).unwrap() == data);
}

/// The two-thread split, with the threshold lowered so that a file of a
/// few pieces crosses it: on /tmp (ext4 here: copy_file_range beside the
/// mapped fill) and /dev/shm (two copy_file_range halves), into an output
/// open for writing only (the mapping reopens it) from an offset.
#[test]
fn a_large_file_is_copied_on_two_threads() {
    let mut dirs = vec![tempfile::tempdir().unwrap()];
    if let Ok(d) = tempfile::tempdir_in("/dev/shm") {
        dirs.push(d);
    }
    for d in dirs {
        let data = pattern((21 << 20) + 4321, 7);
        let mut input = input_file(d.path(), "in", &data);
        input.seek(SeekFrom::Start(99)).unwrap();
        let (mut out, path) = output_file(d.path(), "out");
        let heard = std::sync::atomic::AtomicU64::new(0);
        let progress = |n: u64| {
            heard.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        };
        let opts = TransferOptions::new()
            .parallel_min(1 << 20)
            .progress(&progress);
        let st = transfer::copy(&input, &out, &opts).expect("copy");
        let want = data.len() as u64 - 99;
        assert_eq!(st.bytes, want, "{:?}", d.path());
        assert_eq!(heard.into_inner(), want);
        let by: u64 = Method::ALL.iter().map(|&m| st.bytes_by(m)).sum();
        assert_eq!(by, want);
        assert_eq!(st.user_copied(), 0);
        assert_eq!(offset(&mut input), data.len() as u64);
        assert_eq!(offset(&mut out), want);
        let back = std::fs::read(&path).unwrap();
        assert!(back == data[99..], "{:?}", d.path());
    }
}

#[test]
fn a_range_past_the_input_s_end_counts_what_there_was() {
    let d = tempfile::tempdir().unwrap();
    let data = pattern(3 << 20, 8);
    let input = input_file(d.path(), "in", &data);
    for split in [1 << 20, u64::MAX] {
        let (out, path) = output_file(d.path(), &format!("out-{split}"));
        let opts = TransferOptions::new().parallel_min(split);
        // The range says 10 MiB: the file has 3.
        let st = transfer::copy_range(&input, &out, 5..(10 << 20), 0, &opts).expect("copy");
        assert_eq!(st.bytes, data.len() as u64 - 5);
        let back = std::fs::read(&path).unwrap();
        assert!(back[..data.len() - 5] == data[5..]);
    }
}

/// A file cut short by another thread while it is copied: whenever the cut
/// lands, the output is a prefix of the input with no gap, its length is
/// the bytes counted, and both offsets stand there.
#[test]
fn a_source_that_shrinks_under_the_copy_leaves_a_prefix() {
    let d = tempfile::tempdir().unwrap();
    let data = pattern(24 << 20, 9);
    for delay_us in [0u64, 200, 2000, 20_000] {
        let mut input = input_file(d.path(), "in", &data);
        let (mut out, path) = output_file(d.path(), &format!("out-{delay_us}"));
        let cutter = File::options()
            .write(true)
            .open(d.path().join("in"))
            .unwrap();
        let cut = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_micros(delay_us));
            cutter.set_len(5 << 20).unwrap();
        });
        let opts = TransferOptions::new().parallel_min(1 << 20);
        let st = transfer::copy(&input, &out, &opts).expect("copy");
        cut.join().unwrap();
        let back = std::fs::read(&path).unwrap();
        assert_eq!(st.bytes, back.len() as u64, "delay {delay_us}");
        assert!(back.len() >= 5 << 20, "delay {delay_us}: {}", back.len());
        assert!(back == data[..back.len()], "delay {delay_us}: not a prefix");
        assert_eq!(offset(&mut out), back.len() as u64);
        assert_eq!(offset(&mut input), back.len() as u64);
    }
}

#[test]
fn a_full_disk_is_a_write_error_with_nothing_claimed() {
    let d = tempfile::tempdir().unwrap();
    let data = pattern(300_000, 10);
    let full = File::options().write(true).open("/dev/full").unwrap();
    // From a file (sendfile refused, then read/write) and from a pipe.
    let input = input_file(d.path(), "in", &data);
    let e = transfer::copy(&input, &full, &TransferOptions::new()).unwrap_err();
    assert_eq!(e.side(), Side::Write);
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
    assert_eq!(e.bytes(), 0);
    let (r, w) = std::io::pipe().unwrap();
    let writer = feed(w, data.clone(), vec![1000]);
    let e = transfer::copy(&r, &full, &TransferOptions::new()).unwrap_err();
    drop(r);
    let _ = writer.join(); // the feeder sees EPIPE or finishes
    assert_eq!((e.side(), e.bytes()), (Side::Write, 0));
    let io: std::io::Error = e.into();
    assert_eq!(io.raw_os_error(), Some(libc::ENOSPC));
}

#[test]
fn a_closed_reader_is_epipe_on_the_write_side() {
    let d = tempfile::tempdir().unwrap();
    let data = pattern(200_000, 11);
    let input = input_file(d.path(), "in", &data);
    for opts in [
        TransferOptions::new(),
        TransferOptions::new().leave_signals(),
    ] {
        let (r, w) = std::io::pipe().unwrap();
        drop(r);
        let mut input = &input;
        input.seek(SeekFrom::Start(0)).unwrap();
        let e = transfer::copy(input, &w, &opts).unwrap_err();
        assert_eq!(e.side(), Side::Write, "{opts:?}");
        assert_eq!(e.raw_os_error(), Some(libc::EPIPE));
        assert_eq!(e.bytes(), 0);
        assert!(std::error::Error::source(&e).is_some());
        assert!(e.to_string().contains("writing"), "{e}");
    }
    // From a pipe too (splice from pipe to pipe).
    let (in_r, in_w) = std::io::pipe().unwrap();
    let writer = feed(in_w, data, vec![5000]);
    let (r, w) = std::io::pipe().unwrap();
    drop(r);
    let e = transfer::copy(&in_r, &w, &TransferOptions::new()).unwrap_err();
    drop(in_r);
    let _ = writer.join();
    assert_eq!(
        (e.side(), e.raw_os_error()),
        (Side::Write, Some(libc::EPIPE))
    );
}

#[test]
fn a_bad_descriptor_is_ebadf_on_its_side() {
    let input = tempfile::tempfile().unwrap();
    let read_only = tempfile::tempfile().unwrap();
    let read_only = File::open(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&read_only)
    ))
    .unwrap();
    let mut w = &input;
    w.write_all(b"some bytes").unwrap();
    w.seek(SeekFrom::Start(0)).unwrap();
    // An output open only for reading: every path refuses it.
    let e = transfer::copy(&input, &read_only, &TransferOptions::new()).unwrap_err();
    assert_eq!(
        (e.side(), e.raw_os_error()),
        (Side::Write, Some(libc::EBADF))
    );
}

/// Reads of `data` from a file (from `skip`) or a pipe fed in `pieces`,
/// into a file or a drained pipe: the output is the input.
fn round_trip(data: &[u8], skip: usize, pieces: Vec<usize>, from_pipe: bool, to_pipe: bool) {
    let d = tempfile::tempdir().unwrap();
    let opts = TransferOptions::new().parallel_min(1 << 20);
    let want = if from_pipe { data } else { &data[skip..] };
    let (st, back) = {
        let (writer, input): (Option<JoinHandle<()>>, Box<dyn AsFd>) = if from_pipe {
            let (r, w) = std::io::pipe().unwrap();
            (Some(feed(w, data.to_vec(), pieces)), Box::new(r))
        } else {
            let mut f = input_file(d.path(), "in", data);
            f.seek(SeekFrom::Start(skip as u64)).unwrap();
            (None, Box::new(f))
        };
        let r = if to_pipe {
            let (r, w) = std::io::pipe().unwrap();
            let reader = drain(r);
            let st = transfer::copy(input.as_fd(), &w, &opts).expect("copy");
            drop(w);
            (st, reader.join().unwrap())
        } else {
            let (out, path) = output_file(d.path(), "out");
            let st = transfer::copy(input.as_fd(), &out, &opts).expect("copy");
            (st, std::fs::read(path).unwrap())
        };
        if let Some(w) = writer {
            w.join().unwrap();
        }
        r
    };
    assert_eq!(st.bytes, want.len() as u64);
    assert!(
        back == want,
        "{} bytes back, {} wanted",
        back.len(),
        want.len()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn output_bytes_are_input_bytes(
        len in prop_oneof![0usize..5000, 5000usize..600_000, Just(3 << 20)],
        skip in 0usize..5000,
        pieces in proptest::collection::vec(1usize..200_000, 1..6),
        from_pipe in any::<bool>(),
        to_pipe in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let data = pattern(len, seed);
        round_trip(&data, skip.min(len), pieces, from_pipe, to_pipe);
    }
}

/// An output offset past the largest file offset, near u64::MAX: the
/// two-thread split computed the second half's output offset before any
/// byte moved, and it wrapped past u64::MAX to the start of the file (a
/// debug build panicked on the overflow). Split or not, the copy fails on
/// the write side, nothing counted, and the output is untouched.
#[test]
fn an_output_offset_past_the_largest_fails_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let data = pattern(64 << 10, 11);
    let input = input_file(d.path(), "in", &data);
    for out_at in [u64::MAX, u64::MAX - 1000, 1 << 63, (1 << 63) + 5] {
        for split in [1, u64::MAX] {
            let (out, path) = output_file(d.path(), "out");
            std::fs::write(&path, b"keep").unwrap();
            let opts = TransferOptions::new().parallel_min(split);
            let e = transfer::copy_range(&input, &out, 0..data.len() as u64, out_at, &opts)
                .expect_err("no file offset there");
            assert_eq!(e.side(), Side::Write, "{out_at} split {split}: {e}");
            assert_eq!(e.bytes(), 0, "{out_at} split {split}");
            assert_eq!(
                std::fs::read(&path).unwrap(),
                b"keep",
                "{out_at} split {split}"
            );
        }
    }
}

/// Overlapping ranges of one file are refused (InvalidInput) with the file
/// as it was, as copy_file_range(2) refuses them: the pread/pwrite fallback
/// it fell to copies forward a piece at a time and read back pieces it
/// had already overwritten, reporting success. Ranges of one file that do
/// not overlap are copied.
#[test]
fn overlapping_ranges_of_one_file_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let data = pattern(3 << 20, 12);
    let p = d.path().join("f");
    std::fs::write(&p, &data).unwrap();
    let rw = File::options().read(true).write(true).open(&p).unwrap();
    let ro = File::open(&p).unwrap();
    for split in [1 << 20, u64::MAX] {
        let opts = TransferOptions::new().parallel_min(split);
        let cases: [(std::ops::Range<u64>, u64); 4] = [
            (0..(2 << 20), 1 << 20),
            ((1 << 20)..(3 << 20), 0),
            (0..10, 5),
            (7..8, 7),
        ];
        for (range, at) in cases {
            for input in [&ro, &rw] {
                let e = transfer::copy_range(input, &rw, range.clone(), at, &opts)
                    .expect_err("overlapping ranges");
                assert_eq!(
                    e.io_error().kind(),
                    std::io::ErrorKind::InvalidInput,
                    "{range:?} to {at}: {e}"
                );
                assert_eq!(e.bytes(), 0);
                assert!(
                    std::fs::read(&p).unwrap() == data,
                    "{range:?} to {at}: file changed"
                );
            }
        }
    }
    // Apart: copied, the rest of the file as it was.
    let st = transfer::copy_range(&ro, &rw, 0..(1 << 20), 2 << 20, &TransferOptions::new())
        .expect("ranges apart");
    assert_eq!(st.bytes, 1 << 20);
    let back = std::fs::read(&p).unwrap();
    assert!(back[..2 << 20] == data[..2 << 20] && back[2 << 20..] == data[..1 << 20]);
}
