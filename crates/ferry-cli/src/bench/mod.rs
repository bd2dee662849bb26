//! `ferry bench`: whole-program comparisons, ferry and its baseline side by
//! side in one run, interleaved, medians of several runs, ratios quoted.

mod buf;
mod files;
mod measure;
mod report;
mod stream_ops;

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
    /// Alloc streams against std::io: 64-byte records, a sequential scan,
    /// line iteration, buffered and mapped backends.
    StreamOps(stream_ops::StreamOpsArgs),
}

pub fn run(args: BenchArgs) -> Result<(), String> {
    match args.which {
        Which::Buf(a) => buf::run(a),
        Which::StreamOps(a) => stream_ops::run(a),
    }
}
