//! No panic may cross the C boundary: every `extern "C"` function of the
//! library runs its body inside `ffi_guard` (src/ffi.rs), which turns a
//! panic into the function's failure value and errno. This test reads the
//! sources and names any function that does not, so a new entry point
//! cannot forget it.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, subdirectories too.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().and_then(|e| e.to_str()) == Some("rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_extern_c_function_is_guarded() {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut checked = 0;
    let mut missing = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("source");
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let l = lines[i].trim_start();
            let is_fn = (l.starts_with("pub extern \"C\" fn ")
                || l.starts_with("extern \"C\" fn "))
                && !l.ends_with(';');
            if !is_fn {
                i += 1;
                continue;
            }
            let name = l
                .split("fn ")
                .nth(1)
                .and_then(|r| r.split('(').next())
                .unwrap_or("?")
                .to_string();
            // The body starts after the first `{` (a signature has none);
            // its first statement, comments skipped, must be the guard.
            let rest: Vec<&str> = lines[i..lines.len().min(i + 40)].to_vec();
            let joined = rest.join("\n");
            let after = joined.split_once('{').map_or("", |(_, b)| b);
            let body = after
                .lines()
                .map(|l| l.trim())
                .find(|l| !l.is_empty() && !l.starts_with("//"))
                .unwrap_or("");
            if !(body.starts_with("ffi_guard(") || body.starts_with("crate::ffi::ffi_guard(")) {
                missing.push(format!("{}: {name}", path.display()));
            }
            checked += 1;
            i += 1;
        }
    }
    assert!(checked > 100, "found only {checked} extern \"C\" functions");
    assert!(
        missing.is_empty(),
        "extern \"C\" functions whose body is not inside ffi_guard:\n{}",
        missing.join("\n")
    );
}
