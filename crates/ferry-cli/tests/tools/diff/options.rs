//! `ferry diff`'s options against GNU diff 3.8 itself: the ignore options
//! (-i -w -b -B -E -Z --strip-trailing-cr), context format (-c, -C N),
//! -p, -t, -T, side-by-side (-y, -W, --left-column,
//! --suppress-common-lines), --suppress-blank-empty, --color and
//! --palette, directories (-r, -N, --unidirectional-new-file, -x, -X,
//! -S, --no-dereference), --from-file/--to-file and usage errors.
//!
//! Every comparison is byte for byte (stdout, stderr with the tool's name
//! aside, exit status), on generated inputs. The edit scripts here come
//! from the same line diff as the `diff` module's (tests/tools/diff.rs), slid as GNU slides its
//! change groups; the inputs are small-vocabulary texts with few edits,
//! where that gives GNU's script.

use crate::gnu;
use gnu::{s, same, Corpus, Rng};
use std::path::Path;

const WORDS: &[&str] = &[
    "alpha",
    "Beta",
    "gamma",
    "x",
    "int main()",
    "_f",
    "$v",
    "{",
    "}",
];

/// A line of words with some white space.
fn text_line(r: &mut Rng) -> String {
    let n = 1 + r.below(3);
    let mut l = String::new();
    if r.below(4) == 0 {
        l.push_str(r.pick(&["  ", "\t", " "]));
    }
    for k in 0..n {
        if k > 0 {
            l.push_str(r.pick(&[" ", " ", "\t", "  "]));
        }
        l.push_str(r.pick(WORDS));
    }
    l
}

/// `l` changed only in ways some ignore option forgives.
fn variant(r: &mut Rng, l: &str) -> String {
    match r.below(7) {
        0 => l.to_uppercase(),
        1 => l.replace(' ', "  "),
        2 => format!("{l} \t"),
        3 => l.replace(' ', ""),
        4 => l.replace('\t', "        "),
        5 => format!("{l}\r"),
        _ => format!(" {l}"),
    }
}

/// A pair of files: random lines, then edits, blank-line changes and
/// white-space or case variants.
fn pair(r: &mut Rng, n: usize) -> (String, String) {
    let a: Vec<String> = (0..n)
        .map(|_| {
            if r.below(6) == 0 {
                String::new()
            } else {
                text_line(r)
            }
        })
        .collect();
    let mut b = a.clone();
    for _ in 0..1 + r.below(5) {
        let at = r.below(b.len() as u64 + 1) as usize;
        match r.below(6) {
            0 if at < b.len() => {
                b.remove(at);
            }
            1 => b.insert(at, text_line(r)),
            2 => b.insert(at, String::new()),
            3 if at < b.len() => b[at] = text_line(r),
            _ if at < b.len() => b[at] = variant(r, &b[at]),
            _ => {}
        }
    }
    let join = |v: &[String], nl: bool| {
        let mut t = v.join("\n");
        if nl && !v.is_empty() {
            t.push('\n');
        }
        t
    };
    let nl_a = r.below(6) != 0;
    let nl_b = r.below(6) != 0;
    (join(&a, nl_a), join(&b, nl_b))
}

fn both(c: &Corpus, x: &str, y: &str) {
    std::fs::write(c.file("a"), x).unwrap();
    std::fs::write(c.file("b"), y).unwrap();
}

fn check(c: &Corpus, flags: &[&str]) {
    let mut args = s(flags);
    args.extend(s(&["a", "b"]));
    same("diff", &args, None, c.path(), &[]);
}

#[test]
fn ignore_options_in_every_format() {
    let c = Corpus::new();
    let mut r = Rng(0x2545f4914f6cdd1d);
    let ignores: &[&[&str]] = &[
        &["-i"],
        &["-w"],
        &["-b"],
        &["-B"],
        &["-E"],
        &["-Z"],
        &["--strip-trailing-cr"],
        &["-i", "-b"],
        &["-w", "-B"],
        &["-b", "-B"],
        &["-Z", "-i", "-E"],
    ];
    let formats: &[&[&str]] = &[
        &[],
        &["-u"],
        &["-c"],
        &["-U1"],
        &["-q"],
        &["-s"],
        &["-C", "0"],
    ];
    for case in 0..60 {
        let (x, y) = pair(&mut r, [0usize, 1, 3, 8, 20, 40][case % 6]);
        both(&c, &x, &y);
        for ig in ignores {
            for f in formats {
                let mut flags = ig.to_vec();
                flags.extend_from_slice(f);
                check(&c, &flags);
            }
        }
    }
}

#[test]
fn context_format_and_function_lines() {
    let c = Corpus::new();
    let mut r = Rng(0x853c49e6748fea9b);
    for case in 0..80 {
        let (x, y) = pair(&mut r, [2usize, 10, 30, 60][case % 4]);
        both(&c, &x, &y);
        for f in [
            &["-c"][..],
            &["-C", "1"],
            &["-C0"],
            &["--context=5"],
            &["-c", "-p"],
            &["-u", "-p"],
            &["-U", "0", "-p"],
            &["-p"],
            &["-t"],
            &["-u", "-t"],
            &["-T"],
            &["-u", "-T"],
            &["-c", "-T"],
            &["-c", "--label", "one", "--label", "two"],
            &["--suppress-blank-empty"],
            &["-u", "--suppress-blank-empty"],
            &["-c", "--suppress-blank-empty", "-T"],
        ] {
            check(&c, f);
        }
    }
    // A function line longer than 40 bytes, with blanks at the cut.
    let long = "abcdefghij klmnopqrs tuvwxyz0123456789 AB      CD\n1\n2\n3\n4\n5\n";
    both(&c, long, &long.replace("\n5\n", "\n6\n"));
    check(&c, &["-u", "-p"]);
    check(&c, &["-c", "--show-c-function"]);
}

#[test]
fn side_by_side_layouts() {
    let c = Corpus::new();
    let mut r = Rng(0xda942042e4dd58b5);
    let mut widths: Vec<String> = (1..=40).map(|w| w.to_string()).collect();
    widths.extend(["47", "60", "79", "80", "100", "130", "131", "200"].map(String::from));
    for case in 0..24 {
        let (mut x, mut y) = pair(&mut r, [1usize, 6, 15][case % 3]);
        if case % 4 == 1 {
            // Long lines, cut at the column's edge.
            x.push_str("a fairly long line\twith\ttabs that runs past the column edge and more and more words\n");
            y.push_str(
                "another long line, different, with a tab\there and then a great many more words\n",
            );
        }
        both(&c, &x, &y);
        for w in &widths {
            for extra in [
                &[][..],
                &["-t"],
                &["--left-column"],
                &["--suppress-common-lines"],
            ] {
                let mut flags = vec!["-y", "-W", w.as_str()];
                flags.extend_from_slice(extra);
                check(&c, &flags);
            }
        }
        check(&c, &["-y"]);
        check(&c, &["--side-by-side", "--width=72", "-i"]);
        check(&c, &["-y", "--tabsize=4"]);
    }
}

#[test]
fn colors_and_palettes() {
    let c = Corpus::new();
    let mut r = Rng(0x9e3779b97f4a7c15);
    for case in 0..30 {
        let (x, y) = pair(&mut r, [3usize, 12, 30][case % 3]);
        both(&c, &x, &y);
        for f in [
            &["--color=always"][..],
            &["--color=always", "-u"],
            &["--color=always", "-c"],
            &["--color=always", "-u", "-p"],
            &["--color=always", "-c", "-p"],
            &[
                "--color=always",
                "--palette=ad=1;32:de=1;31:hd=4:ln=35:rs=0",
            ],
            &["--color=always", "-u", "--palette=ad=7"],
            &["--color=always", "-y", "-W", "50"],
            &["--color=always", "-y", "--palette=ad=1:de=2:rs=9"],
            &["--color=never", "-u"],
            &["--color", "-u"],
            &["--color=auto"],
        ] {
            check(&c, f);
        }
    }
}

/// A random tree under `root`: files, subdirectories and symbolic links
/// (dangling, or looping back), some names shared with the other tree.
fn tree(root: &Path, r: &mut Rng, depth: usize) {
    std::fs::create_dir_all(root).unwrap();
    let names = [
        "a", "B", "c.txt", "d.o", "_e", "f g", "Zed", "sub", "sub2", "x.c",
    ];
    for n in names {
        match r.below(6) {
            0 | 1 => {}
            2 if depth < 2 => tree(&root.join(n), r, depth + 1),
            3 => std::fs::write(root.join(n), format!("{n}\nline\n")).unwrap(),
            // Links: dangling ones, and ones to a parent's entry (loops,
            // when that entry is a directory holding the link).
            4 if r.below(3) == 0 => {
                let to = if depth > 0 {
                    format!("../{n}")
                } else {
                    "nowhere".into()
                };
                std::os::unix::fs::symlink(to, root.join(n)).unwrap()
            }
            4 => std::fs::write(root.join(n), "").unwrap(),
            _ => {
                let mut t = String::new();
                for k in 0..r.below(6) {
                    t.push_str(&format!("{} {k}\n", r.pick(WORDS)));
                }
                std::fs::write(root.join(n), t).unwrap();
            }
        }
    }
    if r.below(5) == 0 {
        std::fs::write(root.join("bin"), b"\0\x01\x02").unwrap();
    }
}

#[test]
fn directory_trees() {
    let mut r = Rng(0x1234567887654321);
    for case in 0..30 {
        let c = Corpus::new();
        // Similar trees: build one, then the other from a seed that often
        // repeats, so that many names and contents are shared.
        let seed = r.next();
        tree(&c.file("A"), &mut Rng(seed | 1), 0);
        let other = if case % 3 == 0 {
            r.next()
        } else {
            seed ^ (1 << (case % 40))
        };
        tree(&c.file("B"), &mut Rng(other | 1), 0);
        std::fs::write(c.file("pats"), "*.o\nsub2\n").unwrap();
        for f in [
            &[][..],
            &["-r"],
            &["-rN"],
            &["-r", "--unidirectional-new-file"],
            &["-N"],
            &["-rq"],
            &["-rs"],
            &["-ru"],
            &["-r", "-c"],
            &["-r", "-x", "*.c", "-x", "sub"],
            &["-r", "-X", "pats"],
            &["--recursive", "--new-file", "-u", "--exclude=B"],
            &["-ryW", "40"],
            &["-r", "-i", "-w"],
            &["-r", "-S", "c"],
            &["-S", "sub", "-q"],
            &["-r", "--starting-file=_"],
        ] {
            let mut args = s(f);
            args.extend(s(&["A", "B"]));
            same("diff", &args, None, c.path(), &[]);
            let mut args = s(f);
            args.extend(s(&["B", "A"]));
            same("diff", &args, None, c.path(), &[]);
        }
    }
}

#[test]
fn switches_are_repeated_as_typed() {
    let c = Corpus::new();
    let mut r = Rng(77);
    tree(&c.file("A"), &mut r, 0);
    tree(&c.file("B"), &mut r, 0);
    std::fs::write(c.file("A/same-name"), "1\n").unwrap();
    std::fs::write(c.file("B/same-name"), "2\n").unwrap();
    for f in [
        &["--recur", "--unif=1", "-x", "foo", "-U", "2"][..],
        &["-r", "--", "A", "B"],
        &["A", "-r", "B"],
        &["-r", "-x", "*.o", "--exclude", "a b"],
    ] {
        let mut args = s(f);
        if !f.contains(&"A") {
            args.extend(s(&["A", "B"]));
        }
        same("diff", &args, None, c.path(), &[]);
    }
}

#[test]
fn absent_files_and_usage_errors() {
    let c = Corpus::new();
    for args in [
        &["-N", "missing", "text2"][..],
        &["-uN", "text2", "missing"],
        &["--unidirectional-new-file", "missing", "text2"],
        &["--unidirectional-new-file", "text2", "missing"],
        &["-N", "missing", "missing2"],
        &["-u", "-c", "text", "text2"],
        &["-y", "--normal", "text", "text2"],
        &["-W", "x", "text", "text2"],
        &["-W", "0", "text", "text2"],
        &["-C", "x", "text", "text2"],
        &["--context=-1", "text", "text2"],
        &["--color=sometimes", "text", "text2"],
        &["-X", "missing", "text", "text2"],
        &["-U", "5", "-U", "2", "text2", "utf8"],
        &["-U1", "-u", "text2", "utf8"],
        &["-C", "1", "-c", "text2", "utf8"],
    ] {
        same("diff", &s(args), None, c.path(), &[]);
    }
}

/// Names in the `diff A/x B/x` lines are C-quoted when they hold blanks,
/// quotes, backslashes or bytes that are not printable ASCII; other
/// shell-special characters stay bare.
#[test]
fn names_that_need_quoting() {
    let c = Corpus::new();
    std::fs::create_dir(c.file("Q")).unwrap();
    std::fs::create_dir(c.file("R")).unwrap();
    for n in [
        "a b", "c$d", "e=f", "g*h", "i'j", "k\"l", "m\\n", "o#p", "~s", "t,u", "#E", "F!", "G\tH",
        "é", "I&J", "W|X", "Y`Z", "nl\nx", "del\x7f",
    ] {
        std::fs::write(c.file("Q").join(n), "1\n").unwrap();
        std::fs::write(c.file("R").join(n), "2\n").unwrap();
    }
    std::fs::write(c.file("Q/only here"), "").unwrap();
    for f in [&[][..], &["-u"], &["-q"], &["-x", "a b"]] {
        let mut args = s(f);
        args.extend(s(&["Q", "R"]));
        same("diff", &args, None, c.path(), &[]);
    }
}

#[test]
fn symbolic_links_and_from_to_file() {
    use std::os::unix::fs::symlink;
    let c = Corpus::new();
    for d in ["L1", "L2"] {
        std::fs::create_dir(c.file(d)).unwrap();
    }
    symlink("../text2", c.file("L1/l")).unwrap();
    symlink("../utf8", c.file("L2/l")).unwrap();
    symlink("../text2", c.file("L1/s")).unwrap();
    symlink("../text2", c.file("L2/s")).unwrap();
    symlink("nowhere", c.file("L1/dangling")).unwrap();
    symlink("nowhere2", c.file("L2/dangling")).unwrap();
    std::fs::write(c.file("L1/f"), "x\n").unwrap();
    symlink("../newline", c.file("L2/f")).unwrap();
    std::fs::write(c.file("L1/g"), "y\n").unwrap();
    std::fs::write(c.file("L2/g"), "y\n").unwrap();
    std::fs::create_dir(c.file("L1/dir")).unwrap();
    symlink("..", c.file("L2/dir")).unwrap();
    // Directory loops through links: GNU refuses to go round.
    symlink(".", c.file("L1/self")).unwrap();
    symlink(".", c.file("L2/self")).unwrap();
    std::fs::create_dir(c.file("L1/d2")).unwrap();
    std::fs::create_dir(c.file("L2/d2")).unwrap();
    symlink("../d2", c.file("L2/d2/up")).unwrap();
    std::fs::create_dir(c.file("L1/d2/up")).unwrap();
    for args in [
        &["-r", "L1", "L2"][..],
        &["-r", "--no-dereference", "L1", "L2"],
        &["-rs", "--no-dereference", "L1", "L2"],
        &["-rs", "L1", "L1"],
        &["-s", "L1", "L1"],
        &["-s", "L2/dir", "."],
        &["--no-dereference", "L1/l", "L2/l"],
        &["--no-dereference", "-q", "L1/s", "L2/s"],
        &["--no-dereference", "L1/f", "L2/f"],
        &["--from-file=text2", "utf8", "text2", "missing", "newline"],
        &["--from-file", "text2"],
        &["-u", "--to-file=utf8", "text2", "newline"],
        &["-q", "--to-file=L2", "L1/f", "L1/g"],
        &["--from-file=text2", "--to-file=utf8", "newline"],
    ] {
        same("diff", &s(args), None, c.path(), &[]);
    }
}

/// Random edits on texts of blank, white-space-only, tab, CR and
/// mixed-case lines, each pair under every option above: what found the
/// window GNU slides changes in (its identical ends are the same bytes,
/// whatever -i/-w say), -t's carriage returns and side by side's `/` rows.
#[test]
fn random_edits_under_every_option() {
    const W: &[&str] = &[
        "alpha",
        "Beta",
        "gamma",
        "x",
        "int main()",
        "_f",
        "$v",
        "{",
        "}",
        "\tindent",
        "a\tb",
        "  two",
        "x\r",
    ];
    fn line(r: &mut Rng) -> String {
        match r.below(20) {
            0..=2 => String::new(),
            3 => " ".into(),
            _ => {
                let mut l = if r.below(3) == 0 {
                    r.pick(&["  ", "\t", " "]).to_string()
                } else {
                    String::new()
                };
                let n = 1 + r.below(3);
                let words: Vec<&str> = (0..n).map(|_| r.pick(W)).collect();
                l.push_str(&words.join(" "));
                l
            }
        }
    }
    let flagsets: &[&[&str]] = &[
        &[],
        &["-u"],
        &["-c"],
        &["-i"],
        &["-w"],
        &["-b"],
        &["-B"],
        &["-E"],
        &["-Z"],
        &["--strip-trailing-cr"],
        &["-bB", "-u"],
        &["-wB", "-c"],
        &["-iw", "-U1"],
        &["-B", "-U0"],
        &["-u", "-p"],
        &["-t", "-u"],
        &["-T", "-c"],
        &["--color=always", "-u"],
        &["-q", "-B"],
        &["-y"],
        &["-y", "-t", "-W", "50"],
        &["-y", "--left-column", "-W", "61"],
        &["-y", "-w", "--suppress-common-lines"],
    ];
    let c = Corpus::new();
    let mut r = Rng(0x5851f42d4c957f2d);
    for _ in 0..120 {
        let n = [0usize, 1, 2, 4, 8, 15, 30, 60][r.below(8) as usize];
        let a: Vec<String> = (0..n).map(|_| line(&mut r)).collect();
        let mut b = a.clone();
        for _ in 0..1 + r.below(6) {
            let at = r.below(b.len() as u64 + 1) as usize;
            match r.below(6) {
                0 if at < b.len() => {
                    b.remove(at);
                }
                1 => b.insert(at, line(&mut r)),
                2 => b.insert(at, String::new()),
                3 if at < b.len() => b[at] = line(&mut r),
                _ if at < b.len() => b[at] = variant(&mut r, &b[at]),
                _ => {}
            }
        }
        let mut join = |v: &[String]| {
            let mut t = v.join("\n");
            if !v.is_empty() && r.below(7) != 0 {
                t.push('\n');
            }
            t
        };
        let (x, y) = (join(&a), join(&b));
        both(&c, &x, &y);
        for f in flagsets {
            check(&c, f);
        }
    }
}
