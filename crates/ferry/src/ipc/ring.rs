//! The descriptor rings: the packets of a channel as entries in memory
//! both processes map, so that neither side makes a system call per
//! message while the other is awake.
//!
//! A control block (a memfd sealed against resizing, mapped read-write by
//! both ends) holds two single-producer, single-consumer rings: *tx*, the
//! sender's messages (BUFS, ABORT, BYE), and *release*, the receiver's
//! references given back. Every word is 64 bits, accessed only as an
//! atomic, each index on a cache line of its own:
//!
//! ```text
//!  word  0  magic "FYIPRING" (written by the sender, checked by no one)
//!  word  8  tx head        sender       entries published
//!  word 16  tx tail        receiver     entries taken
//!  word 24  rx waiting     receiver     1: it sleeps, ring the doorbell
//!  word 32  release head   receiver
//!  word 40  release tail   sender
//!  word 48  tx waiting for a release   sender   1: it sleeps, ring the doorbell
//!  word 56  tx waiting for room        sender   (the same, for room on tx)
//!  word 64  rx stopped     receiver     1: it reads no more (dropped)
//!  word 72  rx drained     receiver     1: and took its last entries: what
//!                                       is left on tx (tail..head) is the
//!                                       sender's to take back
//!  word 128 tx entries (tx_cap × 4 words), then release entries (rel_cap × 4)
//!
//!  entry   w0 kind u8 | flags u8 << 8 | slot u32 << 32
//!          w1 offset u32 | len u32 << 32      w2 generation      w3 0
//!  kinds   1 BUF (flags END: the last piece of a message)   2 END (an
//!          empty message)   3 ABORT   4 BYE   5 RELEASE (len references)
//! ```
//!
//! Each side keeps its own indices in its own memory and only publishes
//! them; what it reads of the peer's (an index, an entry, a flag) is
//! checked before anything acts on it: an index more than a ring's
//! capacity away from this side's own, or an entry not of the form above,
//! is an error for the channel. An entry is copied out once and checked
//! on the copy, so a peer rewriting it meanwhile changes nothing.
//!
//! Sleeping and waking (an event count): a side about to wait sets the
//! *waiting* word of what it waits for (the sender has two, so that room
//! taken on tx does not wake a sender that waits for a release), then looks at the ring again before it sleeps in
//! `poll(2)` on the socket; a side that publishes (an entry, or room
//! taken) then swaps the peer's waiting word to 0 and, if it was 1, sends
//! a WAKE packet on the socket. Both steps are separated by sequentially
//! consistent fences, so that at least one side sees the other's write:
//! no wake-up is lost, and a peer that is awake costs no system call.

use super::wire::Desc;
use std::io;
use std::sync::atomic::{fence, AtomicU64, Ordering};

const LINE: usize = 8;
const MAGIC_W: usize = 0;
pub(super) const TX_HEAD: usize = LINE;
pub(super) const TX_TAIL: usize = 2 * LINE;
pub(super) const RX_WAITING: usize = 3 * LINE;
pub(super) const REL_HEAD: usize = 4 * LINE;
pub(super) const REL_TAIL: usize = 5 * LINE;
pub(super) const TX_WAITING: usize = 6 * LINE;
pub(super) const TX_WAITING_ROOM: usize = 7 * LINE;
pub(super) const RX_STOPPED: usize = 8 * LINE;
pub(super) const RX_DRAINED: usize = 9 * LINE;
const ENTRIES: usize = 16 * LINE;
const ENTRY_WORDS: usize = 4;
const MAGIC: u64 = u64::from_le_bytes(*b"FYIPRING");
/// Entries in one ring at most.
pub(crate) const MAX_ENTRIES: u64 = 1 << 16;

const BUF: u64 = 1;
const END_ONLY: u64 = 2;
const ABORT: u64 = 3;
const BYE: u64 = 4;
const RELEASE: u64 = 5;
const END_FLAG: u64 = 1;

/// One ring entry, decoded and checked for form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A piece of a message; `end`: its last.
    Buf {
        desc: Desc,
        end: bool,
    },
    /// The end of a message of no pieces.
    End,
    Abort,
    Bye,
    /// `desc.len` references to a slot given back.
    Release(Desc),
}

impl Entry {
    fn encode(self) -> [u64; 4] {
        let d = |kind: u64, flags: u64, d: Desc| {
            [
                kind | flags << 8 | u64::from(d.slot) << 32,
                u64::from(d.off) | u64::from(d.len) << 32,
                d.generation,
                0,
            ]
        };
        match self {
            Entry::Buf { desc, end } => d(BUF, if end { END_FLAG } else { 0 }, desc),
            Entry::Release(desc) => d(RELEASE, 0, desc),
            Entry::End => [END_ONLY, 0, 0, 0],
            Entry::Abort => [ABORT, 0, 0, 0],
            Entry::Bye => [BYE, 0, 0, 0],
        }
    }

    fn decode(w: [u64; 4]) -> io::Result<Entry> {
        let kind = w[0] & 0xff;
        let flags = (w[0] >> 8) & 0xff;
        let desc = || Desc {
            slot: (w[0] >> 32) as u32,
            off: w[1] as u32,
            len: (w[1] >> 32) as u32,
            generation: w[2],
        };
        let reserved = w[0] & 0xffff_0000 != 0 || w[3] != 0;
        let bare = w[0] >> 8 == 0 && w[1] == 0 && w[2] == 0 && w[3] == 0;
        match kind {
            _ if reserved => Err(bad("reserved bits set")),
            BUF if flags & !END_FLAG == 0 => Ok(Entry::Buf {
                desc: desc(),
                end: flags == END_FLAG,
            }),
            RELEASE if flags == 0 && desc().len > 0 => Ok(Entry::Release(desc())),
            RELEASE if flags == 0 => Err(bad("a release of nothing")),
            END_ONLY if bare => Ok(Entry::End),
            ABORT if bare => Ok(Entry::Abort),
            BYE if bare => Ok(Entry::Bye),
            _ => Err(bad("unknown kind, flags or fields")),
        }
    }
}

fn bad(msg: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("ipc: malformed ring entry: {msg}"),
    )
}

fn broken(msg: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("ipc: the peer broke a ring: {msg}"),
    )
}

/// The shape of a control block: its two rings' capacities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub tx: u64,
    pub rel: u64,
}

impl Shape {
    /// The shape for a pool of `slots` slots: a release ring of eight
    /// entries a slot (4096 at least), a tx ring of four a slot (256 at
    /// least), within [`MAX_ENTRIES`]. The sender keeps no more references
    /// out than the release ring has entries (each may come back alone),
    /// so that it never fills.
    pub(crate) fn for_slots(slots: usize) -> Shape {
        let per_slot = |n: u64, least: u64| {
            (slots as u64)
                .saturating_mul(n)
                .clamp(least, MAX_ENTRIES)
                .next_power_of_two()
        };
        Shape {
            tx: per_slot(4, 256),
            rel: per_slot(8, 4096),
        }
    }

    /// Checks a shape a peer sent: both powers of two, within bounds.
    pub(crate) fn checked(tx: u64, rel: u64) -> io::Result<Shape> {
        let ok = |n: u64| n.is_power_of_two() && n <= MAX_ENTRIES;
        if ok(tx) && ok(rel) {
            Ok(Shape { tx, rel })
        } else {
            Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "ipc: the sender sent rings of impossible shape",
            ))
        }
    }

    /// Words in the control block.
    pub(crate) fn words(self) -> usize {
        ENTRIES + (self.tx + self.rel) as usize * ENTRY_WORDS
    }

    fn tx_ring(self) -> (usize, u64) {
        (ENTRIES, self.tx)
    }

    fn rel_ring(self) -> (usize, u64) {
        (ENTRIES + self.tx as usize * ENTRY_WORDS, self.rel)
    }

    /// Writes the magic word of a new control block (the sender's).
    pub(crate) fn init(self, w: &[AtomicU64]) {
        w[MAGIC_W].store(MAGIC, Ordering::Relaxed);
    }

    /// The sender's ends: tx producer, release consumer.
    pub(crate) fn sender_ends(self) -> (Producer, Consumer) {
        (
            Producer::new(self.tx_ring(), TX_HEAD, TX_TAIL),
            Consumer::new(self.rel_ring(), REL_HEAD, REL_TAIL),
        )
    }

    /// The receiver's ends: tx consumer, release producer.
    pub(crate) fn receiver_ends(self) -> (Consumer, Producer) {
        (
            Consumer::new(self.tx_ring(), TX_HEAD, TX_TAIL),
            Producer::new(self.rel_ring(), REL_HEAD, REL_TAIL),
        )
    }
}

/// The producing end of one ring. Its head lives here; the shared word
/// is only ever written from it. The consumer's tail is read again only
/// when the copy kept here says the ring is full: the line it lives on
/// then crosses between cores once per lap, not once per entry.
#[derive(Debug)]
pub(crate) struct Producer {
    base: usize,
    cap: u64,
    head_w: usize,
    tail_w: usize,
    head: u64,
    tail_seen: u64,
}

impl Producer {
    fn new((base, cap): (usize, u64), head_w: usize, tail_w: usize) -> Producer {
        Producer {
            base,
            cap,
            head_w,
            tail_w,
            head: 0,
            tail_seen: 0,
        }
    }

    /// Entries the ring has room for now (the consumer's tail read anew).
    pub(crate) fn room(&mut self, w: &[AtomicU64]) -> io::Result<u64> {
        let tail = w[self.tail_w].load(Ordering::Acquire);
        let used = self.head.wrapping_sub(tail);
        if used > self.cap {
            return Err(broken("its tail is past the entries published"));
        }
        self.tail_seen = tail;
        Ok(self.cap - used)
    }

    /// Publishes `e`: `Ok(false)` if the ring is full.
    pub(crate) fn push(&mut self, w: &[AtomicU64], e: Entry) -> io::Result<bool> {
        // The tail seen last was checked then; the consumer only moves it
        // on, so the room it leaves is there.
        if self.head.wrapping_sub(self.tail_seen) >= self.cap && self.room(w)? == 0 {
            return Ok(false);
        }
        let at = self.base + (self.head & (self.cap - 1)) as usize * ENTRY_WORDS;
        for (word, v) in w[at..at + ENTRY_WORDS].iter().zip(e.encode()) {
            word.store(v, Ordering::Relaxed);
        }
        self.head = self.head.wrapping_add(1);
        w[self.head_w].store(self.head, Ordering::Release);
        Ok(true)
    }
}

/// The consuming end of one ring. Its tail lives here.
#[derive(Debug)]
pub(crate) struct Consumer {
    base: usize,
    cap: u64,
    head_w: usize,
    tail_w: usize,
    tail: u64,
}

impl Consumer {
    fn new((base, cap): (usize, u64), head_w: usize, tail_w: usize) -> Consumer {
        Consumer {
            base,
            cap,
            head_w,
            tail_w,
            tail: 0,
        }
    }

    /// Entries the ring holds at most.
    pub(crate) fn capacity(&self) -> u64 {
        self.cap
    }

    /// Entries waiting.
    pub(crate) fn waiting(&self, w: &[AtomicU64]) -> io::Result<u64> {
        let head = w[self.head_w].load(Ordering::Acquire);
        let n = head.wrapping_sub(self.tail);
        if n > self.cap {
            return Err(broken("its head is more than the ring ahead"));
        }
        Ok(n)
    }

    /// The next entry, if one is waiting; its room goes back to the
    /// producer at once.
    pub(crate) fn pop(&mut self, w: &[AtomicU64]) -> io::Result<Option<Entry>> {
        if self.waiting(w)? == 0 {
            return Ok(None);
        }
        let at = self.base + (self.tail & (self.cap - 1)) as usize * ENTRY_WORDS;
        let mut e = [0u64; ENTRY_WORDS];
        for (v, word) in e.iter_mut().zip(&w[at..at + ENTRY_WORDS]) {
            *v = word.load(Ordering::Relaxed);
        }
        self.tail = self.tail.wrapping_add(1);
        w[self.tail_w].store(self.tail, Ordering::Release);
        Entry::decode(e).map(Some)
    }
}

/// Says this side is about to sleep on `flag` (its own waiting word); the
/// caller then looks at the ring once more before it sleeps.
pub(crate) fn announce_wait(w: &[AtomicU64], flag: usize) {
    w[flag].store(1, Ordering::Relaxed);
    fence(Ordering::SeqCst);
}

/// Says this side is awake again.
pub(crate) fn end_wait(w: &[AtomicU64], flag: usize) {
    w[flag].store(0, Ordering::Relaxed);
}

/// After publishing: whether the peer sleeps on `flag` and needs a WAKE
/// (it is woken once: the flag is cleared here).
pub(crate) fn wake_needed(w: &[AtomicU64], flag: usize) -> bool {
    fence(Ordering::SeqCst);
    w[flag].load(Ordering::Relaxed) != 0 && w[flag].swap(0, Ordering::Relaxed) != 0
}

/// Raises a flag the peer reads (the receiver's "stopped").
pub(crate) fn raise(w: &[AtomicU64], flag: usize) {
    w[flag].store(1, Ordering::Release);
    fence(Ordering::SeqCst);
}

/// The producer's view of entries the consumer will never take (it said
/// so, `RX_DRAINED`): those from its tail to this producer's head, read
/// back from the ring, each checked for form (a peer may have rewritten
/// them); `None` if the tail the consumer published is out of range.
pub(crate) fn stranded(p: &Producer, w: &[AtomicU64]) -> Option<Vec<Entry>> {
    let tail = w[p.tail_w].load(Ordering::Acquire);
    let n = p.head.wrapping_sub(tail);
    if n > p.cap {
        return None;
    }
    let mut out = Vec::new();
    for i in 0..n {
        let at = p.base + (tail.wrapping_add(i) & (p.cap - 1)) as usize * ENTRY_WORDS;
        let mut e = [0u64; ENTRY_WORDS];
        for (v, word) in e.iter_mut().zip(&w[at..at + ENTRY_WORDS]) {
            *v = word.load(Ordering::Relaxed);
        }
        out.extend(Entry::decode(e).ok());
    }
    Some(out)
}

/// Whether the peer raised `flag`.
pub(crate) fn raised(w: &[AtomicU64], flag: usize) -> bool {
    w[flag].load(Ordering::Acquire) != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    fn block(shape: Shape) -> Vec<AtomicU64> {
        (0..shape.words()).map(|_| AtomicU64::new(0)).collect()
    }

    fn desc(slot: u32, len: u32, generation: u64) -> Desc {
        Desc {
            slot,
            off: 7,
            len,
            generation,
        }
    }

    #[test]
    fn entries_decode_to_what_was_encoded() {
        for e in [
            Entry::Buf {
                desc: desc(u32::MAX, u32::MAX, u64::MAX),
                end: true,
            },
            Entry::Buf {
                desc: desc(0, 0, 0),
                end: false,
            },
            Entry::Release(desc(3, 1, 9)),
            Entry::End,
            Entry::Abort,
            Entry::Bye,
        ] {
            assert_eq!(Entry::decode(e.encode()).unwrap(), e);
        }
    }

    #[test]
    fn malformed_entries_are_errors() {
        let buf = Entry::Buf {
            desc: desc(1, 2, 3),
            end: true,
        }
        .encode();
        let cases: Vec<[u64; 4]> = vec![
            [0, 0, 0, 0],                           // no kind
            [9, 0, 0, 0],                           // unknown kind
            [buf[0] | 2 << 8, buf[1], buf[2], 0],   // unknown flag
            [buf[0] | 1 << 20, buf[1], buf[2], 0],  // reserved bits
            [buf[0], buf[1], buf[2], 1],            // reserved word
            [BYE, 1, 0, 0],                         // a BYE with fields
            [ABORT | 1 << 8, 0, 0, 0],              // an ABORT with flags
            [END_ONLY | 5 << 32, 0, 0, 0],          // an END with a slot
            Entry::Release(desc(1, 0, 1)).encode(), // a release of nothing
        ];
        for c in cases {
            assert!(Entry::decode(c).is_err(), "{c:x?}");
        }
    }

    #[test]
    fn a_full_ring_refuses_and_a_pop_makes_room() {
        let shape = Shape { tx: 4, rel: 2 };
        let w = block(shape);
        let (mut tx, _) = shape.sender_ends();
        let (mut rx, _) = shape.receiver_ends();
        for i in 0..4 {
            assert!(tx.push(&w, Entry::Release(desc(i, 1, 1))).unwrap());
        }
        assert!(!tx.push(&w, Entry::Bye).unwrap());
        assert_eq!(rx.pop(&w).unwrap(), Some(Entry::Release(desc(0, 1, 1))));
        assert!(tx.push(&w, Entry::Bye).unwrap());
        for i in 1..4 {
            assert_eq!(rx.pop(&w).unwrap(), Some(Entry::Release(desc(i, 1, 1))));
        }
        assert_eq!(rx.pop(&w).unwrap(), Some(Entry::Bye));
        assert_eq!(rx.pop(&w).unwrap(), None);
    }

    #[test]
    fn a_peer_moving_an_index_past_the_ring_is_an_error() {
        let shape = Shape { tx: 4, rel: 4 };
        let w = block(shape);
        let (mut tx, _) = shape.sender_ends();
        let (mut rx, _) = shape.receiver_ends();
        // The "sender" publishes a head five entries ahead of a ring of four.
        w[TX_HEAD].store(5, Ordering::Relaxed);
        assert!(rx.pop(&w).is_err());
        // A head behind the tail.
        w[TX_HEAD].store(u64::MAX, Ordering::Relaxed);
        assert!(rx.pop(&w).is_err());
        // The "receiver" publishes a tail ahead of the entries published:
        // seen when the producer reads it, at the latest when its own copy
        // says the ring is full.
        w[TX_HEAD].store(0, Ordering::Relaxed);
        w[TX_TAIL].store(3, Ordering::Relaxed);
        assert!(tx.room(&w).is_err());
        w[TX_TAIL].store(0, Ordering::Relaxed);
        for _ in 0..4 {
            assert!(tx.push(&w, Entry::Bye).unwrap());
        }
        w[TX_TAIL].store(9, Ordering::Relaxed);
        assert!(tx.push(&w, Entry::Bye).is_err());
    }

    #[test]
    fn a_wait_announced_is_seen_once_by_the_publisher() {
        let w = block(Shape { tx: 4, rel: 4 });
        assert!(!wake_needed(&w, RX_WAITING));
        announce_wait(&w, RX_WAITING);
        assert!(wake_needed(&w, RX_WAITING));
        assert!(!wake_needed(&w, RX_WAITING));
        announce_wait(&w, TX_WAITING);
        end_wait(&w, TX_WAITING);
        assert!(!wake_needed(&w, TX_WAITING));
        assert!(!raised(&w, RX_STOPPED));
        raise(&w, RX_STOPPED);
        assert!(raised(&w, RX_STOPPED));
    }

    #[test]
    fn shapes_from_a_peer_are_checked() {
        assert!(Shape::checked(256, 64).is_ok());
        assert!(Shape::checked(0, 64).is_err());
        assert!(Shape::checked(3, 64).is_err());
        assert!(Shape::checked(MAX_ENTRIES * 2, 64).is_err());
        for slots in [1, 64, 65, 1 << 20] {
            let s = Shape::for_slots(slots);
            assert!(Shape::checked(s.tx, s.rel).is_ok());
            assert!(s.rel >= (slots as u64).min(MAX_ENTRIES));
        }
    }

    proptest! {
        #![proptest_config(crate::test_support::proptest_config(256))]

        /// Any sequence of pushes and pops through a small ring (the
        /// indices wrapping many times) against a queue of the same
        /// capacity.
        #[test]
        fn a_ring_behaves_as_a_bounded_queue(ops in proptest::collection::vec(any::<Option<u32>>(), 1..400)) {
            let shape = Shape { tx: 8, rel: 4 };
            let w = block(shape);
            let (mut rx, mut rel) = shape.receiver_ends();
            let (mut tx, mut rel_in) = shape.sender_ends();
            let mut model = VecDeque::new();
            for (i, op) in ops.into_iter().enumerate() {
                match op {
                    Some(slot) => {
                        let e = Entry::Buf { desc: desc(slot, i as u32, i as u64), end: i % 3 == 0 };
                        let pushed = tx.push(&w, e).unwrap();
                        prop_assert_eq!(pushed, model.len() < 8);
                        if pushed { model.push_back(e); }
                        // The other ring is untouched by this one.
                        prop_assert_eq!(rel_in.pop(&w).unwrap(), None);
                    }
                    None => prop_assert_eq!(rx.pop(&w).unwrap(), model.pop_front()),
                }
                prop_assert_eq!(rx.waiting(&w).unwrap(), model.len() as u64);
                prop_assert_eq!(tx.room(&w).unwrap(), 8 - model.len() as u64);
            }
            prop_assert!(rel.push(&w, Entry::Release(desc(1, 1, 1))).unwrap());
            prop_assert_eq!(rel_in.pop(&w).unwrap(), Some(Entry::Release(desc(1, 1, 1))));
        }
    }
}
