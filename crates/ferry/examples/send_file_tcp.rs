//! Send a file over TCP with `ferry::transfer::between`: two endpoints (a
//! file and a socket), each declaring its channel parameters; with none
//! imposed the kernel's path is taken (`sendfile`), no byte in user space.
//! The receiver is a thread of this program, on 127.0.0.1.
//!
//! `cargo run -p ferry --example send_file_tcp` (`cargo test` runs it too).

use ferry::transfer::endpoint::Endpoint;
use ferry::transfer::{between, TransferOptions};
use std::io::{Read, Seek, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut file = tempfile::tempfile()?;
    let data: Vec<u8> = (0..5_000_000u32).map(|i| (i % 253) as u8).collect();
    file.write_all(&data)?;
    file.rewind()?; // a descriptor endpoint reads from its offset on

    // A receiver on a port the kernel picks: it reads until the sender
    // closes the connection.
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let receiver = std::thread::spawn(move || -> std::io::Result<Vec<u8>> {
        let (mut conn, _) = listener.accept()?;
        let mut got = Vec::new();
        conn.read_to_end(&mut got)?;
        Ok(got)
    });

    let socket = TcpStream::connect(addr)?;
    let src = Endpoint::fd(file.as_fd())?;
    let dst = Endpoint::fd(socket.as_fd())?;
    let st = between(&src, &dst, &TransferOptions::new())?;
    drop((src, dst));
    drop(socket); // the receiver sees the end

    let got = receiver.join().expect("receiver thread")?;
    println!(
        "sent {} bytes, case {:?}, by {:?}",
        st.bytes,
        st.case,
        st.methods().collect::<Vec<_>>()
    );
    assert_eq!(st.bytes, data.len() as u64);
    assert_eq!(got, data);
    Ok(())
}

#[test]
fn sends_a_file_over_tcp() {
    main().unwrap();
}
