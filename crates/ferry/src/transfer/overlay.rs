//! Roadrunner's overlay algorithm (Miller, Keleher and Tripathi, *General
//! Data Streaming*, §3–5): a stream of input blocks laid over a stream of
//! output blocks, each side described by its **channel parameters** — the
//! block type T (every transfer exactly B bytes, or any size up to B) and
//! the maximum block size B.
//!
//! ```text
//!  input   |==== Bin ====|==== Bin ====|==== Bin ====|     (case 3: Bin > Bout, both fixed)
//!  output  |= Bout =|= Bout =|= Bout =|= Bout =|= Bout =|
//!          └─ref────┘└ref+ref┘└─ref───┘ …
//! ```
//!
//! Each output block is made of references to the input blocks (`Buf`
//! slices: the input buffer lives as long as any slice of it, which the
//! paper's listings got wrong by releasing it while slices were still being
//! written). A block that straddles two input blocks is a gather of two
//! slices: ferry hands it over as an [`Aggregate`] when the output channel
//! takes a block in pieces (`writev`, `sendmsg` — every descriptor does),
//! and copies it into one contiguous buffer only when the channel needs
//! contiguous memory ([`ChannelParams::gather`] false). That copy is the
//! only one the algorithm ever makes, and [`OverlayStats::bytes_copied`]
//! counts it. So where the paper's case 3 and case 4 always copy, ferry's
//! copy only for a channel that cannot gather.
//!
//! The paper's other defects are not copied either: no zero-length block
//! when the sizes divide evenly (its case 2), the last partial block of a
//! fixed-size output is flushed ([`LastBlock`]: short, or padded), and the
//! byte counts are the bytes moved, not nominal block sizes.
//!
//! ```
//! use ferry::transfer::overlay::{ChannelParams, Case, LastBlock, Overlay};
//! use ferry::{Aggregate, Buf};
//! use std::num::NonZeroUsize;
//!
//! let n = |x| NonZeroUsize::new(x).unwrap();
//! // A disk-like source (fixed 10-byte blocks) into a fixed 4-byte sink
//! // that cannot gather: case 3.
//! let mut o = Overlay::new(
//!     ChannelParams::fixed(n(10)),
//!     ChannelParams::fixed(n(4)).gather(false),
//!     LastBlock::Short,
//! )
//! .unwrap();
//! assert_eq!(o.case(), Case::Refill);
//! let mut out: Vec<Vec<u8>> = Vec::new();
//! let mut emit = |a: Aggregate| -> Result<(), ()> { out.push(a.copy_to_vec()); Ok(()) };
//! o.push(Buf::from_static(b"0123456789"), &mut emit)?;
//! o.push(Buf::from_static(b"abcdefghij"), &mut emit)?;
//! o.finish(&mut emit)?;
//! assert_eq!(out.concat(), b"0123456789abcdefghij");
//! assert!(out.iter().all(|b| b.len() == 4));
//! assert_eq!(out[2], b"89ab");
//! // One block straddled the two inputs ("89ab"): 4 bytes copied.
//! assert_eq!(o.stats().bytes_copied, 4);
//! # Ok::<(), ()>(())
//! ```

use crate::{Aggregate, Buf};
use std::io;
use std::num::NonZeroUsize;

/// The block type T of a channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockType {
    /// Every transfer is exactly the block size (a disk's sector, a record
    /// size the caller imposes, a datagram protocol with fixed frames).
    Fixed,
    /// A transfer is any size from 1 byte up to the maximum (a pipe, a
    /// stream socket, a file read with `read(2)`).
    Variable,
}

/// A channel's parameters: block type T and maximum block size B, as the
/// paper defines them, and whether it takes one block in several pieces.
///
/// ```
/// use ferry::transfer::overlay::{BlockType, ChannelParams};
/// use std::num::NonZeroUsize;
/// let pipe = ChannelParams::variable(NonZeroUsize::new(65536).unwrap());
/// assert_eq!(pipe.block, BlockType::Variable);
/// assert!(pipe.gather);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChannelParams {
    /// T: fixed or variable.
    pub block: BlockType,
    /// B: the block size (fixed) or the largest transfer (variable).
    pub max: NonZeroUsize,
    /// The channel takes a block as a gather list (`writev`, `sendmsg`,
    /// `vmsplice` of several pieces) as one transfer. ferry's addition to
    /// the paper's two parameters: it decides whether a block made of two
    /// input blocks' pieces must be copied into one buffer.
    pub gather: bool,
}

impl ChannelParams {
    /// A fixed-block channel of `size`-byte blocks, taking gather lists.
    pub fn fixed(size: NonZeroUsize) -> ChannelParams {
        ChannelParams {
            block: BlockType::Fixed,
            max: size,
            gather: true,
        }
    }

    /// A variable-block channel of transfers up to `max` bytes, taking
    /// gather lists.
    pub fn variable(max: NonZeroUsize) -> ChannelParams {
        ChannelParams {
            block: BlockType::Variable,
            max,
            gather: true,
        }
    }

    /// The same channel, taking gather lists or needing contiguous blocks.
    pub fn gather(self, gather: bool) -> ChannelParams {
        ChannelParams { gather, ..self }
    }
}

/// The paper's four streaming cases (its Table 1 and Figure 4), from the
/// two channels' parameters.
///
/// ```
/// use ferry::transfer::overlay::{Case, ChannelParams};
/// use std::num::NonZeroUsize;
/// let n = |x| NonZeroUsize::new(x).unwrap();
/// let (fix, var) = (ChannelParams::fixed, ChannelParams::variable);
/// assert_eq!(Case::of(fix(n(512)), var(n(1460))), Case::Direct);
/// assert_eq!(Case::of(var(n(65536)), var(n(1460))), Case::Split);
/// assert_eq!(Case::of(fix(n(4096)), fix(n(512))), Case::Refill);
/// assert_eq!(Case::of(var(n(1460)), fix(n(512))), Case::Aggregate);
/// assert_eq!(Case::of(fix(n(512)), fix(n(4096))).number(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Case {
    /// Case 1: input blocks go out as they are (both fixed and equal, or a
    /// variable output at least as large as the input's blocks).
    Direct,
    /// Case 2: a variable output smaller than the input's blocks: each
    /// input block goes out as several references to it.
    Split,
    /// Case 3: both fixed, the input's blocks larger: references, and a
    /// block that straddles two inputs where the sizes do not divide.
    Refill,
    /// Case 4: both fixed with the output's blocks larger, or a variable
    /// input into a fixed output: output blocks gathered from several
    /// inputs.
    Aggregate,
}

impl Case {
    /// The case for a stream from `input` to `output`: the paper's rules
    /// (its Table 5 disagrees with them for some rows; the rules win).
    pub fn of(input: ChannelParams, output: ChannelParams) -> Case {
        use BlockType::{Fixed, Variable};
        let (bi, bo) = (input.max, output.max);
        match (input.block, output.block) {
            (Fixed, Fixed) if bi == bo => Case::Direct,
            (_, Variable) if bi <= bo => Case::Direct,
            (_, Variable) => Case::Split,
            (Fixed, Fixed) if bi > bo => Case::Refill,
            (Fixed, Fixed) | (Variable, Fixed) => Case::Aggregate,
        }
    }

    /// The paper's number for the case, 1 to 4.
    pub fn number(self) -> u8 {
        match self {
            Case::Direct => 1,
            Case::Split => 2,
            Case::Refill => 3,
            Case::Aggregate => 4,
        }
    }
}

/// The largest fixed output block [`LastBlock::Pad`] may fill (1 GiB).
pub const MAX_PADDED_BLOCK: usize = 1 << 30;

/// Padding goes out as references to one buffer of this many bytes.
const PAD_PIECE: usize = 64 << 10;

/// What a fixed-block output gets when the input ends inside a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LastBlock {
    /// The last block goes out short (a file, a pipe: the end is the end).
    Short,
    /// The last block is filled up to the block size with this byte (a
    /// device that takes whole blocks only); [`OverlayStats::padding`]
    /// counts the bytes added.
    Pad(u8),
}

/// What an [`Overlay`] has done, in bytes and blocks actually handed on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OverlayStats {
    /// Input blocks pushed (empty ones included).
    pub blocks_in: u64,
    /// Input bytes pushed.
    pub bytes_in: u64,
    /// Output blocks the emitter accepted.
    pub blocks_out: u64,
    /// Bytes in those blocks (padding included).
    pub bytes_out: u64,
    /// Bytes copied in user space: output blocks made contiguous for a
    /// channel that cannot gather.
    pub bytes_copied: u64,
    /// Padding bytes added to the last block ([`LastBlock::Pad`]).
    pub padding: u64,
}

/// The overlay of one stream: input blocks in ([`push`](Overlay::push)),
/// output blocks out through the caller's emitter, by reference.
///
/// Bytes come out in the order they went in. Output blocks of a variable
/// channel are 1 to B bytes; those of a fixed channel exactly B, but for a
/// last short block ([`LastBlock::Short`]) at [`finish`](Overlay::finish).
/// An emitter error stops the push and comes back from it; the stats count
/// only blocks the emitter accepted.
#[derive(Debug)]
pub struct Overlay {
    output: ChannelParams,
    case: Case,
    last: LastBlock,
    /// Of a fixed output: the start of the next block, shorter than B.
    pending: Aggregate,
    stats: OverlayStats,
}

impl Overlay {
    /// An overlay from a channel with parameters `input` to one with
    /// parameters `output`.
    ///
    /// A padded fixed output ([`LastBlock::Pad`]) whose block is larger
    /// than [`MAX_PADDED_BLOCK`] is refused (`InvalidInput`): its last block
    /// could need more padding than memory holds. Any other parameters are
    /// taken: blocks are references to the input, so a large B costs
    /// nothing until bytes come.
    ///
    /// ```
    /// use ferry::transfer::overlay::{ChannelParams, LastBlock, Overlay};
    /// use std::num::NonZeroUsize;
    /// let huge = ChannelParams::fixed(NonZeroUsize::MAX);
    /// let var = ChannelParams::variable(NonZeroUsize::MIN);
    /// assert!(Overlay::new(var, huge, LastBlock::Pad(0)).is_err());
    /// assert!(Overlay::new(var, huge, LastBlock::Short).is_ok());
    /// ```
    pub fn new(
        input: ChannelParams,
        output: ChannelParams,
        last: LastBlock,
    ) -> io::Result<Overlay> {
        if output.block == BlockType::Fixed
            && matches!(last, LastBlock::Pad(_))
            && output.max.get() > MAX_PADDED_BLOCK
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a fixed block of {} bytes is too large to pad (at most {MAX_PADDED_BLOCK})",
                    output.max
                ),
            ));
        }
        Ok(Overlay {
            output,
            case: Case::of(input, output),
            last,
            pending: Aggregate::new(),
            stats: OverlayStats::default(),
        })
    }

    /// The paper's case for the two channels.
    pub fn case(&self) -> Case {
        self.case
    }

    /// What has been done so far.
    pub fn stats(&self) -> OverlayStats {
        self.stats
    }

    /// Bytes held for a fixed output block not yet full.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Lays one input block over the output: calls `emit` with each output
    /// block it completes. Pieces of `block` go out by reference; only a
    /// block gathered from several pieces, for a channel that cannot
    /// gather, is copied.
    pub fn push<E>(
        &mut self,
        mut block: Buf,
        mut emit: impl FnMut(Aggregate) -> Result<(), E>,
    ) -> Result<(), E> {
        self.stats.blocks_in += 1;
        self.stats.bytes_in += block.len() as u64;
        let size = self.output.max.get();
        match self.output.block {
            BlockType::Variable => {
                while !block.is_empty() {
                    let piece = block.split_to(size.min(block.len()));
                    self.emit_block(Aggregate::from(piece), &mut emit)?;
                }
            }
            BlockType::Fixed => {
                while !block.is_empty() {
                    if self.pending.is_empty() && block.len() >= size {
                        let piece = block.split_to(size);
                        self.emit_block(Aggregate::from(piece), &mut emit)?;
                        continue;
                    }
                    let take = (size - self.pending.len()).min(block.len());
                    self.pending.append_buf(block.split_to(take));
                    if self.pending.len() == size {
                        let full = std::mem::take(&mut self.pending);
                        self.emit_block(full, &mut emit)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Ends the stream: a fixed output's last partial block goes out, short
    /// or padded as [`LastBlock`] says.
    pub fn finish<E>(&mut self, mut emit: impl FnMut(Aggregate) -> Result<(), E>) -> Result<(), E> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut last = std::mem::take(&mut self.pending);
        if let LastBlock::Pad(byte) = self.last {
            // References to one buffer of the padding byte, as many as it
            // takes (at most 1 GiB / 64 KiB of them).
            let n = self.output.max.get() - last.len();
            let piece = Buf::from(vec![byte; n.min(PAD_PIECE)]);
            let mut left = n;
            while left > 0 {
                let k = left.min(PAD_PIECE);
                last.append_buf(piece.slice(..k));
                left -= k;
            }
            self.stats.padding += n as u64;
        }
        self.emit_block(last, &mut emit)
    }

    fn emit_block<E>(
        &mut self,
        mut block: Aggregate,
        emit: &mut impl FnMut(Aggregate) -> Result<(), E>,
    ) -> Result<(), E> {
        let len = block.len() as u64;
        if !self.output.gather && block.slice_count() > 1 {
            block.coalesce();
            self.stats.bytes_copied += len;
        }
        emit(block)?;
        self.stats.blocks_out += 1;
        self.stats.bytes_out += len;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
