//! Bufs of mapped files: `Buf::map_file` and `MappedFile` under read
//! leases, their snapshots when a writer comes, the SIGBUS guard, and
//! bufs and aggregates written to descriptors (`write_to`). One test
//! binary; each module holds the tests of one behaviour. Nothing here
//! forks without exec (see `tests/forked_leases`); tests that change what
//! is the whole process's run their body in a child process.

#[macro_use]
#[path = "../support/mod.rs"]
mod support;

mod leases;
mod map_file;
mod sigbus_chain;
mod sigbus_streams;
mod snapshot_memory;
mod write_to;
mod write_to_default_sigpipe;
