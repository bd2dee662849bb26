//! `ferry cut` against GNU cut.

use crate::gnu;
use gnu::{s, same, Corpus};

#[test]
fn lists_fields_and_delimiters_on_every_input() {
    let c = Corpus::new();
    // Tab- and comma-separated data, ragged rows, empty fields.
    let mut tsv = Vec::new();
    for i in 0..3000 {
        let cols = 1 + i % 7;
        let row: Vec<String> = (0..cols)
            .map(|k| {
                if (i + k) % 5 == 0 {
                    String::new()
                } else {
                    format!("r{i}c{k}")
                }
            })
            .collect();
        tsv.extend_from_slice(row.join("\t").as_bytes());
        tsv.push(b'\n');
    }
    std::fs::write(c.file("tsv"), &tsv).unwrap();
    std::fs::write(
        c.file("csv"),
        tsv.iter()
            .map(|&b| if b == b'\t' { b',' } else { b })
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let mut files = c.files.clone();
    files.extend(["tsv".to_string(), "csv".to_string()]);
    let opts: &[&[&str]] = &[
        &["-b1"],
        &["-b1-10"],
        &["-c1-10"],
        &["-b3-"],
        &["-b-4"],
        &["-b2,4,6-8"],
        &["-b1-2,3-4", "--output-delimiter=|"],
        &["-b5-9", "--complement"],
        &["-c2-", "--complement", "--output-delimiter=**"],
        &["-b1-3,2-5"],
        &["-n", "-b1-3"],
        &["-f1"],
        &["-f2"],
        &["-f2-"],
        &["-f-2"],
        &["-f1,3,5"],
        &["-f2", "-s"],
        &["-f1,3", "--complement"],
        &["-f1-2", "--output-delimiter=::"],
        &["-d", ",", "-f2"],
        &["-d,", "-f1,3", "-s"],
        &["-d", " ", "-f2-3"],
        &["-d,", "-f2", "--output-delimiter="],
        &["-z", "-f1"],
        &["-z", "-b1-3"],
    ];
    for o in opts {
        for f in &files {
            let mut a = s(o);
            a.push(f.clone());
            same("cut", &a, None, c.path(), &[]);
        }
    }
}

#[test]
fn stdin_and_errors() {
    let c = Corpus::new();
    let text = gnu::texty(300_000, 4);
    same("cut", &s(&["-b1-10"]), Some(&text), c.path(), &[]);
    same("cut", &s(&["-f2", "-d", "a"]), Some(&text), c.path(), &[]);
    same(
        "cut",
        &s(&["-b1", "-", "text2"]),
        Some(b"stdin line\n"),
        c.path(),
        &[],
    );
    for bad in [
        &["text2"][..],
        &["-b1", "-f1", "text2"],
        &["-b", "0", "text2"],
        &["-f", "0", "text2"],
        &["-b", "3-2", "text2"],
        &["-b-", "text2"],
        &["-bx", "text2"],
        &["-fx", "text2"],
        &["-d", "ab", "-f1", "text2"],
        &["-d:", "-b1", "text2"],
        &["-s", "-b1", "text2"],
        &["-f1", "nonexistent", "text2"],
        &["-b"],
        &["--bogus"],
        &["-b1", "."],
    ] {
        same("cut", &s(bad), None, c.path(), &[]);
    }
    same(
        "cut",
        &s(&["-bx", "text2"]),
        None,
        c.path(),
        &[("LC_ALL", "C.UTF-8")],
    );
}

/// Files of 64 MiB or more are cut on two cores (each 16 MiB block split
/// after a line end in its second half, the second half's output held and
/// written after the first's). A 70 MiB file with a 9 MiB line (a block
/// whose second half has no line end) and no final newline must come out
/// as GNU's, byte for byte, for byte and field lists and -z.
#[test]
fn large_files_on_two_cores() {
    let c = Corpus::new();
    let mut big = gnu::big_with_long_line(11);
    big.extend_from_slice(b"last line without a newline");
    std::fs::write(c.file("big"), &big).unwrap();
    let opts: &[&[&str]] = &[
        &["-c1-10"],
        &["-b2-5,8-"],
        &["-f2", "-d", " "],
        &["-f1,3", "-s", "-d", "a", "--output-delimiter=::"],
        &["--complement", "-c3-7"],
        &["-z", "-c1-3"],
    ];
    for o in opts {
        let mut a = s(o);
        a.push("big".into());
        same("cut", &a, None, c.path(), &[("LC_ALL", "C")]);
    }
}

/// GNU's rules found by its own test suite: every list fault
/// with GNU's message, a one-byte delimiter that is not UTF-8, an empty
/// output delimiter (NUL), and the newline as the delimiter (the whole
/// input is then one line whose fields are the lines).
#[test]
fn lists_delimiters_and_newline_fields_as_gnu() {
    let c = Corpus::new();
    std::fs::write(c.file("hi"), b"a\xadb\xadc\nd\xade\nplain\n").unwrap();
    std::fs::write(c.file("colons"), b"a:b:c\nd:e\n:\n\nx\n").unwrap();
    for list in [
        "",
        "0",
        "2-0",
        "--",
        "-",
        "3-2",
        "1-2-3",
        ",1",
        "1,",
        "1,x2",
        "x",
        "1-x",
        "0-3",
        "-0",
        "1 3",
        "1\t3",
        "99999999999999999999999,2",
        "18446744073709551615",
        "2-,1",
        "1,,2",
    ] {
        for opt in ["-f", "-b", "-c"] {
            same(
                "cut",
                &s(&[opt, list, "colons"]),
                None,
                c.path(),
                &[("LC_ALL", "C")],
            );
        }
        same(
            "cut",
            &s(&["-f", list, "colons"]),
            None,
            c.path(),
            &[("LC_ALL", "C.UTF-8")],
        );
    }
    for args in [
        &["-d", "\u{ad}", "-f2", "hi"][..],
        &["-d:", "-f1,3", "--output-delimiter=", "colons"],
        &["-c1,3", "--output-delimiter=", "colons"],
        &["-d:", "-f2", "--output-delimiter=", "-s", "colons"],
    ] {
        same("cut", &s(args), None, c.path(), &[("LC_ALL", "C")]);
    }
    // The byte 0xAD alone (not the UTF-8 encoding of U+00AD).
    let o = gnu::ferry("cut")
        .arg("-d")
        .arg(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"\xad"))
        .args(["-f2", "hi"])
        .current_dir(c.path())
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    let g = std::process::Command::new("cut")
        .arg("-d")
        .arg(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"\xad"))
        .args(["-f2", "hi"])
        .current_dir(c.path())
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    assert_eq!(
        (o.status.code(), &o.stdout),
        (g.status.code(), &g.stdout),
        "-d $'\\255'"
    );
    assert_eq!(o.stdout, b"b\ne\nplain\n");
    // -d $'\n': every input over {a, newline} up to 5 bytes and a few
    // more, each a file of one invocation (as GNU, each file starts anew),
    // under every list shape, -s, --complement and an output delimiter.
    let mut names = Vec::new();
    let mut n = 0;
    for len in 0..6u32 {
        for bits in 0..(1u32 << len) {
            let text: Vec<u8> = (0..len)
                .map(|i| if bits >> i & 1 == 1 { b'\n' } else { b'a' })
                .collect();
            n += 1;
            let name = format!("nl{n:03}");
            std::fs::write(c.file(&name), text).unwrap();
            names.push(name);
        }
    }
    for (name, text) in [
        ("nl-x1", "ab\nc"),
        ("nl-x2", "\nab\n\n"),
        ("nl-x3", "a\n\nb"),
    ] {
        std::fs::write(c.file(name), text).unwrap();
        names.push(name.to_string());
    }
    for list in [
        "-f1", "-f2", "-f3", "-f1-", "-f2-", "-f1,3", "-f-2", "-f1,2",
    ] {
        for flags in [&[][..], &["-s"], &["--complement"], &["-s", "--complement"]] {
            for od in [&[][..], &["--output-delimiter=:"]] {
                let mut a = s(&["-d", "\n", list]);
                a.extend(s(flags));
                a.extend(s(od));
                a.extend(names.iter().cloned());
                same("cut", &a, None, c.path(), &[("LC_ALL", "C")]);
            }
        }
    }
}

/// cut's messages showed a name that is not UTF-8 with U+FFFD for each
/// stray byte, and any name unquoted; GNU quotes it with `quotef`.
#[test]
fn cut_quotes_file_names_in_messages_as_gnu() {
    use std::ffi::OsString;
    let (dir, names) = gnu::non_utf8_names();
    let args = vec![
        OsString::from("-b1"),
        names[4].clone(),
        OsString::from("a b"),
        names[1].clone(),
    ];
    gnu::same_bytes("cut", &args, dir.path());
}

/// `cut <&-` said "-: Bad file descriptor" once; GNU cut says it again
/// when it fails to close the standard input it read, at the end.
#[test]
fn a_closed_standard_input_as_gnu_reports_it() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), b"hello\n").unwrap();
    for args in [&["-c1"][..], &["-c1", "-", "f", "-"], &["-f1", "f"]] {
        gnu::same_redirected("cut", args, "<&-", d.path());
    }
}

/// A line longer than memory. GNU cut reads a byte at a time and holds
/// nothing but, for -f, the first field where it decides what is printed
/// (without -s when field 1 is not selected, with -s when it is); ferry
/// gathered every line whole and said "a line longer than the memory
/// there is" (with a file name, where GNU says "memory exhausted") once
/// the line outgrew memory — `head -c 300M /dev/zero | tr '\0' a | cut
/// -c1-3` cost it 300 MiB where GNU needs under 2. Now a line longer than
/// a region is cut in parts as it comes. Each case pipes a 192 MiB line
/// through both tools with 64 MiB of address space: the same output (its
/// checksum), status and messages — "memory exhausted" (status 1) where
/// GNU holds a first field that does not fit.
#[test]
fn a_line_longer_than_memory_is_cut_as_gnu_cuts_it() {
    let d = tempfile::tempdir().unwrap();
    let kib = 64 << 10;
    let plain = "head -c 192M /dev/zero | tr '\\0' a";
    // Fields: a short first field, a long second, two short ones.
    let fields = "{ printf 'ab\\tc'; head -c 192M /dev/zero | tr '\\0' x; printf '\\tde\\tf\\n'; }";
    // Short lines around it, for the state a long line leaves behind.
    let around = "{ printf 'a\\tb\\n\\nxyz\\n'; head -c 192M /dev/zero | tr '\\0' a; printf '\\nq\\tr\\n1\\n'; }";
    let cases: &[(&[&str], &str)] = &[
        (&["-c1-3"], plain),
        (&["-b2-4,10-20,201326580-", "--output-delimiter=:"], plain),
        (&["-c1-3", "--complement"], plain),
        (&["-f1"], plain),
        (&["-f2", "-s"], plain),
        (&["-n", "-b5-9"], around),
        (&["-f2"], around),
        (&["-f2"], fields),
        (&["-f1,3", "-s", "--output-delimiter=::"], fields),
        (&["-f2", "--complement"], fields),
        (&["-f3-"], fields),
        (&["-z", "-c1-3"], plain),
        // GNU holds the first field, here all of the line: memory runs out.
        (&["-f2"], plain),
        (&["-f1", "-s"], plain),
    ];
    for (args, feed) in cases {
        gnu::same_limited_fed_into("cut", args, d.path(), kib, feed, "cksum");
    }
    // The newline as the delimiter: the whole input is one line.
    let lines = "yes abcdefghijklmnopqrstuvwxyz0123456789 | head -c 192M";
    for args in [&["-d", "\n", "-f2,5"][..], &["-d", "\n", "-f1", "-s"]] {
        gnu::same_limited_fed_into("cut", args, d.path(), kib, lines, "cksum");
    }
}

/// /dev/zero is one line that never ends: GNU cut runs on it in constant
/// memory until it is killed; ferry ran out of memory gathering it.
#[test]
fn cut_keeps_running_on_a_line_that_never_ends() {
    let d = tempfile::tempdir().unwrap();
    for args in [
        &["-c1-3"][..],
        &["-b2", "--complement"],
        &["-f1"],
        &["-f2", "-s"],
        &["-d", "\n", "-f1"],
    ] {
        let mut a = args.to_vec();
        a.push("/dev/zero");
        gnu::both_keep_running("cut", &a, d.path(), 64 << 10);
    }
}

/// Lines longer than a region (1 MiB) are cut in parts, with the line's
/// state carried across: ranges and fields that begin or end at a part's
/// edge, delimiters and line ends exactly there, a held first field over
/// several parts, lines of 0 to 3 bytes between long ones. From a file
/// (mapped, on one core), from a file of more than 64 MiB (on two cores,
/// in 16 MiB regions) whose last line but one is 72 MiB long, and from a
/// pipe with that file under 64 MiB of address space (ferry gathered the
/// long line and ran out of memory), against GNU.
#[test]
fn long_lines_are_cut_in_parts_as_gnu_cuts_them() {
    let d = tempfile::tempdir().unwrap();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut text: Vec<u8> = Vec::new();
    let region = 1usize << 20;
    for i in 0..45 {
        let r = next();
        if i % 3 != 2 {
            // 0 to 3 bytes, from letters, delimiters and nothing.
            for _ in 0..r % 4 {
                text.push(b"ab\t:"[(next() % 4) as usize]);
            }
            text.push(b'\n');
            continue;
        }
        let len = match r % 5 {
            0 => region - 2 + (next() % 5) as usize,
            1 => 2 * region + (next() % 3) as usize,
            2 => (next() % (3 * region as u64)) as usize,
            3 => region / 2 + (next() % 4096) as usize,
            _ => 3,
        };
        let start = text.len();
        text.extend((0..len).map(|_| b'a' + (next() % 26) as u8));
        // No delimiter, one, a few, or many.
        let delims = [0, 1, 3, 400][(next() % 4) as usize];
        for _ in 0..delims.min(len) {
            let at = start + (next() % len as u64) as usize;
            text[at] = if next() % 2 == 0 { b'\t' } else { b':' };
        }
        text.push(b'\n');
    }
    // Around each region edge, a delimiter, a line end or a letter.
    for k in 1..text.len() / region {
        for at in [k * region - 1, k * region] {
            text[at] = [b'\t', b':', b'\n', b'q'][(next() % 4) as usize];
        }
    }
    std::fs::write(d.path().join("mixed"), &text).unwrap();
    // A line longer than the memory given, with fields in it.
    text.extend((0..(72usize << 20)).map(|i| match i % 1000 {
        0 => b'\t',
        500 => b':',
        _ => b'x',
    }));
    text.extend_from_slice(b"\nlast\tline");
    std::fs::write(d.path().join("long"), &text).unwrap();
    drop(text);
    let opts: &[&[&str]] = &[
        &["-c1-3"],
        &["-b2-4,10-20", "--output-delimiter=:"],
        &["-c1048570-1048580,2097150-"],
        &["-b1048576", "--complement"],
        &["-f1"],
        &["-f2"],
        &["-f1", "-s"],
        &["-f2", "-s"],
        &["-f1,3", "--output-delimiter=::"],
        &["-f2-", "--complement"],
        &["-d:", "-f3-5", "-s"],
        &["-z", "-c1-3"],
        &["-z", "-d:", "-f2"],
        &["-d", "\n", "-f2,4"],
        &["-d", "\n", "-f1", "-s"],
        &["-n", "-b5-"],
    ];
    // Mapped windows of a file count as address space too: files are read
    // without a limit that matters.
    let (small, large) = (64 << 10, 64 << 20);
    for o in opts {
        for file in ["mixed", "long"] {
            let mut a = o.to_vec();
            a.push(file);
            gnu::same_limited_fed_into("cut", &a, d.path(), large, "true", "cksum");
        }
        gnu::same_limited_fed_into("cut", o, d.path(), small, "cat long", "cksum");
    }
}

/// A file whose line is longer than the address space allowed
/// (`ulimit -v`): GNU cut reads it 128 KiB at a time. ferry's mapped
/// windows doubled up to 64 MiB through the line, an old one still mapped
/// beside the new, until a mapping failed ("memory exhausted" after part
/// of the line, status 1); the windows now shrink when a mapping fails
/// for want of address space.
#[test]
fn a_long_line_in_a_file_is_cut_under_an_address_space_limit() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("long");
    let made = std::process::Command::new("sh")
        .arg("-c")
        .arg("{ head -c 300M /dev/zero | tr '\\0' x; printf '\\na\\tb\\n'; } > \"$1\"")
        .arg("sh")
        .arg(&f)
        .status()
        .unwrap();
    assert!(made.success());
    let f = f.to_str().unwrap();
    for args in [
        &["-b1-3", f][..],
        &["-f2", "-s", f],
        &["-c2-5", "--complement", f],
    ] {
        gnu::same_limited("cut", args, None, d.path(), 100_000);
    }
}
