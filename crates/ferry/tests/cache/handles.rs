//! `CachedFile`: handles whose lookups ask the file nothing while ferry's
//! lease and watch on it hold, changed behind by real writers — this
//! process, `sh`, GNU `truncate`, `touch`, `mv` — and by the one change a
//! lease does not hold back, a read-only open with `O_TRUNC`.

use ferry::cache::{CacheConfig, CachedFile, FileCache};
use std::io;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn cache() -> FileCache {
    FileCache::new(
        CacheConfig::default()
            .with_budget(8 << 20)
            .with_extent(64 << 10),
    )
    .unwrap()
}

fn run(cmd: &str, args: &[&str]) {
    let st = Command::new(cmd).args(args).status().unwrap();
    assert!(st.success(), "{cmd} {args:?}: {st}");
}

/// Waits (at most 5 s) for the handle to disarm: the watch thread's
/// notice is asynchronous.
fn disarms(h: &CachedFile) -> bool {
    let t = Instant::now();
    while h.is_armed() {
        if t.elapsed() > Duration::from_secs(5) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

fn content(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn armed_handle(cache: &FileCache, path: &Path, bytes: &[u8]) -> CachedFile {
    std::fs::write(path, bytes).unwrap();
    let h = cache.open(path).unwrap();
    assert!(h.is_armed(), "a file no one writes arms its handle");
    assert_eq!(h.read(..).unwrap(), bytes);
    assert_eq!(h.size().unwrap(), bytes.len() as u64);
    h
}

/// A writer of every kind that opens the file for writing — this
/// process, a shell redirection, GNU `truncate`, `dd conv=notrunc`, the
/// cache's own `write` — is held back until the handle is disarmed: the
/// first lookup after the writer's command returned sees its bytes, with
/// no waiting.
#[test]
#[cfg_attr(miri, ignore = "leases, inotify and processes")]
fn every_writer_disarms_a_handle_before_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let p = path.to_str().unwrap();
    let cache = cache();
    let old = content(200_000, 1);

    let h = armed_handle(&cache, &path, &old);
    std::fs::write(&path, b"rewritten").unwrap();
    assert!(!h.is_armed());
    assert_eq!(h.read(..).unwrap(), &b"rewritten"[..]);

    let h = armed_handle(&cache, &path, &old);
    run("sh", &["-c", &format!("printf 'from sh' > '{p}'")]);
    assert!(!h.is_armed());
    assert_eq!(h.read(..).unwrap(), &b"from sh"[..]);

    // GNU truncate opens without blocking: the lease refuses it once
    // (EAGAIN, breaking the lease), as a lease does every such writer,
    // and lets its retry through.
    let h = armed_handle(&cache, &path, &old);
    let first = Command::new("truncate")
        .args(["-s", "1000", p])
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(
        !first.success(),
        "a lease refuses a non-blocking writer once"
    );
    assert_eq!(h.read(..).unwrap().copy_to_vec(), old);
    let t = Instant::now();
    while !Command::new("truncate")
        .args(["-s", "1000", p])
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
    {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "truncate never got through"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(!h.is_armed());
    assert_eq!(h.read(..).unwrap(), &old[..1000]);

    let h = armed_handle(&cache, &path, &old);
    run(
        "dd",
        &[
            "if=/dev/zero",
            &format!("of={p}"),
            "bs=10",
            "count=1",
            "seek=3",
            "conv=notrunc",
            "status=none",
        ],
    );
    assert!(!h.is_armed());
    let mut want = old.clone();
    want[30..40].fill(0);
    assert_eq!(h.read(..).unwrap().copy_to_vec(), want);

    let h = armed_handle(&cache, &path, &old);
    cache
        .write(&path, 5, ferry::Buf::from_static(b"through the cache"))
        .unwrap();
    assert!(!h.is_armed());
    assert_eq!(h.read(5..22).unwrap(), &b"through the cache"[..]);
}

/// A read-only open with `O_TRUNC` empties the file without breaking any
/// read lease: the watch sees it, and the handle disarms soon after;
/// lookups from then on see the empty file, and none ever sees bytes
/// other than the old ones or none.
#[test]
#[cfg_attr(miri, ignore = "leases, inotify and processes")]
fn a_read_only_truncating_open_disarms_a_handle_soon() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let cache = cache();
    let old = content(300_000, 2);
    let h = armed_handle(&cache, &path, &old);
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a plain open(2) of a NUL-terminated path; the descriptor is
    // closed just below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_TRUNC) };
    assert!(fd >= 0, "{}", io::Error::last_os_error());
    // SAFETY: `fd` was opened above and is closed once.
    unsafe { libc::close(fd) };
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    // Until the notice arrives a lookup gives the old bytes or nothing.
    let got = h.read(..).unwrap().copy_to_vec();
    assert!(got.is_empty() || got == old, "{} bytes", got.len());
    assert!(disarms(&h), "the watch never saw the truncation");
    assert!(h.read(..).unwrap().is_empty());
}

/// What the watch sees besides: `touch`, and another file renamed over
/// the path (the handle keeps reading the file it opened; a new handle
/// reads the new one).
#[test]
#[cfg_attr(miri, ignore = "leases, inotify and processes")]
fn touch_and_rename_over_disarm_a_handle() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let p = path.to_str().unwrap();
    let cache = cache();
    let old = content(70_000, 3);

    let h = armed_handle(&cache, &path, &old);
    run("touch", &[p]);
    assert!(disarms(&h));
    assert_eq!(h.read(..).unwrap().copy_to_vec(), old);

    let h = armed_handle(&cache, &path, &old);
    let other = dir.path().join("other");
    std::fs::write(&other, b"another file").unwrap();
    run("mv", &[other.to_str().unwrap(), p]);
    assert!(disarms(&h));
    assert_eq!(h.read(..).unwrap().copy_to_vec(), old, "the file it opened");
    assert_eq!(
        cache.open(&path).unwrap().read(..).unwrap(),
        &b"another file"[..]
    );
}

/// A file open for writing elsewhere cannot be leased: the handle is not
/// armed and reads as `read_file` does, taking the stamp each time, so
/// it sees every write at once.
#[test]
#[cfg_attr(miri, ignore = "leases and inotify")]
fn a_handle_that_cannot_be_leased_takes_the_stamp_each_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, b"one").unwrap();
    let w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    let cache = cache();
    let h = cache.open(&path).unwrap();
    assert!(!h.is_armed());
    assert_eq!(h.read(..).unwrap(), &b"one"[..]);
    std::os::unix::fs::FileExt::write_at(&w, b"two", 0).unwrap();
    // A second may pass before the stamp moves (a write in the same clock
    // tick as the first read): the settle rule re-reads meanwhile.
    assert_eq!(h.read(..).unwrap(), &b"two"[..]);
    drop(w);
    assert!(cache.open(&path).unwrap().is_armed());
}

/// Handles on one file from several threads, a writer rewriting it in
/// place now and then: a lookup after which the handle is still armed
/// gave exactly the version the handle first read (no writer opened the
/// file before the lookup ended), and after each write's return, the
/// handles opened before it are disarmed.
#[test]
#[cfg_attr(miri, ignore = "leases, inotify and threads")]
fn handles_on_many_threads_see_whole_versions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let cache = cache();
    let versions: Vec<Vec<u8>> = (0..6).map(|v| content(150_000, v)).collect();
    std::fs::write(&path, &versions[0]).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let h = cache.open(&path).unwrap();
                    let first = h.read(..).unwrap().copy_to_vec();
                    let armed_at_first = h.is_armed();
                    for _ in 0..50 {
                        let got = h.read(..).unwrap().copy_to_vec();
                        if armed_at_first && h.is_armed() {
                            assert_eq!(got, first, "an armed handle's version changed");
                            assert!(versions.contains(&got), "a mix of versions");
                        }
                    }
                }
            });
        }
        for v in &versions[1..] {
            std::thread::sleep(Duration::from_millis(20));
            let h = cache.open(&path).unwrap();
            let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            assert!(!h.is_armed(), "armed past a writer's open");
            std::io::Write::write_all(&mut w, v).unwrap();
            drop(w);
            assert_eq!(&h.read(..).unwrap().copy_to_vec(), v);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
}
