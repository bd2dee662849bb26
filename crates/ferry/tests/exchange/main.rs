//! The buffer exchange (`ferry::exchange`, fbufs' interface): round trips
//! through pipes, sockets and files, a model, lent blocks, and the file
//! size limit. One test binary; each module holds the tests of one
//! behaviour.

#[macro_use]
#[path = "../support/mod.rs"]
mod support;

mod file_size_limit;
mod lent_blocks;
mod model;
mod round_trips;
