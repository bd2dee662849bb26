//! `ferry-bench iolite`: the IO-Lite paper's optimisations, each beside
//! what it saves — one file per case (`checksums`: the checksum cache;
//! `cache`: the unified file cache beside quick_cache and moka; `ipc`:
//! the paper's Figures 2 and 3, ferry's copy-free channel beside pipes,
//! vmsplice, Unix and TCP sockets; `iceoryx`: ferry's channel beside
//! iceoryx2's shared-memory publish/subscribe, by iceoryx2's ping-pong
//! and by the paper's stream; `apps`: the paper's application runs,
//! `wc` and `permute | wc`, with and without the cache and the channel;
//! `pipeline`: a C producer → consumer on ferry stdio, over a pipe and
//! over an ipc channel, beside glibc; `http`: the paper's web server
//! experiment, `ferry serve` beside nginx, lighttpd, h2o and
//! static-web-server under wrk; `https`: the same over TLS beside nginx's
//! HTTPS; `cgi`: programs behind the servers).

mod apps;
mod cache;
mod cache_fill;
mod cache_traces;
mod checksums;
mod http;
mod http_cgi;
mod http_tls;
mod iceoryx;
mod ipc;
mod pipeline;

use super::measure::Scale;
use clap::Args;

#[derive(Args)]
pub struct IoliteArgs {
    #[command(flatten)]
    c: super::Common,
    /// Run only these cases (comma-separated; default: all). Cases:
    /// checksums, cache, fill, ipc, iceoryx, apps, pipeline, http, https,
    /// cgi.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

/// The cases, by name, each returning its rows.
type Case = fn(usize, Scale) -> Result<Vec<super::report::Row>, String>;
const CASES: &[(&str, &str, Case)] = &[
    (
        "checksums",
        "checksum cache: hits and combined aggregates vs recomputing",
        checksums::run,
    ),
    (
        "cache",
        "file cache: hit ratio and lookups/s beside quick_cache and moka",
        cache::run,
    ),
    (
        "fill",
        "file cache misses: filled by read vs by leased mapping, per extent and layout",
        cache_fill::run,
    ),
    (
        "ipc",
        "message channels: throughput and CPU per GiB, 1 KiB to 1 MiB messages",
        ipc::run,
    ),
    (
        "iceoryx",
        "ferry ipc beside iceoryx2: ping-pong latency, the paper's message stream",
        iceoryx::run,
    ),
    (
        "apps",
        "applications: wc over a cached file, permute→wc",
        apps::run,
    ),
    (
        "pipeline",
        "a C producer → consumer on ferry stdio, over a pipe and over an ipc channel, beside glibc",
        pipeline::run,
    ),
    (
        "http",
        "HTTP: ferry serve beside nginx, lighttpd, h2o and static-web-server, by file size (wrk)",
        http::run,
    ),
    (
        "https",
        "HTTPS: ferry serve beside nginx's HTTPS, by file size (wrk)",
        http_tls::run,
    ),
    (
        "cgi",
        "CGI: ferry's ipc programs beside CGI/1.1, php-fpm behind ferry and nginx, and static files (wrk)",
        http_cgi::run,
    ),
];

pub fn run(a: IoliteArgs) -> Result<(), String> {
    a.c.check("iolite")?;
    for o in &a.only {
        if !CASES.iter().any(|(name, _, _)| name == o) {
            return Err(format!("iolite: no case named '{o}'"));
        }
    }
    let scale = Scale(if a.c.quick { 0.001 } else { 1.0 });
    let mut rows = Vec::new();
    for (name, what, case) in CASES {
        if a.only.is_empty() || a.only.iter().any(|o| o == name) {
            a.c.say(what);
            rows.extend(case(a.c.runs, scale)?);
        }
    }
    a.c.print("iolite", &rows);
    Ok(())
}
