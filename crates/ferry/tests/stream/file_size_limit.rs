//! Writing past RLIMIT_FSIZE: EFBIG naming the file, no SIGXFSZ death, and
//! every byte reported written is in the file. The test runs in a child
//! process of the test binary: the limit applies to the whole process.

use ferry::stream::os_error;
use ferry::{OpenOptions, Stream};
use std::io::Write;

use crate::support;

/// Run in a child process of this test binary: the file-size limit is
/// the whole process's, and the test harness's own output (a file, where
/// a CI log is one) must not meet it.
#[test]
fn file_size_limit_mid_write() {
    if support::in_child(&test_name!(file_size_limit_mid_write)) {
        return;
    }
    limited();
}

fn limited() {
    const LIMIT: u64 = 100_000;
    // SAFETY: default disposition, as a C program would have it.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_DFL) };
    support::limit_file_size(LIMIT);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big");

    // Through regions: the error comes at flush/close.
    let s = Stream::open(&p, &OpenOptions::write_truncate().buffer_size(16 << 10)).unwrap();
    let mut failed = None;
    for i in 0..20 {
        match s.salloc_mut(10_000) {
            Ok(mut r) => r.fill(i as u8),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    let e = match failed {
        Some(e) => e,
        None => s.close().unwrap_err(),
    };
    assert_eq!(os_error(&e), Some(libc::EFBIG), "{e}");
    assert!(e.to_string().contains(p.to_str().unwrap()), "{e}");
    let got = std::fs::read(&p).unwrap();
    assert_eq!(got.len() as u64, LIMIT);
    for (i, chunk) in got.chunks(10_000).enumerate() {
        assert!(chunk.iter().all(|&b| b == i as u8), "chunk {i} damaged");
    }

    // Through std::io::Write with one big write: the bytes that fit are
    // reported, then the error.
    let s = Stream::open(&p, &OpenOptions::write_truncate()).unwrap();
    let mut w = &s;
    let n = w.write(&vec![7u8; 300_000]).unwrap();
    assert_eq!(n as u64, LIMIT, "the bytes that fit are reported written");
    let e = w.write(&[7u8; 10]).unwrap_err();
    assert_eq!(os_error(&e), Some(libc::EFBIG), "{e}");
    drop(s);
    assert_eq!(std::fs::metadata(&p).unwrap().len(), LIMIT);
}
