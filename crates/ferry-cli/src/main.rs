//! `ferry`: copy-avoiding I/O tools and the benchmarks that measure them.

mod bench;
mod size;
mod tools;
mod variants;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// ferry — copy-avoiding I/O for Linux.
#[derive(Parser)]
#[command(
    name = "ferry",
    version,
    about,
    long_about = None,
    after_help = "Tools (GNU-compatible; `ferry TOOL --help`):\n  cat    concatenate files to standard output\n  cmp    compare two files byte by byte\n  cp     copy files (kernel copy, sparse, --atomic, --progress)\n  cut    print selected parts of lines\n  diff   compare files line by line (normal, -u, -q)\n  grep   print lines that match patterns\n  wc     count lines, words, characters and bytes"
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

fn main() -> ExitCode {
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
        let code = tools::run_as(name, &shown, args.collect());
        return ExitCode::from(code.clamp(0, 255) as u8);
    }
    if let Some(tool) = args.next().and_then(|a| a.into_string().ok()) {
        if tool == "variant" {
            let code = variants::main(args.collect());
            return ExitCode::from(code.clamp(0, 255) as u8);
        }
        if tools::TOOLS.contains(&tool.as_str()) {
            let code = tools::run(&tool, args.collect());
            return ExitCode::from(code.clamp(0, 255) as u8);
        }
    }
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
