//! The tools read their input files without holding other programs back.
//!
//! `ferry sort`, `wc`, `cut`, `diff` (and `cmp`, `grep`) used to map their
//! inputs under a read lease (visible in /proc/locks), which GNU's tools
//! never take: while one of them read a file, `truncate -s0 FILE` failed
//! with "Resource temporarily unavailable", and once the tool was stopped
//! (Ctrl-Z, `kill -STOP`) an `echo x >> FILE` blocked for the kernel's
//! lease-break time (45 s). They now map without a lease: the writer goes
//! through at once, and the tool reads whatever bytes were there (a file
//! cut short under it is an error, never a crash).

use crate::gnu;

use std::os::unix::process::ExitStatusExt;

/// Stops `ferry ARGS` while it has `input` mapped, then appends to and
/// truncates `input` from another process: both must go through, and the
/// tool must hold no lease; resumed, it must end by itself (no signal).
fn writers_not_held_back(args: &[&str], input: &str) {
    let d = tempfile::tempdir().unwrap();
    gnu::lines_file(&d.path().join("big"), 64);
    std::fs::copy(d.path().join("big"), d.path().join("copy")).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(d.path().join("copy"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"one more line\n"))
        .unwrap();
    let file = d.path().join(input);
    let tool = gnu::stop_while_mapping(args, d.path(), &file);
    let leases = gnu::leases_of(tool.pid());
    assert!(
        leases.is_empty(),
        "ferry {args:?} holds a lease: {leases:?}"
    );
    assert_eq!(
        gnu::sh_bounded(&format!("echo x >> {input}"), d.path()),
        Some(0),
        "ferry {args:?}: appending to {input} was held back"
    );
    assert_eq!(
        gnu::sh_bounded(&format!("truncate -s0 {input}"), d.path()),
        Some(0),
        "ferry {args:?}: truncating {input} was refused"
    );
    let (st, _, err) = tool.resume();
    assert_eq!(st.signal(), None, "ferry {args:?} died: {st}: {err}");
}

#[test]
fn wc_holds_no_lease_on_its_input() {
    writers_not_held_back(&["wc", "big"], "big");
}

#[test]
fn sort_holds_no_lease_on_its_input() {
    writers_not_held_back(&["sort", "big"], "big");
}

#[test]
fn cut_holds_no_lease_on_its_input() {
    writers_not_held_back(&["cut", "-c1-3", "big"], "big");
}

#[test]
fn grep_holds_no_lease_on_its_input() {
    writers_not_held_back(&["grep", "line", "big"], "big");
}

/// cmp compares two 64 MiB files faster than a poll of /proc/PID/maps
/// can catch it mapping one: against a standard input that stays open
/// and empty, it waits there with the file mapped.
#[test]
fn cmp_holds_no_lease_on_its_inputs() {
    writers_not_held_back(&["cmp", "copy", "-"], "copy");
}

#[test]
fn diff_holds_no_lease_on_its_inputs() {
    writers_not_held_back(&["diff", "big", "copy"], "copy");
}
