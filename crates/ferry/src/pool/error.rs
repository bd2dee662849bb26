//! Why a pool said no.

use std::fmt;
use std::io;

/// A pool allocation that could not be served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PoolError {
    /// The budget is used up by slots in use (and, for
    /// [`alloc_timeout`](super::Pool::alloc_timeout), none came back in
    /// time) — or, in [protect mode](super::PoolConfig::protect), the
    /// kernel would not make a reused slot's pages writable again.
    Exhausted {
        /// Bytes asked for.
        requested: usize,
        /// The slot size that would have served them.
        slot_size: usize,
        /// The pool's budget.
        budget: usize,
        /// Bytes of slot memory the pool held when it gave up.
        reserved: usize,
    },
    /// More bytes than the largest size class.
    TooLarge {
        /// Bytes asked for.
        requested: usize,
        /// The largest slot size.
        largest: usize,
    },
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoolError::Exhausted {
                requested,
                slot_size,
                budget,
                reserved,
            } => write!(
                f,
                "buffer pool exhausted: no {slot_size}-byte slot free for a {requested}-byte \
                 request ({reserved} of {budget} budget bytes held)"
            ),
            PoolError::TooLarge { requested, largest } => write!(
                f,
                "buffer pool: {requested} bytes requested, larger than the largest slot ({largest} bytes)"
            ),
        }
    }
}

impl std::error::Error for PoolError {}

impl From<PoolError> for io::Error {
    fn from(e: PoolError) -> io::Error {
        let kind = match e {
            PoolError::Exhausted { .. } => io::ErrorKind::OutOfMemory,
            PoolError::TooLarge { .. } => io::ErrorKind::InvalidInput,
        };
        io::Error::new(kind, e)
    }
}
