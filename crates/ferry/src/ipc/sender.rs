//! The sending end: the pool's owner.
//!
//! Each slot of the pool is in one of three states, and its generation
//! moves on every time it is handed out for writing:
//!
//! ```text
//!   free ──alloc──► SlotMut (written, here only) ──freeze──► Buf (read-only here)
//!    ▲                                                         │ send: remote += 1
//!    └──── no Buf here and every reference sent was released ◄─┘
//! ```
//!
//! A slot is never writable while the receiver may see it: it goes back
//! to `free` only when this process holds no `Buf` of it and the receiver
//! has given back every reference sent (or died).

use super::wire::{self, Desc, Packet};
use super::Socket;
use crate::sys::ipc::{self as sys, Received, SlotMap, SlotReader, SlotWriter};
use crate::{Aggregate, Buf};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Mutex, MutexGuard};
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
}

impl Default for SenderConfig {
    fn default() -> SenderConfig {
        SenderConfig {
            slot_size: 64 << 10,
            slots: 64,
            timeout: Some(Duration::from_secs(30)),
        }
    }
}

#[derive(Default)]
struct SlotState {
    generation: u64,
    /// A `SlotMut` or a frozen `Buf` of the slot lives in this process.
    local: bool,
    /// References sent and not yet released.
    remote: u64,
}

impl SlotState {
    fn free(&self) -> bool {
        !self.local && self.remote == 0
    }
}

/// What the pool's `Buf`s and `SlotMut`s share with the sender.
pub(crate) struct Shared {
    map: Arc<SlotMap>,
    slot_size: usize,
    state: Mutex<Vec<SlotState>>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Vec<SlotState>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// This process's hold on a slot (a `SlotMut`, then its frozen `Buf`).
struct Hold {
    shared: Arc<Shared>,
    slot: usize,
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.shared.lock()[self.slot].local = false;
    }
}

/// A slot of a [`Sender`]'s pool, writable by this process alone until it
/// is [frozen](SlotMut::freeze).
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// let (a, b) = ferry::ipc::pair()?;
/// let mut tx = ferry::ipc::Sender::new(a, Default::default())?;
/// // SAFETY: the peer is this example's own ferry Sender.
/// let mut rx = unsafe { ferry::ipc::Receiver::new(b, None)? };
/// let mut slot = tx.alloc()?;
/// slot[..5].copy_from_slice(b"hello");
/// let buf = slot.freeze(5); // read-only from now on, here too
/// tx.send(buf.clone().into())?; // by reference: no byte copied
/// assert_eq!(rx.recv()?.unwrap().copy_to_vec(), b"hello");
/// # Ok(()) }
/// ```
pub struct SlotMut {
    // Field order: the writer lets go of the slot before the hold does.
    writer: SlotWriter,
    hold: Hold,
}

impl SlotMut {
    /// The first `len` bytes (at most the slot) as a read-only `Buf`; the
    /// slot cannot be written again until every `Buf` of it here is gone
    /// and the receiver released every reference sent.
    pub fn freeze(self, len: usize) -> Buf {
        let SlotMut { writer, hold } = self;
        Buf::from_owner(Frozen {
            reader: writer.into_reader(len),
            _hold: hold,
        })
    }

    /// The slot's generation: it moves on each time the slot is reused.
    pub fn generation(&self) -> u64 {
        self.hold.shared.lock()[self.hold.slot].generation
    }
}

impl std::ops::Deref for SlotMut {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.writer
    }
}

impl std::ops::DerefMut for SlotMut {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.writer
    }
}

struct Frozen {
    // Field order: the reader goes before the hold frees the slot.
    reader: SlotReader,
    _hold: Hold,
}

impl AsRef<[u8]> for Frozen {
    fn as_ref(&self) -> &[u8] {
        self.reader.as_ref()
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
}

/// The sending end of an ipc channel: owns a pool in a sealed memfd that
/// the receiver maps read-only, and sends descriptors of its slots.
///
/// See the [module doc](crate::ipc) for the protocol and an example.
pub struct Sender {
    sock: OwnedFd,
    shared: Arc<Shared>,
    timeout: Option<Duration>,
    /// Set when the channel failed: every later call returns it.
    broken: Option<(io::ErrorKind, String)>,
    receiver_gone: bool,
    /// BYE was sent (or tried).
    closed: bool,
    stats: SenderStats,
    packet: Vec<u8>,
    inbox: Vec<u8>,
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
        let mut s = Sender {
            sock: sock.0,
            shared: Arc::new(Shared {
                map,
                slot_size,
                state: Mutex::new((0..config.slots).map(|_| SlotState::default()).collect()),
            }),
            timeout: config.timeout,
            broken: None,
            receiver_gone: false,
            closed: false,
            stats: SenderStats::default(),
            packet: Vec::with_capacity(wire::MAX_PACKET),
            inbox: vec![0; wire::MAX_PACKET],
        };
        wire::encode_hello(&mut s.packet, slot_size as u64, config.slots as u64);
        let packet = std::mem::take(&mut s.packet);
        let r = s.send_packet(&packet, Some(&memfd));
        s.packet = packet;
        r?;
        Ok(s)
    }

    /// How long a send or [`alloc`](Self::alloc) waits for the receiver
    /// before it fails with `TimedOut` (`None`: as long as it lives).
    pub fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.timeout = timeout;
    }

    /// Closes the channel in order: the receiver gets every message sent,
    /// then the end (`None` from [`Receiver::recv`](super::Receiver::recv)).
    /// Dropping a sender does the same, without the error; a receiver
    /// whose sender went away without closing gets `UnexpectedEof`.
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
        self.bye()
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

    /// Sends BYE (waiting for room at most the timeout), once.
    fn bye(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        self.check()?;
        let mut packet = std::mem::take(&mut self.packet);
        wire::encode_bye(&mut packet);
        let r = self.send_packet(&packet, None);
        self.packet = packet;
        r
    }

    /// Bytes per slot.
    pub fn slot_size(&self) -> usize {
        self.shared.slot_size
    }

    /// Slots free for writing now (after taking in the releases waiting).
    pub fn free_slots(&mut self) -> io::Result<usize> {
        self.pump()?;
        Ok(self.shared.lock().iter().filter(|s| s.free()).count())
    }

    /// What this sender has done so far.
    pub fn stats(&self) -> SenderStats {
        self.stats
    }

    /// A free slot, without waiting: `None` if every slot is written,
    /// held here, or held by the receiver.
    pub fn try_alloc(&mut self) -> io::Result<Option<SlotMut>> {
        self.pump()?;
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

    /// A free slot, waiting for the receiver to release one (the pool's
    /// backpressure) at most the configured timeout: `TimedOut` past it,
    /// `BrokenPipe` if the receiver went away while this process itself
    /// holds every slot.
    pub fn alloc(&mut self) -> io::Result<SlotMut> {
        let deadline = self.deadline();
        loop {
            if let Some(m) = self.try_alloc()? {
                return Ok(m);
            }
            if self.receiver_gone {
                return Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "ipc: every slot is held here and the receiver went away",
                ));
            }
            sys::wait(self.sock.as_fd(), true, false, deadline).map_err(|e| self.fail(e))?;
        }
    }

    /// Sends one message: each piece of `data` that is a `Buf` of this
    /// sender's pool goes by reference; any other piece is first copied
    /// into slots (counted in [`SenderStats::bytes_copied`]).
    pub fn send(&mut self, data: Aggregate) -> io::Result<()> {
        self.check()?;
        let mut descs: Vec<Desc> = Vec::with_capacity(wire::MAX_BATCH);
        let mut keep: Vec<Buf> = Vec::new();
        for buf in data.bufs() {
            if buf.is_empty() {
                continue;
            }
            if let Some(d) = self.reference(buf) {
                self.push(&mut descs, &mut keep, d, None)?;
                continue;
            }
            self.copy_in(buf.as_slice(), &mut descs, &mut keep)?;
        }
        self.flush_descs(&mut descs, &mut keep, true)
            .map_err(|e| self.fail(e))
    }

    /// Copies `bytes` into slots and sends them as one message.
    pub fn send_bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.check()?;
        let mut descs: Vec<Desc> = Vec::with_capacity(wire::MAX_BATCH);
        let mut keep: Vec<Buf> = Vec::new();
        self.copy_in(bytes, &mut descs, &mut keep)?;
        self.flush_descs(&mut descs, &mut keep, true)
            .map_err(|e| self.fail(e))
    }

    /// Copies `bytes` into fresh slots and adds their descriptors.
    fn copy_in(
        &mut self,
        bytes: &[u8],
        descs: &mut Vec<Desc>,
        keep: &mut Vec<Buf>,
    ) -> io::Result<()> {
        let pool = self.shared.slot_size * self.shared.lock().len();
        if bytes.len() > pool {
            // The receiver holds a message's pieces until its end: one
            // larger than the pool could never be sent.
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "ipc: a message larger than the pool",
            ));
        }
        for chunk in bytes.chunks(self.shared.slot_size) {
            // Send what is pending before waiting for a slot: the
            // receiver cannot release what it has not been sent.
            if let Err(e) = self.flush_descs(descs, keep, false) {
                return Err(self.fail(e));
            }
            let mut m = self.alloc()?;
            m[..chunk.len()].copy_from_slice(chunk);
            let b = m.freeze(chunk.len());
            self.stats.bytes_copied += chunk.len() as u64;
            let d = self
                .reference(&b)
                .ok_or_else(|| io::Error::other("ipc: lost a slot"))?;
            self.push(descs, keep, d, Some(b))?;
        }
        Ok(())
    }

    fn push(
        &mut self,
        descs: &mut Vec<Desc>,
        keep: &mut Vec<Buf>,
        d: Desc,
        b: Option<Buf>,
    ) -> io::Result<()> {
        self.shared.lock()[d.slot as usize].remote += 1;
        self.stats.refs_sent += 1;
        self.stats.bytes_sent += d.len as u64;
        descs.push(d);
        keep.extend(b);
        if descs.len() == wire::MAX_BATCH {
            self.flush_descs(descs, keep, false)
                .map_err(|e| self.fail(e))?;
        }
        Ok(())
    }

    fn flush_descs(
        &mut self,
        descs: &mut Vec<Desc>,
        keep: &mut Vec<Buf>,
        end: bool,
    ) -> io::Result<()> {
        if descs.is_empty() && !end {
            return Ok(());
        }
        let mut packet = std::mem::take(&mut self.packet);
        wire::encode_descs(&mut packet, false, end, descs);
        let r = self.send_packet(&packet, None);
        self.packet = packet;
        if r.is_err() {
            // Not sent: those references are not the receiver's.
            let mut st = self.shared.lock();
            for d in descs.iter() {
                let r = &mut st[d.slot as usize].remote;
                *r = r.saturating_sub(1);
            }
        }
        descs.clear();
        keep.clear();
        r
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

    fn deadline(&self) -> Option<Instant> {
        self.timeout.map(|t| Instant::now() + t)
    }

    fn check(&self) -> io::Result<()> {
        if let Some((kind, msg)) = &self.broken {
            return Err(io::Error::new(*kind, msg.clone()));
        }
        if self.receiver_gone {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "ipc: the receiver went away",
            ));
        }
        Ok(())
    }

    /// Records `e` as the channel's failure if it is one (not a timeout).
    fn fail(&mut self, e: io::Error) -> io::Error {
        if e.kind() != io::ErrorKind::TimedOut && self.broken.is_none() && !self.receiver_gone {
            self.broken = Some((e.kind(), e.to_string()));
        }
        e
    }

    fn send_packet(&mut self, packet: &[u8], fd: Option<&OwnedFd>) -> io::Result<()> {
        let deadline = self.deadline();
        loop {
            self.pump()?;
            self.check()?;
            match sys::send_packet(self.sock.as_fd(), packet, fd.map(|f| f.as_fd())) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                    self.peer_gone();
                    return self.check();
                }
                Err(e) => return Err(self.fail(e)),
            }
            sys::wait(self.sock.as_fd(), true, true, deadline)?;
        }
    }

    /// Takes in every packet waiting from the receiver (releases).
    fn pump(&mut self) -> io::Result<()> {
        if let Some((kind, msg)) = &self.broken {
            return Err(io::Error::new(*kind, msg.clone()));
        }
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
                    Ok(Packet::Release(descs)) => self.release(&descs),
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
        }
        Ok(())
    }

    /// The receiver died or closed: every reference it held is released.
    fn peer_gone(&mut self) {
        self.receiver_gone = true;
        for s in self.shared.lock().iter_mut() {
            s.remote = 0;
        }
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        let _ = self.bye();
    }
}

fn protocol(msg: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("ipc: the receiver sent {msg}"),
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
