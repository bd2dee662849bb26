//! Leased mappings and children forked without `exec`: bytes lost to an
//! `O_TRUNC` open, and a `Buf` seen from a forked child.
//!
//! A binary of its own, every test taking [`one_at_a_time`]: a child
//! forked without `exec` holds a copy of every descriptor the process had
//! at that moment, including another test's descriptor of its file while
//! `fs::write` has it open for writing; as long as that child lives, no
//! read lease can be had on that file, and a leasing test beside it would
//! fail with `WouldBlock` (seen in CI: 7 failures in 200 runs). Do not
//! move these tests into a binary whose tests take leases unguarded.

#[macro_use]
#[path = "../support/mod.rs"]
mod support;

mod child_copies;
mod lost;

use std::sync::{Mutex, MutexGuard};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Held by every test of this binary for its whole run, so that none
/// forks while another takes a lease.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}
