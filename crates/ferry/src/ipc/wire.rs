//! The packets on an ipc socket: their layout, and the checks every
//! packet from a peer passes before anything acts on it.
//!
//! ```text
//!  header (16 bytes)   magic "FYIP" u32 | kind u16 | flags u16 | count u32 | 0 u32
//!  HELLO   + slot_size u64 | slots u64            (the pool's memfd attached)
//!  HELLO     flags RING: + tx_entries u64 | release_entries u64, and the
//!            control block's memfd attached after the pool's (`ring`)
//!  BUFS    + count × descriptor; flags END on the last packet of a message
//!            (count ≥ 1, or 0 with END: an empty message)
//!  BUFS      flags ABORT, count 0: the message begun is dropped, its
//!            pieces released (the sender failed part-way through it)
//!  RELEASE + count × descriptor, count ≥ 1 (len = how many references go back)
//!  BYE       the sender closes in order
//!  WAKE      a doorbell: the peer said it waits on a ring (`ring`)
//!  descriptor (24 bytes)  slot u32 | offset u32 | len u32 | 0 u32 | generation u64
//! ```
//!
//! All numbers are little-endian. Each packet is one `SOCK_SEQPACKET`
//! record, so a packet is never split or merged with another. On a
//! channel with rings (HELLO's RING flag) the BUFS, ABORT, BYE and
//! RELEASE packets travel as ring entries instead (`ring` has their
//! layout), and the socket carries only the HELLO and WAKE packets.

use std::io;

pub(crate) const MAGIC: u32 = u32::from_le_bytes(*b"FYIP");
pub(crate) const HEADER: usize = 16;
pub(crate) const DESC: usize = 24;
/// Descriptors in one packet at most.
pub(crate) const MAX_BATCH: usize = 64;
/// The largest packet either side sends or accepts.
pub(crate) const MAX_PACKET: usize = HEADER + MAX_BATCH * DESC;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Hello = 1,
    Bufs = 2,
    Release = 3,
    Bye = 4,
    Wake = 5,
}

/// `flags` of the last BUFS packet of one message.
pub(crate) const END: u16 = 1;
/// `flags` of a BUFS packet (of no descriptors) that drops the message
/// begun.
pub(crate) const ABORT: u16 = 2;
/// `flags` of a HELLO that comes with a control block (rings).
pub(crate) const RING: u16 = 1;

/// One buffer reference (or, in a RELEASE, `len` references given back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Desc {
    pub slot: u32,
    pub off: u32,
    pub len: u32,
    pub generation: u64,
}

/// A packet, decoded and checked for form (not yet against any state).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Packet {
    Hello {
        slot_size: u64,
        slots: u64,
        /// (tx entries, release entries) of the rings, if the channel has them.
        ring: Option<(u64, u64)>,
    },
    Bufs {
        end: bool,
        descs: Vec<Desc>,
    },
    Abort,
    Release(Vec<Desc>),
    Bye,
    Wake,
}

fn bad(msg: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("ipc: malformed packet: {msg}"),
    )
}

fn header(out: &mut Vec<u8>, kind: Kind, flags: u16, count: usize) {
    out.clear();
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.extend_from_slice(&(kind as u16).to_le_bytes());
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&(count as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
}

pub(crate) fn encode_hello(
    out: &mut Vec<u8>,
    slot_size: u64,
    slots: u64,
    ring: Option<(u64, u64)>,
) {
    header(out, Kind::Hello, if ring.is_some() { RING } else { 0 }, 0);
    out.extend_from_slice(&slot_size.to_le_bytes());
    out.extend_from_slice(&slots.to_le_bytes());
    if let Some((tx, rel)) = ring {
        out.extend_from_slice(&tx.to_le_bytes());
        out.extend_from_slice(&rel.to_le_bytes());
    }
}

pub(crate) fn encode_wake(out: &mut Vec<u8>) {
    header(out, Kind::Wake, 0, 0);
}

pub(crate) fn encode_bye(out: &mut Vec<u8>) {
    header(out, Kind::Bye, 0, 0);
}

pub(crate) fn encode_abort(out: &mut Vec<u8>) {
    header(out, Kind::Bufs, ABORT, 0);
}

/// A BUFS (`release` false) or RELEASE packet of at most [`MAX_BATCH`]
/// descriptors.
pub(crate) fn encode_descs(out: &mut Vec<u8>, release: bool, end: bool, descs: &[Desc]) {
    debug_assert!(descs.len() <= MAX_BATCH);
    let kind = if release { Kind::Release } else { Kind::Bufs };
    header(out, kind, if end { END } else { 0 }, descs.len());
    for d in descs {
        out.extend_from_slice(&d.slot.to_le_bytes());
        out.extend_from_slice(&d.off.to_le_bytes());
        out.extend_from_slice(&d.len.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&d.generation.to_le_bytes());
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default())
}

/// Decodes one packet; any packet that is not exactly of the form above
/// is an error. A packet that carries nothing (no descriptor, no end) is
/// one too: a peer streaming them would keep the other side busy
/// forever.
pub(crate) fn decode(b: &[u8]) -> io::Result<Packet> {
    if b.len() < HEADER {
        return Err(bad("shorter than a header"));
    }
    if u32_at(b, 0) != MAGIC {
        return Err(bad("bad magic"));
    }
    let kind = u16::from_le_bytes([b[4], b[5]]);
    let flags = u16::from_le_bytes([b[6], b[7]]);
    let count = u32_at(b, 8) as usize;
    if count > MAX_BATCH {
        return Err(bad("too many descriptors"));
    }
    let body = &b[HEADER..];
    let descs = |b: &[u8]| -> io::Result<Vec<Desc>> {
        if b.len() != count * DESC {
            return Err(bad("length does not match the descriptor count"));
        }
        Ok(b.chunks_exact(DESC)
            .map(|d| Desc {
                slot: u32_at(d, 0),
                off: u32_at(d, 4),
                len: u32_at(d, 8),
                generation: u64_at(d, 16),
            })
            .collect())
    };
    match kind {
        1 if count == 0 && flags == 0 && body.len() == 16 => Ok(Packet::Hello {
            slot_size: u64_at(body, 0),
            slots: u64_at(body, 8),
            ring: None,
        }),
        1 if count == 0 && flags == RING && body.len() == 32 => Ok(Packet::Hello {
            slot_size: u64_at(body, 0),
            slots: u64_at(body, 8),
            ring: Some((u64_at(body, 16), u64_at(body, 24))),
        }),
        2 if flags == ABORT && count == 0 && body.is_empty() => Ok(Packet::Abort),
        2 if flags & !END != 0 => Err(bad("unknown flags")),
        2 if count == 0 && flags & END == 0 => Err(bad("a packet of nothing")),
        2 => Ok(Packet::Bufs {
            end: flags & END != 0,
            descs: descs(body)?,
        }),
        3 if count == 0 => Err(bad("a release of nothing")),
        3 => Ok(Packet::Release(descs(body)?)),
        4 if count == 0 && flags == 0 && body.is_empty() => Ok(Packet::Bye),
        5 if count == 0 && flags == 0 && body.is_empty() => Ok(Packet::Wake),
        _ => Err(bad("unknown kind or wrong length")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_decode_to_what_was_encoded() {
        let d = Desc {
            slot: 3,
            off: 17,
            len: 99,
            generation: 1 << 40,
        };
        let mut b = Vec::new();
        encode_descs(&mut b, false, true, &[d, d]);
        assert_eq!(
            decode(&b).unwrap(),
            Packet::Bufs {
                end: true,
                descs: vec![d, d]
            }
        );
        encode_descs(&mut b, true, false, &[d]);
        assert_eq!(decode(&b).unwrap(), Packet::Release(vec![d]));
        encode_hello(&mut b, 4096, 8, None);
        assert_eq!(
            decode(&b).unwrap(),
            Packet::Hello {
                slot_size: 4096,
                slots: 8,
                ring: None,
            }
        );
        encode_hello(&mut b, 4096, 8, Some((256, 8)));
        assert_eq!(
            decode(&b).unwrap(),
            Packet::Hello {
                slot_size: 4096,
                slots: 8,
                ring: Some((256, 8)),
            }
        );
        encode_wake(&mut b);
        assert_eq!(decode(&b).unwrap(), Packet::Wake);
        encode_bye(&mut b);
        assert_eq!(decode(&b).unwrap(), Packet::Bye);
        encode_abort(&mut b);
        assert_eq!(decode(&b).unwrap(), Packet::Abort);
        encode_descs(&mut b, false, true, &[]);
        assert_eq!(
            decode(&b).unwrap(),
            Packet::Bufs {
                end: true,
                descs: vec![]
            }
        );
    }

    #[test]
    fn malformed_packets_are_errors() {
        let mut b = Vec::new();
        encode_descs(
            &mut b,
            false,
            true,
            &[Desc {
                slot: 0,
                off: 0,
                len: 1,
                generation: 0,
            }],
        );
        for cut in 0..b.len() {
            assert!(decode(&b[..cut]).is_err(), "cut at {cut}");
        }
        let mut huge = b.clone();
        huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&huge).is_err());
        let mut magic = b.clone();
        magic[0] ^= 1;
        assert!(decode(&magic).is_err());
        let mut kind = b.clone();
        kind[4] = 9;
        assert!(decode(&kind).is_err());
        let mut flags = b;
        flags[6] = 4;
        assert!(decode(&flags).is_err());
        // Packets that carry nothing: no descriptor and no end.
        let mut empty = Vec::new();
        encode_descs(&mut empty, false, false, &[]);
        assert!(decode(&empty).is_err());
        encode_descs(&mut empty, true, false, &[]);
        assert!(decode(&empty).is_err());
    }
}
