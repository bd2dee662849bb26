//! Standard output for the tools: the library's ordered output
//! ([`ferry::transfer::OrderedOut`]) on descriptor 1. Only the choice of
//! descriptor is the tools' own.

use std::io;
use std::os::fd::BorrowedFd;

/// The tools' buffered standard output.
pub type Out = ferry::transfer::OrderedOut<'static>;

/// Descriptor 1.
pub fn stdout_fd() -> BorrowedFd<'static> {
    // SAFETY: descriptor 1 stays open for the life of the process (the
    // tools never close it).
    unsafe { BorrowedFd::borrow_raw(1) }
}

/// A buffered standard output (nothing allocated until it is written to).
pub fn stdout() -> Out {
    Out::new(stdout_fd())
}

/// Writes all of `data` to standard output.
pub fn write_all_fd(data: &[u8]) -> io::Result<()> {
    ferry::transfer::write_all(stdout_fd(), data)
}
