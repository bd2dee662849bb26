//! The alloc stream (`ferry::Stream`) and typed arrays (`ferry::bulk`) on
//! files, pipes, memory and the standard streams: the std interfaces, the
//! region calls, errors, offsets, edge sizes, threads, and models. One test
//! binary; each module holds the tests of one behaviour. Tests that change
//! what is the whole process's (an rlimit, a signal disposition) run their
//! body in a child process (`support::in_child`).

#[macro_use]
#[path = "../support/mod.rs"]
mod support;

mod bulk;
mod endpoint;
mod errors;
mod file_size_limit;
mod interrupted;
mod long_lines;
mod model;
mod offsets;
mod realloc_failure;
mod region_count;
mod sequential;
mod sizes;
mod small_pages;
mod std_io;
mod threads;
