//! Reading the two sides. A regular file is read to its end through a
//! stream, mapped without a read lease where the stream maps
//! (`common::input_options`: a lease would hold writers of the file back
//! while diff runs, which GNU's diff never does), and its bytes are the
//! mapping itself — nothing is copied; what the stream reads into buffers
//! (small files, /proc files, bytes past the size seen at the start) is
//! joined into one. Pipes and devices are read whole, or only their first
//! block when it says binary.
//!
//! Another process may cut a mapped file short or rewrite it while diff
//! reads it: the pages it loses read as zeros (the SIGBUS guard), bytes
//! it never held, and rewritten pages show their new bytes to whatever
//! reads them next. GNU's diff reads each file with `read` into memory,
//! and compares what it read. So a mapped side keeps its file open, and
//! once the two sides are compared and their output formatted (held, not
//! yet written) diff asks [`Side::changed`]: if a side lost pages, or its
//! file's size or time stamps are not those it had when opened, the side
//! is read again with plain reads, as GNU reads it ([`Side::read_again`]),
//! and compared again.

use super::{probe_binary, BINARY_PROBE};
use crate::tools::{common, whole};
use ferry::Buf;
use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// One side of the comparison.
pub struct Side {
    /// How messages name it: bytes, as file names are.
    pub(super) name: Vec<u8>,
    pub(super) data: Buf,
    /// Its file's status when opened (None: absent, or not known).
    pub(super) st: Option<rustix::fs::Stat>,
    /// A pipe or device whose first block held a NUL: binary, and read
    /// no further than that block (`data`) until asked (/dev/zero never
    /// ends). The rest of it.
    pub(super) more: Option<std::fs::File>,
    /// The file `data` may map (read through a mapped stream), open to
    /// ask whether it changed since.
    mapped: Option<std::fs::File>,
}

impl Side {
    /// A side read from something other than a mapped file.
    pub(super) fn read(name: Vec<u8>, data: Buf, st: Option<rustix::fs::Stat>) -> Side {
        Side {
            name,
            data,
            st,
            more: None,
            mapped: None,
        }
    }

    /// An absent file under -N: empty, dated the epoch.
    pub(super) fn absent(name: Vec<u8>) -> Side {
        Side::read(name, Buf::from_owner(Vec::new()), None)
    }

    /// Reads the rest of a binary pipe or device (-a asked for its lines).
    pub(super) fn read_more(&mut self) -> io::Result<()> {
        if let Some(f) = self.more.take() {
            let mut v = self.data.to_vec();
            read_all(&f, &mut v)?;
            self.data = Buf::from_owner(v);
        }
        Ok(())
    }

    /// Whether `data` may not be what the file held: its mapping lost
    /// pages (they read as zeros), or the file is not as it was when
    /// opened — another size, other time stamps (cut short, rewritten or
    /// grown: mapped pages show the new bytes when next read), or a size
    /// other than what was read. One `fstat`; false for a side not mapped.
    pub(super) fn changed(&self) -> bool {
        let Some(f) = &self.mapped else {
            return false;
        };
        if !self.data.is_intact() {
            return true;
        }
        match (rustix::fs::fstat(f), &self.st) {
            (Ok(now), Some(then)) => {
                let version = |s: &rustix::fs::Stat| {
                    (
                        s.st_size,
                        s.st_mtime,
                        s.st_mtime_nsec,
                        s.st_ctime,
                        s.st_ctime_nsec,
                    )
                };
                version(&now) != version(then) || now.st_size as u64 != self.data.len() as u64
            }
            _ => true,
        }
    }

    /// Reads the file again with plain reads, from its start, as GNU
    /// reads it: what it holds now, in memory that no other process can
    /// change. Its status is taken anew (the headers' dates).
    pub(super) fn read_again(&mut self) -> io::Result<()> {
        use std::io::Seek;
        let Some(mut f) = self.mapped.take() else {
            return Ok(());
        };
        self.st = rustix::fs::fstat(&f).ok();
        let mut v = Vec::new();
        if let Some(st) = &self.st {
            // Room for all of it and the read that says it ended.
            let _ = v.try_reserve_exact((st.st_size as usize).saturating_add(1));
        }
        f.seek(io::SeekFrom::Start(0))?;
        read_all(&f, &mut v)?;
        self.data = Buf::from_owner(v);
        Ok(())
    }
}

/// Reads `f` to its end onto `v`, growing it with `try_reserve`: input
/// larger than memory is `OutOfMemory` (GNU's "memory exhausted"), not
/// an abort.
fn read_all(mut f: &std::fs::File, v: &mut Vec<u8>) -> io::Result<()> {
    use std::io::Read;
    loop {
        if v.len() == v.capacity() {
            v.try_reserve(v.capacity().max(64 << 10))
                .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        }
        let spare = v.capacity() - v.len();
        let at = v.len();
        v.resize(at + spare, 0);
        let n = match f.read(&mut v[at..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
            Err(e) => {
                v.truncate(at);
                return Err(e);
            }
        };
        v.truncate(at + n);
        if n == 0 && spare > 0 {
            return Ok(());
        }
    }
}

/// A pipe, device or standard input: its first block, and, if that holds
/// a NUL (binary, as GNU decides from its first buffer), the file to read
/// the rest from later; otherwise all of it.
fn read_unsized(f: std::fs::File) -> io::Result<(Buf, Option<std::fs::File>)> {
    use std::io::Read;
    let mut v = vec![0u8; BINARY_PROBE];
    let mut n = 0;
    while n < v.len() {
        match (&f).read(&mut v[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    v.truncate(n);
    if n == BINARY_PROBE && probe_binary(&v) {
        return Ok((Buf::from_owner(v), Some(f)));
    }
    if n == BINARY_PROBE {
        read_all(&f, &mut v)?;
    }
    Ok((Buf::from_owner(v), None))
}

/// Reads an operand: a regular file is mapped, anything else read whole.
pub(super) fn load(name: &OsString, other: &OsString) -> io::Result<Side> {
    use std::os::fd::AsFd;
    let shown = name.as_bytes().to_vec();
    if name == "-" {
        let st = rustix::fs::fstat(io::stdin()).ok();
        // Read through the descriptor, not std's Stdin, which takes EBADF
        // (a closed standard input) for an empty one: GNU says so.
        let fd = io::stdin().as_fd().try_clone_to_owned()?;
        let (data, more) = read_unsized(std::fs::File::from(fd))?;
        return Ok(Side {
            more,
            ..Side::read(shown, data, st)
        });
    }
    let mut path = PathBuf::from(name);
    let mut shown = shown;
    if std::fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
        // `diff FILE DIR` compares FILE with DIR/FILE's base name.
        let base = Path::new(other).file_name();
        if other == "-" || base.is_none() || std::fs::metadata(other).is_ok_and(|m| m.is_dir()) {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        path.push(base.unwrap_or_default());
        shown = path.as_os_str().as_bytes().to_vec();
    }
    load_path(&path, shown)
}

/// Reads the file at `path`, shown as `shown`.
pub(super) fn load_path(path: &Path, shown: Vec<u8>) -> io::Result<Side> {
    let f = std::fs::File::open(path).map_err(|e| match e.raw_os_error() {
        Some(n) => io::Error::from_raw_os_error(n),
        None => e,
    })?;
    let st = rustix::fs::fstat(&f).ok();
    if !st.as_ref().is_some_and(common::is_reg) {
        let (data, more) = read_unsized(f)?;
        return Ok(Side {
            more,
            ..Side::read(shown, data, st)
        });
    }
    let size = st.as_ref().map_or(0, |st| st.st_size as u64);
    if size < whole::SMALL {
        let data = whole::read(&f, size)?;
        return Ok(Side::read(shown, data, st));
    }
    let s = ferry::Stream::open(path, &common::input_options()).map_err(common::os_only)?;
    let mapped = s.is_mapped();
    let (data, lost) = match read_to_end(&s) {
        Ok(data) => (data, false),
        // Pages lost while it was read: the file was cut short under the
        // mapping.
        Err(e) if mapped && e.kind() == io::ErrorKind::UnexpectedEof => (Buf::new(), true),
        Err(e) => return Err(common::os_only(e)),
    };
    let mut side = Side {
        mapped: mapped.then_some(f),
        ..Side::read(shown, data, st)
    };
    if lost {
        side.read_again()?;
    }
    Ok(side)
}

/// All of a regular file, read to its end whatever its size said when it
/// was opened (as GNU reads it): a file rewritten meanwhile is what was
/// read, and one whose size says nothing (/proc, /sys: 0, or a page) is
/// read whole. One region where the stream maps the file (no copy);
/// pieces read past the size are joined into one buffer. `UnexpectedEof`
/// if the mapping lost pages meanwhile.
fn read_to_end(s: &ferry::Stream) -> io::Result<Buf> {
    let mut parts: Vec<Buf> = Vec::new();
    let mut want = usize::try_from(s.len()?.saturating_sub(s.position()))
        .unwrap_or(usize::MAX)
        .max(64 << 10);
    loop {
        let r = s.salloc(want)?;
        // Fewer bytes than asked: the end (a region falls short only there).
        let last = r.len() < want;
        if !r.is_empty() {
            parts.push(r.into_buf());
        }
        if last {
            break;
        }
        want = 64 << 10;
    }
    if parts.len() <= 1 {
        return Ok(parts.pop().unwrap_or_default());
    }
    let total = parts.iter().map(|b| b.len()).sum();
    let mut v = Vec::new();
    v.try_reserve_exact(total)
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    for b in &parts {
        v.extend_from_slice(b);
    }
    // The copy of a lost page is zeros that no longer say so.
    if parts.iter().any(|b| !b.is_intact()) {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(Buf::from_owner(v))
}
