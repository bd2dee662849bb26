//! The range copies' units: the two-thread split, short inputs, the
//! pread/pwrite fallback's errors. Whole transfers between real files,
//! pipes and sockets are in tests/transfer/kernel_paths.rs.

use super::range::copy_at;
use super::split::copy_split;
use super::*;
use std::io::Write;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, Ordering};

/// A split threshold that keeps the files of these tests small.
const SMALL_SPLIT: u64 = 1 << 20;

/// A file of `n` bytes where every 8-byte word holds its own offset, so
/// a piece copied to the wrong place cannot go unseen.
fn numbered(dir: &std::path::Path, n: usize) -> (std::fs::File, Vec<u8>) {
    let data: Vec<u8> = (0..n.div_ceil(8) as u64)
        .flat_map(|i| (i * 8).to_le_bytes())
        .take(n)
        .collect();
    let p = dir.join(format!("numbered-{n}"));
    std::fs::File::create(&p)
        .and_then(|mut f| f.write_all(&data))
        .expect("write the input");
    (std::fs::File::open(&p).expect("open the input"), data)
}

fn output(dir: &std::path::Path, name: &str) -> (std::fs::File, std::path::PathBuf) {
    let p = dir.join(name);
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&p)
        .expect("create the output");
    (f, p)
}

fn offset(f: &std::fs::File) -> u64 {
    crate::sys::transfer::tell(f.as_fd()).expect("lseek")
}

#[test]
fn two_halves_land_at_their_offsets() {
    // /tmp (ext4 here: copy_file_range beside a mapping) and /dev/shm
    // (tmpfs: two copy_file_range halves).
    halves_in(tempfile::tempdir().expect("tempdir"));
    if let Ok(d) = tempfile::tempdir_in("/dev/shm") {
        halves_in(d);
    }
}

fn halves_in(d: tempfile::TempDir) {
    // Several 8 MiB pieces and an odd tail.
    let n = (20 << 20) + 12_345;
    let (input, data) = numbered(d.path(), n);
    let (out, path) = output(d.path(), "out");
    let heard = AtomicU64::new(0);
    let progress = |k: u64| {
        heard.fetch_add(k, Ordering::Relaxed);
    };
    let opts = TransferOptions::new()
        .parallel_min(SMALL_SPLIT)
        .progress(&progress);
    let mut st = TransferStats::default();
    // From input offset 1000 to output offset 777.
    let got = copy_split(
        input.as_fd(),
        out.as_fd(),
        (1000, n as u64),
        777,
        &opts,
        &mut st,
    )
    .expect("copy");
    assert_eq!(got, n as u64 - 1000);
    assert_eq!(st.bytes, got);
    assert_eq!(heard.load(Ordering::Relaxed), got);
    // Both threads moved bytes, by whichever methods, and no more than all.
    let by: u64 = Method::ALL.iter().map(|&m| st.bytes_by(m)).sum();
    assert_eq!(by, got);
    assert!(st.calls.copy_file_range >= 1, "{st:?}");
    let back = std::fs::read(&path).expect("read the output");
    assert_eq!(back.len(), 777 + n - 1000);
    assert!(back[..777].iter().all(|&b| b == 0), "a hole before 777");
    assert!(back[777..] == data[1000..], "bytes moved");
    // Neither file offset moved.
    assert_eq!(offset(&input), 0);
    assert_eq!(offset(&out), 0);
}

#[test]
fn an_input_shorter_than_the_range_counts_only_what_has_no_gap() {
    let d = tempfile::tempdir().expect("tempdir");
    let n = (4 << 20) + 4096;
    let (input, data) = numbered(d.path(), n);
    let opts = TransferOptions::new().parallel_min(SMALL_SPLIT);
    // The second half finds the end part way: all counted.
    let (out, path) = output(d.path(), "second-short");
    let end = 2 * n as u64 - 2 * 4096;
    let mut st = TransferStats::default();
    let got = copy_split(input.as_fd(), out.as_fd(), (0, end), 0, &opts, &mut st).expect("copy");
    assert_eq!((got, st.bytes), (n as u64, n as u64));
    assert!(std::fs::read(&path).expect("read") == data);
    // The first half finds the end: only it counts (the caller cuts the
    // output there); here the second half had nothing to copy.
    let (out, path) = output(d.path(), "first-short");
    let mut st = TransferStats::default();
    let got = copy_split(
        input.as_fd(),
        out.as_fd(),
        (0, 4 * n as u64),
        0,
        &opts,
        &mut st,
    )
    .expect("copy");
    assert_eq!((got, st.bytes), (n as u64, n as u64));
    assert!(std::fs::read(&path).expect("read") == data);
}

#[test]
fn small_ranges_and_a_full_disk() {
    let d = tempfile::tempdir().expect("tempdir");
    let (input, data) = numbered(d.path(), 100_000);
    let (out, path) = output(d.path(), "small");
    let opts = TransferOptions::new();
    let mut st = TransferStats::default();
    let got = copy_at(input.as_fd(), out.as_fd(), (10, 100_000), 0, &opts, &mut st).expect("copy");
    assert_eq!(got, 99_990);
    assert!(std::fs::read(&path).expect("read") == data[10..]);
    // /dev/full: copy_file_range does not apply, pwrite says ENOSPC.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let mut st = TransferStats::default();
    match copy_at(input.as_fd(), full.as_fd(), (0, 100_000), 0, &opts, &mut st) {
        Err((Side::Write, e)) => assert_eq!(e.raw_os_error(), Some(libc::ENOSPC)),
        other => panic!("expected a write error, got {other:?}"),
    }
    assert_eq!(st.bytes, 0, "nothing arrived");
    assert!(st.calls.read >= 1 && st.calls.write >= 1, "{st:?}");
}

#[test]
fn a_failing_second_half_cuts_the_output_to_the_first() {
    // The output is /dev/full for the mapping-less halves: both fail at
    // once, nothing is counted and the error is the write's.
    let d = tempfile::tempdir().expect("tempdir");
    let (input, _) = numbered(d.path(), 3 << 20);
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let opts = TransferOptions::new().parallel_min(SMALL_SPLIT);
    let mut st = TransferStats::default();
    let r = copy_split(input.as_fd(), full.as_fd(), (0, 3 << 20), 0, &opts, &mut st);
    match r {
        Err((Side::Write, e)) => assert_eq!(e.raw_os_error(), Some(libc::ENOSPC)),
        other => panic!("expected a write error, got {other:?}"),
    }
    assert_eq!(st.bytes, 0);
}
