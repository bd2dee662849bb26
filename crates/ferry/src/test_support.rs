//! Helpers shared by the unit tests (compiled only for tests).

use proptest::test_runner::Config;

/// Proptest settings: fewer cases under Miri (which runs ~1000× slower) and
/// no failure files there (Miri isolates the file system).
pub(crate) fn proptest_config(cases: u32) -> Config {
    if cfg!(miri) {
        Config {
            cases: 6,
            failure_persistence: None,
            ..Config::default()
        }
    } else {
        Config {
            cases,
            ..Config::default()
        }
    }
}

/// Scales an iteration count down under Miri.
pub(crate) const fn iters(n: usize) -> usize {
    if cfg!(miri) {
        if n / 500 > 4 {
            n / 500
        } else {
            4
        }
    } else {
        n
    }
}
