//! `ferry cp`'s options: what each GNU option turns on, and the values of
//! `--preserve=`, `--sparse=`, `--reflink=` and `--backup=` read as GNU's
//! argmatch reads them (any unambiguous prefix of a valid word).

use crate::tools::common::Tool;

/// Which symbolic links are followed (-L, -H, -P).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deref {
    /// Not said: -P with -R (and -a, -d), -L otherwise.
    Unset,
    Never,
    /// -H: only the operands on the command line.
    CommandLine,
    Always,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sparse {
    Never,
    Auto,
    Always,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reflink {
    Never,
    Auto,
    Always,
}

/// GNU's version control for backups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backup {
    None,
    Simple,
    Existing,
    Numbered,
}

/// How `-i` and `-n` answer for an existing destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interactive {
    Replace,
    Ask,
    Never,
}

/// What `--preserve` keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Preserve {
    pub mode: bool,
    pub ownership: bool,
    pub timestamps: bool,
    pub links: bool,
    pub xattr: bool,
    pub context: bool,
}

#[derive(Clone, Debug)]
pub struct Opts {
    pub recursive: bool,
    pub deref: Deref,
    pub preserve: Preserve,
    /// A failure to preserve is an error (-p, --preserve=), not only
    /// attempted (-a's xattrs and contexts).
    pub require_preserve: bool,
    pub require_xattr: bool,
    /// --no-preserve=mode: new files get the default mode (0666 or 0777,
    /// less the umask), not the source's.
    pub no_preserve_mode: bool,
    pub interactive: Interactive,
    pub force: bool,
    pub update: bool,
    pub verbose: bool,
    pub hard_link: bool,
    pub symbolic_link: bool,
    pub remove_destination: bool,
    pub parents: bool,
    pub attributes_only: bool,
    pub one_file_system: bool,
    pub copy_contents: bool,
    pub strip_trailing_slashes: bool,
    pub sparse: Sparse,
    pub reflink: Reflink,
    /// Whether --sparse or --reflink was given (they only combine as auto).
    pub sparse_given: bool,
    pub reflink_given: bool,
    pub backup: Option<Backup>,
    pub suffix: String,
    pub atomic: bool,
    pub progress: bool,
    /// The process umask, for the modes of new files.
    pub umask: u32,
}

impl Default for Opts {
    fn default() -> Opts {
        Opts {
            recursive: false,
            deref: Deref::Unset,
            preserve: Preserve::default(),
            require_preserve: false,
            require_xattr: false,
            no_preserve_mode: false,
            interactive: Interactive::Replace,
            force: false,
            update: false,
            verbose: false,
            hard_link: false,
            symbolic_link: false,
            remove_destination: false,
            parents: false,
            attributes_only: false,
            one_file_system: false,
            copy_contents: false,
            strip_trailing_slashes: false,
            sparse: Sparse::Auto,
            reflink: Reflink::Auto,
            sparse_given: false,
            reflink_given: false,
            backup: None,
            suffix: "~".into(),
            atomic: false,
            progress: false,
            umask: 0o022,
        }
    }
}

/// GNU's argmatch: `arg` is one of `words` (each with its meaning) or an
/// unambiguous prefix of them (prefixes of synonyms are not ambiguous).
/// `Err` is the message GNU prints, with the list of valid arguments.
pub fn argmatch<T: Copy + PartialEq>(
    arg: &str,
    words: &[(&str, T)],
    context: &str,
) -> Result<T, String> {
    if let Some((_, v)) = words.iter().find(|(w, _)| *w == arg) {
        return Ok(*v);
    }
    let hits: Vec<T> = words
        .iter()
        .filter(|(w, _)| !arg.is_empty() && w.starts_with(arg))
        .map(|(_, v)| *v)
        .collect();
    let problem = match hits.first() {
        Some(first) if hits.iter().all(|h| h == first) => return Ok(*first),
        Some(_) => "ambiguous",
        None => "invalid",
    };
    let mut msg = format!("{problem} argument '{arg}' for '{context}'\nValid arguments are:");
    let mut last: Option<T> = None;
    for (w, v) in words {
        if last == Some(*v) {
            msg.push_str(&format!(", '{w}'"));
        } else {
            msg.push_str(&format!("\n  - '{w}'"));
        }
        last = Some(*v);
    }
    Err(msg)
}

const BACKUPS: &[(&str, Backup)] = &[
    ("none", Backup::None),
    ("off", Backup::None),
    ("simple", Backup::Simple),
    ("never", Backup::Simple),
    ("existing", Backup::Existing),
    ("nil", Backup::Existing),
    ("numbered", Backup::Numbered),
    ("t", Backup::Numbered),
];

/// The version control `--backup[=CONTROL]` asks for: CONTROL, else
/// $VERSION_CONTROL, else `existing`.
pub fn backup_type(control: Option<&str>) -> Result<Backup, String> {
    match control {
        Some(c) => argmatch(c, BACKUPS, "backup type"),
        None => match std::env::var("VERSION_CONTROL") {
            Ok(v) if !v.is_empty() => argmatch(&v, BACKUPS, "$VERSION_CONTROL"),
            _ => Ok(Backup::Existing),
        },
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Item {
    Mode,
    Timestamps,
    Ownership,
    Links,
    Context,
    Xattr,
    All,
}

/// Applies a `--preserve=LIST` (`on`) or `--no-preserve=LIST`.
pub fn preserve_list(o: &mut Opts, list: &str, on: bool, option: &str) -> Result<(), String> {
    const ITEMS: &[(&str, Item)] = &[
        ("mode", Item::Mode),
        ("timestamps", Item::Timestamps),
        ("ownership", Item::Ownership),
        ("links", Item::Links),
        ("context", Item::Context),
        ("xattr", Item::Xattr),
        ("all", Item::All),
    ];
    for word in list.split(',') {
        let p = &mut o.preserve;
        match argmatch(word, ITEMS, option)? {
            Item::Mode => {
                p.mode = on;
                o.no_preserve_mode = !on;
            }
            Item::Timestamps => p.timestamps = on,
            Item::Ownership => p.ownership = on,
            Item::Links => p.links = on,
            Item::Context => p.context = on,
            Item::Xattr => {
                p.xattr = on;
                o.require_xattr = on;
            }
            Item::All => {
                *p = Preserve {
                    mode: on,
                    ownership: on,
                    timestamps: on,
                    links: on,
                    xattr: on,
                    context: on,
                };
                // `all` tries contexts and xattrs without failing for them.
                o.require_xattr = false;
                o.no_preserve_mode = !on;
            }
        }
    }
    Ok(())
}

pub fn sparse(arg: &str) -> Result<Sparse, String> {
    argmatch(
        arg,
        &[
            ("never", Sparse::Never),
            ("auto", Sparse::Auto),
            ("always", Sparse::Always),
        ],
        "--sparse",
    )
}

pub fn reflink(arg: Option<&str>) -> Result<Reflink, String> {
    match arg {
        None => Ok(Reflink::Always),
        Some(a) => argmatch(
            a,
            &[
                ("auto", Reflink::Auto),
                ("always", Reflink::Always),
                ("never", Reflink::Never),
            ],
            "--reflink",
        ),
    }
}

/// Checks the combinations GNU refuses, and settles what was left unsaid.
/// `Err` is a usage error's message.
pub fn finish(o: &mut Opts, t: &Tool) -> Result<(), String> {
    let _ = t;
    if o.hard_link && o.symbolic_link {
        return Err("cannot make both hard and symbolic links".into());
    }
    if o.backup.is_some() && o.interactive == Interactive::Never {
        return Err("options --backup and --no-clobber are mutually exclusive".into());
    }
    if o.reflink_given && o.reflink == Reflink::Always && o.sparse != Sparse::Auto {
        return Err("--reflink can be used only with --sparse=auto".into());
    }
    if o.deref == Deref::Unset {
        o.deref = if o.recursive && !o.hard_link {
            Deref::Never
        } else {
            Deref::Always
        };
    }
    if o.backup == Some(Backup::None) {
        o.backup = None;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argmatch_takes_prefixes_and_lists_synonyms_together() {
        assert_eq!(argmatch("nu", BACKUPS, "backup type"), Ok(Backup::Numbered));
        assert_eq!(argmatch("of", BACKUPS, "backup type"), Ok(Backup::None));
        let e = argmatch("n", BACKUPS, "backup type").unwrap_err();
        assert!(e.starts_with("ambiguous argument 'n' for 'backup type'"));
        let e = argmatch("x", BACKUPS, "backup type").unwrap_err();
        assert_eq!(
            e,
            "invalid argument 'x' for 'backup type'\nValid arguments are:\n  - 'none', 'off'\n  - 'simple', 'never'\n  - 'existing', 'nil'\n  - 'numbered', 't'"
        );
    }
}
