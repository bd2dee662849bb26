//! `ferry-bench`: every benchmark suite of ferry — whole-program
//! comparisons, ferry and its baseline side by side in one run,
//! interleaved, medians of several runs, ratios quoted. None of it is in
//! the shipped `ferry` binary. The probes that measured a kernel path or a
//! mechanism for the design are this crate's examples
//! (`cargo run --release -p ferry-bench --example NAME`).
//!
//! Run from the workspace as `cargo run --release -p ferry-bench -- SUITE
//! [OPTIONS]` (`--help` lists them; this crate's README.md says what each
//! measures).
//! The suites that time the `ferry` tools (asf, stream, sort) run the
//! `ferry` binary of this workspace and asf-c links `libferry.so`: each is
//! found beside this executable, built there first by cargo when this is a
//! cargo build of the workspace (module `workspace`). The asf suite's std /
//! compat / asi programs are this binary's own: `ferry-bench variant KIND
//! TOOL OUT INPUT…` runs one alone.

mod asf;
mod asf_c;
mod buf;
mod bulk;
mod fbufs;
mod files;
mod iolite;
mod lock_contention;
mod measure;
mod peers;
mod report;
mod sort;
mod stream;
mod stream_ops;
mod variants;
mod workspace;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Options every suite takes.
#[derive(Args)]
pub struct Common {
    /// Rounds; every variant runs once per round, interleaved (at least 5).
    #[arg(long, default_value_t = 7)]
    pub runs: usize,
    /// Directory for the scratch files (default: the system temp directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Print the results as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Smoke test: a small fraction of the work. Checks that every variant
    /// runs; its figures mean nothing.
    #[arg(long)]
    pub quick: bool,
}

impl Common {
    /// Refuses fewer than 5 rounds.
    pub fn check(&self, bench: &str) -> Result<(), String> {
        if self.runs < 5 {
            return Err(format!(
                "{bench}: --runs {} is too few; use at least 5",
                self.runs
            ));
        }
        Ok(())
    }

    /// Progress on standard error (not with --json).
    pub fn say(&self, what: &str) {
        if !self.json {
            eprintln!("  measuring {what} …");
        }
    }

    /// Prints the rows as a table or JSON.
    pub fn print(&self, bench: &str, rows: &[report::Row]) {
        if self.json {
            println!("{}", report::json(rows));
        } else {
            let title = format!(
                "ferry-bench {bench} — medians of {} interleaved runs",
                self.runs
            );
            println!("{}", report::table(&title, rows));
        }
    }
}

/// ferry's benchmark suites.
#[derive(Parser)]
#[command(
    name = "ferry-bench",
    version,
    about,
    long_about = None,
    after_help = "Also: `ferry-bench variant {std|std-1m|compat|asi} TOOL OUT INPUT...` runs one of the asf suite's programs alone (TOOL: cat, cp, wc, wc-l, cmp, cut, grep-c, diff; OUT `-` is standard output)."
)]
struct Cli {
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
    /// The ASF paper's experiment: cat, cp, wc, cmp, cut, grep -c and diff
    /// as std / compat / asi programs, the ferry command and the GNU tool
    /// (ripgrep, uutils cat when installed), interleaved.
    Asf(asf::AsfArgs),
    /// The ASF paper's experiment in C: cat, cp, wc, cut, cmp, a line
    /// filter, the getc loop and fread in 1 KiB pieces, each built against
    /// glibc, unchanged against ferry/stdio.h, and rewritten on
    /// ferry/asi.h; interleaved.
    AsfC(asf_c::AsfCArgs),
    /// Roadrunner's experiment: files, pipes, TCP and Unix sockets and
    /// memory moved by ferry pipe / ferry ttcp and by cat, dd, socat and
    /// iperf3 (when installed), with CPU per GiB; loopback and a veth pair
    /// between two network namespaces.
    Stream(stream::StreamArgs),
    /// The fbufs paper's experiments: per-operation cost of read+write
    /// against read_buf+write_buf (rw) and of a mapping written against
    /// map+write_buf (maprw), 1 KiB to 1 MiB buffers, into a pipe.
    Fbufs(fbufs::FbufsArgs),
    /// The Titanium paper's experiment: an external sort's first pass
    /// (read a chunk of big-endian i64, sort it, write it) per element,
    /// buffered per element, in bulk on a file and on a stream, and
    /// asynchronously double-buffered; cached or O_DIRECT input.
    Bulk(bulk::BulkArgs),
    /// ferry sort against GNU sort (text in memory and through runs on
    /// disk, same -S and --parallel) and binary records against the I/O
    /// floor (the bytes copied twice).
    Sort(sort::SortArgs),
    /// The IO-Lite paper's optimisations: cached checksums (a hit against
    /// recomputing CRC-32C over 64 KiB; an aggregate's CRC-32C, Internet
    /// checksum and ETag from cached slices against one pass); the file
    /// cache beside quick_cache and moka (hit ratio, lookups/s).
    Iolite(iolite::IoliteArgs),
}

fn main() {
    let mut args = std::env::args_os().skip(1);
    // The asf suite's programs, timed as processes: straight to their code.
    if args.next().is_some_and(|a| a == "variant") {
        std::process::exit(variants::main(args.collect()));
    }
    let result = match Cli::parse().which {
        Which::Buf(a) => buf::run(a),
        Which::StreamOps(a) => stream_ops::run(a),
        Which::Asf(a) => asf::run(a),
        Which::AsfC(a) => asf_c::run(a),
        Which::Stream(a) => stream::run(a),
        Which::Fbufs(a) => fbufs::run(a),
        Which::Bulk(a) => bulk::run(a),
        Which::Sort(a) => sort::run_bench(a),
        Which::Iolite(a) => iolite::run(a),
    };
    if let Err(e) = result {
        eprintln!("ferry-bench: {e}");
        std::process::exit(1);
    }
}
