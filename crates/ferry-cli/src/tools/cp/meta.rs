//! What `--preserve` keeps besides the data: timestamps, owner and group,
//! extended attributes and the mode, set on the copy in GNU's order (the
//! owner before the mode, since a change of owner clears set-user-ID
//! bits). Everything goes through rustix; symbolic links themselves are
//! changed, never followed.

use super::options::Opts;
use crate::tools::common::{describe, quote_always};
use rustix::fs::{AtFlags, Mode, Timespec, Timestamps, CWD};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

fn q(p: &Path) -> String {
    quote_always(&p.to_string_lossy())
}

/// Sets what `o.preserve` asks for on `dst` from the source's `sm`.
/// `Err` holds the messages (GNU reports and counts a failure when the
/// preserving was asked for with -p or --preserve, and quietly skips it
/// for -a's extras).
pub fn apply(
    src: &Path,
    sm: &std::fs::Metadata,
    dst: &Path,
    o: &Opts,
    is_symlink: bool,
) -> Result<(), String> {
    let p = o.preserve;
    if p.timestamps {
        let t = Timestamps {
            last_access: Timespec {
                tv_sec: sm.atime(),
                tv_nsec: sm.atime_nsec() as _,
            },
            last_modification: Timespec {
                tv_sec: sm.mtime(),
                tv_nsec: sm.mtime_nsec() as _,
            },
        };
        if let Err(e) = rustix::fs::utimensat(CWD, dst, &t, AtFlags::SYMLINK_NOFOLLOW) {
            // Times of a symbolic link cannot be set everywhere: not an error.
            if !(is_symlink && e == rustix::io::Errno::NOSYS) && o.require_preserve {
                return Err(format!(
                    "preserving times for {}: {}",
                    q(dst),
                    describe(&e.into())
                ));
            }
        }
    }
    let mut mode = sm.mode() & 0o7777;
    if p.ownership {
        let (uid, gid) = (
            rustix::fs::Uid::from_raw(sm.uid()),
            rustix::fs::Gid::from_raw(sm.gid()),
        );
        let r = rustix::fs::chownat(CWD, dst, Some(uid), Some(gid), AtFlags::SYMLINK_NOFOLLOW);
        if let Err(e) = r {
            if chown_failure_ok(e) {
                // Keep the group at least, if it can be; without the
                // source's owner, no set-user-ID or set-group-ID bit.
                let _ = rustix::fs::chownat(CWD, dst, None, Some(gid), AtFlags::SYMLINK_NOFOLLOW);
                mode &= !0o6000;
            } else if o.require_preserve {
                return Err(format!(
                    "failed to preserve ownership for {}: {}",
                    q(dst),
                    describe(&e.into())
                ));
            }
        }
    }
    if p.xattr {
        if let Err(e) = copy_xattrs(src, dst) {
            if o.require_xattr {
                return Err(e);
            }
        }
    }
    if p.mode && !is_symlink {
        chmod(dst, mode)
            .map_err(|e| format!("preserving permissions for {}: {}", q(dst), describe(&e)))?;
    }
    Ok(())
}

/// A change of owner that only privilege could make.
fn chown_failure_ok(e: rustix::io::Errno) -> bool {
    use rustix::io::Errno;
    (e == Errno::PERM || e == Errno::INVAL) && !rustix::process::geteuid().is_root()
}

pub fn chmod(p: &Path, mode: u32) -> io::Result<()> {
    Ok(rustix::fs::chmodat(
        CWD,
        p,
        Mode::from_raw_mode(mode),
        AtFlags::empty(),
    )?)
}

/// Copies the extended attributes of `src` to `dst` (the link itself for
/// symbolic links). Attributes the destination cannot take (another file
/// system's namespaces) are an error only when there were some to copy.
fn copy_xattrs(src: &Path, dst: &Path) -> Result<(), String> {
    use rustix::io::Errno;
    let mut names = vec![0u8; 4096];
    let n = loop {
        match rustix::fs::llistxattr(src, &mut names[..]) {
            Ok(n) => break n,
            Err(Errno::RANGE) => {
                let want = rustix::fs::llistxattr_query(src)
                    .unwrap_or(0)
                    .max(names.len() * 2);
                names.resize(want, 0);
            }
            Err(Errno::NOTSUP | Errno::NOSYS) => return Ok(()),
            Err(e) => {
                return Err(format!(
                    "listing attributes of {}: {}",
                    q(src),
                    describe(&e.into())
                ))
            }
        }
    };
    let mut value = vec![0u8; 4096];
    for name in names[..n].split(|&b| b == 0).filter(|s| !s.is_empty()) {
        let Ok(name) = std::ffi::CString::new(name) else {
            continue;
        };
        let len = loop {
            match rustix::fs::lgetxattr(src, name.as_c_str(), &mut value[..]) {
                Ok(len) => break len,
                Err(Errno::RANGE) => {
                    let want = rustix::fs::lgetxattr_query(src, name.as_c_str())
                        .unwrap_or(0)
                        .max(value.len() * 2);
                    value.resize(want, 0);
                }
                Err(e) => {
                    return Err(format!(
                        "getting attribute {} of {}: {}",
                        quote_always(&name.to_string_lossy()),
                        q(src),
                        describe(&e.into())
                    ))
                }
            }
        };
        rustix::fs::lsetxattr(
            dst,
            name.as_c_str(),
            &value[..len],
            rustix::fs::XattrFlags::empty(),
        )
        .map_err(|e| format!("setting attributes for {}: {}", q(dst), describe(&e.into())))?;
    }
    Ok(())
}
