//! The safe file mappings under writers: `Buf::map_file`, `MappedFile` and
//! the mapped stream hold a read lease, and a writer (another process, or
//! a thread of this one) only gets to change the file after every live
//! mapping became a private snapshot — so a `Buf` keeps its bytes and its
//! `ContentId` keeps meaning them. Real files, real processes.

use ferry::{Buf, MappedFile, OpenOptions, Stream};
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Command;

use crate::support::child_opens_read_only_with_o_trunc;
use crate::support::file_with;

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn sh(script: &str, path: &Path) {
    let st = Command::new("sh")
        .args(["-c", script, "sh"])
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success(), "{script}: {st:?}");
}

/// Another process overwrites `len` bytes at `at` with `c` (no truncation).
fn child_overwrites(path: &Path, at: usize, len: usize, c: char) {
    sh(
        &format!(
            "head -c {len} /dev/zero | tr '\\0' '{c}' | dd of=\"$1\" bs=65536 seek={at} oflag=seek_bytes conv=notrunc status=none"
        ),
        path,
    );
}

#[test]
fn a_child_overwriting_the_file_leaves_the_buf_alone() {
    let data = pattern(5 * 4096 + 99, 1);
    let (_d, p) = file_with(&data);
    let f = std::fs::File::open(&p).unwrap();
    let b = Buf::map_file(&f, 100..9000).unwrap();
    let id = b.content_id();
    let snap = ferry::buf::snapshot_bytes();
    child_overwrites(&p, 200, 3, 'X');
    assert_eq!(std::fs::read(&p).unwrap()[200..203], *b"XXX", "written");
    assert!(b[..] == data[100..9000], "the Buf kept the old bytes");
    assert_eq!(b.content_id(), id);
    assert!(ferry::buf::snapshot_bytes() > snap, "a snapshot was taken");
    let fresh = Buf::map_file(&f, 100..9000).unwrap();
    assert_eq!(
        fresh[100..103],
        *b"XXX",
        "a new mapping shows the new bytes"
    );
    assert_ne!(fresh.content_id(), id);
    assert!(b[..] == data[100..9000]);
}

#[test]
fn a_thread_opening_the_file_for_writing_waits_for_the_snapshot() {
    let data = pattern(64 << 10, 2);
    let (_d, p) = file_with(&data);
    let mf = MappedFile::open(&std::fs::File::open(&p).unwrap()).unwrap();
    let a = mf.map(0..64 << 10).unwrap();
    let b = mf.map(4095..40_000).unwrap();
    let p2 = p.clone();
    std::thread::spawn(move || {
        let w = std::fs::OpenOptions::new().write(true).open(&p2).unwrap();
        w.write_all_at(&[0xEE; 64 << 10], 0).unwrap();
    })
    .join()
    .unwrap();
    assert!(a[..] == data[..]);
    assert!(b[..] == data[4095..40_000]);
    // The writer has closed the file: a new lease, new bytes.
    assert_eq!(mf.map(10..20).unwrap()[..], [0xEE; 10]);
    assert!(a[..] == data[..]);
}

#[test]
fn a_child_truncating_the_file_leaves_the_buf_whole() {
    let data = pattern(1 << 20, 3);
    let (_d, p) = file_with(&data);
    let f = std::fs::File::open(&p).unwrap();
    let b = Buf::map_file(&f, 0..1 << 20).unwrap();
    // The shell's `>` truncates with a blocking open (GNU `truncate`
    // opens with O_NONBLOCK, which a lease turns away with EAGAIN after
    // starting the break: it is tried again until it gets through).
    sh(": > \"$1\"", &p);
    let b2 = Buf::map_file(&f, 0..1 << 20);
    assert!(b2.is_err(), "empty now");
    std::fs::write(&p, &data).unwrap();
    let b2 = Buf::map_file(&f, 0..1 << 20).unwrap();
    sh(
        "until truncate -s 0 \"$1\" 2>/dev/null; do sleep 0.01; done",
        &p,
    );
    assert!(b2[..] == data[..], "the second Buf kept its bytes");
    assert_eq!(std::fs::metadata(&p).unwrap().len(), 0);
    // No zeros and no SIGBUS: every page is the old one.
    assert!(b[..] == data[..], "the Buf kept its bytes");
    assert!(b.is_intact());
    let e = Buf::map_file(&f, 0..10).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
}

/// Another process opens the file read-only with `O_TRUNC`: Linux empties
/// the file for anyone allowed to write it, and a read-only open does not
/// break a read lease, so ferry hears nothing. Before ferry looked at the
/// file's size, the `Buf` read as zeros with its `ContentId` unchanged,
/// `MappedFile::size` still said the old size and a new `map` of the old
/// range succeeded with zeros.
#[test]
fn a_read_only_o_trunc_open_is_found_and_the_buf_reports_it() {
    let data = pattern(5 * 4096 + 99, 7);
    let (_d, p) = file_with(&data);
    let f = std::fs::File::open(&p).unwrap();
    let mapped = MappedFile::open(&f).unwrap();
    let a = mapped.map(0..data.len() as u64).unwrap();
    let whole = Buf::map_file(&f, 4096..8192).unwrap();
    let (id_a, id_whole) = (a.content_id(), whole.content_id());
    assert!(a.is_intact() && whole.is_intact());
    assert!(a[..] == data[..]);

    child_opens_read_only_with_o_trunc(&p);
    assert_eq!(std::fs::metadata(&p).unwrap().len(), 0, "Linux emptied it");

    // Found before a byte of it is read.
    assert!(!a.is_intact(), "the Buf says it lost its bytes");
    assert!(!whole.is_intact(), "so does one of another MappedFile");
    assert_ne!(a.content_id(), id_a, "never equal to the intact id");
    assert_ne!(whole.content_id(), id_whole);
    assert!(a.iter().all(|&b| b == 0), "what was lost reads as zeros");
    assert_eq!(mapped.size().unwrap(), 0, "the size is the file's now");
    let e = mapped.map(0..10).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");

    // A writer fills the file again: the lost Bufs never show its bytes,
    // and new mappings do.
    let new = pattern(data.len(), 99);
    std::fs::write(&p, &new).unwrap();
    assert!(a.iter().all(|&b| b == 0));
    assert!(whole.iter().all(|&b| b == 0));
    assert!(!a.is_intact());
    let b = mapped.map(0..new.len() as u64).unwrap();
    assert!(b[..] == new[..]);
    assert!(b.is_intact());
    assert_ne!(b.content_id(), a.content_id());
}

/// The same change, noticed only when a writer breaks the lease: the
/// snapshot would have copied the emptied file's zeros (the SIGBUS
/// guard's, whose evidence the snapshot then dropped) and called the
/// `Buf` intact.
#[test]
fn an_o_trunc_open_noticed_at_the_next_break_loses_the_buf() {
    let data = pattern(3 * 4096, 8);
    let (_d, p) = file_with(&data);
    let f = std::fs::File::open(&p).unwrap();
    let a = Buf::map_file(&f, 0..data.len() as u64).unwrap();
    let id = a.content_id();
    child_opens_read_only_with_o_trunc(&p);
    let new = pattern(data.len(), 200);
    std::fs::write(&p, &new).unwrap();
    assert!(a.iter().all(|&b| b == 0), "neither old nor new bytes");
    assert!(!a.is_intact());
    assert_ne!(a.content_id(), id);
}

#[test]
fn many_windows_of_several_files_dropped_during_breaks() {
    const N: usize = 4;
    const WIN: usize = 40;
    let files: Vec<_> = (0..N)
        .map(|i| file_with(&pattern(WIN * 4096, i as u8 + 10)))
        .collect();
    for round in 0..3 {
        let mut kept = Vec::new();
        let mut dropped = Vec::new();
        for (i, (_d, p)) in files.iter().enumerate() {
            let want = std::fs::read(p).unwrap();
            let mf = MappedFile::open(&std::fs::File::open(p).unwrap()).unwrap();
            for w in 0..WIN {
                // Windows of 1..3 pages, unaligned, overlapping.
                let s = w * 4096 + (w % 7);
                let e = (s + 4096 * (1 + w % 3)).min(want.len());
                let b = mf.map(s as u64..e as u64).unwrap();
                assert!(b[..] == want[s..e]);
                if w % 2 == 0 {
                    kept.push((i, s, want[s..e].to_vec(), b));
                } else {
                    dropped.push(b);
                }
            }
        }
        // A thread drops half the windows while children overwrite every
        // file (each open for writing breaks that file's lease).
        std::thread::scope(|sc| {
            let dropper = sc.spawn(move || {
                for b in dropped {
                    drop(b);
                    std::thread::yield_now();
                }
            });
            let children: Vec<_> = files
                .iter()
                .map(|(_d, p)| {
                    Command::new("sh")
                        .args([
                            "-c",
                            "head -c 163840 /dev/zero | tr '\\0' 'Q' | dd of=\"$1\" conv=notrunc status=none",
                            "sh",
                        ])
                        .arg(p)
                        .spawn()
                        .unwrap()
                })
                .collect();
            for mut c in children {
                assert!(c.wait().unwrap().success());
            }
            dropper.join().unwrap();
        });
        for (i, s, want, b) in &kept {
            assert!(b[..] == want[..], "round {round}, file {i}, window at {s}");
        }
        for (_d, p) in &files {
            assert!(std::fs::read(p).unwrap().iter().all(|&c| c == b'Q'));
            std::fs::write(p, pattern(WIN * 4096, round as u8)).unwrap();
        }
    }
}

#[test]
fn a_file_open_for_writing_here_is_refused_but_can_be_read_or_mapped_unchecked() {
    let data = pattern(10_000, 4);
    let (_d, p) = file_with(&data);
    let w = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&p)
        .unwrap();
    let r = std::fs::File::open(&p).unwrap();
    for f in [&w, &r] {
        let e = Buf::map_file(f, 0..100).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::WouldBlock, "{e}");
        assert!(e.to_string().contains("open for writing"), "{e}");
        let e = MappedFile::open(f).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::WouldBlock, "{e}");
        let c = Buf::read_file(f, 5..9000).unwrap();
        assert!(c[..] == data[5..9000]);
        // SAFETY: nobody writes the file while `u` lives.
        let u = unsafe { Buf::map_file_unchecked(f, 5..9000) }.unwrap();
        assert!(u[..] == data[5..9000]);
    }
    let e = Buf::read_file(&r, 9000..10_001).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
    // Empty ranges need no lease.
    assert!(Buf::map_file(&r, 10_000..10_000).unwrap().is_empty());
    drop(w);
    // Leased again once no process holds a writer's descriptor (a child
    // another test thread spawns has a copy of `w` until it execs).
    let mut got = Buf::map_file(&r, 0..100);
    for _ in 0..100 {
        if got.is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        got = Buf::map_file(&r, 0..100);
    }
    assert!(got.unwrap()[..] == data[..100]);
}

#[test]
fn a_mapped_streams_regions_and_bufs_keep_their_bytes() {
    let data = pattern(3 << 20, 5);
    let (_d, p) = file_with(&data);
    let s = Stream::open(&p, &OpenOptions::read_only()).unwrap();
    assert!(s.is_mapped(), "a read-only local file is mapped");
    let r1 = s.salloc(100_000).unwrap();
    let b1 = s.salloc(1 << 20).unwrap().into_buf();
    let id = b1.content_id();
    child_overwrites(&p, 0, 3 << 20, 'Z');
    assert!(r1[..] == data[..100_000], "the region kept the old bytes");
    assert!(b1[..] == data[100_000..100_000 + (1 << 20)]);
    assert_eq!(b1.content_id(), id);
    r1.free().unwrap();
    // The writer is gone: the stream maps again, and sees the new bytes.
    let r2 = s.salloc(10).unwrap();
    assert!(r2.iter().all(|&c| c == b'Z'), "{:?}", &r2[..]);
    drop(r2);
    assert!(s.is_mapped());
}

#[test]
fn a_stream_whose_file_is_open_for_writing_reads_into_buffers() {
    let data = pattern(3 << 20, 6);
    let (_d, p) = file_with(&data);
    let w = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    for backend in [ferry::stream::Backend::Auto, ferry::stream::Backend::Mapped] {
        let s = Stream::open(&p, &OpenOptions::read_only().backend(backend)).unwrap();
        assert!(!s.is_mapped(), "no lease, no mapping ({backend:?})");
        assert!(s.salloc(3 << 20).unwrap()[..] == data[..]);
    }
    drop(w);
    // A mapped stream whose lease a writer broke, and who keeps the file
    // open, goes on in buffers. (The lease is refused while any process
    // still holds the writer's descriptor: a child that another test
    // thread is spawning has a copy until it execs. So try a few times.)
    let mut s = Stream::open(&p, &OpenOptions::read_only()).unwrap();
    for _ in 0..100 {
        if s.is_mapped() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        s = Stream::open(&p, &OpenOptions::read_only()).unwrap();
    }
    assert!(s.is_mapped());
    let head = s.salloc(10).unwrap().into_buf();
    let w = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    w.write_all_at(b"NEW", 50_000).unwrap();
    w.write_all_at(b"NEW", 2_500_000).unwrap();
    // Inside the first window (mapped before the writer came): old bytes.
    s.seek_to(std::io::SeekFrom::Start(50_000)).unwrap();
    assert!(s.salloc(3).unwrap()[..] == data[50_000..50_003]);
    assert!(s.is_mapped());
    // Past it, a new window needs a new lease, refused: buffers.
    s.seek_to(std::io::SeekFrom::Start(2_500_000)).unwrap();
    assert_eq!(s.salloc(3).unwrap()[..], *b"NEW");
    assert!(!s.is_mapped(), "fell back to buffers");
    assert!(head[..] == data[..10]);
}

#[test]
fn a_snapshot_goes_to_a_pipe_as_a_copy() {
    // While a leased Buf is the file's pages, a pipe is handed those pages
    // by reference; once a writer made it a private snapshot, it is not a
    // file's pages any more and goes by copy: later writes to the file do
    // not reach a reader of the pipe.
    use std::io::Read;
    let (_d, p) = file_with(&[b'a'; 8192]);
    let b = Buf::map_file(&std::fs::File::open(&p).unwrap(), 0..8192).unwrap();
    child_overwrites(&p, 0, 8192, 'b');
    let (mut r, w) = std::io::pipe().unwrap();
    b.write_all_to(&w).unwrap();
    drop(w);
    child_overwrites(&p, 0, 8192, 'c');
    let mut got = Vec::new();
    r.read_to_end(&mut got).unwrap();
    assert!(got == [b'a'; 8192], "the pipe got the snapshot's bytes");
    assert!(b[..] == [b'a'; 8192]);
}

#[test]
fn readers_on_other_threads_see_the_same_bytes_throughout() {
    let data = pattern(8 << 20, 7);
    let (_d, p) = file_with(&data);
    let b = Buf::map_file(&std::fs::File::open(&p).unwrap(), 0..8 << 20).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|sc| {
        let readers: Vec<_> = (0..2)
            .map(|k| {
                let (b, data, stop) = (&b, &data, &stop);
                sc.spawn(move || {
                    let mut rounds = 0u32;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) || rounds == 0 {
                        // Walk the pages in a different order per thread.
                        for i in (0..2048).map(|i| (i * (2 * k + 1)) % 2048) {
                            let r = i * 4096..(i + 1) * 4096;
                            assert!(b[r.clone()] == data[r], "page {i}, round {rounds}");
                        }
                        rounds += 1;
                    }
                    rounds
                })
            })
            .collect();
        for c in ['A', 'B', 'C'] {
            child_overwrites(&p, 0, 8 << 20, c);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for r in readers {
            assert!(r.join().unwrap() > 0);
        }
    });
    assert!(b[..] == data[..]);
}

/// Run as another user (root re-runs this test binary through `setpriv`):
/// a file it does not own cannot be leased, and the error says so.
#[test]
fn a_file_of_another_user_is_refused_and_says_why() {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(path) = std::env::var("FERRY_LEASE_NOT_OWNER") {
        let f = std::fs::File::open(&path).unwrap();
        let e = Buf::map_file(&f, 0..10).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PermissionDenied, "{e}");
        assert!(e.to_string().contains("owner"), "{e}");
        assert!(Buf::read_file(&f, 0..10).unwrap()[..] == pattern(100, 8)[..10]);
        println!("NOT-OWNER-OK");
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        // Not root: /etc/passwd belongs to root.
        let f = std::fs::File::open("/etc/passwd").unwrap();
        let e = Buf::map_file(&f, 0..1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PermissionDenied, "{e}");
        return;
    }
    let (d, p) = file_with(&pattern(100, 8));
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &test_name!(a_file_of_another_user_is_refused_and_says_why),
            "--nocapture",
        ])
        .env("FERRY_LEASE_NOT_OWNER", &p)
        .output();
    let Ok(out) = out else {
        eprintln!("setpriv not found: skipped");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("NOT-OWNER-OK"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
