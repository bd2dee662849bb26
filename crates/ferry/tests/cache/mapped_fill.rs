//! `Fill::Map` holds a read lease on the files it maps: a program that
//! opens such a file for writing without blocking (GNU `truncate` does)
//! is refused once with `EAGAIN` while ferry copies its windows aside,
//! and gets through when it tries again; the cache then serves the new
//! bytes and the old reader keeps the old ones. This is why `Fill::Read`
//! stays the default.

use ferry::cache::{CacheConfig, FileCache, Fill};
use std::process::Command;
use std::time::Duration;

#[test]
#[cfg_attr(miri, ignore = "leases, real files and processes")]
fn a_non_blocking_writer_is_refused_once_then_gets_through() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    let bytes: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&p, &bytes).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let c = FileCache::new(
        CacheConfig::default()
            .with_extent(64 << 10)
            .with_settle(Duration::from_millis(50))
            .with_fill(Fill::Map),
    )
    .unwrap();
    let old = c.read(&p, ..).unwrap();
    assert_eq!(old, &bytes[..]);
    let truncate = || {
        Command::new("truncate")
            .args(["-s", "1000"])
            .arg(&p)
            .env("LC_ALL", "C")
            .output()
            .unwrap()
    };
    let first = truncate();
    assert!(
        !first.status.success(),
        "the lease let a non-blocking open through"
    );
    assert!(
        String::from_utf8_lossy(&first.stderr).contains("Resource temporarily unavailable"),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    // The break goes on in ferry's lease thread; the next try gets through.
    let mut ok = false;
    for _ in 0..100 {
        if truncate().status.success() {
            ok = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(ok, "truncate never got through");
    assert_eq!(c.read(&p, ..).unwrap(), &bytes[..1000]);
    assert_eq!(old, &bytes[..]);
}
