//! `ferry::sort`'s errors name what failed: an input that cannot be read
//! (by its position and name), an input of records cut short, a temporary
//! directory that is missing, one that fills up (a small tmpfs in a mount
//! namespace of the test's own where it may make one; else a directory it
//! may not write), and an output that fails.

use crate::support;

use ferry::sort::{ByteKey, Error, Framing, Input, Place, Sorter};
use std::io;
use std::path::{Path, PathBuf};

/// Lines enough for many runs with a budget of 192 KiB (64 KiB pieces).
fn text(lines: u32) -> Vec<u8> {
    (0..lines)
        .flat_map(|i| format!("{:010} some words to sort\n", (i * 7919) % lines).into_bytes())
        .collect()
}

/// Sorts `data` through runs in `dir`: the error it ends with.
fn sort_in(dir: &Path, data: &[u8]) -> io::Error {
    Sorter::lines(ByteKey::WHOLE)
        .memory(3 << 16)
        .temp_dir(dir)
        .sort([Input::bytes(data)])
        .and_then(|s| s.into_vec())
        .expect_err("the sort must fail")
}

#[test]
fn an_unreadable_input_is_named_by_position_and_name() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("ok");
    std::fs::write(&ok, b"b\na\n").unwrap();
    let missing = dir.path().join("missing");
    let e = Sorter::lines(ByteKey::WHOLE)
        .sort([
            Input::path(&ok),
            Input::path(&missing).named("the missing one"),
        ])
        .err()
        .expect("a missing input");
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
    assert!(e.to_string().contains("the missing one"), "{e}");
    let (place, cause) = Error::into_parts(e).unwrap();
    assert_eq!(
        place,
        Place::Input {
            index: 1,
            name: "the missing one".into()
        }
    );
    assert_eq!(cause.raw_os_error(), Some(libc::ENOENT));
    // A directory as an input: the read fails, and says which input.
    let e = Sorter::lines(ByteKey::WHOLE)
        .merge([Input::path(&ok), Input::path(dir.path())])
        .err()
        .expect("a directory");
    let s = Error::of(&e).unwrap();
    assert!(matches!(s.place(), Place::Input { index: 1, .. }), "{e}");
    assert_eq!(s.cause().raw_os_error(), Some(libc::EISDIR));
}

#[test]
fn records_cut_short_are_an_error_naming_the_input() {
    for memory in [3 << 16, 64 << 20] {
        let data = vec![7u8; 100_003];
        let e = Sorter::new(Framing::Records(10), ByteKey::new(0, 4))
            .memory(memory)
            .sort([
                Input::bytes(&data[..50]),
                Input::bytes(&data).named("short"),
            ])
            .err()
            .expect("a partial record");
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            Error::of(&e).unwrap().place(),
            &Place::PartialRecord {
                index: 1,
                name: "short".into(),
                len: 100_003,
                size: 10
            },
            "{memory}"
        );
        assert!(e.to_string().contains("short: 100003 bytes"), "{e}");
    }
    let e = Sorter::new(Framing::Records(0), ByteKey::WHOLE)
        .sort([Input::bytes(b"x")])
        .err()
        .expect("records of no size");
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
}

#[test]
fn a_missing_temporary_directory_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let e = sort_in(&gone, &text(40_000));
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
    assert!(e.to_string().contains(&*gone.to_string_lossy()), "{e}");
    assert_eq!(
        Error::of(&e).unwrap().place(),
        &Place::TempDir(gone.clone())
    );
    // Everything in one piece needs no temporary file.
    let small = Sorter::lines(ByteKey::WHOLE)
        .temp_dir(&gone)
        .sort([Input::bytes(b"b\na\n")])
        .unwrap();
    assert_eq!(small.into_vec().unwrap(), b"a\nb\n");
}

/// The variable that tells the test's child where its tmpfs is.
const TINY: &str = "FERRY_SORT_TINY_TMPFS";

/// A temporary directory that fills: a 256 KiB tmpfs, mounted in a mount
/// namespace of the test's own (`unshare -m`, as root): the write of a run
/// fails with ENOSPC, named after the directory, and nothing is left in
/// it. Where no tmpfs can be had, a directory the test may not write
/// (mode 0555, not root): creating the run fails with EACCES, named. Run
/// as root with no way to mount, a file in the directory's place.
#[test]
fn a_full_temporary_directory_is_an_error_naming_it() {
    let name = test_name!(a_full_temporary_directory_is_an_error_naming_it);
    if let Some(tiny) = std::env::var_os(TINY) {
        // In the child, inside the namespace: the tmpfs is mounted.
        let tiny = PathBuf::from(tiny);
        let e = sort_in(&tiny, &text(40_000));
        let (place, cause) = Error::into_parts(e).unwrap();
        let Place::Temp(file) = place else {
            panic!("{place:?}: {cause}");
        };
        assert!(file.starts_with(&*tiny.to_string_lossy()), "{file}");
        assert_eq!(cause.raw_os_error(), Some(libc::ENOSPC), "{cause}");
        assert_eq!(std::fs::read_dir(&tiny).unwrap().count(), 0, "left behind");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tiny = dir.path().join("tiny");
    std::fs::create_dir(&tiny).unwrap();
    let wrapper = "mount -t tmpfs -o size=256k tmpfs \"$0\" || exit 77; exec \"$@\"";
    let child = support::in_child_under(
        &name,
        &[
            "unshare",
            "-m",
            "--propagation",
            "private",
            "sh",
            "-c",
            wrapper,
        ],
        &tiny,
        TINY,
    );
    match child {
        Ok(()) => return,
        Err(Some(77)) | Err(None) => {
            eprintln!("no tmpfs to be had here: a directory that cannot be written instead")
        }
        Err(Some(code)) => panic!("the child failed: status {code}"),
    }
    let (unwritable, expect) = if rustix::process::geteuid().is_root() {
        let f = dir.path().join("a file");
        std::fs::write(&f, b"").unwrap();
        (f, libc::ENOTDIR)
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tiny, std::fs::Permissions::from_mode(0o555)).unwrap();
        (tiny, libc::EACCES)
    };
    let e = sort_in(&unwritable, &text(40_000));
    assert!(
        e.to_string().contains(&*unwritable.to_string_lossy()),
        "{e}"
    );
    let (place, cause) = Error::into_parts(e).unwrap();
    assert_eq!(place, Place::TempDir(unwritable));
    assert_eq!(cause.raw_os_error(), Some(expect), "{cause}");
}

/// An output that fails ends the sort with its error, as the output's.
#[test]
fn a_failing_output_is_the_outputs_error() {
    let data = text(100_000);
    for memory in [3 << 16, 64 << 20] {
        let sorted = Sorter::lines(ByteKey::WHOLE)
            .memory(memory)
            .sort([Input::bytes(&data)])
            .unwrap();
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let e = sorted
            .write_to_fd(std::os::fd::AsFd::as_fd(&full))
            .expect_err("/dev/full");
        let s = Error::of(&e).unwrap();
        assert_eq!(s.place(), &Place::Output, "{memory}");
        assert_eq!(s.cause().raw_os_error(), Some(libc::ENOSPC));
    }
}
