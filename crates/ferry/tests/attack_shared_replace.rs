//! Attack: a `StreamGuard` is a `&mut Stream` (DerefMut), so safe code can
//! `mem::replace` the stream inside a `SharedStream` while
//! `SharedRegionMut`s of the old stream are live: they borrow only the
//! `SharedStream`, not the stream in it. The old stream is dropped (its
//! write buffer goes back to the pool) and the region still points into
//! it; the new stream's next region gets the same memory. Two live
//! writable regions alias — use after free from safe code. Freeing the old
//! region later also rebuilds its raw form on the *new* stream.

use ferry::{SharedStream, Stream};

#[test]
#[ignore = "attack: mem::replace through a StreamGuard frees the buffer a live SharedRegionMut points into"]
fn attack_replace_the_stream_under_a_live_shared_region() {
    let s = SharedStream::new(Stream::memory());
    let mut r = s.salloc_mut(64).unwrap();
    {
        let mut g = s.lock();
        let old = std::mem::replace(&mut *g, Stream::memory());
        drop(old); // its buffers go back to the pool
    }
    let mut r2 = s.salloc_mut(64).unwrap(); // the new stream's first buffer
    r2.fill(b'B');
    r.fill(b'R');
    let now = r2.to_vec();
    std::mem::forget(r);
    assert!(
        now.iter().all(|&b| b == b'B'),
        "a live region's bytes were written through a region of the replaced stream: {:?}",
        String::from_utf8_lossy(&now)
    );
    drop(r2);
}
