//! A file's identity and change stamp, and the rule that decides when an
//! extent read from it may be served again without reading it anew.
//!
//! The stamp is what `fstat` tells about a file: device, inode, size,
//! modification time and change time (nanoseconds). Two stamps that
//! differ mean the file changed (or is another file); two that are equal
//! mean it did not change — *unless* the change came within the same tick
//! of the kernel's file-time clock as the stamp was taken. File times come
//! from a coarse clock (a jiffy, 1–10 ms, on most Linux file systems;
//! 2 s on FAT), so a writer that keeps the size and writes within that
//! tick leaves `ctime` as it was. The *settle* rule closes that window
//! (git calls the same problem "racy clean"): a stamp whose `ctime` is not
//! at least [`CacheConfig::settle`](super::CacheConfig::settle) older than
//! the moment the read began is *racy*, and an extent read under a racy
//! stamp is never served again without reading the file anew.
//! `ctime` cannot be set by `utimensat` (`touch -d` sets `mtime` and
//! moves `ctime` to now), so only a change of the system clock backwards
//! defeats the rule.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Which file: device and inode. A file renamed over the path is another
/// inode and so another file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct FileId {
    pub dev: u64,
    pub ino: u64,
}

/// A file's identity and its change stamp at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Stamp {
    pub id: FileId,
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime: i128,
    /// Status change time, nanoseconds since the epoch.
    pub ctime: i128,
}

impl Stamp {
    pub(crate) fn of(meta: &Metadata) -> Stamp {
        Stamp {
            id: FileId {
                dev: meta.dev(),
                ino: meta.ino(),
            },
            size: meta.size(),
            mtime: nanos(meta.mtime(), meta.mtime_nsec()),
            ctime: nanos(meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// Is this stamp settled for a read that began at `began`: was the
    /// file's last change at least `settle` before it? A change after
    /// `began` then moves `ctime` to a later tick, and so changes the
    /// stamp.
    pub(crate) fn settled_for(&self, began: SystemTime, settle: Duration) -> bool {
        let began = match began.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(_) => return false,
        };
        self.ctime.saturating_add(settle.as_nanos() as i128) <= began
    }
}

fn nanos(sec: i64, nsec: i64) -> i128 {
    sec as i128 * 1_000_000_000 + nsec as i128
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_just_before_the_read_is_racy() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(100);
        let mut s = Stamp {
            id: FileId { dev: 1, ino: 2 },
            size: 0,
            mtime: 0,
            ctime: 99_500_000_000,
        };
        assert!(!s.settled_for(t, Duration::from_secs(1)));
        assert!(s.settled_for(t, Duration::from_millis(500)));
        s.ctime = i128::MAX;
        assert!(!s.settled_for(t, Duration::from_secs(1)));
        assert!(!s.settled_for(
            SystemTime::UNIX_EPOCH - Duration::from_secs(1),
            Duration::ZERO
        ));
    }
}
