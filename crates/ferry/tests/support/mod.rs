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
