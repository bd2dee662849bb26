//! `Buf::map_file` on real files (read-only, with no writer: a file open
//! for writing cannot be leased, see `tests/mapping/leases.rs`).

use crate::support::read_only_file_with;
use ferry::Buf;
use std::io::ErrorKind;

#[test]
fn maps_unaligned_ranges_and_outlives_the_file() {
    let data: Vec<u8> = (0..3 * 4096 + 123).map(|i| (i % 253) as u8).collect();
    let (_dir, f) = read_only_file_with(&data);
    for (s, e) in [
        (0, 1),
        (1, 4097),
        (4095, 4097),
        (8192, data.len() as u64),
        (0, data.len() as u64),
    ] {
        let b = Buf::map_file(&f, s..e).unwrap();
        assert_eq!(&b[..], &data[s as usize..e as usize], "range {s}..{e}");
    }
    let b = Buf::map_file(&f, 100..5000).unwrap();
    let slice = b.slice(1000..1010);
    drop(f);
    drop(b);
    assert_eq!(&slice[..], &data[1100..1110]);
    assert!(slice.try_into_mut().is_err(), "a mapping is read-only");
}

#[test]
fn past_the_end_and_reversed_ranges_are_errors() {
    let (_dir, f) = read_only_file_with(b"0123456789");
    let e = Buf::map_file(&f, 5..11).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof);
    assert!(e.to_string().contains("10-byte file"), "{e}");
    #[allow(clippy::reversed_empty_ranges)]
    let e = Buf::map_file(&f, 6..5).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(Buf::map_file(&f, 10..10).unwrap().is_empty());
}

#[test]
fn write_only_file_cannot_be_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("w");
    std::fs::write(&p, b"abc").unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    // Safely: it is open for writing, so no lease.
    let e = Buf::map_file(&f, 0..3).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::WouldBlock, "{e}");
    // Unchecked: mmap needs a readable descriptor.
    // SAFETY: nothing is mapped (the call fails).
    let e = unsafe { Buf::map_file_unchecked(&f, 0..3) }.unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EACCES), "{e}");
}

#[test]
fn mappings_are_released_with_the_last_reference() {
    // A named file, so that only its own mappings are counted (other tests
    // map files concurrently), mapped at every other page, so that the
    // kernel cannot merge neighbouring mappings into one.
    let (dir, file) = read_only_file_with(&vec![7u8; 1 << 20]);
    let path = dir.path().join("f").to_str().unwrap().to_string();
    let count = || {
        std::fs::read_to_string("/proc/self/maps")
            .unwrap()
            .lines()
            .filter(|l| l.ends_with(path.as_str()))
            .count()
    };
    let file = &file;
    assert_eq!(count(), 0);
    let bufs: Vec<Buf> = (0..20)
        .map(|i| Buf::map_file(file, i * 8192..i * 8192 + 4096).unwrap())
        .collect();
    assert_eq!(count(), 20);
    drop(bufs);
    assert_eq!(count(), 0);
}
