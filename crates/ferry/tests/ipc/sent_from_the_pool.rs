//! A received buffer leaving for the kernel: into a regular file it goes
//! from the sender's memfd with `sendfile` (counted in
//! `transfer::sent_from_file_bytes`), into a pipe or a socket it is
//! copied, because there the kernel would keep references to the pool's
//! pages while the sender reuses them.

use crate::support;
use ferry::ipc::Sender;
use ferry::{Aggregate, Buf};
use std::io::{Read, Seek};
use std::os::fd::AsFd;

use crate::{channel, serial};

/// One slot filled with `bytes`, frozen.
fn slot_of(tx: &mut Sender, bytes: &[u8]) -> Buf {
    let mut m = tx.alloc().unwrap();
    m[..bytes.len()].copy_from_slice(bytes);
    m.freeze(bytes.len())
}

on_both_transports! {
/// A message of three slots' pieces (sliced inside their slots, so the
/// offsets into the memfd are not slot starts) goes into a file with a
/// heap piece between them: the pool's pieces by `sendfile` from the
/// memfd, the heap piece written, all in order.
fn received_buffers_go_into_a_file_from_the_pool_by_sendfile(transport: Transport) {
    let _g = serial();
    let (mut tx, mut rx) = channel(1 << 16, 4, transport);
    let data = support::random_bytes(3 << 16, 7);
    let mut msg = Aggregate::new();
    for (i, part) in data.chunks(1 << 16).enumerate() {
        msg.append_buf(slot_of(&mut tx, part).slice(i * 100..));
    }
    let expected_pool: Vec<u8> = msg.copy_to_vec();
    tx.send(msg).unwrap();
    let got = rx.recv().unwrap().unwrap();
    assert_eq!(got.copy_to_vec(), expected_pool);
    let pieces: Vec<Buf> = got.bufs().cloned().collect();
    let mut out = Aggregate::from(pieces[0].clone());
    out.append_buf(Buf::from(b"-heap piece-".to_vec()));
    out.append_buf(pieces[1].clone());
    out.append_buf(pieces[2].clone());
    let mut expected = pieces[0].to_vec();
    expected.extend_from_slice(b"-heap piece-");
    expected.extend_from_slice(&pieces[1]);
    expected.extend_from_slice(&pieces[2]);
    drop((got, pieces));

    let mut file = tempfile::tempfile().unwrap();
    let before = ferry::transfer::sent_from_file_bytes();
    assert_eq!(
        ferry::exchange::write_buf(&file, out).unwrap(),
        expected.len()
    );
    let sent = ferry::transfer::sent_from_file_bytes() - before;
    assert_eq!(
        sent,
        expected_pool.len() as u64,
        "the pool's bytes by sendfile"
    );
    assert_eq!(support::offset(&mut file), expected.len() as u64);
    file.rewind().unwrap();
    let mut back = Vec::new();
    file.read_to_end(&mut back).unwrap();
    assert!(back == expected, "the file holds the bytes in order");
}
}

on_both_transports! {
/// sendfile(2) refuses an output opened `O_APPEND` (`EINVAL`): the bytes
/// are then written from the mapping, at the file's end, none lost.
fn a_received_buffer_into_an_append_mode_file_is_written(transport: Transport) {
    let _g = serial();
    let (mut tx, mut rx) = channel(1 << 16, 2, transport);
    let data = support::random_bytes(50_000, 9);
    let b = slot_of(&mut tx, &data);
    tx.send(Aggregate::from(b)).unwrap();
    let got = rx.recv().unwrap().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("appended");
    std::fs::write(&path, b"head:").unwrap();
    let f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    let before = ferry::transfer::sent_from_file_bytes();
    assert_eq!(ferry::exchange::write_buf(&f, got).unwrap(), data.len());
    assert_eq!(ferry::transfer::sent_from_file_bytes(), before);
    let back = std::fs::read(&path).unwrap();
    assert!(back[..5] == *b"head:" && back[5..] == data[..]);
}
}

on_both_transports! {
/// Into a pipe, a splice from the pool's memfd would hand the pipe the
/// pool's pages: the receiver drops the buffer (its slot goes back), the
/// sender writes the slot again, and the pipe's reader gets the new bytes
/// instead of the ones written. So pipes (and sockets) get a copy, and
/// the reader gets what was written however the slot is reused.
fn a_received_buffer_in_a_pipe_keeps_its_bytes_when_the_sender_reuses_the_slot(transport: Transport) {
    let _g = serial();
    for into_socket in [false, true] {
        let (mut tx, mut rx) = channel(1 << 16, 1, transport);
        let a = vec![b'A'; 60_000];
        let b = slot_of(&mut tx, &a);
        tx.send(Aggregate::from(b)).unwrap();
        let got = rx.recv().unwrap().unwrap();
        let (mut r, w): (Box<dyn Read>, std::os::fd::OwnedFd) = if into_socket {
            let (x, y) = std::os::unix::net::UnixStream::pair().unwrap();
            (Box::new(y), x.into())
        } else {
            let (r, w) = std::io::pipe().unwrap();
            (Box::new(r), w.into())
        };
        let before = ferry::transfer::sent_from_file_bytes();
        assert_eq!(ferry::exchange::write_buf(w.as_fd(), got).unwrap(), a.len());
        assert_eq!(ferry::transfer::sent_from_file_bytes(), before);
        // The receiver let go of the slot: the sender's one slot comes
        // back, and the sender writes it over.
        let again = slot_of(&mut tx, &vec![b'B'; 60_000]);
        drop(w);
        let mut back = Vec::new();
        r.read_to_end(&mut back).unwrap();
        assert!(
            back == a,
            "into_socket {into_socket}: the reader got {} bytes, {} of them B",
            back.len(),
            back.iter().filter(|&&c| c == b'B').count()
        );
        drop(again);
    }
}
}
