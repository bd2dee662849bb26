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
//!
//! The rule holds only if the settle time is at least the file system's
//! tick: on FAT a change at 10.5 s is stamped 10.0 s, a read beginning at
//! 11.2 s would count it settled under a 1 s settle time, and a write at
//! 11.6 s, stamped 10.0 s again, would go unseen. So the settle time used
//! for a file is at least its file system's time granularity
//! ([`time_granularity`], by `fstatfs` magic number), and at least a
//! second for a file whose times are whole seconds (ext3, or ext4 with
//! small inodes, keep no fractions).

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

/// The settle time for `stamp`'s file: `settle`, but at least the time
/// granularity of its file system (`magic`, `fstatfs`'s `f_type`; None if
/// unknown), and at least a second if its `ctime` is a whole second.
pub(crate) fn effective_settle(settle: Duration, magic: Option<u64>, stamp: &Stamp) -> Duration {
    let mut s = settle.max(time_granularity(magic));
    if stamp.ctime % 1_000_000_000 == 0 {
        s = s.max(Duration::from_secs(1));
    }
    s
}

/// How far apart two file times of a file system may be that the kernel
/// stamps at different moments, by its magic number (`fstatfs`'s
/// `f_type`): the kernel's file-time clock tick (at most 10 ms) on file
/// systems that keep nanoseconds; 2 s on FAT and exFAT; and 2 s, to be
/// safe, on file systems not known here (network and FUSE file systems
/// among them, whose times the server or the daemon sets) or when the
/// magic could not be had.
pub(crate) fn time_granularity(magic: Option<u64>) -> Duration {
    const FINE: [u32; 8] = [
        0xEF53,      // ext2, ext3, ext4
        0x5846_5342, // xfs
        0x9123_683E, // btrfs
        0x0102_1994, // tmpfs
        0x8584_58F6, // ramfs
        0x794C_7630, // overlayfs (the times of its upper file system)
        0xF2F5_2010, // f2fs
        0xCA45_1A4E, // bcachefs
    ];
    const TICK: Duration = Duration::from_millis(10);
    const COARSE: Duration = Duration::from_secs(2);
    // `f_type` is a signed word on some architectures: compare the low
    // 32 bits, where every magic number lives.
    match magic {
        Some(m) if FINE.contains(&(m as u32)) => TICK,
        // FAT (msdos, vfat) and exFAT: 2 s; anything else: not known.
        _ => COARSE,
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

    /// File systems with nanosecond times get the clock tick; FAT and
    /// exFAT, network, FUSE and unknown ones get 2 s; the magic number is
    /// read from its low 32 bits, as a 32-bit `f_type` sign-extends.
    #[test]
    fn time_granularity_by_file_system() {
        let tick = Duration::from_millis(10);
        let two = Duration::from_secs(2);
        for (magic, want) in [
            (0xEF53, tick),                // ext4
            (0x5846_5342, tick),           // xfs
            (0x9123_683E, tick),           // btrfs
            (0xFFFF_FFFF_9123_683E, tick), // btrfs, sign-extended
            (0x0102_1994, tick),           // tmpfs
            (0x794C_7630, tick),           // overlayfs
            (0x4D44, two),                 // msdos, vfat
            (0x2011_BAB0, two),            // exfat
            (0x6969, two),                 // nfs
            (0xFE53_4D42, two),            // smb2
            (0x6573_5546, two),            // fuse
            (0x9FA0, two),                 // proc: not known here
        ] {
            assert_eq!(time_granularity(Some(magic)), want, "{magic:#x}");
        }
        assert_eq!(time_granularity(None), two);
    }

    /// On FAT, a change at 10.5 s is stamped 10.0 s; a read beginning at
    /// 11.2 s must not count it settled under the default 1 s settle time,
    /// or a write at 11.6 s — stamped 10.0 s again, same size — would go
    /// unseen and the old extent be served. The settle time used is the
    /// file system's 2 s; on ext4 the configured one stays. A ctime that
    /// is a whole second (a file system that keeps no fractions) gets at
    /// least a second.
    #[test]
    fn the_settle_time_is_at_least_the_file_systems_granularity() {
        let stamp = |ctime: i128| Stamp {
            id: FileId { dev: 1, ino: 2 },
            size: 10,
            mtime: ctime,
            ctime,
        };
        let began = SystemTime::UNIX_EPOCH + Duration::from_millis(11_200);
        let one = Duration::from_secs(1);
        let fat = stamp(10_000_000_000);
        assert!(!fat.settled_for(began, effective_settle(one, Some(0x4D44), &fat)));
        assert_eq!(
            effective_settle(one, Some(0x4D44), &fat),
            Duration::from_secs(2)
        );
        let ext4 = stamp(10_000_000_001);
        assert_eq!(effective_settle(one, Some(0xEF53), &ext4), one);
        assert!(ext4.settled_for(began, effective_settle(one, Some(0xEF53), &ext4)));
        let short = Duration::from_millis(50);
        assert_eq!(effective_settle(short, Some(0xEF53), &ext4), short);
        assert_eq!(
            effective_settle(Duration::ZERO, Some(0xEF53), &ext4),
            Duration::from_millis(10)
        );
        // ext4 with 128-byte inodes: whole seconds.
        assert_eq!(effective_settle(short, Some(0xEF53), &fat), one);
    }
}
