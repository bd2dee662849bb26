//! `ContentId`: IO-Lite's generation numbers, as a value.

/// Names the bytes of a [`Buf`](crate::Buf) for the life of the process.
///
/// Two equal ids mean equal bytes — even after a pool slot has been freed
/// and reused, because every reuse (and every return of a block to writable
/// state) moves the block to a new generation. Caches key on it to skip
/// comparing or checksumming bytes they have seen (IO-Lite §3.5).
///
/// The converse does not hold: equal bytes in two different blocks have
/// different ids.
///
/// ```
/// use ferry::Buf;
/// let a = Buf::from(b"hello world".to_vec());
/// let b = a.slice(0..5);
/// assert_eq!(a.slice(0..5).content_id(), b.content_id());
/// assert_ne!(a.content_id(), b.content_id());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContentId {
    /// The process-unique id of the block holding the bytes (0 is the block
    /// of static and empty buffers, whose offset is then their address).
    pub block: u64,
    /// The block's generation when the id was taken, with
    /// [`ContentId::DAMAGED`] set for a file mapping known to have lost
    /// bytes ([`Buf::is_intact`](crate::Buf::is_intact) false).
    pub generation: u64,
    /// Where the bytes start inside the block.
    pub offset: usize,
    /// How many bytes.
    pub len: usize,
}

impl ContentId {
    /// The bit of [`generation`](Self::generation) set in the id of a file
    /// mapping that lost bytes: such an id never equals one taken while the
    /// bytes were intact, so a cache keyed on ids never serves the zeros
    /// that replaced them as the bytes it saw. (Generations count up from 0
    /// and never reach it.)
    pub const DAMAGED: u64 = 1 << 63;
}
