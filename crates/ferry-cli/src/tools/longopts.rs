//! GNU `getopt_long`'s abbreviations: any unambiguous prefix of a long
//! option stands for it (`cut --out=:` is `--output-delimiter=:`), for
//! every tool, as GNU's tools accept them.
//!
//! The tables are GNU's own long options (coreutils 9.1, diffutils 3.8,
//! grep 3.8, as installed here), in GNU's table order, so that a prefix is
//! ambiguous exactly when it is for GNU, and the possibilities are listed
//! in GNU's order. A prefix that names an option ferry does not implement
//! is expanded and then refused as an unrecognized option.

use super::common::Tool;
use std::ffi::OsString;

/// How a long option takes its value (getopt's `has_arg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    No,
    Required,
    Optional,
}
use Takes::{No, Optional, Required};

/// One tool's options as getopt sees them.
pub struct Spec {
    /// Short options that take a value (getopt's `x:`): the argument after
    /// such an option, when not attached, is its value.
    pub short_values: &'static str,
    /// Every long option, in GNU's table order.
    pub long: &'static [(&'static str, Takes)],
    /// Names that are the same option (getopt does not call a prefix of
    /// both ambiguous): (alias, option).
    pub aliases: &'static [(&'static str, &'static str)],
    /// The tool's status for a usage error.
    pub usage_status: i32,
}

const CAT: Spec = Spec {
    short_values: "",
    long: &[
        ("number-nonblank", No),
        ("number", No),
        ("squeeze-blank", No),
        ("show-nonprinting", No),
        ("show-ends", No),
        ("show-tabs", No),
        ("show-all", No),
        ("help", No),
        ("version", No),
    ],
    aliases: &[],
    usage_status: 1,
};

const CMP: Spec = Spec {
    short_values: "in",
    long: &[
        ("print-bytes", No),
        ("ignore-initial", Required),
        ("verbose", No),
        ("bytes", Required),
        ("quiet", No),
        ("silent", No),
        ("help", No),
        ("version", No),
        ("print-chars", No),
    ],
    aliases: &[],
    usage_status: 2,
};

const CP: Spec = Spec {
    short_values: "St",
    long: &[
        ("archive", No),
        ("attributes-only", No),
        ("backup", Optional),
        ("copy-contents", No),
        ("force", No),
        ("interactive", No),
        ("link", No),
        ("dereference", No),
        ("no-clobber", No),
        ("no-dereference", No),
        ("no-preserve", Required),
        ("parents", No),
        ("preserve", Optional),
        ("recursive", No),
        ("remove-destination", No),
        ("reflink", Optional),
        ("sparse", Required),
        ("strip-trailing-slashes", No),
        ("suffix", Required),
        ("symbolic-link", No),
        ("target-directory", Required),
        ("no-target-directory", No),
        ("update", No),
        ("verbose", No),
        ("one-file-system", No),
        ("context", Optional),
        ("help", No),
        ("version", No),
    ],
    aliases: &[],
    usage_status: 1,
};

const CUT: Spec = Spec {
    short_values: "bcdf",
    long: &[
        ("bytes", Required),
        ("characters", Required),
        ("delimiter", Required),
        ("fields", Required),
        ("complement", No),
        ("only-delimited", No),
        ("output-delimiter", Required),
        ("zero-terminated", No),
        ("help", No),
        ("version", No),
    ],
    aliases: &[],
    usage_status: 1,
};

const DIFF: Spec = Spec {
    short_values: "CDFILSUWXx",
    long: &[
        ("ed", No),
        ("rcs", No),
        ("width", Required),
        ("label", Required),
        ("left-column", No),
        ("tabsize", Required),
        ("paginate", No),
        ("recursive", No),
        ("report-identical-files", No),
        ("new-file", No),
        ("exclude", Required),
        ("exclude-from", Required),
        ("expand-tabs", No),
        ("text", No),
        ("to-file", Required),
        ("ifdef", Required),
        ("ignore-all-space", No),
        ("ignore-blank-lines", No),
        ("ignore-case", No),
        ("ignore-file-name-case", No),
        ("ignore-matching-lines", Required),
        ("ignore-space-change", No),
        ("ignore-tab-expansion", No),
        ("ignore-trailing-space", No),
        ("line-format", Required),
        ("minimal", No),
        ("palette", Required),
        ("help", No),
        ("horizon-lines", Required),
        ("version", No),
        ("binary", No),
        ("brief", No),
        ("changed-group-format", Required),
        ("color", Optional),
        ("context", Optional),
        ("forward-ed", No),
        ("from-file", Required),
        ("inhibit-hunk-merge", No),
        ("initial-tab", No),
        ("new-group-format", Required),
        ("new-line-format", Required),
        ("no-dereference", No),
        ("no-ignore-file-name-case", No),
        ("normal", No),
        ("old-group-format", Required),
        ("old-line-format", Required),
        ("sdiff-merge-assist", No),
        ("show-c-function", No),
        ("show-function-line", Required),
        ("side-by-side", No),
        ("speed-large-files", No),
        ("starting-file", Required),
        ("strip-trailing-cr", No),
        ("suppress-blank-empty", No),
        ("suppress-common-lines", No),
        ("unchanged-group-format", Required),
        ("unchanged-line-format", Required),
        ("unidirectional-new-file", No),
        ("unified", Optional),
    ],
    aliases: &[],
    usage_status: 2,
};

const GREP: Spec = Spec {
    short_values: "ABCDXdefm",
    long: &[
        ("extended-regexp", No),
        ("fixed-strings", No),
        ("basic-regexp", No),
        ("perl-regexp", No),
        ("no-ignore-case", No),
        ("version", No),
        ("help", No),
        ("max-count", Required),
        ("with-filename", No),
        ("word-regexp", No),
        ("no-filename", No),
        ("label", Required),
        ("line-buffered", No),
        ("line-number", No),
        ("line-regexp", No),
        ("only-matching", No),
        ("quiet", No),
        ("silent", No),
        ("text", No),
        ("devices", Required),
        ("directories", Required),
        ("recursive", No),
        ("regexp", Required),
        ("dereference-recursive", No),
        ("include", Required),
        ("ignore-case", No),
        ("exclude", Required),
        ("exclude-from", Required),
        ("exclude-dir", Required),
        ("initial-tab", No),
        ("invert-match", No),
        ("before-context", Required),
        ("binary-files", Required),
        ("byte-offset", No),
        ("after-context", Required),
        ("context", Required),
        ("group-separator", Required),
        ("no-group-separator", No),
        ("no-messages", No),
        ("null", No),
        ("null-data", No),
        ("color", Optional),
        ("colour", Optional),
        ("count", No),
        ("binary", No),
        ("unix-byte-offsets", No),
        ("fixed-regexp", No),
        ("file", Required),
        ("files-with-matches", No),
        ("files-without-match", No),
    ],
    aliases: &[("colour", "color"), ("fixed-regexp", "fixed-strings")],
    usage_status: 2,
};

const WC: Spec = Spec {
    short_values: "",
    long: &[
        ("files0-from", Required),
        ("bytes", No),
        ("chars", No),
        ("lines", No),
        ("max-line-length", No),
        ("words", No),
        ("help", No),
        ("version", No),
    ],
    aliases: &[],
    usage_status: 1,
};

/// The spec of tool `name`, if it has one.
const SORT: Spec = Spec {
    short_values: "koStTy",
    long: &[
        ("ignore-leading-blanks", No),
        ("check", Optional),
        ("compress-program", Required),
        ("debug", No),
        ("dictionary-order", No),
        ("ignore-case", No),
        ("files0-from", Required),
        ("general-numeric-sort", No),
        ("ignore-nonprinting", No),
        ("key", Required),
        ("merge", No),
        ("month-sort", No),
        ("numeric-sort", No),
        ("human-numeric-sort", No),
        ("version-sort", No),
        ("random-sort", No),
        ("random-source", Required),
        ("sort", Required),
        ("output", Required),
        ("reverse", No),
        ("stable", No),
        ("batch-size", Required),
        ("buffer-size", Required),
        ("field-separator", Required),
        ("temporary-directory", Required),
        ("unique", No),
        ("zero-terminated", No),
        ("parallel", Required),
        // ferry's own: binary records.
        ("record-size", Required),
        ("key-bytes", Required),
        ("key-offset", Required),
        ("help", No),
        ("version", No),
    ],
    aliases: &[],
    usage_status: 2,
};

pub fn spec(name: &str) -> Option<&'static Spec> {
    Some(match name {
        "cat" => &CAT,
        "cmp" => &CMP,
        "cp" => &CP,
        "cut" => &CUT,
        "diff" => &DIFF,
        "grep" => &GREP,
        "sort" => &SORT,
        "wc" => &WC,
        _ => return None,
    })
}

impl Spec {
    fn canonical<'a>(&'a self, name: &'a str) -> &'a str {
        self.aliases
            .iter()
            .find(|(a, _)| *a == name)
            .map_or(name, |(_, o)| o)
    }

    fn takes(&self, name: &str) -> Option<Takes> {
        self.long.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    /// The option a long-option word names: itself if exact, else the one
    /// option it is a prefix of. `Err` lists the possibilities when it is
    /// ambiguous; `Ok(None)` when it names none.
    fn resolve(&self, word: &str) -> Result<Option<&'static str>, Vec<&'static str>> {
        if let Some((n, _)) = self.long.iter().find(|(n, _)| *n == word) {
            return Ok(Some(n));
        }
        let hits: Vec<&'static str> = self
            .long
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| n.starts_with(word))
            .collect();
        let Some(first) = hits.first() else {
            return Ok(None);
        };
        let one = self.canonical(first);
        if hits.iter().all(|h| self.canonical(h) == one) {
            Ok(Some(first))
        } else {
            Err(hits)
        }
    }
}

/// True if long option `word` (or the option it abbreviates) of `tool`
/// requires a value.
pub fn takes_value(tool: &str, word: &str) -> bool {
    let Some(spec) = spec(tool) else {
        return false;
    };
    match spec.resolve(word) {
        Ok(Some(full)) => spec.takes(full) == Some(Required),
        _ => false,
    }
}

/// Rewrites every abbreviated long option in `args` to its full name, as
/// getopt_long reads them (values of options that take one are skipped;
/// `--` ends the options). `Err(status)` after reporting an ambiguous
/// abbreviation the way GNU does.
///
/// ```ignore
/// // cut --out=: -f1  →  cut --output-delimiter=: -f1
/// ```
pub fn expand(t: &Tool, spec: &Spec, args: Vec<OsString>) -> Result<Vec<OsString>, i32> {
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let Some(s) = a.to_str() else {
            out.push(a);
            continue;
        };
        if s == "--" {
            out.push(a);
            out.extend(it);
            break;
        }
        if let Some(body) = s.strip_prefix("--") {
            let (word, value) = match body.split_once('=') {
                Some((w, v)) => (w, Some(v)),
                None => (body, None),
            };
            match spec.resolve(word) {
                Ok(Some(full)) => {
                    if value.is_some() && spec.takes(full) == Some(No) {
                        t.usage_error(format_args!("option '--{full}' doesn't allow an argument"));
                        return Err(spec.usage_status);
                    }
                    let takes_next = value.is_none() && spec.takes(full) == Some(Required);
                    out.push(match value {
                        Some(v) => format!("--{full}={v}").into(),
                        None => format!("--{full}").into(),
                    });
                    if takes_next {
                        if let Some(v) = it.next() {
                            out.push(v);
                        }
                    }
                }
                Ok(None) => out.push(a),
                Err(hits) => {
                    let list: Vec<String> = hits.iter().map(|h| format!("'--{h}'")).collect();
                    t.usage_error(format_args!(
                        "option '{s}' is ambiguous; possibilities: {}",
                        list.join(" ")
                    ));
                    return Err(spec.usage_status);
                }
            }
            continue;
        }
        if let Some(cluster) = s.strip_prefix('-').filter(|c| !c.is_empty()) {
            // The first short option that takes a value ends the cluster;
            // with nothing after it in the word, the next word is its value.
            let needs_next = cluster
                .char_indices()
                .find(|(_, c)| spec.short_values.contains(*c))
                .is_some_and(|(i, c)| i + c.len_utf8() == cluster.len());
            out.push(a);
            if needs_next {
                if let Some(v) = it.next() {
                    out.push(v);
                }
            }
            continue;
        }
        out.push(a);
    }
    Ok(out)
}
