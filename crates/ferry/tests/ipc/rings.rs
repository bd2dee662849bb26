//! Channels with rings: messages taken without a system call while the
//! receiver is awake, one doorbell for a receiver that sleeps, a message
//! longer than the ring, and hostile peers that write the shared control
//! block (its layout as `ferry::ipc`'s ring module documents it).

use crate::processes::{name, packet, raw_send, receiver, try_raw_send, Peer};
use crate::{channel, serial, Transport};
use ferry::ipc::{self, Sender, SenderConfig};
use ferry::Aggregate;
use std::io::{self, BufRead};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Messages sent while the receiver does not wait put no packet on the
/// socket; the receiver then takes them all from the ring.
#[test]
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn an_awake_receiver_takes_messages_with_no_packet_on_the_socket() {
    let _g = serial();
    let (mut tx, mut rx) = channel(4096, 16, Transport::Ring);
    assert!(rx.has_rings());
    for i in 0..10u8 {
        tx.send_bytes(&[i; 100]).unwrap();
    }
    assert_eq!(tx.stats().packets, 0);
    for i in 0..10u8 {
        assert_eq!(rx.recv().unwrap().unwrap().copy_to_vec(), [i; 100]);
    }
    // The releases came back on the release ring.
    assert_eq!(tx.free_slots().unwrap(), 16);
    // The same on the socket: a packet per message.
    let (mut tx, mut rx) = channel(4096, 16, Transport::Socket);
    assert!(!rx.has_rings());
    tx.send_bytes(b"x").unwrap();
    assert_eq!(rx.recv().unwrap().unwrap().copy_to_vec(), b"x");
    assert_eq!(tx.stats().packets, 1);
}

/// A receiver that sleeps in `recv` is woken by the message sent after
/// it began to wait, however the two race: no wake-up is lost. Each
/// wait that slept costs the sender one doorbell at most.
#[test]
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn a_sleeping_receiver_is_woken_by_each_message() {
    let _g = serial();
    const N: usize = 300;
    let (mut tx, mut rx) = channel(4096, 4, Transport::Ring);
    rx.set_timeout(Some(Duration::from_secs(20)));
    let (ready, go) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for i in 0..N {
            ready.send(()).unwrap();
            let m = rx.recv()?.expect("a message");
            assert_eq!(m.copy_to_vec(), (i as u32).to_le_bytes());
        }
        Ok::<_, io::Error>(())
    });
    for i in 0..N {
        go.recv().unwrap();
        // Now and then, let the receiver fall asleep first.
        if i % 3 == 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
        tx.send_bytes(&(i as u32).to_le_bytes()).unwrap();
    }
    reader.join().unwrap().unwrap();
    assert!(tx.stats().packets <= N as u64, "{:?}", tx.stats());
    assert!(tx.stats().packets > 0, "the receiver never slept?");
}

/// A receiver in an event loop (`will_wait` before each sleep on its
/// socket, `recv` with no time to wait after): every message arrives,
/// in order, however sender and loop race; each wait costs at most one
/// doorbell, and a loop that finds entries waiting does not sleep.
#[test]
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn an_event_loop_receiver_is_rung_once_per_wait_and_loses_no_message() {
    use rustix::event::{poll, PollFd, PollFlags};
    let _g = serial();
    const N: u32 = 2000;
    for transport in [Transport::Ring, Transport::Socket] {
        let (a, b) = ipc::pair().unwrap();
        let watched = b.as_fd().try_clone_to_owned().unwrap();
        let mut tx = Sender::new(
            a,
            SenderConfig {
                slot_size: 4096,
                slots: 8,
                ring: transport.ring(),
                timeout: Some(Duration::from_secs(20)),
            },
        )
        .unwrap();
        // SAFETY: the peer is the ferry Sender just made.
        let mut rx = unsafe { ipc::Receiver::new(b, None) }.unwrap();
        rx.set_timeout(Some(Duration::ZERO));
        let writer = std::thread::spawn(move || {
            for i in 0..N {
                if i % 7 == 0 {
                    std::thread::sleep(Duration::from_micros(300));
                }
                tx.send_bytes(&i.to_le_bytes())?;
            }
            Ok::<_, io::Error>(tx)
        });
        let mut next = 0u32;
        let mut sleeps = 0u64;
        let mut calls = 0u64;
        while next < N {
            calls += 1;
            if !rx.will_wait().unwrap() {
                sleeps += 1;
                let mut p = [PollFd::new(&watched, PollFlags::IN)];
                let ready = poll(
                    &mut p,
                    Some(&rustix::time::Timespec {
                        tv_sec: 10,
                        tv_nsec: 0,
                    }),
                )
                .unwrap();
                assert_eq!(ready, 1, "{transport:?}: no doorbell for message {next}");
            }
            loop {
                match rx.recv() {
                    Ok(Some(m)) => {
                        assert_eq!(m.copy_to_vec(), next.to_le_bytes(), "{transport:?}");
                        next += 1;
                    }
                    Err(e) if e.kind() == io::ErrorKind::TimedOut => break,
                    other => panic!("{transport:?}: {other:?}"),
                }
            }
        }
        let tx = writer.join().unwrap().unwrap();
        if transport == Transport::Ring {
            // One doorbell per call at most (a call that found entries
            // may still have been rung for), and far fewer than messages.
            assert!(
                tx.stats().packets <= calls,
                "{} doorbells for {calls} calls ({sleeps} sleeps)",
                tx.stats().packets
            );
            assert!(sleeps > 0, "the loop never slept");
        }
    }
}

/// One message of more pieces than the tx ring has entries: the sender
/// waits for room while the receiver takes them, and the message arrives
/// whole.
#[test]
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn a_message_longer_than_the_ring_waits_for_room() {
    let _g = serial();
    let (mut tx, mut rx) = channel(4096, 1, Transport::Ring);
    tx.set_timeout(Some(Duration::from_secs(20)));
    rx.set_timeout(Some(Duration::from_secs(20)));
    let mut s = tx.alloc().unwrap();
    for (i, b) in s.iter_mut().enumerate() {
        *b = (i % 253) as u8;
    }
    let b = s.freeze(4096);
    let mut msg = Aggregate::new();
    for i in 0..4000 {
        msg.append_buf(b.slice(i..i + 1));
    }
    let reader = std::thread::spawn(move || rx.recv());
    tx.send(msg).unwrap();
    let got = reader.join().unwrap().unwrap().unwrap();
    assert_eq!(got.slice_count(), 4000);
    assert_eq!(got.copy_to_vec(), &b.as_slice()[..4000]);
}

/// Every reference out may come back as a release entry of its own, so a
/// sender keeps no more out than its release ring holds: a message of
/// more pieces is refused before anything goes, and with the receiver
/// holding every message it took, the sender waits (here, times out),
/// then goes on once they are dropped.
#[test]
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn references_out_are_bounded_by_the_release_ring() {
    let _g = serial();
    let (mut tx, mut rx) = channel(4096, 1, Transport::Ring);
    tx.set_timeout(Some(Duration::from_millis(100)));
    let b = tx.alloc().unwrap().freeze(4096);
    let mut big = Aggregate::new();
    for i in 0..1 << 17 {
        big.append_buf(b.slice(i % 4096..i % 4096 + 1));
    }
    let err = tx.send(big).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err:?}");
    assert_eq!(tx.stats().refs_sent, 0);
    let mut held = Vec::new();
    let err = loop {
        match tx.send(b.slice(5..6).into()) {
            Ok(()) => held.push(rx.recv().unwrap().unwrap()),
            Err(e) => break e,
        }
    };
    assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err:?}");
    assert!(held.len() >= 256, "{} held", held.len());
    assert!(held.iter().all(|m| m.copy_to_vec() == [b[5]]));
    drop(held);
    tx.send(b.slice(7..8).into()).unwrap();
    assert_eq!(rx.recv().unwrap().unwrap().copy_to_vec(), [b[7]]);
}

/// A busy-polling receiver (`set_spin`) gets every message of a
/// ping-pong between two threads, and one that polls with a zero timeout
/// sees a sender that went away.
#[test]
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn spinning_receivers_ping_pong_and_see_the_end() {
    let _g = serial();
    let (mut a_tx, mut b_rx) = channel(4096, 4, Transport::Ring);
    let (mut b_tx, mut a_rx) = channel(4096, 4, Transport::Ring);
    a_rx.set_spin(Duration::from_millis(50));
    b_rx.set_spin(Duration::from_millis(50));
    let pong = std::thread::spawn(move || {
        while let Some(m) = b_rx.recv()? {
            let mut s = b_tx.alloc()?;
            let n = m.copy_to_slice(0, &mut s);
            b_tx.send(s.freeze(n).into())?;
        }
        Ok::<_, io::Error>(())
    });
    for i in 0..2000u32 {
        a_tx.send_bytes(&i.to_le_bytes()).unwrap();
        let back = a_rx.recv().unwrap().unwrap();
        assert_eq!(back.copy_to_vec(), i.to_le_bytes());
    }
    a_tx.close().unwrap();
    pong.join().unwrap().unwrap();
    // The pong side's sender is gone without a BYE of its own? It was
    // dropped at the end of its thread: an orderly end.
    assert!(a_rx.recv().unwrap().is_none());

    let (tx, mut rx) = channel(4096, 4, Transport::Ring);
    rx.set_timeout(Some(Duration::ZERO));
    assert_eq!(rx.recv().unwrap_err().kind(), io::ErrorKind::TimedOut);
    tx.abort();
    let err = loop {
        match rx.recv() {
            Err(e) if e.kind() == io::ErrorKind::TimedOut => std::hint::spin_loop(),
            r => break r.unwrap_err(),
        }
    };
    assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
}

/// A sender process that keeps the protocol of the sockets but not of the
/// rings: a control block unsealed, too small, of impossible shape or
/// missing, indices past the ring, entries of no known form, a release
/// entry among the messages, a slot out of range or reused while held,
/// and a packet on the socket beside the ring. Each is an `InvalidData`
/// error for that channel, never a read outside the pool, and the
/// receiver's process goes on.
#[test]
#[cfg_attr(miri, ignore = "memfd, sockets and processes")]
fn ipc_hostile_ring_senders_are_errors_for_that_channel() {
    let _g = serial();
    let n = name("ring-hostile");
    let l = ipc::Listener::bind(&n).unwrap();
    let at_connect = ["ctl-unsealed", "ctl-small", "ctl-shape", "ctl-missing"];
    let at_recv = [
        "head-too-far",
        "head-behind",
        "bad-kind",
        "reserved",
        "release-in-tx",
        "slot-out-of-range",
        "reuse-while-held",
        "packet-beside-ring",
    ];
    for case in at_connect.iter().chain(&at_recv) {
        let mut peer = Peer::start(&format!("ring-sender-{case}"), &n, Transport::Ring);
        let sock = l.accept(Some(Duration::from_secs(30))).unwrap();
        assert_eq!(peer.line(), "sent", "{case}");
        let r = receiver(sock, Some(Duration::from_secs(30)));
        if at_connect.contains(case) {
            let err = r.expect_err(case);
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{case}: {err:?}");
            continue;
        }
        let mut rx = r.unwrap_or_else(|e| panic!("{case}: {e}"));
        rx.set_timeout(Some(Duration::from_secs(10)));
        let mut held = Vec::new();
        let err = loop {
            match rx.recv() {
                Ok(Some(m)) => held.push(m),
                Ok(None) => panic!("{case}: a clean end"),
                Err(e) => break e,
            }
        };
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{case}: {err:?}");
        assert_eq!(rx.recv().unwrap_err().kind(), io::ErrorKind::InvalidData);
        for m in &held {
            assert!(m.copy_to_vec().iter().all(|&b| b == 0), "{case}");
        }
        peer.tell("done");
        drop(peer);
    }
}

/// A receiver process that writes the control block against a ferry
/// sender: a release of a slot it was never sent, a tx tail moved past
/// what was published, or a release packet beside the ring. The sender
/// fails with `InvalidData` once it reads what was written.
#[test]
#[cfg_attr(miri, ignore = "memfd, sockets and processes")]
fn ipc_hostile_ring_receivers_are_errors_for_the_sender() {
    let _g = serial();
    let n = name("ring-bad-receiver");
    let l = ipc::Listener::bind(&n).unwrap();
    for case in ["release-unsent", "tail-too-far", "release-packet"] {
        let mut peer = Peer::start(&format!("ring-receiver-{case}"), &n, Transport::Ring);
        let mut tx = Sender::new(
            l.accept(Some(Duration::from_secs(30))).unwrap(),
            SenderConfig {
                slot_size: 4096,
                slots: 4,
                timeout: Some(Duration::from_secs(5)),
                ring: true,
            },
        )
        .unwrap();
        assert_eq!(peer.line(), "sent", "{case}");
        // Messages of more pieces than the tx ring holds: the sender reads
        // the receiver's tail when its ring looks full, takes releases
        // with every slot, and looks at the socket when it waits for one.
        let b = match tx.alloc() {
            Ok(s) => s.freeze(300),
            Err(e) => {
                assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{case}: {e:?}");
                peer.tell("done");
                continue;
            }
        };
        let err = loop {
            let mut m = Aggregate::new();
            for i in 0..300 {
                m.append_buf(b.slice(i..i + 1));
            }
            match tx.send(m) {
                Ok(()) => {}
                Err(e) => break e,
            }
        };
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{case}: {err:?}");
        peer.tell("done");
    }
}

pub(crate) const TX_HEAD: usize = 8;
pub(crate) const TX_TAIL: usize = 16;
const REL_HEAD: usize = 32;
pub(crate) const ENTRIES: usize = 128;
pub(crate) const TX_CAP: u64 = 256;
pub(crate) const REL_CAP: u64 = 64;

/// A control block mapped read-write in this process.
pub(crate) struct Control {
    ptr: *mut AtomicU64,
    words: usize,
}

// SAFETY: the mapping is only ever accessed through atomics, from any
// thread, and is never unmapped while the test's process lives.
unsafe impl Send for Control {}
// SAFETY: as above.
unsafe impl Sync for Control {}

impl Control {
    pub(crate) fn map(fd: &OwnedFd, words: usize) -> Control {
        // SAFETY: a new shared mapping of the whole memfd (at least
        // `words` words, as the caller sized or checked it); it aliases
        // no Rust object and is accessed only through atomics.
        let p = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                words * 8,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::SHARED,
                fd,
                0,
            )
        }
        .unwrap();
        Control {
            ptr: p.cast(),
            words,
        }
    }

    fn words(&self) -> &[AtomicU64] {
        // SAFETY: page-aligned, `words` long, mapped for the life of the
        // test's process (never unmapped).
        unsafe { std::slice::from_raw_parts(self.ptr, self.words) }
    }

    pub(crate) fn set(&self, w: usize, v: u64) {
        self.words()[w].store(v, Ordering::SeqCst);
    }

    pub(crate) fn get(&self, w: usize) -> u64 {
        self.words()[w].load(Ordering::SeqCst)
    }

    /// Writes entry `i` of the ring whose entries start at word `base`.
    fn entry(&self, base: usize, cap: u64, i: u64, e: [u64; 4]) {
        let at = base + (i % cap) as usize * 4;
        for (k, v) in e.into_iter().enumerate() {
            self.set(at + k, v);
        }
    }
}

fn buf_entry(slot: u32, off: u32, len: u32, generation: u64, end: bool) -> [u64; 4] {
    [
        1 | u64::from(end) << 8 | u64::from(slot) << 32,
        u64::from(off) | u64::from(len) << 32,
        generation,
        0,
    ]
}

fn stdin_line() {
    let mut l = String::new();
    io::stdin().lock().read_line(&mut l).unwrap();
}

/// Sends HELLO with `fds` attached.
pub(crate) fn send_with_fds(s: &OwnedFd, bytes: &[u8], fds: &[&OwnedFd]) {
    use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
    let mut space = [std::mem::MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds: Vec<_> = fds.iter().map(|f| f.as_fd()).collect();
    assert!(control.push(SendAncillaryMessage::ScmRights(&fds)));
    rustix::net::sendmsg(
        s,
        &[io::IoSlice::new(bytes)],
        &mut control,
        SendFlags::NOSIGNAL,
    )
    .unwrap();
}

/// A memfd of `len` bytes sealed with `seals` (a pool or control block
/// made by hand).
pub(crate) fn memfd(name: &str, len: u64, seals: rustix::fs::SealFlags) -> OwnedFd {
    use rustix::fs::MemfdFlags;
    let fd =
        rustix::fs::memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING).unwrap();
    rustix::fs::ftruncate(&fd, len).unwrap();
    rustix::fs::fcntl_add_seals(&fd, seals).unwrap();
    fd
}

/// The peer: a sender that writes the rings as `case` says.
pub(crate) fn hostile_ring_sender(name: &str, case: &str, say: impl Fn(&str)) {
    use rustix::fs::SealFlags;
    let s: OwnedFd = ipc::connect(name).unwrap().into();
    let (slot_size, slots) = (4096u64, 4u64);
    let pool = memfd(
        "hostile",
        slot_size * slots,
        SealFlags::SHRINK | SealFlags::GROW | SealFlags::FUTURE_WRITE,
    );
    let words = ENTRIES + (TX_CAP + REL_CAP) as usize * 4;
    let ctl_len = if case == "ctl-small" {
        4096
    } else {
        (words * 8) as u64
    };
    let ctl_seals = if case == "ctl-unsealed" {
        SealFlags::empty()
    } else {
        SealFlags::SHRINK | SealFlags::GROW
    };
    let ctl = memfd("hostile-ring", ctl_len, ctl_seals);
    let mut hello = packet(1, 1, &[]);
    hello.extend_from_slice(&slot_size.to_le_bytes());
    hello.extend_from_slice(&slots.to_le_bytes());
    hello.extend_from_slice(&(if case == "ctl-shape" { 3 } else { TX_CAP }).to_le_bytes());
    hello.extend_from_slice(&REL_CAP.to_le_bytes());
    if case == "ctl-missing" {
        send_with_fds(&s, &hello, &[&pool]);
    } else {
        send_with_fds(&s, &hello, &[&pool, &ctl]);
    }
    let c = Control::map(&ctl, (ctl_len / 8) as usize);
    let publish = |entries: &[[u64; 4]]| {
        let head = c.get(TX_HEAD);
        for (i, &e) in entries.iter().enumerate() {
            c.entry(ENTRIES, TX_CAP, head + i as u64, e);
        }
        c.set(TX_HEAD, head + entries.len() as u64);
    };
    match case {
        "head-too-far" => c.set(TX_HEAD, TX_CAP + 1),
        "head-behind" => c.set(TX_HEAD, u64::MAX),
        "bad-kind" => publish(&[[9, 0, 0, 0]]),
        "reserved" => publish(&[[buf_entry(0, 0, 1, 1, true)[0], 1 << 32, 1, 7]]),
        "release-in-tx" => publish(&[[5 | 1 << 32, 1 << 32, 1, 0]]),
        "slot-out-of-range" => publish(&[buf_entry(4, 0, 1, 1, true)]),
        "reuse-while-held" => {
            publish(&[buf_entry(1, 0, 10, 5, true), buf_entry(1, 0, 10, 6, true)])
        }
        "packet-beside-ring" => raw_send(&s, &packet(2, 1, &[(0, 0, 1, 1)]), None),
        _ => {}
    }
    // A doorbell, for a receiver already asleep.
    let _ = try_raw_send(&s, &packet(5, 0, &[]), None);
    say("sent");
    stdin_line();
}

/// The peer: a receiver that writes the control block as `case` says.
pub(crate) fn hostile_ring_receiver(name: &str, case: &str, say: impl Fn(&str)) {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
    let s: OwnedFd = ipc::connect(name).unwrap().into();
    let mut buf = [0u8; 2048];
    let mut space = [std::mem::MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    rustix::net::recvmsg(
        &s,
        &mut [io::IoSliceMut::new(&mut buf)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )
    .unwrap();
    let mut fds = Vec::new();
    for m in control.drain() {
        if let RecvAncillaryMessage::ScmRights(it) = m {
            fds.extend(it);
        }
    }
    assert_eq!(fds.len(), 2, "a pool and a control block");
    let tx_cap = u64::from_le_bytes(buf[32..40].try_into().unwrap());
    let rel_cap = u64::from_le_bytes(buf[40..48].try_into().unwrap());
    let words = ENTRIES + (tx_cap + rel_cap) as usize * 4;
    let c = Control::map(&fds[1], words);
    let rel_base = ENTRIES + tx_cap as usize * 4;
    match case {
        "release-unsent" => {
            c.entry(rel_base, rel_cap, 0, [5 | 2 << 32, 1 << 32, 1, 0]);
            c.set(REL_HEAD, 1);
        }
        "tail-too-far" => c.set(TX_TAIL, 1000),
        _ => raw_send(&s, &packet(3, 0, &[(0, 0, 1, 1)]), None),
    }
    say("sent");
    stdin_line();
}
