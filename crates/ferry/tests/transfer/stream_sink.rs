//! `Endpoint::stream` as a sink: "bytes count as moved once they reached
//! the stream's file (what the stream still holds unwritten after a
//! failure does not count)" — also when the file refuses bytes while the
//! stream's *own* earlier bytes are still going out.
//!
//! The bug this caught: sink.rs `into_stream` counted
//! `accepted - (pending_after - pending_before)`, assuming the stream's
//! own earlier unwritten bytes all went out before the failure, so the
//! transfer was credited with bytes that were the stream's. The test runs
//! in a child process of the test binary: RLIMIT_FSIZE is the process's.

use ferry::transfer::endpoint::Endpoint;
use ferry::transfer::{between, TransferOptions};
use ferry::{Buf, OpenOptions, Stream};
use std::io::Write;

use crate::support;

/// A stream holding 10 000 bytes of its own ('S'), unwritten; a file
/// limit of 4096 bytes; a transfer of 50 000 bytes ('M') into it. The
/// file ends with 4096 'S' and no 'M': the error must say 0 bytes moved.
/// Run in a child process of this test binary: the file-size limit is
/// the whole process's, and the test harness's own output (a file, where
/// a CI log is one) must not meet it.
#[test]
fn a_failure_while_the_streams_own_bytes_go_out_counts_none_of_ours() {
    if support::in_child(&test_name!(
        a_failure_while_the_streams_own_bytes_go_out_counts_none_of_ours
    )) {
        return;
    }
    limited();
}

fn limited() {
    // SAFETY: this process (a child of the test binary) runs this single
    // test; EFBIG instead of the signal.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("out");
    let out = Stream::open(&p, &OpenOptions::write_truncate().buffer_size(1 << 20)).unwrap();
    (&out).write_all(&[b'S'; 10_000]).unwrap();
    assert_eq!(out.pending_write(), 10_000);
    support::limit_file_size(4096);
    let r = between(
        &Endpoint::memory(Buf::from(vec![b'M'; 50_000])),
        &Endpoint::stream(&out),
        &TransferOptions::new(),
    );
    let on_disk = std::fs::read(&p).unwrap();
    let ours = on_disk.iter().filter(|&&b| b == b'M').count();
    let e = r.expect_err("the file limit stops it");
    assert_eq!(
        e.bytes() as usize,
        ours,
        "{e}: the transfer says {} bytes reached the file; {} of its bytes are there (file: {} bytes)",
        e.bytes(),
        ours,
        on_disk.len()
    );
    out.discard_unwritten();
}
