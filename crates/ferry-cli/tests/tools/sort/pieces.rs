//! `ferry sort` at the edges of its mapped pieces, O_TMPFILE runs, binary
//! records and output thread, against GNU sort (`/usr/bin/sort`,
//! LC_ALL=C) and, for records, a reference sort. Two of these found bugs,
//! since fixed: more runs than descriptors ended in EMFILE
//! (`many_runs_under_a_low_open_file_limit`), and an unusable `-T` gave a
//! message that was not GNU's (`unusable_temp_dir_message_is_gnus`).

use crate::gnu;
use gnu::xorshift;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const GNU: &str = "/usr/bin/sort";

struct Out {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

fn run(prog: &str, args: &[&str], dir: &Path, stdin: Option<&Path>, nofile: Option<u64>) -> Out {
    let mut c = if prog == GNU {
        Command::new(GNU)
    } else {
        gnu::ferry("sort")
    };
    c.args(args).current_dir(dir).env("LC_ALL", "C");
    c.stdin(match stdin {
        Some(p) => Stdio::from(std::fs::File::open(dir.join(p)).unwrap()),
        None => Stdio::null(),
    });
    if let Some(n) = nofile {
        gnu::with_open_file_limit(&mut c, n);
    }
    let o = c.output().unwrap();
    Out {
        code: o.status.code(),
        stdout: o.stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn both(args: &[&str], dir: &Path, stdin: Option<&Path>) -> (Out, Out) {
    (
        run("ferry", args, dir, stdin, None),
        run(GNU, args, dir, stdin, None),
    )
}

/// `size` bytes of lines up to `linelen` long from a small alphabet (many
/// duplicates); the last byte a newline or not.
fn text(size: usize, linelen: u64, nl_end: bool, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(size + linelen as usize + 1);
    while v.len() < size {
        let n = xorshift(&mut x) % (linelen + 1);
        for _ in 0..n {
            v.push(b"abcdefg \t"[(xorshift(&mut x) % 9) as usize]);
        }
        v.push(b'\n');
    }
    v.truncate(size);
    if size > 0 {
        let last = v.len() - 1;
        if nl_end {
            v[last] = b'\n';
        } else if v[last] == b'\n' {
            v[last] = b'q';
        }
    }
    v
}

/// Files of sizes at and around a piece (`-S 192K`: 64 KiB pieces), half a
/// piece (the small-file gathering threshold) and two pieces, with and
/// without a trailing newline, short lines and lines longer than a piece,
/// sorted alone, with others, with stdin (a mapped regular file) between,
/// and with -u, -r, -s -k, -z: ferry's output and status are GNU's.
#[test]
fn pieces_at_boundaries_match_gnu() {
    let d = tempfile::tempdir().unwrap();
    let l = 65536usize;
    let mut names = Vec::new();
    let mut i = 0;
    for size in [
        l - 1,
        l,
        l + 1,
        l / 2 - 1,
        l / 2,
        l / 2 + 1,
        2 * l + 1,
        0,
        3,
    ] {
        for nl in [true, false] {
            for ll in [10u64, 3000, 100_000] {
                let n = format!("p{i}");
                std::fs::write(d.path().join(&n), text(size, ll, nl, 77 + i as u64)).unwrap();
                names.push(n);
                i += 1;
            }
        }
    }
    std::fs::write(d.path().join("in"), text(50_000, 30, false, 5)).unwrap();
    let opts: [&[&str]; 5] = [
        &["-S", "192K"],
        &["-S", "192K", "-u"],
        &["-S", "100K", "-r", "-s", "-k", "1,1"],
        &["-S", "64K", "-z"],
        &[],
    ];
    let mut bad = Vec::new();
    for (k, n) in names.iter().enumerate() {
        let other = &names[(k * 7 + 3) % names.len()];
        let sets: [Vec<&str>; 4] = [
            vec![n],
            vec![n, other],
            vec!["-", n, other],
            vec![n, "-", n],
        ];
        for o in opts {
            for files in &sets {
                let mut a: Vec<&str> = o.to_vec();
                a.extend(files.iter().copied());
                let (f, g) = both(&a, d.path(), Some(Path::new("in")));
                if f.stdout != g.stdout || f.code != g.code {
                    bad.push(format!("{a:?}: ferry {:?} gnu {:?}", f.code, g.code));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// `sort - -` with stdin a regular file (mapped): the second `-` is at
/// the end, as in GNU; also with a file between.
#[test]
fn stdin_twice_reads_it_once() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("big"), text(300_000, 40, true, 9)).unwrap();
    std::fs::write(d.path().join("small"), text(1000, 40, false, 10)).unwrap();
    for o in [&[][..], &["-S", "192K"][..]] {
        for files in [
            &["-", "-"][..],
            &["-", "small", "-"][..],
            &["small", "-", "-"][..],
        ] {
            let mut a = o.to_vec();
            a.extend_from_slice(files);
            let (f, g) = both(&a, d.path(), Some(Path::new("big")));
            assert_eq!((f.code, f.stdout.len()), (g.code, g.stdout.len()), "{a:?}");
            assert!(f.stdout == g.stdout, "{a:?}");
        }
    }
}

/// `-o` naming an input, in memory (one mapped piece by reference) and
/// through runs, alone and with another input.
#[test]
fn output_naming_an_input() {
    let d = tempfile::tempdir().unwrap();
    let data = text(2_000_000, 50, true, 11);
    std::fs::write(d.path().join("other"), text(5000, 20, false, 12)).unwrap();
    for o in [
        &[][..],
        &["-u"][..],
        &["-S", "192K"][..],
        &["-r", "-S", "1M"][..],
    ] {
        for with_other in [false, true] {
            let mut outs = Vec::new();
            for prog in ["ferry", GNU] {
                std::fs::write(d.path().join("x"), &data).unwrap();
                let mut a = o.to_vec();
                a.extend_from_slice(&["-o", "x"]);
                if with_other {
                    a.push("other");
                }
                a.push("x");
                let r = run(prog, &a, d.path(), None, None);
                assert_eq!(r.code, Some(0), "{prog} {a:?}: {}", r.stderr);
                outs.push(std::fs::read(d.path().join("x")).unwrap());
            }
            assert!(outs[0] == outs[1], "{o:?} {with_other}");
        }
    }
}

/// /dev/full as output and a closed pipe: GNU's status, signal, message.
#[test]
fn full_device_and_broken_pipe() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), text(3_000_000, 50, true, 13)).unwrap();
    for o in [&[][..], &["-S", "192K"][..]] {
        let mut a = o.to_vec();
        a.extend_from_slice(&["-o", "/dev/full", "f"]);
        let (f, g) = both(&a, d.path(), None);
        assert_eq!(f.code, g.code, "{a:?}");
        assert_eq!(
            f.stderr.replace("ferry sort", "sort"),
            g.stderr.replace(GNU, "sort"),
            "{a:?}"
        );
        for prog in ["ferry", GNU] {
            let mut c = if prog == GNU {
                Command::new(GNU)
            } else {
                gnu::ferry("sort")
            };
            let mut child = c
                .args(o)
                .arg("f")
                .current_dir(d.path())
                .env("LC_ALL", "C")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut so = child.stdout.take().unwrap();
            let mut b = [0u8; 10];
            std::io::Read::read_exact(&mut so, &mut b).unwrap();
            drop(so);
            let o2 = child.wait_with_output().unwrap();
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(o2.status.signal(), Some(libc::SIGPIPE), "{prog} {o:?}");
            assert!(o2.stderr.is_empty(), "{prog}");
        }
    }
}

/// Many runs (a 20 MB input with `-S 64K`: about 300 pieces) under an
/// open-file limit of 256: GNU merges 16 runs at a time and succeeds.
/// ferry kept one open descriptor per run and failed with EMFILE ("write
/// failed: /tmp/sort (an unnamed temporary file): Too many open files");
/// it now merges in groups too.
#[test]
fn many_runs_under_a_low_open_file_limit() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), text(20_000_000, 30, true, 14)).unwrap();
    let a = ["-S", "64K", "-T", ".", "f"];
    let g = run(GNU, &a, d.path(), None, Some(256));
    assert_eq!(g.code, Some(0), "gnu: {}", g.stderr);
    let f = run("ferry", &a, d.path(), None, Some(256));
    assert_eq!(f.code, Some(0), "ferry: {}", f.stderr);
    assert!(f.stdout == g.stdout);
}

/// A `-T` directory that cannot take a file: GNU's message ("cannot
/// create temporary file in 'DIR': …") and status 2 (ferry's message was
/// its own).
#[test]
fn unusable_temp_dir_message_is_gnus() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), text(1_000_000, 30, true, 15)).unwrap();
    let a = ["-S", "64K", "-T", "missing", "f"];
    let (f, g) = both(&a, d.path(), None);
    assert_eq!((f.code, g.code), (Some(2), Some(2)));
    assert_eq!(
        f.stderr.replace("ferry sort", "sort"),
        g.stderr.replace(GNU, "sort"),
    );
}

/// A stable sort of records by `key` (reversed or not), `-u` keeping the
/// first of equal keys.
fn reference(data: &[u8], size: usize, off: usize, len: usize, rev: bool, uniq: bool) -> Vec<u8> {
    let mut recs: Vec<&[u8]> = data.chunks(size).collect();
    recs.sort_by(|a, b| {
        let d = a[off..off + len].cmp(&b[off..off + len]);
        if rev {
            d.reverse()
        } else {
            d
        }
    });
    if uniq {
        recs.dedup_by(|b, a| a[off..off + len] == b[off..off + len]);
    }
    recs.concat()
}

fn records(n: usize, size: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n * size)
        .map(|_| [b'A', b'A', b'B', 0, 0xff][(xorshift(&mut x) % 5) as usize])
        .collect()
}

/// Records: keys at the record's end, of 0 bytes, longer than the 12
/// packed bytes with -r and -u, several inputs and stdin (a pipe), in
/// memory, through runs, on 1 and 2 threads (bucketed).
#[test]
fn records_against_a_reference() {
    let d = tempfile::tempdir().unwrap();
    let sets: [(usize, usize); 3] = [(20, 30_000), (7, 120_000), (33, 2000)];
    let mut bad = Vec::new();
    for (size, n) in sets {
        let a = records(n, size, size as u64);
        let b = records(n / 3 + 1, size, 99 + size as u64);
        std::fs::write(d.path().join("a"), &a).unwrap();
        std::fs::write(d.path().join("b"), &b).unwrap();
        std::fs::write(d.path().join("e"), b"").unwrap();
        let keys = [
            (0, size),
            (0, 0),
            (size, 0),
            (size - 1, 1),
            (0, 13.min(size)),
            (size.saturating_sub(13), 13.min(size)),
            (1, size - 1),
        ];
        for (off, len) in keys {
            for (rev, uniq) in [(false, false), (true, false), (false, true), (true, true)] {
                for mem in [None, Some("192K")] {
                    for par in ["1", "2"] {
                        let (ss, ks, os) = (size.to_string(), len.to_string(), off.to_string());
                        let mut args: Vec<&str> = vec![
                            "--record-size",
                            &ss,
                            "--key-bytes",
                            &ks,
                            "--key-offset",
                            &os,
                            "--parallel",
                            par,
                        ];
                        if rev {
                            args.push("-r");
                        }
                        if uniq {
                            args.push("-u");
                        }
                        if let Some(m) = mem {
                            args.extend_from_slice(&["-S", m]);
                        }
                        args.extend_from_slice(&["a", "e", "-", "b"]);
                        // stdin as a pipe
                        let mut c = Command::new(gnu::FERRY);
                        let mut child = c
                            .arg("sort")
                            .args(&args)
                            .current_dir(d.path())
                            .stdin(Stdio::piped())
                            .stdout(Stdio::piped())
                            .stderr(Stdio::piped())
                            .spawn()
                            .unwrap();
                        let mut si = child.stdin.take().unwrap();
                        let bb = b.clone();
                        let t = std::thread::spawn(move || {
                            let _ = si.write_all(&bb);
                        });
                        let o = child.wait_with_output().unwrap();
                        t.join().unwrap();
                        let mut all = a.clone();
                        all.extend_from_slice(&b);
                        all.extend_from_slice(&b);
                        let want = reference(&all, size, off, len, rev, uniq);
                        if o.stdout != want || !o.status.success() {
                            bad.push(format!(
                                "{args:?}: {} {}",
                                o.status,
                                String::from_utf8_lossy(&o.stderr)
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// Records: an input (file, stdin pipe; small, and large through runs)
/// that is not a whole number of records is an error naming it, status 2,
/// nothing on stdout.
#[test]
fn partial_records_are_an_error() {
    let d = tempfile::tempdir().unwrap();
    let mut big = records(40_000, 20, 3);
    big.push(1);
    std::fs::write(d.path().join("big"), &big).unwrap();
    std::fs::write(d.path().join("small"), &big[..101]).unwrap();
    std::fs::write(d.path().join("ok"), &big[..200]).unwrap();
    for files in [
        &["small"][..],
        &["ok", "small"],
        &["small", "ok"],
        &["big"],
        &["-"],
        &["ok", "-", "ok"],
    ] {
        for mem in [&[][..], &["-S", "192K"][..]] {
            let mut a = vec!["--record-size", "20"];
            a.extend_from_slice(mem);
            a.extend_from_slice(files);
            let r = run("ferry", &a, d.path(), Some(Path::new("big")), None);
            assert_eq!(r.code, Some(2), "{a:?}");
            assert!(
                r.stderr.contains("not a whole number of 20-byte records"),
                "{a:?}: {}",
                r.stderr
            );
            assert!(r.stdout.is_empty(), "{a:?}");
        }
    }
}
