//! The ferry tools as a library: the `ferry` binary (`src/main.rs`) is
//! [`start`] and [`run`] behind a C `main` of its own.
//!
//! A few pieces of the tools are public for the benchmarks
//! (crates/ferry-bench), whose std / compat / asi programs do their work on
//! the bytes with the tools' own code, so that their timings beside `ferry
//! diff` compare I/O interfaces, not algorithms: [`diff_normal`] (diff's
//! engine and normal format) and [`stream_options`] (the stream backend
//! `FERRY_BACKEND` picks); and [`parse_size`], for sizes on their command
//! lines as on `ferry ttcp`'s.

mod size;
mod tools;

pub use size::parse_size;
pub use tools::common::stream_options;
pub use tools::diff_normal;

use tools::common::{self, Tool};

/// `ferry --help`.
const HELP: &str = "\
Usage: ferry TOOL [ARGUMENT]...
  or:  TOOL [ARGUMENT]...   (through a link to ferry named after the tool)
ferry — copy-avoiding I/O for Linux.

Tools (GNU-compatible; `ferry TOOL --help`):
  cat    concatenate files to standard output
  cmp    compare two files byte by byte
  cp     copy files (kernel copy, sparse, --atomic, --progress)
  cut    print selected parts of lines
  diff   compare files line by line (normal, -u, -c, -y; -r)
  grep   print lines that match patterns
  pipe   move bytes between files, pipes and sockets (socat-like)
  serve  serve a directory over HTTP/1.1 (cached files, sendfile, ranges)
  sort   sort lines of text (and fixed-size binary records)
  ttcp   test TCP throughput and CPU per GiB (read-write, exchange, splice, sendfile)
  wc     count lines, words, characters and bytes

Options:
  -h, --help     print this help and exit
  -V, --version  print the version and exit
";

/// What the process needs before a tool runs, which std's runtime start-up
/// would have done (the binary starts without it): a closed standard input
/// occupied, so that no file opened takes its place, and SIGPIPE ignored
/// (writers see `EPIPE` and end as GNU's do).
pub fn start() {
    common::occupy_closed_stdin();
    common::ignore_sigpipe();
}

/// The command line's tool, run; its exit status.
pub fn run() -> i32 {
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
    let me = Tool::named("ferry", "ferry");
    let Some(first) = args.next() else {
        me.usage_error(format_args!("missing tool name"));
        return 2;
    };
    match first.to_str() {
        Some(tool) if tools::TOOLS.contains(&tool) => tools::run(tool, args.collect()),
        Some("--help" | "-h") => common::answer(&me, format_args!("{HELP}"), true),
        Some("--version" | "-V") => common::version(&me),
        _ => {
            me.usage_error(format_args!(
                "unknown tool {}",
                common::quote_always(&first.to_string_lossy())
            ));
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_names_every_tool() {
        for t in tools::TOOLS {
            assert!(
                HELP.lines().any(|l| l.starts_with(&format!("  {t} "))),
                "`ferry --help` does not name {t}"
            );
        }
    }
}
