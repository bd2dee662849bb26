//! What the library's integration tests share.

#![allow(dead_code)]

/// The environment variable that marks a child process of a test binary.
const CHILD: &str = "FERRY_TEST_CHILD";

/// For tests that change what is the whole process's (an rlimit, a signal
/// disposition): in the test binary as the harness runs it, runs test
/// `name` alone in a child process of the same binary, checks that it
/// passed there, and returns true (the caller then returns); in that
/// child, returns false (the caller goes on with the test's body).
pub fn in_child(name: &str) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return false;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "child: {:?}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// Sets this process's file size limit (`RLIMIT_FSIZE`) to `bytes`: a
/// write past it raises SIGXFSZ, or fails with EFBIG where the signal is
/// ignored or blocked. For a test body run by [`in_child`].
pub fn limit_file_size(bytes: u64) {
    rustix::process::setrlimit(
        rustix::process::Resource::Fsize,
        rustix::process::Rlimit {
            current: Some(bytes),
            maximum: None,
        },
    )
    .unwrap();
}

/// Another process opens `path` read-only with `O_TRUNC` (perl's
/// `sysopen`): Linux empties the file for anyone allowed to write it, and
/// a read-only open does not break a read lease.
pub fn child_opens_read_only_with_o_trunc(path: &std::path::Path) {
    let st = std::process::Command::new("perl")
        .args([
            "-MFcntl",
            "-e",
            "sysopen(my $f, $ARGV[0], O_RDONLY|O_TRUNC) or die \"open: $!\"",
        ])
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success(), "perl: {st:?}");
}

/// [`in_child`] for a test whose child must start inside something only
/// a command can set up (a mount namespace of its own: `unshare -m`):
/// runs `prefix`, then `arg` (the prefix's `$0` where it is `sh -c`), then
/// this binary's command line for test `name`, with `arg` in the
/// environment as `var` (the child sees it there and runs the body).
/// `Ok` if the test passed in the child; otherwise its output is shown
/// and the exit status returned (`None`: the prefix could not be run, or
/// was killed).
pub fn in_child_under(
    name: &str,
    prefix: &[&str],
    arg: &std::path::Path,
    var: &str,
) -> Result<(), Option<i32>> {
    let Some((program, args)) = prefix.split_first() else {
        return Err(None);
    };
    let out = std::process::Command::new(program)
        .args(args)
        .arg(arg)
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env(var, arg)
        .output()
        .map_err(|_| None)?;
    if out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed") {
        return Ok(());
    }
    eprintln!(
        "child: {:?}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Err(out.status.code())
}
