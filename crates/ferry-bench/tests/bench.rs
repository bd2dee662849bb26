//! The `ferry-bench` binary's integration tests, in one test binary: its
//! suites run as a user runs them (`suites`) and the programs per tool
//! agreeing with each other and with GNU (`variants`).
//!
//! No test here changes this process's own process-wide state (signal
//! dispositions, rlimits, the environment, the working directory); a test
//! that must belongs in a test binary of its own. The modules' files sit
//! in tests/bench/.

/// The `ferry-bench` binary under test.
const BENCH: &str = env!("CARGO_BIN_EXE_ferry-bench");

/// Generated inputs, shared with the ferry tools' tests.
#[path = "../../ferry-cli/tests/gnu/text.rs"]
mod text;

#[path = "bench/iolite_cache.rs"]
mod iolite_cache;
#[path = "bench/suites.rs"]
mod suites;
#[path = "bench/variants.rs"]
mod variants;
