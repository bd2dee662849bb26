//! A lookup that uses the caller's look at the file (`FileCache::look`,
//! `read_looked`): a file changed between the look and the lookup is read
//! as it is now, and the cache keeps no bytes under the look's stale
//! stamp for later lookups to find.

use ferry::cache::{CacheConfig, FileCache};
use std::time::Duration;

#[test]
fn a_file_changed_after_the_look_is_read_as_it_is_now() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, b"first state, eighteen").unwrap();
    let cache =
        FileCache::new(CacheConfig::default().with_settle(Duration::from_millis(10))).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let looked = cache.look(&f).unwrap();
    assert_eq!(looked.metadata().len(), 21);
    // Another state of the same size, written in place after the look.
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&path, b"other state, nineteen").unwrap();
    let got = cache.read_looked(&looked, &path, ..).unwrap();
    assert_eq!(got, &b"other state, nineteen"[..]);
    // A later lookup, and one through a fresh look, agree.
    assert_eq!(
        cache.read_file(&f, &path, ..).unwrap(),
        &b"other state, nineteen"[..]
    );
    let again = cache.look(&f).unwrap();
    assert_eq!(
        cache.read_looked(&again, &path, 6..11).unwrap(),
        &b"state"[..]
    );
}

#[test]
fn a_look_at_a_directory_is_refused_by_the_lookup() {
    let dir = tempfile::tempdir().unwrap();
    let cache = FileCache::new(CacheConfig::default()).unwrap();
    let d = std::fs::File::open(dir.path()).unwrap();
    let looked = cache.look(&d).unwrap();
    assert!(looked.metadata().is_dir());
    let e = cache.read_looked(&looked, dir.path(), ..).unwrap_err();
    assert!(
        e.to_string().contains(&dir.path().display().to_string()),
        "{e}"
    );
}
