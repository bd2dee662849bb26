//! Copy-free IPC: IO-Lite's cross-domain transfer between processes.
//!
//! A [`Sender`] owns a pool of buffers in a memfd (the fbuf window) and
//! sends it once, with `SCM_RIGHTS`, over a Unix `SOCK_SEQPACKET` socket.
//! The [`Receiver`] maps it read-only. From then on a message is a list of
//! descriptors — (slot, offset, length, generation) — and each one becomes
//! a [`Buf`](crate::Buf) in the receiver that reads the sender's pages
//! in place: no byte is copied on the way.
//!
//! ```text
//!  sender                                     receiver
//!  alloc ► SlotMut ─freeze─► Buf ─send─►  BUFS [slot,off,len,gen]… ─► Buf (read-only map)
//!    ▲                                                                   │ last drop
//!    └── slot free: no Buf here, every reference released ◄── RELEASE ◄──┘
//!  memfd: sealed SHRINK|GROW|FUTURE_WRITE|SEAL, mapped RW here, RO there
//! ```
//!
//! # What each side can rely on
//!
//! * **A received `Buf` never changes while visible** — as long as the
//!   sender keeps to the protocol, which this module's [`Sender`] does by
//!   construction: a slot is writable only through a [`SlotMut`], which
//!   exists only while the slot is free of every reference (here and in
//!   the receiver), and a slot's generation moves on each time it is
//!   handed out again.
//! * **Nobody else can write the pool.** The memfd is sealed with
//!   `F_SEAL_FUTURE_WRITE` after the sender mapped it: no new writable
//!   mapping, no `write(2)`, in any process. The receiver checks the
//!   seals before it maps the pool, and maps it `PROT_READ`.
//! * **No fault, no read outside the pool.** The pool is sealed against
//!   shrinking and growing and the receiver checks its size, so its
//!   mapping never raises SIGBUS; every descriptor is checked (slot in
//!   range, bytes inside the slot, generation not stale, no new
//!   generation of a slot still held or whose release is not yet sent)
//!   before a `Buf` is made of it. A bad descriptor, a malformed packet
//!   (one that carries nothing included), or a descriptor count past the
//!   packet is an `InvalidData` error for that channel.
//! * **Whole messages only.** The receiver hands out a message at its
//!   END packet, never part of one. A sender that fails part-way through
//!   a message (a timeout waiting for a slot or for room) sends an ABORT
//!   (at once, or before its next message), and the receiver drops and
//!   releases the part it took: it never joins it to the next message. A
//!   message the pool cannot hold is refused before anything is sent,
//!   and a failed send takes no slot with it.
//! * **The receiver trusts its peer to keep the protocol**, which is why
//!   [`Receiver::new`] is `unsafe`. The sender's own mapping stays
//!   writable (that is what lets it fill slots without a system call),
//!   so a peer that writes a slot it has not had back — a hostile
//!   program, or code in this process relaying the packets and forging a
//!   release — changes bytes under a `Buf` the receiver holds. It still
//!   cannot make the receiver read outside the pool or fault, and it
//!   cannot reach any other memory of the receiver; but the rule that a
//!   `Buf` never changes while visible then holds only for a ferry
//!   [`Sender`] that nothing else writes for. Whoever connects a receiver
//!   vouches for its peer, as one vouches for a file when mapping it with
//!   a crate that cannot lease it.
//! * **References across processes.** The sender counts the references
//!   it sent per slot; the receiver gives them back in RELEASE packets
//!   when its last `Buf` of a slot goes. A receiver that dies (end of
//!   file on the socket) releases everything it held; one that sends a
//!   release of references it does not hold breaks the channel. A
//!   receiver dropped while some of its `Buf`s live shuts its socket
//!   down for reading and releases what was queued for it: the sender's
//!   sends fail with `BrokenPipe` from then on, but the slots of those
//!   `Buf`s come back only with their releases (or when the receiver's
//!   end closes), never before.
//! * **No leftovers.** The pool (and the rings' block) has no name in any file system, and the
//!   socket is a [`pair`] or an abstract Unix name ([`Listener`],
//!   [`connect`]): kill -9 of either side at any moment leaves no file
//!   behind, and the memory goes with the last process that maps it.
//! * **No wait without end.** A sender waits for a slot (backpressure
//!   when the pool is exhausted) or for room on the socket (a receiver
//!   that does not read) at most [`SenderConfig::timeout`], then fails
//!   with `TimedOut`; a receiver that died or was dropped fails it at
//!   once with `BrokenPipe`. A slot freed in this process (a `Buf`
//!   dropped by another thread) wakes a waiting `alloc` too. Dropping a
//!   sender waits a second at most for room for its BYE. A receiver waits
//!   at most its timeout, however many packets come that do not end a
//!   message; a timeout in mid-message keeps the part received for the
//!   next call. A receiver whose sender died gets `UnexpectedEof`, and
//!   the `Buf`s it holds stay readable. Releases that find the socket
//!   full wait, and go as soon as it has room.
//! * **A forked child leaves the channel alone.** Both ends belong to the
//!   process that made them: in a child forked from it (seen through
//!   `pthread_atfork`), sends and receives fail with `Unsupported`, and
//!   dropping the ends or a received `Buf` does nothing to the channel —
//!   no BYE, no shutdown, no release of a slot the parent still reads.
//!   (A child made by a raw `clone` that skips the fork handlers is not
//!   seen. A [`SlotMut`] held across a fork is writable in both
//!   processes, as any shared mapping is: do not write it in the child.)
//!
//! # Rings, or packets
//!
//! By default ([`SenderConfig::ring`]) the descriptors travel through two
//! rings in a second memfd that both processes map read-write (`ring.rs`
//! has the layout): the sender's messages on one, the receiver's releases
//! on the other. A side that is awake takes what the other published
//! with no system call; the socket carries the HELLO, a WAKE doorbell
//! only to a side that said it sleeps, and the end (a process that dies
//! closes it). Every index and entry read from the shared block is
//! checked as a packet is: a peer that writes garbage there breaks its
//! channel, never the process. The sender keeps no more references out
//! than the release ring holds, so releases always find room, and it
//! refuses a message of more pieces than that. [`Receiver::set_spin`]
//! busy-polls the ring for a while before sleeping. Without rings, each
//! batch of descriptors is a `SOCK_SEQPACKET` packet (`wire.rs`).
//!
//! With rings, a sender sees a receiver that died when it next looks at
//! the socket (when it waits, every 64 slot allocations, and before its
//! BYE): until then its messages go into the ring, as they would into a
//! dead receiver's socket buffer.
//!
//! A received buffer's memfd and offset are kept (the receiver's
//! `Shared::memfd`) so that a write sends it to the kernel straight from
//! the pool (`sendfile`/`splice`).
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! use ferry::ipc::{Receiver, Sender, SenderConfig};
//! let (a, b) = ferry::ipc::pair()?; // one end would go to another process
//! let mut tx = Sender::new(a, SenderConfig { slot_size: 4096, slots: 4, ..Default::default() })?;
//! // SAFETY: the peer is this example's own ferry Sender.
//! let mut rx = unsafe { Receiver::new(b, None)? };
//!
//! let mut slot = tx.alloc()?;
//! slot[..11].copy_from_slice(b"hello world");
//! let hello = slot.freeze(11);
//! tx.send(ferry::Aggregate::from(hello.slice(..5)))?; // by reference
//! tx.send_bytes(b"!")?;                              // copied into a slot, then by reference
//!
//! let got = rx.recv()?.unwrap();
//! assert_eq!(got.copy_to_vec(), b"hello");
//! assert_eq!(rx.recv()?.unwrap().copy_to_vec(), b"!");
//! assert_eq!(tx.stats().bytes_copied, 1);
//! drop(tx);                                          // an orderly close
//! assert!(rx.recv()?.is_none());
//! # Ok(()) }
//! ```

mod face;
mod receiver;
mod ring;
mod sender;
mod slot;
mod upgrade;
mod wire;

pub(crate) use receiver::Got;
pub use receiver::Receiver;
pub use sender::{Sender, SenderConfig, SenderStats};
pub use slot::SlotMut;
pub(crate) use upgrade::take_pipe;
pub use upgrade::PipeOffer;

use crate::sys::ipc as sys;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Duration;

/// A connected Unix `SOCK_SEQPACKET` socket: one end of an ipc channel,
/// before it becomes a [`Sender`] or a [`Receiver`].
///
/// An `OwnedFd` of such a socket (one passed down by a parent, say)
/// becomes one with `Socket::from`.
#[derive(Debug)]
pub struct Socket(OwnedFd);

impl From<OwnedFd> for Socket {
    fn from(fd: OwnedFd) -> Socket {
        Socket(fd)
    }
}

impl From<Socket> for OwnedFd {
    fn from(s: Socket) -> OwnedFd {
        s.0
    }
}

impl AsFd for Socket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

/// This process's fork generation: how many `fork`s lie between it and
/// the process that first called this (or first made a channel) in this
/// program image. A program that records it at start can tell, later,
/// whether it runs in a forked child: channel ends made in a parent are
/// inert in its children, and a child should not take up a channel its
/// parent was offered (an upgraded pipe's reader, say).
///
/// ```
/// let g = ferry::ipc::fork_generation();
/// assert_eq!(ferry::ipc::fork_generation(), g);
/// ```
pub fn fork_generation() -> u64 {
    crate::sys::fork::generation()
}

/// A connected pair of sockets (close-on-exec), for a channel to a child
/// process.
///
/// ```
/// let (a, b) = ferry::ipc::pair().unwrap();
/// # drop((a, b));
/// ```
pub fn pair() -> io::Result<(Socket, Socket)> {
    let (a, b) = sys::seqpacket_pair()?;
    Ok((Socket(a), Socket(b)))
}

/// A socket listening on an abstract Unix name: no file in any file
/// system, gone with the process.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// let name = format!("ferry-doc-{}", std::process::id());
/// let l = ferry::ipc::Listener::bind(&name)?;
/// let c = ferry::ipc::connect(&name)?;
/// let s = l.accept(Some(std::time::Duration::from_secs(5)))?;
/// let mut tx = ferry::ipc::Sender::new(c, Default::default())?;
/// // SAFETY: the peer is this example's own ferry Sender.
/// let mut rx = unsafe { ferry::ipc::Receiver::new(s, None)? };
/// tx.send_bytes(b"hi")?;
/// assert_eq!(rx.recv()?.unwrap().copy_to_vec(), b"hi");
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Listener(OwnedFd);

impl Listener {
    /// Listens on the abstract name `name`.
    pub fn bind(name: &str) -> io::Result<Listener> {
        Ok(Listener(sys::listen_abstract(name)?))
    }

    /// The next connection, waiting at most `timeout` (`None`: forever).
    pub fn accept(&self, timeout: Option<Duration>) -> io::Result<Socket> {
        Ok(Socket(sys::accept(self.0.as_fd(), timeout)?))
    }
}

/// Connects to a [`Listener`]'s abstract name.
pub fn connect(name: &str) -> io::Result<Socket> {
    Ok(Socket(sys::connect_abstract(name)?))
}
