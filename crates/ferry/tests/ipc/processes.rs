//! ipc channels between real processes: this test binary runs itself as
//! the peer (`ipc_peer`, chosen by `FERRY_IPC_ROLE`), connected through an
//! abstract Unix name. Covers the protocol end to end, kill -9 of either
//! side mid-transfer (no file left anywhere, the survivor goes on),
//! backpressure, a receiver that never reads, and hostile peers that
//! write raw packets.

use ferry::ipc::{self, Receiver, Sender, SenderConfig};
use ferry::Aggregate;
use std::io::{self, BufRead, BufReader, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use crate::{serial, Transport};

pub(crate) fn name(tag: &str) -> String {
    format!("ferry-test-ipc-{}-{tag}", std::process::id())
}

/// Message `i`: its number, then `i % 251` repeated; lengths vary so that
/// messages span several slots.
fn message(i: u64) -> Vec<u8> {
    let len = 8 + (i as usize * 7919) % 20000;
    let mut v = vec![(i % 251) as u8; len];
    v[..8].copy_from_slice(&i.to_le_bytes());
    v
}

fn check_message(got: &[u8]) -> Option<u64> {
    let i = u64::from_le_bytes(got.get(..8)?.try_into().ok()?);
    (got == message(i).as_slice()).then_some(i)
}

pub(crate) struct Peer {
    child: Child,
    out: BufReader<ChildStdout>,
    _tmp: tempfile::TempDir,
    tmp_path: std::path::PathBuf,
}

impl Peer {
    /// Starts the peer `role` that connects to `name`.
    pub(crate) fn start(role: &str, name: &str, transport: Transport) -> Peer {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &test_name!(ipc_peer),
                "--nocapture",
                "--test-threads=1",
            ])
            .env("FERRY_IPC_ROLE", role)
            .env("FERRY_IPC_NAME", name)
            .env("FERRY_IPC_TRANSPORT", transport.name())
            .env("TMPDIR", tmp.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Peer {
            child,
            out,
            tmp_path: tmp.path().to_path_buf(),
            _tmp: tmp,
        }
    }

    /// What the peer said next: the rest of its next line with an `@` (libtest
    /// prints its own lines, and starts the test's first line with its name).
    pub(crate) fn line(&mut self) -> String {
        loop {
            let mut l = String::new();
            assert!(self.out.read_line(&mut l).unwrap() > 0, "the peer ended");
            if let Some(at) = l.find('@') {
                return l[at + 1..].trim().to_string();
            }
        }
    }

    pub(crate) fn tell(&mut self, what: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{what}").unwrap();
        stdin.flush().unwrap();
    }

    fn kill9(&mut self) {
        // `Child::kill` is SIGKILL.
        self.child.kill().unwrap();
        let st = self.child.wait().unwrap();
        assert!(!st.success());
    }

    /// Waits for the peer; it must have passed.
    fn finish(mut self) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let mut l = String::new();
            if self.out.read_line(&mut l).unwrap() == 0 {
                break;
            }
            if let Some(at) = l.find('@') {
                lines.push(l[at + 1..].trim().to_string());
            }
        }
        let st = self.child.wait().unwrap();
        assert!(st.success(), "peer failed: {st:?}, said {lines:?}");
        lines
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            return;
        }
        // Whatever the death, the peer left nothing in its TMPDIR.
        let left: Vec<_> = std::fs::read_dir(&self.tmp_path).unwrap().collect();
        assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    }
}

/// The receiving end on `sock`.
pub(crate) fn receiver(sock: ipc::Socket, timeout: Option<Duration>) -> io::Result<Receiver> {
    // SAFETY: the peers here are this binary's own ferry Senders, and the
    // hostile ones only send packets the receiver must refuse: none
    // writes a slot after sending it.
    unsafe { Receiver::new(sock, timeout) }
}

fn shm_entries() -> std::collections::BTreeSet<std::ffi::OsString> {
    std::fs::read_dir("/dev/shm")
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
        .unwrap_or_default()
}

/// This process maps or holds no ipc pool any more.
fn no_pool_left_here() {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    assert!(!maps.contains("memfd:ferry-ipc"), "a pool is still mapped");
    for fd in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        if let Ok(t) = std::fs::read_link(fd.path()) {
            assert!(
                !t.to_string_lossy().contains("memfd:ferry-ipc"),
                "a pool is still open: {t:?}"
            );
        }
    }
}

fn config(slots: usize, timeout_ms: u64, transport: Transport) -> SenderConfig {
    SenderConfig {
        slot_size: 4096,
        slots,
        timeout: Some(Duration::from_millis(timeout_ms)),
        ring: transport.ring(),
    }
}

/// Sends message `i`: even ones copied in with `send_bytes`, odd ones
/// written into a slot and sent by reference (when they fit one slot).
fn send_message(tx: &mut Sender, i: u64) -> io::Result<()> {
    let m = message(i);
    if i % 2 == 1 && m.len() <= tx.slot_size() {
        let mut s = tx.alloc()?;
        s[..m.len()].copy_from_slice(&m);
        tx.send(Aggregate::from(s.freeze(m.len())))
    } else {
        tx.send_bytes(&m)
    }
}

/// The peer side of every test here (`FERRY_IPC_ROLE`); a no-op in the
/// test binary as the harness runs it.
#[test]
fn ipc_peer() {
    let Ok(role) = std::env::var("FERRY_IPC_ROLE") else {
        return;
    };
    let name = std::env::var("FERRY_IPC_NAME").unwrap();
    let say = |s: &str| {
        println!("@{s}");
        io::stdout().flush().unwrap();
    };
    let stdin_line = || {
        let mut l = String::new();
        io::stdin().read_line(&mut l).unwrap();
        l
    };
    match role.as_str() {
        // Receives and checks every message until the sender closes.
        "receiver" => {
            let mut rx = receiver(ipc::connect(&name).unwrap(), None).unwrap();
            say("ready");
            let mut n = 0u64;
            while let Some(m) = rx.recv().unwrap() {
                assert!(
                    check_message(&m.copy_to_vec()).is_some(),
                    "message {n} corrupt"
                );
                n += 1;
            }
            say(&format!("count {n}"));
        }
        // Holds every message until told to let go, then reads on.
        "hold" => {
            let mut rx = receiver(ipc::connect(&name).unwrap(), None).unwrap();
            let mut held = Vec::new();
            let want: usize = stdin_line().trim().parse().unwrap();
            while held.len() < want {
                held.push(rx.recv().unwrap().unwrap());
            }
            say(&format!("held {}", held.len()));
            stdin_line();
            for m in &held {
                assert!(check_message(&m.copy_to_vec()).is_some());
            }
            drop(held);
            say("released");
            let mut n = 0;
            while let Some(m) = rx.recv().unwrap() {
                assert!(check_message(&m.copy_to_vec()).is_some());
                n += 1;
            }
            say(&format!("count {n}"));
        }
        // Takes the pool, then never reads.
        "idle" => {
            let _rx = receiver(ipc::connect(&name).unwrap(), None).unwrap();
            say("ready");
            stdin_line();
        }
        // Sends messages without end (until killed).
        "sender" => {
            let mut tx = Sender::new(
                ipc::connect(&name).unwrap(),
                config(32, 30_000, Transport::from_env()),
            )
            .unwrap();
            let mut i = 0;
            loop {
                send_message(&mut tx, i).unwrap();
                if i == 3 {
                    say("sending");
                }
                i += 1;
            }
        }
        // A receiver that gives back references it never got.
        "bad-release" | "empty-release" | "empty-record" => {
            let s: OwnedFd = ipc::connect(&name).unwrap().into();
            let mut buf = [0u8; 2048];
            let _ = rustix::net::recv(&s, &mut buf, rustix::net::RecvFlags::empty()).unwrap();
            match role.as_str() {
                "bad-release" => raw_send(&s, &packet(3, 0, &[(0, 0, 5, 1)]), None),
                "empty-release" => raw_send(&s, &packet(3, 0, &[]), None),
                _ => raw_send(&s, &[], None),
            }
            say("sent");
            stdin_line();
        }
        hostile if hostile.starts_with("hostile-") => hostile_sender(&name, &hostile[8..], say),
        hostile if hostile.starts_with("ring-sender-") => {
            crate::rings::hostile_ring_sender(&name, &hostile[12..], say)
        }
        hostile if hostile.starts_with("ring-receiver-") => {
            crate::rings::hostile_ring_receiver(&name, &hostile[14..], say)
        }
        other => panic!("unknown role {other}"),
    }
}

pub(crate) fn packet(kind: u16, flags: u16, descs: &[(u32, u32, u32, u64)]) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(b"FYIP");
    p.extend_from_slice(&kind.to_le_bytes());
    p.extend_from_slice(&flags.to_le_bytes());
    p.extend_from_slice(&(descs.len() as u32).to_le_bytes());
    p.extend_from_slice(&0u32.to_le_bytes());
    for &(slot, off, len, generation) in descs {
        p.extend_from_slice(&slot.to_le_bytes());
        p.extend_from_slice(&off.to_le_bytes());
        p.extend_from_slice(&len.to_le_bytes());
        p.extend_from_slice(&0u32.to_le_bytes());
        p.extend_from_slice(&generation.to_le_bytes());
    }
    p
}

fn hello(slot_size: u64, slots: u64) -> Vec<u8> {
    let mut p = packet(1, 0, &[]);
    p.extend_from_slice(&slot_size.to_le_bytes());
    p.extend_from_slice(&slots.to_le_bytes());
    p
}

pub(crate) fn raw_send(sock: &OwnedFd, bytes: &[u8], fd: Option<&OwnedFd>) {
    try_raw_send(sock, bytes, fd).unwrap();
}

/// Sends one packet as it is, waiting for room.
pub(crate) fn try_raw_send(sock: &OwnedFd, bytes: &[u8], fd: Option<&OwnedFd>) -> io::Result<()> {
    use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
    let mut space = [std::mem::MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds;
    if let Some(fd) = fd {
        fds = [fd.as_fd()];
        control.push(SendAncillaryMessage::ScmRights(&fds));
    }
    rustix::net::sendmsg(
        sock,
        &[io::IoSlice::new(bytes)],
        &mut control,
        SendFlags::NOSIGNAL,
    )?;
    Ok(())
}

/// A sender that writes raw packets: a pool (sealed as `case` says), then
/// the descriptors `case` names.
fn hostile_sender(name: &str, case: &str, say: impl Fn(&str)) {
    use rustix::fs::{MemfdFlags, SealFlags};
    let s: OwnedFd = ipc::connect(name).unwrap().into();
    let pool = rustix::fs::memfd_create("hostile", MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)
        .unwrap();
    let (slot_size, slots) = (4096u64, 4u64);
    let size = if case == "small-pool" {
        4096
    } else {
        slot_size * slots
    };
    rustix::fs::ftruncate(&pool, size).unwrap();
    let seals = match case {
        "unsealed" => SealFlags::empty(),
        "writable" => SealFlags::SHRINK | SealFlags::GROW,
        _ => SealFlags::SHRINK | SealFlags::GROW | SealFlags::FUTURE_WRITE,
    };
    rustix::fs::fcntl_add_seals(&pool, seals).unwrap();
    let bufs = |descs: &[(u32, u32, u32, u64)]| packet(2, 1, descs);
    match case {
        "two-fds" => {
            // Two descriptors with the hello: the second one must be refused.
            use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
            let mut space =
                [std::mem::MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(2))];
            let mut control = SendAncillaryBuffer::new(&mut space);
            let fds = [pool.as_fd(), s.as_fd()];
            control.push(SendAncillaryMessage::ScmRights(&fds));
            let h = hello(slot_size, slots);
            rustix::net::sendmsg(
                &s,
                &[io::IoSlice::new(&h)],
                &mut control,
                SendFlags::NOSIGNAL,
            )
            .unwrap();
        }
        "huge-pool" => raw_send(&s, &hello(u32::MAX as u64, 1 << 20), Some(&pool)),
        _ => raw_send(&s, &hello(slot_size, slots), Some(&pool)),
    }
    match case {
        "slot-out-of-range" => raw_send(&s, &bufs(&[(4, 0, 1, 1)]), None),
        "past-slot-end" => raw_send(&s, &bufs(&[(3, 4000, 97, 1)]), None),
        "offset-wraps" => raw_send(&s, &bufs(&[(0, u32::MAX, 2, 1)]), None),
        "huge-count" => {
            let mut p = bufs(&[(0, 0, 1, 1)]);
            p[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
            raw_send(&s, &p, None)
        }
        "count-past-packet" => {
            let mut p = bufs(&[(0, 0, 1, 1)]);
            p[8..12].copy_from_slice(&2u32.to_le_bytes());
            raw_send(&s, &p, None)
        }
        "stale-generation" => {
            raw_send(&s, &bufs(&[(1, 0, 10, 5)]), None);
            raw_send(&s, &bufs(&[(1, 0, 10, 4)]), None);
        }
        "reuse-while-held" => {
            raw_send(&s, &bufs(&[(1, 0, 10, 5)]), None);
            raw_send(&s, &bufs(&[(1, 0, 10, 6)]), None);
        }
        "fd-with-bufs" => raw_send(&s, &bufs(&[(0, 0, 1, 1)]), Some(&pool)),
        "garbage" => raw_send(&s, b"not a packet at all", None),
        "empty-bufs" => raw_send(&s, &packet(2, 0, &[]), None),
        "empty-record" => raw_send(&s, &[], None),
        "unknown-flags" => raw_send(&s, &packet(2, 1 | 8, &[(0, 0, 1, 1)]), None),
        "abort-of-nothing" => raw_send(&s, &packet(2, 2, &[]), None),
        "half-then-bye" => {
            raw_send(&s, &packet(2, 0, &[(0, 0, 1, 1)]), None);
            raw_send(&s, &packet(4, 0, &[]), None);
        }
        "first-half" => raw_send(&s, &packet(2, 0, &[(0, 0, 10, 1)]), None),
        _ => {}
    }
    say("sent");
    match case {
        // Packets that each carry something, but never a whole message.
        // Until the receiver goes.
        "endless-halves" => {
            while try_raw_send(&s, &packet(2, 0, &[(0, 0, 1, 1)]), None)
                .and_then(|()| try_raw_send(&s, &packet(2, 2, &[]), None))
                .is_ok()
            {}
        }
        // Slot 0 again and again, each time a new generation, never
        // reading a release (until the receiver goes).
        "reuse-unreleased" => {
            for g in 1.. {
                if try_raw_send(&s, &bufs(&[(0, 0, 1, g)]), None).is_err() {
                    return;
                }
            }
        }
        "first-half" => {
            let mut l = String::new();
            io::stdin().read_line(&mut l).unwrap();
            raw_send(&s, &bufs(&[(1, 0, 10, 1)]), None);
        }
        _ => {}
    }
    let mut l = String::new();
    io::stdin().read_line(&mut l).unwrap();
}

on_both_transports! {
/// Bytes sent through the pool arrive whole and in order in another
/// process, by reference and by copy; the sender's stats say which.
#[cfg_attr(miri, ignore = "memfd, sockets and processes")]
fn ipc_messages_reach_another_process_intact(transport: Transport) {
    let _g = serial();
    let shm = shm_entries();
    let n = name("intact");
    let l = ipc::Listener::bind(&n).unwrap();
    let mut peer = Peer::start("receiver", &n, transport);
    let mut tx = Sender::new(
        l.accept(Some(Duration::from_secs(30))).unwrap(),
        config(8, 30_000, transport),
    )
    .unwrap();
    assert_eq!(peer.line(), "ready");
    for i in 0..200 {
        send_message(&mut tx, i).unwrap();
    }
    let st = tx.stats();
    assert!(st.bytes_copied > 0 && st.bytes_copied < st.bytes_sent);
    drop(tx);
    assert_eq!(peer.finish(), ["count 200"]);
    no_pool_left_here();
    assert_eq!(shm_entries(), shm);
}
}

on_both_transports! {
/// One sender process, two receiver processes, each on its own channel.
#[cfg_attr(miri, ignore = "memfd, sockets and processes")]
fn ipc_one_sender_feeds_two_receiver_processes(transport: Transport) {
    let _g = serial();
    let n = name("fan");
    let l = ipc::Listener::bind(&n).unwrap();
    let p1 = Peer::start("receiver", &n, transport);
    let mut t1 = Sender::new(
        l.accept(Some(Duration::from_secs(30))).unwrap(),
        config(8, 30_000, transport),
    )
    .unwrap();
    let p2 = Peer::start("receiver", &n, transport);
    let mut t2 = Sender::new(
        l.accept(Some(Duration::from_secs(30))).unwrap(),
        config(8, 30_000, transport),
    )
    .unwrap();
    for i in 0..50 {
        send_message(&mut t1, i).unwrap();
        send_message(&mut t2, i + 1000).unwrap();
    }
    drop((t1, t2));
    assert_eq!(p1.finish(), ["ready", "count 50"]);
    assert_eq!(p2.finish(), ["ready", "count 50"]);
    no_pool_left_here();
}
}

on_both_transports! {
/// kill -9 of the receiver mid-transfer: the sender fails cleanly (no hang,
/// no SIGPIPE), every slot the receiver held comes back, nothing is left
/// in /dev/shm or the peer's TMPDIR, and the sender's process can serve a
/// new receiver at once.
#[cfg_attr(miri, ignore = "memfd, sockets and processes")]
fn ipc_receiver_killed_mid_transfer_leaves_nothing_and_sender_goes_on(transport: Transport) {
    let _g = serial();
    let shm = shm_entries();
    let n = name("kill-rx");
    let l = ipc::Listener::bind(&n).unwrap();
    for kill_after in [0u64, 5, 37] {
        let mut peer = Peer::start("receiver", &n, transport);
        let mut tx = Sender::new(
            l.accept(Some(Duration::from_secs(30))).unwrap(),
            config(8, 30_000, transport),
        )
        .unwrap();
        assert_eq!(peer.line(), "ready");
        let mut kept = Vec::new();
        for i in 0..kill_after {
            send_message(&mut tx, i).unwrap();
        }
        // A Buf kept here is sent again after the kill: its slot stays held
        // here, the receiver's references go.
        let mut s = tx.alloc().unwrap();
        s[..4].copy_from_slice(b"kept");
        kept.push(s.freeze(4));
        peer.kill9();
        let mut err = None;
        for i in 0..10_000 {
            if let Err(e) = send_message(&mut tx, i) {
                err = Some(e);
                break;
            }
        }
        let err = err.expect("the sender never noticed the receiver died");
        assert!(
            matches!(
                err.kind(),
                io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
            ),
            "{err:?}"
        );
        assert_eq!(&kept[0][..], b"kept");
        assert!(tx.send(Aggregate::from(kept[0].clone())).is_err());
        drop(tx);
        drop(kept);
        drop(peer);
        no_pool_left_here();
    }
    // The survivor reconnects.
    let peer = Peer::start("receiver", &n, transport);
    let mut tx = Sender::new(
        l.accept(Some(Duration::from_secs(30))).unwrap(),
        config(8, 30_000, transport),
    )
    .unwrap();
    for i in 0..20 {
        send_message(&mut tx, i).unwrap();
    }
    drop(tx);
    assert_eq!(peer.finish(), ["ready", "count 20"]);
    assert_eq!(shm_entries(), shm);
}
}

on_both_transports! {
/// kill -9 of the sender mid-transfer: the receiver gets what was sent,
/// then `UnexpectedEof` (never a clean end), the buffers it holds stay
/// readable and unchanged, nothing is left behind, and it takes a new
/// sender.
#[cfg_attr(miri, ignore = "memfd, sockets and processes")]
fn ipc_sender_killed_mid_transfer_leaves_nothing_and_receiver_goes_on(transport: Transport) {
    let _g = serial();
    let shm = shm_entries();
    let n = name("kill-tx");
    let l = ipc::Listener::bind(&n).unwrap();
    for hold in [1usize, 3] {
        let mut peer = Peer::start("sender", &n, transport);
        let mut rx = receiver(l.accept(Some(Duration::from_secs(30))).unwrap(), None).unwrap();
        let mut held: Vec<(Aggregate, Vec<u8>)> = Vec::new();
        let mut got = 0;
        while got < 6 {
            let m = rx.recv().unwrap().unwrap();
            let bytes = m.copy_to_vec();
            assert!(check_message(&bytes).is_some());
            if held.len() < hold {
                held.push((m, bytes));
            }
            got += 1;
        }
        assert_eq!(peer.line(), "sending");
        peer.kill9();
        let err = loop {
            match rx.recv() {
                Ok(Some(m)) => assert!(check_message(&m.copy_to_vec()).is_some()),
                Ok(None) => panic!("a killed sender looked like a clean end"),
                Err(e) => break e,
            }
        };
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "{err:?}");
        assert_eq!(rx.recv().unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        for (m, bytes) in &held {
            assert_eq!(&m.copy_to_vec(), bytes);
        }
        drop(held);
        drop(rx);
        drop(peer);
        no_pool_left_here();
    }
    let mut peer = Peer::start("sender", &n, transport);
    let mut rx = receiver(l.accept(Some(Duration::from_secs(30))).unwrap(), None).unwrap();
    for _ in 0..10 {
        assert!(check_message(&rx.recv().unwrap().unwrap().copy_to_vec()).is_some());
    }
    peer.kill9();
    drop(rx);
    drop(peer);
    assert_eq!(shm_entries(), shm);
}
}

on_both_transports! {
/// A pool exhausted by a receiver that holds every buffer: `try_alloc`
/// says so, `alloc` fails with `TimedOut` after the configured wait; once
/// the receiver lets go, the slots come back and sending goes on.
#[cfg_attr(miri, ignore = "memfd, sockets and processes")]
fn ipc_exhausted_pool_pushes_back_until_the_receiver_releases(transport: Transport) {
    let _g = serial();
    let n = name("hold");
    let l = ipc::Listener::bind(&n).unwrap();
    let mut peer = Peer::start("hold", &n, transport);
    let mut tx = Sender::new(
        l.accept(Some(Duration::from_secs(30))).unwrap(),
        config(4, 200, transport),
    )
    .unwrap();
    peer.tell("4");
    // Four messages of one slot each.
    for i in (0..).filter(|&i| message(i).len() <= 4096).take(4) {
        tx.send_bytes(&message(i))
            .unwrap_or_else(|e| panic!("{i}: {e}"));
    }
    assert_eq!(peer.line(), "held 4");
    assert!(tx.try_alloc().unwrap().is_none());
    assert_eq!(tx.free_slots().unwrap(), 0);
    assert_eq!(
        tx.alloc().err().map(|e| e.kind()),
        Some(io::ErrorKind::TimedOut)
    );
    // A timeout does not break the channel.
    peer.tell("go");
    assert_eq!(peer.line(), "released");
    tx.set_timeout(Some(Duration::from_secs(30)));
    drop(tx.alloc().unwrap());
    assert_eq!(tx.free_slots().unwrap(), 4);
    // Messages that fit the pool (4 slots), most of several slots.
    for i in (0..).filter(|&i| message(i).len() <= 4 * 4096).take(30) {
        send_message(&mut tx, i).unwrap();
    }
    drop(tx);
    assert_eq!(peer.finish(), ["count 30"]);
}
}

on_both_transports! {
/// A receiver that never reads: the sender, sending the same buffer by
/// reference again and again (no slot needed), fills the socket and then
/// fails with `TimedOut` — it never blocks past its timeout.
#[cfg_attr(miri, ignore = "memfd, sockets and processes")]
fn ipc_receiver_that_never_reads_times_the_sender_out(transport: Transport) {
    let _g = serial();
    let n = name("idle");
    let l = ipc::Listener::bind(&n).unwrap();
    let mut peer = Peer::start("idle", &n, transport);
    let mut tx = Sender::new(
        l.accept(Some(Duration::from_secs(30))).unwrap(),
        config(4, 200, transport),
    )
    .unwrap();
    assert_eq!(peer.line(), "ready");
    let mut s = tx.alloc().unwrap();
    s[0] = 1;
    let b = s.freeze(1);
    let err = (0..1_000_000)
        .find_map(|_| tx.send(Aggregate::from(b.clone())).err())
        .expect("the socket never filled");
    assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err:?}");
    peer.tell("done");
    drop(peer);
    // The receiver is gone now: the next send says so at once.
    let err = (0..1_000_000)
        .find_map(|_| tx.send(Aggregate::from(b.clone())).err())
        .unwrap();
    assert!(
        matches!(
            err.kind(),
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
        ),
        "{err:?}"
    );
}
}

/// Every malformed or hostile thing a sender process can write — a slot
/// out of range, bytes past a slot, an offset that wraps, a descriptor
/// count past the packet or the limit, a stale generation, a new
/// generation of a slot still held, an unsealed or writable pool, a pool
/// smaller than announced, extra descriptors, garbage, a packet of
/// nothing (no descriptor and no end, or no bytes at all), unknown flags,
/// an abort of no message, a message cut short by the close, a new
/// generation of a slot whose release is not yet sent (a sender that
/// never reads once made the receiver's unsent releases grow without
/// end) — is an
/// `InvalidData` error for that channel: never a read outside the pool,
/// never a crash, and the receiver's process goes on.
#[test]
#[cfg_attr(miri, ignore = "memfd, sockets and processes")]
fn ipc_hostile_sender_packets_are_errors_for_that_channel() {
    let _g = serial();
    let n = name("hostile");
    let l = ipc::Listener::bind(&n).unwrap();
    let at_connect = ["unsealed", "writable", "small-pool", "two-fds", "huge-pool"];
    let at_recv = [
        "slot-out-of-range",
        "past-slot-end",
        "offset-wraps",
        "huge-count",
        "count-past-packet",
        "stale-generation",
        "reuse-while-held",
        "fd-with-bufs",
        "garbage",
        "empty-bufs",
        "empty-record",
        "unknown-flags",
        "abort-of-nothing",
        "half-then-bye",
        "reuse-unreleased",
    ];
    for case in at_connect.iter().chain(&at_recv) {
        let mut peer = Peer::start(&format!("hostile-{case}"), &n, Transport::Socket);
        let sock = l.accept(Some(Duration::from_secs(30))).unwrap();
        assert_eq!(peer.line(), "sent");
        let r = receiver(sock, Some(Duration::from_secs(30)));
        if at_connect.contains(case) {
            let err = r.expect_err(case);
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{case}: {err:?}");
            continue;
        }
        let mut rx = r.unwrap_or_else(|e| panic!("{case}: {e}"));
        // A descriptor let through would leave the receiver waiting.
        rx.set_timeout(Some(Duration::from_secs(10)));
        let mut held = Vec::new();
        let err = loop {
            match rx.recv() {
                // A stale generation is one of a slot released here, and
                // a slot is reused only once released here.
                Ok(Some(m)) if !["stale-generation", "reuse-unreleased"].contains(case) => {
                    held.push(m)
                }
                Ok(Some(_)) => {}
                Ok(None) => panic!("{case}: a clean end"),
                Err(e) => break e,
            }
        };
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{case}: {err:?}");
        assert_eq!(
            rx.recv().unwrap_err().kind(),
            io::ErrorKind::InvalidData,
            "{case}"
        );
        for m in &held {
            assert!(m.copy_to_vec().iter().all(|&b| b == 0), "{case}");
        }
        peer.tell("done");
        drop(peer);
    }
}

on_both_transports! {
/// A receiver process that gives back references it was never sent, a
/// release of nothing (a stream of them once kept the sender reading
/// forever), or a record of no bytes (once taken for the end of file: the
/// sender then took every slot as released, the ones the receiver still
/// maps too) breaks the channel with `InvalidData` on the sender's side.
#[cfg_attr(miri, ignore = "memfd, sockets and processes")]
fn ipc_hostile_receiver_release_is_an_error_for_the_sender(transport: Transport) {
    let _g = serial();
    let n = name("bad-release");
    let l = ipc::Listener::bind(&n).unwrap();
    for role in ["bad-release", "empty-release", "empty-record"] {
        let mut peer = Peer::start(role, &n, transport);
        let mut tx = Sender::new(
            l.accept(Some(Duration::from_secs(30))).unwrap(),
            config(4, 2_000, transport),
        )
        .unwrap();
        assert_eq!(peer.line(), "sent");
        let err = tx.free_slots().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{role}: {err:?}");
        assert_eq!(
            tx.send_bytes(b"x").unwrap_err().kind(),
            io::ErrorKind::InvalidData,
            "{role}"
        );
        peer.tell("done");
    }
}
}

/// A sender process whose packets never make a whole message (pieces,
/// each dropped by an ABORT, without end): `recv` with a timeout once
/// checked its deadline only when the socket was empty, so it never
/// returned while the peer kept sending. Now it times out.
#[test]
#[cfg_attr(miri, ignore = "memfd, sockets and processes")]
fn ipc_a_sender_streaming_no_whole_message_times_the_receiver_out() {
    let _g = serial();
    let n = name("endless");
    let l = ipc::Listener::bind(&n).unwrap();
    let mut peer = Peer::start("hostile-endless-halves", &n, Transport::Socket);
    let sock = l.accept(Some(Duration::from_secs(30))).unwrap();
    assert_eq!(peer.line(), "sent");
    let mut rx = receiver(sock, None).unwrap();
    rx.set_timeout(Some(Duration::from_millis(300)));
    let err = rx.recv().unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err:?}");
    drop(rx);
    drop(peer);
}

/// A receive that times out in the middle of a message keeps the part
/// received: the next `recv` goes on with it and returns the whole
/// message. The timeout once broke the channel for good.
#[test]
#[cfg_attr(miri, ignore = "memfd, sockets and processes")]
fn ipc_a_timeout_in_mid_message_leaves_the_channel_usable() {
    let _g = serial();
    let n = name("halves");
    let l = ipc::Listener::bind(&n).unwrap();
    let mut peer = Peer::start("hostile-first-half", &n, Transport::Socket);
    let sock = l.accept(Some(Duration::from_secs(30))).unwrap();
    assert_eq!(peer.line(), "sent");
    let mut rx = receiver(sock, None).unwrap();
    rx.set_timeout(Some(Duration::from_millis(200)));
    let err = rx.recv().unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err:?}");
    peer.tell("second half");
    rx.set_timeout(Some(Duration::from_secs(30)));
    let m = rx.recv().unwrap().unwrap();
    assert_eq!(m.slice_count(), 2);
    assert_eq!(m.copy_to_vec(), [0; 20]);
    drop(rx);
    drop(peer);
}
