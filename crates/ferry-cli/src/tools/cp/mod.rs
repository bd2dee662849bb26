//! `ferry cp`: GNU cp's options on ferry's copy paths. Each regular file's
//! data moves in the kernel (a clone where the file system shares
//! extents, else copy_file_range, on two threads for large files:
//! ferry::transfer::copy_range), holes kept; directories are walked in inode order
//! as GNU's are. This layer reads the options and operands and writes the
//! messages; `tree` decides per file, `file` moves the data, `meta` keeps
//! attributes, `backup` names backups.

mod backup;
mod file;
mod meta;
mod options;
mod parents;
mod progress;
mod samefile;
mod tree;

use super::common::{self, Tool};
use options::{Deref, Interactive, Opts};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

const HELP: &str = "Usage: ferry cp [OPTION]... [-T] SOURCE DEST
  or:  ferry cp [OPTION]... SOURCE... DIRECTORY
  or:  ferry cp [OPTION]... -t DIRECTORY SOURCE...
Copy SOURCE to DEST, or multiple SOURCE(s) to DIRECTORY.

Mandatory arguments to long options are mandatory for short options too.
  -a, --archive                same as -dR --preserve=all
      --atomic                 write to a temporary file beside DEST, fsync it,
                                 then rename it over DEST: readers see the old
                                 file or the new one, never a part
      --attributes-only        don't copy the file data, just the attributes
      --backup[=CONTROL]       make a backup of each existing destination file
  -b                           like --backup but does not accept an argument
      --copy-contents          copy contents of special files when recursive
  -d                           same as --no-dereference --preserve=links
  -f, --force                  if an existing destination file cannot be
                                 opened, remove it and try again (this option
                                 is ignored when the -n option is also used)
  -i, --interactive            prompt before overwrite (overrides a previous -n
                                  option)
  -H                           follow command-line symbolic links in SOURCE
  -l, --link                   hard link files instead of copying
  -L, --dereference            always follow symbolic links in SOURCE
  -n, --no-clobber             do not overwrite an existing file (overrides
                                 a previous -i option)
  -P, --no-dereference         never follow symbolic links in SOURCE
  -p                           same as --preserve=mode,ownership,timestamps
      --preserve[=ATTR_LIST]   preserve the specified attributes (default:
                                 mode,ownership,timestamps), if possible
                                 additional attributes: context, links, xattr,
                                 all
      --no-preserve=ATTR_LIST  don't preserve the specified attributes
      --parents                use full source file name under DIRECTORY
      --progress               show a progress bar on standard error (shown
                                 anyway for copies of 256 MiB or more when
                                 standard error is a terminal)
  -R, -r, --recursive          copy directories recursively
      --reflink[=WHEN]         control clone/CoW copies. See below
      --remove-destination     remove each existing destination file before
                                 attempting to open it (contrast with --force)
      --sparse=WHEN            control creation of sparse files. See below
      --strip-trailing-slashes  remove any trailing slashes from each SOURCE
                                 argument
  -s, --symbolic-link          make symbolic links instead of copying
  -S, --suffix=SUFFIX          override the usual backup suffix
  -t, --target-directory=DIRECTORY  copy all SOURCE arguments into DIRECTORY
  -T, --no-target-directory    treat DEST as a normal file
  -u, --update                 copy only when the SOURCE file is newer
                                 than the destination file or when the
                                 destination file is missing
  -v, --verbose                explain what is being done
  -x, --one-file-system        stay on this file system
  -Z, --context[=CTX]          accepted; security contexts are not set
      --help     display this help and exit
      --version  output version information and exit

By default, sparse SOURCE files are detected by their allocated size and
their holes (SEEK_DATA/SEEK_HOLE) are kept (--sparse=auto); --sparse=always
also turns blocks of zeros into holes; --sparse=never writes every byte.

--reflink=auto (the default) clones the data where the file system can
(FICLONE) and copies it otherwise; --reflink[=always] fails where it cannot;
--reflink=never always copies.

The backup suffix is '~', unless set with --suffix or SIMPLE_BACKUP_SUFFIX.
The version control method may be selected via the --backup option or through
the VERSION_CONTROL environment variable.  Here are the values:

  none, off       never make backups (even if --backup is given)
  numbered, t     make numbered backups
  existing, nil   numbered if numbered backups exist, simple otherwise
  simple, never   always make simple backups

As a special case, cp makes a backup of SOURCE when the force and backup
options are given and SOURCE and DEST are the same name for an existing,
regular file.

Files of 64 MiB and more are copied by two threads: on ext4 one with
copy_file_range and one reading straight into the new file's mapped pages
(the space is allocated first); elsewhere each copies a half with
copy_file_range; a new file is filled unnamed and takes its name once
complete, so that a copy cut short leaves nothing that looks whole. A
file that exists already is filled in order by one thread (a copy cut
short leaves a true prefix, as GNU's), as is any under a file size limit
(ulimit -f).
";

/// A name as GNU's messages quote it.
pub(crate) fn q(p: &Path) -> String {
    common::shell_quote_os(p.as_os_str())
}

fn value(t: &Tool, p: &mut lexopt::Parser) -> Result<String, i32> {
    match p.value() {
        Ok(v) => Ok(v.to_string_lossy().into_owned()),
        Err(e) => {
            t.bad_option(e);
            Err(1)
        }
    }
}

/// Reads the options; `Err` is the exit status after a usage error.
fn parse(
    t: &Tool,
    args: Vec<OsString>,
) -> Result<(Opts, Vec<PathBuf>, Option<PathBuf>, bool), i32> {
    use lexopt::prelude::*;
    let mut o = Opts {
        umask: current_umask(),
        ..Opts::default()
    };
    let mut target_dir: Option<PathBuf> = None;
    let mut no_target_dir = false;
    let mut ops: Vec<PathBuf> = Vec::new();
    let mut backup_arg: Option<Option<String>> = None;
    let mut suffix: Option<String> = None;
    let mut p = lexopt::Parser::from_args(args);
    let usage = |t: &Tool, msg: String| {
        t.usage_error(format_args!("{msg}"));
        1
    };
    while let Some(arg) = common::next_arg_of(t, &mut p, 1)? {
        if let Some(code) = common::common_arg(t, &arg, HELP) {
            return Err(code);
        }
        match arg {
            Short('a') | Long("archive") => {
                o.recursive = true;
                o.deref = Deref::Never;
                options::preserve_list(&mut o, "all", true, "--preserve")
                    .map_err(|m| usage(t, m))?;
            }
            Long("attributes-only") => o.attributes_only = true,
            Short('b') => backup_arg = Some(None),
            Long("backup") => {
                backup_arg = Some(p.optional_value().map(|v| v.to_string_lossy().into_owned()))
            }
            Long("copy-contents") => o.copy_contents = true,
            Short('d') => {
                o.deref = Deref::Never;
                o.preserve.links = true;
            }
            Short('f') | Long("force") => o.force = true,
            Short('i') | Long("interactive") => o.interactive = Interactive::Ask,
            Short('H') => o.deref = Deref::CommandLine,
            Short('l') | Long("link") => o.hard_link = true,
            Short('L') | Long("dereference") => o.deref = Deref::Always,
            Short('n') | Long("no-clobber") => o.interactive = Interactive::Never,
            Short('P') | Long("no-dereference") => o.deref = Deref::Never,
            Short('p') => {
                o.preserve.mode = true;
                o.preserve.ownership = true;
                o.preserve.timestamps = true;
                o.require_preserve = true;
            }
            Long("preserve") => {
                match p.optional_value() {
                    Some(v) => {
                        options::preserve_list(&mut o, &v.to_string_lossy(), true, "--preserve")
                            .map_err(|m| usage(t, m))?
                    }
                    None => {
                        o.preserve.mode = true;
                        o.preserve.ownership = true;
                        o.preserve.timestamps = true;
                    }
                }
                o.require_preserve = true;
            }
            Long("no-preserve") => {
                let v = value(t, &mut p)?;
                options::preserve_list(&mut o, &v, false, "--no-preserve")
                    .map_err(|m| usage(t, m))?;
            }
            Long("parents") => o.parents = true,
            Short('R') | Short('r') | Long("recursive") => o.recursive = true,
            Long("reflink") => {
                let v = p.optional_value().map(|v| v.to_string_lossy().into_owned());
                o.reflink = options::reflink(v.as_deref()).map_err(|m| usage(t, m))?;
                o.reflink_given = true;
            }
            Long("remove-destination") => o.remove_destination = true,
            Long("sparse") => {
                let v = value(t, &mut p)?;
                o.sparse = options::sparse(&v).map_err(|m| usage(t, m))?;
                o.sparse_given = true;
            }
            Long("strip-trailing-slashes") => o.strip_trailing_slashes = true,
            Short('s') | Long("symbolic-link") => o.symbolic_link = true,
            Short('S') | Long("suffix") => {
                suffix = Some(value(t, &mut p)?);
                backup_arg.get_or_insert(None);
            }
            Short('t') | Long("target-directory") => {
                if target_dir.is_some() {
                    return Err(usage(t, "multiple target directories specified".into()));
                }
                target_dir = Some(value(t, &mut p)?.into());
            }
            Short('T') | Long("no-target-directory") => no_target_dir = true,
            Short('u') | Long("update") => o.update = true,
            Short('v') | Long("verbose") => o.verbose = true,
            Short('x') | Long("one-file-system") => o.one_file_system = true,
            Short('Z') => {}
            Long("context") => {
                let _ = p.optional_value();
            }
            Long("atomic") => o.atomic = true,
            Long("progress") => o.progress = true,
            Value(v) => ops.push(v.into()),
            other => {
                t.bad_option(other.unexpected());
                return Err(1);
            }
        }
    }
    if let Some(control) = backup_arg {
        o.backup = Some(options::backup_type(control.as_deref()).map_err(|m| usage(t, m))?);
        o.suffix = suffix
            .or_else(|| std::env::var("SIMPLE_BACKUP_SUFFIX").ok())
            .filter(|s| !s.is_empty() && !s.contains('/'))
            .unwrap_or_else(|| "~".into());
    }
    options::finish(&mut o, t).map_err(|m| usage(t, m))?;
    if no_target_dir && target_dir.is_some() {
        return Err(usage(
            t,
            "cannot combine --target-directory (-t) and --no-target-directory (-T)".into(),
        ));
    }
    Ok((o, ops, target_dir, no_target_dir))
}

fn current_umask() -> u32 {
    let old = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
    rustix::process::umask(old);
    old.bits() as u32
}

pub fn main(t: &Tool, args: Vec<OsString>) -> i32 {
    let (o, mut ops, target_dir, no_target_dir) = match parse(t, args) {
        Ok(v) => v,
        Err(code) => return code,
    };
    if o.strip_trailing_slashes {
        for op in &mut ops {
            *op = strip_slashes(op);
        }
    }
    let (sources, dest_dir, dest) = if let Some(d) = target_dir {
        if ops.is_empty() {
            t.usage_error(format_args!("missing file operand"));
            return 1;
        }
        match std::fs::metadata(&d) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                t.error(format_args!("target directory {}: Not a directory", q(&d)));
                return 1;
            }
            Err(e) => {
                t.error(format_args!(
                    "target directory {}: {}",
                    q(&d),
                    common::describe(&e)
                ));
                return 1;
            }
        }
        (ops, Some(d), None)
    } else {
        match ops.len() {
            0 => {
                t.usage_error(format_args!("missing file operand"));
                return 1;
            }
            1 => {
                t.usage_error(format_args!(
                    "missing destination file operand after {}",
                    q(&ops[0])
                ));
                return 1;
            }
            _ => {
                let last = ops.pop().unwrap_or_default();
                let st = std::fs::metadata(&last);
                let is_dir = st.as_ref().is_ok_and(|m| m.is_dir());
                if no_target_dir {
                    if ops.len() > 1 {
                        t.usage_error(format_args!(
                            "extra operand {}",
                            q(ops.get(2).unwrap_or(&last))
                        ));
                        return 1;
                    }
                    (ops, None, Some(last))
                } else if is_dir {
                    (ops, Some(last), None)
                } else if ops.len() > 1 || o.parents {
                    if o.parents {
                        t.usage_error(format_args!(
                            "with --parents, the destination must be a directory"
                        ));
                        return 1;
                    }
                    let why = match st {
                        Ok(_) => "Not a directory".to_string(),
                        Err(e) => common::describe(&e),
                    };
                    t.error(format_args!("target {}: {why}", q(&last)));
                    return 1;
                } else {
                    (ops, None, Some(last))
                }
            }
        }
    };
    let mut c = tree::Copier::new(t, &o);
    c.track_sources = dest_dir.is_some();
    let mut status = 0;
    for src in &sources {
        let ok = match (&dest_dir, &dest) {
            (Some(d), _) if o.parents => c.copy_with_parents(src, d),
            (Some(d), _) => c.copy_top(src, &d.join(base_name(src))),
            (None, Some(d)) if o.force && o.backup.is_some() && src == d && is_file(d) => {
                // `cp -f -b F F`: GNU's special case, a backup copy of F.
                let kind = o.backup.unwrap_or(options::Backup::Simple);
                let to = backup::name(d, kind, &o.suffix);
                let plain = Opts {
                    backup: None,
                    ..o.clone()
                };
                tree::Copier::new(t, &plain).copy_top(src, &to)
            }
            (None, Some(d)) => c.copy_top(src, d),
            (None, None) => false,
        };
        if !ok {
            status = 1;
        }
    }
    common::said_wrong(t, status)
}

fn is_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file())
}

/// The last component of an operand, trailing slashes aside (`dir/` is
/// `dir`; `.` stays `.`).
fn base_name(p: &Path) -> PathBuf {
    let s = strip_slashes(p);
    let b = s.as_os_str().as_bytes();
    let start = b.iter().rposition(|&c| c == b'/').map_or(0, |i| i + 1);
    PathBuf::from(std::ffi::OsStr::from_bytes(&b[start..]))
}

fn strip_slashes(p: &Path) -> PathBuf {
    let b = p.as_os_str().as_bytes();
    let mut end = b.len();
    while end > 1 && b[end - 1] == b'/' {
        end -= 1;
    }
    PathBuf::from(std::ffi::OsStr::from_bytes(&b[..end]))
}
