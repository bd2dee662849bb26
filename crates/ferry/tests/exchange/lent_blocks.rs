//! Lent blocks (`write_buf` handing a buffer's pages to a pipe
//! by `vmsplice`): whatever the process does with the memory afterwards,
//! the pipe's reader must get the bytes that were written.

use ferry::exchange::Exchange;
use ferry::PoolConfig;
use std::io::Read;

const LEN: usize = 32 << 10;

/// One class, one shard: a freed slot is the next one handed out.
fn exchange(protect: bool) -> Exchange {
    Exchange::with_config(
        PoolConfig::default()
            .with_classes(vec![LEN])
            .with_shards(1)
            .with_budget(1 << 20)
            .with_protect(protect),
    )
    .unwrap()
}

/// A process that locks its memory (`mlock`, or `mlockall` as real-time
/// programs do) makes `MADV_DONTNEED` fail with `EINVAL`: the pages of a
/// lent slot are then not dropped, and the slot's next owner writes the
/// very pages the pipe still holds.
#[test]
fn a_lent_slot_in_locked_memory_keeps_the_pipes_bytes() {
    for protect in [false, true] {
        let ex = exchange(protect);
        let (mut r, w) = std::io::pipe().unwrap();
        let mut m = ex.get_buf(LEN).unwrap();
        m.extend_from_slice(&[b'A'; LEN]);
        let b = m.freeze();
        let addr = b.as_ptr();
        // Kept by the caller, so write_buf lends it (a shared block).
        let keep = b.clone();
        // SAFETY: the slot's pages are ours and mapped; mlock changes no
        // byte of them.
        let locked = unsafe { libc::mlock(addr.cast(), LEN) };
        assert_eq!(locked, 0, "mlock: {}", std::io::Error::last_os_error());
        assert_eq!(ex.write_buf(&w, b).unwrap(), LEN);
        drop(keep);
        let mut again = ex.get_buf(LEN).unwrap();
        assert_eq!(again.spare_capacity_mut().as_ptr(), addr);
        again.extend_from_slice(&[b'B'; LEN]);
        drop(w);
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        // SAFETY: as above.
        unsafe { libc::munlock(addr.cast(), LEN) };
        assert_eq!(got.len(), LEN);
        assert!(
            got.iter().all(|&c| c == b'A'),
            "protect {protect}: the pipe's bytes were overwritten by the slot's next owner \
             ({} of {LEN} bytes are 'B')",
            got.iter().filter(|&&c| c == b'B').count()
        );
    }
}

/// `write_buf` from a thread-local's destructor (a logger flushing at
/// thread exit): the lending path's own thread-local pipe may already be
/// gone then. It must still write (by copy, or through a pipe of its
/// own), not panic on the destroyed thread-local.
#[test]
fn write_buf_from_a_thread_local_destructor() {
    use std::os::unix::net::UnixStream;
    use std::sync::Mutex;

    static OUTCOME: Mutex<Option<Result<usize, String>>> = Mutex::new(None);

    struct FlushAtExit {
        sock: UnixStream,
        data: ferry::Buf,
    }
    impl Drop for FlushAtExit {
        fn drop(&mut self) {
            let data = self.data.clone();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                // (`data` stays shared with `self.data`: lent.)
                ferry::exchange::write_buf(&self.sock, data)
            }));
            *OUTCOME.lock().unwrap() = Some(match r {
                Ok(Ok(n)) => Ok(n),
                Ok(Err(e)) => Err(format!("error: {e}")),
                Err(_) => Err("panicked".into()),
            });
        }
    }
    thread_local! {
        static FLUSH: std::cell::RefCell<Option<FlushAtExit>> = const { std::cell::RefCell::new(None) };
    }

    let ex = exchange(false);
    let (a, mut b) = UnixStream::pair().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        b.read_to_end(&mut all).unwrap();
        all
    });
    let mut m = ex.get_buf(LEN).unwrap();
    m.extend_from_slice(&[b'C'; LEN]);
    let data = m.freeze();
    std::thread::spawn(move || {
        // Registered first, so destroyed after the lending path's pipe.
        FLUSH.with(|f| {
            *f.borrow_mut() = Some(FlushAtExit {
                sock: a.try_clone().unwrap(),
                data: data.clone(),
            })
        });
        // A lending write now makes this thread's private pipe.
        let keep = data.clone();
        assert_eq!(ferry::exchange::write_buf(&a, data).unwrap(), LEN);
        drop(keep);
    })
    .join()
    .unwrap();
    let outcome = OUTCOME.lock().unwrap().take();
    assert_eq!(outcome, Some(Ok(LEN)));
    let got = reader.join().unwrap();
    assert_eq!(got.len(), 2 * LEN);
    assert!(got.iter().all(|&c| c == b'C'));
}
