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
