//! The paper's pipelines between programs (IO-Lite §4.4: `gcc`'s passes,
//! `permute | wc`) in C: a producer (printf, fputs, fwrite, putchar) into
//! a consumer (fgets, getc, fread, hashing every byte), two processes
//! joined by a pipe — both built against glibc; both on ferry/stdio.h over
//! the pipe; and both on ferry/stdio.h with `FERRY_STDIO_IPC=1`, where the
//! pipe is upgraded to an ipc channel (the consumer reads the producer's
//! pool slots in place). Sources: crates/ferry-c/bench/pipeline/.
//!
//! Every run's output (bytes, lines, hash) is checked against glibc's,
//! and whether the channel was used against what the variant asks for.

use crate::measure::{compare, interleave, Scale, Variant};
use crate::report::{Row, Target, Unit};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SOURCES: &[(&str, &str)] = &[
    (
        "include/ferry/stdio.h",
        include_str!("../../../ferry-c/include/ferry/stdio.h"),
    ),
    (
        "include/ferry/asi.h",
        include_str!("../../../ferry-c/include/ferry/asi.h"),
    ),
    (
        "produce.c",
        include_str!("../../../ferry-c/bench/pipeline/produce.c"),
    ),
    (
        "consume.c",
        include_str!("../../../ferry-c/bench/pipeline/consume.c"),
    ),
];

/// Lines the producer writes (about 24 bytes each), before its 20 binary
/// blocks.
const LINES: usize = 4_000_000;

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn compile(root: &Path, lib: &Path, source: &str, ferry: bool) -> Result<PathBuf, String> {
    let out = root.join(format!(
        "{source}-{}",
        if ferry { "ferry" } else { "glibc" }
    ));
    let mut c = Command::new("cc");
    c.args(["-std=gnu11", "-O2", "-Wall"]).arg("-o").arg(&out);
    if ferry {
        c.arg("-I").arg(root.join("include"));
        c.args(["-include", "ferry/stdio.h"]);
    }
    c.arg(root.join(format!("{source}.c")));
    if ferry {
        c.arg("-L")
            .arg(lib)
            .arg("-lferry")
            .arg(format!("-Wl,-rpath,{}", lib.display()));
    }
    let o = c
        .output()
        .map_err(|e| format!("pipeline: running cc: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "pipeline: compiling {source} failed:\n{}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(out)
}

/// `produce LINES | consume`, timed from the producer's start to the
/// consumer's end: (time, the consumer's output, whether it mapped a
/// ferry pool).
fn run_once(
    produce: &Path,
    consume: &Path,
    lines: usize,
    ipc: bool,
) -> Result<(Duration, String, bool), String> {
    let t = Instant::now();
    let mut p = Command::new(produce);
    p.arg(lines.to_string()).arg("1").stdout(Stdio::piped());
    let mut c = Command::new(consume);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    if ipc {
        p.env("FERRY_STDIO_IPC", "1");
        c.env("FERRY_STDIO_IPC", "1");
    } else {
        p.env_remove("FERRY_STDIO_IPC");
        c.env_remove("FERRY_STDIO_IPC");
    }
    let mut p = p.spawn().map_err(|e| format!("producer: {e}"))?;
    let pipe = p.stdout.take().ok_or("no pipe")?;
    let child = c
        .stdin(pipe)
        .spawn()
        .map_err(|e| format!("consumer: {e}"))?;
    drop(c);
    let out = child
        .wait_with_output()
        .map_err(|e| format!("consumer: {e}"))?;
    let st = p.wait().map_err(|e| format!("producer: {e}"))?;
    let took = t.elapsed();
    if !st.success() || !out.status.success() {
        return Err(format!(
            "producer {st}, consumer {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok((
        took,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).contains("channel yes"),
    ))
}

fn bytes_of(out: &str) -> f64 {
    out.split(' ')
        .nth(1)
        .and_then(|b| b.parse().ok())
        .unwrap_or(0.0)
}

pub fn run(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let lib = crate::workspace::built("ferry-c", "libferry.so", true)
        .map_err(|e| format!("pipeline: {e}"))?;
    let root =
        Scratch(std::env::temp_dir().join(format!("ferry-bench-pipeline-{}", std::process::id())));
    for (rel, text) in SOURCES {
        let p = root.0.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let produce = [
        compile(&root.0, &lib, "produce", false)?,
        compile(&root.0, &lib, "produce", true)?,
    ];
    let consume = [
        compile(&root.0, &lib, "consume", false)?,
        compile(&root.0, &lib, "consume", true)?,
    ];
    let lines = scale.of(LINES);
    let (_, want, _) = run_once(&produce[0], &consume[0], lines, false)?;
    let bytes = bytes_of(&want);
    let variant = |build: usize, ipc: bool| {
        let (p, c, want) = (&produce[build], &consume[build], &want);
        move || -> Result<(Duration, f64), String> {
            let (t, got, channel) = run_once(p, c, lines, ipc)?;
            if &got != want {
                return Err(format!("printed {got:?}, glibc printed {want:?}"));
            }
            if channel != ipc {
                return Err(format!("channel used: {channel}, asked: {ipc}"));
            }
            Ok((t, bytes))
        }
    };
    let (g, f, i) = (
        "glibc → glibc, pipe",
        "ferry stdio → ferry stdio, pipe",
        "ferry stdio → ferry stdio, ipc channel",
    );
    let mut vs = vec![
        Variant::new(g, variant(0, false)),
        Variant::new(f, variant(1, false)),
        Variant::new(i, variant(1, true)),
    ];
    let s = interleave(runs, &mut vs)?;
    let mib = bytes / f64::from(1 << 20);
    Ok(vec![
        compare(
            &s,
            &format!("C producer → consumer, {mib:.0} MiB: ipc channel vs pipe (both ferry stdio)"),
            i,
            f,
            Unit::GBps,
            Target::None,
            runs,
        ),
        compare(
            &s,
            &format!("C producer → consumer, {mib:.0} MiB: ferry stdio over the ipc channel vs glibc over a pipe"),
            i,
            g,
            Unit::GBps,
            Target::None,
            runs,
        ),
    ])
}
