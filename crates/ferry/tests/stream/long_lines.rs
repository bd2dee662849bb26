//! `Stream::next_line` on a line far longer than the buffer takes time
//! linear in the line's length, as `read_until` does.
//!
//! The bug this caught (fixed: the buffer now doubles): `next_line` refilled
//! from the line's start with a buffer only `bufsize` (128 KiB) larger each
//! round (engine/read.rs `next_line_slow`: `fill(searched + bufsize)`), and
//! each fill read (copied) the whole line again: quadratic in the line's
//! length. A hostile 64 MiB line cost 512 rounds and ~16 GiB of copying;
//! reading it with `read_until` (linear) takes a fraction of a second.

use ferry::Stream;
use std::io::BufRead;
use std::time::Instant;

const LINE: usize = 64 << 20;

fn input() -> Vec<u8> {
    let mut v = vec![b'a'; LINE];
    v.push(b'\n');
    v
}

#[test]
fn next_line_on_a_long_line_is_linear() {
    let mut s = Stream::from_bytes(input());
    let t = Instant::now();
    let mut v = Vec::new();
    s.read_until(b'\n', &mut v).unwrap();
    let linear = t.elapsed();
    assert_eq!(v.len(), LINE + 1);

    let (rd, mut wr) = std::io::pipe().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        wr.write_all(&input()).unwrap();
    });
    let mut s = Stream::from_fd(rd.into()).unwrap();
    let t = Instant::now();
    let n = s.next_line().unwrap().unwrap().len();
    let took = t.elapsed();
    writer.join().unwrap();
    assert_eq!(n, LINE + 1);
    eprintln!("read_until (memory): {linear:?}; next_line (pipe): {took:?}");
    assert!(
        // A hang bound, not a speed target: linear takes well under a
        // second here even in a debug build; quadratic took 14 s.
        took.as_secs_f64() < 10.0,
        "next_line of a {LINE}-byte line took {took:?} (read_until: {linear:?})"
    );
}
