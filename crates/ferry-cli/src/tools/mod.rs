//! The `ferry` tools: GNU-compatible commands on ferry's I/O.
//!
//! Each takes GNU's options and gives GNU's output and exit status; errors
//! read like GNU's with the tool named `ferry NAME` (or `NAME` when the
//! binary is called by the tool's name, through a link).

mod cat;
mod cmp;
pub(crate) mod common;
mod cp;
mod cut;
mod diff;
mod grep;
mod locale;
mod longopts;
mod output;
mod pipe;
mod serve;
mod sort;
mod ttcp;
mod wc;
mod whole;

pub use diff::diff_normal;

/// The tools, by name.
pub const TOOLS: &[&str] = &[
    "cat", "cmp", "cp", "cut", "diff", "grep", "pipe", "serve", "sort", "ttcp", "wc",
];

/// Runs tool `name` with `args` (not including the name); returns the exit
/// status. Messages name it `ferry NAME`.
pub fn run(name: &str, args: Vec<std::ffi::OsString>) -> i32 {
    run_as(name, &format!("ferry {name}"), args)
}

/// [`run`], with messages naming the tool `shown` (`cut` when the binary
/// was called as `cut`).
pub fn run_as(name: &str, shown: &str, args: Vec<std::ffi::OsString>) -> i32 {
    let ctx = common::Tool::named(name, shown);
    let typed = if name == "diff" {
        args.clone()
    } else {
        Vec::new()
    };
    let args = match longopts::spec(name) {
        Some(spec) => match longopts::expand(&ctx, spec, args) {
            Ok(expanded) => expanded,
            Err(status) => return status,
        },
        None => args,
    };
    match name {
        "cat" => cat::main(&ctx, args),
        "cmp" => cmp::main(&ctx, args),
        "cp" => cp::main(&ctx, args),
        "cut" => cut::main(&ctx, args),
        "diff" => diff::main(&ctx, args, &typed),
        "grep" => grep::main(&ctx, args),
        "pipe" => pipe::main(&ctx, args),
        "serve" => serve::main(&ctx, args),
        "sort" => sort::main(&ctx, args),
        "ttcp" => ttcp::main(&ctx, args),
        "wc" => wc::main(&ctx, args),
        _ => {
            ctx.error(format_args!("unknown tool"));
            2
        }
    }
}
