//! Writing owned buffers past RLIMIT_FSIZE: `exchange::write_buf` and a
//! memory source through `transfer::between` fail with EFBIG, saying how
//! many bytes got out, instead of dying of SIGXFSZ. The test runs in a
//! child process of the test binary: the limit applies to the whole
//! process.

use ferry::exchange::{bytes_out, Exchange};
use ferry::stream::os_error;
use ferry::transfer::endpoint::Endpoint;
use ferry::transfer::{between, Side, TransferOptions};
use std::os::fd::AsFd;

use crate::support;

/// Run in a child process of this test binary: the file-size limit is
/// the whole process's, and the test harness's own output (a file, where
/// a CI log is one) must not meet it.
#[test]
fn file_size_limit_is_efbig_not_sigxfsz() {
    if support::in_child(&test_name!(file_size_limit_is_efbig_not_sigxfsz)) {
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

    // write_buf: the bytes up to the limit land, then EFBIG.
    let p = dir.path().join("exchange");
    let f = std::fs::File::create(&p).unwrap();
    let ex = Exchange::new(4 << 20).unwrap();
    let mut agg = ferry::Aggregate::new();
    for i in 0..3u8 {
        let mut b = ex.allocate(64 << 10).unwrap();
        b.fill(i + 1);
        agg.append_buf(b.freeze());
    }
    let e = ex.write_buf(&f, agg).unwrap_err();
    assert_eq!(os_error(&e), Some(libc::EFBIG), "{e}");
    assert_eq!(bytes_out(&e), Some(LIMIT), "{e}");
    let got = std::fs::read(&p).unwrap();
    assert_eq!(got.len() as u64, LIMIT);
    assert!(got[..64 << 10].iter().all(|&b| b == 1));
    assert!(got[64 << 10..].iter().all(|&b| b == 2));

    // between from memory into a file.
    let p = dir.path().join("between");
    let f = std::fs::File::create(&p).unwrap();
    let src = Endpoint::memory(ferry::Buf::from(vec![9u8; 300_000]));
    let e = between(
        &src,
        &Endpoint::fd(f.as_fd()).unwrap(),
        &TransferOptions::new(),
    )
    .unwrap_err();
    assert_eq!(e.side(), Side::Write);
    assert_eq!(e.raw_os_error(), Some(libc::EFBIG), "{e}");
    assert_eq!(e.bytes(), LIMIT);
    assert_eq!(std::fs::metadata(&p).unwrap().len(), LIMIT);
}
