//! Asynchronous requests (`ferry::aio`) on both backends (io_uring and
//! worker threads): the request state machine, deadlines, cancels, closes,
//! pipes, terminals, typed arrays, limits, and fork. One test binary; each
//! module holds the tests of one behaviour. No test here takes a read
//! lease, so the tests that fork without exec may run beside the others
//! (a forked child holds copies of their descriptors; only a lease would
//! mind); tests that change what is the whole process's run their body in a
//! child process.

#[macro_use]
#[path = "../support/mod.rs"]
mod support;

mod block_device;
mod bulk_arrays;
mod cancel;
mod close;
mod deadline_chains;
mod deadlines;
mod default_signals;
mod future;
mod limits;
mod partial_reads;
mod pipes;
mod requests;
mod ring_after_fork;
mod threads_after_fork;
mod write_buffers;
