//! Leased mappings that lose their bytes (a read-only `O_TRUNC` open by
//! another process, which the lease does not announce), and leased
//! mappings in a child forked while other threads use them: whoever holds
//! them learns what they lost, and nothing reads the zeros that replaced
//! them as the file's bytes. Real files, real processes.

use ferry::{MappedFile, OpenOptions, Stream};
use std::io::{ErrorKind, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::one_at_a_time;
use crate::support::{
    bytes_without_zeros as pattern, child_opens_read_only_with_o_trunc, file_with,
};

/// A child forked while another thread asks a leased `Buf` for its
/// `ContentId` (or `is_intact`) must be able to use and drop the `Buf`.
/// The mapping's SIGBUS-guard entry sat behind a mutex that those calls
/// take without the registry's lock, so a fork could copy it locked: the
/// child hung for ever in its first `is_intact()`.
#[test]
fn a_child_forked_while_a_thread_asks_for_content_ids_can_use_the_buf() {
    let _one = one_at_a_time();
    let data = pattern(64 << 10);
    let (_d, p) = file_with(&data);
    let f = std::fs::File::open(&p).unwrap();
    let mapped = MappedFile::open(&f).unwrap();
    let b = mapped.map(0..data.len() as u64).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let spinner = {
        let (b, stop) = (b.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n = n.wrapping_add(b.content_id().generation);
                n = n.wrapping_add(b.is_intact() as u64);
            }
            n
        })
    };
    let mut hung = 0;
    for _ in 0..300 {
        // SAFETY: the child only calls into ferry (no allocation on this
        // path) and leaves with `_exit`.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let ok = b.is_intact() && b[..] == data[..];
            drop(b);
            // SAFETY: ends the child without running the parent's
            // destructors or the test harness.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        if !reaped_within(pid, 20_000) {
            hung += 1;
            // SAFETY: our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            reaped_within(pid, 20_000);
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    spinner.join().unwrap();
    assert_eq!(hung, 0, "children that hung in is_intact()/drop");
    assert!(b[..] == data[..] && b.is_intact());
}

/// Waits up to `ms` milliseconds for child `pid` to end; checks that it
/// ended well. False if it is still running.
fn reaped_within(pid: libc::pid_t, ms: u64) -> bool {
    for _ in 0..ms {
        let mut status = 0;
        // SAFETY: waitpid on our own child with a valid status pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            assert!(
                libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
                    || libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL,
                "child ended with status {status:#x}"
            );
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    false
}

/// A mapped stream read with `Read::read` while another process empties
/// the file with a read-only `O_TRUNC` open: the stream's copy touches the
/// emptied pages and the SIGBUS guard puts zeros there. `read` copied out
/// of the current window without looking for lost pages at all, so
/// `read_to_end` returned `Ok` with a megabyte of zeros, as if the file
/// had held them and then ended.
#[test]
fn a_mapped_stream_reports_bytes_lost_to_an_o_trunc_it_runs_into() {
    let _one = one_at_a_time();
    let data = pattern(4 << 20);
    let (_d, p) = file_with(&data);
    let mut s = Stream::open(&p, &OpenOptions::read_only()).unwrap();
    assert!(s.is_mapped(), "a read-only local file is mapped");
    let mut head = [0u8; 4096];
    s.read_exact(&mut head).unwrap();
    assert!(head[..] == data[..4096]);

    child_opens_read_only_with_o_trunc(&p);

    let mut rest = Vec::new();
    let r = s.read_to_end(&mut rest);
    let zeros = rest.iter().filter(|&&c| c == 0).count();
    match r {
        Err(e) => assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}"),
        Ok(n) => panic!("the stream read {n} bytes ({zeros} zeros) and no error"),
    }
}

/// A mapped stream lends a `Buf`; another process empties the file with a
/// read-only `O_TRUNC` open, and the `Buf`'s `is_intact()` finds it —
/// which puts zeros in place of every mapping of the file, the stream's
/// current window included, without a fault. The stream looked for lost
/// pages only when the SIGBUS guard's count of faults moved, so it read
/// the zeros as the file's bytes and ended as if the file had ended there:
/// `read_to_end` returned `Ok` with a megabyte of zeros.
#[test]
fn a_mapped_stream_reports_bytes_lost_to_an_o_trunc_found_through_its_buf() {
    let _one = one_at_a_time();
    let data = pattern(4 << 20);
    let (_d, p) = file_with(&data);
    let mut s = Stream::open(&p, &OpenOptions::read_only()).unwrap();
    assert!(s.is_mapped(), "a read-only local file is mapped");
    let b = s.salloc(4096).unwrap().into_buf();
    assert!(b[..] == data[..4096]);

    child_opens_read_only_with_o_trunc(&p);
    assert!(!b.is_intact(), "the Buf found the change");

    let mut rest = Vec::new();
    let r = s.read_to_end(&mut rest);
    let zeros = rest.iter().filter(|&&c| c == 0).count();
    match r {
        Err(e) => assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}"),
        Ok(n) => panic!("the stream read {n} bytes ({zeros} zeros) and no error"),
    }
}
