//! `--parents`: the source's whole name under the directory, its
//! directories made on the way (and given the source's attributes when
//! they are preserved).

use super::meta;
use super::q;
use super::tree::Copier;
use crate::tools::common::{self, describe};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Component, Path, PathBuf};

impl Copier<'_> {
    /// Copies `src` to `dir/src`, making the directories between.
    pub fn copy_with_parents(&mut self, src: &Path, dir: &Path) -> bool {
        let o = self.o;
        if let Err(e) = std::fs::symlink_metadata(src) {
            self.t
                .error(format_args!("cannot stat {}: {}", q(src), describe(&e)));
            return false;
        }
        // The name under `dir`: without a leading `/`.
        let rel: PathBuf = src
            .components()
            .filter(|c| !matches!(c, Component::RootDir))
            .collect();
        let mut dst = dir.to_path_buf();
        dst.push(&rel);
        // Each directory on the way: source, copy, source's stat, and the
        // mode the copy is to have once it was made with room to write.
        let mut made: Vec<(PathBuf, PathBuf, std::fs::Metadata, Option<u32>)> = Vec::new();
        let mut cur_src = if src.is_absolute() {
            PathBuf::from("/")
        } else {
            PathBuf::new()
        };
        let mut cur_dst = dir.to_path_buf();
        let parts: Vec<_> = rel.components().collect();
        for c in parts.iter().take(parts.len().saturating_sub(1)) {
            cur_src.push(c);
            cur_dst.push(c);
            let sm = match std::fs::metadata(&cur_src) {
                Ok(m) if m.is_dir() => m,
                Ok(_) => {
                    self.t.error(format_args!(
                        "cannot make directory {}: Not a directory",
                        q(&cur_dst)
                    ));
                    return false;
                }
                Err(e) => {
                    self.t.error(format_args!(
                        "cannot stat {}: {}",
                        q(&cur_src),
                        describe(&e)
                    ));
                    return false;
                }
            };
            let mut fix = None;
            match std::fs::symlink_metadata(&cur_dst) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    self.t.error(format_args!(
                        "{} exists but is not a directory",
                        q(&cur_dst)
                    ));
                    return false;
                }
                Err(_) => {
                    // The source's mode (the default one with
                    // --no-preserve=mode), less the umask.
                    let want = if o.no_preserve_mode {
                        0o777
                    } else {
                        sm.mode_bits() & 0o777
                    } & !o.umask;
                    let mode = want | 0o700;
                    if mode != want && !o.preserve.mode {
                        fix = Some(want);
                    }
                    if let Err(e) = std::fs::DirBuilder::new().mode(mode).create(&cur_dst) {
                        self.t.error(format_args!(
                            "cannot make directory {}: {}",
                            q(&cur_dst),
                            describe(&e)
                        ));
                        return false;
                    }
                    if o.verbose {
                        let mut line = cur_src.as_os_str().as_bytes().to_vec();
                        line.extend_from_slice(b" -> ");
                        line.extend_from_slice(cur_dst.as_os_str().as_bytes());
                        line.push(b'\n');
                        common::say(&line);
                    }
                }
            }
            made.push((cur_src.clone(), cur_dst.clone(), sm, fix));
        }
        let mut ok = self.copy_top(src, &dst);
        let p = o.preserve;
        for (s, d, sm, fix) in made.iter().rev() {
            if let Some(mode) = fix {
                if let Err(e) = meta::chmod(d, *mode) {
                    self.t.error(format_args!(
                        "setting permissions for {}: {}",
                        q(d),
                        describe(&e)
                    ));
                    ok = false;
                }
            }
            if p.mode || p.ownership || p.timestamps || p.xattr {
                if let Err(m) = meta::apply(s, sm, d, o, false) {
                    self.t.error(format_args!("{m}"));
                    ok = false;
                }
            }
        }
        ok
    }
}

trait ModeBits {
    fn mode_bits(&self) -> u32;
}

impl ModeBits for std::fs::Metadata {
    fn mode_bits(&self) -> u32 {
        std::os::unix::fs::MetadataExt::mode(self) & 0o7777
    }
}
