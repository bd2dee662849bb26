//! `--progress`: a bar on a terminal, or lines in a log.

use std::io;

/// Progress on standard error: a bar on a terminal; when asked for with
/// standard error elsewhere (a log), a line at every tenth and at the end.
pub enum Progress {
    None,
    Bar(indicatif::ProgressBar),
    Text {
        total: u64,
        done: std::sync::atomic::AtomicU64,
        started: std::time::Instant,
    },
}

impl Progress {
    pub fn new(asked: bool, size: u64) -> Progress {
        use std::io::IsTerminal;
        // (Asked about the terminal only for large copies: a tree of small
        // files is not slowed by an ioctl per file.)
        if (asked || size >= 256 << 20) && io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(size);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bytes}/{total_bytes} [{wide_bar}] {bytes_per_sec} {eta}",
            ) {
                bar.set_style(style);
            }
            return Progress::Bar(bar);
        }
        if asked {
            return Progress::Text {
                total: size,
                done: std::sync::atomic::AtomicU64::new(0),
                started: std::time::Instant::now(),
            };
        }
        Progress::None
    }

    pub fn add(&self, n: u64) {
        match self {
            Progress::None => {}
            Progress::Bar(b) => b.inc(n),
            Progress::Text { total, done, .. } => {
                let before = done.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                let after = before + n;
                let t = (*total).max(1);
                if before * 10 / t != after * 10 / t && after < *total {
                    eprintln!("ferry cp: {}% ({after} of {total} bytes)", after * 100 / t);
                }
            }
        }
    }

    pub fn finish(&self) {
        match self {
            Progress::None => {}
            Progress::Bar(b) => b.finish(),
            Progress::Text { total, started, .. } => {
                let secs = started.elapsed().as_secs_f64();
                eprintln!(
                    "ferry cp: 100% ({total} bytes in {secs:.2} s, {:.0} MB/s)",
                    *total as f64 / secs.max(1e-9) / 1e6
                );
            }
        }
    }
}
