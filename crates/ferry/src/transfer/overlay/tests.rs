//! The overlay against a model: any channel parameters, any split of the
//! input into blocks (empty ones, short ones, ones larger than the input
//! channel's B), checked for bytes, block sizes, references and copies.

use super::*;
use proptest::prelude::*;
use std::num::NonZeroUsize;

fn n(x: usize) -> NonZeroUsize {
    NonZeroUsize::new(x).unwrap()
}

/// The paper's Table 1, row by row: its twelve combinations of T and B.
#[test]
fn table_1_rows() {
    use BlockType::{Fixed, Variable};
    let p = |t, b| ChannelParams {
        block: t,
        max: n(b),
        gather: true,
    };
    let rows = [
        (Fixed, 8, Fixed, 8, 1),
        (Fixed, 8, Variable, 8, 1),
        (Fixed, 4, Variable, 8, 1),
        (Variable, 8, Variable, 8, 1),
        (Variable, 4, Variable, 8, 1),
        (Fixed, 8, Variable, 4, 2),
        (Variable, 8, Variable, 4, 2),
        (Fixed, 8, Fixed, 4, 3),
        (Fixed, 4, Fixed, 8, 4),
        (Variable, 8, Fixed, 8, 4),
        (Variable, 4, Fixed, 8, 4),
        (Variable, 8, Fixed, 4, 4),
    ];
    for (ti, bi, to, bo, case) in rows {
        assert_eq!(
            Case::of(p(ti, bi), p(to, bo)).number(),
            case,
            "{ti:?} {bi} -> {to:?} {bo}"
        );
    }
}

#[derive(Debug, Clone)]
struct Setup {
    input: ChannelParams,
    output: ChannelParams,
    last: LastBlock,
    blocks: Vec<usize>,
}

fn params() -> impl Strategy<Value = ChannelParams> {
    (any::<bool>(), 1usize..40, any::<bool>()).prop_map(|(fixed, b, gather)| ChannelParams {
        block: if fixed {
            BlockType::Fixed
        } else {
            BlockType::Variable
        },
        max: n(b),
        gather,
    })
}

fn setup() -> impl Strategy<Value = Setup> {
    (params(), params(), any::<Option<u8>>()).prop_flat_map(|(input, output, pad)| {
        let b = input.max.get();
        // Mostly whole blocks of the input channel (what a fixed source
        // gives), with short, empty and oversized ones among them.
        let size = prop_oneof![
            6 => Just(b),
            2 => 0..=b,
            1 => b..=3 * b,
        ];
        proptest::collection::vec(size, 0..24).prop_map(move |blocks| Setup {
            input,
            output,
            last: pad.map_or(LastBlock::Short, LastBlock::Pad),
            blocks,
        })
    })
}

/// Runs the overlay; the input blocks, the emitted blocks and the stats.
fn run(s: &Setup) -> (Vec<Buf>, Vec<Aggregate>, OverlayStats) {
    let mut next = 0u8;
    let inputs: Vec<Buf> = s
        .blocks
        .iter()
        .map(|&len| {
            Buf::from(
                (0..len)
                    .map(|_| {
                        next = next.wrapping_add(1);
                        next
                    })
                    .collect::<Vec<u8>>(),
            )
        })
        .collect();
    let mut o = Overlay::new(s.input, s.output, s.last).unwrap();
    let mut out = Vec::new();
    for b in &inputs {
        o.push(b.clone(), |a| {
            out.push(a);
            Ok::<(), ()>(())
        })
        .unwrap();
    }
    o.finish(|a| {
        out.push(a);
        Ok::<(), ()>(())
    })
    .unwrap();
    assert_eq!(o.pending(), 0);
    (inputs, out, o.stats())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Bytes in order, block sizes as the output channel requires, and the
    /// stats add up.
    #[test]
    fn bytes_and_block_sizes(s in setup()) {
        let (inputs, out, st) = run(&s);
        let mut want: Vec<u8> = inputs.iter().flat_map(|b| b.iter().copied()).collect();
        let data = want.len();
        let got: Vec<u8> = out.iter().flat_map(|a| a.copy_to_vec()).collect();
        let b = s.output.max.get();
        let mut padding = 0;
        if let (BlockType::Fixed, LastBlock::Pad(byte)) = (s.output.block, s.last) {
            padding = (b - data % b) % b;
            want.extend(std::iter::repeat_n(byte, padding));
        }
        prop_assert_eq!(&got, &want);
        for (i, a) in out.iter().enumerate() {
            let last = i + 1 == out.len();
            match s.output.block {
                BlockType::Variable => prop_assert!((1..=b).contains(&a.len())),
                BlockType::Fixed if last && s.last == LastBlock::Short => {
                    prop_assert!((1..=b).contains(&a.len()))
                }
                BlockType::Fixed => prop_assert_eq!(a.len(), b),
            }
        }
        prop_assert_eq!(st.bytes_in, data as u64);
        prop_assert_eq!(st.blocks_in, inputs.len() as u64);
        prop_assert_eq!(st.padding, padding as u64);
        prop_assert_eq!(st.bytes_out, (data + padding) as u64);
        prop_assert_eq!(st.blocks_out, out.len() as u64);
    }

    /// By reference: every piece of every output block is the input's own
    /// memory, at its own offset — unless the block had to be made
    /// contiguous, and then exactly those blocks' bytes are counted as
    /// copied: blocks that straddle an input boundary (or carry padding
    /// after data) on a channel that cannot gather. Cases 1 and 2 never
    /// copy.
    #[test]
    fn references_and_copies(s in setup()) {
        let (inputs, out, st) = run(&s);
        // Where each input byte lives.
        let mut spans = Vec::new();
        let mut at = 0usize;
        for b in &inputs {
            if !b.is_empty() {
                spans.push((at, at + b.len(), b.as_ptr() as usize));
            }
            at += b.len();
        }
        let data = at;
        let mut pos = 0usize;
        let mut copied = 0usize;
        for a in &out {
            let (start, end) = (pos, pos + a.len());
            let straddles = spans.iter().any(|&(s0, _, _)| start < s0 && s0 < end.min(data))
                || (end > data && start < data);
            if straddles && !s.output.gather {
                copied += a.len();
                prop_assert_eq!(a.slice_count(), 1);
            } else {
                let mut p = start;
                for piece in a.bufs() {
                    if p >= data {
                        break; // padding
                    }
                    let &(s0, _, base) = spans.iter().find(|&&(s0, e0, _)| s0 <= p && p < e0).unwrap();
                    prop_assert_eq!(piece.as_ptr() as usize, base + (p - s0), "a copy where a reference was due");
                    p += piece.len();
                }
            }
            pos = end;
        }
        prop_assert_eq!(st.bytes_copied, copied as u64);
        // Cases 1 and 2 never copy for an input that keeps its channel's
        // rules and needs no padding: a fixed source's blocks are all B but its last, a
        // variable one's at most B.
        let b_in = s.input.max.get();
        let keeps_rules = match s.input.block {
            BlockType::Fixed => s.blocks.iter().rev().skip(1).all(|&l| l == b_in)
                && s.blocks.last().is_none_or(|&l| l <= b_in),
            BlockType::Variable => s.blocks.iter().all(|&l| l <= b_in),
        };
        // (A padded last block on a channel that cannot gather is made
        // contiguous whatever the case: counted above, not a defect.)
        if keeps_rules && st.padding == 0 && matches!(Case::of(s.input, s.output), Case::Direct | Case::Split) {
            prop_assert_eq!(st.bytes_copied, 0);
        }
    }

    /// An emitter that fails at its k-th block: the error comes back from
    /// that push, and the stats count only the blocks accepted before.
    #[test]
    fn an_emitter_error_stops_and_counts_only_what_arrived(s in setup(), k in 0usize..12) {
        let (_, all, _) = run(&s);
        let mut o = Overlay::new(s.input, s.output, s.last).unwrap();
        let mut seen = 0usize;
        let mut emit = |_: Aggregate| {
            if seen == k {
                return Err("full");
            }
            seen += 1;
            Ok(())
        };
        let mut failed = false;
        let mut v = 0u8;
        for &len in &s.blocks {
            let block = Buf::from(vec![v; len]);
            v = v.wrapping_add(1);
            if o.push(block, &mut emit).is_err() {
                failed = true;
                break;
            }
        }
        if !failed {
            failed = o.finish(&mut emit).is_err();
        }
        prop_assert_eq!(failed, all.len() > k);
        let accepted = all.len().min(k);
        let st = o.stats();
        prop_assert_eq!(st.blocks_out, accepted as u64);
        prop_assert_eq!(st.bytes_out, all[..accepted].iter().map(|a| a.len() as u64).sum::<u64>());
    }
}

/// The paper's case 2 wrote a zero-length block when the input block size
/// was a multiple of the output's; here every block has bytes.
#[test]
fn no_empty_block_when_sizes_divide() {
    let mut o = Overlay::new(
        ChannelParams::fixed(n(8)),
        ChannelParams::variable(n(4)),
        LastBlock::Short,
    )
    .unwrap();
    let mut lens = Vec::new();
    for _ in 0..3 {
        o.push(Buf::from(vec![7u8; 8]), |a: Aggregate| {
            lens.push(a.len());
            Ok::<(), ()>(())
        })
        .unwrap();
    }
    assert_eq!(lens, [4; 6]);
    assert_eq!(o.stats().bytes_out, 24);
}

/// Padding a large block is references to one small buffer, not a buffer
/// of the block's size; one past the limit is refused, not attempted.
#[test]
fn padding_a_large_block_is_references() {
    let big = ChannelParams::fixed(n(MAX_PADDED_BLOCK));
    let mut o = Overlay::new(ChannelParams::variable(n(4)), big, LastBlock::Pad(b'x')).unwrap();
    o.push(Buf::from_static(b"abc"), |_| Ok::<(), ()>(()))
        .unwrap();
    let mut last = None;
    o.finish(|a| {
        last = Some(a);
        Ok::<(), ()>(())
    })
    .unwrap();
    let last = last.unwrap();
    assert_eq!(last.len(), MAX_PADDED_BLOCK);
    assert_eq!(last.slice_count(), 1 + MAX_PADDED_BLOCK.div_ceil(PAD_PIECE));
    assert_eq!(o.stats().padding, (MAX_PADDED_BLOCK - 3) as u64);
    let e = Overlay::new(
        ChannelParams::variable(n(4)),
        ChannelParams::fixed(n(MAX_PADDED_BLOCK + 1)),
        LastBlock::Pad(0),
    )
    .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
}
