//! The sender's side of a channel with rings: messages go out as tx
//! entries, releases come in as release entries, and the socket carries
//! only doorbells (to a receiver that said it sleeps) and the end.
//!
//! A receiver that died is seen on the socket: when the sender waits,
//! every [`LOOK_EVERY`] takes of the release ring, and before BYE. Until
//! then its messages go into the ring as they would into a dead
//! receiver's socket buffer.

use super::{protocol, Batch, Sender};
use crate::ipc::ring::{self, Consumer, Entry, Producer, Shape};
use crate::ipc::wire::{self, Desc};
use crate::sys::ipc::{self as sys, SharedWords};
use std::io;
use std::os::fd::AsFd;
use std::time::Instant;

/// Takes of the release ring between two looks at the socket.
const LOOK_EVERY: u32 = 64;

/// The sender's ends of the rings.
pub(super) struct Rings {
    words: SharedWords,
    shape: Shape,
    tx: Producer,
    rel: Consumer,
    pumps: u32,
    /// Releases taken off the ring, not yet counted (kept to reuse).
    scratch: Vec<Desc>,
    /// The entries the receiver left on tx when it stopped were taken back.
    reclaimed: bool,
}

impl Rings {
    pub(super) fn new(words: SharedWords, shape: Shape) -> Rings {
        let (tx, rel) = shape.sender_ends();
        Rings {
            words,
            shape,
            tx,
            rel,
            pumps: 0,
            scratch: Vec::with_capacity(wire::MAX_BATCH),
            reclaimed: false,
        }
    }

    /// References out at most: one release entry each fits the ring.
    pub(super) fn max_refs(&self) -> u64 {
        self.shape.rel
    }

    /// The receiver said it reads no more (it was dropped).
    pub(super) fn receiver_stopped(&self) -> bool {
        ring::raised(&self.words, ring::RX_STOPPED)
    }
}

/// What a sender waits for.
#[derive(Clone, Copy)]
pub(super) enum Want {
    /// A release (for a slot).
    Release,
    /// Room on the tx ring.
    Room,
}

impl Sender {
    fn rings(&mut self) -> &mut Rings {
        self.ring
            .as_mut()
            .expect("ring operations only on a channel with rings")
    }

    /// Takes in the releases on the ring, and what the socket has if
    /// `look` (or every [`LOOK_EVERY`] calls).
    pub(super) fn ring_pump(&mut self, look: bool) -> io::Result<()> {
        if self.receiver_gone {
            // Its end closed: every reference it held is back already
            // (`peer_gone`), and a release it put on the ring just before
            // it went counts nothing any more.
            let r = self.rings();
            while let Ok(Some(_)) = r.rel.pop(&r.words) {}
            return Ok(());
        }
        loop {
            let r = self.rings();
            let mut got = std::mem::take(&mut r.scratch);
            let mut popped = Ok(());
            while got.len() < wire::MAX_BATCH {
                match r.rel.pop(&r.words) {
                    Ok(Some(Entry::Release(d))) => got.push(d),
                    Ok(Some(_)) => {
                        popped = Err(protocol("a ring entry only a sender writes"));
                        break;
                    }
                    Ok(None) => break,
                    Err(e) => {
                        popped = Err(e);
                        break;
                    }
                }
            }
            let full = got.len() == wire::MAX_BATCH;
            let counted = popped.and_then(|()| self.release(&got));
            got.clear();
            self.rings().scratch = got;
            counted.map_err(|e| self.fail(e))?;
            if !full {
                break;
            }
        }
        self.reclaim();
        let r = self.rings();
        r.pumps = r.pumps.wrapping_add(1);
        if look || r.pumps.is_multiple_of(LOOK_EVERY) {
            self.pump_socket()?;
        }
        Ok(())
    }

    /// Once the receiver stopped and took its last entries (`RX_DRAINED`),
    /// the references of the entries it left on tx — a message published
    /// while it was stopping — are this side's again: it will never lend
    /// them. (Sends fail from the moment this side saw it stop, so no
    /// entry comes after.)
    fn reclaim(&mut self) {
        let r = self.rings();
        if r.reclaimed || !ring::raised(&r.words, ring::RX_DRAINED) {
            return;
        }
        r.reclaimed = true;
        let Some(left) = ring::stranded(&r.tx, &r.words) else {
            return;
        };
        let mut st = self.shared.lock();
        for e in left {
            if let Entry::Buf { desc, .. } = e {
                let Some(s) = st.get_mut(desc.slot as usize) else {
                    continue;
                };
                if s.generation == desc.generation && s.remote > 0 {
                    s.remote -= 1;
                    self.refs_out = self.refs_out.saturating_sub(1);
                }
            }
        }
    }

    /// Rings the receiver's doorbell if it sleeps.
    fn doorbell(&mut self) -> io::Result<()> {
        if !ring::wake_needed(&self.rings().words, ring::RX_WAITING) {
            return Ok(());
        }
        wire::encode_wake(&mut self.packet);
        match sys::send_packet(self.sock.as_fd(), &self.packet, &[]) {
            Ok(true) => self.stats.packets += 1,
            // The socket is full of packets the receiver has not read:
            // it wakes for those.
            Ok(false) => {}
            Err(e) if sys::peer_gone(&e) => {
                self.receiver_stopped = true;
            }
            Err(e) => return Err(self.fail(e)),
        }
        Ok(())
    }

    /// Sleeps until what `want` names may have come (a doorbell, the
    /// receiver's end, this process's wake-up for a slot), or `deadline`.
    pub(super) fn ring_wait(&mut self, want: Want, deadline: Option<Instant>) -> io::Result<()> {
        // Whatever was published, the receiver must see before this side
        // sleeps on it.
        self.doorbell()?;
        let flag = match want {
            Want::Release => ring::TX_WAITING,
            Want::Room => ring::TX_WAITING_ROOM,
        };
        let r = self.rings();
        ring::announce_wait(&r.words, flag);
        // A receiver that stopped may still give references back (its
        // `Buf`s going): a wait for a release waits for one, or for its
        // end, or the deadline. Room on tx it will never make.
        let ready = match want {
            Want::Release => r.rel.waiting(&r.words).map(|n| n > 0),
            Want::Room => r.tx.room(&r.words).map(|n| n > 0 || r.receiver_stopped()),
        };
        let slept = match ready {
            Ok(false) => {
                let woken = matches!(want, Want::Release).then(|| self.shared.wake.fd());
                sys::wait_beside(self.sock.as_fd(), true, false, woken, deadline).map(|_| ())
            }
            other => other.map(|_| ()),
        };
        ring::end_wait(&self.rings().words, flag);
        slept.map_err(|e| self.fail(e))?;
        self.ring_pump(true)
    }

    /// Publishes `e`, waiting for room until `deadline`.
    fn ring_push(&mut self, e: Entry, deadline: Option<Instant>) -> io::Result<()> {
        loop {
            self.check()?;
            let r = self.rings();
            match r.tx.push(&r.words, e) {
                Ok(true) => return Ok(()),
                Ok(false) => self.ring_wait(Want::Room, deadline)?,
                Err(e) => return Err(self.fail(e)),
            }
        }
    }

    /// Publishes `e` and wakes the receiver if it sleeps.
    pub(super) fn ring_emit(&mut self, e: Entry, deadline: Option<Instant>) -> io::Result<()> {
        self.ring_push(e, deadline)?;
        self.doorbell()
    }

    /// BYE on the ring, after a look at the socket: a receiver that is
    /// gone already makes the close fail, as a BYE sent to it would.
    pub(super) fn ring_bye(&mut self, deadline: Option<Instant>) -> io::Result<()> {
        self.ring_pump(true)?;
        self.check()?;
        self.ring_emit(Entry::Bye, deadline)
    }

    /// The descriptors of `batch` as tx entries (END on the last if
    /// `end`); on an error the ones not published stay in `batch`.
    pub(super) fn ring_descs(
        &mut self,
        batch: &mut Batch,
        end: bool,
        deadline: Option<Instant>,
    ) -> io::Result<()> {
        let n = batch.descs.len();
        if n == 0 {
            self.ring_push(Entry::End, deadline)?;
            batch.started = true;
        }
        for i in 0..n {
            let e = Entry::Buf {
                desc: batch.descs[i],
                end: end && i + 1 == n,
            };
            if let Err(err) = self.ring_push(e, deadline) {
                batch.descs.drain(..i);
                return Err(err);
            }
            batch.started = true;
        }
        batch.descs.clear();
        batch.keep.clear();
        self.doorbell()
    }
}
