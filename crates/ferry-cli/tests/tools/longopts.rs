//! Abbreviated long options (GNU getopt_long: any unambiguous prefix), for
//! every tool, against the GNU tools: the same output, status and message,
//! ambiguous prefixes included.

use crate::gnu;
use gnu::{s, same, Corpus};

#[test]
fn every_tool_takes_unambiguous_prefixes_as_gnu_does() {
    let c = Corpus::new();
    std::fs::write(c.file("a"), b"one:two\nthree:four\n\n\nfive\n").unwrap();
    std::fs::write(c.file("b"), b"one:two\nthree:fivex\n").unwrap();
    let d = c.path();
    let cases: &[(&str, &[&str])] = &[
        // cut: values attached, separate, and prefixes of value options.
        ("cut", &["--out=_", "--f=1,2", "--d=:", "a"]),
        ("cut", &["--output-d=_", "-f", "1,2", "--delim", ":", "a"]),
        ("cut", &["--b=1-3", "a"]),
        ("cut", &["--c", "2", "a"]),
        ("cut", &["--comp", "-c1", "a"]),
        ("cut", &["--o=x", "-f1", "a"]),
        ("cut", &["--o", "-f1", "a"]),
        ("cut", &["--only", "-d:", "-f2", "a"]),
        ("cut", &["--z", "-c1", "a"]),
        ("cut", &["--he=x"]),
        ("cut", &["--nope", "-f1", "a"]),
        // A value that looks like an option is a value.
        ("cut", &["-d", "--out", "-f1", "a"]),
        ("cut", &["-f1", "--", "--out"]),
        // wc
        ("wc", &["--l", "a"]),
        ("wc", &["--w", "a"]),
        ("wc", &["--c", "a"]),
        ("wc", &["--b", "a"]),
        ("wc", &["--max", "a"]),
        // cat
        ("cat", &["--number-n", "a"]),
        ("cat", &["--n", "a"]),
        ("cat", &["--show", "a"]),
        ("cat", &["--show-e", "a"]),
        ("cat", &["--squ", "a"]),
        // cmp
        ("cmp", &["--verb", "a", "b"]),
        ("cmp", &["--s", "a", "b"]),
        ("cmp", &["--q", "a", "b"]),
        ("cmp", &["--print", "a", "b"]),
        // diff
        ("diff", &["--brie", "a", "b"]),
        ("diff", &["--u", "a", "b"]),
        ("diff", &["--nor", "a", "b"]),
        ("diff", &["--report-i", "a", "a"]),
        // grep
        ("grep", &["--cou", "o", "a"]),
        ("grep", &["--col=never", "o", "a"]),
        ("grep", &["--fix", "o", "a"]),
        ("grep", &["--inv", "--cou", "o", "a"]),
        ("grep", &["--e", "o", "a"]),
        ("grep", &["--ignore-c", "O", "a"]),
        ("grep", &["-e", "--cou", "a"]),
    ];
    for (tool, args) in cases {
        same(tool, &s(args), None, d, &[("LC_ALL", "C")]);
    }
    // cp: a prefix of --target-directory and of --no-target-directory.
    std::fs::create_dir(c.file("dir")).unwrap();
    same(
        "cp",
        &s(&["--target=dir", "a"]),
        None,
        d,
        &[("LC_ALL", "C")],
    );
    assert_eq!(
        std::fs::read(c.file("dir/a")).unwrap(),
        std::fs::read(c.file("a")).unwrap()
    );
    same(
        "cp",
        &s(&["--no-t", "b", "a2"]),
        None,
        d,
        &[("LC_ALL", "C")],
    );
}
