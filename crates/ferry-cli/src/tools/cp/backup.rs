//! Backup names as GNU's version control makes them: `NAME~` (simple, with
//! the suffix of `-S` or $SIMPLE_BACKUP_SUFFIX), `NAME.~N~` (numbered: one
//! more than the highest there is), or numbered only where numbered
//! backups already exist (existing).

use super::options::Backup;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The name the backup of `file` gets.
pub fn name(file: &Path, kind: Backup, suffix: &str) -> PathBuf {
    let simple = || {
        let mut s = file.as_os_str().to_owned();
        s.push(suffix);
        PathBuf::from(s)
    };
    match kind {
        Backup::None | Backup::Simple => simple(),
        Backup::Numbered | Backup::Existing => {
            let highest = highest_number(file);
            if kind == Backup::Existing && highest.is_none() {
                return simple();
            }
            let mut s = file.as_os_str().as_bytes().to_vec();
            s.extend_from_slice(format!(".~{}~", highest.unwrap_or(0) + 1).as_bytes());
            PathBuf::from(OsString::from_vec(s))
        }
    }
}

/// The highest N of the `BASE.~N~` beside `file`, if there is one.
fn highest_number(file: &Path) -> Option<u64> {
    let base = file.file_name()?.as_bytes();
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut best: Option<u64> = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let n = e.file_name();
        let n = n.as_bytes();
        let Some(rest) = n.strip_prefix(base).and_then(|r| r.strip_prefix(b".~")) else {
            continue;
        };
        let Some(digits) = rest.strip_suffix(b"~") else {
            continue;
        };
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) || digits[0] == b'0' {
            continue;
        }
        if let Some(v) = std::str::from_utf8(digits)
            .ok()
            .and_then(|d| d.parse::<u64>().ok())
        {
            best = Some(best.map_or(v, |b| b.max(v)));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_names_count_up_from_the_highest() {
        let d = tempfile::tempdir().expect("tempdir");
        let f = d.path().join("f");
        assert_eq!(name(&f, Backup::Simple, "~"), d.path().join("f~"));
        assert_eq!(name(&f, Backup::Existing, ".b"), d.path().join("f.b"));
        assert_eq!(name(&f, Backup::Numbered, "~"), d.path().join("f.~1~"));
        std::fs::write(d.path().join("f.~9~"), b"").expect("write");
        std::fs::write(d.path().join("f.~10~"), b"").expect("write");
        std::fs::write(d.path().join("ff.~40~"), b"").expect("write");
        assert_eq!(name(&f, Backup::Existing, "~"), d.path().join("f.~11~"));
    }
}
