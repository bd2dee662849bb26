//! A leased mapping when a writer comes and memory is short: the snapshot
//! that keeps the `Buf`'s bytes is taken a step at a time, so it needs room
//! for one step's copy beside the mapping, not a copy of the whole; and
//! where not even that can be had, the `Buf` loses its bytes openly —
//! zeros, `is_intact()` false, a new `ContentId` — the writer gets through
//! at once, and the `Buf` never shows the writer's bytes.
//!
//! Before, a 64 MiB mapping under `ulimit -v` with room for the mapping but
//! not its copy kept the writer waiting for the whole lease-break time
//! (45 s), then showed the writer's bytes with `is_intact()` still true.
//!
//! Each test runs in a child process of this binary: the address-space
//! limit (`RLIMIT_AS`) is the whole process's.

use ferry::{Buf, MappedFile};
use std::io::Write;
use std::process::{Command, Stdio};

use crate::support::bytes_without_zeros;
use crate::support::in_child;

const LEN: usize = 64 << 20;

/// This process's address space now, in bytes.
fn vm_size() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with("VmSize:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

fn limit_address_space(bytes: u64) {
    rustix::process::setrlimit(
        rustix::process::Resource::As,
        rustix::process::Rlimit {
            current: Some(bytes),
            maximum: None,
        },
    )
    .unwrap();
}

/// Maps a 64 MiB file, limits the address space to what it uses now plus
/// `room`, then lets another process overwrite the file's first bytes
/// (`dd conv=notrunc`, started before the mapping and waiting for a line on
/// its standard input). Returns the `Buf`, its id before the writer, and
/// the original bytes.
fn map_then_write_under_limit(room: u64) -> (Buf, ferry::ContentId, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let data = bytes_without_zeros(LEN);
    std::fs::write(&path, &data).unwrap();
    let mut writer = Command::new("sh")
        .args([
            "-c",
            "read go; printf WRITER | dd of=\"$1\" conv=notrunc status=none",
            "sh",
        ])
        .arg(&path)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let mapped = MappedFile::open(&f).unwrap();
    let b = mapped.map(0..LEN as u64).unwrap();
    assert!(b[..] == data[..]);
    let id = b.content_id();
    limit_address_space(vm_size() + room);
    writer.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let st = writer.wait().unwrap();
    assert!(st.success(), "writer: {st:?}");
    limit_address_space(u64::MAX);
    assert_eq!(&std::fs::read(&path).unwrap()[..6], b"WRITER");
    (b, id, data)
}

#[test]
fn a_snapshot_needs_room_for_one_step_not_the_whole_copy() {
    if in_child(&test_name!(
        a_snapshot_needs_room_for_one_step_not_the_whole_copy
    )) {
        return;
    }
    // Room for a few MiB of allocations and a step of the copy (8 MiB),
    // far from the 64 MiB a copy of the whole would take.
    let (b, id, data) = map_then_write_under_limit(24 << 20);
    assert!(b[..] == data[..], "the Buf kept its bytes");
    assert!(b.is_intact());
    assert_eq!(b.content_id(), id);
}

#[test]
fn no_memory_for_a_snapshot_loses_the_bytes_openly() {
    if in_child(&test_name!(no_memory_for_a_snapshot_loses_the_bytes_openly)) {
        return;
    }
    // Room for small allocations only: not one step of the copy.
    let (b, id, _) = map_then_write_under_limit(1 << 20);
    assert!(!b.starts_with(b"WRITER"), "never the writer's bytes");
    assert!(b.iter().all(|&x| x == 0), "what was lost reads as zeros");
    assert!(!b.is_intact(), "and the Buf says so");
    assert_ne!(b.content_id(), id);
}
