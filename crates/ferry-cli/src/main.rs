//! `ferry`: copy-avoiding I/O tools and the benchmarks that measure them.

mod bench;
mod size;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// ferry — copy-avoiding I/O for Linux.
#[derive(Parser)]
#[command(name = "ferry", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure ferry side by side with its baselines.
    Bench(bench::BenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(args) => bench::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ferry: {e}");
            ExitCode::FAILURE
        }
    }
}
