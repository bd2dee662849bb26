//! The splice paths out of pipes and sockets: a pipe straight into a file
//! or socket, a socket through a private pipe into anything; and the
//! fallback when the output takes no splice (an O_APPEND file), where the
//! bytes already taken from the socket must still arrive, in order.

use crate::support::random_bytes;
use ferry::transfer::{self, Method, TransferOptions};
use std::io::{Read, Seek, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;

/// `len` pseudo-random bytes, a different run for each length.
fn random_bytes_of(len: usize) -> Vec<u8> {
    random_bytes(len, 0x2545_F491_4F6C_DD1D ^ len as u64)
}

fn read_back(mut f: &std::fs::File) -> Vec<u8> {
    f.rewind().unwrap();
    let mut v = Vec::new();
    f.read_to_end(&mut v).unwrap();
    v
}

#[test]
fn a_pipe_into_a_file_by_splice() {
    let bytes = random_bytes_of(3 << 20 | 77);
    let (r, mut w) = std::io::pipe().unwrap();
    let b = bytes.clone();
    let writer = std::thread::spawn(move || w.write_all(&b).unwrap());
    let out = tempfile::tempfile().unwrap();
    let st = transfer::copy(&r, &out, &TransferOptions::new()).unwrap();
    writer.join().unwrap();
    assert!(read_back(&out) == bytes);
    assert_eq!(st.bytes_by(Method::Splice), bytes.len() as u64);
    assert_eq!(st.user_copied(), 0);
}

#[test]
fn a_pipe_into_an_appending_file_falls_back() {
    let bytes = random_bytes_of(1 << 20);
    let (r, mut w) = std::io::pipe().unwrap();
    let b = bytes.clone();
    let writer = std::thread::spawn(move || w.write_all(&b).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    std::fs::write(&path, b"head\n").unwrap();
    let out = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    let st = transfer::copy(&r, &out, &TransferOptions::new()).unwrap();
    writer.join().unwrap();
    let got = std::fs::read(&path).unwrap();
    assert_eq!(&got[..5], b"head\n");
    assert!(got[5..] == bytes[..]);
    assert_eq!(st.bytes, bytes.len() as u64);
}

#[test]
fn a_tcp_socket_into_a_file_through_a_private_pipe() {
    let bytes = random_bytes_of(5 << 20 | 3);
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let b = bytes.clone();
    let sender = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(&b).unwrap();
    });
    let (sock, _) = l.accept().unwrap();
    let out = tempfile::tempfile().unwrap();
    let st = transfer::copy(&sock, &out, &TransferOptions::new()).unwrap();
    sender.join().unwrap();
    assert!(read_back(&out) == bytes);
    assert_eq!(st.bytes_by(Method::Splice), bytes.len() as u64);
    assert_eq!(st.user_copied(), 0);
    // Into /dev/null too.
    let (mut a, b2) = UnixStream::pair().unwrap();
    let t = std::thread::spawn(move || a.write_all(&random_bytes_of(300_000)).unwrap());
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .unwrap();
    let st = transfer::copy(&b2, &null, &TransferOptions::new()).unwrap();
    t.join().unwrap();
    assert_eq!(st.bytes_by(Method::Splice), 300_000);
}

/// An O_APPEND file takes no splice: the first piece is already in the
/// private pipe when that shows; it is written by read/write, then the
/// rest — every byte, in order, once.
#[test]
fn a_socket_into_an_appending_file_loses_nothing() {
    let bytes = random_bytes_of(2 << 20 | 5);
    let (mut a, b) = UnixStream::pair().unwrap();
    let d = bytes.clone();
    let t = std::thread::spawn(move || a.write_all(&d).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap();
    let st = transfer::copy(&b, &out, &TransferOptions::new()).unwrap();
    t.join().unwrap();
    assert!(std::fs::read(&path).unwrap() == bytes);
    assert_eq!(st.bytes, bytes.len() as u64);
    assert_eq!(st.bytes_by(Method::Splice), 0);
    assert_eq!(st.bytes_by(Method::ReadWrite), bytes.len() as u64);
}
