//! `transfer::between` into outputs that stall: non-blocking pipes and
//! sockets whose readers pause. The global buffer cache's domination rule
//! (a stalled transfer holds at most its share while another sharing the
//! cache completes), and dynamic case switching (to buffering while the
//! output takes nothing, back when the queue empties), checked by bytes,
//! order, buffer accounting and the switches the stats record — never by
//! timing.

use crate::support::{nz, random_bytes, set_nonblocking, temp_file_with};
use ferry::transfer::cache::{BufferCache, Share};
use ferry::transfer::endpoint::Endpoint;
use ferry::transfer::overlay::ChannelParams;
use ferry::transfer::{between, Path, TransferOptions, TransferStats};
use ferry::{Pool, PoolConfig};
use proptest::prelude::*;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

fn small_cache(budget: usize, share: Share) -> BufferCache {
    BufferCache::new(
        Pool::new(PoolConfig::default().with_budget(budget)).unwrap(),
        share,
    )
}

/// Waits (up to a minute: a liveness bound, not a measurement) for `f`.
fn until(what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < end, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Switches into buffering and back out balance (a transfer may end while
/// buffering).
fn balanced(st: &TransferStats) -> bool {
    let s = &st.switches;
    let into: u64 = [Path::Kernel, Path::Through]
        .iter()
        .map(|&p| s.between(p, Path::Buffered))
        .sum();
    let out: u64 = [Path::Kernel, Path::Through]
        .iter()
        .map(|&p| s.between(Path::Buffered, p))
        .sum();
    into == out || into == out + 1
}

/// The domination test the issue asks for: transfer A writes into a pipe
/// nobody reads, transfer B runs beside it at full speed, both on one
/// small cache. A stops reading ahead at its share; B completes with
/// every byte; A never held more than its share; then A's reader wakes
/// and A completes too.
#[test]
fn a_stalled_transfer_holds_its_share_and_another_completes_beside_it() {
    let budget = 1 << 20;
    let cache = small_cache(budget, Share::default());
    let share_a = Share::default().bytes(budget, 1);
    let a_bytes = random_bytes(6 << 20, 11);
    let b_bytes = random_bytes(5 << 20 | 333, 12);
    let a_in = temp_file_with(&a_bytes);
    let b_in = temp_file_with(&b_bytes);
    let (mut a_r, a_w) = std::io::pipe().unwrap();
    set_nonblocking(&a_w);
    let (cache_ref, a_in, b_in) = (&cache, &a_in, &b_in);
    std::thread::scope(|s| {
        let a = s.spawn(move || {
            let src = Endpoint::fd(a_in.as_fd()).unwrap();
            let dst = Endpoint::fd(a_w.as_fd()).unwrap();
            let st = between(&src, &dst, &TransferOptions::new().cache(cache_ref));
            drop(dst);
            drop(a_w);
            st.unwrap()
        });
        // A has read ahead to its share and been refused: it is stalled.
        until("A to reach its share", || {
            let c = cache.stats();
            c.refused > 0 && c.held_bytes > 0
        });
        let held_a = cache.stats().held_bytes;
        assert!(
            held_a <= share_a,
            "A holds {held_a} of a share of {share_a}"
        );

        // B: a record size imposed on its output, so it reads every block
        // into the cache too (no kernel path); its reader drains at once.
        let (mut b_r, b_w) = std::io::pipe().unwrap();
        set_nonblocking(&b_w);
        let b_reader = s.spawn(move || {
            let mut v = Vec::new();
            b_r.read_to_end(&mut v).unwrap();
            v
        });
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let b = s.spawn(move || {
            let src = Endpoint::fd(b_in.as_fd()).unwrap();
            let dst = Endpoint::fd(b_w.as_fd())
                .unwrap()
                .impose(ChannelParams::variable(nz(32 << 10)));
            let st = between(&src, &dst, &TransferOptions::new().cache(cache_ref));
            let _ = done_tx.send(());
            drop(dst);
            drop(b_w);
            st.unwrap()
        });
        done_rx
            .recv_timeout(Duration::from_secs(120))
            .expect("B completes while A is stalled");
        let st_b = b.join().unwrap();
        assert!(
            b_reader.join().unwrap() == b_bytes,
            "B's bytes arrived, in order"
        );
        assert_eq!(st_b.bytes, b_bytes.len() as u64);
        assert!(
            st_b.peak_buffer_bytes > 0,
            "B read through the cache: {st_b:?}"
        );

        // A is still stalled, still within its share.
        let c = cache.stats();
        assert_eq!(c.users, 1, "{c:?}");
        assert!(c.held_bytes <= share_a, "{c:?}");

        // A's reader wakes: A completes, every byte in order.
        let mut got = Vec::new();
        let a_reader = s.spawn(move || {
            a_r.read_to_end(&mut got).unwrap();
            got
        });
        let st_a = a.join().unwrap();
        assert!(
            a_reader.join().unwrap() == a_bytes,
            "A's bytes arrived, in order"
        );
        assert_eq!(st_a.bytes, a_bytes.len() as u64);
        assert!(
            st_a.peak_buffer_bytes as usize <= share_a,
            "A held at most its share: {st_a:?}"
        );
        assert!(st_a.share_waits >= 1, "{st_a:?}");
        assert!(
            st_a.switches.between(Path::Kernel, Path::Buffered) >= 1,
            "{st_a:?}"
        );
        assert!(balanced(&st_a), "{st_a:?}");
    });
    assert_eq!(cache.stats().held_bytes, 0, "every charge came off");
}

/// Waits until the transfer using `cache` has been refused a buffer: it
/// has read ahead to its share, and reads nothing more until its queue is
/// empty (so it switches back home before the end).
fn until_refused(cache: &BufferCache) {
    until("the transfer to buffer to its share", || {
        cache.stats().refused > 0
    });
}

/// A reader that waits (until the transfer has read ahead to its share)
/// and then reads: the transfer leaves the kernel's path for buffering,
/// and comes back when its queue empties.
#[test]
fn a_paused_pipe_reader_switches_the_kernel_path_to_buffering_and_back() {
    let budget = 2 << 20;
    let cache = small_cache(budget, Share::default());
    let share = Share::default().bytes(budget, 1) as u64;
    let bytes = random_bytes(8 << 20 | 5, 21);
    let input = temp_file_with(&bytes);
    let (mut r, w) = std::io::pipe().unwrap();
    set_nonblocking(&w);
    let st = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            until_refused(&cache);
            let mut v = Vec::new();
            let mut buf = vec![0u8; 256 << 10];
            loop {
                match r.read(&mut buf).unwrap() {
                    0 => return v,
                    k => v.extend_from_slice(&buf[..k]),
                }
            }
        });
        let src = Endpoint::fd(input.as_fd()).unwrap();
        let dst = Endpoint::fd(w.as_fd()).unwrap();
        let st = between(&src, &dst, &TransferOptions::new().cache(&cache)).unwrap();
        drop(dst);
        drop(w);
        assert!(reader.join().unwrap() == bytes, "every byte, in order");
        st
    });
    assert_eq!(st.bytes, bytes.len() as u64);
    assert!(
        st.switches.between(Path::Kernel, Path::Buffered) >= 1,
        "{st:?}"
    );
    assert!(
        st.switches.between(Path::Buffered, Path::Kernel) >= 1,
        "{st:?}"
    );
    assert!(balanced(&st), "{st:?}");
    assert!(st.share_waits >= 1, "{st:?}");
    assert!(
        st.peak_buffer_bytes > 0 && st.peak_buffer_bytes <= share,
        "{st:?}"
    );
    assert!(st.bytes_by(ferry::transfer::Method::Sendfile) > 0, "{st:?}");
    assert_eq!(st.overlay.unwrap().bytes_copied, 0);
}

/// The same over a non-blocking Unix socket with a record size imposed:
/// the overlay's pass-through switches to buffering and back.
#[test]
fn a_paused_socket_reader_switches_the_overlay_to_buffering_and_back() {
    let cache = small_cache(1 << 20, Share::Fraction(nz(2)));
    let share = 512 << 10;
    let bytes = random_bytes(4 << 20 | 99, 31);
    let input = temp_file_with(&bytes);
    let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    set_nonblocking(&a);
    let st = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            until_refused(&cache);
            let mut v = Vec::new();
            let mut buf = vec![0u8; 100_000];
            loop {
                match b.read(&mut buf).unwrap() {
                    0 => return v,
                    k => v.extend_from_slice(&buf[..k]),
                }
            }
        });
        let src = Endpoint::fd(input.as_fd()).unwrap();
        let dst = Endpoint::fd(a.as_fd())
            .unwrap()
            .impose(ChannelParams::variable(nz(10_000)));
        let st = between(&src, &dst, &TransferOptions::new().cache(&cache)).unwrap();
        drop(dst);
        a.shutdown(std::net::Shutdown::Write).unwrap();
        assert!(reader.join().unwrap() == bytes, "every byte, in order");
        st
    });
    assert_eq!(st.bytes, bytes.len() as u64);
    assert!(
        st.switches.between(Path::Through, Path::Buffered) >= 1,
        "{st:?}"
    );
    assert!(
        st.switches.between(Path::Buffered, Path::Through) >= 1,
        "{st:?}"
    );
    assert_eq!(
        st.switches.between(Path::Kernel, Path::Buffered),
        0,
        "{st:?}"
    );
    assert!(balanced(&st), "{st:?}");
    assert!(
        st.peak_buffer_bytes > 0 && st.peak_buffer_bytes <= share,
        "{st:?}"
    );
}

/// Without switching the transfer only waits: no switch, and it never
/// holds more than the block it is writing.
#[test]
fn without_switching_a_stalled_output_is_only_waited_for() {
    let cache = small_cache(1 << 20, Share::default());
    let bytes = random_bytes(3 << 20, 41);
    let input = temp_file_with(&bytes);
    let (mut r, w) = std::io::pipe().unwrap();
    set_nonblocking(&w);
    let st = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            let mut v = Vec::new();
            r.read_to_end(&mut v).unwrap();
            v
        });
        let src = Endpoint::fd(input.as_fd()).unwrap();
        let dst = Endpoint::fd(w.as_fd())
            .unwrap()
            .impose(ChannelParams::variable(nz(50_000)));
        let opts = TransferOptions::new().cache(&cache).no_switching();
        let st = between(&src, &dst, &opts).unwrap();
        drop(dst);
        drop(w);
        assert!(reader.join().unwrap() == bytes);
        st
    });
    assert_eq!(st.bytes, bytes.len() as u64);
    assert_eq!(st.switches.count(), 0, "{st:?}");
    assert_eq!(st.share_waits, 0);
    // One block: a quarter of the share (the read size's rule).
    let one_block = Share::default().bytes(1 << 20, 1) as u64 / 4;
    assert!(st.peak_buffer_bytes <= one_block, "{st:?}");
}

/// A peer that closes while the transfer buffers: an error, and the bytes
/// reported are those the peer took — not those read or queued.
#[test]
fn a_reader_that_goes_while_bytes_are_queued_gets_only_what_arrived() {
    let cache = small_cache(1 << 20, Share::default());
    let bytes = random_bytes(4 << 20, 51);
    let input = temp_file_with(&bytes);
    let (mut r, w) = std::io::pipe().unwrap();
    set_nonblocking(&w);
    let capacity = rustix::pipe::fcntl_getpipe_size(&w).unwrap();
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut v = vec![0u8; 100_000];
            r.read_exact(&mut v).unwrap();
            until_refused(&cache);
            // What the pipe still holds was written: take it, then go.
            set_nonblocking(&r);
            let mut buf = vec![0u8; 1 << 20];
            while let Ok(k) = r.read(&mut buf) {
                if k == 0 {
                    break;
                }
                v.extend_from_slice(&buf[..k]);
            }
            drop(r);
            v
        });
        let src = Endpoint::fd(input.as_fd()).unwrap();
        let dst = Endpoint::fd(w.as_fd()).unwrap();
        let e = between(&src, &dst, &TransferOptions::new().cache(&cache)).unwrap_err();
        let got = reader.join().unwrap();
        assert_eq!(e.raw_os_error(), Some(libc::EPIPE));
        // Reported: what the pipe took. The reader drains the pipe and
        // then closes it, and a write can land between its last read and
        // the close: at most a pipe's capacity more than arrived, never
        // what was read from the file or queued in the cache (up to 1 MiB).
        let took_unread = e.bytes().checked_sub(got.len() as u64);
        assert!(
            took_unread.is_some_and(|n| n <= capacity as u64),
            "reported {} for {} arrived (pipe capacity {capacity})",
            e.bytes(),
            got.len()
        );
        assert!(got == bytes[..got.len()]);
        assert!(e.stats().peak_buffer_bytes > 0);
    });
    assert_eq!(cache.stats().held_bytes, 0);
}

/// A fixed output block larger than the whole cache: the blocks it is
/// gathered from come from the heap past the budget, instead of waiting
/// for good for buffers the cache can never give.
#[test]
fn an_output_block_larger_than_the_cache_still_moves() {
    let cache = small_cache(64 << 10, Share::default());
    let bytes = random_bytes(1 << 20 | 17, 61);
    let input = temp_file_with(&bytes);
    let (mut r, w) = std::io::pipe().unwrap();
    let st = std::thread::scope(|s| {
        let reader = s.spawn(move || {
            let mut v = Vec::new();
            r.read_to_end(&mut v).unwrap();
            v
        });
        let src = Endpoint::fd(input.as_fd()).unwrap();
        let dst = Endpoint::fd(w.as_fd())
            .unwrap()
            .impose(ChannelParams::fixed(nz(200_000)));
        let st = between(&src, &dst, &TransferOptions::new().cache(&cache)).unwrap();
        drop(dst);
        drop(w);
        assert!(reader.join().unwrap() == bytes);
        st
    });
    assert_eq!(st.bytes, bytes.len() as u64);
    assert!(st.peak_buffer_bytes <= 64 << 10, "{st:?}");
    assert_eq!(cache.stats().held_bytes, 0);
}

#[derive(Debug, Clone)]
struct Reader {
    /// (bytes to read at once, microseconds to sleep before)
    steps: Vec<(usize, u64)>,
}

fn reader() -> impl Strategy<Value = Reader> {
    proptest::collection::vec(
        (
            1usize..300_000,
            prop_oneof![3 => Just(0u64), 1 => 0u64..3000],
        ),
        1..40,
    )
    .prop_map(|steps| Reader { steps })
}

fn sink_pair(socket: bool) -> (OwnedFd, Box<dyn Read + Send>) {
    if socket {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        (OwnedFd::from(a), Box::new(b))
    } else {
        let (r, w) = std::io::pipe().unwrap();
        (OwnedFd::from(w), Box::new(r))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A reader taking random-sized pieces after random delays, into a
    /// non-blocking pipe or socket, with or without a record size: every
    /// byte arrives in order, the stats count exactly them, the switches
    /// balance, and the transfer never held more than its share (plus the
    /// blocks one output record is gathered from).
    #[test]
    fn a_randomly_paced_reader_gets_every_byte(
        len in 0usize..(3 << 20),
        socket in any::<bool>(),
        record in proptest::option::of(1usize..200_000),
        fixed in any::<bool>(),
        r in reader(),
    ) {
        let budget = 1 << 20;
        let cache = small_cache(budget, Share::default());
        let bytes = random_bytes(len, len as u64 ^ 0x55);
        let input = temp_file_with(&bytes);
        let (w, mut rd) = sink_pair(socket);
        set_nonblocking(&w);
        let st = std::thread::scope(|s| {
            let steps = r.steps.clone();
            let reader = s.spawn(move || {
                let mut v = Vec::new();
                let mut buf = vec![0u8; 300_000];
                let mut i = 0;
                loop {
                    let (k, us) = steps[i % steps.len()];
                    i += 1;
                    std::thread::sleep(Duration::from_micros(us));
                    match rd.read(&mut buf[..k]).unwrap() {
                        0 => return v,
                        got => v.extend_from_slice(&buf[..got]),
                    }
                }
            });
            let src = Endpoint::fd(input.as_fd()).unwrap();
            let mut dst = Endpoint::fd(w.as_fd()).unwrap();
            if let Some(b) = record {
                dst = dst.impose(if fixed {
                    ChannelParams::fixed(nz(b))
                } else {
                    ChannelParams::variable(nz(b))
                });
            }
            let st = between(&src, &dst, &TransferOptions::new().cache(&cache)).unwrap();
            drop(dst);
            drop(w);
            (st, reader.join().unwrap())
        });
        let (st, got) = st;
        prop_assert_eq!(got.len(), bytes.len());
        prop_assert!(got == bytes);
        prop_assert_eq!(st.bytes, bytes.len() as u64);
        prop_assert!(balanced(&st), "{:?}", st);
        let share = Share::default().bytes(budget, 1) as u64;
        let gathering = if fixed { record.unwrap_or(0) as u64 + (64 << 10) } else { 0 };
        prop_assert!(st.peak_buffer_bytes <= share + gathering, "{:?}", st);
        prop_assert_eq!(cache.stats().held_bytes, 0);
    }
}
