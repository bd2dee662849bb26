//! `ferry grep` against GNU grep, in the C and UTF-8 locales.

#[path = "grep/options.rs"]
mod options;
#[path = "grep/recursive.rs"]
mod recursive;
#[path = "grep/regex.rs"]
mod regex;

use crate::gnu;
use gnu::{s, same, Corpus};

const LOCALES: [&str; 2] = ["C", "C.UTF-8"];

/// Lines of words from a small vocabulary, so words, prefixes and whole
/// lines repeat and every option has something to select.
fn words(n_lines: usize, seed: u64) -> Vec<u8> {
    const W: &[&str] = &[
        "ab", "abc", "cab", "the", "The", "THE", "x.y", "a*b", "foo_bar", "foo", "é", "Été",
        "日本", "", " ", "\t", "12", "a1", "(ab)", "[x]",
    ];
    let mut x = seed | 1;
    let mut v = Vec::new();
    for _ in 0..n_lines {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = (x % 6) as usize;
        let mut line = Vec::new();
        for j in 0..k {
            if j > 0 {
                line.push(if (x >> (j + 8)) & 3 == 0 { b'-' } else { b' ' });
            }
            line.extend_from_slice(W[((x >> (8 * j + 16)) % W.len() as u64) as usize].as_bytes());
        }
        v.extend_from_slice(&line);
        v.push(b'\n');
    }
    v
}

fn corpus() -> (Corpus, Vec<String>) {
    let c = Corpus::new();
    std::fs::write(c.file("words"), words(3000, 5)).unwrap();
    // Lines straddling the 4 MiB regions and a last line with no newline.
    let mut big = words(200_000, 9);
    big.extend_from_slice(b"tail ab the");
    std::fs::write(c.file("big-words"), big).unwrap();
    // A NUL far into a text file: binary from GNU's buffer holding it
    // (checked on its own: GNU's buffer grows with the longest line of
    // earlier files, and where it cuts then differs).
    let mut late = b"zzz\n".repeat(40_000);
    late.extend_from_slice(b"ab\0ab\nab\n");
    std::fs::write(c.file("late-nul"), late).unwrap();
    let mut files = c.files.clone();
    files.retain(|f| f != "text" && f != "long-line");
    files.push("words".into());
    (c, files)
}

#[test]
fn options_on_every_input_in_both_locales() {
    let (c, files) = corpus();
    let opts: &[&[&str]] = &[
        &[],
        &["-c"],
        &["-n"],
        &["-v"],
        &["-i"],
        &["-w"],
        &["-x"],
        &["-l"],
        &["-L"],
        &["-q"],
        &["-o"],
        &["-cv"],
        &["-nv"],
        &["-oi"],
        &["-ow"],
        &["-xc"],
        &["-wc"],
        &["-H"],
        &["-in"],
        &["-lv"],
        &["-m", "3"],
        &["-c", "-m", "2"],
        &["-on"],
    ];
    let patterns: &[&[&str]] = &[
        &["ab"],
        &["the"],
        &["-F", "x.y"],
        &["-F", "a*b"],
        &["x.y"],
        &["^ab"],
        &["ab$"],
        &["-E", "ab|the"],
        &["-E", "(ab)+c?"],
        &["-E", "a{1,2}b"],
        &["[[:digit:]]"],
        &["[^a-z ]"],
        &["é"],
        &["日本"],
        &["a*"],
        &["\\(ab\\)"],
        &["foo\\|cab"],
        &["-e", "the", "-e", "12"],
        &["-E", "\\<ab\\>"],
        &[""],
    ];
    for loc in LOCALES {
        let env = [("LC_ALL", loc)];
        for o in opts {
            for p in patterns {
                // Each pattern on all the small files at once (names
                // prefixed), and on the binary ones singly.
                let mut a = s(o);
                a.extend(s(p));
                let mut all = a.clone();
                all.extend(files.iter().cloned());
                same("grep", &all, None, c.path(), &env);
                for f in ["nul", "late-nul"] {
                    let mut one = a.clone();
                    one.push(f.to_string());
                    same("grep", &one, None, c.path(), &env);
                }
            }
        }
    }
}

#[test]
fn large_input_across_regions() {
    let (c, _) = corpus();
    for loc in LOCALES {
        let env = [("LC_ALL", loc)];
        for a in [
            &["-c", "the"][..],
            &["-n", "ab$"],
            &["-v", "-c", "a"],
            &["-o", "-E", "ab|x.y"],
            &["-w", "-c", "foo"],
            &["-x", "-n", "12"],
            &["-i", "-c", "the"],
        ] {
            let mut a = s(a);
            a.push("big-words".into());
            same("grep", &a, None, c.path(), &env);
        }
    }
}

/// Counting a file of 64 MiB or more runs on two cores, half a block
/// each; a NUL in either half (or near a half's edge) must still turn the
/// file binary exactly where GNU does.
#[test]
fn counting_a_large_file_on_two_cores() {
    let c = gnu::Corpus::new();
    let base = words(400_000, 11);
    let mut base = base.repeat(((72 << 20) / base.len()).max(1) + 1);
    base.truncate(72 << 20);
    std::fs::write(c.file("clean"), &base).unwrap();
    // NULs: in the second half of the first 16 MiB block, right at the
    // start of a later block, and in the last line (no newline after it).
    let mut nul = base.clone();
    nul[12 << 20] = 0;
    std::fs::write(c.file("nul-second-half"), &nul).unwrap();
    let mut nul = base.clone();
    nul[(32 << 20) + 3] = 0;
    std::fs::write(c.file("nul-later-block"), &nul).unwrap();
    let mut nul = base.clone();
    nul.extend_from_slice(b"ab\0 the");
    std::fs::write(c.file("nul-at-end"), &nul).unwrap();
    for f in ["clean", "nul-second-half", "nul-later-block", "nul-at-end"] {
        for a in [
            &["-c", "the"][..],
            &["-vc", "ab"],
            &["-c", "-w", "foo"],
            &["-ci", "THE"],
        ] {
            let mut a = s(a);
            a.push(f.into());
            same("grep", &a, None, c.path(), &[("LC_ALL", "C")]);
        }
    }
}

#[test]
fn stdin_errors_and_statuses() {
    let (c, _) = corpus();
    let text = words(5000, 3);
    for loc in LOCALES {
        let env = [("LC_ALL", loc)];
        for a in [
            &["ab"][..],
            &["-c", "ab"],
            &["-n", "the", "-"],
            &["-H", "ab"],
            &["ab", "-", "words"],
            &["--label=IN", "-H", "ab"],
            &["nomatchatall"],
            &["-q", "ab"],
            &["-q", "nomatch"],
        ] {
            same("grep", &s(a), Some(&text), c.path(), &env);
        }
        for a in [
            &["ab", "missing"][..],
            &["ab", "missing", "words"],
            &["-s", "ab", "missing", "words"],
            &["-q", "ab", "missing", "words"],
            &["-q", "ab", "words", "missing"],
            &["-q", "nomatch", "words", "missing"],
            &["ab", "."],
            &["-E", "a{1"],
            &["-E", "(ab"],
            &["\\(ab"],
            &["[ab"],
            &["-c", "ab", "words", "empty", "one-byte"],
            &["-l", "ab", "words", "empty", "nul", "binary"],
            &["-L", "ab", "words", "empty", "nul"],
            &[],
            &["--bogus", "x"],
            &["-e"],
        ] {
            same("grep", &s(a), None, c.path(), &env);
        }
    }
}

#[test]
fn pattern_files() {
    let (c, _) = corpus();
    std::fs::write(c.file("pats"), b"the\n12\n").unwrap();
    std::fs::write(c.file("nopats"), b"").unwrap();
    for a in [
        &["-f", "pats", "words"][..],
        &["-c", "-f", "pats", "words"],
        &["-f", "nopats", "words"],
        &["-v", "-c", "-f", "nopats", "words"],
        &["-f", "missing", "words"],
    ] {
        same("grep", &s(a), None, c.path(), &[]);
    }
}

#[test]
fn a_full_disk_is_trouble() {
    let (c, _) = corpus();
    gnu::full_disk("grep", &["ab", "words"], c.path());
}

/// `ferry grep . f >> f` had no output-is-input check: it read the lines
/// it had just appended, until the disk was full. GNU grep refuses ("f:
/// input file is also the output", status 2) where it writes lines (not
/// for -c, -l, -q or -m 1), whatever is left to read (`> f` too), for
/// standard input as for a named file; /dev/null as output is not checked.
#[test]
fn grep_refuses_input_that_is_its_output() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in [
        "grep . f >> f",
        "grep . f > f",
        "grep -s . f >> f",
        "grep -c . f >> f",
        "grep -m1 . f >> f",
        "grep -m2 . f >> f",
        "grep -l . f >> f",
        "grep -q . f >> f",
        "grep . - < f >> f",
        "grep -H . g f >> g",
        "grep -r . . >> f",
        "grep . f > /dev/null",
    ] {
        let mut seen = Vec::new();
        for prog in ["$FERRY ", ""] {
            let r = gnu::sh(
                dir.path(),
                &format!("printf 'a\\nb\\n' > f; printf 'c\\n' > g; timeout 3 {prog}{cmd}; echo \"status $?\"; cat f g"),
            );
            seen.push((
                String::from_utf8_lossy(&r.stdout).into_owned(),
                gnu::as_gnu(&r.stderr, "grep"),
            ));
        }
        assert_eq!(seen[0], seen[1], "{cmd}");
    }
}

/// File names are bytes: grep printed `bad\xff\xfe.txt` as
/// `bad\u{FFFD}\u{FFFD}.txt` in -l, -lZ, -H, -c output and in its
/// messages, so `ferry grep -lZ x * | xargs -0 ls` failed. GNU writes the
/// bytes, unquoted.
#[test]
fn grep_writes_file_names_as_bytes() {
    let (dir, names) = gnu::non_utf8_names();
    for opts in [
        &["-l", "x"][..],
        &["-lZ", "x"],
        &["-H", "x"],
        &["-c", "."],
        &["-r", "y"],
        &["-rL", "x"],
        &["x"],
    ] {
        let mut args: Vec<std::ffi::OsString> = opts.iter().map(Into::into).collect();
        args.extend(names.iter().cloned());
        gnu::same_bytes("grep", &args, dir.path());
    }
}
