//! Attack (fixed: a fork snapshots the child's copies before it returns
//! there): a `Buf` of a leased mapping, seen from a child forked without
//! `exec`. The lease belongs to the open file description (shared with the
//! child) and its breaks go to the parent's lease thread, which snapshots
//! only the parent's copy of the mapping and then gives the lease up. The
//! child's copy of the mapping is still the file's page cache: a writer
//! changes the bytes behind the child's `Buf` — promise (1) broken in the
//! child, from safe ferry calls (`fork` itself is the only unsafe call).

use ferry::Buf;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

/// The two tests run one at a time. A child forked without `exec` holds
/// a copy of every descriptor the process had at that moment, including
/// the other test's descriptor of its file while `fs::write` has it open
/// for writing; as long as that child lives, no read lease can be had on
/// that file and the other test's `map_file` fails with `WouldBlock`.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

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
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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
fn attack_forked_child_buf_changes_when_parent_handles_the_break() {
    run(false);
}

#[test]
fn attack_forked_child_buf_changes_after_parent_drops() {
    run(true);
}
