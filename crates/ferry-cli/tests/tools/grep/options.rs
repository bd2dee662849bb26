//! `ferry grep` against GNU grep: context (-A -B -C -NUM, separators,
//! -m), -b, -T, -Z, -z, --line-buffered, --color and GREP_COLORS, binary
//! files (-a, -I, --binary-files), option errors.

use crate::gnu;
use gnu::{run, s, same, xorshift, Corpus};
use proptest::prelude::*;

/// `n` lines, of which about one in `every` holds "hit" (some hold
/// "miss" too, so -v and -o have something to show); runs of adjacent
/// hits and long gaps both happen.
fn spaced(n: usize, every: u64, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::new();
    for i in 0..n {
        let r = xorshift(&mut x);
        if r.is_multiple_of(every) {
            v.extend_from_slice(format!("line {i} hit here hit\n").as_bytes());
        } else if r % 7 == 1 {
            v.extend_from_slice(format!("line {i} miss\n").as_bytes());
        } else if r % 11 == 2 {
            v.push(b'\n');
        } else {
            v.extend_from_slice(format!("line {i} other\n").as_bytes());
        }
    }
    v
}

fn corpus() -> Corpus {
    let c = Corpus::new();
    for (k, every) in [2u64, 3, 5, 9, 40].iter().enumerate() {
        std::fs::write(c.file(&format!("sp{k}")), spaced(300, *every, k as u64 + 3)).unwrap();
    }
    // No newline at the end, a hit on the last line.
    std::fs::write(c.file("tail"), b"a\nhit\nb\nc\nhit").unwrap();
    c
}

const SP: [&str; 5] = ["sp0", "sp1", "sp2", "sp3", "sp4"];

#[test]
fn context_windows_merge_as_gnu_merges_them() {
    let c = corpus();
    let ctx: &[&[&str]] = &[
        &["-A1"],
        &["-B1"],
        &["-C1"],
        &["-A3", "-B2"],
        &["-2"],
        &["-C0"],
        &["-A0", "-C2"],
        &["-C3", "-B0"],
        &["-5"],
    ];
    let extra: &[&[&str]] = &[
        &[],
        &["-n"],
        &["-b"],
        &["-v"],
        &["-o"],
        &["-c"],
        &["-m", "2"],
        &["-m", "1", "-v"],
        &["-nb", "-m", "3"],
        &["--group-separator=::"],
        &["--no-group-separator", "-n"],
        &["--group-separator="],
        &["-ob", "-n"],
        &["-l"],
    ];
    for cx in ctx {
        for e in extra {
            let mut a = s(cx);
            a.extend(s(e));
            a.push("hit".into());
            for f in SP.iter().chain(&["tail"]) {
                let mut one = a.clone();
                one.push(f.to_string());
                same("grep", &one, None, c.path(), &[]);
            }
            // Several files: names, and separators between files.
            let mut all = a.clone();
            all.extend(s(&SP));
            same("grep", &all, None, c.path(), &[]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random context sizes, -m and spacings: windows overlapping, just
    /// touching, and apart; -m cutting off with trailing context left.
    #[test]
    fn random_context_and_max_count(
        seed in 1u64..1000,
        every in 1u64..8,
        before in 0usize..5,
        after in 0usize..5,
        max in proptest::option::of(1u64..6),
        invert in any::<bool>(),
        numbers in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), spaced(60, every, seed)).unwrap();
        let mut a = vec![format!("-B{before}"), format!("-A{after}")];
        if let Some(m) = max {
            a.push(format!("-m{m}"));
        }
        if invert {
            a.push("-v".into());
        }
        if numbers {
            a.push("-nb".into());
        }
        a.push("hit".into());
        a.push("f".into());
        same("grep", &a, None, dir.path(), &[]);
    }
}

/// Context across the 4 MiB regions the file is read in: leading context
/// from the region before, line numbers and offsets far in.
#[test]
fn context_across_regions() {
    let c = Corpus::new();
    let mut big = Vec::new();
    let mut i = 0u64;
    while big.len() < (9 << 20) {
        // A hit every 65536 lines lands near region ends now and then.
        if i.is_multiple_of(65_536) || i.is_multiple_of(99_991) {
            big.extend_from_slice(format!("{i} hit\n").as_bytes());
        } else {
            big.extend_from_slice(format!("{i} filler text\n").as_bytes());
        }
        i += 1;
    }
    std::fs::write(c.file("big"), &big).unwrap();
    for a in [
        &["-B3", "-n"][..],
        &["-A2", "-b"],
        &["-C5", "-nb"],
        &["-B70000", "-c"],
        &["-C1", "-m", "4"],
    ] {
        let mut a = s(a);
        a.push("hit".into());
        a.push("big".into());
        same("grep", &a, None, c.path(), &[]);
    }
    // Leading context bigger than a region's worth of lines.
    same(
        "grep",
        &s(&["-B300000", "-n", "^196608 ", "big"]),
        None,
        c.path(),
        &[],
    );
}

#[test]
fn heads_offsets_tabs_and_nul_names() {
    let c = corpus();
    std::fs::write(c.file("small"), b"a hit\nb\n").unwrap();
    for a in [
        &["-b"][..],
        &["-bo"],
        &["-T"],
        &["-Tn"],
        &["-Tnb"],
        &["-THn", "-A1"],
        &["-Tbo"],
        &["-TH"],
        &["-Z"],
        &["-ZH", "-n", "-C1"],
        &["-Zc"],
        &["-Zl"],
        &["-ZL"],
        &["--null", "-c"],
        &["--line-buffered", "-n"],
        &["--line-buffered", "-c"],
        &["-Tc"],
    ] {
        for files in [&["sp2"][..], &["small"], &["sp1", "small", "tail"]] {
            let mut a = s(a);
            a.push("hit".into());
            a.extend(s(files));
            same("grep", &a, None, c.path(), &[]);
        }
    }
    // -T pads to the digits of the input's size; a pipe has no size.
    let text = spaced(100, 3, 9);
    for a in [&["-Tn", "hit"][..], &["-Tb", "hit"], &["-T", "-H", "hit"]] {
        same("grep", &s(a), Some(&text), c.path(), &[]);
    }
}

#[test]
fn nul_terminated_lines() {
    let c = Corpus::new();
    std::fs::write(c.file("z"), b"a\nb\0c\nab\0x\0hit\nhit\0last").unwrap();
    std::fs::write(c.file("zz"), b"x\0y\n").unwrap();
    std::fs::write(c.file("sp"), b"a\nb\0c d\0e\tf\0gh\0\n\0").unwrap();
    for a in [
        &["a.b", "z"][..],
        &["^b", "z"],
        &["b$", "z"],
        &["-c", ".", "z"],
        &["-o", "b", "z"],
        &["-n", "-b", "-A1", "x", "z"],
        &["-c", "[^a-z]", "z"],
        &["-v", "hit", "z"],
        &["y", "zz"],
        &["-Zl", "y", "zz", "z"],
        &["-C1", "--group-separator=SEP", "-e", "a", "-e", "las", "z"],
        &["-x", "hit.hit", "z"],
        // A newline inside a NUL-terminated line is a space character.
        &["-c", "[[:space:]]", "z"],
        &["-o", "a\\sb", "z"],
        &["-c", "\\S", "sp"],
        &["-o", "[^[:space:]]*", "sp"],
        &["-c", "^\\S*$", "sp"],
        &["-o", "c[[:cntrl:]]", "sp"],
        &["-co", "\\W", "sp"],
    ] {
        let mut a = s(a);
        a.insert(0, "-z".into());
        for loc in ["C", "C.UTF-8"] {
            same("grep", &a, None, c.path(), &[("LC_ALL", loc)]);
        }
    }
}

#[test]
fn colours_and_grep_colors() {
    let c = corpus();
    std::fs::write(c.file("x"), b"abXcdXef\nnoo\nXabX\nX\n\nplain\n").unwrap();
    let envs: &[&[(&str, &str)]] = &[
        &[],
        &[("GREP_COLORS", "ms=04:ln=33:sl=1:cx=2:se=35")],
        &[("GREP_COLORS", "sl=1:cx=2:rv")],
        &[("GREP_COLORS", "sl=1:cx=2:rv:mc=7")],
        &[("GREP_COLORS", "ne")],
        &[("GREP_COLORS", "mt=7")],
        &[("GREP_COLORS", "ms=7:mt=4:fn=:bn=1;4")],
        &[("GREP_COLORS", "fn=5:ms=5;x:ln=4")],
        &[("GREP_COLORS", "ms=:sl=1")],
        &[("GREP_COLOR", "4")],
        &[("GREP_COLOR", "4"), ("GREP_COLORS", "ms=5")],
    ];
    let opts: &[&[&str]] = &[
        &["X", "x"],
        &["-v", "X", "x"],
        &["-v", "-C1", "X", "x"],
        &["-n", "-H", "-b", "-C1", "X", "x"],
        &["-o", "-n", "X", "x"],
        &["-c", "X", "x", "sp1"],
        &["-l", "X", "x", "sp1"],
        &["-T", "-n", "X", "x"],
        &["-Z", "-H", "X", "x"],
        &["a*", "x"],
        &["-i", "x", "x"],
        &["-A1", "-B1", "hit", "sp2"],
        &["-E", "X|ab", "x"],
    ];
    for env in envs {
        for o in opts {
            let mut a = s(o);
            a.insert(0, "--color=always".into());
            same("grep", &a, None, c.path(), env);
        }
    }
    // Colour when asked for, never into a pipe with auto; the old variable
    // only warns when colouring.
    for a in [
        &["--colour=YES", "X", "x"][..],
        &["--color", "X", "x"],
        &["--color=auto", "X", "x"],
        &["--color=never", "X", "x"],
        &["--color=tty", "X", "x"],
    ] {
        same("grep", &s(a), None, c.path(), &[("GREP_COLOR", "4")]);
    }
    // A WHEN GNU does not know: its help text and status 0 (the texts
    // differ, so only the status and the start are compared).
    let r = run(
        gnu::FERRY,
        &s(&["grep", "--color=bad", "X", "x"]),
        None,
        c.path(),
        &[],
    );
    let g = run("grep", &s(&["--color=bad", "X", "x"]), None, c.path(), &[]);
    assert_eq!((r.code, g.code), (0, 0));
    assert!(r.stdout.starts_with(b"Usage: ferry grep") && g.stdout.starts_with(b"Usage: grep"));
}

#[test]
fn binary_files_with_every_choice() {
    let c = Corpus::new();
    std::fs::write(c.file("bin1"), b"hit\nhit\0\nhit\n").unwrap();
    let mut late = b"hit\nx\n".repeat(40_000);
    late.extend_from_slice(b"hit\0\nhit\n");
    std::fs::write(c.file("late"), &late).unwrap();
    std::fs::write(c.file("text"), b"x\nhit\ny\n").unwrap();
    for a in [
        &[][..],
        &["-I"],
        &["-I", "-c"],
        &["-I", "-l"],
        &["-I", "-L"],
        &["-I", "-q"],
        &["-I", "-n"],
        &["-a", "-I"],
        &["-I", "-a"],
        &["--binary-files=text"],
        &["--binary-files=binary", "-c"],
        &["--binary-files=without-match"],
        &["-U"],
        &["-A2"],
        &["-B3", "-n"],
        &["-C3", "-nb"],
        &["-b"],
        &["-ab"],
        &["-c"],
        &["-v", "-I"],
        &["-o", "-b"],
    ] {
        for files in [
            &["bin1"][..],
            &["late"],
            &["bin1", "text"],
            &["late", "text"],
        ] {
            let mut a = s(a);
            a.push("hit".into());
            a.extend(s(files));
            same("grep", &a, None, c.path(), &[]);
        }
    }
    same(
        "grep",
        &s(&["--binary-files=foo", "hit", "text"]),
        None,
        c.path(),
        &[],
    );
}

#[test]
fn option_errors_and_digit_options() {
    let c = corpus();
    for a in [
        &["-A", "-1", "hit", "sp1"][..],
        &["-A", "x", "hit", "sp1"],
        &["-C", "99999999999999999999", "hit", "sp1"],
        &["-B", "+2", "hit", "sp1"],
        &["-12", "hit", "sp1"],
        &["-1", "-2", "hit", "sp1"],
        &["-n2", "hit", "sp1"],
        &["-2n", "hit", "sp1"],
        &["-e", "-2", "sp1"],
        &["-d", "foo", "hit", "sp1"],
        &["-D", "foo", "hit", "sp1"],
        &["--context", "1", "hit", "sp1"],
        &["--cont=1", "hit", "sp1"],
        &["-u", "-b", "hit", "sp1"],
        &["-uu", "-c", "hit", "sp1"],
        &["--un", "hit", "sp1"],
    ] {
        same("grep", &s(a), None, c.path(), &[]);
    }
}

/// `--line-buffered`: each line reaches the reader while the input is
/// still open (buffered output would hold it back until the end).
#[test]
fn line_buffered_output_arrives_line_by_line() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    for args in [
        &["--line-buffered", "hit"][..],
        &["--line-buffered", "-c", "-A1", "-n", "hit"],
    ] {
        let mut ch = gnu::ferry("grep")
            .args(args)
            .env("LC_ALL", "C")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut w = ch.stdin.take().unwrap();
        let mut r = BufReader::new(ch.stdout.take().unwrap());
        let counting = args.contains(&"-c");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            for _ in 0..2 {
                line.clear();
                if r.read_line(&mut line).is_err() {
                    break;
                }
                let _ = tx.send(line.clone());
            }
        });
        w.write_all(b"a hit\nnot\n").unwrap();
        w.flush().unwrap();
        if counting {
            // A count can only come at the end.
            drop(w);
            let got = rx.recv_timeout(std::time::Duration::from_secs(20)).unwrap();
            assert_eq!(got, "1\n");
        } else {
            let got = rx.recv_timeout(std::time::Duration::from_secs(20)).unwrap();
            assert_eq!(got, "a hit\n", "the line came only after the input ended");
            w.write_all(b"more hit\n").unwrap();
            w.flush().unwrap();
            let got = rx.recv_timeout(std::time::Duration::from_secs(20)).unwrap();
            assert_eq!(got, "more hit\n");
            drop(w);
        }
        assert!(ch.wait().unwrap().success());
    }
}

/// A line longer than the memory grep may have (`grep -a`: read as text):
/// GNU's "grep: memory exhausted" and status 2. ferry aborted ("memory
/// allocation of 4294967296 bytes failed", SIGABRT) where it gathered the
/// line (`for_each_block`'s carry buffer now grows with `try_reserve`).
#[test]
fn a_text_line_larger_than_memory_is_memory_exhausted() {
    let d = tempfile::tempdir().unwrap();
    for args in [&["-a", "x"][..], &["-ac", "x"]] {
        gnu::same_limited_fed("grep", args, d.path(), 1_000_000, "head -c 2G /dev/zero");
    }
}

/// A binary input (one with a NUL) has its NULs read as line ends, as GNU
/// grep reads them (`zap_nuls`): a run of NULs with no newline is many
/// empty lines, and grep runs through it in constant memory. ferry
/// gathered such a run as one line, until "memory exhausted" (status 2,
/// where GNU says 1 or 0), and counted one line too many (`-c -v`) in a
/// file ending in NULs. Runs of 12 MiB and more, crossing the 4 MiB
/// regions, with text before and between: each file searched as a file
/// (mapped) and piped in under 32 MiB of address space, against GNU, for
/// the options that report on a binary file, and -z (where a NUL ends
/// every line anyway). With -a the run is one line: see
/// `a_text_line_larger_than_memory_is_memory_exhausted`.
///
/// GNU turns binary at the start of the 96 KiB buffer that holds the
/// first NUL; ferry looked for the NUL only in the 256 KiB piece it was
/// searching (or in the line a region cut), and printed the lines of the
/// piece before that GNU's buffer already held (`late`, its first NUL 32
/// KiB past a buffer's start, just past the start of a piece, with lines
/// after it in the same region). GNU reads a pipe in pieces of any size, so piped in,
/// where it turns binary is not GNU's to say: there no option selects a
/// line close before the NUL. No NUL that ends a text line sits on a page
/// boundary either: with -z GNU drops a read of nothing but NULs (empty
/// lines its pattern cannot select), and one that began with such a NUL
/// would join two lines.
#[test]
fn nul_runs_in_a_binary_input_are_lines_in_constant_memory() {
    let d = tempfile::tempdir().unwrap();
    let nuls = |mib: usize| vec![0u8; mib << 20];
    std::fs::write(d.path().join("nuls"), nuls(16)).unwrap();
    let mut mixed = b"ab x\nq".to_vec();
    mixed.extend(nuls(12));
    mixed.extend_from_slice(b"x y\nzz\n");
    mixed.extend(nuls(6));
    mixed.extend_from_slice(b"tail x");
    std::fs::write(d.path().join("mixed"), &mixed).unwrap();
    // Lines with x, then lines without, three NULs 3 bytes past 3.5 MiB
    // and more lines without x past the first region, then a NUL run.
    let mut late = b"x marks\n".repeat(1 << 17);
    late.extend(b"nothing\n".repeat(5 << 16));
    late.extend_from_slice(b"ab\n\0\0\0\n");
    late.extend(b"nothing\n".repeat(1 << 17));
    late.extend(nuls(12));
    late.extend_from_slice(b"x\n");
    std::fs::write(d.path().join("late"), &late).unwrap();
    let opts: &[&[&str]] = &[
        &[],
        &["-c"],
        &["-l"],
        &["-L"],
        &["-q"],
        &["-o"],
        &["-n"],
        &["-b"],
        &["-v"],
        &["-c", "-v"],
        &["--binary-files=without-match"],
        &["-c", "-I"],
        &["-nb", "-A1"],
        &["-z"],
        &["-z", "-c", "-v"],
    ];
    let kib = 32 << 10;
    for file in ["nuls", "mixed", "late"] {
        for o in opts {
            let mut a = o.to_vec();
            a.push("x");
            if !(file == "late" && o == &["-v"]) {
                gnu::same_limited_fed("grep", &a, d.path(), kib, &format!("cat {file}"));
            }
            a.push(file);
            gnu::same_limited_fed("grep", &a, d.path(), 64 << 20, "true");
        }
    }
}

/// /dev/zero is binary and all empty lines: GNU grep searches it in
/// constant memory until it is killed; ferry ran out of memory gathering
/// it as one line. Also with --line-buffered, where ferry reads the
/// device as its reads come.
#[test]
fn grep_keeps_running_on_dev_zero() {
    let d = tempfile::tempdir().unwrap();
    for args in [
        &["x"][..],
        &["-c", "x"],
        &["-L", "x"],
        &["-c", "-v", "x"],
        &["-q", "x"],
        &["-z", "x"],
        &["--line-buffered", "-c", "x"],
    ] {
        let mut a = args.to_vec();
        a.push("/dev/zero");
        gnu::both_keep_running("grep", &a, d.path(), 64 << 10);
    }
}
