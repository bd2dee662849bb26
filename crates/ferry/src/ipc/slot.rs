//! A sender's slots: their state, and this process's hold on one (a
//! [`SlotMut`] while it is written, then its frozen `Buf`s).
//!
//! Each slot of the pool is in one of three states, and its generation
//! moves on every time it is handed out for writing:
//!
//! ```text
//!   free ──alloc──► SlotMut (written, here only) ──freeze──► Buf (read-only here)
//!    ▲                                                         │ send: remote += 1
//!    └──── no Buf here and every reference sent was released ◄─┘
//! ```
//!
//! A slot is never writable while the receiver may see it: it goes back
//! to `free` only when this process holds no `Buf` of it and the receiver
//! has given back every reference sent (or closed its end).

use crate::sys::ipc::{SlotMap, SlotReader, SlotWriter, Wake};
use crate::Buf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Default)]
pub(super) struct SlotState {
    pub(super) generation: u64,
    /// A `SlotMut` or a frozen `Buf` of the slot lives in this process.
    pub(super) local: bool,
    /// References sent and not yet released.
    pub(super) remote: u64,
}

impl SlotState {
    pub(super) fn free(&self) -> bool {
        !self.local && self.remote == 0
    }
}

/// What the pool's `Buf`s and `SlotMut`s share with the sender.
pub(crate) struct Shared {
    pub(super) map: Arc<SlotMap>,
    pub(super) slot_size: usize,
    pub(super) state: Mutex<Vec<SlotState>>,
    /// Signalled when a slot held here goes, for an `alloc` waiting in
    /// this process (another thread may drop the last `Buf` of a slot).
    pub(super) wake: Wake,
    /// How many `alloc`s wait on `wake`: it is signalled only then.
    pub(super) waiters: AtomicUsize,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, Vec<SlotState>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// This process's hold on a slot (a `SlotMut`, then its frozen `Buf`).
pub(super) struct Hold {
    pub(super) shared: Arc<Shared>,
    pub(super) slot: usize,
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.shared.lock()[self.slot].local = false;
        if self.shared.waiters.load(Ordering::SeqCst) > 0 {
            self.shared.wake.signal();
        }
    }
}

/// A slot of a [`Sender`](super::Sender)'s pool, writable by this process alone until it
/// is [frozen](SlotMut::freeze).
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// let (a, b) = ferry::ipc::pair()?;
/// let mut tx = ferry::ipc::Sender::new(a, Default::default())?;
/// // SAFETY: the peer is this example's own ferry Sender.
/// let mut rx = unsafe { ferry::ipc::Receiver::new(b, None)? };
/// let mut slot = tx.alloc()?;
/// slot[..5].copy_from_slice(b"hello");
/// let buf = slot.freeze(5); // read-only from now on, here too
/// tx.send(buf.clone().into())?; // by reference: no byte copied
/// assert_eq!(rx.recv()?.unwrap().copy_to_vec(), b"hello");
/// # Ok(()) }
/// ```
pub struct SlotMut {
    // Field order: the writer lets go of the slot before the hold does.
    pub(super) writer: SlotWriter,
    pub(super) hold: Hold,
}

impl SlotMut {
    /// The first `len` bytes (at most the slot) as a read-only `Buf`; the
    /// slot cannot be written again until every `Buf` of it here is gone
    /// and the receiver released every reference sent.
    pub fn freeze(self, len: usize) -> Buf {
        let SlotMut { writer, hold } = self;
        Buf::from_owner(Frozen {
            reader: writer.into_reader(len),
            _hold: hold,
        })
    }

    /// The slot's generation: it moves on each time the slot is reused.
    pub fn generation(&self) -> u64 {
        self.hold.shared.lock()[self.hold.slot].generation
    }
}

impl std::ops::Deref for SlotMut {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.writer
    }
}

impl std::ops::DerefMut for SlotMut {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.writer
    }
}

struct Frozen {
    // Field order: the reader goes before the hold frees the slot.
    reader: SlotReader,
    _hold: Hold,
}

impl AsRef<[u8]> for Frozen {
    fn as_ref(&self) -> &[u8] {
        self.reader.as_ref()
    }
}
