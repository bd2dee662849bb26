//! `ferry`: copy-avoiding I/O tools (the library crate, `src/lib.rs`, holds
//! them).
//!
//! The binary starts at a C `main` of its own rather than through std's
//! runtime start-up, which sets up a stack-overflow handler (an alternate
//! signal stack, handlers, and glibc reading /proc/self/maps to find the
//! main thread's stack): measured, that start-up was a third of a run over
//! a 1 KiB file (docs/BENCHMARKS.md, "start-up: what the dynamic binary
//! cost"). What it did that the tools rely on is done here: SIGPIPE
//! ignored (writers see `EPIPE` and end as GNU's do: by SIGPIPE, or with a
//! write error when they were started with SIGPIPE ignored), standard
//! output flushed at the end, and a closed standard input occupied so that
//! no file opened takes its place ([`ferry_cli::start`]).
#![no_main]

/// The process entry point (see the module doc).
#[no_mangle]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    ferry_cli::start();
    let code = ferry_cli::run();
    let _ = std::io::Write::flush(&mut std::io::stdout());
    code.clamp(0, 255)
}
