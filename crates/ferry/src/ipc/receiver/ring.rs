//! The receiver's side of a channel with rings: messages come in as tx
//! entries, releases go back as release entries, and the socket is
//! looked at only to sleep (a doorbell wakes it) and to see the end.
//!
//! A receive takes what the ring holds; with nothing there it spins for
//! [`Receiver::set_spin`] (no system call), then says it waits and
//! sleeps in `poll(2)` until a doorbell, the sender's end or its
//! deadline. A timeout looks at the socket once before it is returned,
//! so that even a receiver polling with a zero timeout sees a sender
//! that died.

use super::{gone, protocol, Got, Receiver, Shared, State};
use crate::ipc::ring::{self, Consumer, Entry};
use crate::ipc::wire::{self, Packet};
use crate::sys::ipc::{self as sys, Received, SharedWords};
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};

/// Entries taken between two looks at the clock (a sender that streams
/// pieces and never ends a message cannot keep a receive past its
/// deadline).
const CLOCK_EVERY: u32 = 64;

/// Looks at the ring's head between two looks at the clock while a
/// receive spins.
const SPIN_BETWEEN_LOOKS: u32 = 256;

/// How long a receiver whose releases found the ring full sleeps before
/// it tries again (room on the ring comes with no doorbell).
const RETRY_RELEASES: Duration = Duration::from_millis(1);

/// The receiver's end of the tx ring.
pub(super) struct Rx {
    tx: Consumer,
    spin: Duration,
    /// The sender's end of the socket closed: what the ring holds is all
    /// that will come.
    sender_closed: bool,
}

impl Rx {
    pub(super) fn new(tx: Consumer) -> Rx {
        Rx {
            tx,
            spin: Duration::ZERO,
            sender_closed: false,
        }
    }

    /// Whether an entry (or the sender's end) waits to be taken.
    pub(super) fn waiting(&self, w: &SharedWords) -> io::Result<bool> {
        Ok(self.sender_closed || self.tx.waiting(w)? > 0)
    }
}

/// Sends a WAKE on `sock` if the sender sleeps on `flag`; `false` if the
/// sender is gone.
fn wake_sender(shared: &Shared, w: &SharedWords, flag: usize) -> bool {
    if !ring::wake_needed(w, flag) {
        return true;
    }
    let mut packet = Vec::with_capacity(wire::HEADER);
    wire::encode_wake(&mut packet);
    // A full socket holds packets the sender has not read: it wakes for
    // those. Only a closed one means it is gone.
    !matches!(
        sys::send_packet(shared.sock.as_fd(), &packet, &[]),
        Err(e) if sys::peer_gone(&e)
    )
}

/// Puts the releases waiting on the release ring, as far as it has room,
/// and wakes the sender if it sleeps for one.
pub(super) fn flush(shared: &Shared, w: &SharedWords, st: &mut State) {
    if st.sender_gone {
        st.releases.clear();
        return;
    }
    let Some(p) = st.release_ring.as_mut() else {
        return;
    };
    let mut pushed = 0;
    for &d in &st.releases {
        match p.push(w, Entry::Release(d)) {
            Ok(true) => pushed += 1,
            Ok(false) => break,
            // The sender broke its own ring: there is nobody to give
            // them back to.
            Err(_) => {
                st.sender_gone = true;
                st.releases.clear();
                return;
            }
        }
    }
    st.releases.drain(..pushed);
    if pushed > 0 && !wake_sender(shared, w, ring::TX_WAITING) {
        st.sender_gone = true;
        st.releases.clear();
    }
}

impl Receiver {
    /// How long a [`recv`](Self::recv) with nothing to take spins,
    /// looking at the ring without a system call, before it sleeps (on a
    /// channel with rings; the default is not to spin). A spinning
    /// receiver takes a message as soon as it is published, at the cost
    /// of a busy core; within the spin the sender rings no doorbell.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let (a, b) = ferry::ipc::pair()?;
    /// let mut tx = ferry::ipc::Sender::new(a, Default::default())?;
    /// // SAFETY: the peer is this example's own ferry Sender.
    /// let mut rx = unsafe { ferry::ipc::Receiver::new(b, None)? };
    /// rx.set_spin(std::time::Duration::from_micros(50));
    /// tx.send_bytes(b"ping")?;
    /// assert_eq!(rx.recv()?.unwrap().copy_to_vec(), b"ping");
    /// # Ok(()) }
    /// ```
    pub fn set_spin(&mut self, spin: Duration) {
        if let Some(r) = &mut self.ring {
            r.spin = spin;
        }
    }

    /// Whether the channel has rings (the sender's choice,
    /// [`SenderConfig::ring`](crate::ipc::SenderConfig::ring)).
    pub fn has_rings(&self) -> bool {
        self.ring.is_some()
    }

    fn words(&self) -> &SharedWords {
        self.shared
            .control
            .as_ref()
            .expect("ring operations only on a channel with rings")
    }

    fn rx(&mut self) -> &mut Rx {
        self.ring
            .as_mut()
            .expect("ring operations only on a channel with rings")
    }

    /// The next whole message from the ring (see the module doc), or
    /// `Got::Beside` once `beside` was seen readable and the ring was
    /// looked at after that and found empty.
    pub(super) fn ring_recv(
        &mut self,
        deadline: Option<Instant>,
        beside: Option<BorrowedFd<'_>>,
    ) -> io::Result<Got> {
        let spin = self.rx().spin;
        let spin_until = (!spin.is_zero()).then(|| Instant::now() + spin);
        let mut taken = 0u32;
        let mut beside_ready = false;
        loop {
            let releasing = {
                let mut st = self.shared.lock();
                self.shared.flush(&mut st);
                !st.releases.is_empty() && !st.sender_gone
            };
            let mut took = false;
            while let (Some(w), Some(rx)) = (self.shared.control.as_ref(), self.ring.as_mut()) {
                let Some(e) = rx.tx.pop(w)? else { break };
                took = true;
                let ended = match e {
                    Entry::Buf { desc, end } => self.take_descs(&[desc], end)?,
                    Entry::End => self.take_descs(&[], true)?,
                    Entry::Abort => self.take_abort()?,
                    Entry::Bye => self.take_bye()?,
                    Entry::Release(_) => {
                        return Err(protocol("a ring entry only a receiver writes"))
                    }
                };
                if ended || self.finished {
                    self.room_taken();
                    if self.finished {
                        return Ok(Got::Finished);
                    }
                    self.in_message = false;
                    return Ok(Got::Message(std::mem::take(&mut self.partial)));
                }
                taken = taken.wrapping_add(1);
                if taken.is_multiple_of(CLOCK_EVERY)
                    && deadline.is_some_and(|d| Instant::now() >= d)
                {
                    self.room_taken();
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "ipc: no whole message in time",
                    ));
                }
            }
            if took {
                self.room_taken();
            }
            if self.rx().sender_closed {
                return Err(gone());
            }
            if beside_ready && !self.in_message {
                return Ok(Got::Beside);
            }
            if spin_until.is_some_and(|t| Instant::now() < t) {
                // Only the ring's head, a while, between two looks at the
                // clock and at the releases.
                for _ in 0..SPIN_BETWEEN_LOOKS {
                    let (Some(w), Some(rx)) = (self.shared.control.as_ref(), self.ring.as_ref())
                    else {
                        break;
                    };
                    if rx.tx.waiting(w)? > 0 {
                        break;
                    }
                    std::hint::spin_loop();
                }
                continue;
            }
            if !releasing && beside.is_none() && deadline.is_some_and(|d| Instant::now() >= d) {
                // No time left to sleep (a receive with a timeout of
                // zero, in an event loop): the doorbells that came are
                // taken, and the caller hears of the timeout.
                self.drain_socket()?;
                if !self.rx().sender_closed {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "ipc: no whole message in time",
                    ));
                }
                continue;
            }
            // Within a message only its rest is awaited.
            let watch = beside.filter(|_| !self.in_message);
            let slept = self.sleep(deadline, releasing, watch);
            match slept {
                Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                    self.drain_socket()?;
                    if !self.rx().sender_closed {
                        return Err(e);
                    }
                }
                other => {
                    beside_ready = other?;
                    self.drain_socket()?;
                }
            }
        }
    }

    /// [`Receiver::will_wait`] on a channel with rings: the waiting flag
    /// raised, then the ring looked at (the sender publishes, then looks
    /// at the flag: one of the two sees the other). Lowered again when an
    /// entry is there.
    pub(super) fn ring_will_wait(&mut self) -> io::Result<bool> {
        let shared = self.shared.clone();
        let w = shared.control.as_ref().expect("a channel with rings");
        ring::announce_wait(w, ring::RX_WAITING);
        let waiting = self.rx().tx.waiting(w)? > 0 || self.rx().sender_closed;
        if waiting {
            ring::end_wait(w, ring::RX_WAITING);
        }
        Ok(waiting)
    }

    /// Says this side waits, looks at the ring once more, and sleeps until
    /// the socket is readable (a doorbell, the end), `beside` is, or
    /// `deadline` (or a moment, when releases wait for room on their
    /// ring): whether `beside` is readable.
    fn sleep(
        &mut self,
        deadline: Option<Instant>,
        releasing: bool,
        beside: Option<BorrowedFd<'_>>,
    ) -> io::Result<bool> {
        let shared = self.shared.clone();
        let w = shared.control.as_ref().expect("a channel with rings");
        ring::announce_wait(w, ring::RX_WAITING);
        let r = match self.rx().tx.waiting(w) {
            Ok(0) => {
                let until = match (deadline, releasing) {
                    (d, false) => d,
                    (Some(d), true) => Some(d.min(Instant::now() + RETRY_RELEASES)),
                    (None, true) => Some(Instant::now() + RETRY_RELEASES),
                };
                match sys::wait_beside(shared.sock.as_fd(), true, false, beside, until) {
                    Err(e)
                        if e.kind() == io::ErrorKind::TimedOut
                            && releasing
                            && deadline.is_none_or(|d| Instant::now() < d) =>
                    {
                        Ok(false)
                    }
                    r => r.map(|(_, _, b)| b),
                }
            }
            r => r.map(|_| false),
        };
        ring::end_wait(w, ring::RX_WAITING);
        r
    }

    /// Takes every packet waiting on the socket: doorbells, or the end.
    fn drain_socket(&mut self) -> io::Result<()> {
        loop {
            let got = sys::recv_packet(self.shared.sock.as_fd(), &mut self.inbox)?;
            match got {
                Received::Empty => return Ok(()),
                Received::Closed => {
                    self.rx().sender_closed = true;
                    return Ok(());
                }
                Received::Packet {
                    len,
                    truncated,
                    fds,
                } => {
                    if truncated || !fds.is_empty() {
                        return Err(protocol("a packet with descriptors or too long"));
                    }
                    match wire::decode(&self.inbox[..len])? {
                        Packet::Wake => {}
                        _ => return Err(protocol("a packet beside its ring")),
                    }
                }
            }
        }
    }

    /// After entries were taken: wakes a sender that sleeps for room.
    fn room_taken(&self) {
        let _ = wake_sender(&self.shared, self.words(), ring::TX_WAITING_ROOM);
    }

    /// On drop: tells the sender this end reads no more, and lets go of
    /// what the ring still holds for it, each entry checked as a
    /// received one.
    pub(super) fn ring_stop(&mut self) {
        let shared = self.shared.clone();
        let w = shared.control.as_ref().expect("a channel with rings");
        ring::raise(w, ring::RX_STOPPED);
        let _ = wake_sender(&shared, w, ring::TX_WAITING)
            && wake_sender(&shared, w, ring::TX_WAITING_ROOM);
        if self.broken.is_some() {
            return;
        }
        // At most one ring's worth: a sender that keeps publishing cannot
        // keep the drop here.
        let cap = self.rx().tx.capacity();
        for _ in 0..cap {
            let Ok(Some(e)) = self.rx().tx.pop(w) else {
                break;
            };
            if let Entry::Buf { desc, .. } = e {
                if self.lend(desc).is_err() {
                    break;
                }
            }
        }
        // Whatever the sender publishes from now on is its own to take
        // back (it checked `RX_STOPPED` before, this after).
        ring::raise(w, ring::RX_DRAINED);
        let _ = wake_sender(&shared, w, ring::TX_WAITING);
    }
}
