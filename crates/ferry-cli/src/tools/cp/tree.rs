//! One source copied to one destination, and directories recursively, as
//! GNU cp decides: what to follow, what an existing destination allows
//! (-n, -i, -u, -b, -f, --remove-destination), hard links kept within the
//! copy, a directory never copied into itself, special files made anew.

use super::backup;
use super::file::{self, Ctx, Existing};
use super::meta;
use super::options::{Backup, Deref, Interactive, Opts};
use super::q;
use super::samefile::{self, Same};
use crate::tools::common::{self, describe, Tool};
use rustix::fs::{FileType, Mode, CWD};
use std::collections::{HashMap, HashSet};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

pub struct Copier<'a> {
    pub t: &'a Tool,
    pub o: &'a Opts,
    /// Sources with more than one link already copied: (dev, ino) → copy.
    links: HashMap<(u64, u64), PathBuf>,
    /// The first directory the copy of the current operand made: a
    /// source that is it is a directory being copied into itself (GNU
    /// records only the first, and stops that operand's walk there).
    first_dir: Option<(u64, u64)>,
    into_self: bool,
    /// Symbolic links this run made: never written through.
    made_links: HashSet<(u64, u64)>,
    /// What the operands' copies made: not overwritten by a later operand.
    made_top: HashSet<(u64, u64)>,
    /// Operands copied into a directory so far (device, inode, last name):
    /// one named again is skipped with a warning, when `track_sources`.
    seen_src: HashSet<(u64, u64, std::ffi::OsString)>,
    pub track_sources: bool,
    /// The operands of the copy under way, for the into-itself message.
    top: (PathBuf, PathBuf),
    clone_unsupported: bool,
}

fn dev_ino(m: &std::fs::Metadata) -> (u64, u64) {
    (m.dev(), m.ino())
}

impl<'a> Copier<'a> {
    pub fn new(t: &'a Tool, o: &'a Opts) -> Copier<'a> {
        Copier {
            t,
            o,
            links: HashMap::new(),
            first_dir: None,
            into_self: false,
            made_links: HashSet::new(),
            made_top: HashSet::new(),
            seen_src: HashSet::new(),
            track_sources: false,
            top: (PathBuf::new(), PathBuf::new()),
            clone_unsupported: false,
        }
    }

    fn fail(&self, msg: impl std::fmt::Display) -> bool {
        self.t.error(format_args!("{msg}"));
        false
    }

    /// Copies operand `src` to `dst`; false after reporting an error.
    pub fn copy_top(&mut self, src: &Path, dst: &Path) -> bool {
        self.top = (src.to_path_buf(), dst.to_path_buf());
        self.first_dir = None;
        self.into_self = false;
        if self.track_sources && self.o.backup != Some(Backup::Numbered) {
            let follow = matches!(self.o.deref, Deref::Always | Deref::CommandLine);
            let st = if follow {
                std::fs::metadata(src)
            } else {
                std::fs::symlink_metadata(src)
            };
            if let (Ok(m), Some(name)) = (st, src.file_name()) {
                if !self
                    .seen_src
                    .insert((m.dev(), m.ino(), name.to_os_string()))
                {
                    let what = if m.is_dir() { "directory" } else { "file" };
                    self.t.error(format_args!(
                        "warning: source {what} {} specified more than once",
                        q(src)
                    ));
                    return true;
                }
            }
        }
        let ok = self.copy(src, dst, true, None, false);
        if ok {
            if let Ok(m) = std::fs::symlink_metadata(dst) {
                if !m.is_dir() {
                    self.made_top.insert(dev_ino(&m));
                }
            }
        }
        ok
    }

    fn verbose(&self, src: &Path, dst: &Path, backup: Option<&Path>) {
        if !self.o.verbose {
            return;
        }
        let mut line = format!("{} -> {}", q(src), q(dst));
        if let Some(b) = backup {
            line.push_str(&format!(" (backup: {})", q(b)));
        }
        line.push('\n');
        common::say(line.as_bytes());
    }

    /// Asks on standard error; a line from standard input starting with
    /// `y` or `Y` is yes.
    fn ask(&self, question: &str) -> bool {
        eprint!("{}: {question}? ", self.t.name);
        let mut line = String::new();
        match io::stdin().read_line(&mut line) {
            Ok(_) => line.starts_with(['y', 'Y']),
            Err(_) => false,
        }
    }

    /// Copies `src` to `dst`. `cmdline`: an operand (for -H). `parent_dev`:
    /// the device of the directory being copied (for -x). `parent_new`:
    /// the destination's directory was made by this copy, so nothing is
    /// there yet (one lstat saved per file, as GNU saves it).
    fn copy(
        &mut self,
        src: &Path,
        dst: &Path,
        cmdline: bool,
        parent_dev: Option<u64>,
        parent_new: bool,
    ) -> bool {
        let o = self.o;
        let follow = match o.deref {
            Deref::Always => true,
            Deref::CommandLine => cmdline,
            Deref::Never | Deref::Unset => false,
        };
        let got = if follow {
            std::fs::metadata(src)
        } else {
            std::fs::symlink_metadata(src)
        };
        let sm = match got {
            Ok(m) => m,
            Err(e) => return self.fail(format!("cannot stat {}: {}", q(src), describe(&e))),
        };
        let ft = sm.file_type();
        if ft.is_dir() && !o.recursive {
            return self.fail(format!("-r not specified; omitting directory {}", q(src)));
        }
        // Links between the files copied are kept (and, when links are
        // followed, between a link and its target).
        let keep_link = o.preserve.links
            && !o.hard_link
            && !ft.is_dir()
            && (sm.nlink() > 1
                || o.deref == Deref::Always
                || (cmdline && o.deref == Deref::CommandLine));
        let src = src.to_path_buf();
        // A destination that cannot be looked at (a name too long, a
        // non-directory on its path) is an error, as GNU's "cannot stat";
        // only a missing one is made.
        let mut dm = if parent_new {
            None
        } else {
            match std::fs::symlink_metadata(dst) {
                Ok(m) => Some(m),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return self.fail(format!("cannot stat {}: {}", q(dst), describe(&e))),
            }
        };
        let mut backup_made: Option<PathBuf> = None;
        if let Some(d) = dm.clone() {
            // The destination as a copy would write it: through a link
            // when the data of a regular file is copied to it.
            let through = d.file_type().is_symlink()
                && !ft.is_dir()
                && !ft.is_symlink()
                && !o.symbolic_link
                && !o.hard_link;
            if through && self.made_links.contains(&dev_ino(&d)) {
                return self.fail(format!(
                    "will not copy {} through just-created symlink {}",
                    q(&src),
                    q(dst)
                ));
            }
            if cmdline
                && !ft.is_dir()
                && o.backup != Some(Backup::Numbered)
                && self.made_top.contains(&dev_ino(&d))
            {
                return self.fail(format!(
                    "will not overwrite just-created {} with {}",
                    q(dst),
                    q(&src)
                ));
            }
            let dst_real = if through {
                std::fs::metadata(dst).unwrap_or_else(|_| d.clone())
            } else {
                d.clone()
            };
            // The destination as GNU looks at it: the link itself when
            // the copy will replace it, else what it points to.
            let use_lstat = (!ft.is_file()
                && (!copy_as_regular(o, &ft) || ft.is_dir() || ft.is_symlink()))
                || o.symbolic_link
                || o.hard_link
                || o.backup.is_some()
                || o.remove_destination;
            let dst_sb = if use_lstat {
                d.clone()
            } else {
                dst_real.clone()
            };
            // Looked at through a link that leads nowhere, the destination
            // is not there for GNU: no -n, -u or -i stops the copy, which
            // then refuses to write through the link. (Taken as there, -u
            // went on to link a later name of the source over another
            // name's copy with the dangling link.)
            let dangling = !use_lstat
                && d.file_type().is_symlink()
                && std::fs::metadata(dst).is_err_and(|e| e.kind() == io::ErrorKind::NotFound);
            match samefile::check(&src, &sm, dst, &dst_sb, o) {
                Same::Ok => {}
                Same::Done => return true,
                Same::Refuse => {
                    return self.fail(format!("{} and {} are the same file", q(&src), q(dst)));
                }
            }
            if ft.is_dir() {
                if !dst_real.is_dir() && !std::fs::metadata(dst).is_ok_and(|m| m.is_dir()) {
                    return self.fail(format!(
                        "cannot overwrite non-directory {} with directory {}",
                        q(dst),
                        q(&src)
                    ));
                }
            } else {
                // -u compares the destination GNU looked at: through a link
                // when the copy writes through it.
                if o.update
                    && !dangling
                    && !d.is_dir()
                    && dst_sb.modified().ok() >= sm.modified().ok()
                {
                    // Not copied. As GNU: the pair is still recorded, and
                    // a later name of the same source file (skipped too,
                    // or with links kept) makes its copy a hard link to
                    // this one's, whether or not links are preserved.
                    match self.links.get(&dev_ino(&sm)).cloned() {
                        Some(first) if first.as_path() != dst => {
                            return self.relink(&first, dst);
                        }
                        Some(_) => {}
                        None => {
                            self.links.insert(dev_ino(&sm), dst.to_path_buf());
                        }
                    }
                    return true;
                }
                match o.interactive {
                    _ if dangling => {}
                    Interactive::Never => return true,
                    Interactive::Ask => {
                        if !self.ask(&format!("overwrite {}", q(dst))) {
                            return true;
                        }
                    }
                    Interactive::Replace => {}
                }
                if d.is_dir() {
                    return self.fail(format!(
                        "cannot overwrite directory {} with non-directory",
                        q(dst)
                    ));
                }
                if let Some(kind) = o.backup {
                    let b = backup::name(dst, kind, &o.suffix);
                    if let Ok(bm) = std::fs::symlink_metadata(&b) {
                        if dev_ino(&bm) == dev_ino(&sm) {
                            return self.fail(format!(
                                "backing up {} might destroy source;  {} not copied",
                                q(dst),
                                q(&src)
                            ));
                        }
                    }
                    if let Err(e) = std::fs::rename(dst, &b) {
                        return self.fail(format!("cannot backup {}: {}", q(dst), describe(&e)));
                    }
                    backup_made = Some(b);
                    dm = None;
                } else {
                    // Replace rather than write into: links and special
                    // files, and -f for -l and -s. As GNU's copy.c, a
                    // destination with other names (links preserved) or
                    // a special source (-P) is unlinked first for -l and
                    // -s too: only --attributes-only leaves it.
                    // (GNU says "removed" with -v when it unlinks before
                    // copying, not when -f replaces a link it could not
                    // make.)
                    let unlink_first = o.remove_destination
                        || (!o.attributes_only
                            && ((o.preserve.links && d.nlink() > 1)
                                || (o.deref == Deref::Never && !ft.is_file())));
                    let replace = unlink_first || ((o.hard_link || o.symbolic_link) && o.force);
                    if replace {
                        if let Err(e) = std::fs::remove_file(dst) {
                            return self.fail(format!(
                                "cannot remove {}: {}",
                                q(dst),
                                describe(&e)
                            ));
                        }
                        if o.verbose && unlink_first {
                            common::say(format!("removed {}\n", q(dst)).as_bytes());
                        }
                        dm = None;
                    }
                }
            }
        }
        let src = src.as_path();
        // A file with other links already copied: link the copy to it.
        if keep_link {
            if let Some(first) = self.links.get(&dev_ino(&sm)).cloned() {
                let replaced = dm.is_some() && std::fs::remove_file(dst).is_ok();
                return match std::fs::hard_link(&first, dst) {
                    Ok(()) => {
                        self.verbose(src, dst, backup_made.as_deref());
                        // GNU replaces the name it links over after saying
                        // what it copies, and says so with -v.
                        if replaced && o.verbose {
                            common::say(format!("removed {}\n", q(dst)).as_bytes());
                        }
                        true
                    }
                    Err(e) => self.fail(format!(
                        "cannot create hard link {} to {}: {}",
                        q(dst),
                        q(&first),
                        describe(&e)
                    )),
                };
            }
        }
        if ft.is_dir() {
            return self.copy_dir(src, &sm, dst, dm.is_none(), parent_dev);
        }
        self.verbose(src, dst, backup_made.as_deref());
        let ok = if o.symbolic_link {
            self.make_symlink(src, dst)
        } else if o.hard_link {
            let flags = if follow {
                rustix::fs::AtFlags::SYMLINK_FOLLOW
            } else {
                rustix::fs::AtFlags::empty()
            };
            match rustix::fs::linkat(CWD, src, CWD, dst, flags) {
                Ok(()) => return true,
                Err(e) => self.fail(format!(
                    "cannot create hard link {} to {}: {}",
                    q(dst),
                    q(src),
                    describe(&e.into())
                )),
            }
        } else if ft.is_symlink() {
            match std::fs::read_link(src).and_then(|t| std::os::unix::fs::symlink(t, dst)) {
                Ok(()) => {
                    if let Ok(m) = std::fs::symlink_metadata(dst) {
                        self.made_links.insert(dev_ino(&m));
                    }
                    true
                }
                Err(e) => self.fail(format!(
                    "cannot create symbolic link {}: {}",
                    q(dst),
                    describe(&e)
                )),
            }
        } else if ft.is_file() || copy_as_regular(o, &ft) {
            let mut cx = Ctx {
                o,
                clone_unsupported: &mut self.clone_unsupported,
            };
            let existing = dm.as_ref().map(|md| Existing { md });
            match file::copy_regular(src, &sm, dst, existing, &mut cx) {
                Ok(()) => true,
                Err(m) => self.fail(m),
            }
        } else {
            self.make_special(&sm, dst)
        };
        if !ok {
            return false;
        }
        // A symbolic link made for a file with other names is remembered
        // too: GNU links the later names to it (keep_link is false for -l).
        if keep_link {
            self.links.insert(dev_ino(&sm), dst.to_path_buf());
        }
        if o.symbolic_link || o.hard_link {
            return true;
        }
        let p = o.preserve;
        if p.mode || p.ownership || p.timestamps || p.xattr {
            if let Err(m) = meta::apply(src, &sm, dst, o, ft.is_symlink()) {
                return self.fail(m);
            }
        }
        true
    }

    fn copy_dir(
        &mut self,
        src: &Path,
        sm: &std::fs::Metadata,
        dst: &Path,
        new: bool,
        parent_dev: Option<u64>,
    ) -> bool {
        let o = self.o;
        if self.first_dir == Some(dev_ino(sm)) {
            self.into_self = true;
            let (a, b) = self.top.clone();
            return self.fail(format!(
                "cannot copy a directory, {}, into itself, {}",
                q(&a),
                q(&b)
            ));
        }
        let src_mode = sm.mode() & 0o7777;
        // Made without the permissions the copy may not have yet: others'
        // write (or, with the owner to come, all of group and others').
        let omitted = if o.preserve.ownership {
            0o077
        } else if o.preserve.mode {
            0o022
        } else {
            0
        };
        let base = if o.no_preserve_mode {
            0o777
        } else {
            src_mode & 0o1777
        };
        let made_mode = ((base | 0o700) & !omitted) & !o.umask;
        if new {
            let r = std::fs::DirBuilder::new().mode(made_mode).create(dst);
            if let Err(e) = r {
                return self.fail(format!(
                    "cannot create directory {}: {}",
                    q(dst),
                    describe(&e)
                ));
            }
            if self.first_dir.is_none() {
                if let Ok(m) = std::fs::symlink_metadata(dst) {
                    self.first_dir = Some(dev_ino(&m));
                }
            }
            self.verbose(src, dst, None);
        }
        let mut ok = true;
        let descend = !(o.one_file_system && parent_dev.is_some_and(|d| d != sm.dev()));
        if descend {
            match std::fs::read_dir(src) {
                Ok(rd) => {
                    // In inode order, as GNU reads directories (it is the
                    // order of -v's lines, and the disk's).
                    let mut names: Vec<(u64, std::ffi::OsString)> = Vec::new();
                    for e in rd {
                        match e {
                            Ok(e) => {
                                use std::os::unix::fs::DirEntryExt;
                                names.push((e.ino(), e.file_name()));
                            }
                            Err(e) => {
                                ok = self.fail(format!(
                                    "cannot access {}: {}",
                                    q(src),
                                    describe(&e)
                                ));
                                break;
                            }
                        }
                    }
                    // By inode, names of one file (hard links) in the
                    // order the directory lists them: GNU's order (glibc's
                    // qsort is a stable merge sort), which decides which
                    // name's copy the others link to.
                    names.sort_by_key(|&(ino, _)| ino);
                    for (_, n) in names {
                        ok &= self.copy(&src.join(&n), &dst.join(&n), false, Some(sm.dev()), new);
                        if self.into_self {
                            // Going on would copy the copy again.
                            break;
                        }
                    }
                }
                Err(e) => {
                    ok = self.fail(format!("cannot access {}: {}", q(src), describe(&e)));
                }
            }
        }
        let p = o.preserve;
        if p.mode || p.ownership || p.timestamps || p.xattr {
            if let Err(m) = meta::apply(src, sm, dst, o, false) {
                return self.fail(m);
            }
        }
        if new && !p.mode {
            let want = base & !o.umask;
            if want != made_mode {
                if let Err(e) = meta::chmod(dst, want) {
                    return self.fail(format!(
                        "setting permissions for {}: {}",
                        q(dst),
                        describe(&e)
                    ));
                }
            }
        }
        ok
    }

    /// -s: a symbolic link to the source, which must be absolute unless
    /// the link is made in the current directory.
    /// Replaces `dst` by a hard link to `first` (through a temporary name
    /// beside it, so that `dst` is never missing); "removed" with -v, as
    /// GNU says it.
    fn relink(&mut self, first: &Path, dst: &Path) -> bool {
        let name = dst.file_name().unwrap_or_default().to_string_lossy();
        let tmp = dst.with_file_name(format!(".{name}.ferry-{}", std::process::id()));
        let r = std::fs::hard_link(first, &tmp).and_then(|()| std::fs::rename(&tmp, dst));
        // (A rename onto another name of the same file leaves both.)
        let _ = std::fs::remove_file(&tmp);
        match r {
            Ok(()) => {
                if self.o.verbose {
                    common::say(format!("removed {}\n", q(dst)).as_bytes());
                }
                true
            }
            Err(e) => self.fail(format!(
                "cannot create hard link {} to {}: {}",
                q(dst),
                q(first),
                describe(&e)
            )),
        }
    }

    fn make_symlink(&self, src: &Path, dst: &Path) -> bool {
        if src.is_relative() {
            let dir = dst.parent().filter(|p| !p.as_os_str().is_empty());
            let here = match dir {
                None => true,
                Some(d) => std::fs::metadata(d)
                    .ok()
                    .zip(std::fs::metadata(".").ok())
                    .is_some_and(|(a, b)| dev_ino(&a) == dev_ino(&b)),
            };
            if !here {
                return self.fail(format!(
                    "{}: can make relative symbolic links only in current directory",
                    dst.display()
                ));
            }
        }
        match std::os::unix::fs::symlink(src, dst) {
            Ok(()) => true,
            Err(e) => self.fail(format!(
                "cannot create symbolic link {} to {}: {}",
                q(dst),
                q(src),
                describe(&e)
            )),
        }
    }

    /// A FIFO, device or socket made anew (with -R).
    fn make_special(&self, sm: &std::fs::Metadata, dst: &Path) -> bool {
        use std::os::unix::fs::FileTypeExt;
        let ft = sm.file_type();
        let mode = Mode::from_raw_mode(if self.o.no_preserve_mode {
            0o666
        } else {
            sm.mode() & 0o777
        });
        let (kind, what) = if ft.is_fifo() {
            (FileType::Fifo, "fifo")
        } else if ft.is_char_device() {
            (FileType::CharacterDevice, "special file")
        } else if ft.is_block_device() {
            (FileType::BlockDevice, "special file")
        } else {
            (FileType::Socket, "special file")
        };
        match rustix::fs::mknodat(CWD, dst, kind, mode, sm.rdev()) {
            Ok(()) => true,
            Err(e) => self.fail(format!(
                "cannot create {what} {}: {}",
                q(dst),
                describe(&e.into())
            )),
        }
    }
}

fn is_device(ft: &std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    ft.is_char_device() || ft.is_block_device() || ft.is_socket()
}

/// FIFOs, devices and sockets are read like files unless copied
/// recursively (a socket then fails to open, ENXIO, as GNU's cp reports;
/// it made a socket node and said nothing).
fn copy_as_regular(o: &Opts, ft: &std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    (ft.is_fifo() || is_device(ft)) && (!o.recursive || o.copy_contents)
}
