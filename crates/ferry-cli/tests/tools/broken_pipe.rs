//! Writing to a pipe whose reader has gone, with SIGPIPE ignored or not
//! when the tool starts, against the GNU tools.

use crate::gnu;

/// Inputs large enough that every tool writes more than a pipe holds.
fn inputs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let lines = |from: u32, step: u32| -> Vec<u8> {
        (0..100_000u32)
            .flat_map(|i| format!("{}\n", from + i * step).into_bytes())
            .collect()
    };
    std::fs::write(dir.path().join("big"), lines(1, 1)).unwrap();
    std::fs::write(dir.path().join("odd"), lines(1, 2)).unwrap();
    std::fs::write(dir.path().join("even"), lines(2, 2)).unwrap();
    std::fs::write(dir.path().join("x1"), b"abcd").unwrap();
    std::fs::write(dir.path().join("x2"), b"bcde").unwrap();
    dir
}

const CASES: &[&[&str]] = &[
    &["cat", "big"],
    &["cat", "-n", "big"],
    &["grep", ".", "big"],
    &["cut", "-b1-", "big"],
    &["sort", "big"],
    &["diff", "odd", "even"],
    &["diff", "-u", "odd", "even"],
    &["cmp", "-l", "x1", "x2"],
];

/// Started with SIGPIPE ignored (`(trap '' PIPE; ferry cat big | head
/// -1)`), the tools still died of SIGPIPE (status 141): the binary set
/// SIGPIPE to its default action before raising it. GNU's tools see EPIPE
/// and report it: "write error: Broken pipe", status 1 (2 for grep, diff,
/// cmp and sort).
#[test]
fn ignored_sigpipe_is_reported_as_a_write_error() {
    let dir = inputs();
    for case in CASES {
        let mut fargs = case.to_vec();
        let ours = gnu::to_closed_pipe(gnu::FERRY, &fargs, dir.path(), true);
        fargs.remove(0);
        let theirs = gnu::to_closed_pipe(case[0], &fargs, dir.path(), true);
        assert_eq!(
            (ours.code, gnu::as_gnu(&ours.stderr, case[0])),
            (theirs.code, theirs.stderr),
            "{case:?}"
        );
    }
}

/// Started with SIGPIPE's default action, the tools end by it, silently,
/// as GNU's do.
#[test]
fn default_sigpipe_ends_the_tool() {
    let dir = inputs();
    for case in CASES {
        let ours = gnu::to_closed_pipe(gnu::FERRY, case, dir.path(), false);
        let theirs = gnu::to_closed_pipe(case[0], &case[1..], dir.path(), false);
        assert_eq!((ours.code, ours.stderr.as_str()), (141, ""), "{case:?}");
        assert_eq!((theirs.code, theirs.stderr.as_str()), (141, ""), "{case:?}");
    }
}

/// `ferry pipe FILE -` into a gone reader: with SIGPIPE ignored, a write
/// error naming what arrived, status 1; by default, SIGPIPE.
#[test]
fn pipe_keeps_the_sigpipe_disposition_it_started_with() {
    let dir = inputs();
    let f = gnu::FERRY;
    let r = gnu::to_closed_pipe(f, &["pipe", "big", "-"], dir.path(), true);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            1,
            "ferry pipe: -: write error: Broken pipe (0 bytes arrived)\n"
        )
    );
    let r = gnu::to_closed_pipe(f, &["pipe", "big", "-"], dir.path(), false);
    assert_eq!((r.code, r.stderr.as_str()), (141, ""));
}
