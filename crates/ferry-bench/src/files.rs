//! Scratch input files for the benchmarks, and warming them.

use ferry::BufMut;
use std::fs::File;
use std::hint::black_box;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// A scratch file, removed on drop.
pub struct Scratch {
    pub path: PathBuf,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What a scratch file holds.
#[derive(Clone, Copy, Debug)]
pub enum Content {
    /// Pseudo-random bytes.
    Random,
    /// Text: lines of 20–100 printable bytes (about 60 on average).
    Text,
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// One MiB of the content, repeated to fill a file.
fn block(content: Content) -> Vec<u8> {
    let mut x = 0x2545F4914F6CDD1Du64;
    let mut b = Vec::with_capacity(1 << 20);
    match content {
        Content::Random => {
            while b.len() < 1 << 20 {
                b.extend_from_slice(&xorshift(&mut x).to_le_bytes());
            }
        }
        Content::Text => {
            while b.len() < 1 << 20 {
                let len = 20 + (xorshift(&mut x) % 81) as usize;
                for _ in 0..len {
                    let r = xorshift(&mut x);
                    b.push(if r.is_multiple_of(6) {
                        b' '
                    } else {
                        b'a' + (r % 26) as u8
                    });
                }
                b.push(b'\n');
            }
        }
    }
    b.truncate(1 << 20);
    b
}

/// Writes a scratch file of `size` bytes in `dir` (default: the temp dir).
pub fn make_file(
    size: u64,
    dir: Option<&Path>,
    content: Content,
    tag: &str,
) -> Result<Scratch, String> {
    let dir = dir.map_or_else(std::env::temp_dir, |d| d.to_path_buf());
    let path = dir.join(format!("ferry-bench-{tag}-{}.dat", std::process::id()));
    let scratch = Scratch { path: path.clone() };
    let mut f = File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let block = block(content);
    let mut left = size;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        f.write_all(&block[..n])
            .map_err(|e| format!("{}: {e}", path.display()))?;
        left -= n as u64;
    }
    f.sync_all()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(scratch)
}

/// Opens the scratch file and reads it through once, so it is in the page
/// cache right before a measurement.
pub fn open_warm(s: &Scratch) -> Result<File, String> {
    let mut f = File::open(&s.path).map_err(|e| format!("{}: {e}", s.path.display()))?;
    warm(&mut f)?;
    Ok(f)
}

/// Reads the whole file once so it is in the page cache right before a
/// measurement (this machine drops idle page cache within about a minute).
pub fn warm(f: &mut File) -> Result<(), String> {
    let mut buf = BufMut::with_capacity(1 << 20);
    buf.commit(1 << 20);
    f.rewind().map_err(|e| e.to_string())?;
    read_all(f, &mut buf)?;
    f.rewind().map_err(|e| e.to_string())
}

/// Reads `f` to its end into `buf` again and again; returns the bytes read.
pub fn read_all(f: &mut File, buf: &mut [u8]) -> Result<u64, String> {
    let mut total = 0u64;
    loop {
        let n = f.read(buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(total);
        }
        total += n as u64;
        black_box(&buf);
    }
}

/// Writes `bytes` bytes into a scratch file in `dir` and removes it, so the
/// memory a measured run is about to fill with new page-cache pages (or
/// allocate) has just been in use.
///
/// This machine is a VM whose balloon reports idle free memory to the host,
/// which takes it back; the first touch of such a page then costs a fault in
/// the host. Writing 1 GiB into a new file takes ~1.1 s after a few idle
/// seconds and ~0.5 s right after other writes — a cost that falls on
/// whichever program happens to run after a pause, not on the one that
/// does more work. Warming memory like the page cache keeps it out of the
/// figures (`--cold-memory` leaves it in).
pub fn warm_memory(dir: &Path, bytes: u64) -> Result<(), String> {
    if bytes == 0 {
        return Ok(());
    }
    let path = dir.join(format!("ferry-bench-warm-{}.dat", std::process::id()));
    let scratch = Scratch { path };
    let mut f =
        File::create(&scratch.path).map_err(|e| format!("{}: {e}", scratch.path.display()))?;
    let mut buf = BufMut::with_capacity(1 << 20);
    buf.commit(1 << 20);
    let mut left = bytes;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        f.write_all(&buf[..n])
            .map_err(|e| format!("{}: {e}", scratch.path.display()))?;
        left -= n as u64;
    }
    // Dropping the file and the scratch frees its (dirty) pages unwritten.
    Ok(())
}

/// Whether this machine is a VM that reports free memory to its host (the
/// kernel's free page reporting, on and not paused): then the first touch
/// of memory freed a few seconds earlier faults in the host, and programs
/// that fill new page-cache pages vary by 2–4× from run to run.
/// `scripts/hold-memory.sh` pauses it for a measurement.
pub fn reports_free_memory() -> bool {
    // Orders above MAX_PAGE_ORDER (10 on x86-64) match no free block.
    std::fs::read_to_string("/sys/module/page_reporting/parameters/page_reporting_order")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .is_some_and(|order| order <= 10)
}

/// How a file's page cache is laid out, which decides what a mapped read
/// costs: one fault per 4 KiB page, or one per large folio.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Layout {
    /// Written in 4 KiB writes, as a log appended line by line or a file
    /// written through a pipe: 4 KiB pages.
    Small,
    /// Dropped from the cache and read back by readahead, as a file read
    /// cold: large folios.
    Large,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::Small => "small",
            Layout::Large => "large",
        }
    }
}

/// Puts `path`'s page cache in `layout`: for small, the file is written
/// again 4 KiB at a time (through a new file renamed over it); for large,
/// it is written back, dropped from the cache and read back in 1 MiB
/// reads, which readahead turns into large folios.
pub fn lay_out(path: &Path, layout: Layout) -> Result<(), String> {
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    match layout {
        Layout::Small => {
            let tmp = path.with_extension("relayout");
            let mut from = File::open(path).map_err(err)?;
            let mut to = File::create(&tmp).map_err(err)?;
            let mut buf = vec![0u8; 4096];
            loop {
                let n = from.read(&mut buf).map_err(err)?;
                if n == 0 {
                    break;
                }
                to.write_all(&buf[..n]).map_err(err)?;
            }
            to.sync_all().map_err(err)?;
            std::fs::rename(&tmp, path).map_err(err)?;
        }
        Layout::Large => {
            let f = File::open(path).map_err(err)?;
            f.sync_all().map_err(err)?;
            rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed)
                .map_err(|e| err(e.into()))?;
            let mut f = f;
            warm(&mut f)?;
        }
    }
    Ok(())
}

/// True if every byte of `path` is in the page cache: reads it with
/// `RWF_NOWAIT`, which fails or comes up short at the first page that is
/// not (and so reads nothing from the disk).
pub fn fully_cached(path: &Path) -> Result<bool, String> {
    let f = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut buf = BufMut::with_capacity(1 << 20);
    buf.commit(1 << 20);
    let len = f.metadata().map_err(|e| e.to_string())?.len();
    let mut at = 0u64;
    while at < len {
        let want = (len - at).min(buf.len() as u64) as usize;
        let mut iov = [std::io::IoSliceMut::new(&mut buf[..want])];
        match rustix::io::preadv2(&f, &mut iov, at, rustix::io::ReadWriteFlags::NOWAIT) {
            Ok(n) if n == want => at += n as u64,
            _ => return Ok(false),
        }
    }
    Ok(true)
}
