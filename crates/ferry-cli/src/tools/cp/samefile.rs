//! When a source and an existing destination may be the same file: GNU
//! refuses those copies that would truncate the source or lose it, and
//! allows the rest (two distinct symbolic links to one file, a backup
//! that keeps the data, a hard link that is already there). The rules
//! here were worked out from GNU cp 9.1's answers to coreutils'
//! same-file table (tests/cp/same-file.sh) and GNU's documentation.

use super::options::{Deref, Opts};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

pub enum Same {
    /// Go on with the copy.
    Ok,
    /// Nothing to do, successfully (the link asked for is there).
    Done,
    /// "'a' and 'b' are the same file".
    Refuse,
}

fn ino(m: &std::fs::Metadata) -> (u64, u64) {
    (m.dev(), m.ino())
}

/// The same directory entry: the same last name in the same directory.
pub fn same_name(a: &Path, b: &Path) -> bool {
    let dir = |p: &Path| {
        let d = p.parent().filter(|d| !d.as_os_str().is_empty());
        std::fs::metadata(d.unwrap_or(Path::new("."))).ok()
    };
    a.file_name() == b.file_name()
        && match (dir(a), dir(b)) {
            (Some(x), Some(y)) => ino(&x) == ino(&y),
            _ => false,
        }
}

/// `src_sb` and `dst_sb` are the stats cp works with (followed or not,
/// as the options say).
pub fn check(
    src: &Path,
    src_sb: &std::fs::Metadata,
    dst: &Path,
    dst_sb: &std::fs::Metadata,
    o: &Opts,
) -> Same {
    let same = ino(src_sb) == ino(dst_sb);
    let backups = o.backup.is_some();
    if same && o.hard_link {
        return Same::Done;
    }
    let ok = |b: bool| if b { Same::Ok } else { Same::Refuse };
    let (src_l, dst_l);
    let same_link;
    if o.deref == Deref::Never {
        same_link = same;
        if src_sb.file_type().is_symlink() && dst_sb.file_type().is_symlink() {
            let sn = same_name(src, dst);
            if !sn {
                if backups {
                    return Same::Ok;
                }
                if same_link {
                    return Same::Done;
                }
            }
            return ok(!sn);
        }
        // A link made by -s replaces a link, whatever it points to.
        if o.symbolic_link && dst_sb.file_type().is_symlink() {
            return Same::Ok;
        }
        src_l = src_sb.clone();
        dst_l = dst_sb.clone();
    } else {
        if !same {
            return Same::Ok;
        }
        let (Ok(d), Ok(s)) = (
            std::fs::symlink_metadata(dst),
            std::fs::symlink_metadata(src),
        ) else {
            return Same::Ok;
        };
        same_link = ino(&s) == ino(&d);
        if s.file_type().is_symlink() && d.file_type().is_symlink() && o.remove_destination {
            return Same::Ok;
        }
        src_l = s;
        dst_l = d;
    }
    let (src_is_link, dst_is_link) = (
        src_l.file_type().is_symlink(),
        dst_l.file_type().is_symlink(),
    );
    if backups {
        if !same_link {
            // Backing up a destination that is not a link, when the source
            // is a link followed to it, would leave the link dangling.
            if o.deref != Deref::Never && src_is_link && !dst_is_link {
                return Same::Refuse;
            }
            return Same::Ok;
        }
        return ok(!same_name(src, dst));
    }
    if o.remove_destination {
        if dst_is_link {
            return Same::Ok;
        }
        if same_link && dst_l.nlink() > 1 && !same_name(src, dst) {
            return Same::Ok;
        }
    }
    if !src_is_link && !dst_is_link {
        if ino(&src_l) != ino(&dst_l) {
            return Same::Ok;
        }
        if o.hard_link {
            return Same::Done;
        }
    }
    if o.remove_destination && dst_is_link {
        return ok(dst_l.dev() == src_l.dev());
    }
    if o.deref == Deref::Never {
        let follow = |l: &std::fs::Metadata, p: &Path| {
            if l.file_type().is_symlink() {
                std::fs::metadata(p).ok()
            } else {
                Some(l.clone())
            }
        };
        let (Some(s), Some(d)) = (follow(&src_l, src), follow(&dst_l, dst)) else {
            return Same::Ok;
        };
        if ino(&s) != ino(&d) {
            return Same::Ok;
        }
        if o.hard_link {
            return if dst_is_link { Same::Ok } else { Same::Done };
        }
    }
    Same::Refuse
}
