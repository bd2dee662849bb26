//! `ferry-bench stream`: Roadrunner's experiment on this machine — bytes
//! moved between files, pipes, TCP and Unix sockets and memory by ferry
//! (`ferry pipe`, `ferry ttcp`) and by the programs people use for it
//! (`cat`, `dd`, `socat`, `iperf3`), each run as processes, interleaved,
//! the input warmed right before each run. Every row gives throughput and
//! the CPU time (user + system) per GiB of the sending side.
//!
//! A peer that is not installed is named and its rows left out
//! (`scripts/bench-stream.sh` installs them from Debian's packages).

use super::files::{make_file, warm, Content};
use super::measure::median;
use clap::Args;
use ferry_cli::parse_size;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct StreamArgs {
    /// Bytes per run (K, M, G suffixes).
    #[arg(long, default_value = "1GiB", value_parser = parse_size)]
    size: u64,
    /// Only these scenarios (comma-separated: file-tcp, mem-tcp, cases,
    /// file-unix, file-pipe, file-file, ftp, veth).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// The input file's page-cache layout: large folios (a file written in
    /// large writes and read back) or 4 KiB pages (as a log or a pipe's
    /// output lands).
    #[arg(long, value_enum, default_value = "large")]
    layout: super::files::Layout,
    /// Do not install missing peers (socat, iperf3) from Debian's
    /// packages; the movers that need them are then named as left out.
    #[arg(long)]
    no_install: bool,
    #[command(flatten)]
    c: super::Common,
}

/// Where a scenario's receiver listens.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Listen {
    /// No receiver process (the sender's command holds both ends).
    None,
    /// TCP, in this network namespace or the one named.
    Tcp(Option<&'static str>),
    /// A Unix socket at `{sock}`.
    Unix,
}

/// One way of moving the bytes: a receiver (started first) and a sender,
/// both shell command templates over `{file}`, `{out}`, `{port}`,
/// `{sock}`, `{size}`, `{n128k}` and `{ferry}`.
struct Mover {
    name: &'static str,
    receiver: Option<String>,
    sender: String,
    /// A program this needs on PATH (besides ferry and sh).
    needs: Option<&'static str>,
}

fn mover(name: &'static str, receiver: Option<&str>, sender: &str) -> Mover {
    Mover {
        name,
        receiver: receiver.map(str::to_string),
        sender: sender.to_string(),
        needs: None,
    }
}

fn needing(mut m: Mover, prog: &'static str) -> Mover {
    m.needs = Some(prog);
    m
}

/// A target: `ferry` must reach `ratio` × `base`'s speed (or, with
/// `cpu`, at most `ratio` × its CPU per GiB).
struct Goal {
    ferry: &'static str,
    base: &'static str,
    ratio: f64,
    cpu: bool,
}

struct Scenario {
    name: &'static str,
    what: &'static str,
    listen: Listen,
    movers: Vec<Mover>,
    goals: Vec<Goal>,
}

const TCP_SINK: &str = "{ferry} pipe tcp-listen:127.0.0.1:{port} /dev/null";
const TTCP_SINK: &str = "{ferry} ttcp -r -s -l 131072 --io splice -p {port}";
const TTCP_TX: &str = "{ferry} ttcp -t -s -l 131072 -n {n128k} -p {port}";
const READER: &str = "dd of=/dev/null bs=1M status=none";
/// The two network namespaces of the veth scenario, and the receiver's
/// address there.
const NS_TX: &str = "ferry-bench-a";
const NS_RX: &str = "ferry-bench-b";
const RX_ADDR: &str = "10.251.0.2";

fn scenarios() -> Vec<Scenario> {
    let ttcp = |mode: &str| format!("{TTCP_TX} --io {mode} 127.0.0.1");
    let veth_rx = format!("ip netns exec {NS_RX} {TTCP_SINK}");
    let veth_tx = |mode: &str| format!("ip netns exec {NS_TX} {TTCP_TX} --io {mode} {RX_ADDR}");
    let goal = |ferry, base, ratio| Goal {
        ferry,
        base,
        ratio,
        cpu: false,
    };
    vec![
        Scenario {
            name: "file-tcp",
            what: "a cached file sent over loopback TCP (one sink for all: ferry pipe tcp-listen: /dev/null)",
            listen: Listen::Tcp(None),
            movers: vec![
                mover("ferry pipe", Some(TCP_SINK), "{ferry} pipe {file} tcp:127.0.0.1:{port}"),
                mover(
                    "ferry ttcp --io sendfile",
                    Some(TCP_SINK),
                    "{ferry} ttcp -t --io sendfile -p {port} 127.0.0.1 < {file} 2>/dev/null",
                ),
                needing(
                    mover("socat", Some(TCP_SINK), "socat -u FILE:{file} TCP:127.0.0.1:{port}"),
                    "socat",
                ),
                needing(
                    mover(
                        "socat -b 131072",
                        Some(TCP_SINK),
                        "socat -b 131072 -u FILE:{file} TCP:127.0.0.1:{port}",
                    ),
                    "socat",
                ),
            ],
            goals: vec![
                goal("ferry pipe", "socat", 3.0),
                goal("ferry pipe", "socat -b 131072", 1.5),
                Goal {
                    ferry: "ferry pipe",
                    base: "socat",
                    ratio: 0.5,
                    cpu: true,
                },
            ],
        },
        Scenario {
            name: "mem-tcp",
            what: "memory sent over loopback TCP in 128 KiB buffers (ttcp -s; iperf3 -l 128K)",
            listen: Listen::Tcp(None),
            movers: vec![
                mover("ttcp read-write", Some(TTCP_SINK), &ttcp("read-write")),
                mover("ttcp exchange", Some(TTCP_SINK), &ttcp("exchange")),
                mover("ttcp splice", Some(TTCP_SINK), &ttcp("splice")),
                mover("ttcp sendfile", Some(TTCP_SINK), &ttcp("sendfile")),
                needing(
                    mover(
                        "iperf3 -l 128K",
                        Some("iperf3 -s -1 -p {port}"),
                        "iperf3 -c 127.0.0.1 -p {port} -n {size} -l 128K",
                    ),
                    "iperf3",
                ),
            ],
            goals: vec![
                goal("ttcp exchange", "ttcp read-write", 1.2),
                goal("ttcp exchange", "iperf3 -l 128K", 1.0),
            ],
        },
        Scenario {
            name: "cases",
            what: "Roadrunner's four cases: a cached file to loopback TCP with channel parameters imposed (ferry pipe)",
            listen: Listen::Tcp(None),
            movers: vec![
                mover("case 1 (128K var → 128K var)", Some(TCP_SINK),
                    "{ferry} pipe --in-block 131072 --block 131072 {file} tcp:127.0.0.1:{port}"),
                mover("case 2 (1M var → 64K var)", Some(TCP_SINK),
                    "{ferry} pipe --in-block 1048576 --block 65536 {file} tcp:127.0.0.1:{port}"),
                mover("case 3 (1M fixed → 64K fixed)", Some(TCP_SINK),
                    "{ferry} pipe --in-fixed 1048576 --fixed 65536 {file} tcp:127.0.0.1:{port}"),
                mover("case 4 (4K fixed → 128K fixed)", Some(TCP_SINK),
                    "{ferry} pipe --in-fixed 4096 --fixed 131072 {file} tcp:127.0.0.1:{port}"),
                mover("kernel path (no parameters imposed)", Some(TCP_SINK),
                    "{ferry} pipe {file} tcp:127.0.0.1:{port}"),
            ],
            goals: vec![],
        },
        Scenario {
            name: "file-unix",
            what: "a cached file sent over a Unix stream socket (one sink: ferry pipe unix-listen: /dev/null)",
            listen: Listen::Unix,
            movers: vec![
                mover("ferry pipe", Some("{ferry} pipe unix-listen:{sock} /dev/null"),
                    "{ferry} pipe {file} unix:{sock}"),
                needing(mover("socat", Some("{ferry} pipe unix-listen:{sock} /dev/null"),
                    "socat -u FILE:{file} UNIX-CONNECT:{sock}"), "socat"),
                needing(mover("socat -b 131072", Some("{ferry} pipe unix-listen:{sock} /dev/null"),
                    "socat -b 131072 -u FILE:{file} UNIX-CONNECT:{sock}"), "socat"),
            ],
            goals: vec![],
        },
        Scenario {
            name: "file-pipe",
            what: "a cached file into a pipe read by dd bs=1M (the same reader for all; CPU counts the reader too)",
            listen: Listen::None,
            movers: vec![
                mover("ferry pipe (splice)", None, &format!("{{ferry}} pipe {{file}} - | {READER}")),
                mover("ferry cat", None, &format!("{{ferry}} cat {{file}} | {READER}")),
                mover("cat", None, &format!("cat {{file}} | {READER}")),
                mover("dd bs=128K (write→read)", None,
                    &format!("dd if={{file}} bs=128K status=none | {READER}")),
            ],
            goals: vec![goal("ferry pipe (splice)", "dd bs=128K (write→read)", 2.0)],
        },
        Scenario {
            name: "file-file",
            what: "a cached file copied to a new file",
            listen: Listen::None,
            movers: vec![
                mover("ferry pipe", None, "{ferry} pipe {file} {out}"),
                mover("cat", None, "cat {file} > {out}"),
                mover("dd bs=128K", None, "dd if={file} of={out} bs=128K status=none"),
            ],
            goals: vec![],
        },
        Scenario {
            name: "ftp",
            what: "a cached file to a new file across loopback TCP (each mover on both ends)",
            listen: Listen::Tcp(None),
            movers: vec![
                mover(
                    "ferry pipe → ferry pipe",
                    Some("{ferry} pipe tcp-listen:127.0.0.1:{port} {out}"),
                    "{ferry} pipe {file} tcp:127.0.0.1:{port}",
                ),
                needing(
                    mover(
                        "socat → socat",
                        Some("socat -u TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr OPEN:{out},creat,trunc"),
                        "socat -u FILE:{file} TCP:127.0.0.1:{port}",
                    ),
                    "socat",
                ),
                needing(
                    mover(
                        "socat -b 131072 → socat -b 131072",
                        Some("socat -b 131072 -u TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr OPEN:{out},creat,trunc"),
                        "socat -b 131072 -u FILE:{file} TCP:127.0.0.1:{port}",
                    ),
                    "socat",
                ),
            ],
            goals: vec![],
        },
        Scenario {
            name: "veth",
            what: "memory sent over TCP between two network namespaces joined by a veth pair (128 KiB buffers)",
            listen: Listen::Tcp(Some(NS_RX)),
            movers: vec![
                mover("ttcp read-write", Some(&veth_rx), &veth_tx("read-write")),
                mover("ttcp exchange", Some(&veth_rx), &veth_tx("exchange")),
                mover("ttcp splice", Some(&veth_rx), &veth_tx("splice")),
                needing(mover("iperf3 -l 128K",
                    Some(&format!("ip netns exec {NS_RX} iperf3 -s -1 -p {{port}}")),
                    &format!("ip netns exec {NS_TX} iperf3 -c {RX_ADDR} -p {{port}} -n {{size}} -l 128K")),
                    "iperf3"),
            ],
            goals: vec![goal("ttcp exchange", "ttcp read-write", 1.2)],
        },
    ]
}

/// What one run measured.
struct Sample {
    wall: Duration,
    cpu: Duration,
}

struct Ctx<'a> {
    ferry: String,
    file: &'a Path,
    out: PathBuf,
    sock: PathBuf,
    size: u64,
}

impl Ctx<'_> {
    fn fill(&self, template: &str, port: u16) -> String {
        template
            .replace("{ferry}", &self.ferry)
            .replace("{file}", &self.file.to_string_lossy())
            .replace("{out}", &self.out.to_string_lossy())
            .replace("{sock}", &self.sock.to_string_lossy())
            .replace("{port}", &port.to_string())
            .replace("{size}", &self.size.to_string())
            .replace("{n128k}", &(self.size / 131072).max(1).to_string())
    }
}

fn sh(cmd: &str) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(cmd);
    c
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

/// Waits until something listens on `port` (in namespace `ns`), as
/// /proc/net/tcp{,6} show it: a probe connection would be the one
/// connection the receiver takes.
fn wait_tcp(port: u16, ns: Option<&str>, rx: &mut Child) -> Result<(), String> {
    let want = format!(":{port:04X} ");
    for _ in 0..1000 {
        let mut text = String::new();
        for f in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let t = match ns {
                None => std::fs::read_to_string(f).unwrap_or_default(),
                Some(ns) => Command::new("ip")
                    .args(["netns", "exec", ns, "cat", f])
                    .output()
                    .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                    .unwrap_or_default(),
            };
            text.push_str(&t);
        }
        if text.lines().any(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|a| a.ends_with(want.trim_end()))
                && l.split_whitespace().nth(3) == Some("0A")
        }) {
            return Ok(());
        }
        if let Ok(Some(st)) = rx.try_wait() {
            return Err(format!("the receiver ended before listening ({st})"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Err(format!("nothing listened on port {port}"))
}

fn cpu_now() -> Result<Duration, String> {
    let (u, s) = ferry::children_cpu_time().map_err(|e| e.to_string())?;
    Ok(u + s)
}

/// One run of `m`: receiver up, input warmed, sender timed until the
/// receiver has everything; CPU is the sender's (it is waited for first).
fn run_once(
    sc: &Scenario,
    m: &Mover,
    ctx: &Ctx<'_>,
    input: &mut std::fs::File,
) -> Result<Sample, String> {
    let port = free_port()?;
    let _ = std::fs::remove_file(&ctx.sock);
    let _ = std::fs::remove_file(&ctx.out);
    warm(input)?;
    let mut rx = match &m.receiver {
        Some(r) => {
            let mut c = sh(&ctx.fill(r, port))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("receiver: {e}"))?;
            match sc.listen {
                Listen::Tcp(ns) => wait_tcp(port, ns, &mut c)?,
                Listen::Unix => {
                    let mut n = 0;
                    while !ctx.sock.exists() {
                        n += 1;
                        if n > 2000 {
                            return Err("the receiver never made its socket".into());
                        }
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
                Listen::None => {}
            }
            Some(c)
        }
        None => None,
    };
    let cpu0 = cpu_now()?;
    let t0 = Instant::now();
    let tx = sh(&ctx.fill(&m.sender, port))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("sender: {e}"))?;
    let cpu = cpu_now()?.saturating_sub(cpu0);
    if !tx.status.success() {
        if let Some(mut c) = rx.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        return Err(format!(
            "sender {}: {}",
            tx.status,
            String::from_utf8_lossy(&tx.stderr).trim()
        ));
    }
    if let Some(c) = rx.take() {
        let o = wait_bounded(c, Duration::from_secs(120))?;
        if !o.status.success() {
            return Err(format!(
                "receiver {}: {}",
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
    }
    let wall = t0.elapsed();
    if matches!(sc.name, "file-file" | "ftp") {
        let got = std::fs::metadata(&ctx.out)
            .map_err(|e| e.to_string())?
            .len();
        if got != ctx.size {
            return Err(format!("the copy has {got} bytes, not {}", ctx.size));
        }
    }
    Ok(Sample { wall, cpu })
}

/// Waits for `c` at most `limit`, killing it past that (an error).
fn wait_bounded(mut c: Child, limit: Duration) -> Result<std::process::Output, String> {
    let end = Instant::now() + limit;
    loop {
        match c.try_wait() {
            Ok(Some(_)) => return c.wait_with_output().map_err(|e| e.to_string()),
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(1)),
            Ok(None) => {
                let _ = c.kill();
                let _ = c.wait();
                return Err(format!("the receiver did not end within {limit:?}"));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Sets up the veth pair between two namespaces; `Err` says why not.
fn veth_up() -> Result<(), String> {
    veth_down();
    let steps: [&[&str]; 8] = [
        &["netns", "add", NS_TX],
        &["netns", "add", NS_RX],
        &[
            "link", "add", "fbveth-a", "netns", NS_TX, "type", "veth", "peer", "name", "fbveth-b",
            "netns", NS_RX,
        ],
        &[
            "-n",
            NS_TX,
            "addr",
            "add",
            "10.251.0.1/24",
            "dev",
            "fbveth-a",
        ],
        &[
            "-n",
            NS_RX,
            "addr",
            "add",
            "10.251.0.2/24",
            "dev",
            "fbveth-b",
        ],
        &["-n", NS_TX, "link", "set", "fbveth-a", "up"],
        &["-n", NS_RX, "link", "set", "fbveth-b", "up"],
        &["-n", NS_RX, "link", "set", "lo", "up"],
    ];
    for s in steps {
        let o = Command::new("ip")
            .args(s)
            .output()
            .map_err(|e| format!("ip: {e}"))?;
        if !o.status.success() {
            let e = String::from_utf8_lossy(&o.stderr).trim().to_string();
            veth_down();
            return Err(format!("ip {}: {e}", s.join(" ")));
        }
    }
    Ok(())
}

fn veth_down() {
    for ns in [NS_TX, NS_RX] {
        let _ = Command::new("ip")
            .args(["netns", "del", ns])
            .stderr(Stdio::null())
            .status();
    }
}

pub fn run(a: StreamArgs) -> Result<(), String> {
    a.c.check("stream")?;
    let size = if a.c.quick {
        a.size.min(16 << 20)
    } else {
        a.size
    };
    let ferry = crate::workspace::ferry(a.c.json)?;
    if !a.c.quick && !a.no_install {
        let need: Vec<&str> = ["socat", "iperf3"]
            .into_iter()
            .filter(|p| super::asf::which(&[p]).is_none())
            .collect();
        if let Err(why) = crate::peers::install(&need, a.c.json) {
            if !a.c.json {
                eprintln!("  peers not installed: {why}");
            }
        }
    }
    let dir = a.c.dir.clone().unwrap_or_else(std::env::temp_dir);
    let input = make_file(size, Some(&dir), Content::Random, "stream")?;
    super::files::lay_out(&input.path, a.layout)?;
    let mut f = std::fs::File::open(&input.path).map_err(|e| e.to_string())?;
    let pid = std::process::id();
    let ctx = Ctx {
        ferry,
        file: &input.path,
        out: dir.join(format!("ferry-bench-stream-out-{pid}")),
        sock: dir.join(format!("ferry-bench-stream-{pid}.sock")),
        size,
    };
    let runs = if a.c.quick { 5 } else { a.c.runs };
    println!(
        "ferry-bench stream — {} per run, medians of {runs} interleaved runs{}",
        human(size),
        if a.c.quick {
            " (--quick: figures mean nothing)"
        } else {
            ""
        }
    );
    for sc in scenarios() {
        if !a.only.is_empty() && !a.only.iter().any(|o| o == sc.name) {
            continue;
        }
        if sc.name == "veth" {
            if let Err(why) = veth_up() {
                print!("\n### {}: left out — {why}\n", sc.name);
                continue;
            }
        }
        let mut movers: Vec<&Mover> = Vec::new();
        let mut missing = Vec::new();
        for m in &sc.movers {
            match m.needs {
                Some(p) if super::asf::which(&[p]).is_none() => {
                    missing.push(format!("{} ({p} not installed)", m.name))
                }
                _ => movers.push(m),
            }
        }
        if !a.c.json {
            eprintln!("  measuring {} …", sc.name);
        }
        let mut samples: Vec<Vec<Sample>> = movers.iter().map(|_| Vec::new()).collect();
        let r = (|| -> Result<(), String> {
            for r in 0..runs {
                for k in 0..movers.len() {
                    let i = (r + k) % movers.len();
                    let s = run_once(&sc, movers[i], &ctx, &mut f)
                        .map_err(|e| format!("{} / {}: {e}", sc.name, movers[i].name))?;
                    samples[i].push(s);
                }
            }
            Ok(())
        })();
        if sc.name == "veth" {
            veth_down();
        }
        r?;
        print!("{}", table(&sc, &movers, &samples, &missing, size, runs));
    }
    let _ = std::fs::remove_file(&ctx.out);
    let _ = std::fs::remove_file(&ctx.sock);
    Ok(())
}

fn human(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 {
        format!("{:.0} MiB", n as f64 / (1u64 << 20) as f64)
    } else {
        format!("{n} bytes")
    }
}

fn table(
    sc: &Scenario,
    movers: &[&Mover],
    samples: &[Vec<Sample>],
    missing: &[String],
    size: u64,
    runs: usize,
) -> String {
    let gib = size as f64 / (1u64 << 30) as f64;
    let med = |i: usize| -> (f64, f64) {
        let w: Vec<f64> = samples[i].iter().map(|s| s.wall.as_secs_f64()).collect();
        let c: Vec<f64> = samples[i].iter().map(|s| s.cpu.as_secs_f64()).collect();
        (median(&w), median(&c) / gib)
    };
    let mut s = format!(
        "\n### {} — {}\n\n| mover | wall s | GB/s | CPU s per GiB (sender) |\n|---|---|---|---|\n",
        sc.name, sc.what
    );
    for (i, m) in movers.iter().enumerate() {
        let (w, c) = med(i);
        s.push_str(&format!(
            "| {} | {:.3} | {:.2} | {:.3} |\n",
            m.name,
            w,
            size as f64 / w / 1e9,
            c
        ));
    }
    for m in missing {
        s.push_str(&format!("\nleft out: {m}\n"));
    }
    let idx = |name: &str| movers.iter().position(|m| m.name == name);
    for g in &sc.goals {
        let (Some(fi), Some(bi)) = (idx(g.ferry), idx(g.base)) else {
            s.push_str(&format!(
                "\ntarget {} vs {}: not measured (a side is missing)\n",
                g.ferry, g.base
            ));
            continue;
        };
        let ((fw, fc), (bw, bc)) = (med(fi), med(bi));
        if g.cpu {
            let r = fc / bc;
            s.push_str(&format!(
                "\ntarget: {} CPU per GiB ≤ {:.1}× {}'s: {:.2}× — {}\n",
                g.ferry,
                g.ratio,
                g.base,
                r,
                if r <= g.ratio { "met" } else { "MISSED" }
            ));
        } else {
            let r = bw / fw;
            s.push_str(&format!(
                "\ntarget: {} ≥ {:.1}× {}: {:.2}× — {}\n",
                g.ferry,
                g.ratio,
                g.base,
                r,
                if r >= g.ratio { "met" } else { "MISSED" }
            ));
        }
    }
    let _ = runs;
    s
}
