//! `ferry sort --record-size N --key-bytes K [--key-offset O]`: fixed-size
//! binary records (the sort benchmark's 100-byte records with 10-byte
//! keys), sorted stably by the key's bytes, in memory and through runs on
//! disk, checked against a stable sort of the same records.

use crate::gnu;
use gnu::xorshift;
use std::process::Command;

/// `n` records of `size` bytes: a key of `kbytes` bytes at `koff` drawn
/// from few values (many equal keys, so stability shows), the rest the
/// record's number.
fn records(n: usize, size: usize, koff: usize, kbytes: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(n * size);
    for i in 0..n {
        let mut r = vec![0u8; size];
        for (j, b) in r.iter_mut().enumerate() {
            *b = (i >> (8 * (j % 8))) as u8;
        }
        for b in &mut r[koff..koff + kbytes] {
            *b = b'A' + (xorshift(&mut x) % 3) as u8;
        }
        v.extend_from_slice(&r);
    }
    v
}

fn expected(
    data: &[u8],
    size: usize,
    koff: usize,
    kbytes: usize,
    rev: bool,
    uniq: bool,
) -> Vec<u8> {
    let mut recs: Vec<&[u8]> = data.chunks(size).collect();
    recs.sort_by(|a, b| {
        let d = a[koff..koff + kbytes].cmp(&b[koff..koff + kbytes]);
        if rev {
            d.reverse()
        } else {
            d
        }
    });
    if uniq {
        recs.dedup_by(|b, a| a[koff..koff + kbytes] == b[koff..koff + kbytes]);
    }
    recs.concat()
}

/// Runs `ferry sort ARGS` in `dir`: (status, stdout, stderr).
fn run_sort(args: &[&str], dir: &std::path::Path) -> (i32, Vec<u8>, String) {
    let o = gnu::ferry("sort")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        o.stdout,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn records_sort_stably_by_their_key_in_memory_and_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = records(20_000, 100, 0, 10, 1);
    std::fs::write(d.join("r"), &data).unwrap();
    for (extra, rev, uniq) in [
        (&[][..], false, false),
        (&["-S", "64K"][..], false, false),
        (&["-S", "100K", "-r"][..], true, false),
        (&["-u"][..], false, true),
        (&["-S", "70K", "-u"][..], false, true),
        (&["--parallel=2"][..], false, false),
    ] {
        let mut a = vec!["--record-size", "100", "--key-bytes", "10"];
        a.extend_from_slice(extra);
        a.push("r");
        let (code, out, err) = run_sort(&a, d);
        assert_eq!(code, 0, "{extra:?}: {err}");
        assert!(
            out == expected(&data, 100, 0, 10, rev, uniq),
            "{extra:?}: wrong order"
        );
    }
    // A key inside the record.
    let data = records(5_000, 24, 8, 4, 2);
    std::fs::write(d.join("k"), &data).unwrap();
    let (code, out, err) = run_sort(
        &[
            "--record-size",
            "24",
            "--key-bytes",
            "4",
            "--key-offset",
            "8",
            "-S",
            "64K",
            "k",
        ],
        d,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out == expected(&data, 24, 8, 4, false, false));
}

#[test]
fn bad_records_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("odd"), vec![1u8; 250]).unwrap();
    let (code, out, err) = run_sort(&["--record-size", "100", "--key-bytes", "10", "odd"], d);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.contains("250 bytes are not a whole number of 100-byte records"),
        "{err}"
    );
    let (code, _, err) = run_sort(
        &[
            "--record-size",
            "10",
            "--key-bytes",
            "8",
            "--key-offset",
            "4",
            "odd",
        ],
        d,
    );
    assert_eq!(code, 2);
    assert!(err.contains("passes the end"), "{err}");
    let (code, _, err) = run_sort(&["--key-bytes", "8", "odd"], d);
    assert_eq!(code, 2);
    assert!(err.contains("need --record-size"), "{err}");
    let (code, _, err) = run_sort(&["--record-size", "0", "odd"], d);
    assert_eq!(code, 2, "{err}");
}

/// Keys longer than the twelve bytes packed beside each record (the rest
/// compared as bytes), reversed or not, in memory and through many runs;
/// several inputs at once — a large mapped file, a small one gathered
/// with the next, and standard input — sorted as their concatenation.
#[test]
fn long_keys_and_several_inputs_sort_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Keys of 20 bytes whose first 12 are mostly equal: the tail decides.
    let mut big = records(30_000, 40, 4, 20, 7);
    for r in big.chunks_mut(40) {
        r[4..16].fill(b'k');
    }
    let small = records(300, 40, 4, 20, 9);
    let piped = records(500, 40, 4, 20, 11);
    std::fs::write(d.join("big"), &big).unwrap();
    std::fs::write(d.join("small"), &small).unwrap();
    let all = [big.clone(), small.clone(), piped.clone()].concat();
    for (extra, rev) in [
        (&[][..], false),
        (&["-r"][..], true),
        (&["-S", "64K"][..], false),
        (&["-S", "64K", "-r", "--parallel=2"][..], true),
    ] {
        let mut a = vec![
            "--record-size",
            "40",
            "--key-bytes",
            "20",
            "--key-offset",
            "4",
        ];
        a.extend_from_slice(extra);
        a.extend_from_slice(&["small", "big", "-"]);
        let o = gnu::ferry("sort")
            .args(&a)
            .current_dir(d)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut o = o;
        let mut sin = o.stdin.take().unwrap();
        let p = piped.clone();
        let w = std::thread::spawn(move || std::io::Write::write_all(&mut sin, &p));
        let out = o.wait_with_output().unwrap();
        w.join().unwrap().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let inputs = [small.clone(), big.clone(), piped.clone()].concat();
        assert!(
            out.stdout == expected(&inputs, 40, 4, 20, rev, false),
            "{extra:?}: wrong order"
        );
        assert_eq!(out.stdout.len(), all.len());
    }
}

/// A large input (read by mapping, piece by piece) whose last record is
/// cut short: an error naming it and its size, and nothing written.
#[test]
fn a_partial_record_at_the_end_of_a_large_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut data = records(40_000, 100, 0, 10, 3);
    data.truncate(data.len() - 37);
    std::fs::write(d.join("cut"), &data).unwrap();
    for extra in [&[][..], &["-S", "64K"][..]] {
        let mut a = vec!["--record-size", "100", "--key-bytes", "10"];
        a.extend_from_slice(extra);
        a.extend_from_slice(&["-o", "out", "cut"]);
        let (code, out, err) = run_sort(&a, d);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(out.is_empty());
        assert!(
            err.contains(&format!(
                "cut: {} bytes are not a whole number of 100-byte records",
                data.len()
            )),
            "{extra:?}: {err}"
        );
        assert!(!d.join("out").exists(), "{extra:?}: output written");
    }
}

/// More runs than one merge may read (a low open-file limit: 64
/// descriptors make the fan-in 8): runs are merged in groups, in input
/// order, and the result is the same stable sort, with `-u` too.
#[test]
fn more_runs_than_the_fan_in_merge_in_groups() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = records(30_000, 100, 0, 10, 5);
    std::fs::write(d.join("r"), &data).unwrap();
    for uniq in [false, true] {
        let mut c = Command::new(gnu::FERRY);
        c.args(["sort", "--record-size", "100", "--key-bytes", "10"])
            .args(["-S", "64K", "-T", "."])
            .args(if uniq { &["-u"][..] } else { &[][..] })
            .arg("r")
            .current_dir(d);
        gnu::with_open_file_limit(&mut c, 64);
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            o.stdout == expected(&data, 100, 0, 10, false, uniq),
            "-u {uniq}"
        );
    }
}
