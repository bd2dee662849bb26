//! Roadrunner's general data streaming (Miller, Keleher and Tripathi,
//! *General Data Streaming*): a transfer between two [`endpoint`]s — a
//! file or a range of one, a pipe, a socket, a terminal, memory, or a
//! ferry [`Stream`](crate::Stream) — each declaring its channel
//! parameters, [`between`] them by the paper's cases: by the kernel's
//! paths where both are descriptors on their own parameters, else input
//! blocks read into the global buffer cache ([`cache`](super::cache)) and
//! laid over the output's blocks by reference
//! ([`overlay`](super::overlay)), switching [`Path`](super::Path) as the
//! output stalls and catches up.
//!
//! * `between.rs`: the entry point and the choice of case;
//! * `flow.rs`: the moving part between descriptors (reads into cache
//!   buffers, the overlay, the switch among paths);
//! * `source.rs`, `sink.rs`: where input blocks come from, and outputs
//!   that are not descriptors (memory, a ferry `Stream`).
//!
//! This is the transfer engine's interface: it takes ferry streams as
//! endpoints, so it sits with the stream API above the engines, on the
//! kernel's paths (`kernel/`), the cache and the overlay.

mod between;
pub mod endpoint;
mod flow;
mod sink;
mod source;

pub use between::between;
