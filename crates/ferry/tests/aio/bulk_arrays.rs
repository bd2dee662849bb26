//! Typed arrays (bulk) through AsyncFile's one-call ReadArray /
//! WriteArray, which take the file's own sequential position (not the
//! descriptor's offset), and short or failing inputs and outputs.

use ferry::aio::{AsyncFile, Backend};
use ferry::bulk::{incomplete, Endian, ReadArray, WriteArray};
use std::io::{Read, Write};

fn foreign() -> Endian {
    if cfg!(target_endian = "little") {
        Endian::Big
    } else {
        Endian::Little
    }
}

/// `AsyncFile::write_array_in` writes at the file's sequential position
/// (`bulk::write_fd(.., Some(at))`). In a foreign byte order `write_fd`
/// goes through `swapped_write`, whose closure calls
/// `fileio::write_all(fd, kind, piece, None)` — `at` dropped: the
/// elements land at the descriptor's own offset (0 here: aio never moves
/// it), not at the position, while the position moves as if they had.
#[test]
fn a_swapped_array_write_lands_at_the_position() {
    for b in [Backend::IoUring, Backend::Threads] {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let mut f = AsyncFile::with_options(
            &p,
            std::fs::File::options().read(true).write(true).create(true),
            b,
        )
        .unwrap();
        f.seek(16).unwrap();
        f.write_array_in(&[0x0102_0304u32, 0x0506_0708], Endian::Big)
            .unwrap();
        assert_eq!(f.position(), 24);
        let got = std::fs::read(&p).unwrap();
        let mut want = vec![0u8; 16];
        want.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(
            got, want,
            "{b:?}: the big-endian array went to the descriptor's offset"
        );
        // The native order takes the position, as the docs say.
        f.seek(40).unwrap();
        f.write_array_in(&[9u8], foreign()).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 41);
    }
}

/// `AsyncFile::read_array_in` of a file that ends inside an element: the
/// partial element's bytes stay readable (the position is left after the
/// whole elements), so `Incomplete::unread` must be true. `read_fd` reads
/// with `pread` (the descriptor's offset never moved) and then "puts
/// back" the partial bytes with `seek_by(fd, -3)` — on an offset of 0,
/// EINVAL, so it says `unread: false` ("the error is the only copy");
/// on a descriptor whose offset is past 3, it silently moves that offset.
#[test]
fn a_short_async_array_read_says_the_partial_element_is_unread() {
    for b in [Backend::IoUring, Backend::Threads] {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, [1u8, 0, 0, 0, 2, 0, 0]).unwrap();
        let mut f = AsyncFile::with_options(&p, std::fs::File::options().read(true), b).unwrap();
        let mut v = [0u32; 2];
        let e = f.read_array_in(&mut v, Endian::Little).unwrap_err();
        let inc = incomplete(&e).unwrap();
        assert_eq!((inc.elements, inc.partial.len()), (1, 3));
        assert_eq!(f.position(), 4);
        assert!(
            inc.unread,
            "{b:?}: {e} — yet the 3 bytes are still at the position"
        );
    }
}

/// A descriptor with an offset of its own (opened, read 100 bytes into,
/// then made an AsyncFile): the short array read must not move that
/// offset.
#[test]
fn a_short_async_array_read_leaves_the_descriptor_offset() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    let mut data = vec![0u8; 100];
    data.extend_from_slice(&[1, 0, 0, 0, 2, 0, 0]);
    std::fs::write(&p, &data).unwrap();
    let mut file = std::fs::File::open(&p).unwrap();
    let mut skip = [0u8; 100];
    file.read_exact(&mut skip).unwrap();
    let raw = std::os::fd::OwnedFd::from(file);
    let dup = raw.try_clone().unwrap();
    let mut f = AsyncFile::from_fd(raw, Backend::Threads).unwrap();
    assert_eq!(f.position(), 100);
    let mut v = [0u32; 2];
    let _ = f.read_array_in(&mut v, Endian::Little).unwrap_err();
    let mut d = std::fs::File::from(dup);
    let off = std::io::Seek::stream_position(&mut d).unwrap();
    assert_eq!(
        off, 100,
        "the descriptor's offset was moved by a pread-based read"
    );
}

/// A ferry Stream on /dev/full: `write_array` fails (ENOSPC), and the
/// error's element count must be the elements in the file — none.
#[test]
fn a_stream_array_write_to_dev_full_counts_no_elements() {
    let s = ferry::Stream::open("/dev/full", &ferry::OpenOptions::write_truncate()).unwrap();
    let mut s = s;
    let items: Vec<u32> = (0..100_000).collect();
    for order in [Endian::Native, foreign()] {
        match s.write_array_in(&items, order) {
            Ok(()) => {
                let e = s.flush().unwrap_err();
                panic!("{order:?}: write_array said Ok; the error came at flush: {e}");
            }
            Err(e) => {
                let inc = incomplete(&e).expect("an Incomplete");
                assert_eq!(
                    inc.elements, 0,
                    "{order:?}: {e}: elements said written to /dev/full"
                );
            }
        }
    }
}

/// A pipe with 10 bytes of u128 (16 bytes each): nothing whole, and the
/// 10 bytes are in the error (a pipe cannot put them back).
#[test]
fn u128_from_a_pipe_keeps_the_partial_in_the_error() {
    let (r, mut w) = std::io::pipe().unwrap();
    w.write_all(&[7u8; 10]).unwrap();
    drop(w);
    let mut v = [0u128; 2];
    let mut file = std::fs::File::from(std::os::fd::OwnedFd::from(r));
    let e = file.read_array_in(&mut v, Endian::Big).unwrap_err();
    let inc = incomplete(&e).unwrap();
    assert_eq!(
        (inc.elements, inc.partial.len(), inc.unread),
        (0, 10, false)
    );
}
