//! The sorter (`ferry::sort`): against a model, and its errors. One test
//! binary; each module holds the tests of one behaviour.

#[macro_use]
#[path = "../support/mod.rs"]
mod support;

mod errors;
mod model;
