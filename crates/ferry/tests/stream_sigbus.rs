//! A mapped file that another process truncates must not crash the reader:
//! the stream reports `UnexpectedEof` naming the file. A SIGBUS that is not
//! in ferry's mappings still ends the process as it would without ferry.

use ferry::stream::Backend;
use ferry::{OpenOptions, Stream};
use std::io::ErrorKind;
use std::process::Command;

fn mapped(path: &std::path::Path) -> Stream {
    Stream::open(path, &OpenOptions::read_only().backend(Backend::Mapped)).unwrap()
}

#[test]
fn truncation_under_a_mapped_reader_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("shrinks");
    std::fs::write(&p, vec![0x5Au8; 8 << 20]).unwrap();
    let s = mapped(&p);
    let head = s.salloc(1 << 20).unwrap();
    assert!(head.iter().all(|&b| b == 0x5A));
    let tail = s.salloc(4 << 20).unwrap();
    // Another process truncates the file.
    let st = Command::new("truncate")
        .args(["-s", "4096"])
        .arg(&p)
        .status()
        .unwrap();
    assert!(st.success());
    // Touching pages past the new end would raise SIGBUS: we survive, and
    // the lost bytes read as zeros.
    let sum: u64 = tail.iter().map(|&b| b as u64).sum();
    assert_eq!(sum, 0, "lost pages should read as zeros");
    let e = tail.free().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
    assert!(e.to_string().contains("shrank"), "{e}");
    assert!(e.to_string().contains(p.to_str().unwrap()), "{e}");
    // The next call reports it too.
    let e = s.salloc(10).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
    drop(head);
    // Afterwards the stream sees the file as it now is: at offset 5 MiB,
    // past the new end.
    assert!(s.salloc(10).unwrap().is_empty());
}

#[test]
fn buf_from_a_shrunk_mapping_says_it_is_not_intact() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    std::fs::write(&p, vec![1u8; 1 << 20]).unwrap();
    let s = mapped(&p);
    let b = s.salloc(1 << 20).unwrap().into_buf();
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

/// Runs this test binary's `child_entry` test in a child process with the
/// given mode; returns its exit status.
fn child(mode: &str, path: &std::path::Path) -> std::process::ExitStatus {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_entry",
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
        .map(|i| ferry::Buf::map_file(&f, 0..4096).unwrap_or_else(|e| panic!("map {i}: {e}")))
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
