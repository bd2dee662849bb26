//! `ferry-bench asf`: the Alloc Stream Facility paper's experiment on this
//! machine (its Figures 10–11, and with `--backend buffered` its Tables
//! 2–3): every tool as std / compat / asi programs, the real `ferry`
//! command, the GNU tool and (where installed) ripgrep and uutils cat, run
//! as processes, interleaved, inputs warmed right before each run.

use super::files::{
    fully_cached, lay_out, make_file, reports_free_memory, warm, warm_memory, Content, Layout,
    Scratch,
};
use super::measure::{interleave, Samples, Variant};
use clap::{Args, ValueEnum};
use ferry_cli::parse_size;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, ValueEnum)]
enum LayoutArg {
    Small,
    Large,
    Both,
}

#[derive(Clone, Copy, ValueEnum)]
enum BackendArg {
    Auto,
    Mmap,
    Buffered,
}

#[derive(Args)]
pub struct AsfArgs {
    /// Size of each generated input (K, M, G suffixes); diff uses at most
    /// 100 MiB per file.
    #[arg(long, default_value = "1GiB", value_parser = parse_size)]
    size: u64,
    /// The alloc-stream backend the ferry programs use (FERRY_BACKEND).
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Only these tools (comma-separated: cat,cat-pipe,cp,wc,wc-l,cmp,cut,grep-c,diff).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Do not warm memory before runs that write files or load whole
    /// inputs: leaves in this VM's cost of first touching memory the host
    /// took back while idle (see docs/BENCHMARKS.md).
    #[arg(long)]
    cold_memory: bool,
    /// The inputs' page-cache layout: small (written 4 KiB at a time: 4 KiB
    /// pages, as logs and files written through pipes), large (dropped and
    /// read back by readahead: large folios), or both, one table each.
    #[arg(long, value_enum, default_value = "both")]
    layout: LayoutArg,
    /// Do not install missing peers (ripgrep, uutils) from Debian's
    /// packages; they are then named as missing under the table.
    #[arg(long)]
    no_install: bool,
    #[command(flatten)]
    c: super::Common,
}

/// Where a program's standard output goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Sink {
    /// A scratch file (created fresh for each run).
    File,
    /// A pipe drained by `splice` into /dev/null (a consumer that is never
    /// the bottleneck).
    Pipe,
    /// Discarded (a few bytes of counts).
    Null,
}

/// One program to time.
pub(super) struct Program {
    pub(super) name: String,
    pub(super) argv: Vec<String>,
    pub(super) sink: Sink,
}

/// One benchmarked tool: its inputs and its programs.
struct Tool {
    name: &'static str,
    inputs: Vec<PathBuf>,
    bytes: u64,
    /// Bytes of memory to warm before each run: what the run fills with
    /// new page-cache pages or allocates (an upper bound).
    fills: u64,
    programs: Vec<Program>,
}

/// The first of `names` on PATH.
pub(super) fn which(names: &[&str]) -> Option<String> {
    let path = std::env::var_os("PATH")?;
    for n in names {
        for d in std::env::split_paths(&path) {
            let p = d.join(n);
            if p.is_file() {
                return Some(p.to_string_lossy().into_owned());
            }
        }
    }
    None
}

/// Printed under the table when the kernel reports free memory to a host.
pub(super) const FREE_PAGE_NOTE: &str = "note: this VM reports free memory to its host, so \
runs that write files vary by 2-4x with when the reporter last ran; for steady figures run \
this under scripts/hold-memory.sh (root)";

pub fn run(a: AsfArgs) -> Result<(), String> {
    a.c.check("asf")?;
    // The std / compat / asi programs are this binary's `variant`s.
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let me = me.to_string_lossy().into_owned();
    let ferry = crate::workspace::ferry(a.c.json)?;
    let size = if a.c.quick { 8 << 20 } else { a.size };
    let dir = a.c.dir.clone().unwrap_or_else(std::env::temp_dir);
    let backend = match a.backend {
        BackendArg::Auto => "auto",
        BackendArg::Mmap => "mmap",
        BackendArg::Buffered => "buffered",
    };
    let mut missing = Vec::new();
    // Debian's rust-coreutils puts its cat in /usr/lib/cargo/bin/coreutils.
    let uu_names = [
        "uu-cat",
        "uu_cat",
        "uutils-cat",
        "/usr/lib/cargo/bin/coreutils/cat",
    ];
    let mut install_failed = None;
    if !a.c.quick && !a.no_install {
        let mut need = Vec::new();
        if which(&["rg"]).is_none() {
            need.push("ripgrep");
        }
        if which(&uu_names).is_none() {
            need.push("rust-coreutils");
        }
        install_failed = crate::peers::install(&need, a.c.json).err();
    }
    let rg = which(&["rg"]);
    let uu = which(&uu_names);
    if rg.is_none() {
        missing.push("ripgrep (rg; apt-get install ripgrep)");
    }
    if uu.is_none() {
        missing.push("uutils cat (uu-cat, uu_cat or uutils-cat; apt-get install rust-coreutils)");
    }
    if let (Some(why), false) = (install_failed, missing.is_empty()) {
        if !a.c.json {
            eprintln!("  peers not installed: {why}");
        }
    }
    for (t, bin) in [
        ("GNU coreutils", "cat"),
        ("GNU diffutils", "cmp"),
        ("GNU grep", "grep"),
    ] {
        if which(&[bin]).is_none() {
            missing.push(t);
        }
    }
    if !a.c.json {
        eprintln!("  generating inputs of {size} bytes in {} …", dir.display());
    }
    let text = make_file(size, Some(&dir), Content::Text, "asf-text")?;
    let random = make_file(size, Some(&dir), Content::Random, "asf-random")?;
    let random2 = copy_of(&random, "asf-random-copy")?;
    let dsize = size.min(100 << 20);
    let (da, db) = diff_pair(dsize, &dir)?;
    rustix::fs::sync();
    let out = Scratch {
        path: dir.join(format!("ferry-bench-asf-out-{}.dat", std::process::id())),
    };
    let o = out.path.to_string_lossy().into_owned();
    let p = |x: &Scratch| x.path.to_string_lossy().into_owned();
    let (t, r, r2, a1, b1) = (p(&text), p(&random), p(&random2), p(&da), p(&db));
    let variant = |k: &str, tool: &str, ins: &[&str]| {
        let mut v = vec![
            me.clone(),
            "variant".into(),
            k.into(),
            tool.into(),
            o.clone(),
        ];
        v.extend(ins.iter().map(|s| s.to_string()));
        v
    };
    let v3 = |tool: &str, ins: &[&str], sink: Sink| -> Vec<Program> {
        crate::variants::KINDS
            .iter()
            .map(|k| Program {
                name: k.to_string(),
                argv: variant(k, tool, ins),
                sink: if sink == Sink::File { Sink::Null } else { sink },
            })
            .collect()
    };
    let prog = |name: &str, argv: &[&str], sink: Sink| Program {
        name: name.into(),
        argv: argv.iter().map(|s| s.to_string()).collect(),
        sink,
    };
    let grep_word = "qz";
    let mut tools = vec![
        Tool {
            name: "cat",
            fills: size,
            inputs: vec![text.path.clone()],
            bytes: size,
            programs: {
                let mut v = v3("cat", &[&t], Sink::File);
                v.push(prog("ferry", &[&ferry, "cat", &t], Sink::File));
                v.push(prog("GNU", &["cat", &t], Sink::File));
                if let Some(u) = &uu {
                    v.push(prog("uutils", &[u, &t], Sink::File));
                }
                v
            },
        },
        Tool {
            name: "cat-pipe",
            fills: 0,
            inputs: vec![text.path.clone()],
            bytes: size,
            programs: {
                let mut v = v3("cat", &[&t], Sink::Pipe);
                for p in &mut v {
                    // Variants write to their standard output here.
                    p.argv[4] = "-".into();
                }
                v.push(prog("ferry", &[&ferry, "cat", &t], Sink::Pipe));
                v.push(prog("GNU", &["cat", &t], Sink::Pipe));
                if let Some(u) = &uu {
                    v.push(prog("uutils", &[u, &t], Sink::Pipe));
                }
                v
            },
        },
        Tool {
            name: "cp",
            fills: size,
            inputs: vec![random.path.clone()],
            bytes: size,
            programs: {
                let mut v = v3("cp", &[&r], Sink::Null);
                v.push(prog("ferry", &[&ferry, "cp", &r, &o], Sink::Null));
                v.push(prog("GNU", &["cp", &r, &o], Sink::Null));
                v
            },
        },
        Tool {
            name: "wc",
            fills: 0,
            inputs: vec![text.path.clone()],
            bytes: size,
            programs: {
                let mut v = v3("wc", &[&t], Sink::Null);
                v.push(prog("ferry", &[&ferry, "wc", &t], Sink::Null));
                v.push(prog("GNU", &["wc", &t], Sink::Null));
                v
            },
        },
        Tool {
            name: "wc-l",
            fills: 0,
            inputs: vec![text.path.clone()],
            bytes: size,
            programs: {
                let mut v = v3("wc-l", &[&t], Sink::Null);
                v.push(prog("ferry", &[&ferry, "wc", "-l", &t], Sink::Null));
                v.push(prog("GNU", &["wc", "-l", &t], Sink::Null));
                v
            },
        },
        Tool {
            name: "cmp",
            fills: 0,
            inputs: vec![random.path.clone(), random2.path.clone()],
            bytes: size,
            programs: {
                let mut v = v3("cmp", &[&r, &r2], Sink::Null);
                v.push(prog("ferry", &[&ferry, "cmp", &r, &r2], Sink::Null));
                v.push(prog("GNU", &["cmp", &r, &r2], Sink::Null));
                v
            },
        },
        Tool {
            name: "cut",
            fills: size / 4,
            inputs: vec![text.path.clone()],
            bytes: size,
            programs: {
                let mut v = v3("cut", &[&t], Sink::File);
                v.push(prog("ferry", &[&ferry, "cut", "-c1-10", &t], Sink::File));
                v.push(prog("GNU", &["cut", "-c1-10", &t], Sink::File));
                v
            },
        },
        Tool {
            name: "grep-c",
            fills: 0,
            inputs: vec![text.path.clone()],
            bytes: size,
            programs: {
                // Not /dev/null: GNU grep stops at the first match when its
                // output is /dev/null.
                let mut v = v3("grep-c", &[grep_word, &t], Sink::File);
                let ferry_argv = [ferry.as_str(), "grep", "-c", grep_word, &t];
                v.push(prog("ferry", &ferry_argv, Sink::File));
                v.push(prog("GNU", &["grep", "-c", grep_word, &t], Sink::File));
                if let Some(rg) = &rg {
                    v.push(prog("ripgrep", &[rg, "-c", grep_word, &t], Sink::File));
                }
                v
            },
        },
        Tool {
            name: "diff",
            fills: 4 * dsize,
            inputs: vec![da.path.clone(), db.path.clone()],
            bytes: 2 * dsize,
            programs: {
                let mut v = v3("diff", &[&a1, &b1], Sink::File);
                v.push(prog("ferry", &[&ferry, "diff", &a1, &b1], Sink::File));
                v.push(prog("GNU", &["diff", &a1, &b1], Sink::File));
                v
            },
        },
    ];
    if !a.only.is_empty() {
        tools.retain(|t| a.only.iter().any(|o| o == t.name));
    }
    let layouts: &[Layout] = match a.layout {
        LayoutArg::Small => &[Layout::Small],
        LayoutArg::Large => &[Layout::Large],
        LayoutArg::Both => &[Layout::Large, Layout::Small],
    };
    let mut by_layout = Vec::new();
    for &layout in layouts {
        if !a.c.json {
            eprintln!("  laying the inputs out in {} pages …", layout.name());
        }
        for s in [&text, &random, &random2, &da, &db] {
            lay_out(&s.path, layout)?;
        }
        let mut results = Vec::new();
        for tool in &tools {
            a.c.say(&format!("{} ({} pages)", tool.name, layout.name()));
            let mut variants: Vec<Variant<'_>> = tool
                .programs
                .iter()
                .map(|p| {
                    let inputs = &tool.inputs;
                    let out = &out.path;
                    let bytes = tool.bytes as f64;
                    let fills = if a.cold_memory { 0 } else { tool.fills };
                    Variant::new(p.name.clone(), move || {
                        let d = run_once(p, inputs, out, backend, fills, Some(layout))?;
                        Ok((d, bytes))
                    })
                })
                .collect();
            let s = interleave(a.c.runs, &mut variants)?;
            results.push((tool.name, tool.bytes, s));
        }
        by_layout.push((layout, results));
    }
    drop(out);
    if a.c.json {
        let rows: Vec<String> = by_layout
            .iter()
            .map(|(l, r)| {
                format!(
                    "{{\"layout\":\"{}\",\"results\":{}}}",
                    l.name(),
                    json(r, backend, &missing)
                )
            })
            .collect();
        println!("[{}]", rows.join(","));
    } else {
        for (layout, results) in &by_layout {
            println!(
                "ferry-bench asf — inputs {size} bytes (diff: two of {dsize}) in {} pages, backend {backend}, medians of {} interleaved runs",
                layout.name(),
                a.c.runs
            );
            println!("{}", table(results));
        }
        for m in &missing {
            println!("not found, left out: {m}");
        }
        if reports_free_memory() {
            println!("{FREE_PAGE_NOTE}");
        }
    }
    Ok(())
}

pub(super) fn copy_of(s: &Scratch, tag: &str) -> Result<Scratch, String> {
    let path = s
        .path
        .with_file_name(format!("ferry-bench-{tag}-{}.dat", std::process::id()));
    std::fs::copy(&s.path, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Scratch { path })
}

/// Two texts of ~60-byte lines differing in 1% of lines (changed,
/// inserted or deleted).
fn diff_pair(size: u64, dir: &Path) -> Result<(Scratch, Scratch), String> {
    use std::io::Write;
    let pa = dir.join(format!("ferry-bench-asf-diff-a-{}.dat", std::process::id()));
    let pb = dir.join(format!("ferry-bench-asf-diff-b-{}.dat", std::process::id()));
    let (sa, sb) = (Scratch { path: pa.clone() }, Scratch { path: pb.clone() });
    let err = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let mut fa = std::io::BufWriter::new(File::create(&pa).map_err(|e| err(&pa, e))?);
    let mut fb = std::io::BufWriter::new(File::create(&pb).map_err(|e| err(&pb, e))?);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut written = 0u64;
    let mut n = 0u64;
    while written < size {
        // Distinct lines (a line number and random words), ~60 bytes.
        let mut line = format!("{n:09} ");
        while line.len() < 59 {
            let r = next();
            line.push((b'a' + (r % 26) as u8) as char);
            if r % 7 == 0 {
                line.push(' ');
            }
        }
        line.push('\n');
        n += 1;
        written += line.len() as u64;
        fa.write_all(line.as_bytes()).map_err(|e| err(&pa, e))?;
        match next() % 300 {
            0 => {} // deleted
            1 => fb
                .write_all(format!("changed {line}").as_bytes())
                .map_err(|e| err(&pb, e))?,
            2 => {
                fb.write_all(line.as_bytes()).map_err(|e| err(&pb, e))?;
                fb.write_all(b"an inserted line\n")
                    .map_err(|e| err(&pb, e))?;
            }
            _ => fb.write_all(line.as_bytes()).map_err(|e| err(&pb, e))?,
        }
    }
    fa.flush().map_err(|e| err(&pa, e))?;
    fb.flush().map_err(|e| err(&pb, e))?;
    Ok((sa, sb))
}

/// Warms the inputs and `fills` bytes of memory (see `warm_memory`), then
/// times one run of `p` to its end.
pub(super) fn run_once(
    p: &Program,
    inputs: &[PathBuf],
    out: &Path,
    backend: &str,
    fills: u64,
    layout: Option<Layout>,
) -> Result<Duration, String> {
    let _ = std::fs::remove_file(out);
    // No write-back of an earlier run's output in this one's time.
    rustix::fs::sync();
    for i in inputs {
        // Idle page cache is dropped here within a minute or so; read back,
        // a file comes in large folios. A small layout is laid out again.
        if layout == Some(Layout::Small) && !fully_cached(i)? {
            lay_out(i, Layout::Small)?;
        }
        let mut f = File::open(i).map_err(|e| format!("{}: {e}", i.display()))?;
        warm(&mut f)?;
    }
    warm_memory(out.parent().unwrap_or(Path::new(".")), fills)?;
    let mut c = Command::new(&p.argv[0]);
    c.args(&p.argv[1..])
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    if backend != "auto" {
        c.env("FERRY_BACKEND", backend);
    }
    let t;
    let status;
    match p.sink {
        Sink::Null => {
            c.stdout(Stdio::null());
            t = Instant::now();
            status = c.output().map_err(|e| e.to_string())?;
        }
        Sink::File => {
            let f = File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
            c.stdout(f);
            t = Instant::now();
            status = c.output().map_err(|e| e.to_string())?;
        }
        Sink::Pipe => {
            c.stdout(Stdio::piped());
            t = Instant::now();
            let mut child = c.spawn().map_err(|e| e.to_string())?;
            let pipe = child.stdout.take().ok_or("no pipe")?;
            drain(pipe)?;
            status = child.wait_with_output().map_err(|e| e.to_string())?;
        }
    }
    let d = t.elapsed();
    // cmp and diff say 1 for "different", grep 1 for "none": not failures.
    match status.status.code() {
        Some(0) | Some(1) => Ok(d),
        _ => Err(format!(
            "{:?} failed ({}): {}",
            p.argv,
            status.status,
            String::from_utf8_lossy(&status.stderr).trim()
        )),
    }
}

/// Moves everything from the pipe into /dev/null inside the kernel.
fn drain(pipe: std::process::ChildStdout) -> Result<(), String> {
    let null = File::options()
        .write(true)
        .open("/dev/null")
        .map_err(|e| e.to_string())?;
    loop {
        match rustix::pipe::splice(
            &pipe,
            None,
            &null,
            None,
            1 << 20,
            rustix::pipe::SpliceFlags::MOVE,
        ) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(format!("draining the pipe: {e}")),
        }
    }
}

pub(super) fn med(s: &[Samples], name: &str) -> Option<f64> {
    s.iter().find(|x| x.name == name).map(|x| x.median())
}

/// The paper's Figure 10/11 shape: per tool, each program's median time
/// and throughput, and its speed-up over std and over the GNU tool.
fn table(results: &[(&str, u64, Vec<Samples>)]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "| tool | program | median s | GB/s | × std | × GNU |");
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for (tool, bytes, samples) in results {
        let std = med(samples, "std");
        let gnu = med(samples, "GNU");
        for x in samples {
            let m = x.median(); // seconds per byte
            let secs = m * *bytes as f64;
            let ratio = |b: Option<f64>| b.map_or("—".to_string(), |b| format!("{:.2}×", b / m));
            let _ = writeln!(
                s,
                "| {tool} | {} | {secs:.3} | {:.2} | {} | {} |",
                x.name,
                1.0 / m / 1e9,
                ratio(std),
                ratio(gnu)
            );
        }
    }
    s
}

fn json(results: &[(&str, u64, Vec<Samples>)], backend: &str, missing: &[&str]) -> String {
    let mut rows = Vec::new();
    for (tool, bytes, samples) in results {
        let std = med(samples, "std");
        let gnu = med(samples, "GNU");
        for x in samples {
            let m = x.median();
            let num = super::report::json_num;
            rows.push(format!(
                "{{\"tool\":\"{tool}\",\"program\":\"{}\",\"median_s\":{},\"gbps\":{},\"vs_std\":{},\"vs_gnu\":{},\"runs\":{},\"samples_s\":[{}]}}",
                x.name,
                num(Some(m * *bytes as f64)),
                num(Some(1.0 / m / 1e9)),
                num(std.map(|b| b / m)),
                num(gnu.map(|b| b / m)),
                x.per_unit.len(),
                x.per_unit
                    .iter()
                    .map(|u| num(Some(u * *bytes as f64)))
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
    }
    let missing: Vec<String> = missing.iter().map(|m| format!("\"{m}\"")).collect();
    format!(
        "{{\"backend\":\"{backend}\",\"reports_free_memory\":{},\"rows\":[{}],\"not_found\":[{}]}}",
        reports_free_memory(),
        rows.join(","),
        missing.join(",")
    )
}
