//! What every worker shares: the served directory (an open descriptor,
//! so that a rename of its path changes nothing), the file cache and the
//! checksum cache.

use crate::config::Config;
use ferry::cache::{CacheConfig, Checksums, FileCache};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;

pub(crate) struct Site {
    pub root: OwnedFd,
    /// The root's path with every link resolved, as the kernel names the
    /// files below it (`/proc/self/fd`).
    pub root_path: std::path::PathBuf,
    pub cache: FileCache,
    pub checksums: Checksums,
    pub list: bool,
    /// Listing pages, kept per directory stamp.
    pub pages: crate::listing::Pages,
    pub follow_symlinks: bool,
}

impl Site {
    /// Opens `rel` below the root with `extra` flags (read-only,
    /// close-on-exec): with `RESOLVE_BENEATH` (a symbolic link that leads
    /// out of the root is refused) unless links are followed anywhere.
    pub(crate) fn open_beneath(
        &self,
        rel: &std::path::Path,
        extra: rustix::fs::OFlags,
    ) -> io::Result<OwnedFd> {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        let rel: &std::path::Path = if rel.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            rel
        };
        let resolve = if self.follow_symlinks {
            ResolveFlags::NO_MAGICLINKS
        } else {
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS
        };
        let flags = OFlags::RDONLY | OFlags::CLOEXEC | extra;
        match rustix::fs::openat2(&self.root, rel, flags, Mode::empty(), resolve) {
            Ok(fd) => Ok(fd),
            // RESOLVE_BENEATH refuses every absolute link and every `..`
            // that steps out, even those that lead back in: those are
            // followed without opening anything, and opened only if they
            // end below the root.
            Err(rustix::io::Errno::XDEV) if !self.follow_symlinks => self.open_led_back(rel, flags),
            Err(e) => Err(e.into()),
        }
    }

    /// `rel`, whose links lead out of the root and (perhaps) back in:
    /// resolved to an `O_PATH` descriptor (opening nothing, so no device
    /// or FIFO outside is touched), then opened through it only if the
    /// kernel's name for it lies below the root; else `EXDEV`.
    fn open_led_back(
        &self,
        rel: &std::path::Path,
        flags: rustix::fs::OFlags,
    ) -> io::Result<OwnedFd> {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        use std::os::fd::AsRawFd;
        let path = rustix::fs::openat2(
            &self.root,
            rel,
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::NO_MAGICLINKS,
        )?;
        let magic = format!("/proc/self/fd/{}", path.as_raw_fd());
        let name = rustix::fs::readlink(&magic, Vec::new())?;
        let name = std::path::Path::new(std::ffi::OsStr::from_bytes(name.as_bytes()));
        if !name.starts_with(&self.root_path) {
            return Err(rustix::io::Errno::XDEV.into());
        }
        // The same file, not the path walked again.
        Ok(rustix::fs::open(&magic, flags, Mode::empty())?)
    }

    pub(crate) fn open(cfg: &Config) -> io::Result<Site> {
        use rustix::fs::{Mode, OFlags};
        let root = rustix::fs::open(
            &cfg.root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| {
            let e = io::Error::from(e);
            io::Error::new(e.kind(), format!("{}: {e}", cfg.root.display()))
        })?;
        // Web traffic is the trace the frequency count was measured on
        // (docs/BENCHMARKS.md, "iolite cache: a frequency count per byte",
        // 2026-11-29): it keeps more of the files asked for often, and
        // files over an eighth of the budget (sent by `sendfile` anyway
        // when large) do not push out many small ones.
        let cache = FileCache::new(
            CacheConfig::default()
                .with_budget(cfg.cache_bytes)
                .with_frequency(true)
                .with_largest_file(Some(cfg.cache_bytes as u64 / 8)),
        )?;
        let root_path = std::fs::canonicalize(&cfg.root)?;
        Ok(Site {
            root,
            root_path,
            cache,
            checksums: Checksums::new(),
            list: cfg.list,
            pages: Default::default(),
            follow_symlinks: cfg.follow_symlinks,
        })
    }
}
