//! `ferry pipe` between two processes through an ipc pool (`ipc:PATH`,
//! `ipc-listen:PATH`): the bytes arrive whole whichever side listens, and
//! kill -9 of either side leaves no file behind (PATH is an abstract
//! socket name, never a file) while the other side fails with a message.

use crate::gnu;

use std::io::{Read, Write};
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

/// Waits until the abstract socket `ferry-ipc:PATH` listens (so that the
/// connecting side does not come first).
fn wait_listening(path: &Path) {
    let want = format!("@ferry-ipc:{}", path.display());
    let start = Instant::now();
    loop {
        let table = std::fs::read_to_string("/proc/net/unix").unwrap();
        if table
            .lines()
            .any(|l| l.split_whitespace().last() == Some(&want))
        {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "nobody listens on {want}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether any socket still has the name of `path`.
fn name_in_use(path: &Path) -> bool {
    let want = format!("@ferry-ipc:{}", path.display());
    std::fs::read_to_string("/proc/net/unix")
        .unwrap()
        .lines()
        .any(|l| l.split_whitespace().last() == Some(&want))
}

fn finish(c: Child) -> (i32, String) {
    let out = c.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// 48 MiB from a file in one process into a file in another, both ways
/// round (the receiver listening, then the sender listening): the bytes
/// arrive whole, both exit 0, and no file named PATH appears.
#[test]
fn pipe_moves_a_file_between_two_processes_through_an_ipc_pool() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::write(&input, gnu::big_with_long_line(48)).unwrap();
    let want = std::fs::read(&input).unwrap();
    assert!(want.len() > 40 << 20, "{}", want.len());
    for receiver_listens in [true, false] {
        let meet = dir.path().join(format!("meet-{receiver_listens}"));
        let out = dir.path().join(format!("out-{receiver_listens}"));
        let (i, o, m) = (
            input.to_str().unwrap(),
            out.to_str().unwrap(),
            meet.to_str().unwrap(),
        );
        let (lis, con) = (format!("ipc-listen:{m}"), format!("ipc:{m}"));
        let (listen, connect) = if receiver_listens {
            (["pipe", &*lis, o], ["pipe", i, &*con])
        } else {
            (["pipe", i, &*lis], ["pipe", &*con, o])
        };
        let l = gnu::spawn_piped(&listen, dir.path());
        wait_listening(&meet);
        let c = gnu::spawn_piped(&connect, dir.path());
        let (cs, ce) = finish(c);
        let (ls, le) = finish(l);
        assert_eq!((ls, cs), (0, 0), "listener: {le}\nconnector: {ce}");
        assert!(
            std::fs::read(&out).unwrap() == want,
            "receiver_listens {receiver_listens}"
        );
        assert!(!meet.exists());
        assert!(!name_in_use(&meet));
    }
}

/// A relative PATH means the same place as its absolute form: the name is
/// PATH made absolute against each side's current directory.
#[test]
fn pipe_ipc_relative_and_absolute_paths_meet() {
    let dir = tempfile::tempdir().unwrap();
    let meet = dir.path().join("sub").join("meet");
    let l = gnu::spawn_piped(&["pipe", "ipc-listen:sub/meet", "out"], dir.path());
    wait_listening(&meet);
    let mut c = gnu::spawn_piped(
        &["pipe", "-", &format!("ipc:{}", meet.display())],
        Path::new("/"),
    );
    c.stdin.take().unwrap().write_all(b"met\n").unwrap();
    let (cs, ce) = finish(c);
    let (ls, le) = finish(l);
    assert_eq!((ls, cs), (0, 0), "{le}{ce}");
    assert_eq!(std::fs::read(dir.path().join("out")).unwrap(), b"met\n");
    assert!(!dir.path().join("sub").exists());
}

/// The sender killed with SIGKILL mid-transfer: the receiver says the
/// sender went away (exit 1; what came before is written), and neither
/// a file nor the socket name is left behind.
#[test]
fn pipe_ipc_receiver_survives_the_sender_killed() {
    let dir = tempfile::tempdir().unwrap();
    let meet = dir.path().join("meet");
    let m = meet.to_str().unwrap().to_string();
    let before = entries(dir.path());
    let l = gnu::spawn_piped(&["pipe", &format!("ipc-listen:{m}"), "out"], dir.path());
    wait_listening(&meet);
    let mut sender = gnu::spawn_piped(&["pipe", "-", &format!("ipc:{m}")], dir.path());
    let mut feed = sender.stdin.take().unwrap();
    feed.write_all(&vec![b'x'; 3 << 20]).unwrap();
    // Until the receiver wrote some of it out.
    let out = dir.path().join("out");
    let start = Instant::now();
    while std::fs::metadata(&out).map_or(0, |m| m.len()) == 0 {
        assert!(start.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(10));
    }
    sender.kill().unwrap();
    let _ = sender.wait();
    drop(feed);
    let (ls, le) = finish(l);
    assert_eq!(ls, 1, "{le}");
    assert!(le.contains("went away"), "{le}");
    let got = std::fs::read(&out).unwrap();
    assert!(!got.is_empty() && got.iter().all(|&b| b == b'x'));
    let mut after = entries(dir.path());
    after.retain(|e| e != "out");
    assert_eq!(after, before);
    assert!(!name_in_use(&meet));
}

/// The receiver killed with SIGKILL mid-transfer: the sender fails (exit
/// 1, a write error naming the ipc end) instead of waiting for ever, and
/// neither a file nor the socket name is left behind.
#[test]
fn pipe_ipc_sender_fails_when_the_receiver_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let meet = dir.path().join("meet");
    let m = meet.to_str().unwrap().to_string();
    let before = entries(dir.path());
    let mut sender = gnu::spawn_piped(&["pipe", "-", &format!("ipc-listen:{m}")], dir.path());
    wait_listening(&meet);
    let mut receiver = gnu::spawn_piped(&["pipe", &format!("ipc:{m}"), "-"], dir.path());
    let mut feed = sender.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk = vec![b'y'; 1 << 20];
        // Until the sender stops taking input.
        while feed.write_all(&chunk).is_ok() {}
    });
    let mut first = vec![0; 1 << 16];
    receiver
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    assert!(first.iter().all(|&b| b == b'y'));
    receiver.kill().unwrap();
    let _ = receiver.wait();
    let (ss, se) = finish(sender);
    writer.join().unwrap();
    assert_eq!(ss, 1, "{se}");
    assert!(se.contains("write error"), "{se}");
    assert_eq!(entries(dir.path()), before);
    assert!(!name_in_use(&meet));
}
