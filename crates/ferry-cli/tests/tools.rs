//! The `ferry` binary's integration tests, one module per tool, all in one
//! test binary (one build, one link). Where ferry mimics a GNU tool, a
//! test runs both on the same inputs and compares output, exit status and
//! messages, through the shared support module `gnu` (tests/gnu/).
//!
//! Run one tool's tests with a filter: `cargo test -p ferry-cli --test
//! tools grep::` (or `sort::records::`, `pipe::`).
//!
//! No test here changes this process's own process-wide state (signal
//! dispositions, rlimits, the environment, the working directory): limits
//! and dispositions are set in the shell or in the child (`pre_exec`)
//! that runs the tool. A test that must change them belongs in a test
//! binary of its own.
//!
//! Each module's file sits in tests/tools/; a tool with several files has
//! its further modules in tests/tools/<tool>/. Proptest keeps the cases
//! it saves beside the source file (`<stem>.proptest-regressions`), as
//! long as no directory above the file holds a `main.rs` or `lib.rs`: the
//! crate root is this file, not tests/tools/main.rs, for that reason.

mod gnu;

#[path = "tools/binary.rs"]
mod binary;
#[path = "tools/broken_pipe.rs"]
mod broken_pipe;
#[path = "tools/cat.rs"]
mod cat;
#[path = "tools/cmp.rs"]
mod cmp;
#[path = "tools/cp.rs"]
mod cp;
#[path = "tools/cut.rs"]
mod cut;
#[path = "tools/diff.rs"]
mod diff;
#[path = "tools/grep.rs"]
mod grep;
#[path = "tools/leases.rs"]
mod leases;
#[path = "tools/longopts.rs"]
mod longopts;
#[path = "tools/pipe.rs"]
mod pipe;
#[path = "tools/pipe_ipc.rs"]
mod pipe_ipc;
#[path = "tools/proc_files.rs"]
mod proc_files;
#[path = "tools/serve.rs"]
mod serve;
#[path = "tools/shared_stdout.rs"]
mod shared_stdout;
#[path = "tools/sort.rs"]
mod sort;
#[path = "tools/ttcp.rs"]
mod ttcp;
#[path = "tools/wc.rs"]
mod wc;
