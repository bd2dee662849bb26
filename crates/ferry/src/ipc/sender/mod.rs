//! The sending end: the pool's owner (its slots: `slot.rs`).
//!
//! A message goes out in BUFS packets of at most `MAX_BATCH` descriptors,
//! the last one marked END. Once a packet of a message went out, a
//! failure before its end sends an ABORT (now, or before the next
//! message if the socket is full) so that the receiver drops the pieces
//! it took, and never joins them to the next message.
//!
//! On a channel with rings (the default), the same BUFS, ABORT and BYE
//! go as entries of the tx ring and the releases come back on the release
//! ring (`ring.rs` beside this file); the socket carries the HELLO, the
//! doorbells and the end.

mod ring;

use super::ring::Shape;
use super::slot::{Hold, Shared, SlotMut, SlotState};
use super::wire::{self, Desc, Packet};
use super::Socket;
use crate::sys::ipc::{self as sys, Received, SharedWords, SlotMap, Wake};
use crate::{Aggregate, Buf};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a [`Sender`]'s pool is cut, and how long it waits for its peer.
///
/// ```
/// let c = ferry::ipc::SenderConfig::default();
/// assert!(c.slot_size >= 4096 && c.slots > 0);
/// ```
#[derive(Clone, Debug)]
pub struct SenderConfig {
    /// Bytes per slot (rounded up to whole pages; at most 4 GiB − 1 page).
    pub slot_size: usize,
    /// Slots in the pool.
    pub slots: usize,
    /// How long a send waits for the receiver (room on the socket, a
    /// slot released) before it fails with `TimedOut`; `None` waits as
    /// long as the receiver lives.
    pub timeout: Option<Duration>,
    /// Descriptors travel through rings in memory both processes map,
    /// with the socket as doorbell (the default): a side that is awake
    /// takes a message without a system call. `false` sends each batch
    /// of descriptors as a packet on the socket.
    pub ring: bool,
}

impl Default for SenderConfig {
    fn default() -> SenderConfig {
        SenderConfig {
            slot_size: 64 << 10,
            slots: 64,
            timeout: Some(Duration::from_secs(30)),
            ring: true,
        }
    }
}

/// What a [`Sender`] has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Buffer references sent (descriptors).
    pub refs_sent: u64,
    /// Bytes sent (all of them by reference; [`bytes_copied`](Self::bytes_copied)
    /// of them were first copied into the pool).
    pub bytes_sent: u64,
    /// Bytes copied into the pool because they were not in it.
    pub bytes_copied: u64,
    /// Packets sent on the socket after the HELLO: descriptors, or (with
    /// rings) doorbells to a receiver that slept.
    pub packets: u64,
}

/// How long dropping a sender waits for room on the socket for its BYE.
const BYE_ON_DROP: Duration = Duration::from_secs(1);

/// What a send keeps from one message to the next (empty between them):
/// the buffers, not their contents.
#[derive(Default)]
struct Scratch {
    batch: Batch,
    /// Per piece of the message, its descriptor if it is in the pool.
    refs: Vec<Option<Desc>>,
    /// The slots the message refers to.
    slots: Vec<u32>,
}

/// The descriptors of the message being sent, not yet in a packet.
#[derive(Default)]
struct Batch {
    descs: Vec<Desc>,
    /// The slots copied into for these descriptors, held until sent.
    keep: Vec<Buf>,
    /// A packet of this message went out already.
    started: bool,
}

/// The sending end of an ipc channel: owns a pool in a sealed memfd that
/// the receiver maps read-only, and sends descriptors of its slots.
///
/// See the [module doc](crate::ipc) for the protocol and an example.
pub struct Sender {
    /// The socket is `/dev/null` in forked children (dropped before
    /// `sock` closes).
    _detached: crate::sys::fork::Detached,
    sock: OwnedFd,
    shared: Arc<Shared>,
    timeout: Option<Duration>,
    /// Set when the channel failed: every later call returns it.
    broken: Option<(io::ErrorKind, String)>,
    /// The receiver reads no more (a send failed with `EPIPE`): no new
    /// message, but its releases still come in while it holds buffers.
    receiver_stopped: bool,
    /// The receiver's end is closed (end of file): it holds nothing.
    receiver_gone: bool,
    /// A message failed part-way: its ABORT is still to be sent.
    abort_pending: bool,
    /// BYE was sent (or tried).
    closed: bool,
    stats: SenderStats,
    packet: Vec<u8>,
    inbox: Vec<u8>,
    /// The rings, on a channel that has them.
    ring: Option<ring::Rings>,
    /// The fork generation it was made in (`sys::fork`): in a forked
    /// child it does nothing to the channel.
    born: u64,
    /// References sent and not yet released, over all slots.
    refs_out: u64,
    /// Slots in the pool.
    slots: usize,
    scratch: Scratch,
}

impl Sender {
    /// Makes the pool, maps it, seals it and sends it to the peer on
    /// `sock`.
    pub fn new(sock: Socket, config: SenderConfig) -> io::Result<Sender> {
        let page = crate::sys::page_size();
        let slot_size = config
            .slot_size
            .max(1)
            .checked_next_multiple_of(page)
            .filter(|&s| s <= u32::MAX as usize && config.slots > 0 && config.slots <= 1 << 20)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "ipc: pool too large"))?;
        let len = slot_size
            .checked_mul(config.slots)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "ipc: pool too large"))?;
        let memfd = sys::memfd_pool("ferry-ipc", len as u64)?;
        let map = Arc::new(SlotMap::new(memfd.as_fd(), slot_size, config.slots)?);
        sys::seal_pool(memfd.as_fd())?;
        let shape = Shape::for_slots(config.slots);
        let control = if config.ring {
            let (words, fd) = SharedWords::create("ferry-ipc-ring", shape.words())?;
            shape.init(&words);
            Some((ring::Rings::new(words, shape), fd))
        } else {
            None
        };
        let mut s = Sender {
            born: crate::sys::fork::generation(),
            _detached: crate::sys::fork::detach_in_children(sock.0.as_raw_fd()),
            sock: sock.0,
            shared: Arc::new(Shared {
                map,
                slot_size,
                state: Mutex::new((0..config.slots).map(|_| SlotState::default()).collect()),
                wake: Wake::new()?,
                waiters: Default::default(),
            }),
            timeout: config.timeout,
            broken: None,
            receiver_stopped: false,
            receiver_gone: false,
            abort_pending: false,
            closed: false,
            stats: SenderStats::default(),
            packet: Vec::with_capacity(wire::MAX_PACKET),
            inbox: vec![0; wire::MAX_PACKET],
            ring: None,
            refs_out: 0,
            slots: config.slots,
            scratch: Scratch::default(),
        };
        let ring_shape = control.as_ref().map(|_| (shape.tx, shape.rel));
        wire::encode_hello(
            &mut s.packet,
            slot_size as u64,
            config.slots as u64,
            ring_shape,
        );
        let deadline = s.deadline();
        let mut fds = vec![memfd.as_fd()];
        fds.extend(control.as_ref().map(|c| c.1.as_fd()));
        s.send_encoded(&fds, deadline)?;
        s.stats.packets = 0;
        s.ring = control.map(|c| c.0);
        Ok(s)
    }

    /// How long a send or [`alloc`](Self::alloc) waits for the receiver
    /// before it fails with `TimedOut` (`None`: as long as it lives).
    pub fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.timeout = timeout;
    }

    /// Closes the channel in order: the receiver gets every message sent,
    /// then the end (`None` from [`Receiver::recv`](super::Receiver::recv)).
    /// Dropping a sender does the same, without the error, and waits for
    /// room on the socket a second at most; a receiver whose sender went
    /// away without closing gets `UnexpectedEof`.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let (a, b) = ferry::ipc::pair()?;
    /// let mut tx = ferry::ipc::Sender::new(a, Default::default())?;
    /// // SAFETY: the peer is this example's own ferry Sender.
    /// let mut rx = unsafe { ferry::ipc::Receiver::new(b, None)? };
    /// tx.send_bytes(b"last")?;
    /// tx.close()?;
    /// assert_eq!(rx.recv()?.unwrap().copy_to_vec(), b"last");
    /// assert!(rx.recv()?.is_none());
    /// # Ok(()) }
    /// ```
    pub fn close(mut self) -> io::Result<()> {
        let deadline = self.deadline();
        self.bye(deadline)
    }

    /// Goes without the orderly close: the receiver's next
    /// [`recv`](super::Receiver::recv) fails with `UnexpectedEof`, as if this
    /// process had been killed, so a transfer cut short by an error here
    /// is not taken for a whole one there. What it received stays
    /// readable.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let (a, b) = ferry::ipc::pair()?;
    /// let mut tx = ferry::ipc::Sender::new(a, Default::default())?;
    /// // SAFETY: the peer is this example's own ferry Sender.
    /// let mut rx = unsafe { ferry::ipc::Receiver::new(b, None)? };
    /// tx.send_bytes(b"half")?;
    /// tx.abort();
    /// assert_eq!(rx.recv()?.unwrap().copy_to_vec(), b"half");
    /// assert_eq!(rx.recv().unwrap_err().kind(), std::io::ErrorKind::UnexpectedEof);
    /// # Ok(()) }
    /// ```
    pub fn abort(mut self) {
        self.closed = true;
    }

    /// Sends BYE (after the ABORT of a message cut short, if one is
    /// pending), waiting for room until `deadline`, once.
    fn bye(&mut self, deadline: Option<Instant>) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        self.check()?;
        if self.abort_pending {
            self.send_abort(deadline)?;
            self.abort_pending = false;
        }
        if self.ring.is_some() {
            return self.ring_bye(deadline);
        }
        wire::encode_bye(&mut self.packet);
        self.send_encoded(&[], deadline)
    }

    /// Sends an ABORT, waiting for room until `deadline`.
    fn send_abort(&mut self, deadline: Option<Instant>) -> io::Result<()> {
        if self.ring.is_some() {
            return self.ring_emit(super::ring::Entry::Abort, deadline);
        }
        wire::encode_abort(&mut self.packet);
        self.send_encoded(&[], deadline)
    }

    /// Before any message: waits until `deadline` for the receiver's
    /// greeting ([`Receiver::greet`](super::Receiver::greet), a WAKE
    /// packet), which says it mapped the pool and takes the channel.
    /// False if it did not come in time, or the receiver went away.
    pub(crate) fn wait_greeting(&mut self, deadline: Instant) -> bool {
        loop {
            match sys::recv_packet(self.sock.as_fd(), &mut self.inbox) {
                Ok(Received::Packet {
                    len,
                    truncated: false,
                    fds,
                }) if fds.is_empty() => {
                    return matches!(wire::decode(&self.inbox[..len]), Ok(Packet::Wake));
                }
                Ok(Received::Empty) => {
                    if sys::wait(self.sock.as_fd(), true, false, Some(deadline)).is_err() {
                        return false;
                    }
                }
                _ => return false,
            }
        }
    }

    /// Bytes per slot.
    pub fn slot_size(&self) -> usize {
        self.shared.slot_size
    }

    /// Bytes in the pool: the largest message that can be copied in.
    pub(super) fn pool_size(&self) -> usize {
        self.shared.slot_size * self.slots
    }

    /// Slots free for writing now (after taking in the releases waiting,
    /// and looking at the socket).
    pub fn free_slots(&mut self) -> io::Result<usize> {
        if self.forked() {
            return Err(forked());
        }
        if self.ring.is_some() {
            self.ring_pump(true)?;
        } else {
            self.pump()?;
        }
        Ok(self.shared.lock().iter().filter(|s| s.free()).count())
    }

    /// What this sender has done so far.
    pub fn stats(&self) -> SenderStats {
        self.stats
    }

    /// A free slot, without waiting: `None` if every slot is written,
    /// held here, or held by the receiver.
    pub fn try_alloc(&mut self) -> io::Result<Option<SlotMut>> {
        if self.forked() {
            return Err(forked());
        }
        self.pump()?;
        // Handing out a free slot to be rewritten: not while a fork's child
        // has yet to copy the pool.
        let _gate = crate::sys::fork::gate();
        let mut st = self.shared.lock();
        for (i, s) in st.iter_mut().enumerate() {
            if s.free() {
                if let Some(writer) = self.shared.map.writer(i) {
                    s.local = true;
                    s.generation += 1;
                    return Ok(Some(SlotMut {
                        writer,
                        hold: Hold {
                            shared: self.shared.clone(),
                            slot: i,
                        },
                    }));
                }
            }
        }
        Ok(None)
    }

    /// A free slot, waiting at most the configured timeout for the
    /// receiver to release one (the pool's backpressure) or for a `Buf`
    /// of one held in this process to go (in another thread): `TimedOut`
    /// past it, `BrokenPipe` if the receiver went away while this process
    /// itself holds every slot.
    pub fn alloc(&mut self) -> io::Result<SlotMut> {
        // A free slot costs no system call and no wait.
        if let Some(m) = self.try_alloc()? {
            return Ok(m);
        }
        let deadline = self.deadline();
        // Counted as a waiter before looking again: a slot held here that
        // goes after that look signals `wake`.
        self.shared.waiters.fetch_add(1, Ordering::SeqCst);
        let r = self.alloc_until(deadline);
        self.shared.waiters.fetch_sub(1, Ordering::SeqCst);
        r
    }

    fn alloc_until(&mut self, deadline: Option<Instant>) -> io::Result<SlotMut> {
        loop {
            // Cleared before looking: a slot that goes after this signals
            // again, and the wait below returns at once.
            self.shared.wake.clear();
            if let Some(m) = self.try_alloc()? {
                return Ok(m);
            }
            if self.receiver_gone {
                return Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "ipc: every slot is held here and the receiver went away",
                ));
            }
            if self.ring.is_some() {
                self.ring_wait(ring::Want::Release, deadline)
                    .map_err(|e| self.fail(e))?;
                continue;
            }
            sys::wait_beside(
                self.sock.as_fd(),
                true,
                false,
                Some(self.shared.wake.fd()),
                deadline,
            )
            .map_err(|e| self.fail(e))?;
        }
    }

    /// Sends one message: each piece of `data` that is a `Buf` of this
    /// sender's pool goes by reference; any other piece is first copied
    /// into slots (counted in [`SenderStats::bytes_copied`]).
    ///
    /// A message the pool cannot hold (the slots its copies need and the
    /// slots it refers to, more than the pool has) is refused with
    /// `InvalidInput` before anything is sent. An error once part of a
    /// message went out (`TimedOut` waiting for a slot or for room on the
    /// socket) makes the receiver drop that part: it never sees the
    /// message, and the channel goes on with the next.
    pub fn send(&mut self, data: Aggregate) -> io::Result<()> {
        self.begin()?;
        // Scratch kept from one message to the next: a message costs no
        // allocation here.
        let mut refs = std::mem::take(&mut self.scratch.refs);
        let mut referred = std::mem::take(&mut self.scratch.slots);
        refs.clear();
        referred.clear();
        let mut copied = 0;
        for b in data.bufs().filter(|b| !b.is_empty()) {
            let d = self.reference(b);
            match d {
                Some(d) => referred.push(d.slot),
                None => copied += b.len().div_ceil(self.shared.slot_size),
            }
            refs.push(d);
        }
        referred.sort_unstable();
        referred.dedup();
        let by_reference = refs.iter().filter(|d| d.is_some()).count();
        let fits = self.fits(referred.len() + copied, by_reference + copied);
        self.scratch.slots = referred;
        if let Err(e) = fits {
            self.scratch.refs = refs;
            return Err(e);
        }
        let mut batch = std::mem::take(&mut self.scratch.batch);
        let mut r = Ok(());
        for (buf, d) in data.bufs().filter(|b| !b.is_empty()).zip(&refs) {
            r = match *d {
                Some(d) => self.push(&mut batch, d, None),
                None => self.copy_in(buf.as_slice(), &mut batch),
            };
            if r.is_err() {
                break;
            }
        }
        self.scratch.refs = refs;
        let r = r.and_then(|()| self.flush_descs(&mut batch, true));
        self.end(r, batch)
    }

    /// Copies `bytes` into slots and sends them as one message (failing
    /// as [`send`](Self::send) does).
    pub fn send_bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.begin()?;
        let slots = bytes.len().div_ceil(self.shared.slot_size);
        self.fits(slots, slots)?;
        let mut batch = std::mem::take(&mut self.scratch.batch);
        let r = self
            .copy_in(bytes, &mut batch)
            .and_then(|()| self.flush_descs(&mut batch, true));
        self.end(r, batch)
    }

    /// Before a message: the channel works, and the receiver dropped the
    /// message cut short before (if any).
    fn begin(&mut self) -> io::Result<()> {
        self.check()?;
        if self.abort_pending {
            let deadline = self.deadline();
            self.send_abort(deadline).map_err(|e| self.fail(e))?;
            self.abort_pending = false;
        }
        Ok(())
    }

    /// A message needing `slots` slots at once, in `pieces` pieces, fits
    /// the pool (and, with rings, the references the release ring can
    /// give back).
    fn fits(&self, slots: usize, pieces: usize) -> io::Result<()> {
        let pool = self.slots;
        if self
            .ring
            .as_ref()
            .is_some_and(|r| pieces as u64 > r.max_refs())
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "ipc: a message of more pieces than the channel's release ring holds",
            ));
        }
        if slots > pool {
            // The receiver holds a message's pieces until its end: one
            // larger than the pool could never be sent.
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "ipc: a message larger than the pool",
            ));
        }
        Ok(())
    }

    /// After a message: on an error, the references not sent are not the
    /// receiver's, and the part that was sent is aborted.
    fn end(&mut self, r: io::Result<()>, mut batch: Batch) -> io::Result<()> {
        let Err(e) = r else {
            self.scratch.batch = Batch {
                started: false,
                ..batch
            };
            return Ok(());
        };
        self.unsend(&mut batch);
        if batch.started {
            self.abort_pending = true;
            // At once if there is room; else before the next message.
            let now = Some(Instant::now());
            if self.send_abort(now).is_ok() {
                self.abort_pending = false;
            }
        }
        Err(self.fail(e))
    }

    /// Takes back the references of `batch` that were not sent.
    fn unsend(&mut self, batch: &mut Batch) {
        let mut st = self.shared.lock();
        for d in batch.descs.drain(..) {
            let r = &mut st[d.slot as usize].remote;
            *r = r.saturating_sub(1);
            self.refs_out = self.refs_out.saturating_sub(1);
            self.stats.refs_sent -= 1;
            self.stats.bytes_sent -= u64::from(d.len);
        }
        drop(st);
        // After the lock: the slots' holds take it as they go.
        batch.keep.clear();
    }

    /// Copies `bytes` into fresh slots and adds their descriptors.
    fn copy_in(&mut self, bytes: &[u8], batch: &mut Batch) -> io::Result<()> {
        for chunk in bytes.chunks(self.shared.slot_size) {
            // Send what is pending before waiting for a slot: the
            // receiver cannot release what it has not been sent.
            self.flush_descs(batch, false)?;
            let mut m = self.alloc()?;
            m[..chunk.len()].copy_from_slice(chunk);
            let b = m.freeze(chunk.len());
            self.stats.bytes_copied += chunk.len() as u64;
            let d = self
                .reference(&b)
                .ok_or_else(|| io::Error::other("ipc: lost a slot"))?;
            self.push(batch, d, Some(b))?;
        }
        Ok(())
    }

    fn push(&mut self, batch: &mut Batch, d: Desc, b: Option<Buf>) -> io::Result<()> {
        if let Some(limit) = self.ring.as_ref().map(|r| r.max_refs()) {
            // Every reference out may come back as a release entry of its
            // own: at most as many as the release ring holds, so that it
            // never fills.
            while self.refs_out >= limit {
                self.check()?;
                self.flush_descs(batch, false)?;
                let deadline = self.deadline();
                self.ring_wait(ring::Want::Release, deadline)?;
            }
        }
        self.refs_out += 1;
        self.shared.lock()[d.slot as usize].remote += 1;
        self.stats.refs_sent += 1;
        self.stats.bytes_sent += u64::from(d.len);
        batch.descs.push(d);
        batch.keep.extend(b);
        if batch.descs.len() == wire::MAX_BATCH {
            self.flush_descs(batch, false)?;
        }
        Ok(())
    }

    /// Sends the descriptors of `batch` in one packet (END: the last of
    /// the message); on an error they stay in `batch`, not sent.
    fn flush_descs(&mut self, batch: &mut Batch, end: bool) -> io::Result<()> {
        if batch.descs.is_empty() && !end {
            return Ok(());
        }
        let deadline = self.deadline();
        if self.ring.is_some() {
            return self.ring_descs(batch, end, deadline);
        }
        wire::encode_descs(&mut self.packet, false, end, &batch.descs);
        self.send_encoded(&[], deadline)?;
        batch.started = true;
        batch.descs.clear();
        batch.keep.clear();
        Ok(())
    }

    /// The descriptor of `buf` if it is a frozen `Buf` of this pool.
    fn reference(&self, buf: &Buf) -> Option<Desc> {
        let (slot, off) = self.shared.map.locate(buf.as_slice().as_ptr())?;
        if off + buf.len() > self.shared.slot_size {
            return None;
        }
        let st = self.shared.lock();
        let s = &st[slot];
        // A `Buf` pointing into the pool is a frozen slot (only `freeze`
        // makes one), and it keeps the slot held while it lives.
        s.local.then_some(Desc {
            slot: slot as u32,
            off: off as u32,
            len: buf.len() as u32,
            generation: s.generation,
        })
    }

    /// Whether this is a forked child's copy of the end (it does nothing
    /// to the channel: the parent's it is).
    pub(crate) fn forked(&self) -> bool {
        crate::sys::fork::generation() != self.born
    }

    fn deadline(&self) -> Option<Instant> {
        self.timeout.map(|t| Instant::now() + t)
    }

    fn check(&mut self) -> io::Result<()> {
        if self.forked() {
            return Err(forked());
        }
        if let Some((kind, msg)) = &self.broken {
            return Err(io::Error::new(*kind, msg.clone()));
        }
        if self.ring.as_ref().is_some_and(|r| r.receiver_stopped()) {
            self.receiver_stopped = true;
        }
        if self.receiver_stopped || self.receiver_gone {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "ipc: the receiver went away",
            ));
        }
        Ok(())
    }

    /// Records `e` as the channel's failure if it is one (not a timeout).
    fn fail(&mut self, e: io::Error) -> io::Error {
        if e.kind() != io::ErrorKind::TimedOut
            && self.broken.is_none()
            && !self.receiver_stopped
            && !self.receiver_gone
        {
            self.broken = Some((e.kind(), e.to_string()));
        }
        e
    }

    /// Sends the packet in `self.packet`, with `fds` attached, waiting
    /// for room until `deadline`.
    fn send_encoded(
        &mut self,
        fds: &[BorrowedFd<'_>],
        deadline: Option<Instant>,
    ) -> io::Result<()> {
        loop {
            self.pump()?;
            self.check()?;
            match sys::send_packet(self.sock.as_fd(), &self.packet, fds) {
                Ok(true) => {
                    self.stats.packets += 1;
                    return Ok(());
                }
                Ok(false) => {}
                Err(e) if sys::peer_gone(&e) => {
                    // The receiver reads no more. It may still hold
                    // buffers (it stopped reading, or its end is shared
                    // with another process): their slots come back with
                    // its releases, or all at once at the end of file.
                    self.receiver_stopped = true;
                    return self.check();
                }
                Err(e) => return Err(self.fail(e)),
            }
            sys::wait(self.sock.as_fd(), true, true, deadline)?;
        }
    }

    /// Takes in every release waiting from the receiver (on the socket,
    /// or on the release ring and, now and then, what the socket has).
    fn pump(&mut self) -> io::Result<()> {
        if let Some((kind, msg)) = &self.broken {
            return Err(io::Error::new(*kind, msg.clone()));
        }
        if self.ring.is_some() {
            return self.ring_pump(false);
        }
        self.pump_socket()
    }

    /// Takes in every packet waiting on the socket.
    fn pump_socket(&mut self) -> io::Result<()> {
        while !self.receiver_gone {
            let got = sys::recv_packet(self.sock.as_fd(), &mut self.inbox);
            let (len, truncated, fds) = match got {
                Ok(Received::Packet {
                    len,
                    truncated,
                    fds,
                }) => (len, truncated, fds),
                Ok(Received::Empty) => break,
                Ok(Received::Closed) => {
                    self.peer_gone();
                    break;
                }
                Err(e) => return Err(self.fail(e)),
            };
            let r = if truncated || !fds.is_empty() {
                Err(protocol("a packet with descriptors or too long"))
            } else {
                match wire::decode(&self.inbox[..len]) {
                    Ok(Packet::Release(descs)) if self.ring.is_none() => self.release(&descs),
                    Ok(Packet::Release(_)) => Err(protocol("a release packet beside its ring")),
                    Ok(Packet::Wake) if self.ring.is_some() => Ok(()),
                    Ok(_) => Err(protocol("a packet only a sender sends")),
                    Err(e) => Err(e),
                }
            };
            drop(fds);
            r.map_err(|e| self.fail(e))?;
        }
        Ok(())
    }

    fn release(&mut self, descs: &[Desc]) -> io::Result<()> {
        let mut st = self.shared.lock();
        for d in descs {
            let s = st
                .get_mut(d.slot as usize)
                .filter(|s| s.generation == d.generation && u64::from(d.len) <= s.remote)
                .ok_or_else(|| protocol("a release of references it does not hold"))?;
            s.remote -= u64::from(d.len);
            self.refs_out -= u64::from(d.len);
        }
        Ok(())
    }

    /// The receiver's end is closed (end of file: it died or closed):
    /// every reference it held is released. Only then: a receiver that
    /// merely stopped reading may still hold buffers.
    fn peer_gone(&mut self) {
        self.receiver_gone = true;
        for s in self.shared.lock().iter_mut() {
            s.remote = 0;
        }
        self.refs_out = 0;
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        if self.forked() {
            // The channel is the parent's: a BYE from here would end it
            // there.
            return;
        }
        // A receiver that does not read must not keep a drop waiting.
        let deadline = Instant::now() + self.timeout.map_or(BYE_ON_DROP, |t| t.min(BYE_ON_DROP));
        let _ = self.bye(Some(deadline));
    }
}

fn protocol(msg: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("ipc: the receiver sent {msg}"),
    )
}

/// What an end used in a forked child of the process that made it says.
pub(crate) fn forked() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "ipc: this end of the channel belongs to the process that made it, not to a child forked from it",
    )
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("slot_size", &self.shared.slot_size)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}
