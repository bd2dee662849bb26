//! A pipe's writer offering a channel (`ipc::PipeOffer`,
//! `Stream::pipe_writer`) to callers that are not the pipe's reader.

use ferry::ipc::PipeOffer;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Connections from a process that does not hold the pipe as its
/// standard input are dropped unanswered, and a flood of them does not
/// hold the first write: it returns, having written the pipe, while the
/// flood still goes on.
#[test]
fn a_flood_of_strangers_does_not_hold_the_first_write() {
    let (r, w) = rustix::pipe::pipe().unwrap();
    let ino = rustix::fs::fstat(&w).unwrap().st_ino;
    let offer = PipeOffer::bind(w.as_fd()).expect("a pipe gets an offer");
    let stop = Arc::new(AtomicBool::new(false));
    let connected = Arc::new(AtomicUsize::new(0));
    let flood = {
        let (stop, connected) = (stop.clone(), connected.clone());
        std::thread::spawn(move || {
            let name = format!("ferry-stdio-pipe-{ino}");
            // Bounded, so that a writer that waits for the flood's end
            // fails the test below instead of hanging it.
            let until = Instant::now() + Duration::from_secs(30);
            while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                match ferry::ipc::connect(&name) {
                    Ok(s) => {
                        connected.fetch_add(1, Ordering::Relaxed);
                        drop(s);
                    }
                    Err(_) => std::thread::sleep(Duration::from_micros(200)),
                }
            }
        })
    };
    while connected.load(Ordering::Relaxed) == 0 {
        std::thread::yield_now();
    }
    let mut s = ferry::Stream::pipe_writer(w, "the pipe", Some(offer)).unwrap();
    s.write_all(b"to the pipe\n").unwrap();
    s.flush().unwrap();
    let flood_still_on = !flood.is_finished();
    stop.store(true, Ordering::Relaxed);
    flood.join().unwrap();
    assert!(
        flood_still_on,
        "the first write waited for the flood to end ({} connections)",
        connected.load(Ordering::Relaxed)
    );
    assert!(!s.on_channel());
    s.close().unwrap();
    let mut got = Vec::new();
    std::fs::File::from(r).read_to_end(&mut got).unwrap();
    assert_eq!(got, b"to the pipe\n");
}

/// A second offer for a pipe that has one is refused (one writer takes
/// the name), and a descriptor that is no pipe gets none.
#[test]
fn one_offer_per_pipe_and_none_for_a_file() {
    let (_r, w) = rustix::pipe::pipe().unwrap();
    let first = PipeOffer::bind(w.as_fd());
    assert!(first.is_some());
    assert!(PipeOffer::bind(w.as_fd()).is_none());
    drop(first);
    assert!(PipeOffer::bind(w.as_fd()).is_some());
    let f = tempfile::tempfile().unwrap();
    assert!(PipeOffer::bind(f.as_fd()).is_none());
}
