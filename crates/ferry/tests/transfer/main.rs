//! Moving bytes between descriptors and memory (`ferry::transfer`): the
//! kernel paths (copy_file_range, splice, sendfile), `between` and its
//! endpoints, collecting, switching to buffering, file senders, zero-copy
//! sends, and copies of a file into itself. One test binary; each module
//! holds the tests of one behaviour. Tests that change what is the whole
//! process's run their body in a child process.

#[macro_use]
#[path = "../support/mod.rs"]
mod support;

mod between;
mod collect;
mod endpoint;
mod kernel_paths;
mod same_file;
mod send;
mod send_default_sigpipe;
mod sink_range;
mod splice;
mod stream_sink;
mod switching;
mod zerocopy;
mod zerocopy_error_queue;
