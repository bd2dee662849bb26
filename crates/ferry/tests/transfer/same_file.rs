//! A file copied into itself: `transfer::copy`, `transfer::copy_range`,
//! `transfer::between` and `read_into_file` refuse a copy whose reads meet
//! its writes ("input file is output file", `InvalidInput`), before a byte
//! moves, and copy bytes of one file to a place that does not overlap them.
//!
//! Before: `copy` and `between` from a file into the same file opened in
//! append mode (or positioned at its end) grew a 64 KiB file to 97 MB in
//! 20 ms and would have filled the disk; `read_into_file(f, 0, f, 4096,
//! 131072)` returned `Ok` with page 0 repeated.
//!
//! The checks run in a child process of this binary under a 16 MiB file
//! size limit (`RLIMIT_FSIZE` is the whole process's), so a copy that runs
//! away fails there (EFBIG) instead of filling the disk.

use ferry::transfer::endpoint::Endpoint;
use ferry::transfer::{between, copy, copy_range, TransferOptions};
use ferry::{OpenOptions as StreamOptions, Stream};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Seek, SeekFrom};
use std::os::fd::AsFd;
use std::path::Path;

use crate::support;

const LIMIT: u64 = 16 << 20;

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i / 4096) as u8 ^ (i as u8)).collect()
}

fn append(p: &Path) -> File {
    OpenOptions::new().append(true).open(p).unwrap()
}

fn read_write(p: &Path) -> File {
    OpenOptions::new().read(true).write(true).open(p).unwrap()
}

fn assert_refused(e: &std::io::Error, what: &str) {
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{what}: {e}");
    assert!(
        e.to_string().contains("input file is output file"),
        "{what}: {e}"
    );
}

/// [`support::in_child`], with the file size limit set in the child.
fn in_child(name: &str) -> bool {
    if support::in_child(name) {
        return true;
    }
    // SAFETY: the child runs this one test alone; ignoring SIGXFSZ only
    // turns a write past the limit into an error.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    support::limit_file_size(LIMIT);
    false
}

#[test]
fn a_file_copied_into_itself_is_refused_or_copied_right() {
    if in_child(&test_name!(
        a_file_copied_into_itself_is_refused_or_copied_right
    )) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    let data = pattern(64 << 10);
    let reset = || std::fs::write(&p, &data).unwrap();
    let unchanged = |what: &str| {
        assert!(
            std::fs::read(&p).unwrap() == data,
            "{what}: the file changed"
        );
    };
    let opts = TransferOptions::new();

    // copy: into the same file in append mode, through a hard link and a
    // symbolic link too (one inode).
    reset();
    std::fs::hard_link(&p, dir.path().join("hard")).unwrap();
    std::os::unix::fs::symlink(&p, dir.path().join("soft")).unwrap();
    for name in ["f", "hard", "soft"] {
        let input = File::open(&p).unwrap();
        let e = copy(&input, append(&dir.path().join(name)), &opts).unwrap_err();
        assert_refused(&e.into_parts().1, name);
        unchanged(name);
    }
    // copy: output positioned at the end, and inside the file.
    for at in [data.len() as u64, 4096] {
        let input = File::open(&p).unwrap();
        let mut out = read_write(&p);
        out.seek(SeekFrom::Start(at)).unwrap();
        let e = copy(&input, &out, &opts).unwrap_err();
        assert_refused(&e.into_parts().1, "positioned output");
        unchanged("positioned output");
    }
    // copy: input at its end has nothing to copy: fine, as with GNU cat.
    let mut input = File::open(&p).unwrap();
    input.seek(SeekFrom::End(0)).unwrap();
    assert_eq!(copy(&input, append(&p), &opts).unwrap().bytes, 0);
    unchanged("input at its end");

    // between: descriptor endpoints, and a file range to the end.
    let input = File::open(&p).unwrap();
    let out = append(&p);
    let e = between(
        &Endpoint::fd(input.as_fd()).unwrap(),
        &Endpoint::fd(out.as_fd()).unwrap(),
        &opts,
    )
    .unwrap_err();
    assert_refused(&e.into_parts().1, "between fds");
    let e = between(
        &Endpoint::file_range(input.as_fd(), 0, None).unwrap(),
        &Endpoint::fd(out.as_fd()).unwrap(),
        &opts,
    )
    .unwrap_err();
    assert_refused(&e.into_parts().1, "between a range to the end");
    // A bounded range that reaches into the bytes appended.
    let e = between(
        &Endpoint::file_range(input.as_fd(), 0, Some(2 * data.len() as u64)).unwrap(),
        &Endpoint::fd(out.as_fd()).unwrap(),
        &opts,
    )
    .unwrap_err();
    assert_refused(&e.into_parts().1, "between a range past the end");
    unchanged("between");

    // between: a bounded range appended to its own file: a real copy.
    let st = between(
        &Endpoint::file_range(input.as_fd(), 0, Some(1000)).unwrap(),
        &Endpoint::fd(out.as_fd()).unwrap(),
        &opts,
    )
    .unwrap();
    assert_eq!(st.bytes, 1000);
    let got = std::fs::read(&p).unwrap();
    assert!(got[..data.len()] == data[..] && got[data.len()..] == data[..1000]);

    // copy_range: overlapping ranges refused, disjoint ones copied.
    reset();
    let f = read_write(&p);
    let e = copy_range(&f, &f, 0..8192, 4096, &opts).unwrap_err();
    assert_refused(&e.into_parts().1, "copy_range");
    unchanged("copy_range");
    copy_range(&f, &f, 0..4096, 8192, &opts).unwrap();
    let got = std::fs::read(&p).unwrap();
    assert!(got[8192..12288] == data[..4096]);

    // read_into_file: overlapping upward (page 0 came back repeated) and
    // downward, refused; disjoint, copied.
    reset();
    let f = read_write(&p);
    for (from, to) in [(0, 4096), (4096, 0), (0, 0)] {
        let e = ferry::read_into_file(&f, from, &f, to, 32 << 10).unwrap_err();
        assert_refused(&e, "read_into_file");
        unchanged("read_into_file");
    }
    assert_eq!(
        ferry::read_into_file(&f, 0, &f, 32 << 10, 16 << 10).unwrap(),
        16 << 10
    );
    let got = std::fs::read(&p).unwrap();
    assert!(got[32 << 10..48 << 10] == data[..16 << 10]);
}

/// `between` from a file into a ferry `Stream` over the same file, from
/// such a stream into the file, or from one such stream into another: the
/// same-file check looked only at two descriptor endpoints, so each of
/// these, with the writing side in append mode, ran until the file size
/// limit stopped it (a 256 KiB file grew to 16 MiB, the limit here).
#[test]
fn a_file_copied_into_itself_through_a_stream_is_refused() {
    if in_child(&test_name!(
        a_file_copied_into_itself_through_a_stream_is_refused
    )) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    let data = pattern(256 << 10);
    let unchanged = |what: &str| {
        assert!(
            std::fs::read(&p).unwrap() == data,
            "{what}: the file changed"
        );
    };
    let opts = TransferOptions::new();
    let appending = || Stream::open(&p, &StreamOptions::new().append(true)).unwrap();
    let reading = || Stream::open(&p, &StreamOptions::read_only()).unwrap();

    std::fs::write(&p, &data).unwrap();
    let input = File::open(&p).unwrap();
    let out = appending();
    let e = between(
        &Endpoint::fd(input.as_fd()).unwrap(),
        &Endpoint::stream(&out),
        &opts,
    )
    .unwrap_err();
    assert_refused(&e.into_parts().1, "file into a stream");
    out.close().unwrap();
    unchanged("file into a stream");

    let input = reading();
    let e = between(
        &Endpoint::stream(&input),
        &Endpoint::fd(append(&p).as_fd()).unwrap(),
        &opts,
    )
    .unwrap_err();
    assert_refused(&e.into_parts().1, "stream into the file");
    unchanged("stream into the file");

    let out = appending();
    let e = between(&Endpoint::stream(&input), &Endpoint::stream(&out), &opts).unwrap_err();
    assert_refused(&e.into_parts().1, "stream into a stream");
    out.close().unwrap();
    unchanged("stream into a stream");

    // A stream read to its end has nothing left to copy: fine.
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut &input, &mut rest).unwrap();
    let st = between(
        &Endpoint::stream(&input),
        &Endpoint::fd(append(&p).as_fd()).unwrap(),
        &opts,
    )
    .unwrap();
    assert_eq!(st.bytes, 0);
    unchanged("stream at its end");
}

/// A file range as the sink is written where the descriptor's own offset
/// stands (the flow writes with `write(2)`), but the same-file check took
/// the range's offset for where the bytes go: four MiB of a file copied
/// "to 64 MiB" through a descriptor positioned at 4 KiB was allowed, read
/// back pages it had overwritten, and returned `Ok` with the file wrong.
#[test]
fn a_sink_range_of_the_same_file_is_checked_where_the_bytes_go() {
    if in_child(&test_name!(
        a_sink_range_of_the_same_file_is_checked_where_the_bytes_go
    )) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    let data = pattern(4 << 20);
    std::fs::write(&p, &data).unwrap();
    let input = File::open(&p).unwrap();
    let mut out = read_write(&p);
    // The descriptor's own offset says nothing: a sink range is written
    // at the range's offset.
    out.seek(SeekFrom::Start(64 << 20)).unwrap();
    let e = between(
        &Endpoint::file_range(input.as_fd(), 0, Some(data.len() as u64)).unwrap(),
        &Endpoint::file_range(out.as_fd(), 4096, None).unwrap(),
        &TransferOptions::new(),
    )
    .unwrap_err();
    assert_refused(&e.into_parts().1, "an overlapping sink range");
    assert!(std::fs::read(&p).unwrap() == data, "the file changed");
    out.seek(SeekFrom::Start(4096)).unwrap();
    let st = between(
        &Endpoint::file_range(input.as_fd(), 0, Some(data.len() as u64)).unwrap(),
        &Endpoint::file_range(out.as_fd(), 8 << 20, None).unwrap(),
        &TransferOptions::new(),
    )
    .unwrap();
    assert_eq!(st.bytes, data.len() as u64);
    let got = std::fs::read(&p).unwrap();
    assert_eq!(got.len(), 12 << 20);
    assert!(got[..data.len()] == data[..] && got[8 << 20..] == data[..]);
}
