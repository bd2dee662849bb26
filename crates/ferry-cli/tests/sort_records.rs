//! `ferry sort --record-size N --key-bytes K [--key-offset O]`: fixed-size
//! binary records (the sort benchmark's 100-byte records with 10-byte
//! keys), sorted stably by the key's bytes, in memory and through runs on
//! disk, checked against a stable sort of the same records.

use std::process::Command;

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

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

fn ferry(args: &[&str], dir: &std::path::Path) -> (i32, Vec<u8>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .arg("sort")
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
        let (code, out, err) = ferry(&a, d);
        assert_eq!(code, 0, "{extra:?}: {err}");
        assert!(
            out == expected(&data, 100, 0, 10, rev, uniq),
            "{extra:?}: wrong order"
        );
    }
    // A key inside the record.
    let data = records(5_000, 24, 8, 4, 2);
    std::fs::write(d.join("k"), &data).unwrap();
    let (code, out, err) = ferry(
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
    let (code, out, err) = ferry(&["--record-size", "100", "--key-bytes", "10", "odd"], d);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.contains("250 bytes are not a whole number of 100-byte records"),
        "{err}"
    );
    let (code, _, err) = ferry(
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
    let (code, _, err) = ferry(&["--key-bytes", "8", "odd"], d);
    assert_eq!(code, 2);
    assert!(err.contains("need --record-size"), "{err}");
    let (code, _, err) = ferry(&["--record-size", "0", "odd"], d);
    assert_eq!(code, 2, "{err}");
}
