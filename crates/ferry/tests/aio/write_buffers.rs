//! A `BufMut` handed to `AsyncFile::write_buffer_at` comes back as it
//! went: its bytes went out, its length stays. `IoBuffer::finish` for a
//! `BufMut` committed the bytes that moved as if they had arrived — right
//! for a read, wrong for a write: a `BufMut` of 5 bytes with room to spare
//! came back 10 bytes long, the last 5 whatever its spare capacity held
//! (never written: memory a safe `&[u8]` must not show). On both backends.

use ferry::aio::{AsyncFile, Backend};
use ferry::BufMut;

fn written_back(backend: Backend) {
    let f = tempfile::tempfile().unwrap();
    let af = AsyncFile::from_fd(f.try_clone().unwrap().into(), backend).unwrap();
    let mut m = BufMut::with_capacity(8192);
    m.extend_from_slice(b"hello");
    let req = af.write_buffer_at(Some(0), m).unwrap();
    req.wait(None).unwrap();
    assert_eq!(req.bytes(), Some(5));
    let back = req.into_inner();
    assert_eq!(&back[..], b"hello", "{backend:?}: the buffer changed");
    let mut on_disk = Vec::new();
    std::io::Read::read_to_end(&mut &f, &mut on_disk).unwrap();
    assert_eq!(on_disk, b"hello");
}

#[test]
fn a_bufmut_written_out_comes_back_as_it_went_on_io_uring() {
    written_back(Backend::IoUring);
}

#[test]
fn a_bufmut_written_out_comes_back_as_it_went_on_threads() {
    written_back(Backend::Threads);
}
