//! Waits that end: a sender waiting for a slot wakes when one comes back
//! in this process, a receiver's releases stuck on a full socket go as
//! soon as there is room, and the byte faces do not wait for nothing.

use crate::channel;
use std::io::{self, Read, Write};
use std::time::Duration;

on_both_transports! {
/// The only slot is held by a `Buf` in another thread of the sender's
/// process, which drops it while `alloc` waits. `alloc` once waited on
/// the socket alone, so it never saw the slot come back (forever with no
/// timeout, as the C ABI waits).
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn alloc_wakes_when_a_slot_held_in_this_process_goes(transport: Transport) {
    let _g = crate::serial();
    let (mut tx, _rx) = channel(4096, 1, transport);
    tx.set_timeout(Some(Duration::from_secs(20)));
    let held = tx.alloc().unwrap().freeze(0);
    let (go, gone) = std::sync::mpsc::channel();
    let t = std::thread::spawn(move || {
        gone.recv().unwrap();
        // Give `alloc` time to wait; it must wake either way.
        std::thread::sleep(Duration::from_millis(200));
        drop(held);
    });
    go.send(()).unwrap();
    let m = tx.alloc().expect("alloc saw the slot come back");
    t.join().unwrap();
    drop(m);
}
}

on_both_transports! {
/// The receiver drops many buffers while the sender does not read: the
/// releases fill its (small) socket buffer and wait. The receiver then
/// waits for a message while the sender waits for those slots (taking
/// every slot before sending anything). `recv` once waited to read
/// only, so the stuck releases never went: both sides waited.
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn releases_stuck_on_a_full_socket_go_while_the_receiver_waits(transport: Transport) {
    let _g = crate::serial();
    const SLOTS: usize = 64;
    let (a, b) = ferry::ipc::pair().unwrap();
    rustix::net::sockopt::set_socket_send_buffer_size(&b, 1).unwrap();
    let mut tx = ferry::ipc::Sender::new(
        a,
        ferry::ipc::SenderConfig {
            slot_size: 4096,
            slots: SLOTS,
            timeout: Some(Duration::from_secs(20)),
            ring: transport.ring(),
        },
    )
    .unwrap();
    // SAFETY: the peer is the ferry Sender just made.
    let mut rx = unsafe { ferry::ipc::Receiver::new(b, None) }.unwrap();
    rx.set_timeout(Some(Duration::from_secs(20)));
    for i in 0..SLOTS {
        let mut m = tx.alloc().unwrap();
        m[0] = i as u8;
        tx.send(m.freeze(1).into()).unwrap();
    }
    let (dropped, wait) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let held: Vec<_> = (0..SLOTS).map(|_| rx.recv().unwrap().unwrap()).collect();
        drop(held);
        dropped.send(()).unwrap();
        let last = rx.recv()?.map(|m| m.copy_to_vec());
        Ok::<_, io::Error>(last)
    });
    wait.recv().unwrap();
    let all: Vec<_> = (0..SLOTS)
        .map(|_| tx.alloc().expect("every slot came back"))
        .collect();
    drop(all);
    tx.send_bytes(b"end").unwrap();
    assert_eq!(reader.join().unwrap().unwrap().unwrap(), b"end");
}
}

on_both_transports! {
/// `write` of more than the pool holds once failed (`InvalidInput`):
/// `write` may take fewer bytes, so it takes as many as the pool holds,
/// and `write_all` sends the rest after.
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn write_of_more_than_the_pool_writes_part_of_it(transport: Transport) {
    let _g = crate::serial();
    let (mut tx, mut rx) = channel(4096, 2, transport);
    let data: Vec<u8> = (0..5 * 4096 + 17).map(|i| (i % 253) as u8).collect();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        rx.read_to_end(&mut got).map(|_| got)
    });
    assert_eq!(tx.write(&data).unwrap(), 2 * 4096);
    tx.write_all(&data[2 * 4096..]).unwrap();
    tx.close().unwrap();
    let mut all = data[..2 * 4096].to_vec();
    all.extend_from_slice(&data[2 * 4096..]);
    assert!(reader.join().unwrap().unwrap() == all);
}
}

on_both_transports! {
/// `read` into an empty buffer returns 0 at once; it once waited for a
/// message (here: timed out, as nothing comes).
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn read_into_no_room_returns_at_once(transport: Transport) {
    let _g = crate::serial();
    let (mut tx, mut rx) = channel(4096, 2, transport);
    rx.set_timeout(Some(Duration::from_millis(200)));
    assert_eq!(rx.read(&mut []).unwrap(), 0);
    tx.send_bytes(b"still here").unwrap();
    let mut s = String::new();
    drop(tx);
    rx.read_to_string(&mut s).unwrap();
    assert_eq!(s, "still here");
}
}

/// In the thread calling it, makes every `sendmsg(2)` fail with `errno`
/// (a seccomp filter: it goes with the thread).
fn sendmsg_fails_in_this_thread(errno: i32) {
    let filter = [
        // The system call's number...
        libc::sock_filter {
            code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
            jt: 0,
            jf: 0,
            k: 0,
        },
        // ...is sendmsg: fail, else allow.
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: libc::SYS_sendmsg as u32,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | errno as u32,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ALLOW,
        },
    ];
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: plain prctl calls; `prog` points to `filter`, alive here.
    unsafe {
        assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        assert_eq!(
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog
            ),
            0,
            "{}",
            io::Error::last_os_error()
        );
    }
}

/// A release the kernel refuses for want of memory (`ENOBUFS`) once made
/// the receiver take its sender for gone and drop every release for
/// good: the slot never came back. It waits now, and goes with the next
/// call. (Releases are packets only on a channel without rings.)
#[test]
#[cfg_attr(miri, ignore = "memfd, sockets and seccomp")]
fn a_release_refused_for_want_of_memory_goes_later() {
    let _g = crate::serial();
    let (mut tx, mut rx) = channel(4096, 1, crate::Transport::Socket);
    tx.send_bytes(b"x").unwrap();
    let m = rx.recv().unwrap().unwrap();
    std::thread::spawn(move || {
        sendmsg_fails_in_this_thread(libc::ENOBUFS);
        drop(m);
    })
    .join()
    .unwrap();
    assert_eq!(tx.free_slots().unwrap(), 0, "the release cannot have gone");
    rx.set_timeout(Some(Duration::from_millis(100)));
    assert_eq!(rx.recv().unwrap_err().kind(), io::ErrorKind::TimedOut);
    assert_eq!(tx.free_slots().unwrap(), 1);
}
