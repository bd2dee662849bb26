//! The receiving end: maps the sender's pool read-only and turns
//! descriptors into `Buf`s after checking each against the pool and what
//! this end holds.
//!
//! Per slot the receiver keeps the generation it holds and how many
//! references to it are alive. A descriptor is refused (an error for the
//! channel, never a read outside the pool) if its slot is out of range,
//! its bytes run past the slot, its generation is older than one already
//! seen for that slot (stale), or its generation differs from the one
//! held while references to the slot are alive (the sender reused a slot
//! the receiver still holds, or one whose release is not yet sent).
//!
//! A message's pieces are kept in the receiver until its END packet (an
//! ABORT drops them); a timeout in mid-message keeps them for the next
//! call. Dropping the receiver shuts its socket down for reading, so
//! that the sender's next send fails, and releases what was queued for
//! it; the `Buf`s still alive keep the pool mapped and release their
//! slots as they go.
//!
//! On a channel with rings the same packets come as tx entries, and the
//! releases go back on the release ring (`ring.rs` beside this file).

mod ring;

use super::ring::{Producer, Shape};
use super::wire::{self, Desc, Packet};
use super::Socket;
use crate::buf::FileOwner;
use crate::sys::ipc::{self as sys, ReadOnlyMap, Received, SharedWords};
use crate::{Aggregate, Buf};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Pieces in one message at most (a sender that never ends a message
/// cannot make the receiver grow without bound).
const MAX_PIECES: usize = 1 << 20;

#[derive(Default)]
struct Held {
    generation: u64,
    /// Live `Buf`s of the slot made here (one per descriptor).
    refs: u64,
}

struct State {
    held: Vec<Held>,
    /// Releases not yet sent (the socket or the release ring was full).
    releases: Vec<Desc>,
    sender_gone: bool,
    /// The release ring's producing end, on a channel with rings.
    release_ring: Option<Producer>,
}

pub(crate) struct Shared {
    /// The socket is `/dev/null` in forked children (dropped before
    /// `sock` closes).
    _detached: crate::sys::fork::Detached,
    sock: OwnedFd,
    /// The pool; kept for handing a received buffer to the kernel
    /// (`sendfile` from the memfd at `slot * slot_size + off`: see
    /// `Lent`'s `FileOwner`).
    memfd: OwnedFd,
    map: ReadOnlyMap,
    slot_size: usize,
    state: Mutex<State>,
    /// The control block, on a channel with rings.
    control: Option<SharedWords>,
    /// The fork generation it was made in (`sys::fork`): in a forked
    /// child, neither a drop nor a release touches the channel.
    born: u64,
}

impl Shared {
    /// Whether this is a forked child's copy of the end.
    fn forked(&self) -> bool {
        crate::sys::fork::generation() != self.born
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends the releases waiting, as far as the socket (or the release
    /// ring) takes them.
    fn flush(&self, st: &mut State) {
        if st.releases.is_empty() {
            return;
        }
        // A release makes its slot writable again: not while a fork's
        // child has yet to copy the pool.
        let _gate = crate::sys::fork::gate();
        if let (Some(w), Some(_)) = (&self.control, &st.release_ring) {
            ring::flush(self, w, st);
            return;
        }
        let mut packet = Vec::with_capacity(wire::MAX_PACKET);
        while !st.releases.is_empty() && !st.sender_gone {
            let n = st.releases.len().min(wire::MAX_BATCH);
            wire::encode_descs(&mut packet, true, false, &st.releases[..n]);
            match sys::send_packet(self.sock.as_fd(), &packet, &[]) {
                Ok(true) => {
                    st.releases.drain(..n);
                }
                Ok(false) => return,
                Err(e) if sys::peer_gone(&e) => {
                    // The sender is gone: nobody to give them back to.
                    st.sender_gone = true;
                    st.releases.clear();
                }
                // Anything else (short of memory, say) may pass: the
                // releases wait for the next try.
                Err(_) => return,
            }
        }
    }
}

/// What [`Receiver::recv_beside`] found.
pub(crate) enum Got {
    /// The next message.
    Message(Aggregate),
    /// The sender closed in order: no more messages.
    Finished,
    /// The other descriptor is readable, and every message published
    /// before it was has been taken.
    Beside,
}

/// The owner behind each received `Buf`: gives its reference back.
struct Lent {
    shared: Arc<Shared>,
    slot: u32,
    off: usize,
    len: usize,
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        let at = self.slot as usize * self.shared.slot_size + self.off;
        // Checked against the pool when the descriptor came in.
        self.shared.map.bytes(at, self.len).unwrap_or_default()
    }
}

/// The pool's memfd holds the same bytes at the same place as its
/// mapping: a write may send a received buffer from the file.
impl FileOwner for Lent {
    fn file(&self) -> (BorrowedFd<'_>, u64) {
        let at = self.slot as u64 * self.shared.slot_size as u64 + self.off as u64;
        (self.shared.memfd.as_fd(), at)
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if self.shared.forked() {
            // The parent holds the same reference: a release from here
            // would let the sender write the slot under the parent's
            // `Buf`.
            return;
        }
        let mut st = self.shared.lock();
        let h = &mut st.held[self.slot as usize];
        h.refs -= 1;
        let (generation, last) = (h.generation, h.refs == 0);
        if st.sender_gone {
            return;
        }
        // One release per descriptor, merged per slot and generation, sent
        // when the slot's last reference goes (the sender can reuse a
        // slot only then).
        match st
            .releases
            .iter_mut()
            .find(|r| r.slot == self.slot && r.generation == generation)
        {
            Some(r) => r.len += 1,
            None => st.releases.push(Desc {
                slot: self.slot,
                off: 0,
                len: 1,
                generation,
            }),
        }
        // With rings, only a slot's last release goes in: a ring as long
        // as the pool has slots then never fills for an honest sender.
        let batch_full = st.release_ring.is_none() && st.releases.len() >= wire::MAX_BATCH;
        if last || batch_full {
            self.shared.flush(&mut st);
        }
    }
}

/// The receiving end of an ipc channel: maps the sender's pool read-only
/// and hands out its buffers as `Buf`s, by reference.
///
/// See the [module doc](crate::ipc) for the protocol and an example.
pub struct Receiver {
    shared: Arc<Shared>,
    timeout: Option<Duration>,
    broken: Option<(io::ErrorKind, String)>,
    /// The sender said BYE: no more messages.
    finished: bool,
    inbox: Vec<u8>,
    /// The pieces of the message being received, until its end.
    partial: Aggregate,
    /// A packet of a message came, not yet its end.
    in_message: bool,
    /// The unread rest of the current message (the byte and buffer faces).
    pub(in crate::ipc) current: Aggregate,
    /// The tx ring's consuming end, on a channel with rings.
    ring: Option<ring::Rx>,
}

impl Receiver {
    /// Waits (at most `timeout`, forever if `None`) for the sender's pool
    /// on `sock`, checks its seals and size, and maps it read-only.
    ///
    /// Whatever the peer sends, the receiver never reads outside the pool
    /// and never faults (see the [module doc](crate::ipc)).
    ///
    /// # Safety
    ///
    /// The `Buf`s this receiver hands out show the sender's pages in
    /// place, and only the sender decides when it writes them again. The
    /// caller vouches that the peer on `sock` keeps the protocol: it
    /// writes a slot again only after this receiver released every
    /// reference to it. A ferry [`Sender`](super::Sender) (in this process
    /// or another, or `fy_ipc_sender` through the C ABI) does, as long as
    /// nothing else writes on its socket. A peer that breaks the protocol
    /// — a hostile program, or code here relaying packets between the two
    /// and forging releases — can change bytes under a `Buf` this
    /// receiver handed out, which breaks the rule that a `Buf` never
    /// changes while visible (and `ContentId`s keyed on it).
    ///
    /// Safe code cannot connect a receiver without saying so:
    ///
    /// ```compile_fail,E0133
    /// let (_a, b) = ferry::ipc::pair().unwrap();
    /// let _rx = ferry::ipc::Receiver::new(b, None);
    /// ```
    pub unsafe fn new(sock: Socket, timeout: Option<Duration>) -> io::Result<Receiver> {
        let sock = sock.0;
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut inbox = vec![0; wire::MAX_PACKET];
        let (len, mut fds) = loop {
            match sys::recv_packet(sock.as_fd(), &mut inbox)? {
                Received::Packet {
                    len,
                    truncated: false,
                    fds,
                } => break (len, fds),
                Received::Packet { .. } => return Err(protocol("an overlong first packet")),
                Received::Empty => {
                    sys::wait(sock.as_fd(), true, false, deadline)?;
                }
                Received::Closed => return Err(gone()),
            }
        };
        let (slot_size, slots, rings) = match wire::decode(&inbox[..len])? {
            Packet::Hello {
                slot_size,
                slots,
                ring,
            } => (slot_size, slots, ring),
            _ => return Err(protocol("no pool first")),
        };
        if fds.len() != 1 + usize::from(rings.is_some()) {
            return Err(protocol("not the descriptors its HELLO says"));
        }
        let memfd = fds.remove(0);
        let control = match rings {
            Some((tx, rel)) => {
                let shape = Shape::checked(tx, rel)?;
                let words = SharedWords::open(fds[0].as_fd(), shape.words())?;
                Some((words, shape))
            }
            None => None,
        };
        drop(fds);
        if slot_size == 0 || slot_size > u64::from(u32::MAX) || slots == 0 || slots > 1 << 20 {
            return Err(protocol("a pool of impossible shape"));
        }
        let total = slot_size
            .checked_mul(slots)
            .filter(|&t| t <= isize::MAX as u64)
            .ok_or_else(|| protocol("a pool too large"))?;
        sys::check_pool(memfd.as_fd(), total)?;
        let map = ReadOnlyMap::new(memfd.as_fd(), total as usize)?;
        let (control, ends) = match control {
            Some((w, shape)) => {
                let (tx, rel) = shape.receiver_ends();
                (Some(w), Some((tx, rel)))
            }
            None => (None, None),
        };
        let (rx_ring, release_ring) = match ends {
            Some((tx, rel)) => (Some(ring::Rx::new(tx)), Some(rel)),
            None => (None, None),
        };
        Ok(Receiver {
            shared: Arc::new(Shared {
                _detached: crate::sys::fork::detach_in_children(sock.as_raw_fd()),
                sock,
                memfd,
                map,
                slot_size: slot_size as usize,
                state: Mutex::new(State {
                    held: (0..slots).map(|_| Held::default()).collect(),
                    releases: Vec::new(),
                    sender_gone: false,
                    release_ring,
                }),
                control,
                born: crate::sys::fork::generation(),
            }),
            timeout: None,
            broken: None,
            finished: false,
            inbox,
            partial: Aggregate::new(),
            in_message: false,
            current: Aggregate::new(),
            ring: rx_ring,
        })
    }

    /// How long [`recv`](Self::recv) waits for a message before it fails
    /// with `TimedOut` (`None`, the default: as long as the sender lives).
    pub fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.timeout = timeout;
    }

    /// Greets the sender (a WAKE packet): this end mapped the pool and
    /// takes the channel (a pipe's upgrade waits for it).
    pub(crate) fn greet(&self) -> io::Result<()> {
        let mut packet = Vec::with_capacity(wire::HEADER);
        wire::encode_wake(&mut packet);
        match sys::send_packet(self.shared.sock.as_fd(), &packet, &[])? {
            true => Ok(()),
            false => Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "ipc: no room for a greeting",
            )),
        }
    }

    /// Bytes per slot of the sender's pool.
    pub fn slot_size(&self) -> usize {
        self.shared.slot_size
    }

    /// The next message, its buffers by reference; `None` once the sender
    /// closed in order. A sender that went away without closing
    /// (killed) is an `UnexpectedEof` error, a malformed or hostile
    /// descriptor an `InvalidData` error; after either, every call fails
    /// the same way. Buffers received before stay valid. A timeout
    /// (`TimedOut`) leaves the channel usable, even in the middle of a
    /// message: the next call goes on with it.
    pub fn recv(&mut self) -> io::Result<Option<Aggregate>> {
        match self.recv_beside(None)? {
            Got::Message(m) => Ok(Some(m)),
            Got::Finished => Ok(None),
            // Only when watching another descriptor.
            Got::Beside => Err(io::Error::other("ipc: woken by no descriptor")),
        }
    }

    /// [`recv`](Self::recv), also watching `beside` for input: between
    /// two messages, once every message already published was taken,
    /// `Got::Beside` if `beside` is readable (or hung up). What was
    /// published before bytes were written there comes first (an upgraded
    /// pipe's reader keeps the order of the writer's messages and the
    /// pipe's bytes).
    pub(crate) fn recv_beside(&mut self, beside: Option<BorrowedFd<'_>>) -> io::Result<Got> {
        if self.shared.forked() {
            return Err(crate::ipc::sender::forked());
        }
        if let Some((kind, msg)) = &self.broken {
            return Err(io::Error::new(*kind, msg.clone()));
        }
        if self.finished {
            return Ok(Got::Finished);
        }
        let deadline = self.timeout.map(|t| Instant::now() + t);
        if self.ring.is_some() {
            let r = self.ring_recv(deadline, beside);
            return self.settle(r);
        }
        // Set when `beside` was seen readable: the socket is looked at
        // once more before it is said.
        let mut beside_ready = false;
        loop {
            let releasing = {
                let mut st = self.shared.lock();
                self.shared.flush(&mut st);
                !st.releases.is_empty() && !st.sender_gone
            };
            let got = sys::recv_packet(self.shared.sock.as_fd(), &mut self.inbox);
            let r = match got {
                Ok(Received::Empty) if beside_ready && !self.in_message => return Ok(Got::Beside),
                Ok(Received::Empty) => {
                    // Releases stuck on a full socket go as soon as it
                    // has room: the sender may wait for them.
                    let watch = beside.filter(|_| !self.in_message);
                    let (_, _, b) = sys::wait_beside(
                        self.shared.sock.as_fd(),
                        true,
                        releasing,
                        watch,
                        deadline,
                    )?;
                    beside_ready = b;
                    continue;
                }
                Ok(Received::Closed) => Err(gone()),
                Ok(Received::Packet {
                    len,
                    truncated,
                    fds,
                }) => {
                    if truncated || !fds.is_empty() {
                        Err(protocol("a packet with descriptors or too long"))
                    } else {
                        self.take(len)
                    }
                }
                Err(e) => Err(e),
            };
            match r {
                Ok(true) => {
                    self.in_message = false;
                    return Ok(Got::Message(std::mem::take(&mut self.partial)));
                }
                Ok(false) if self.finished => return Ok(Got::Finished),
                // A peer that keeps sending never keeps this call past
                // its deadline.
                Ok(false) if deadline.is_some_and(|d| Instant::now() >= d) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "ipc: no whole message in time",
                    ));
                }
                Ok(false) => {}
                Err(e) => return self.settle(Err(e)),
            }
        }
    }

    /// For an event loop that watches this end's socket for input
    /// instead of blocking in [`recv`](Self::recv): says this side is
    /// about to sleep, so that on a channel with rings the sender rings
    /// the socket (one doorbell) at its next entry; without rings every
    /// message is a packet anyway. True when something can be taken
    /// already — an entry, a packet, the end — and then the loop calls
    /// `recv` (with a timeout of zero) rather than sleep. Call it before
    /// each sleep: each call costs the sender one doorbell at most (one
    /// that returned true too, when the sender rang between the flag and
    /// the look at the ring).
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::os::fd::AsFd;
    /// let (a, b) = ferry::ipc::pair()?;
    /// let watched = b.as_fd().try_clone_to_owned()?; // what the loop polls
    /// let mut tx = ferry::ipc::Sender::new(a, Default::default())?;
    /// // SAFETY: the peer is this example's own ferry Sender.
    /// let mut rx = unsafe { ferry::ipc::Receiver::new(b, None)? };
    /// rx.set_timeout(Some(std::time::Duration::ZERO));
    /// assert!(!rx.will_wait()?); // nothing yet: sleep on `watched`
    /// tx.send_bytes(b"ping")?; // rings the doorbell
    /// let mut p = [rustix::event::PollFd::new(&watched, rustix::event::PollFlags::IN)];
    /// assert_eq!(rustix::event::poll(&mut p, None)?, 1);
    /// assert_eq!(rx.recv()?.unwrap().copy_to_vec(), b"ping");
    /// # Ok(()) }
    /// ```
    pub fn will_wait(&mut self) -> io::Result<bool> {
        if self.shared.forked() {
            return Err(crate::ipc::sender::forked());
        }
        if self.finished || self.broken.is_some() {
            return Ok(true);
        }
        if self.ring.is_some() {
            return self.ring_will_wait();
        }
        sys::socket_unread(self.shared.sock.as_fd())
    }

    /// Whether this is a forked child's copy of the end (it does nothing
    /// to the channel: the parent's it is).
    pub(crate) fn forked(&self) -> bool {
        self.shared.forked()
    }

    /// Whether something waits to be taken — a message begun, a ring
    /// entry, a packet — without waiting or taking it.
    pub(crate) fn has_waiting(&self) -> io::Result<bool> {
        if self.in_message || self.finished || self.broken.is_some() {
            return Ok(true);
        }
        match (&self.ring, &self.shared.control) {
            (Some(r), Some(w)) => r.waiting(w),
            _ => sys::socket_unread(self.shared.sock.as_fd()),
        }
    }

    /// What a receive ends with: a failure other than a timeout breaks
    /// the channel, and a sender that went away holds nothing here.
    fn settle(&mut self, r: io::Result<Got>) -> io::Result<Got> {
        if let Err(e) = &r {
            if e.kind() != io::ErrorKind::TimedOut {
                self.broken = Some((e.kind(), e.to_string()));
            }
            if e.kind() == io::ErrorKind::UnexpectedEof {
                let mut st = self.shared.lock();
                st.sender_gone = true;
                st.releases.clear();
            }
        }
        r
    }

    /// Takes in one packet of `len` bytes: `Ok(true)` if it ended a message.
    fn take(&mut self, len: usize) -> io::Result<bool> {
        match wire::decode(&self.inbox[..len])? {
            Packet::Bufs { end, descs } => self.take_descs(&descs, end),
            Packet::Abort => self.take_abort(),
            Packet::Bye => self.take_bye(),
            _ => Err(protocol("a packet only a receiver sends")),
        }
    }

    /// Pieces of a message: `Ok(true)` if they ended it.
    fn take_descs(&mut self, descs: &[Desc], end: bool) -> io::Result<bool> {
        if self.partial.slice_count() + descs.len() > MAX_PIECES {
            return Err(protocol("a message of too many pieces"));
        }
        self.in_message = true;
        for &d in descs {
            let b = self.lend(d)?;
            self.partial.append_buf(b);
        }
        Ok(end)
    }

    fn take_abort(&mut self) -> io::Result<bool> {
        if !self.in_message {
            return Err(protocol("an abort of no message"));
        }
        // Its pieces go, and their slots back to the sender.
        self.partial = Aggregate::new();
        self.in_message = false;
        Ok(false)
    }

    fn take_bye(&mut self) -> io::Result<bool> {
        if self.in_message {
            return Err(protocol("a message cut short"));
        }
        self.finished = true;
        Ok(false)
    }

    /// Checks `d` against the pool and the slots held, and makes its `Buf`.
    fn lend(&self, d: Desc) -> io::Result<Buf> {
        let slot_size = self.shared.slot_size as u64;
        let mut st = self.shared.lock();
        let h = st
            .held
            .get_mut(d.slot as usize)
            .ok_or_else(|| protocol("a slot out of range"))?;
        if u64::from(d.off) + u64::from(d.len) > slot_size {
            return Err(protocol("bytes past the end of a slot"));
        }
        if d.generation < h.generation {
            return Err(protocol("a stale generation"));
        }
        if h.refs > 0 && d.generation != h.generation {
            return Err(protocol("a new generation of a slot still held here"));
        }
        let new = d.generation != h.generation;
        if new && st.releases.iter().any(|r| r.slot == d.slot) {
            // The sender cannot have had the slot back: it was not sent
            // yet. (This also keeps `releases` to one entry per slot.)
            return Err(protocol("a new generation of a slot not yet released"));
        }
        let h = &mut st.held[d.slot as usize];
        h.generation = d.generation;
        h.refs += 1;
        drop(st);
        Ok(Buf::from_file_owner(Lent {
            shared: self.shared.clone(),
            slot: d.slot,
            off: d.off as usize,
            len: d.len as usize,
        }))
    }
}

fn protocol(msg: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("ipc: the sender sent {msg}"),
    )
}

fn gone() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "ipc: the sender went away")
}

impl Drop for Receiver {
    /// Tells the sender that no more messages will be read (its next send
    /// fails with `BrokenPipe`) and gives back every reference it queued
    /// here; the `Buf`s still alive release theirs as they go.
    fn drop(&mut self) {
        if self.shared.forked() {
            // A shutdown or a release from here would end the parent's
            // channel, or free slots it still reads.
            return;
        }
        let shared = self.shared.clone();
        let sock = shared.sock.as_fd();
        // First the shutdown: nothing can be queued after what is read
        // below.
        let _ = sys::shutdown_read(sock);
        if self.ring.is_some() {
            self.ring_stop();
        } else if self.broken.is_none() {
            while let Ok(Received::Packet {
                len,
                truncated: false,
                fds,
            }) = sys::recv_packet(sock, &mut self.inbox)
            {
                if !fds.is_empty() {
                    break;
                }
                match wire::decode(&self.inbox[..len]) {
                    // Each one checked as a received one, and let go at
                    // once.
                    Ok(Packet::Bufs { descs, .. }) => {
                        if descs.into_iter().any(|d| self.lend(d).is_err()) {
                            break;
                        }
                    }
                    Ok(Packet::Abort) => {}
                    _ => break,
                }
            }
        }
        self.partial = Aggregate::new();
        self.current = Aggregate::new();
        // The releases go now if the socket (or the release ring) takes
        // them, briefly waiting for room, else with the next `Buf` to go.
        let deadline = Instant::now() + Duration::from_millis(500);
        loop {
            let waiting = {
                let mut st = shared.lock();
                shared.flush(&mut st);
                !st.releases.is_empty() && !st.sender_gone
            };
            if !waiting || Instant::now() >= deadline {
                break;
            }
            if self.ring.is_some() {
                // Room on the ring comes with no event to wait for.
                std::thread::sleep(Duration::from_millis(1));
            } else if sys::wait(sock, false, true, Some(deadline)).is_err() {
                break;
            }
        }
    }
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("slot_size", &self.shared.slot_size)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}
