//! Sizes and offsets at the edges: lengths near `usize::MAX` and
//! `isize::MAX`, offsets near `i64::MAX` and `u64::MAX`, requests far past a
//! file's end. Every call either fails with a clear error or hands out a
//! region whose every byte is really there (the test touches both ends).

use ferry::stream::Backend;
use ferry::{OpenOptions, Stream};
use proptest::prelude::*;
use std::io::{ErrorKind, SeekFrom};

fn huge() -> impl Strategy<Value = usize> {
    prop_oneof![
        0usize..70_000,
        (0usize..4096).prop_map(|k| usize::MAX - k),
        (0usize..4096).prop_map(|k| isize::MAX as usize - k),
        (0usize..4096).prop_map(|k| (isize::MAX as usize).wrapping_add(k)),
        (40u32..63).prop_map(|b| 1usize << b),
    ]
}

fn offset() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..100_000,
        (0u64..4096).prop_map(|k| u64::MAX - k),
        (0u64..4096).prop_map(|k| i64::MAX as u64 - k),
        (0u64..4096).prop_map(|k| i64::MAX as u64 + k),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Read(usize),
    Write(usize, bool),
    Realloc(usize),
    Seek(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        huge().prop_map(Op::Read),
        (huge(), any::<bool>()).prop_map(|(n, keep)| Op::Write(n, keep)),
        huge().prop_map(Op::Realloc),
        offset().prop_map(Op::Seek),
    ]
}

const ERRS: [ErrorKind; 3] = [
    ErrorKind::InvalidInput,
    ErrorKind::OutOfMemory,
    ErrorKind::FileTooLarge,
];

fn ok_error(e: &std::io::Error) -> bool {
    ERRS.contains(&e.kind())
        || matches!(e.raw_os_error(), Some(libc::EFBIG | libc::EINVAL))
        || ferry::stream::os_error(e)
            .is_some_and(|c| c == libc::EFBIG || c == libc::EINVAL || c == libc::ENOMEM)
}

fn run(s: &Stream, file_len: u64, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut held = Vec::new();
    for op in ops {
        match *op {
            Op::Read(n) => {
                let pos = s.position();
                match s.salloc(n) {
                    Ok(r) => {
                        prop_assert!(r.len() <= n);
                        // Only bytes the stream holds: its length bounds them.
                        let end = pos + r.len() as u64;
                        prop_assert!(
                            r.is_empty() || end <= s.len().unwrap_or(0).max(file_len),
                            "{} past the end",
                            end
                        );
                        if let (Some(a), Some(b)) = (r.first(), r.last()) {
                            std::hint::black_box((*a, *b));
                        }
                        prop_assert_eq!(s.position(), end);
                    }
                    Err(e) => {
                        prop_assert!(ok_error(&e) || e.kind() == ErrorKind::UnexpectedEof, "{e}")
                    }
                }
            }
            Op::Write(n, keep) => match s.salloc_mut(n) {
                Ok(mut r) => {
                    prop_assert_eq!(r.len(), n);
                    prop_assert!(n <= isize::MAX as usize, "a region of {} bytes", n);
                    if n > 0 {
                        r[0] = 1;
                        r[n - 1] = 2;
                    }
                    prop_assert!(r.offset() + n as u64 <= i64::MAX as u64);
                    if keep {
                        held.push(r);
                    }
                }
                Err(e) => prop_assert!(ok_error(&e), "{e}"),
            },
            Op::Realloc(n) => {
                if let Some(r) = held.last_mut() {
                    let before = r.len();
                    match r.realloc(n) {
                        Ok(()) => {
                            prop_assert_eq!(r.len(), n);
                            if n > 0 {
                                r[n - 1] = 3;
                            }
                        }
                        Err(e) => {
                            prop_assert_eq!(r.len(), before);
                            prop_assert!(ok_error(&e), "{e}");
                        }
                    }
                }
            }
            Op::Seek(o) => match s.seek_to(SeekFrom::Start(o)) {
                Ok(p) => {
                    prop_assert_eq!(p, o);
                    prop_assert!(p <= i64::MAX as u64);
                }
                Err(e) => prop_assert!(ok_error(&e), "{e}"),
            },
        }
    }
    drop(held);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn memory_streams_survive_edge_sizes(init in 0usize..20_000, ops in prop::collection::vec(op(), 1..12)) {
        let s = Stream::from_bytes(vec![5u8; init]);
        run(&s, init as u64, &ops)?;
    }

    #[test]
    fn file_streams_survive_edge_sizes(
        init in 0usize..20_000,
        backend in prop_oneof![Just(Backend::Mapped), Just(Backend::Buffered)],
        write in any::<bool>(),
        ops in prop::collection::vec(op(), 1..12),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![5u8; init]).unwrap();
        let o = OpenOptions::new().read(true).write(write).backend(backend);
        let s = Stream::open(&p, &o).unwrap();
        let ops: Vec<Op> = if write { ops } else {
            ops.into_iter().filter(|o| !matches!(o, Op::Write(..) | Op::Realloc(_))).collect()
        };
        run(&s, init as u64, &ops)?;
    }
}

/// The reproducers, on a memory stream.
#[test]
fn write_regions_never_wrap_around() {
    let s = Stream::memory();
    let a = s.salloc_mut(1).unwrap();
    let e = s.salloc_mut(usize::MAX).unwrap_err();
    assert!(ok_error(&e), "{e}");
    drop(a);
    let b = s.salloc_mut(4096).unwrap();
    let e = s.salloc_mut(usize::MAX - 100).unwrap_err();
    assert!(ok_error(&e), "{e}");
    drop(b);
    assert_eq!(s.into_vec().unwrap().len(), 4097);
}

/// A request far larger than a small file allocates what the file holds.
#[test]
fn a_huge_read_of_a_small_file_allocates_only_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("small");
    std::fs::write(&p, b"tiny").unwrap();
    for backend in [Backend::Buffered, Backend::Mapped] {
        let s = Stream::open(&p, &OpenOptions::read_only().backend(backend)).unwrap();
        let r = s.salloc(1 << 40).unwrap();
        assert_eq!(&r[..], b"tiny");
        drop(r);
        assert!(s.salloc(usize::MAX).unwrap().is_empty());
    }
}

/// No offset past `off_t`: seeking there fails as `lseek` does, and writing
/// near the limit fails with EFBIG rather than wrapping.
#[test]
fn offsets_stop_at_off_t() {
    let s = Stream::memory();
    assert!(s.seek_to(SeekFrom::Start(u64::MAX)).is_err());
    assert!(s.seek_to(SeekFrom::Start(i64::MAX as u64 + 1)).is_err());
    assert_eq!(
        s.seek_to(SeekFrom::Start(i64::MAX as u64 - 10)).unwrap(),
        i64::MAX as u64 - 10
    );
    let e = s.salloc_mut(11).unwrap_err();
    assert_eq!(ferry::stream::os_error(&e), Some(libc::EFBIG), "{e}");
    assert_eq!(s.position(), i64::MAX as u64 - 10);
}

/// A file that grows after it is opened (and after a first region) gives
/// whole regions of what it holds when they are asked for: a region falls
/// short of its length only at the end, however stale the size the stream
/// last saw. (Regions larger than the stream's buffer, which are cut to
/// the size it last saw.)
#[test]
fn a_file_that_grew_since_it_was_opened_gives_whole_regions() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    for backend in [Backend::Auto, Backend::Buffered] {
        std::fs::write(&p, b"0123456789").unwrap();
        let s = Stream::open(&p, &OpenOptions::read_only().backend(backend)).unwrap();
        let mut w = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        w.write_all(&vec![b'a'; 300_000]).unwrap();
        let r = s.salloc(200_000).unwrap();
        assert_eq!(r.len(), 200_000, "{backend:?}");
        assert_eq!(&r[..10], b"0123456789");
        assert!(r[10..].iter().all(|&b| b == b'a'));
        drop(r);
        w.write_all(&vec![b'b'; 400_000]).unwrap();
        let r = s.salloc(300_000).unwrap();
        assert_eq!(r.len(), 300_000, "{backend:?}");
        assert_eq!(r[100_009], b'a');
        assert_eq!(r[100_010], b'b');
        drop(r);
        let r = s.salloc(1 << 20).unwrap();
        assert_eq!(
            r.len(),
            700_010 - 500_000,
            "{backend:?}: the rest, short at the end"
        );
    }
}

/// A file whose size says nothing (/proc gives 0 and hands out a page of
/// records a read): regions are whole until its real end, however short
/// each read is.
#[test]
fn a_file_whose_size_says_nothing_gives_whole_regions_to_its_end() {
    let p = "/proc/kallsyms";
    let want = std::fs::read(p).unwrap();
    assert!(want.len() > 64 << 10, "{p}: {} bytes", want.len());
    for backend in [Backend::Auto, Backend::Buffered] {
        let s = Stream::open(p, &OpenOptions::read_only().backend(backend)).unwrap();
        let mut got = Vec::new();
        loop {
            let r = s.salloc(100_000).unwrap();
            got.extend_from_slice(&r);
            if r.len() < 100_000 {
                break;
            }
        }
        assert_eq!(got.len(), want.len(), "{backend:?}");
        assert!(got == want);
    }
}
