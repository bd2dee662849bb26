//! Per worker thread: the small files served lately, each with what its
//! response needs (its cached extents, `ETag`, `Last-Modified`, type),
//! found by the target's path below the root and checked against the
//! file at every request by one `statx` of that path — no open, no
//! `fstat`, no close. A file changed, replaced or gone since is a miss
//! and goes the whole way (open beneath the root, the file cache).
//!
//! The check is the file's stamp: device, inode, size, modification and
//! change times to the nanosecond. Only files whose last change is over a
//! second old are kept, so that two writes within one tick of the file
//! system's clock cannot leave the same stamp on other bytes. A path that
//! now leads elsewhere (a renamed-over file, a link out of the root) finds
//! another inode and misses; the same inode by another way is the same
//! file this server already served from the root.
//!
//! Worker threads belong to one server, so a thread's table holds one
//! root's files.

use crate::represent::{Rep, Source};
use crate::request::Request;
use crate::response::Response;
use crate::site::Site;
use ferry::Aggregate;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Files a worker keeps at most (each at most the cached-file limit, so a
/// few megabytes in all, counted by the file cache as shared bytes).
const ENTRIES: usize = 128;

/// Device, inode, size, modification and change times.
type Stamp = (u64, u64, u64, i64, i64, i64, i64);

struct Entry {
    stamp: Stamp,
    body: Aggregate,
    etag: String,
    last_modified: String,
    mtime: SystemTime,
    ctype: &'static str,
}

thread_local! {
    static TABLE: RefCell<HashMap<PathBuf, Entry>> = RefCell::new(HashMap::new());
}

fn stamp_of(m: &Metadata) -> Stamp {
    (
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    )
}

/// The response to `req` from the kept entry of `rel`, if there is one
/// and the file at `rel` still has its stamp.
pub(crate) fn respond(site: &Site, req: &Request, rel: &Path) -> Option<Response> {
    TABLE.with(|t| {
        let t = t.borrow();
        let e = t.get(rel)?;
        let now = rustix::fs::statx(
            &site.root,
            rel,
            rustix::fs::AtFlags::empty(),
            rustix::fs::StatxFlags::BASIC_STATS,
        )
        .ok()?;
        let stamp: Stamp = (
            rustix::fs::makedev(now.stx_dev_major, now.stx_dev_minor),
            now.stx_ino,
            now.stx_size,
            now.stx_mtime.tv_sec,
            i64::from(now.stx_mtime.tv_nsec),
            now.stx_ctime.tv_sec,
            i64::from(now.stx_ctime.tv_nsec),
        );
        if stamp != e.stamp {
            return None;
        }
        let rep = Rep {
            size: e.body.len() as u64,
            mtime: e.mtime,
            last_modified: &e.last_modified,
            etag: &e.etag,
            ctype: e.ctype,
            // Kept only as served without a coding (see `keep`'s caller).
            extra: &[("Vary", "Accept-Encoding")],
            source: Source::Mem(e.body.clone()),
        };
        Some(crate::represent::respond(req, &rep))
    })
}

/// Keeps `rep` (a whole file from memory) for `rel`, whose metadata is
/// `meta`, if its last change is over a second old.
pub(crate) fn keep(rel: &Path, meta: &Metadata, rep: &Rep<'_>) {
    let Source::Mem(body) = &rep.source else {
        return;
    };
    let settled = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .is_ok_and(|now| now.as_secs() as i64 > meta.ctime() + 1);
    if !settled || body.len() as u64 != rep.size {
        return;
    }
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        if t.len() >= ENTRIES && !t.contains_key(rel) {
            // Any one goes: a kept file is only a shortcut.
            if let Some(k) = t.keys().next().cloned() {
                t.remove(&k);
            }
        }
        t.insert(
            rel.to_path_buf(),
            Entry {
                stamp: stamp_of(meta),
                body: body.clone(),
                etag: rep.etag.to_string(),
                last_modified: rep.last_modified.to_string(),
                mtime: rep.mtime,
                ctype: rep.ctype,
            },
        );
    });
}
