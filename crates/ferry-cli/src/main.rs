//! `ferry`: copy-avoiding I/O tools and the benchmarks that measure them.
//!
//! The binary starts at a C `main` of its own rather than through std's
//! runtime start-up, which sets up a stack-overflow handler (an alternate
//! signal stack, handlers, and glibc reading /proc/self/maps to find the
//! main thread's stack): measured, that start-up was a third of a run over
//! a 1 KiB file (docs/BENCHMARKS.md, "Session 15"). What it did that the
//! tools rely on is done here: SIGPIPE ignored (writers see `EPIPE` and
//! end as GNU's do: by SIGPIPE, or with a write error when they were
//! started with SIGPIPE ignored), standard output flushed at the end, and a closed
//! standard input occupied so that no file opened takes its place
//! (`tools::common::occupy_closed_stdin`).
#![cfg_attr(not(test), no_main)]

mod bench;
mod size;
mod tools;
mod variants;

use clap::{Parser, Subcommand};

/// ferry — copy-avoiding I/O for Linux.
#[derive(Parser)]
#[command(
    name = "ferry",
    version,
    about,
    long_about = None,
    after_help = "Tools (GNU-compatible; `ferry TOOL --help`):\n  cat    concatenate files to standard output\n  cmp    compare two files byte by byte\n  cp     copy files (kernel copy, sparse, --atomic, --progress)\n  cut    print selected parts of lines\n  diff   compare files line by line (normal, -u, -q)\n  grep   print lines that match patterns\n  pipe   move bytes between files, pipes and sockets (socat-like)\n  ttcp   test TCP throughput and CPU per GiB (read-write, exchange, splice, sendfile)\n  wc     count lines, words, characters and bytes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure ferry side by side with its baselines.
    Bench(bench::BenchArgs),
}

/// The process entry point (see the module doc).
#[cfg(not(test))]
#[no_mangle]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    tools::common::occupy_closed_stdin();
    tools::common::ignore_sigpipe();
    let code = run();
    let _ = std::io::Write::flush(&mut std::io::stdout());
    code.clamp(0, 255)
}

/// Under `cargo test` the harness has its own entry point; this keeps the
/// code reachable from the real one in view of the dead-code lint.
#[cfg(test)]
#[allow(dead_code)]
fn main() {
    std::process::exit(run());
}

/// The command line's tool or subcommand, run; its exit status.
fn run() -> i32 {
    let mut args = std::env::args_os();
    let argv0 = args.next();
    // Called by a tool's name (a `cut` or `wc` link to this binary, as
    // uutils' multi-call binary is used): that tool, named in messages by
    // the name it was called as, path and all, as GNU's tools do.
    if let Some(name) = argv0
        .as_deref()
        .map(std::path::Path::new)
        .and_then(std::path::Path::file_name)
        .and_then(|n| n.to_str())
        .filter(|n| tools::TOOLS.contains(n))
    {
        let shown = argv0
            .as_deref()
            .map_or_else(|| name.into(), |a| a.to_string_lossy());
        return tools::run_as(name, &shown, args.collect());
    }
    if let Some(tool) = args.next().and_then(|a| a.into_string().ok()) {
        if tool == "variant" {
            return variants::main(args.collect());
        }
        if tools::TOOLS.contains(&tool.as_str()) {
            return tools::run(&tool, args.collect());
        }
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(args) => bench::run(args),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("ferry: {e}");
            1
        }
    }
}
