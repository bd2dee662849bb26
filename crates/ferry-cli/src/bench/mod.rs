//! `ferry bench`: whole-program comparisons, ferry and its baseline side by
//! side in one run, interleaved, medians of several runs, ratios quoted.

mod buf;
mod measure;
mod report;

use clap::{Args, Subcommand};

#[derive(Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    which: Which,
}

#[derive(Subcommand)]
enum Which {
    /// The memory layer: Buf vs bytes::Bytes, Pool vs malloc, Aggregate
    /// splits, read() into pool buffers vs Vec buffers.
    Buf(buf::BufArgs),
}

pub fn run(args: BenchArgs) -> Result<(), String> {
    match args.which {
        Which::Buf(a) => buf::run(a),
    }
}
