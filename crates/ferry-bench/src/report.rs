//! Result tables: medians side by side, ratios, and whether each target
//! was met.

use std::fmt::Write;

/// How a row's per-unit seconds are shown.
#[derive(Clone, Copy, Debug)]
pub enum Unit {
    /// Seconds per operation, shown as nanoseconds per operation.
    NsPerOp,
    /// Seconds per byte, shown as GB/s.
    GBps,
    /// CPU seconds (user + system, every thread) per byte, shown per GiB.
    CpuPerGiB,
    /// Seconds per request, shown as requests per second.
    PerRequest,
    /// CPU seconds (user + system, the server's whole process tree) per
    /// request, shown in microseconds.
    CpuPerRequest,
}

impl Unit {
    pub fn show(self, secs_per_unit: f64) -> String {
        match self {
            Unit::NsPerOp => format!("{:.1} ns/op", secs_per_unit * 1e9),
            Unit::GBps => format!("{:.2} GB/s", 1.0 / secs_per_unit / 1e9),
            Unit::CpuPerGiB => format!("{:.3} s CPU/GiB", secs_per_unit * (1u64 << 30) as f64),
            Unit::PerRequest => format!("{:.0} req/s", 1.0 / secs_per_unit),
            Unit::CpuPerRequest => format!("{:.2} µs CPU/req", secs_per_unit * 1e6),
        }
    }
}

/// What a row must show.
#[derive(Clone, Debug)]
pub enum Target {
    /// ferry's speed ÷ the baseline's ≥ this.
    MinRatio(f64),
    /// ferry's median ≤ this many nanoseconds per operation.
    MaxNs(f64),
    /// Reported only.
    None,
}

#[derive(Clone, Debug)]
pub struct Row {
    pub what: String,
    pub ferry_name: String,
    pub ferry: f64,
    pub baseline_name: String,
    pub baseline: Option<f64>,
    pub unit: Unit,
    pub target: Target,
    pub runs: usize,
}

impl Row {
    /// ferry's speed relative to the baseline (>1: ferry is faster).
    pub fn ratio(&self) -> Option<f64> {
        self.baseline.map(|b| b / self.ferry)
    }

    pub fn met(&self) -> Option<bool> {
        match self.target {
            Target::MinRatio(r) => self.ratio().map(|x| x >= r),
            Target::MaxNs(ns) => Some(self.ferry * 1e9 <= ns),
            Target::None => None,
        }
    }

    fn target_text(&self) -> String {
        match self.target {
            Target::MinRatio(r) => format!("≥ {r:.2}×"),
            Target::MaxNs(ns) => format!("≤ {ns:.0} ns"),
            Target::None => "—".into(),
        }
    }
}

pub fn table(title: &str, rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{title}");
    let _ = writeln!(
        s,
        "| comparison | ferry | median | baseline | median | ferry speed-up | target | met |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
    for r in rows {
        let base = r.baseline.map_or("—".into(), |b| r.unit.show(b));
        let ratio = r.ratio().map_or("—".into(), |x| format!("{x:.2}×"));
        let met = match r.met() {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "—",
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.what,
            r.ferry_name,
            r.unit.show(r.ferry),
            r.baseline_name,
            base,
            ratio,
            r.target_text(),
            met
        );
    }
    s
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

pub(super) fn json_num(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:e}"),
        _ => "null".into(),
    }
}

pub fn json(rows: &[Row]) -> String {
    let items: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{{\"comparison\":{},\"ferry\":{},\"ferry_secs_per_unit\":{},\"baseline\":{},\
                 \"baseline_secs_per_unit\":{},\"unit\":{},\"speedup\":{},\"target\":{},\"met\":{},\"runs\":{}}}",
                json_str(&r.what),
                json_str(&r.ferry_name),
                json_num(Some(r.ferry)),
                json_str(&r.baseline_name),
                json_num(r.baseline),
                json_str(match r.unit {
                    Unit::NsPerOp => "op",
                    Unit::GBps => "byte",
                    Unit::CpuPerGiB => "cpu-byte",
                    Unit::PerRequest => "request",
                    Unit::CpuPerRequest => "cpu-request",
                }),
                json_num(r.ratio()),
                json_str(&r.target_text()),
                r.met().map_or("null".into(), |m| m.to_string()),
                r.runs
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ferry: f64, base: Option<f64>, target: Target) -> Row {
        Row {
            what: "x \"q\"".into(),
            ferry_name: "f".into(),
            ferry,
            baseline_name: "b".into(),
            baseline: base,
            unit: Unit::NsPerOp,
            target,
            runs: 5,
        }
    }

    #[test]
    fn ratio_and_targets() {
        let r = row(1e-9, Some(2e-9), Target::MinRatio(1.5));
        assert_eq!(r.ratio(), Some(2.0));
        assert_eq!(r.met(), Some(true));
        assert_eq!(
            row(3e-9, Some(2e-9), Target::MinRatio(1.0)).met(),
            Some(false)
        );
        assert_eq!(row(3e-6, None, Target::MaxNs(2000.0)).met(), Some(false));
        assert_eq!(row(1e-6, None, Target::MaxNs(2000.0)).met(), Some(true));
        assert_eq!(row(1e-6, None, Target::None).met(), None);
    }

    #[test]
    fn table_and_json_show_every_row() {
        let rows = [
            row(1e-9, Some(2e-9), Target::MinRatio(1.5)),
            row(3e-9, None, Target::None),
        ];
        let t = table("T", &rows);
        assert!(t.contains("| 2.00× |") && t.contains("| yes |"), "{t}");
        let j = json(&rows);
        assert!(
            j.starts_with("[{")
                && j.contains("\\\"q\\\"")
                && j.contains("\"baseline_secs_per_unit\":null"),
            "{j}"
        );
        assert!(j.contains("\"speedup\":2e0"), "{j}");
    }

    #[test]
    fn units_show() {
        assert_eq!(Unit::NsPerOp.show(12.34e-9), "12.3 ns/op");
        assert_eq!(Unit::GBps.show(1.0 / 5e9), "5.00 GB/s");
    }
}
