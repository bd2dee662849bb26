//! IO-Lite's unified file cache (`ferry::cache::FileCache`) with real
//! files changed behind it by real processes. One test binary; each
//! module holds the tests of one behaviour.

#[macro_use]
#[path = "../support/mod.rs"]
mod support;

mod admission;
mod file_cache;
mod handles;
mod looked;
mod mapped_fill;
mod non_regular_paths;
mod rewritten_while_read;
mod written_buffers;
