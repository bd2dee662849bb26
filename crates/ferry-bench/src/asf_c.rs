//! `ferry-bench asf-c`: the Alloc Stream Facility paper's experiment in C
//! (its Figures 10–11). Each tool has one C source built twice — against
//! glibc's stdio and, unchanged, against ferry/stdio.h — and a rewrite on
//! ferry/asi.h; the three run as processes, interleaved, inputs warmed
//! right before each run.
//!
//! The sources and headers are part of this binary (written to a scratch
//! directory and compiled with the system's `cc`); libferry.so comes from
//! `--lib`, or is built next to this binary from the source tree it was
//! built from.

use super::asf::{copy_of, med, run_once, which, Program, Sink};
use super::files::{make_file, Content, Scratch};
use super::measure::{compare, interleave, Samples, Variant};
use super::report::{Target, Unit};
use clap::Args;
use ferry_cli::parse_size;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Args)]
pub struct AsfCArgs {
    /// Size of the generated text input (K, M, G suffixes).
    #[arg(long, default_value = "1GiB", value_parser = parse_size)]
    size: u64,
    /// Only these tools (comma-separated: cat,cp,wc,cut,cmp,filter,getc,fread-1k).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Directory holding libferry.so (default: next to this binary, built
    /// there first when the source tree is at hand).
    #[arg(long)]
    lib: Option<PathBuf>,
    /// The C compiler (default: $CC, else cc).
    #[arg(long)]
    cc: Option<String>,
    /// Do not warm memory before cp's runs: leaves in this VM's cost of
    /// first touching memory the host took back while idle.
    #[arg(long)]
    cold_memory: bool,
    #[command(flatten)]
    c: super::Common,
}

/// A file of crates/ferry-c, as `(its path there, its text)`.
macro_rules! c_file {
    ($path:literal) => {
        ($path, include_str!(concat!("../../ferry-c/", $path)))
    };
}

/// The C sources and headers, as `(path under the scratch dir, text)`.
const SOURCES: &[(&str, &str)] = &[
    c_file!("include/ferry/stdio.h"),
    c_file!("include/ferry/asi.h"),
    c_file!("bench/bench.h"),
    c_file!("bench/asi/asi_bench.h"),
    c_file!("bench/stdio/cat.c"),
    c_file!("bench/stdio/cp.c"),
    c_file!("bench/stdio/wc.c"),
    c_file!("bench/stdio/cut.c"),
    c_file!("bench/stdio/cmp.c"),
    c_file!("bench/stdio/filter.c"),
    c_file!("bench/stdio/getc.c"),
    c_file!("bench/stdio/fread1k.c"),
    c_file!("bench/asi/cat.c"),
    c_file!("bench/asi/cp.c"),
    c_file!("bench/asi/wc.c"),
    c_file!("bench/asi/cut.c"),
    c_file!("bench/asi/cmp.c"),
    c_file!("bench/asi/filter.c"),
    c_file!("bench/asi/getc.c"),
    c_file!("bench/asi/fread1k.c"),
];

/// One tool: its name in the table, its source's file stem, where its
/// output goes.
struct CTool {
    name: &'static str,
    source: &'static str,
    sink: Sink,
}

/// cat, cut and the filter write to a pipe drained inside the kernel (a
/// consumer that is never the bottleneck; writing a GiB into the page
/// cache varies 2–8× between runs here); cp writes its own file.
const TOOLS: &[CTool] = &[
    CTool {
        name: "cat",
        source: "cat",
        sink: Sink::Pipe,
    },
    CTool {
        name: "cp",
        source: "cp",
        sink: Sink::Null,
    },
    CTool {
        name: "wc",
        source: "wc",
        sink: Sink::Null,
    },
    CTool {
        name: "cut",
        source: "cut",
        sink: Sink::Pipe,
    },
    CTool {
        name: "cmp",
        source: "cmp",
        sink: Sink::Null,
    },
    CTool {
        name: "filter",
        source: "filter",
        sink: Sink::Pipe,
    },
    CTool {
        name: "getc",
        source: "getc",
        sink: Sink::Null,
    },
    CTool {
        name: "fread-1k",
        source: "fread1k",
        sink: Sink::Null,
    },
];

/// The three builds of every program.
const BUILDS: [&str; 3] = ["glibc", "ferry", "asi"];

/// A scratch directory, removed on drop.
struct ScratchDir(PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn run(a: AsfCArgs) -> Result<(), String> {
    a.c.check("asf-c")?;
    let cc =
        a.cc.clone()
            .or_else(|| std::env::var("CC").ok().filter(|s| !s.is_empty()))
            .unwrap_or_else(|| "cc".into());
    if which(&[&cc]).is_none() && !Path::new(&cc).is_file() {
        return Err(format!(
            "asf-c: no C compiler '{cc}' (install gcc, or pass --cc)"
        ));
    }
    let tools: Vec<&CTool> = TOOLS
        .iter()
        .filter(|t| a.only.is_empty() || a.only.iter().any(|o| o == t.name))
        .collect();
    if tools.is_empty() {
        return Err(format!("asf-c: no tool in --only {:?}", a.only));
    }
    let lib = libferry(a.lib.as_deref(), a.c.json)?;
    let size = if a.c.quick { 8 << 20 } else { a.size };
    let dir = a.c.dir.clone().unwrap_or_else(std::env::temp_dir);
    let work = ScratchDir(dir.join(format!("ferry-bench-asf-c-{}", std::process::id())));
    write_sources(&work.0)?;
    if !a.c.json {
        eprintln!("  compiling {} programs with {cc} …", tools.len() * 3);
    }
    for t in &tools {
        for b in BUILDS {
            compile(&cc, &work.0, &lib, t.source, b)?;
        }
    }
    if !a.c.json {
        eprintln!("  generating inputs of {size} bytes in {} …", dir.display());
    }
    let text = make_file(size, Some(&dir), Content::Text, "asf-c-text")?;
    let text2 = copy_of(&text, "asf-c-text-copy")?;
    rustix::fs::sync();
    let out = Scratch {
        path: dir.join(format!("ferry-bench-asf-c-out-{}.dat", std::process::id())),
    };
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let (t1, t2, o) = (path(&text.path), path(&text2.path), path(&out.path));
    let mut results: Vec<(&str, Vec<Samples>)> = Vec::new();
    for t in &tools {
        a.c.say(t.name);
        let (args, inputs) = match t.name {
            "cp" => (vec![t1.clone(), o.clone()], vec![text.path.clone()]),
            "cmp" => (
                vec![t1.clone(), t2.clone()],
                vec![text.path.clone(), text2.path.clone()],
            ),
            _ => (vec![t1.clone()], vec![text.path.clone()]),
        };
        let programs: Vec<Program> = BUILDS
            .iter()
            .map(|b| {
                let mut argv = vec![path(&exe(&work.0, t.source, b))];
                argv.extend(args.iter().cloned());
                Program {
                    name: b.to_string(),
                    argv,
                    sink: t.sink,
                }
            })
            .collect();
        let mut variants: Vec<Variant<'_>> = programs
            .iter()
            .map(|p| {
                let (inputs, out) = (&inputs, &out.path);
                // cp fills a new file of the input's size.
                let fills = if t.name == "cp" && !a.cold_memory {
                    size
                } else {
                    0
                };
                Variant::new(p.name.clone(), move || {
                    let d = run_once(p, inputs, out, "auto", fills, None)?;
                    Ok((d, size as f64))
                })
            })
            .collect();
        let s = interleave(a.c.runs, &mut variants)?;
        results.push((t.name, s));
    }
    drop(out);
    let rows = targets(&results, a.c.runs);
    if a.c.json {
        println!(
            "{{\"programs\":{},\"targets\":{}}}",
            json(&results, size),
            super::report::json(&rows)
        );
    } else {
        println!(
            "ferry-bench asf-c — input {size} bytes of text (cmp: two), medians of {} interleaved runs",
            a.c.runs
        );
        println!("{}", table(&results, size));
        println!(
            "{}",
            super::report::table("targets (the issue's, from the same runs)", &rows)
        );
    }
    Ok(())
}

/// The directory holding libferry.so: `--lib`, or this program's own
/// (built there first where cargo can: `crate::workspace`).
fn libferry(explicit: Option<&Path>, quiet: bool) -> Result<PathBuf, String> {
    match explicit {
        Some(d) if d.join("libferry.so").is_file() => Ok(d.to_path_buf()),
        Some(d) => Err(format!("asf-c: no libferry.so in {}", d.display())),
        None => crate::workspace::built("ferry-c", "libferry.so", quiet)
            .map_err(|e| format!("asf-c: {e}, or pass --lib DIR")),
    }
}

fn write_sources(root: &Path) -> Result<(), String> {
    for (rel, text) in SOURCES {
        let p = root.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(())
}

fn exe(root: &Path, source: &str, build: &str) -> PathBuf {
    root.join("bin").join(format!("{source}-{build}"))
}

/// Builds one program: `glibc` (the stdio source as it is), `ferry` (the
/// same source with ferry/stdio.h included first, linked with libferry) or
/// `asi` (the rewrite). The same flags for all: -O2, as distributions build.
fn compile(cc: &str, root: &Path, lib: &Path, source: &str, build: &str) -> Result<(), String> {
    let out = exe(root, source, build);
    if let Some(d) = out.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let src = match build {
        "asi" => root.join(format!("bench/asi/{source}.c")),
        _ => root.join(format!("bench/stdio/{source}.c")),
    };
    let mut c = Command::new(cc);
    c.args(["-std=gnu11", "-O2", "-Wall"]).arg("-o").arg(&out);
    if build != "glibc" {
        c.arg("-I").arg(root.join("include"));
        if build == "ferry" {
            c.args(["-include", "ferry/stdio.h"]);
        }
    }
    c.arg(&src);
    if build != "glibc" {
        c.arg("-L")
            .arg(lib)
            .arg("-lferry")
            .arg(format!("-Wl,-rpath,{}", lib.display()));
    }
    let o = c
        .output()
        .map_err(|e| format!("asf-c: running {cc}: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "asf-c: compiling {} ({build}) failed:\n{}",
            src.display(),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(())
}

/// The targets, from the same runs: ferry's getc loop ≥ 3× glibc's,
/// fread in 1 KiB pieces ≥ 1.5×, the ASI rewrites of cat, cmp and wc ≥ 2×
/// the glibc programs, and no program slower on ferry/stdio.h.
fn targets(results: &[(&str, Vec<Samples>)], runs: usize) -> Vec<super::report::Row> {
    let mut rows = Vec::new();
    for (tool, s) in results {
        let min = match *tool {
            "getc" => 3.0,
            "fread-1k" => 1.5,
            _ => 1.0,
        };
        let what = format!("{tool}: ferry/stdio.h vs glibc");
        rows.push(compare(
            s,
            &what,
            "ferry",
            "glibc",
            Unit::GBps,
            Target::MinRatio(min),
            runs,
        ));
        let asi_target = match *tool {
            "cat" | "cmp" | "wc" => Target::MinRatio(2.0),
            _ => Target::None,
        };
        let what = format!("{tool}: ASI rewrite vs glibc");
        rows.push(compare(
            s,
            &what,
            "asi",
            "glibc",
            Unit::GBps,
            asi_target,
            runs,
        ));
    }
    rows
}

/// Per tool and build: median seconds, GB/s and the speed-up over glibc.
fn table(results: &[(&str, Vec<Samples>)], bytes: u64) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "| tool | build | median s | GB/s | × glibc |");
    let _ = writeln!(s, "|---|---|---|---|---|");
    for (tool, samples) in results {
        let glibc = med(samples, "glibc");
        for x in samples {
            let m = x.median();
            let _ = writeln!(
                s,
                "| {tool} | {} | {:.3} | {:.2} | {} |",
                x.name,
                m * bytes as f64,
                1.0 / m / 1e9,
                glibc.map_or("—".into(), |g| format!("{:.2}×", g / m))
            );
        }
    }
    s
}

fn json(results: &[(&str, Vec<Samples>)], bytes: u64) -> String {
    let mut rows = Vec::new();
    for (tool, samples) in results {
        let glibc = med(samples, "glibc");
        for x in samples {
            let m = x.median();
            let num = super::report::json_num;
            rows.push(format!(
                "{{\"tool\":\"{tool}\",\"build\":\"{}\",\"median_s\":{},\"gbps\":{},\"vs_glibc\":{},\"runs\":{}}}",
                x.name,
                num(Some(m * bytes as f64)),
                num(Some(1.0 / m / 1e9)),
                num(glibc.map(|g| g / m)),
                x.per_unit.len()
            ));
        }
    }
    format!("[{}]", rows.join(","))
}
