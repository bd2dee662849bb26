//! The standard streams and the environment, checked in child processes (so
//! that stdin/stdout and the environment are the child's own).

use ferry::{OpenOptions, Stream};
use std::io::Write;
use std::process::{Command, Stdio};

fn child(test: String, env: &[(&str, &str)], stdin: Stdio) -> std::process::Output {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", &test, "--nocapture", "--test-threads", "1", "-q"])
        .env("FERRY_STD_CHILD", "1")
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn in_child() -> bool {
    std::env::var_os("FERRY_STD_CHILD").is_some()
}

#[test]
fn stdin_to_stdout_through_regions() {
    if in_child() {
        let input = Stream::stdin().unwrap();
        let output = Stream::stdout().unwrap();
        // Marks so the parent can find our bytes among the harness's output.
        output.salloc_mut(5).unwrap().copy_from_slice(b"<<<<<");
        loop {
            let r = input.salloc(1000).unwrap();
            if r.is_empty() {
                break;
            }
            output.salloc_mut(r.len()).unwrap().copy_from_slice(&r);
        }
        output.salloc_mut(5).unwrap().copy_from_slice(b">>>>>");
        output.close().unwrap();
        input.close().unwrap();
        return;
    }
    let data: Vec<u8> = (0..300_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), &data).unwrap();
    let out = child(
        test_name!(stdin_to_stdout_through_regions),
        &[],
        Stdio::from(std::fs::File::open(f.path()).unwrap()),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = out.stdout;
    let start = s.windows(5).position(|w| w == b"<<<<<").unwrap() + 5;
    let end = s.windows(5).rposition(|w| w == b">>>>>").unwrap();
    assert!(
        s[start..end] == data[..],
        "stdin did not arrive whole on stdout"
    );
}

#[test]
fn stdin_from_a_pipe() {
    if in_child() {
        let mut input = Stream::stdin().unwrap();
        let mut n = 0;
        while let Some(l) = input.next_line().unwrap() {
            assert!(l.starts_with(b"line "));
            n += 1;
        }
        println!("LINES={n}");
        return;
    }
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        &test_name!(stdin_from_a_pipe),
        "--nocapture",
        "--test-threads",
        "1",
    ])
    .env("FERRY_STD_CHILD", "1")
    .stdin(Stdio::piped())
    .stdout(Stdio::piped());
    let mut ch = c.spawn().unwrap();
    let mut w = ch.stdin.take().unwrap();
    std::thread::spawn(move || {
        for i in 0..5000 {
            writeln!(w, "line {i}").unwrap();
        }
    });
    let out = ch.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("LINES=5000"));
}

/// The library reads no environment variable: `FERRY_BACKEND` (the bench's
/// knob, read by the `ferry` command) changes nothing here, and a bad value
/// cannot make opens fail.
#[test]
fn the_environment_does_not_change_the_library() {
    // A closed file (a `NamedTempFile` stays open for writing, and a file
    // open for writing cannot be leased, so it would not be mapped).
    let dir = tempfile::tempdir().unwrap();
    let fp = dir.path().join("f");
    // Large enough to be mapped (smaller files are read into buffers).
    std::fs::write(&fp, vec![b'd'; 1 << 20]).unwrap();
    if in_child() {
        let p = std::env::var("FERRY_STD_PATH").unwrap();
        match Stream::open(&p, &OpenOptions::read_only()) {
            Ok(s) => println!("MAPPED={}", s.is_mapped()),
            Err(e) => println!("ERROR={e}"),
        }
        return;
    }
    let path = fp.to_str().unwrap();
    let run = |v: Option<&str>| {
        let mut env = vec![("FERRY_STD_PATH", path)];
        if let Some(v) = v {
            env.push(("FERRY_BACKEND", v));
        }
        let out = child(
            test_name!(the_environment_does_not_change_the_library),
            &env,
            Stdio::null(),
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let auto = run(None);
    assert!(
        auto.contains("MAPPED=true"),
        "auto maps a local read-only file: {auto}"
    );
    for v in ["buffered", "mmap", "zip"] {
        assert!(
            run(Some(v)).contains("MAPPED=true"),
            "FERRY_BACKEND={v} changed the library"
        );
    }
    // Options choose the backend.
    let s = Stream::open(
        &fp,
        &OpenOptions::read_only().backend(ferry::stream::Backend::Buffered),
    )
    .unwrap();
    assert!(!s.is_mapped());
    let w = Stream::open(&fp, &OpenOptions::new().read(true).write(true)).unwrap();
    assert!(!w.is_mapped(), "a stream that writes is buffered");
}

#[test]
fn read_to_end_takes_the_rest_of_the_file_on_every_backend() {
    use std::io::{Read, Seek, SeekFrom};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    let data: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i * 7 + i / 1000) as u8)
        .collect();
    std::fs::write(&p, &data).unwrap();
    for backend in [
        ferry::stream::Backend::Mapped,
        ferry::stream::Backend::Buffered,
    ] {
        for skip in [0u64, 1, 4096, 2_999_999, 3_000_000] {
            let mut s = Stream::open(&p, &OpenOptions::read_only().backend(backend)).unwrap();
            s.seek(SeekFrom::Start(skip)).unwrap();
            let mut v = b"prefix".to_vec();
            let n = s.read_to_end(&mut v).unwrap();
            assert_eq!(n as u64, 3_000_000 - skip, "{backend:?} from {skip}");
            assert_eq!(&v[..6], b"prefix");
            assert!(v[6..] == data[skip as usize..], "{backend:?} from {skip}");
            assert_eq!(s.position(), 3_000_000);
            // The rest of the file was reserved once and filled in place:
            // no regrowth to a bigger vector (and a copy) near its end.
            assert!(
                v.capacity() <= v.len() + 4096,
                "{backend:?} from {skip}: capacity {} for {} bytes",
                v.capacity(),
                v.len()
            );
        }
    }
}

/// A pipe is shared with the process at its other end: a stream leaves its
/// capacity alone unless asked ([`Stream::set_pipe_size`]).
#[test]
fn a_pipe_grows_only_when_asked() {
    let (r, w) = rustix::pipe::pipe().unwrap();
    let before = rustix::pipe::fcntl_getpipe_size(&w).unwrap();
    let max: usize = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let s = Stream::from_fd(w).unwrap();
    s.salloc_mut(3).unwrap().copy_from_slice(b"abc");
    s.flush().unwrap();
    // A pipe's two ends share one buffer: ask through the read end.
    assert_eq!(rustix::pipe::fcntl_getpipe_size(&r).unwrap(), before);
    assert!(before < 1 << 20);
    let set = s.set_pipe_size(1 << 20).unwrap();
    assert_eq!(set, (1usize << 20).min(max).max(before));
    assert_eq!(rustix::pipe::fcntl_getpipe_size(&r).unwrap(), set);
    drop(s);
}

/// The streams a reader test runs on: the bytes as a mapped file, a
/// buffered file with 4 KiB buffers, memory, and a pipe fed by a thread.
fn reader_streams(data: &[u8], dir: &std::path::Path) -> Vec<(&'static str, Stream)> {
    use ferry::stream::Backend;
    let p = dir.join("lines");
    std::fs::write(&p, data).unwrap();
    let (r, w) = rustix::pipe::pipe().unwrap();
    let feed = data.to_vec();
    std::thread::spawn(move || {
        let mut w = std::fs::File::from(w);
        let _ = w.write_all(&feed);
    });
    vec![
        (
            "mapped",
            Stream::open(&p, &OpenOptions::read_only().backend(Backend::Mapped)).unwrap(),
        ),
        (
            "buffered",
            Stream::open(
                &p,
                &OpenOptions::read_only()
                    .backend(Backend::Buffered)
                    .buffer_size(4096),
            )
            .unwrap(),
        ),
        ("memory", Stream::from_bytes(data.to_vec())),
        ("pipe", Stream::from_fd(r).unwrap()),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// `read_until` and `read_line` (ferry's own, one call into the stream
    /// each) give what std's `BufReader` gives on the same bytes: the same
    /// pieces, the same errors for invalid UTF-8, the same string kept.
    #[test]
    fn read_until_and_read_line_match_std(
        pieces in proptest::collection::vec(
            (0usize..9000, proptest::prelude::any::<u8>(), 0u8..4), 0..12),
        ops in proptest::collection::vec(0u8..4, 1..40),
    ) {
        use std::io::{BufRead, BufReader};
        // Lines of every length (some longer than a buffer), ended by `\n`,
        // by `;` or by nothing; some carry invalid UTF-8.
        let mut data = Vec::new();
        for (len, byte, end) in &pieces {
            let b = if *byte >= 0x80 && *byte < 0xc0 { *byte } else { b'a' + byte % 26 };
            data.extend(std::iter::repeat_n(b, *len));
            match end { 0 => data.push(b'\n'), 1 => data.push(b';'), _ => {} }
        }
        let dir = tempfile::tempdir().unwrap();
        for (name, mut s) in reader_streams(&data, dir.path()) {
            let mut std_r = BufReader::with_capacity(1000, &data[..]);
            for op in &ops {
                match op {
                    0 | 1 => {
                        let delim = if *op == 0 { b'\n' } else { b';' };
                        let (mut a, mut b) = (b"x".to_vec(), b"x".to_vec());
                        let ra = s.read_until(delim, &mut a).unwrap();
                        let rb = std_r.read_until(delim, &mut b).unwrap();
                        proptest::prop_assert_eq!((ra, &a), (rb, &b), "{} read_until", name);
                    }
                    _ => {
                        let (mut a, mut b) = (String::from("k"), String::from("k"));
                        let ra = s.read_line(&mut a).map_err(|e| e.kind());
                        let rb = std_r.read_line(&mut b).map_err(|e| e.kind());
                        proptest::prop_assert_eq!((ra, &a), (rb, &b), "{} read_line", name);
                    }
                }
            }
            // What is left reads the same too.
            let (mut a, mut b) = (Vec::new(), Vec::new());
            std::io::Read::read_to_end(&mut s, &mut a).unwrap();
            std::io::Read::read_to_end(&mut std_r, &mut b).unwrap();
            proptest::prop_assert!(a == b, "{} rest", name);
        }
    }
}

#[test]
fn read_to_end_from_a_pipe_takes_everything() {
    use std::io::Read;
    let data: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
    let dir = tempfile::tempdir().unwrap();
    let (_, mut s) = reader_streams(&data, dir.path()).pop().unwrap();
    let mut v = vec![7u8];
    assert_eq!(s.read_to_end(&mut v).unwrap(), data.len());
    assert_eq!(v[0], 7);
    assert!(v[1..] == data[..]);
}

/// `fill_buf_min` on files (mapped, 4 KiB buffers) and a pipe: at least
/// the bytes asked for, the right ones, across every buffer edge.
#[test]
fn fill_buf_min_on_every_kind_of_stream() {
    use std::io::BufRead;
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 31 % 253) as u8).collect();
    let dir = tempfile::tempdir().unwrap();
    for (name, mut s) in reader_streams(&data, dir.path()) {
        let g = &mut s;
        let (mut at, mut x) = (0usize, 9u32);
        while at < data.len() {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let want = 1 + (x >> 8) as usize % 20_000;
            let got = g.fill_buf_min(want).unwrap();
            assert!(
                got.len() >= want.min(data.len() - at),
                "{name}: {want} at {at}"
            );
            assert!(got == &data[at..at + got.len()], "{name} at {at}");
            let take = want.min(got.len()) / 2 + 1;
            g.consume(take);
            at += take;
        }
        assert!(g.fill_buf_min(10).unwrap().is_empty(), "{name}");
    }
}

/// Appending after a seek: the bytes and the offset go to the end (the
/// C library's "a" streams rely on it).
#[test]
fn append_after_a_seek_lands_at_the_end() {
    use std::io::{Seek, SeekFrom, Write};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("log");
    std::fs::write(&p, b"0123456789").unwrap();
    let mut s = Stream::open(&p, &OpenOptions::new().append(true)).unwrap();
    s.write_all(b"AB").unwrap();
    s.seek(SeekFrom::Start(0)).unwrap();
    s.write_all(b"CD").unwrap();
    assert_eq!(s.position(), 14);
    s.close().unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"0123456789ABCD");
}

/// A sequential stream over a regular file writes at the descriptor's
/// own offset, after what another writer of that descriptor put there.
#[test]
fn a_sequential_stream_shares_the_descriptor_offset() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("shared");
    let f = std::fs::File::create(&p).unwrap();
    let mut other = f.try_clone().unwrap();
    let mut s =
        Stream::from_fd_with(f.into(), "shared", ferry::stream::Backend::Sequential).unwrap();
    s.write_all(b"first ").unwrap();
    s.flush().unwrap();
    other.write_all(b"other ").unwrap();
    s.write_all(b"last").unwrap();
    s.close().unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"first other last");
    let s = Stream::from_fd_with(
        std::fs::File::open(&p).unwrap().into(),
        "shared",
        ferry::stream::Backend::Sequential,
    )
    .unwrap();
    let e = s.seek_to(std::io::SeekFrom::Start(1)).unwrap_err();
    assert_eq!(ferry::stream::os_error(&e), Some(libc::ESPIPE));
}
