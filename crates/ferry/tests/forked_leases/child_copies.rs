//! A `Buf` of a leased mapping, seen from a child forked without `exec`,
//! keeps its bytes when a writer comes, whether the parent still holds its
//! own copy when the lease breaks or has dropped it.
//!
//! The bug these tests caught (fixed: a fork snapshots the child's copies
//! before it returns there): the lease belongs to the open file
//! description (shared with the child) and its breaks go to the parent's
//! lease thread, which snapshotted only the parent's copy of the mapping
//! and then gave the lease up. The child's copy of the mapping was still
//! the file's page cache: a writer changed the bytes behind the child's
//! `Buf` — promise (1) broken in the child, from safe ferry calls (`fork`
//! itself is the only unsafe call).

use ferry::Buf;
use std::path::Path;
use std::process::Command;

fn overwrite(path: &Path) {
    let st = Command::new("sh")
        .args([
            "-c",
            "printf XXXXXXXX | dd of=\"$1\" bs=1 seek=100 conv=notrunc status=none",
            "sh",
        ])
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success());
}

fn run(drop_in_parent: bool) {
    let _one = crate::one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    let data: Vec<u8> = (0..3 * 4096).map(|i| (i % 251) as u8).collect();
    std::fs::write(&p, &data).unwrap();
    let f = std::fs::File::open(&p).unwrap();
    let b = Buf::map_file(&f, 0..data.len() as u64).unwrap();
    drop(f);
    assert!(b[..] == data[..]);

    let mut go = [0i32; 2];
    // SAFETY: a plain pipe.
    assert_eq!(unsafe { libc::pipe(go.as_mut_ptr()) }, 0);
    // SAFETY: the child only reads memory, read(2)s and _exit(2)s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let mut c = 0u8;
        // SAFETY: wait for the parent's go.
        unsafe { libc::read(go[0], (&raw mut c).cast(), 1) };
        let same = b[..] == data[..];
        // SAFETY: async-signal-safe exit.
        unsafe { libc::_exit(if same { 0 } else { 42 }) };
    }
    // The parent drops its copy now, or keeps it (snapshotted by the
    // break) alive until the child has looked.
    let kept = if drop_in_parent {
        drop(b);
        None
    } else {
        Some(b)
    };
    overwrite(&p);
    assert_eq!(&std::fs::read(&p).unwrap()[100..108], b"XXXXXXXX");
    // SAFETY: plain write and waitpid.
    unsafe { libc::write(go[1], b"g".as_ptr().cast(), 1) };
    let mut status = 0;
    // SAFETY: waitpid writes one int the call owns.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFEXITED(status));
    assert_eq!(
        libc::WEXITSTATUS(status),
        0,
        "the forked child's Buf changed under it: the writer's bytes show through"
    );
    drop(kept);
}

#[test]
fn a_forked_childs_buf_keeps_its_bytes_when_the_parent_handles_the_break() {
    run(false);
}

#[test]
fn a_forked_childs_buf_keeps_its_bytes_after_the_parent_drops_its_own() {
    run(true);
}
