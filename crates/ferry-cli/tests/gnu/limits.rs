//! Running ferry's tools and the GNU tools under limits — a time limit, an
//! address-space limit, an input that never ends — and comparing how
//! they fare.

use super::{run, same_through_sh};
use std::path::Path;
use std::process::{Command, Stdio};

/// [`same`], both tools run under `timeout 10`: for inputs a regression
/// could read forever (/dev/zero), which then fails instead of hanging.
pub fn same_bounded(tool: &str, args: &[&str], stdin: Option<&[u8]>, dir: &Path) {
    let ferry = super::FERRY;
    let mut fa: Vec<String> = vec!["10".into(), ferry.into(), tool.into()];
    let mut ga: Vec<String> = vec!["10".into(), tool.into()];
    fa.extend(args.iter().map(|a| a.to_string()));
    ga.extend(args.iter().map(|a| a.to_string()));
    let ours = run("timeout", &fa, stdin, dir, &[]);
    let gnu = run("timeout", &ga, stdin, dir, &[]);
    let norm = ours.stderr.replace(&format!("ferry {tool}"), tool);
    assert_eq!(
        (String::from_utf8_lossy(&ours.stdout), ours.code, norm),
        (String::from_utf8_lossy(&gnu.stdout), gnu.code, gnu.stderr),
        "{tool} {args:?}"
    );
}

/// [`same_bounded`] with the address space of both tools limited to `kib`
/// KiB (`ulimit -v`, set in the shell that then runs the tool, so the
/// test process keeps its own limit).
pub fn same_limited(tool: &str, args: &[&str], stdin: Option<&[u8]>, dir: &Path, kib: u64) {
    let script = format!("ulimit -v {kib}; exec timeout 20 \"$@\"");
    same_through_sh(
        tool,
        args,
        stdin,
        dir,
        &script,
        &format!("under ulimit -v {kib}"),
    );
}

/// [`same_limited`] with standard input from the shell command `feed`
/// (`head -c 2G /dev/zero`: more than the limit, never held by the test).
pub fn same_limited_fed(tool: &str, args: &[&str], dir: &Path, kib: u64, feed: &str) {
    limited_fed(tool, args, dir, kib, feed, None);
}

/// [`same_limited_fed`] with standard output read by the shell command
/// `sink` (`cksum`: an output larger than the test should hold): what the
/// sink prints, the tool's exit status and its messages must be GNU's.
pub fn same_limited_fed_into(
    tool: &str,
    args: &[&str],
    dir: &Path,
    kib: u64,
    feed: &str,
    sink: &str,
) {
    limited_fed(tool, args, dir, kib, feed, Some(sink));
}

fn limited_fed(tool: &str, args: &[&str], dir: &Path, kib: u64, feed: &str, sink: Option<&str>) {
    let ferry = super::FERRY;
    let script = match sink {
        None => format!("ulimit -v {kib}; {feed} | timeout 60 \"$@\""),
        // The tool's status goes to standard error, the sink's is 0.
        Some(sink) => format!(
            "ulimit -v {kib}; {feed} | {{ timeout 60 \"$@\"; echo \"exit status $?\" >&2; }} | {sink}"
        ),
    };
    let mut fa: Vec<String> = vec![
        "-c".into(),
        script.clone(),
        "sh".into(),
        ferry.into(),
        tool.into(),
    ];
    let mut ga: Vec<String> = vec!["-c".into(), script, "sh".into(), tool.into()];
    fa.extend(args.iter().map(|a| a.to_string()));
    ga.extend(args.iter().map(|a| a.to_string()));
    let ours = run("sh", &fa, None, dir, &[]);
    let gnu = run("sh", &ga, None, dir, &[]);
    let norm = ours.stderr.replace(&format!("ferry {tool}"), tool);
    assert_eq!(
        (String::from_utf8_lossy(&ours.stdout), ours.code, norm),
        (String::from_utf8_lossy(&gnu.stdout), gnu.code, gnu.stderr),
        "{feed} | {tool} {args:?} under ulimit -v {kib}"
    );
}

/// Starts `ferry TOOL args` and `TOOL args` in `dir` (C locale) with
/// their address space limited to `kib` KiB, on an input that never ends
/// (/dev/zero): after two seconds both must still be running — not ended
/// for want of memory (status 2, or 134 for an abort) — and are then
/// killed. Their output goes to a pipe read as it comes (grep on
/// /dev/null output would act as `-q`).
pub fn both_keep_running(tool: &str, args: &[&str], dir: &Path, kib: u64) {
    let start = |prog: &[&str]| {
        let mut ch = Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {kib}; exec \"$@\""))
            .arg("sh")
            .args(prog)
            .args(args)
            .current_dir(dir)
            .env_remove("LANG")
            .env_remove("LANGUAGE")
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = ch.stdout.take().unwrap();
        let drain = std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        (ch, drain)
    };
    let mut both = [
        ("ferry", start(&[super::FERRY, tool])),
        ("GNU", start(&[tool])),
    ];
    std::thread::sleep(std::time::Duration::from_secs(2));
    for (_, (ch, _)) in &mut both {
        if ch.try_wait().unwrap().is_none() {
            let _ = ch.kill();
        }
    }
    let mut ended = Vec::new();
    for (who, (ch, drain)) in both {
        let o = ch.wait_with_output().unwrap();
        let _ = drain.join();
        use std::os::unix::process::ExitStatusExt;
        if o.status.signal() != Some(libc::SIGKILL) {
            ended.push(format!(
                "{who} ended ({}): {}",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            ));
        }
    }
    assert!(
        ended.is_empty(),
        "{tool} {args:?} under ulimit -v {kib}: {ended:?}"
    );
}
