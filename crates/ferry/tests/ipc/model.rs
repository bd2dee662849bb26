//! A model of an ipc channel's reference counting, checked against the
//! real thing (both ends in this process, on a socket pair): random
//! sequences of allocating, sending (new slots, the same `Buf` again,
//! copied bytes), receiving and dropping on either side. After every
//! step the sender's free slots are what the model says, and every
//! received buffer still holds the bytes it had when it arrived (a slot
//! is never written while the receiver can see it).

use ferry::ipc::{self, Receiver, Sender, SenderConfig};
use ferry::{Aggregate, Buf};
use proptest::prelude::*;
use std::collections::{HashMap, VecDeque};

const SLOTS: usize = 4;
const SLOT: usize = 4096;

#[derive(Clone, Debug)]
enum Op {
    /// Fill a new slot with `len` bytes of `fill`; keep its `Buf` here.
    New { len: usize, fill: u8 },
    /// Send the kept `Buf` number `i` (modulo), sliced from `from`.
    Send { i: usize, from: usize },
    /// Drop the kept `Buf` number `i`.
    DropLocal { i: usize },
    /// Copy `len` bytes in (one slot) and send them.
    Bytes { len: usize, fill: u8 },
    /// Receive the next message and keep it.
    Recv,
    /// Drop the received message number `i`.
    DropRecv { i: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1..SLOT, any::<u8>()).prop_map(|(len, fill)| Op::New { len, fill }),
        (any::<usize>(), 0..64usize).prop_map(|(i, from)| Op::Send { i, from }),
        any::<usize>().prop_map(|i| Op::DropLocal { i }),
        (1..SLOT, any::<u8>()).prop_map(|(len, fill)| Op::Bytes { len, fill }),
        Just(Op::Recv),
        any::<usize>().prop_map(|i| Op::DropRecv { i }),
    ]
}

/// The model: the slot (its address) of each buffer kept here, in flight
/// or received; `None` for bytes copied into a slot the model cannot name.
#[derive(Default)]
struct Model {
    local: Vec<(usize, Buf, Vec<u8>)>,
    in_flight: VecDeque<(Option<usize>, Vec<u8>)>,
    received: Vec<(Option<usize>, Aggregate, Vec<u8>)>,
    /// The last generation each named slot was handed out with.
    generations: HashMap<usize, u64>,
}

impl Model {
    fn busy(&self, slot: usize) -> bool {
        self.local.iter().any(|l| l.0 == slot)
            || self.in_flight.iter().any(|f| f.0 == Some(slot))
            || self.received.iter().any(|r| r.0 == Some(slot))
    }

    fn free(&self) -> usize {
        let mut named: Vec<usize> = self.local.iter().map(|l| l.0).collect();
        named.extend(self.in_flight.iter().filter_map(|f| f.0));
        named.extend(self.received.iter().filter_map(|r| r.0));
        named.sort_unstable();
        named.dedup();
        let copied = self.in_flight.iter().filter(|f| f.0.is_none()).count()
            + self.received.iter().filter(|r| r.0.is_none()).count();
        SLOTS - named.len() - copied
    }
}

/// A slot's address: slots are one page each, so the page of its bytes.
fn slot_of(b: &Buf) -> usize {
    b.as_slice().as_ptr() as usize / SLOT * SLOT
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    #[cfg_attr(miri, ignore = "memfd and sockets")]
    fn ipc_reference_counts_match_a_model(ops in proptest::collection::vec(op(), 1..60), ring in any::<bool>()) {
        let _g = crate::serial();
        let (a, b) = ipc::pair().unwrap();
        let config = SenderConfig { slot_size: SLOT, slots: SLOTS, timeout: None, ring };
        let mut tx = Sender::new(a, config).unwrap();
        // SAFETY: the peer is the ferry Sender just made.
        let mut rx = unsafe { Receiver::new(b, None) }.unwrap();
        let mut m = Model::default();
        for op in ops {
            match op {
                Op::New { len, fill } => {
                    let got = tx.try_alloc().unwrap();
                    prop_assert_eq!(got.is_some(), m.free() > 0);
                    if let Some(mut s) = got {
                        let generation = s.generation();
                        s[..len].fill(fill);
                        let b = s.freeze(len);
                        let slot = slot_of(&b);
                        prop_assert!(!m.busy(slot), "a busy slot handed out");
                        if let Some(&old) = m.generations.get(&slot) {
                            prop_assert!(generation > old, "a reused slot kept its generation");
                        }
                        m.generations.insert(slot, generation);
                        m.local.push((slot, b, vec![fill; len]));
                    }
                }
                Op::Send { i, from } => {
                    if m.local.is_empty() {
                        continue;
                    }
                    let (slot, b, bytes) = &m.local[i % m.local.len()];
                    let from = from.min(b.len() - 1);
                    let before = tx.stats().bytes_copied;
                    tx.send(Aggregate::from(b.slice(from..))).unwrap();
                    prop_assert_eq!(tx.stats().bytes_copied, before, "a pool Buf was copied");
                    m.in_flight.push_back((Some(*slot), bytes[from..].to_vec()));
                }
                Op::DropLocal { i } => {
                    if !m.local.is_empty() {
                        let n = m.local.len();
                        m.local.remove(i % n);
                    }
                }
                Op::Bytes { len, fill } => {
                    if m.free() == 0 {
                        continue;
                    }
                    let before = tx.stats().bytes_copied;
                    tx.send_bytes(&vec![fill; len]).unwrap();
                    prop_assert_eq!(tx.stats().bytes_copied, before + len as u64);
                    m.in_flight.push_back((None, vec![fill; len]));
                }
                Op::Recv => {
                    let Some((slot, bytes)) = m.in_flight.pop_front() else {
                        continue;
                    };
                    let msg = rx.recv().unwrap().unwrap();
                    prop_assert_eq!(msg.slice_count(), 1);
                    let got = msg.copy_to_vec();
                    prop_assert_eq!(&got, &bytes);
                    m.received.push((slot, msg, got));
                }
                Op::DropRecv { i } => {
                    if !m.received.is_empty() {
                        let n = m.received.len();
                        m.received.remove(i % n);
                    }
                }
            }
            prop_assert_eq!(tx.free_slots().unwrap(), m.free());
            for (_, msg, bytes) in &m.received {
                prop_assert_eq!(&msg.copy_to_vec(), bytes, "a received buffer changed");
            }
            for (_, b, bytes) in &m.local {
                prop_assert_eq!(&b[..], &bytes[..]);
            }
        }
        // Everything received and dropped: every slot comes back.
        while m.in_flight.pop_front().is_some() {
            rx.recv().unwrap().unwrap();
        }
        drop(m);
        prop_assert_eq!(tx.free_slots().unwrap(), SLOTS);
    }
}
