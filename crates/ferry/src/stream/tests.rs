//! Stream unit tests on memory streams (no system calls, so Miri runs them:
//! they exercise the region leases, the lock and the write queue).

use super::*;
use crate::test_support::iters;
use std::io::{BufRead, Read, Write};

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 13 % 251) as u8).collect()
}

#[test]
fn regions_outlive_buffer_switches() {
    let data = pattern(if cfg!(miri) { 300_000 } else { 600_000 });
    let s = Stream::from_bytes(data.clone());
    let mut held = Vec::new();
    let mut at = 0;
    loop {
        let r = s.salloc(50_000).unwrap();
        if r.is_empty() {
            break;
        }
        assert_eq!(r.offset(), at as u64);
        at += r.len();
        held.push(r);
    }
    assert_eq!(at, data.len());
    for r in &held {
        let o = r.offset() as usize;
        assert_eq!(&r[..], &data[o..o + r.len()]);
    }
}

#[test]
fn guard_and_exclusive_paths_agree_with_the_locked_one() {
    let data = pattern(10_000);
    let mut s = Stream::from_bytes(data.clone());
    let mut got = Vec::new();
    {
        let g = s.get_mut();
        let a = g.salloc(100).unwrap();
        let b = g.salloc(100).unwrap();
        got.extend_from_slice(&a);
        got.extend_from_slice(&b);
    }
    {
        let g = s.lock();
        let c = g.salloc(300).unwrap();
        // A region taken without the guard is freed while the guard is held
        // (the lock is re-entrant for its holder).
        let d = s.salloc(100).unwrap();
        got.extend_from_slice(&c);
        got.extend_from_slice(&d);
        drop(d);
        drop(c);
        drop(g);
    }
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).unwrap();
    got.extend_from_slice(&rest);
    assert_eq!(got, data);
}

#[test]
fn write_regions_commit_in_allocation_order() {
    let s = Stream::memory();
    let mut a = s.salloc_mut(3).unwrap();
    let mut b = s.salloc_mut(3).unwrap();
    let mut c = s.salloc_mut(3).unwrap();
    c.copy_from_slice(b"ccc");
    a.copy_from_slice(b"aaa");
    b.copy_from_slice(b"bbb");
    c.free().unwrap();
    assert_eq!(
        s.len().unwrap(),
        0,
        "c is freed but a and b are not: nothing committed"
    );
    a.free().unwrap();
    assert_eq!(s.len().unwrap(), 3);
    b.free().unwrap();
    assert_eq!(s.len().unwrap(), 9);
    assert_eq!(s.into_vec().unwrap(), b"aaabbbccc");
}

#[test]
fn realloc_shrinks_and_grows_the_latest_region() {
    let s = Stream::memory();
    let mut r = s.salloc_mut(200).unwrap();
    r[..20].fill(b'1');
    r.realloc(20).unwrap();
    assert_eq!(
        s.position(),
        20,
        "paper: bytes 1-200 shrunk to 1-20, next starts at 21"
    );
    r.realloc(300_000).unwrap(); // larger than the buffer: moves, keeps bytes
    assert_eq!(&r[..20], &[b'1'; 20][..]);
    r[20..].fill(b'2');
    r.commit(25).unwrap();
    s.salloc_mut(1).unwrap()[0] = b'3';
    let v = s.into_vec().unwrap();
    assert_eq!(v, [&[b'1'; 20][..], &[b'2'; 5][..], b"3"].concat());
}

#[test]
fn std_interfaces_share_the_offset() {
    let mut s = Stream::from_bytes(b"0123456789ABCDEFGHIJKLMNOP".to_vec());
    let mut ten = [0u8; 10];
    s.read_exact(&mut ten).unwrap();
    let five = s.salloc(5).unwrap().into_buf();
    assert_eq!(&five[..], b"ABCDE");
    assert_eq!(s.fill_buf().unwrap()[0], b'F');
    s.consume(2);
    assert_eq!(s.next_line().unwrap(), Some(&b"HIJKLMNOP"[..]));
    assert_eq!(s.next_line().unwrap(), None);
    s.write_all(b"+tail").unwrap();
    assert_eq!(s.into_vec().unwrap(), b"0123456789ABCDEFGHIJKLMNOP+tail");
}

#[test]
fn threads_share_a_memory_stream() {
    let s = Stream::memory();
    let n = iters(2000);
    std::thread::scope(|sc| {
        for t in 0..2u8 {
            let s = &s;
            sc.spawn(move || {
                for i in 0..n {
                    let mut r = s.salloc_mut(4).unwrap();
                    r.copy_from_slice(&[t, (i % 256) as u8, (i / 256) as u8, 0xAA]);
                }
            });
        }
    });
    let v = s.into_vec().unwrap();
    assert_eq!(v.len(), 2 * n * 4);
    let mut next = [0usize; 2];
    for rec in v.chunks(4) {
        let t = rec[0] as usize;
        assert_eq!(rec[3], 0xAA);
        assert_eq!(rec[1] as usize + rec[2] as usize * 256, next[t]);
        next[t] += 1;
    }
}
