//! `ferry sort` against GNU sort: output, exit status and messages on
//! generated inputs — words, numbers of every shape (signs, leading
//! zeros, fractions, SI suffixes, floats, NaN, garbage), fields with and
//! without `-t`, blank runs, duplicates — under every ordering option,
//! global and per key, and under `LC_ALL=C` and a UTF-8 locale.

#[path = "sort/pieces.rs"]
mod pieces;
#[path = "sort/records.rs"]
mod records;
#[path = "sort/signals.rs"]
mod signals;

use crate::gnu;
use gnu::{s, same, xorshift, Corpus};
use proptest::prelude::*;

/// A number as people write them (and some things that are not).
fn number(r: u64) -> String {
    let digits = |n: u64, len: u64| -> String {
        (0..len.max(1))
            .map(|i| char::from(b'0' + ((n >> (i * 3)) % 10) as u8))
            .collect()
    };
    let sign = ["", "-", "", "+", ""][(r % 5) as usize];
    let int = digits(r >> 4, (r >> 40) % 6);
    match (r >> 8) % 16 {
        0 => format!("{sign}{int}"),
        1 => format!("{sign}{int}.{}", digits(r >> 20, (r >> 50) % 4)),
        2 => format!("{sign}.{}", digits(r >> 20, 1 + (r >> 50) % 3)),
        3 => format!("{sign}00{int}"),
        4 => format!(
            "{int}{}",
            ["K", "M", "G", "k", "T", "P", "E", "Z", "Y"][((r >> 30) % 9) as usize]
        ),
        5 => format!(
            "{sign}{int}.{}{}",
            digits(r >> 20, 1),
            ["K", "M", "G"][((r >> 30) % 3) as usize]
        ),
        6 => format!("{sign}{int}e{}", (r >> 33) % 12),
        7 => ["nan", "NaN", "inf", "-inf", "0x1p3", "-0", "0", "-"][((r >> 30) % 8) as usize]
            .to_string(),
        8 => format!("{sign}{int}abc"),
        9 => "abc".to_string(),
        10 => String::new(),
        11 => format!("  {sign}{int}"),
        12 => format!("{sign}{int},{}", digits(r >> 20, 3)),
        _ => format!("{sign}{int}"),
    }
}

fn word(r: u64) -> String {
    const W: [&str; 16] = [
        "apple", "Apple", "banana", "BANANA", "cherry", "a", "b", "B", "zeta", "Émile", "éclair",
        "jan", "Feb", "MAR", "dec", "x_y-z",
    ];
    W[(r % 16) as usize].to_string()
}

/// Lines of fields: words, numbers, months, separated by blanks (runs of
/// spaces and tabs, leading ones too) or by `:`.
fn table(n: usize, seed: u64, colon: bool) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::new();
    for _ in 0..n {
        let cols = 1 + xorshift(&mut x) % 4;
        let mut line = String::new();
        if !colon && xorshift(&mut x).is_multiple_of(4) {
            line.push_str(["  ", "\t", " \t "][(xorshift(&mut x) % 3) as usize]);
        }
        for c in 0..cols {
            if c > 0 {
                line.push_str(if colon {
                    ":"
                } else {
                    [" ", "  ", "\t"][(xorshift(&mut x) % 3) as usize]
                });
            }
            let r = xorshift(&mut x);
            line.push_str(&match r % 3 {
                0 => word(r >> 2),
                _ => number(r >> 2),
            });
        }
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    // Exact duplicates and key-equal lines.
    let copy = out.clone();
    out.extend_from_slice(&copy[..copy.len() / 5]);
    out
}

/// GNU sort -g does not order NaNs consistently: the same lines in
/// another input order come out in another order, and equal lines are
/// not kept together (coreutils 9.1 here; its NaN comparison is not a
/// total order). No comparison can match that, so `-g` runs get inputs
/// without NaNs; ferry orders NaNs after conversion errors and before
/// numbers, by bit pattern, then by the last resort.
fn without_nan(t: &[u8]) -> Vec<u8> {
    t.split_inclusive(|&b| b == b'\n')
        .filter(|l| !l.to_ascii_lowercase().windows(3).any(|w| w == b"nan"))
        .flatten()
        .copied()
        .collect()
}

fn input_for(o: &[&str], name: &str) -> String {
    if o.iter()
        .any(|x| x.starts_with('-') && !x.starts_with("--") && x.contains('g'))
    {
        format!("{name}-no-nan")
    } else {
        name.to_string()
    }
}

const OPTIONS: &[&[&str]] = &[
    &[],
    &["-r"],
    &["-n"],
    &["-rn"],
    &["-g"],
    &["-h"],
    &["-M"],
    &["-f"],
    &["-d"],
    &["-i"],
    &["-b"],
    &["-u"],
    &["-fu"],
    &["-nu"],
    &["-s", "-k2,2"],
    &["-k2"],
    &["-k2,2"],
    &["-k2,2n"],
    &["-k2,2nr", "-k1,1"],
    &["-k2b,2"],
    &["-n", "-k2b,2"],
    &["-k1.2,1.3"],
    &["-k2.2b,2.4n"],
    &["-k3,3g", "-k1,1f"],
    &["-k2,2h", "-r"],
    &["-k1,1M", "-k2n"],
    &["-u", "-k2,2n"],
    &["-s", "-n", "-k2,2"],
    &["-b", "-k2,2"],
    &["-k2,3", "-u"],
    &["-k4"],
    &["-z"],
];

#[test]
fn every_option_on_blank_separated_fields() {
    let c = Corpus::new();
    std::fs::write(c.file("table"), table(3000, 5, false)).unwrap();
    std::fs::write(c.file("table-no-nan"), without_nan(&table(3000, 5, false))).unwrap();
    for o in OPTIONS {
        let mut a = s(o);
        a.push(input_for(o, "table"));
        same("sort", &a, None, c.path(), &[]);
    }
}

#[test]
fn every_option_with_a_separator() {
    let c = Corpus::new();
    std::fs::write(c.file("colon"), table(3000, 9, true)).unwrap();
    std::fs::write(c.file("colon-no-nan"), without_nan(&table(3000, 9, true))).unwrap();
    for o in OPTIONS {
        let mut a = s(&["-t", ":"]);
        a.extend(s(o));
        a.push(input_for(o, "colon"));
        same("sort", &a, None, c.path(), &[]);
    }
}

#[test]
fn the_corpus_files_and_stdin() {
    let c = Corpus::new();
    for f in &c.files {
        for o in [&[][..], &["-r"], &["-n"], &["-u"], &["-f", "-s"], &["-k2"]] {
            let mut a = s(o);
            a.push(f.clone());
            same("sort", &a, None, c.path(), &[]);
        }
    }
    let text = gnu::texty(200_000, 3);
    same("sort", &[], Some(&text), c.path(), &[]);
    same("sort", &s(&["-", "text2"]), Some(&text), c.path(), &[]);
    same("sort", &s(&["text", "text2", "text"]), None, c.path(), &[]);
}

#[test]
fn check_merge_output_and_errors() {
    let c = Corpus::new();
    std::fs::write(c.file("sorted"), b"a\nb\nb\nc\n").unwrap();
    std::fs::write(c.file("unsorted"), b"a\nc\nb\n").unwrap();
    std::fs::write(c.file("nums"), b"1\n10\n9\n").unwrap();
    std::fs::write(c.file("m1"), b"a\nc\ne\n").unwrap();
    std::fs::write(c.file("m2"), b"b\nc\nd\nf\n").unwrap();
    for a in [
        &["-c", "sorted"][..],
        &["-c", "unsorted"],
        &["-C", "unsorted"],
        &["-cu", "sorted"],
        &["--check=quiet", "unsorted"],
        &["--check=silent", "sorted"],
        &["--check=diagnose-first", "unsorted"],
        &["-c", "-n", "nums"],
        &["-c", "nums"],
        &["-c", "sorted", "unsorted"],
        // Checking writes no output: GNU refuses -o with -c or -C.
        &["-c", "-o", "out", "unsorted"],
        &["-C", "-o", "out", "unsorted"],
        &["--check=quiet", "-o", "out", "sorted"],
        &["-m", "m1", "m2"],
        &["-m", "m2", "m1", "sorted"],
        &["-m", "-r", "unsorted", "m1"],
        &["no-such-file"],
        &["-k0"],
        &["-k1.0"],
        &["-k1x"],
        &["-t", "ab"],
        &["-t", ""],
        &["-S", "10Q"],
        &["--parallel=0"],
        &["-Q"],
        &["--check=bogus"],
        &["--sort=bogus"],
        &["--sort=mon", "sorted"],
        &["--sort=n", "sorted"],
        &["--sort=", "sorted"],
        &["--check=q", "unsorted"],
        &["-dn", "sorted"],
        &["-k1,1gM", "sorted"],
        &["-S", "1M", "-T", "/tmp", "--parallel=2", "nums"],
        &["--sort=numeric", "nums"],
        &["-o", "out", "nums"],
    ] {
        same("sort", &s(a), None, c.path(), &[]);
    }
    // -o naming an input: read first, then written.
    std::fs::write(c.file("inplace"), b"3\n1\n2\n").unwrap();
    let ours = gnu::run(
        gnu::FERRY,
        &s(&["sort", "-o", "inplace", "inplace"]),
        None,
        c.path(),
        &[],
    );
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert_eq!(std::fs::read(c.file("inplace")).unwrap(), b"1\n2\n3\n");
    // Standard output on a full disk: status 2 and GNU's messages, for an
    // output that fits GNU's stdio buffer and one that does not; -o too.
    gnu::full_disk("sort", &["sorted"], c.path());
    gnu::full_disk("sort", &["text"], c.path());
    same(
        "sort",
        &s(&["-o", "/dev/full", "sorted"]),
        None,
        c.path(),
        &[],
    );
}

#[test]
fn a_utf8_locale_collates_as_the_c_library_does() {
    let have = std::process::Command::new("locale")
        .arg("-a")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).to_lowercase())
        .unwrap_or_default();
    let Some(loc) = ["en_US.utf8", "c.utf8"]
        .into_iter()
        .find(|l| have.lines().any(|x| x == *l))
    else {
        eprintln!("no UTF-8 locale installed: skipped");
        return;
    };
    let loc = if loc == "c.utf8" {
        "C.UTF-8"
    } else {
        "en_US.UTF-8"
    };
    let c = Corpus::new();
    std::fs::write(c.file("table"), table(2000, 21, false)).unwrap();
    for o in [
        &[][..],
        &["-f"],
        &["-k2"],
        &["-u"],
        &["-n"],
        &["-d"],
        &["-r", "-k1,1"],
    ] {
        let mut a = s(o);
        a.push("table".into());
        same("sort", &a, None, c.path(), &[("LC_ALL", loc)]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Any table, any key options: the same bytes as GNU sort.
    #[test]
    fn generated_tables_and_keys(
        seed in any::<u64>(),
        n in 1usize..400,
        colon in any::<bool>(),
        k1 in 1usize..4,
        k2 in 0usize..4,
        opts in "[bdfghinr]{0,2}",
        global in prop_oneof![Just(""), Just("-r"), Just("-n"), Just("-f"), Just("-u"), Just("-s"), Just("-b")],
    ) {
        let c = Corpus::new();
        let t = table(n, seed, colon);
        let t = if opts.contains('g') { without_nan(&t) } else { t };
        std::fs::write(c.file("t"), t).unwrap();
        let mut a: Vec<String> = Vec::new();
        if colon {
            a.extend(s(&["-t", ":"]));
        }
        if !global.is_empty() {
            a.push(global.to_string());
        }
        let key = if k2 >= k1 { format!("{k1}{opts},{k2}") } else { format!("{k1}{opts}") };
        a.push(format!("-k{key}"));
        a.push("t".into());
        same("sort", &a, None, c.path(), &[]);
    }
}

/// Numbers that `double` cannot tell apart but GNU's `long double` can:
/// values differing past the 17th digit, and magnitudes beyond `double`'s
/// range (1e329, 1e-4000), beside values `long double` rounds together.
fn long_double_numbers(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = String::new();
    for _ in 0..n {
        let r = xorshift(&mut x);
        let sign = if r.is_multiple_of(5) { "-" } else { "" };
        let line = match (r >> 3) % 6 {
            // 1.000…0d: one digit at place 17 to 22 after the point.
            0 => format!(
                "{sign}1.{}{}",
                "0".repeat(16 + (r >> 8) as usize % 6),
                1 + (r >> 16) % 9
            ),
            // Twenty significant digits around a few magnitudes.
            1 => format!(
                "{sign}{}.{:019}e{}",
                1 + (r >> 8) % 9,
                (r >> 12) % 10_000_000_000_000_000_000,
                [-4000, -400, -20, 0, 20, 329, 4000][(r >> 60) as usize % 7]
            ),
            // Past double's range, inside long double's.
            2 => format!(
                "{sign}{}e{}{}",
                1 + (r >> 8) % 9,
                if (r >> 12).is_multiple_of(2) { "" } else { "-" },
                309 + (r >> 16) % 4600
            ),
            // Past long double's range too (inf and 0).
            3 => format!(
                "{sign}1e{}",
                ["5000", "-5000", "4933", "-4960"][(r >> 8) as usize % 4]
            ),
            // Hexadecimal, with all 64 bits of a long double's mantissa.
            4 => format!("{sign}0x1.{:016x}p{}", r >> 4, (r % 64) as i64 - 32),
            // Plain numbers and text that does not convert.
            _ => [
                "0", "-0", "1", "1.0", "x", "", " 2", "inf", "-inf", "1e308", "1.8e308",
            ][(r >> 8) as usize % 11]
                .to_string(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out.into_bytes()
}

/// GNU sort compares -g keys in `long double`; so does ferry (the same C
/// library's `strtold`).
#[test]
fn general_numeric_order_is_gnu_s_long_double_order() {
    let c = Corpus::new();
    std::fs::write(c.file("ld"), long_double_numbers(4000, 91)).unwrap();
    for o in [
        &["-g"][..],
        &["-g", "-s"],
        &["-gu"],
        &["-g", "-r", "-s"],
        &["-k1,1g", "-k1,1r"],
        &["--parallel=2", "-g", "-s", "-S", "64K"],
    ] {
        let mut a = s(o);
        a.push("ld".into());
        same("sort", &a, None, c.path(), &[]);
    }
}

/// Enough lines for the parallel path (parts sorted on threads, merged):
/// still GNU's output, stable where -s asks for it.
#[test]
fn many_lines_on_two_threads() {
    let c = Corpus::new();
    std::fs::write(c.file("big"), without_nan(&table(150_000, 33, false))).unwrap();
    for o in [
        &["--parallel=2"][..],
        &["--parallel=2", "-s", "-k2,2"],
        &["--parallel=2", "-n", "-k2,2", "-u"],
        &["--parallel=3", "-r", "-k1,1f"],
        &["--parallel=1", "-g", "-k3"],
    ] {
        let mut a = s(o);
        a.push("big".into());
        same("sort", &a, None, c.path(), &[]);
    }
}

/// Inputs larger than -S: runs on disk, merged; the same output as GNU's
/// with the same -S, every ordering; no temporary file left behind.
#[test]
fn inputs_larger_than_the_buffer_go_through_runs_on_disk() {
    let c = Corpus::new();
    std::fs::write(c.file("big"), without_nan(&table(40_000, 77, false))).unwrap();
    let tmp = c.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    for o in [
        &["-S", "100K"][..],
        &["-S", "64K", "-n", "-k2"],
        &["-S", "200K", "-u"],
        &["-S", "150K", "-s", "-k1,1f"],
        &["-S", "90K", "-r", "-k2,2g"],
        &["-S", "64K", "-z"],
        &["-S", "100K", "-u", "-k1,1"],
    ] {
        let mut a = s(o);
        a.extend(s(&["-T", "tmp", "big", "text2", "-"]));
        same("sort", &a, Some(b"from stdin\nz 1\n"), c.path(), &[]);
        assert_eq!(
            std::fs::read_dir(&tmp).unwrap().count(),
            0,
            "{o:?}: temporary files left"
        );
    }
    // A temporary directory that cannot be written: status 2, the output
    // file untouched.
    std::fs::write(c.file("out"), b"kept\n").unwrap();
    let r = gnu::run(
        gnu::FERRY,
        &s(&[
            "sort",
            "-S",
            "64K",
            "-T",
            "/nonexistent-dir",
            "-o",
            "out",
            "big",
        ]),
        None,
        c.path(),
        &[],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("/nonexistent-dir"), "{}", r.stderr);
    assert_eq!(std::fs::read(c.file("out")).unwrap(), b"kept\n");
}

/// Large inputs read by mapping, a piece at a time, where a piece ends
/// inside a line (the line starts the next piece), one line is longer
/// than a whole piece, and the last line has no newline; beside small
/// files gathered into one piece: GNU's output in memory and through runs.
#[test]
fn mapped_pieces_end_on_whole_lines() {
    let c = Corpus::new();
    let mut big = without_nan(&table(60_000, 91, false));
    let long: Vec<u8> = (0..300_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let at = big.len() / 2;
    let at = at + big[at..].iter().position(|&b| b == b'\n').unwrap() + 1;
    big.splice(at..at, long.iter().copied().chain([b'\n']));
    big.extend_from_slice(b"no newline at the end");
    // Large enough to be mapped (ferry maps files of 1 MiB or more).
    assert!(big.len() > 1 << 20, "{}", big.len());
    std::fs::write(c.file("bigger"), &big).unwrap();
    std::fs::write(c.file("one"), b"b\na\n").unwrap();
    for o in [
        &[][..],
        &["-S", "64K"],
        &["-S", "100K", "-r", "-k2"],
        &["-S", "64K", "-u"],
    ] {
        for files in [&["one", "bigger", "one"][..], &["bigger", "one"]] {
            let mut a = s(o);
            a.extend(s(files));
            same("sort", &a, None, c.path(), &[]);
        }
    }
}

/// A temporary file system that fills (a 256 KiB tmpfs, mounted here
/// where the test may mount: root; skipped, saying so, elsewhere): status
/// 2 and a message naming the temporary file and ENOSPC, as GNU's does;
/// the output file is left as it was and nothing stays behind.
#[test]
fn a_full_temporary_disk_is_a_clear_error() {
    let c = Corpus::new();
    let tiny = c.path().join("tiny");
    std::fs::create_dir(&tiny).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&tiny)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("cannot mount a tmpfs here (not root, or not allowed): skipped");
        return;
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _u = Unmount(tiny.clone());
    std::fs::write(c.file("big"), table(40_000, 78, false)).unwrap();
    std::fs::write(c.file("out"), b"kept\n").unwrap();
    for prog in [gnu::FERRY, "sort"] {
        let mut a = if prog == "sort" { vec![] } else { s(&["sort"]) };
        a.extend(s(&["-S", "100K", "-T", "tiny", "-o", "out", "big"]));
        let r = gnu::run(prog, &a, None, c.path(), &[]);
        assert_eq!(r.code, 2, "{prog}: {}", r.stderr);
        assert!(r.stderr.contains("tiny/sort"), "{prog}: {}", r.stderr);
        assert!(
            r.stderr.contains("No space left on device"),
            "{prog}: {}",
            r.stderr
        );
        assert_eq!(std::fs::read(c.file("out")).unwrap(), b"kept\n", "{prog}");
        assert_eq!(
            std::fs::read_dir(&tiny).unwrap().count(),
            0,
            "{prog}: left behind"
        );
    }
}

/// sort's "cannot read" showed a name that is not UTF-8 with U+FFFD for
/// each stray byte, and any name unquoted; GNU quotes it with `quotef`.
/// Values in sort's messages are quoted as gnulib's `quote` does — ‘x’ in
/// a UTF-8 locale, 'x' in the C locale — and xstrtol's ASCII quotes stay
/// ASCII in both.
#[test]
fn sort_quotes_values_in_messages_as_gnu_in_every_locale() {
    let c = Corpus::new();
    for locale in ["C.UTF-8", "C"] {
        for a in [
            &["-t", "xy"][..],
            &["-k", "0"],
            &["-k", "1.0"],
            &["-k", "x"],
            &["-k", "1,x"],
            &["--sort=foo"],
            &["--sort="],
            &["--check=foo"],
            &["--parallel=x"],
            &["-S", "1Q"],
        ] {
            same("sort", &s(a), Some(b""), c.path(), &[("LC_ALL", locale)]);
        }
    }
}

#[test]
fn sort_quotes_file_names_in_messages_as_gnu() {
    use std::ffi::OsString;
    let (dir, names) = gnu::non_utf8_names();
    for args in [
        vec![names[1].clone(), names[4].clone()],
        vec![OsString::from("a b"), names[1].clone()],
        vec![OsString::from("-m"), names[1].clone(), names[4].clone()],
    ] {
        gnu::same_bytes("sort", &args, dir.path());
    }
}

/// `sort --help > /dev/full` ended with status 1 and "write error: No
/// space left on device"; GNU sort's status for it is 2, its message
/// "write error" (for --version: "write error: No space left on device").
#[test]
fn help_and_version_to_a_full_disk() {
    let d = tempfile::tempdir().unwrap();
    gnu::same_redirected("sort", &["--help"], "> /dev/full", d.path());
    gnu::same_redirected("sort", &["--version"], "> /dev/full", d.path());
}

/// An input sort cannot read is named by the step that failed, in GNU
/// sort's words: "cannot read" (its access check: absent), "open failed"
/// (a socket; an absent file under -c, which checks no access), "read
/// failed" (a directory). ferry said "cannot read" for all of them.
#[test]
fn unreadable_inputs_named_by_the_step_that_failed() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("dir")).unwrap();
    std::fs::write(d.path().join("f"), b"b\na\n").unwrap();
    let _sock = std::os::unix::net::UnixListener::bind(d.path().join("sock")).unwrap();
    for args in [
        &["dir"][..],
        &["sock"],
        &["absent"],
        &["f", "dir"],
        &["-m", "f", "absent"],
        &["-c", "dir"],
        &["-c", "sock"],
        &["-c", "absent"],
        &["-C", "absent"],
    ] {
        gnu::same_bounded("sort", args, None, d.path());
    }
}

/// A standard input left closed (`sort <&-`), as GNU: sorting from it
/// first is "stat failed: -: Bad file descriptor" (GNU sizes its buffer
/// from an fstat of the first input), after its checks that the other
/// inputs can be read and the output opened; merging or checking reads
/// it ("read failed"). ferry said "read failed" for all of them.
#[test]
fn a_closed_standard_input_as_gnu() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), b"b\na\n").unwrap();
    for args in [
        &[][..],
        &["-"],
        &["-u", "-S", "1M"],
        &["-n", "-", "f"],
        &["-", "absent"],
        &["-o", "out"],
        &["-o", "no-dir/out"],
        &["-m"],
        &["-c"],
    ] {
        gnu::same_redirected("sort", args, "<&-", d.path());
    }
}

/// A line longer than the memory sort may have: GNU's "sort: memory
/// exhausted" and status 2. ferry aborted ("memory allocation of
/// 4294967296 bytes failed", SIGABRT) where its buffers grew.
#[test]
fn a_line_larger_than_memory_is_memory_exhausted() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), b"a\n").unwrap();
    for args in [&[][..], &["-c"], &["-m", "-", "f"]] {
        gnu::same_limited_fed("sort", args, d.path(), 1_000_000, "head -c 2G /dev/zero");
    }
}
