//! Streams over pipes (sequential descriptors) and the std interfaces
//! mixed with salloc on one stream.

use ferry::{OpenOptions, Stream};
use std::io::{BufRead, Read, Seek, SeekFrom, Write};
use std::time::Duration;

/// A pipe whose writer sends `data` in odd-sized, slow pieces.
fn dribble(data: Vec<u8>) -> Stream {
    let (r, mut w) = std::io::pipe().unwrap();
    std::thread::spawn(move || {
        for (i, chunk) in data.chunks(1013).enumerate() {
            w.write_all(chunk).unwrap();
            if i % 16 == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    });
    Stream::from_fd(r.into()).unwrap()
}

#[test]
fn salloc_on_a_pipe_returns_full_regions_until_the_end() {
    let data: Vec<u8> = (0..500_000u32).map(|i| (i % 241) as u8).collect();
    let s = dribble(data.clone());
    let mut at = 0;
    let mut held = Vec::new();
    loop {
        let r = s.salloc(30_000).unwrap();
        if r.is_empty() {
            break;
        }
        assert!(
            r.len() == 30_000 || at + r.len() == data.len(),
            "short region before the end"
        );
        assert_eq!(&r[..], &data[at..at + r.len()]);
        at += r.len();
        // Keep some regions while reading on: they must not change.
        if held.len() < 5 {
            held.push((r, at));
        }
    }
    assert_eq!(at, data.len());
    for (r, end) in &held {
        assert_eq!(&r[..], &data[end - r.len()..*end]);
    }
}

#[test]
fn lines_over_a_pipe_match_bufread() {
    let mut text = Vec::new();
    for i in 0..20_000 {
        text.extend_from_slice(format!("line {i} {}\n", "x".repeat(i % 97)).as_bytes());
    }
    text.extend_from_slice(&vec![b'y'; 300_000]); // a last line longer than any buffer, no newline
    let mut want = Vec::new();
    let mut cur = std::io::Cursor::new(&text);
    loop {
        let mut l = Vec::new();
        if cur.read_until(b'\n', &mut l).unwrap() == 0 {
            break;
        }
        want.push(l);
    }
    let mut s = dribble(text.clone());
    let mut got = Vec::new();
    while let Some(l) = s.next_line().unwrap() {
        got.push(l.to_vec());
    }
    assert_eq!(got.len(), want.len());
    assert!(got == want);
    // And the Buf iterator over a file.
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), &text).unwrap();
    let mut s = Stream::open(f.path(), &OpenOptions::read_only().buffer_size(4096)).unwrap();
    let lines: Vec<ferry::Buf> = s.buf_lines().collect::<std::io::Result<_>>().unwrap();
    assert_eq!(lines.len(), want.len());
    assert!(lines.iter().zip(&want).all(|(a, b)| a[..] == b[..]));
}

#[test]
fn read_then_region_then_read_share_one_offset() {
    let data: Vec<u8> = (0..100u8).collect();
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), &data).unwrap();
    for s in [
        Stream::open(f.path(), &OpenOptions::read_only()).unwrap(),
        Stream::from_bytes(data.clone()),
        dribble(data.clone()),
    ] {
        let mut s = s;
        let mut ten = [0u8; 10];
        s.read_exact(&mut ten).unwrap();
        assert_eq!(&ten[..], &data[..10]);
        {
            let five = s.salloc(5).unwrap().into_buf();
            assert_eq!(&five[..], &data[10..15]);
        }
        let buf = s.fill_buf().unwrap();
        assert_eq!(buf[0], 15);
        s.consume(1);
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).unwrap();
        assert_eq!(&rest[..], &data[16..]);
    }
}

#[test]
fn write_then_seek_then_read_back() {
    let f = tempfile::NamedTempFile::new().unwrap();
    let mut s = Stream::open(f.path(), &OpenOptions::new().read(true).write(true)).unwrap();
    s.write_all(b"hello world").unwrap();
    s.seek(SeekFrom::Start(6)).unwrap();
    let mut w = String::new();
    s.read_to_string(&mut w).unwrap();
    assert_eq!(w, "world");
    s.seek(SeekFrom::Start(0)).unwrap();
    s.salloc_mut(5).unwrap().copy_from_slice(b"HELLO");
    s.seek(SeekFrom::Start(0)).unwrap();
    let mut all = String::new();
    s.read_to_string(&mut all).unwrap();
    assert_eq!(all, "HELLO world");
    s.close().unwrap();
    assert_eq!(std::fs::read(f.path()).unwrap(), b"HELLO world");
}

#[test]
fn append_mode_writes_at_the_end() {
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), b"start;").unwrap();
    let s = Stream::open(f.path(), &OpenOptions::new().append(true).read(true)).unwrap();
    s.salloc_mut(3).unwrap().copy_from_slice(b"one");
    s.flush().unwrap();
    // Someone else appends meanwhile.
    std::fs::OpenOptions::new()
        .append(true)
        .open(f.path())
        .unwrap()
        .write_all(b"[other]")
        .unwrap();
    s.seek_to(SeekFrom::Start(0)).unwrap();
    (&s).write_all(b"two").unwrap();
    s.close().unwrap();
    assert_eq!(std::fs::read(f.path()).unwrap(), b"start;one[other]two");
}

#[test]
fn from_fd_leaves_the_descriptor_offset_where_the_stream_stopped() {
    use std::os::fd::AsFd;
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), b"0123456789").unwrap();
    let mut file = std::fs::File::open(f.path()).unwrap();
    file.seek(SeekFrom::Start(2)).unwrap();
    let dup = file.as_fd().try_clone_to_owned().unwrap();
    let s = Stream::from_fd(dup).unwrap();
    assert_eq!(&s.salloc(3).unwrap()[..], b"234");
    s.close().unwrap();
    assert_eq!(file.stream_position().unwrap(), 5);
    let mut rest = String::new();
    file.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "56789");
}

#[test]
fn file_grows_when_a_region_is_freed_not_when_allocated() {
    let f = tempfile::NamedTempFile::new().unwrap();
    let s = Stream::open(f.path(), &OpenOptions::new().write(true)).unwrap();
    let mut r = s.salloc_mut(1000).unwrap();
    assert_eq!(s.len().unwrap(), 0, "allocation must not grow the stream");
    assert_eq!(std::fs::metadata(f.path()).unwrap().len(), 0);
    r.fill(b'z');
    r.free().unwrap();
    assert_eq!(s.len().unwrap(), 1000);
    s.close().unwrap();
    assert_eq!(std::fs::read(f.path()).unwrap(), vec![b'z'; 1000]);
}
