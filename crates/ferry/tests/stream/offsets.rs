//! A stream over a descriptor the caller gave leaves the descriptor's offset
//! where POSIX 2.5.1 says: at the stream's position after `flush`, a seek
//! and close (read-ahead given back), and it goes on from wherever another
//! handle on the same open file description (a `dup`, a child process)
//! left the offset. Real files; the other handle is a `try_clone` (dup) or
//! a real `sh` writing through an inherited descriptor.

use crate::support::offset;
use ferry::stream::Backend;
use ferry::Stream;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, Read, Seek, SeekFrom, Write};
use std::process::{Command, Stdio};

#[test]
fn write_flush_seek_close_leave_the_offset_at_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w");
    let file = File::create(&path).unwrap();
    let mut other = file.try_clone().unwrap();
    let mut s = Stream::from_fd(file.into()).unwrap();
    s.write_all(b"AAAA\n").unwrap();
    s.flush().unwrap();
    assert_eq!(offset(&mut other), 5, "after flush");
    // The other handle writes after what the stream wrote...
    other.write_all(b"BBBB\n").unwrap();
    // ...and the stream goes on after it.
    assert_eq!(s.position(), 10);
    s.write_all(b"CCCC\n").unwrap();
    s.seek_to(SeekFrom::Start(2)).unwrap();
    assert_eq!(offset(&mut other), 2, "after a seek");
    s.write_all(b"x").unwrap();
    s.seek_to(SeekFrom::End(0)).unwrap();
    s.write_all(b"end\n").unwrap();
    s.close().unwrap();
    assert_eq!(offset(&mut other), 19, "after close");
    assert_eq!(std::fs::read(&path).unwrap(), b"AAxA\nBBBB\nCCCC\nend\n");
}

#[test]
fn a_child_process_writes_between_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w");
    let file = File::create(&path).unwrap();
    let child_out = file.try_clone().unwrap();
    let s = Stream::from_fd(file.into()).unwrap();
    s.salloc_mut(7).unwrap().copy_from_slice(b"parent\n");
    s.flush().unwrap();
    let st = Command::new("sh")
        .args(["-c", "echo child"])
        .stdout(Stdio::from(child_out))
        .status()
        .unwrap();
    assert!(st.success());
    s.salloc_mut(6).unwrap().copy_from_slice(b"again\n");
    s.close().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"parent\nchild\nagain\n");
}

#[test]
fn appending_leaves_the_offset_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a");
    std::fs::write(&path, b"0123456789\n").unwrap();
    let file = OpenOptions::new().append(true).open(&path).unwrap();
    let mut other = file.try_clone().unwrap();
    let mut s = Stream::from_fd(file.into()).unwrap();
    s.write_all(b"more\n").unwrap();
    s.flush().unwrap();
    assert_eq!(offset(&mut other), 16);
    other.write_all(b"raw\n").unwrap();
    s.write_all(b"last\n").unwrap();
    s.close().unwrap();
    assert_eq!(offset(&mut other), 25);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"0123456789\nmore\nraw\nlast\n"
    );
}

fn lines_file() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r");
    std::fs::write(&path, b"line1\nline2\nline3\nline4\n").unwrap();
    (dir, path)
}

#[test]
fn a_read_stream_gives_back_what_it_read_ahead() {
    for backend in [Backend::Buffered, Backend::Mapped] {
        let (_dir, path) = lines_file();
        let file = File::open(&path).unwrap();
        let mut other = file.try_clone().unwrap();
        let mut s = Stream::from_fd_with(file.into(), "r", backend).unwrap();
        let mut line = String::new();
        s.read_line(&mut line).unwrap();
        assert_eq!(line, "line1\n");
        s.flush().unwrap();
        assert_eq!(offset(&mut other), 6, "{backend:?}: after flush");
        // read(2) on the same description takes the next line...
        let mut raw = [0u8; 6];
        other.read_exact(&mut raw).unwrap();
        assert_eq!(&raw, b"line2\n");
        // ...and the stream goes on after it.
        line.clear();
        s.read_line(&mut line).unwrap();
        assert_eq!(line, "line3\n", "{backend:?}");
        // Close gives back the read-ahead too.
        s.close().unwrap();
        assert_eq!(offset(&mut other), 18, "{backend:?}: after close");
    }
}

#[test]
fn dropping_a_read_stream_gives_back_too() {
    let (_dir, path) = lines_file();
    let file = File::open(&path).unwrap();
    let mut other = file.try_clone().unwrap();
    let mut s = Stream::from_fd(file.into()).unwrap();
    let mut line = String::new();
    s.read_line(&mut line).unwrap();
    drop(s);
    assert_eq!(offset(&mut other), 6);
    let mut rest = String::new();
    other.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "line2\nline3\nline4\n");
}

#[test]
fn a_stream_that_opened_its_file_itself_is_unchanged() {
    // Stream::open's descriptor is its own: no hand-over, reads and
    // writes stay positional (its offset is never asked for).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("own");
    let s = Stream::open(&path, &ferry::OpenOptions::write_truncate()).unwrap();
    s.salloc_mut(3).unwrap().copy_from_slice(b"abc");
    s.flush().unwrap();
    s.seek_to(SeekFrom::Start(1)).unwrap();
    s.salloc_mut(1).unwrap().copy_from_slice(b"X");
    assert_eq!(s.position(), 2);
    s.close().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"aXc");
}

/// An appending stream whose file another writer appended to: its bytes
/// went to the real end, and after `flush` its position and the
/// descriptor's offset are where its write ended (the stream used to hand
/// over its own stale position, one byte short here).
#[test]
fn an_appending_stream_hands_over_where_its_write_ended() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a");
    std::fs::write(&p, b"0123456789").unwrap();
    let f = OpenOptions::new().append(true).open(&p).unwrap();
    let mut same = f.try_clone().unwrap();
    let mut s = Stream::from_fd(f.into()).unwrap();
    s.write_all(b"F").unwrap();
    let mut another = OpenOptions::new().append(true).open(&p).unwrap();
    another.write_all(b"G").unwrap();
    s.write_all(b"H").unwrap();
    s.flush().unwrap();
    assert_eq!(offset(&mut same), 13, "the descriptor's offset");
    assert_eq!(s.position(), 13, "the stream's position");
    s.close().unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"0123456789GFH");
}

/// A seek whose hand-over fails (an offset past what the file system
/// allows, or not: then it succeeds) leaves the position where it was.
#[test]
fn a_failed_seek_leaves_the_position() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("h");
    let f = File::create(&p).unwrap();
    let mut s = Stream::from_fd(f.into()).unwrap();
    s.write_all(b"abc").unwrap();
    match s.seek(SeekFrom::Start(i64::MAX as u64)) {
        Ok(p) => assert_eq!(s.position(), p),
        Err(_) => assert_eq!(s.position(), 3),
    }
    s.seek(SeekFrom::Start(3)).unwrap();
    s.write_all(b"d").unwrap();
    s.close().unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"abcd");
}
