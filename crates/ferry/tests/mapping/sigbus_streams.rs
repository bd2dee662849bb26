//! A mapped file that another process truncates must not crash the reader
//! nor change what it lent (the lease's snapshot); an unchecked mapping
//! reads zeros where the pages went (the SIGBUS guard). A SIGBUS that is
//! not in ferry's mappings still ends the process as it would without
//! ferry.
//!
//! (A mapped stream reports `UnexpectedEof` if pages are lost anyway —
//! only when a lease break went unanswered for the whole
//! `/proc/sys/fs/lease-break-time` — which these tests do not wait for.)

use ferry::stream::Backend;
use ferry::{OpenOptions, Stream};
use std::process::Command;

fn mapped(path: &std::path::Path) -> Stream {
    Stream::open(path, &OpenOptions::read_only().backend(Backend::Mapped)).unwrap()
}

#[test]
fn truncation_under_a_mapped_reader_keeps_what_it_lent() {
    // A mapped stream holds a read lease: before the truncation goes
    // through, its windows become private snapshots, so nothing it lent
    // changes and nothing faults.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("shrinks");
    std::fs::write(&p, vec![0x5Au8; 8 << 20]).unwrap();
    let s = mapped(&p);
    assert!(s.is_mapped());
    let head = s.salloc(1 << 20).unwrap();
    assert!(head.iter().all(|&b| b == 0x5A));
    let tail = s.salloc(4 << 20).unwrap();
    // Another process truncates the file. GNU truncate opens with
    // O_NONBLOCK, which the lease turns away (EAGAIN) once, having started
    // the break: it tries again.
    let st = Command::new("sh")
        .args([
            "-c",
            "until truncate -s 4096 \"$1\" 2>/dev/null; do sleep 0.01; done",
            "sh",
        ])
        .arg(&p)
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(std::fs::metadata(&p).unwrap().len(), 4096);
    assert!(tail.iter().all(|&b| b == 0x5A), "the old bytes, no zeros");
    tail.free().unwrap();
    assert!(head.iter().all(|&b| b == 0x5A));
    drop(head);
    // Afterwards the stream sees the file as it now is: at offset 5 MiB,
    // past the new end.
    assert!(s.salloc(10).unwrap().is_empty());
}

#[test]
fn buf_from_a_shrunk_unchecked_mapping_says_it_is_not_intact() {
    // With no lease (`map_file_unchecked`) a shrinking file takes pages
    // from under a mapping: the SIGBUS guard puts zeros there instead.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    std::fs::write(&p, vec![1u8; 1 << 20]).unwrap();
    let f = std::fs::File::open(&p).unwrap();
    // SAFETY: the file is only shrunk, never written, while `b` lives.
    let b = unsafe { ferry::Buf::map_file_unchecked(&f, 0..1 << 20) }.unwrap();
    assert!(b.is_intact());
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(0)
        .unwrap();
    assert_eq!(b[b.len() - 1], 0);
    assert!(!b.is_intact());
}

/// A region of a stream mapped without a lease says when the file lost
/// pages under it: the bytes it shows there are the SIGBUS guard's zeros,
/// which a caller comparing or copying them must not take for the file's
/// (cmp reported them as differences). `Region::free` said so, but took
/// the region with it; `is_intact` keeps it, to use what was the file's.
#[test]
fn a_region_of_an_unleased_mapping_says_when_its_file_shrank() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("shrinks");
    std::fs::write(&p, vec![0x5Au8; 4 << 20]).unwrap();
    // SAFETY: the test only shrinks the file, which the guard covers.
    let opts = unsafe {
        OpenOptions::read_only()
            .backend(Backend::Mapped)
            .without_lease()
    };
    let s = Stream::open(&p, &opts).unwrap();
    assert!(s.is_mapped());
    let r = s.salloc(2 << 20).unwrap();
    assert!(r.is_intact());
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .and_then(|f| f.set_len(8192 + 100))
        .unwrap();
    assert_eq!(r[8192 + 99], 0x5A, "the file's byte, before its new end");
    assert!(r.is_intact(), "no page lost yet: none touched past the end");
    assert_eq!(r[(1 << 20) + 1], 0, "a lost page reads as zeros");
    assert!(!r.is_intact());
}

/// Runs this test binary's `child_entry` test in a child process with the
/// given mode; returns its exit status.
fn child(mode: &str, path: &std::path::Path) -> std::process::ExitStatus {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &test_name!(child_entry),
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("FERRY_SIGBUS_CHILD", mode)
        .env("FERRY_SIGBUS_PATH", path)
        .status()
        .unwrap()
}

#[test]
fn child_entry() {
    let Ok(mode) = std::env::var("FERRY_SIGBUS_CHILD") else {
        return; // only meaningful in the child
    };
    let p = std::path::PathBuf::from(std::env::var("FERRY_SIGBUS_PATH").unwrap());
    // Install ferry's handler by mapping something through ferry first.
    let s = mapped(&p);
    let _r = s.salloc(10).unwrap();
    if mode == "foreign" {
        // A mapping ferry knows nothing about: its SIGBUS must kill us.
        use std::os::fd::AsRawFd;
        let f = std::fs::File::open(&p).unwrap();
        let len = 1 << 20;
        // SAFETY: a fresh read-only mapping of a file we opened.
        let m = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        assert_ne!(m, libc::MAP_FAILED);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(0)
            .unwrap();
        // SAFETY: reading inside our mapping; the file is gone under it.
        let v = unsafe { std::ptr::read_volatile((m as *const u8).add(len / 2)) };
        println!("survived a foreign SIGBUS, read {v}");
        std::process::exit(0);
    }
}

#[test]
fn a_sigbus_outside_ferrys_mappings_keeps_the_default_behaviour() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("g");
    std::fs::write(&p, vec![2u8; 1 << 20]).unwrap();
    let st = child("foreign", &p);
    assert_eq!(
        st.signal(),
        Some(libc::SIGBUS),
        "child should die of SIGBUS: {st:?}"
    );
}

#[test]
fn more_mappings_than_the_old_table_held_are_all_guarded() {
    // The guard used to hold 8192 mappings; beyond that mapping failed.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("many");
    std::fs::write(&p, vec![3u8; 4096]).unwrap();
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&p)
        .unwrap();
    let bufs: Vec<ferry::Buf> = (0..10_000)
        .map(|i| {
            // SAFETY: the test itself shrinks the file under the mapping, to
            // exercise the SIGBUS guard (no lease: it is open for writing).
            unsafe { ferry::Buf::map_file_unchecked(&f, 0..4096) }
                .unwrap_or_else(|e| panic!("map {i}: {e}"))
        })
        .collect();
    assert!(bufs.iter().all(|b| b[4095] == 3 && b.is_intact()));
    f.set_len(0).unwrap();
    let last = bufs.last().unwrap();
    assert_eq!(last[4095], 0, "the lost page reads as zeros");
    assert!(!last.is_intact());
    let first = &bufs[0];
    assert_eq!(first[0], 0);
    assert!(!first.is_intact());
}
