//! Requests on descriptors that cannot seek (pipes): the
//! thread pool's workers, and the order requests take the stream's bytes.

use ferry::aio::{AsyncFile, Backend};
use ferry::Buf;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::time::Duration;

const LONG: Option<Duration> = Some(Duration::from_secs(5));

/// Four reads on four pipes nobody writes (sockets waiting for a peer:
/// the ordinary case of a network program) take the pool's four workers
/// (`threads.rs` WORKERS = 4, each blocked in `wait_ready`'s poll for
/// ever); a read of a regular file started after them never runs.
#[test]
fn idle_pipe_reads_starve_a_file_read_on_threads() {
    let mut keep = Vec::new();
    for _ in 0..4 {
        let (r, w) = std::io::pipe().unwrap();
        let f = AsyncFile::from_fd(OwnedFd::from(r), Backend::Threads).unwrap();
        let req = f.read(16).unwrap();
        keep.push((f, w, req));
    }
    std::thread::sleep(Duration::from_millis(100));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    std::fs::write(&p, vec![7u8; 4096]).unwrap();
    let f =
        AsyncFile::with_options(&p, std::fs::File::options().read(true), Backend::Threads).unwrap();
    let r = f.read_at(0, 4096).unwrap();
    let done = r.wait(LONG).unwrap();
    // Let the pipes' reads finish so nothing is left running.
    for (_, w, _) in &mut keep {
        w.write_all(&[0u8; 16]).unwrap();
    }
    assert!(
        done,
        "a 4 KiB read of a cached file did not run in 5 s: four idle pipe reads hold every worker"
    );
}

/// `AsyncFile::from_fd` says a pipe's requests "go in order at its own
/// position": request A started before request B gets the stream's first
/// bytes. Both backends run the two reads at once (the ring: two reads
/// polled on one pipe; threads: two workers), and a short read of A is
/// continued after B took the next bytes: A's 8 bytes are not the
/// stream's first 8.
#[test]
fn two_reads_on_a_pipe_take_the_bytes_in_order() {
    let mut bad = Vec::new();
    for b in [Backend::IoUring, Backend::Threads] {
        let (r, mut w) = std::io::pipe().unwrap();
        let f = AsyncFile::from_fd(OwnedFd::from(r), b).unwrap();
        let a = f.read(8).unwrap();
        let bq = f.read(8).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        for chunk in b"0123456789abcdef".chunks(4) {
            w.write_all(chunk).unwrap();
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(a.wait(LONG).unwrap() && bq.wait(LONG).unwrap());
        let (a, bq) = (a.into_inner(), bq.into_inner());
        if (&a[..], &bq[..]) != (&b"01234567"[..], &b"89abcdef"[..]) {
            bad.push(format!(
                "{b:?}: A got {:?}, B got {:?}",
                String::from_utf8_lossy(&a),
                String::from_utf8_lossy(&bq)
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "the two requests' bytes are interleaved: {bad:?}"
    );
}

/// The same for writes: two writes of 256 KiB on a pipe (more than it
/// holds) started in order must reach the reader in order, each whole.
#[test]
fn two_writes_on_a_pipe_land_in_order() {
    let mut bad = Vec::new();
    for b in [Backend::IoUring, Backend::Threads] {
        let (mut r, w) = std::io::pipe().unwrap();
        let f = AsyncFile::from_fd(OwnedFd::from(w), b).unwrap();
        let n = 256 << 10;
        let a = f.write(Buf::from(vec![b'A'; n])).unwrap();
        let c = f.write(Buf::from(vec![b'B'; n])).unwrap();
        let reader = std::thread::spawn(move || {
            let mut got = vec![0u8; 2 * n];
            std::io::Read::read_exact(&mut r, &mut got).unwrap();
            got
        });
        assert!(a.wait(LONG).unwrap() && c.wait(LONG).unwrap());
        let got = reader.join().unwrap();
        let first_b = got.iter().position(|&x| x == b'B').unwrap();
        let last_a = got.iter().rposition(|&x| x == b'A').unwrap();
        if !(first_b == n && last_a == n - 1) {
            bad.push(format!("{b:?}: first B at {first_b}, last A at {last_a}"));
        }
    }
    assert!(bad.is_empty(), "writes interleaved: {bad:?}");
}
