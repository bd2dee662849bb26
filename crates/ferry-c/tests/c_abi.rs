//! The C library's integration tests, in one test binary: C programs built
//! against glibc and against ferry/stdio.h and compared (`programs`), the
//! benchmark's programs (`bench_programs`), real programs built with
//! their own build systems (`real`), using the library as an installed C
//! library (`install`), and a check of the sources (`ffi_boundary`).
//!
//! libferry is built once per run of this binary (`common::libdir`), and
//! so are the programs each module builds once (`OnceLock`s): one binary
//! builds them once instead of once per binary.
//!
//! No test here changes this process's own process-wide state (signal
//! dispositions, rlimits, the environment, the working directory): the C
//! programs run as child processes, each in a directory of its own. A test
//! that must change that state belongs in a test binary of its own.
//!
//! The modules' files sit in tests/c_abi/; the C sources in tests/c/.
//! Run one module's tests with a filter: `cargo test -p ferry-c --test
//! c_abi real::`.

mod common;

#[path = "c_abi/bench_programs.rs"]
mod bench_programs;
#[path = "c_abi/cgi.rs"]
mod cgi;
#[path = "c_abi/ffi_boundary.rs"]
mod ffi_boundary;
#[path = "c_abi/install.rs"]
mod install;
#[path = "c_abi/ipc.rs"]
mod ipc;
#[path = "c_abi/programs.rs"]
mod programs;
#[path = "c_abi/real/mod.rs"]
mod real;
#[path = "c_abi/stdio_ipc.rs"]
mod stdio_ipc;
