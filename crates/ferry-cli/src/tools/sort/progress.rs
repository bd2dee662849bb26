//! A progress bar on standard error while a large input is sorted, when
//! standard error is a terminal (GNU sort has none; nothing changes for a
//! log or a pipe). The bar's first half is the input read and sorted into
//! pieces, its second half the output written.

use std::io::IsTerminal;

/// Inputs smaller than this sort without a bar (they take about a
/// second). `FERRY_SORT_PROGRESS_MIN` (bytes) changes it, for tests.
const MIN: u64 = 256 << 20;

/// The bar, or nothing.
pub struct Progress(Option<indicatif::ProgressBar>);

impl Progress {
    /// A bar for `files` if their regular files total at least the
    /// threshold and standard error is a terminal.
    pub fn new(files: &[std::ffi::OsString]) -> Progress {
        let min = std::env::var("FERRY_SORT_PROGRESS_MIN")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(MIN);
        let size: u64 = files
            .iter()
            .filter(|f| *f != "-")
            .filter_map(|f| std::fs::metadata(f).ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum();
        if size < min || !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = indicatif::ProgressBar::new(size.saturating_mul(2));
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "sort: {msg:8} [{wide_bar}] {percent:>3}% {eta}",
        ) {
            bar.set_style(style);
        }
        bar.set_message("sorting");
        Progress(Some(bar))
    }

    /// No bar.
    pub fn none() -> Progress {
        Progress(None)
    }

    /// `n` more input bytes sorted into pieces.
    pub fn sorted(&self, n: u64) {
        if let Some(b) = &self.0 {
            b.inc(n);
        }
    }

    /// The output begins (everything is read and sorted).
    pub fn writing(&self, what: &'static str) {
        if let Some(b) = &self.0 {
            b.set_position(b.length().unwrap_or(0) / 2);
            b.set_message(what);
        }
    }

    /// `n` more output bytes written.
    pub fn written(&self, n: u64) {
        if let Some(b) = &self.0 {
            b.inc(n);
        }
    }

    /// Removes the bar (done, or failed: a message follows on a clean
    /// line).
    pub fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}
