//! The exchange against a model: random sequences of get_buf, allocate,
//! fills, write_buf, read_buf and deallocate on one exchange and a real
//! pipe, checked against a plain model of the bytes in flight and of the
//! memory held under the cap.

use ferry::exchange::Exchange;
use ferry::{Buf, BufMut, PoolConfig};
use proptest::prelude::*;
use std::collections::VecDeque;
use std::io::ErrorKind;

const CLASSES: [usize; 2] = [4096, 16384];
const CAP: usize = 48 << 10;
/// Bytes the model lets sit in the pipe (below its 64 KiB capacity, so a
/// write never blocks this single thread).
const PIPE_ROOM: usize = 60 << 10;

#[derive(Debug, Clone)]
enum Op {
    Get(usize),
    Allocate(usize),
    /// Append `n` bytes of `byte` to held buffer `i % held` (a BufMut).
    Fill(usize, usize, u8),
    /// write_buf held buffer `i % held`.
    Write(usize),
    /// write_buf several held buffers as one aggregate (frozen first).
    WriteMany(usize, usize),
    Read(usize),
    Deallocate(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..20_000).prop_map(Op::Get),
        2 => (0usize..20_000).prop_map(Op::Allocate),
        3 => (any::<usize>(), 0usize..6000, any::<u8>()).prop_map(|(i, n, b)| Op::Fill(i, n, b)),
        3 => any::<usize>().prop_map(Op::Write),
        1 => (any::<usize>(), 1usize..4).prop_map(|(i, k)| Op::WriteMany(i, k)),
        3 => (1usize..30_000).prop_map(Op::Read),
        2 => any::<usize>().prop_map(Op::Deallocate),
    ]
}

enum Held {
    Mut(BufMut),
    Read(Buf),
}

impl Held {
    fn bytes(&self) -> &[u8] {
        match self {
            Held::Mut(m) => m,
            Held::Read(b) => b,
        }
    }
    fn slot(&self) -> usize {
        match self {
            Held::Mut(m) => m.capacity(),
            Held::Read(_) => unreachable!("read slots are recorded apart"),
        }
    }
}

fn class_of(len: usize) -> Option<usize> {
    CLASSES.iter().copied().find(|&c| c >= len)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn exchange_matches_model(ops in proptest::collection::vec(op(), 1..60)) {
        let ex = Exchange::with_config(
            PoolConfig::default().with_classes(CLASSES.to_vec()).with_budget(CAP),
        ).unwrap();
        let (r, w) = std::io::pipe().unwrap();
        // A pipe holds a number of page slots, not of bytes: writes of
        // 2049 bytes take a slot each, so a 64 KiB pipe may be full with
        // 32 KiB in it and a write the model thought fits would wait for
        // ever (this thread is the reader). 1 MiB (256 slots) holds
        // PIPE_ROOM bytes written in at most 60 writes, however split.
        rustix::pipe::fcntl_setpipe_size(&w, 1 << 20).unwrap();
        // The model: what each held buffer holds and the slot it takes,
        // and the bytes in the pipe.
        let mut held: Vec<(Held, usize)> = Vec::new();
        let mut pipe: VecDeque<u8> = VecDeque::new();
        let in_use = |held: &Vec<(Held, usize)>| held.iter().map(|(_, s)| s).sum::<usize>();
        for op in ops {
            match op {
                Op::Get(len) | Op::Allocate(len) => {
                    let alloc = matches!(op, Op::Allocate(_));
                    let got = if alloc { ex.allocate(len) } else { ex.get_buf(len) };
                    let Some(class) = class_of(len) else {
                        prop_assert_eq!(got.unwrap_err().kind(), ErrorKind::InvalidInput);
                        continue;
                    };
                    if in_use(&held) + class <= CAP {
                        let m = got.unwrap();
                        prop_assert_eq!(m.capacity(), class);
                        prop_assert_eq!(m.len(), if alloc { len } else { 0 });
                        prop_assert_eq!(m.as_ptr() as usize % 4096, 0);
                        held.push((Held::Mut(m), class));
                    } else {
                        prop_assert_eq!(got.unwrap_err().kind(), ErrorKind::OutOfMemory);
                    }
                }
                Op::Fill(i, n, b) => {
                    if held.is_empty() { continue; }
                    let k = i % held.len();
                    if let Held::Mut(m) = &mut held[k].0 {
                        let n = n.min(m.tail_room());
                        m.extend_from_slice(&vec![b; n]);
                    }
                }
                Op::Write(i) => {
                    if held.is_empty() { continue; }
                    let k = i % held.len();
                    if pipe.len() + held[k].0.bytes().len() > PIPE_ROOM { continue; }
                    let (h, _) = held.swap_remove(k);
                    let expect = h.bytes().to_vec();
                    let n = match h {
                        Held::Mut(m) => ex.write_buf(&w, m),
                        Held::Read(b) => ex.write_buf(&w, b),
                    }.unwrap();
                    prop_assert_eq!(n, expect.len());
                    pipe.extend(expect);
                }
                Op::WriteMany(i, k) => {
                    let mut a = ferry::Aggregate::new();
                    let mut expect = Vec::new();
                    for j in 0..k {
                        if held.is_empty() { break; }
                        let at = (i + j) % held.len();
                        if pipe.len() + expect.len() + held[at].0.bytes().len() > PIPE_ROOM { break; }
                        let (h, _) = held.swap_remove(at);
                        expect.extend_from_slice(h.bytes());
                        a.append_buf(match h {
                            Held::Mut(m) => m.freeze(),
                            Held::Read(b) => b,
                        });
                    }
                    prop_assert_eq!(ex.write_buf(&w, a).unwrap(), expect.len());
                    pipe.extend(expect);
                }
                Op::Read(max) => {
                    // An empty pipe would wait for a writer that is this
                    // thread: the model only reads what is there.
                    if pipe.is_empty() { continue; }
                    let want = max.min(*CLASSES.last().unwrap());
                    let class = class_of(want).unwrap();
                    let got = ex.read_buf(&r, max);
                    if in_use(&held) + class <= CAP {
                        let b = got.unwrap();
                        let n = want.min(pipe.len());
                        prop_assert_eq!(b.len(), n);
                        let expect: Vec<u8> = pipe.drain(..n).collect();
                        prop_assert!(b[..] == expect[..]);
                        prop_assert!(b.is_pooled());
                        held.push((Held::Read(b), class));
                    } else {
                        // Refused before reading: nothing left the pipe.
                        prop_assert_eq!(got.unwrap_err().kind(), ErrorKind::OutOfMemory);
                    }
                }
                Op::Deallocate(i) => {
                    if held.is_empty() { continue; }
                    let (h, _) = held.swap_remove(i % held.len());
                    match h {
                        Held::Mut(m) => ex.deallocate(m),
                        Held::Read(b) => ex.deallocate(b),
                    }
                }
            }
            // The pool holds exactly the model's buffers, under the cap.
            let st = ex.pool().stats();
            prop_assert_eq!(st.in_use_bytes, in_use(&held));
            prop_assert!(st.reserved_bytes <= CAP);
            for (h, slot) in &held {
                if let Held::Mut(_) = h { prop_assert_eq!(h.slot(), *slot); }
            }
        }
        // Drain: what is left in the pipe comes out, in order.
        drop(w);
        drop(held);
        let mut rest = Vec::new();
        loop {
            let b = ex.read_buf(&r, 16384).unwrap();
            if b.is_empty() { break; }
            rest.extend_from_slice(&b);
        }
        prop_assert!(rest == pipe.into_iter().collect::<Vec<u8>>());
        prop_assert_eq!(ex.pool().stats().in_use_bytes, 0);
    }
}
