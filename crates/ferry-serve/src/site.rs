//! What every worker shares: the served directory (an open descriptor,
//! so that a rename of its path changes nothing), the file cache and the
//! checksum cache.

use crate::config::Config;
use ferry::cache::{CacheConfig, Checksums, FileCache};
use std::io;
use std::os::fd::OwnedFd;

pub(crate) struct Site {
    pub root: OwnedFd,
    pub cache: FileCache,
    pub checksums: Checksums,
    pub list: bool,
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
        Ok(rustix::fs::openat2(
            &self.root,
            rel,
            OFlags::RDONLY | OFlags::CLOEXEC | extra,
            Mode::empty(),
            resolve,
        )?)
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
        let cache = FileCache::new(CacheConfig::default().with_budget(cfg.cache_bytes))?;
        Ok(Site {
            root,
            cache,
            checksums: Checksums::new(),
            list: cfg.list,
            follow_symlinks: cfg.follow_symlinks,
        })
    }
}
