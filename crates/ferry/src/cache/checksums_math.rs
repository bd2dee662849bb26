//! The arithmetic that lets a checksum of many slices be had from the
//! slices' own values, without reading their bytes again.
//!
//! **CRC-32C.** Appending `n` bytes to a message multiplies its CRC
//! register by x^(8n) modulo the polynomial, so
//! `crc(A ‖ B) = crc(A) · x^(8·|B|) mod P ⊕ crc(B)` (the pre- and
//! post-inversions cancel out, as in zlib's `crc32_combine`). The
//! per-slice factor x^(8·|B|) depends only on the slice's length: it is
//! worked out once, with the slice's CRC, and kept beside it, so joining a
//! slice on costs one carry-less multiplication modulo P (32 shift-and-xor
//! steps). The `crc32c` crate's own `crc32c_combine` squares 32×32 bit
//! matrices once per bit of the length (tens of microseconds for a 64 KiB
//! slice, longer than reading the slice again with the CPU's CRC
//! instruction); it serves as the reference the tests check against.
//!
//! **Internet checksum** (RFC 1071). The ones'-complement sum of 16-bit
//! big-endian words does not care in which order words are added, and a
//! run of bytes that starts at an odd offset of the whole has every byte
//! in the other half of its word: its sum is the byte-swapped sum of the
//! run taken from its own start (RFC 1071 §2(B)). So each slice keeps its
//! own sum (an odd last byte padded with a zero, which adds nothing), and
//! an aggregate's is the ones'-complement sum of its slices' sums, each
//! swapped where the slice starts at an odd offset.

/// CRC-32C's polynomial, bit-reversed (the CRC is computed LSB first).
const POLY: u32 = 0x82F6_3B78;

/// `a · b mod P` in the bit-reversed representation (x^0 is bit 31).
/// Always 32 steps, no branch on the data.
pub(crate) const fn multmodp(a: u32, mut b: u32) -> u32 {
    let mut p = 0u32;
    let mut i = 0;
    while i < 32 {
        p ^= b & ((a >> (31 - i)) & 1).wrapping_neg();
        b = (b >> 1) ^ ((b & 1).wrapping_neg() & POLY);
        i += 1;
    }
    p
}

/// x^(2^k) mod P for k in 0..64 (x^1 is bit 30).
const X2N: [u32; 64] = {
    let mut t = [0u32; 64];
    let mut p = 1u32 << 30;
    let mut k = 0;
    while k < 64 {
        t[k] = p;
        p = multmodp(p, p);
        k += 1;
    }
    t
};

/// x^(8·n) mod P: the factor that shifts a CRC past `n` more bytes.
pub(crate) fn crc_shift(n: u64) -> u32 {
    let mut p = 1u32 << 31; // x^0
    let mut n = n;
    let mut k = 3; // 8·n = n · 2^3
    while n > 0 {
        if n & 1 == 1 {
            p = multmodp(X2N[k & 63], p);
        }
        n >>= 1;
        k += 1;
    }
    p
}

/// The CRC-32C of `A ‖ B` from `crc(A)`, `crc(B)` and `B`'s
/// [`crc_shift`].
#[inline]
pub(crate) fn crc_combine(crc_a: u32, crc_b: u32, shift_b: u32) -> u32 {
    multmodp(shift_b, crc_a) ^ crc_b
}

/// The ones'-complement sum of `bytes` read as big-endian 16-bit words
/// from their first byte (an odd last byte as the high half of a word),
/// folded to 16 bits: zero only for bytes that are all zero.
pub(crate) fn ones_sum(bytes: &[u8]) -> u16 {
    // The crate gives the complement of the folded sum.
    !u16::from_be_bytes(internet_checksum::checksum(bytes))
}

/// A running Internet checksum over slices given in order, each by its
/// [`ones_sum`] and length.
#[derive(Clone, Copy, Default)]
pub(crate) struct OnesAcc {
    sum: u64,
    odd: bool,
}

impl OnesAcc {
    /// Adds a slice that follows everything added so far.
    #[inline]
    pub(crate) fn push(&mut self, sum: u16, len: usize) {
        self.sum += u64::from(if self.odd { sum.swap_bytes() } else { sum });
        self.odd ^= len & 1 == 1;
    }

    /// The folded ones'-complement sum so far.
    pub(crate) fn sum(&self) -> u16 {
        let mut s = self.sum;
        while s >> 16 != 0 {
            s = (s & 0xFFFF) + (s >> 16);
        }
        s as u16
    }

    /// The Internet checksum: the complement of the sum.
    pub(crate) fn checksum(&self) -> u16 {
        !self.sum()
    }
}
