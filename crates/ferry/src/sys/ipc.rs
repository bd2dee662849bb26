//! The system calls behind `ipc`: sealed memfd pools, their mappings, and
//! `SOCK_SEQPACKET` Unix sockets that carry packets and one descriptor.
//!
//! A pool is a memfd (no name in any file system: nothing is left behind
//! when its last holder dies, whatever the death). The sender maps it
//! read-write, then seals it: `F_SEAL_SHRINK | F_SEAL_GROW` (its size is
//! fixed, so no mapping of it can fault past its end) and
//! `F_SEAL_FUTURE_WRITE` (no new writable mapping and no `write(2)`: only
//! the mapping the sender already holds can change it), then `F_SEAL_SEAL`.
//! A receiver checks the seals before it maps the pool, read-only.
//!
//! [`SlotMap`] is the sender's writable mapping cut into equal slots, each
//! with a reader/writer count so that safe code can hold either one
//! `&mut [u8]` of a slot ([`SlotWriter`]) or any number of `&[u8]`
//! ([`SlotReader`]), never both. [`ReadOnlyMap`] is the receiver's.

use rustix::fs::{MemfdFlags, SealFlags};
use rustix::mm::{MapFlags, ProtFlags};
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketAddrUnix, SocketFlags, SocketType,
};
use std::io;
use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The seals a receiver requires of a pool before it maps it.
pub(crate) fn required_seals() -> SealFlags {
    SealFlags::SHRINK | SealFlags::GROW | SealFlags::FUTURE_WRITE
}

/// A new memfd of `len` bytes that allows sealing (close-on-exec).
pub(crate) fn memfd_pool(name: &str, len: u64) -> io::Result<OwnedFd> {
    let fd = rustix::fs::memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)?;
    rustix::fs::ftruncate(&fd, len)?;
    Ok(fd)
}

/// Seals a pool the sender has mapped (see the module doc).
pub(crate) fn seal_pool(fd: BorrowedFd<'_>) -> io::Result<()> {
    rustix::fs::fcntl_add_seals(fd, required_seals() | SealFlags::SEAL)?;
    Ok(())
}

/// Checks that `fd` is a memfd sealed as a pool must be and at least
/// `len` bytes long.
pub(crate) fn check_pool(fd: BorrowedFd<'_>, len: u64) -> io::Result<()> {
    let seals = rustix::fs::fcntl_get_seals(fd)
        .map_err(|_| invalid("the pool sent is not a sealed memfd"))?;
    if !seals.contains(required_seals()) {
        return Err(invalid(
            "the pool sent is not sealed against resizing and writing",
        ));
    }
    let st = rustix::fs::fstat(fd)?;
    if (st.st_size as u64) < len {
        return Err(invalid("the pool sent is smaller than its header says"));
    }
    Ok(())
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

/// A shared mapping of a whole memfd; unmapped on drop.
struct Mapping {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; access to its
// bytes is governed by the types below.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    fn new(fd: BorrowedFd<'_>, len: usize, writable: bool) -> io::Result<Mapping> {
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty pool"));
        }
        let prot = if writable {
            ProtFlags::READ | ProtFlags::WRITE
        } else {
            ProtFlags::READ
        };
        // SAFETY: a new shared mapping at an address the kernel chooses;
        // it aliases no Rust object.
        let p =
            unsafe { rustix::mm::mmap(std::ptr::null_mut(), len, prot, MapFlags::SHARED, fd, 0)? };
        let base =
            NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap gave null"))?;
        Ok(Mapping { base, len })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: mapped by `new` for this value alone; every borrow of its
        // bytes holds an `Arc` of the owner, so none is left.
        let _ = unsafe { rustix::mm::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// A writer holds a slot: the count is this value.
const WRITER: usize = usize::MAX;

/// The sender's writable mapping of a pool, cut into `count` slots of
/// `slot_size` bytes.
pub(crate) struct SlotMap {
    map: Mapping,
    slot_size: usize,
    /// Per slot: 0 free, `WRITER` written, else the number of readers.
    state: Box<[AtomicUsize]>,
}

impl SlotMap {
    /// Maps `fd` (at least `slot_size * count` bytes) read-write.
    pub(crate) fn new(fd: BorrowedFd<'_>, slot_size: usize, count: usize) -> io::Result<SlotMap> {
        let len = slot_size
            .checked_mul(count)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "pool too large"))?;
        Ok(SlotMap {
            map: Mapping::new(fd, len, true)?,
            slot_size,
            state: (0..count).map(|_| AtomicUsize::new(0)).collect(),
        })
    }

    /// Slot `i`'s only writer, or `None` if anyone reads or writes it.
    pub(crate) fn writer(self: &Arc<Self>, i: usize) -> Option<SlotWriter> {
        self.state
            .get(i)?
            .compare_exchange(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        Some(SlotWriter {
            map: self.clone(),
            slot: i,
        })
    }

    /// The slot and offset in it of `p` if it points into this mapping.
    pub(crate) fn locate(&self, p: *const u8) -> Option<(usize, usize)> {
        let off = (p as usize).checked_sub(self.map.base.as_ptr() as usize)?;
        (off < self.map.len).then(|| (off / self.slot_size, off % self.slot_size))
    }

    fn ptr(&self, i: usize) -> *mut u8 {
        // SAFETY: `i < count`, so the slot lies inside the mapping.
        unsafe { self.map.base.as_ptr().add(i * self.slot_size) }
    }
}

/// The one writer of a slot: `&mut` access to all its bytes.
pub(crate) struct SlotWriter {
    map: Arc<SlotMap>,
    slot: usize,
}

impl SlotWriter {
    /// Gives up writing for `len` bytes (at most the slot) of shared
    /// reading.
    pub(crate) fn into_reader(mut self, len: usize) -> SlotReader {
        let len = len.min(self.map.slot_size);
        // `self` drops below as a writer of no slot.
        let slot = std::mem::replace(&mut self.slot, usize::MAX);
        self.map.state[slot].store(1, Ordering::Release);
        SlotReader {
            map: self.map.clone(),
            slot,
            len,
        }
    }
}

impl std::ops::Deref for SlotWriter {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the state word says WRITER for as long as this value
        // lives, so no other borrow of the slot exists.
        unsafe { std::slice::from_raw_parts(self.map.ptr(self.slot), self.map.slot_size) }
    }
}

impl std::ops::DerefMut for SlotWriter {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`; `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.map.ptr(self.slot), self.map.slot_size) }
    }
}

impl Drop for SlotWriter {
    fn drop(&mut self) {
        if let Some(s) = self.map.state.get(self.slot) {
            s.store(0, Ordering::Release);
        }
    }
}

/// A shared reader of the first `len` bytes of a slot. While any reader
/// lives nobody in this process can write the slot.
pub(crate) struct SlotReader {
    map: Arc<SlotMap>,
    slot: usize,
    len: usize,
}

impl AsRef<[u8]> for SlotReader {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: the state word counts this reader, so no writer exists;
        // `len <= slot_size` keeps the slice in the slot.
        unsafe { std::slice::from_raw_parts(self.map.ptr(self.slot), self.len) }
    }
}

impl Drop for SlotReader {
    fn drop(&mut self) {
        self.map.state[self.slot].fetch_sub(1, Ordering::Release);
    }
}

/// The receiver's read-only mapping of a pool.
pub(crate) struct ReadOnlyMap {
    map: Mapping,
}

impl ReadOnlyMap {
    pub(crate) fn new(fd: BorrowedFd<'_>, len: usize) -> io::Result<ReadOnlyMap> {
        Ok(ReadOnlyMap {
            map: Mapping::new(fd, len, false)?,
        })
    }

    /// `len` bytes at `off`, or `None` past the end of the mapping.
    ///
    /// The pool is sealed against shrinking, so reading these bytes never
    /// faults. Only the sender's own mapping can write them: a sender that
    /// keeps to the protocol does not while the receiver holds them (see
    /// the `ipc` module doc for one that does not keep to it).
    pub(crate) fn bytes(&self, off: usize, len: usize) -> Option<&[u8]> {
        let end = off.checked_add(len)?;
        if end > self.map.len {
            return None;
        }
        // SAFETY: the range is inside the mapping, which lives as long as
        // `self`; this process has no writable mapping of the pool.
        Some(unsafe { std::slice::from_raw_parts(self.map.base.as_ptr().add(off), len) })
    }
}

/// A connected pair of `SOCK_SEQPACKET` Unix sockets (close-on-exec).
pub(crate) fn seqpacket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?)
}

/// A `SOCK_SEQPACKET` socket listening on the abstract Unix name `name`
/// (no file in any file system).
pub(crate) fn listen_abstract(name: &str) -> io::Result<OwnedFd> {
    let addr = SocketAddrUnix::new_abstract_name(name.as_bytes())?;
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?;
    rustix::net::bind(&fd, &addr)?;
    rustix::net::listen(&fd, 16)?;
    Ok(fd)
}

/// Accepts one connection on `fd`, waiting at most `timeout`.
pub(crate) fn accept(fd: BorrowedFd<'_>, timeout: Option<Duration>) -> io::Result<OwnedFd> {
    wait(fd, true, false, timeout.map(|t| Instant::now() + t))?;
    Ok(rustix::net::accept_with(fd, SocketFlags::CLOEXEC)?)
}

/// Connects to the abstract Unix name `name`.
pub(crate) fn connect_abstract(name: &str) -> io::Result<OwnedFd> {
    let addr = SocketAddrUnix::new_abstract_name(name.as_bytes())?;
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?;
    rustix::net::connect(&fd, &addr)?;
    Ok(fd)
}

/// Waits until `fd` is readable (`read`) or writable (`write`), or has
/// hung up, until `deadline` (forever if `None`). Returns which of the
/// two it is: (readable or hung up, writable).
pub(crate) fn wait(
    fd: BorrowedFd<'_>,
    read: bool,
    write: bool,
    deadline: Option<Instant>,
) -> io::Result<(bool, bool)> {
    wait_or_woken(fd, read, write, None, deadline)
}

/// [`wait`], but also returns (as neither readable nor writable) when the
/// [`Wake`] `woken` is signalled.
pub(crate) fn wait_or_woken(
    fd: BorrowedFd<'_>,
    read: bool,
    write: bool,
    woken: Option<&Wake>,
    deadline: Option<Instant>,
) -> io::Result<(bool, bool)> {
    use rustix::event::{PollFd, PollFlags};
    let mut flags = PollFlags::empty();
    if read {
        flags |= PollFlags::IN;
    }
    if write {
        flags |= PollFlags::OUT;
    }
    loop {
        let left = match deadline {
            Some(d) => {
                let now = Instant::now();
                if now >= d {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the peer did not answer in time",
                    ));
                }
                Some(
                    rustix::time::Timespec::try_from(d - now).unwrap_or(rustix::time::Timespec {
                        tv_sec: i64::MAX,
                        tv_nsec: 0,
                    }),
                )
            }
            None => None,
        };
        let mut p = [PollFd::new(&fd, flags)];
        let mut both;
        let p: &mut [PollFd<'_>] = match woken {
            Some(w) => {
                both = [PollFd::new(&fd, flags), PollFd::new(&w.0, PollFlags::IN)];
                &mut both
            }
            None => &mut p,
        };
        match rustix::event::poll(p, left.as_ref()) {
            Ok(0) => continue,
            Ok(_) => {
                let r = p[0].revents();
                let hup = r.intersects(PollFlags::HUP | PollFlags::ERR);
                return Ok((
                    r.contains(PollFlags::IN) || hup,
                    r.contains(PollFlags::OUT) || hup,
                ));
            }
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Sends one packet without blocking, with `fd` attached if given.
/// `Ok(false)` if the socket's buffer is full.
pub(crate) fn send_packet(
    sock: BorrowedFd<'_>,
    bytes: &[u8],
    fd: Option<BorrowedFd<'_>>,
) -> io::Result<bool> {
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds;
    if let Some(fd) = fd {
        fds = [fd];
        control.push(SendAncillaryMessage::ScmRights(&fds));
    }
    loop {
        match rustix::net::sendmsg(
            sock,
            &[IoSlice::new(bytes)],
            &mut control,
            SendFlags::DONTWAIT | SendFlags::NOSIGNAL,
        ) {
            Ok(_) => return Ok(true),
            Err(rustix::io::Errno::AGAIN) => return Ok(false),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// What [`recv_packet`] got.
pub(crate) enum Received {
    /// A packet of this many bytes (cut to the buffer: `truncated`), and
    /// the descriptors that came with it (all of them; the caller closes
    /// what it does not want by dropping them).
    Packet {
        len: usize,
        truncated: bool,
        fds: Vec<OwnedFd>,
    },
    /// Nothing waiting.
    Empty,
    /// The peer closed its end (or died).
    Closed,
}

/// Receives one packet without blocking.
pub(crate) fn recv_packet(sock: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<Received> {
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut reset = false;
    let r = loop {
        match rustix::net::recvmsg(
            sock,
            &mut [IoSliceMut::new(buf)],
            &mut control,
            RecvFlags::DONTWAIT | RecvFlags::CMSG_CLOEXEC,
        ) {
            Ok(r) => break r,
            Err(rustix::io::Errno::AGAIN) => return Ok(Received::Empty),
            Err(rustix::io::Errno::INTR) => continue,
            // A peer that closed with packets of ours still unread in its
            // queue leaves ECONNRESET pending here, and the kernel reports
            // it before the packets it sent us first (its last messages,
            // its BYE). Reading the error clears it: go on and take those
            // packets; the end of the queue then reads as the close.
            Err(rustix::io::Errno::CONNRESET) if !reset => reset = true,
            Err(rustix::io::Errno::CONNRESET) => return Ok(Received::Closed),
            Err(e) => return Err(e.into()),
        }
    };
    let mut fds = Vec::new();
    for msg in control.drain() {
        if let RecvAncillaryMessage::ScmRights(it) = msg {
            fds.extend(it);
        }
    }
    // A peer that closed and a peer that sent a record of no bytes both
    // read as 0 bytes: only a hang-up is the end (the other is a
    // malformed packet, shorter than any header).
    if r.bytes == 0 && fds.is_empty() && hung_up(sock) {
        return Ok(Received::Closed);
    }
    let truncated = r.flags.contains(rustix::net::ReturnFlags::TRUNC)
        || r.flags.contains(rustix::net::ReturnFlags::CTRUNC);
    Ok(Received::Packet {
        len: r.bytes.min(buf.len()),
        truncated,
        fds,
    })
}

/// Whether `sock` will read no more: the peer closed (or this end shut
/// its reading down).
fn hung_up(sock: BorrowedFd<'_>) -> bool {
    use rustix::event::{PollFd, PollFlags};
    let mut p = [PollFd::new(&sock, PollFlags::IN | PollFlags::RDHUP)];
    let zero = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match rustix::event::poll(&mut p, Some(&zero)) {
        Ok(_) => p[0]
            .revents()
            .intersects(PollFlags::RDHUP | PollFlags::HUP | PollFlags::ERR),
        // Cannot tell: take it as the end, as a read of 0 bytes always was.
        Err(_) => true,
    }
}

/// Shuts down reading on `sock`: the peer's sends fail with `EPIPE`
/// from now on, while packets already queued here can still be read and
/// this end can still send.
pub(crate) fn shutdown_read(sock: BorrowedFd<'_>) -> io::Result<()> {
    Ok(rustix::net::shutdown(sock, rustix::net::Shutdown::Read)?)
}

/// A wake-up call within this process (an eventfd): [`Wake::signal`]
/// makes a [`wait_or_woken`] on it return.
pub(crate) struct Wake(OwnedFd);

impl Wake {
    pub(crate) fn new() -> io::Result<Wake> {
        use rustix::event::EventfdFlags;
        Ok(Wake(rustix::event::eventfd(
            0,
            EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK,
        )?))
    }

    /// Wakes the waiter (or the next one to wait, until cleared).
    pub(crate) fn signal(&self) {
        // Fails only when the counter is full, and then it is signalled.
        let _ = rustix::io::write(&self.0, &1u64.to_ne_bytes());
    }

    /// Clears the signal.
    pub(crate) fn clear(&self) {
        let mut b = [0u8; 8];
        let _ = rustix::io::read(&self.0, &mut b);
    }
}
