//! Copy-free channels between processes (`ferry::ipc`): real processes
//! (this binary runs itself as the peer), kill -9 of either side, hostile
//! peers, and a model of the reference counts. One test binary; each
//! module holds the tests of one behaviour.

#[macro_use]
#[path = "../support/mod.rs"]
mod support;

mod model;
mod processes;
mod sent_from_the_pool;
