//! An HTTP-style response as an `Aggregate`: a header `Buf` formatted in
//! memory and the file's bytes as a `Buf` (its mapped pages where a read
//! lease can be had), sent with gathered writes (`writev`) — the file's
//! bytes are never copied into a response buffer.
//!
//! `cargo run -p ferry --example aggregate_response` (`cargo test` runs it too).

use ferry::{Aggregate, Buf};
use std::fs::File;
use std::io::Read;
use std::os::unix::net::UnixStream;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("index.html");
    let page = "<html>hello from ferry</html>\n".repeat(1000);
    std::fs::write(&path, &page)?;

    // The body: the file mapped (leased, so it cannot change under the
    // Buf), or read into a buffer where no lease can be had.
    let file = File::open(&path)?;
    let len = file.metadata()?.len();
    let body = Buf::map_file(&file, 0..len).or_else(|_| Buf::read_file(&file, 0..len))?;

    let header = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n");
    let mut response = Aggregate::from(Buf::from(header.into_bytes()));
    response.append_buf(body); // by reference: two slices, no copy
    println!(
        "response: {} bytes in {} slices",
        response.len(),
        response.slice_count()
    );
    assert_eq!(response.slice_count(), 2);

    // The client's end of a connection reads what the server's end sends.
    let (server, mut client) = UnixStream::pair()?;
    let reader = std::thread::spawn(move || -> std::io::Result<String> {
        let mut got = String::new();
        client.read_to_string(&mut got)?;
        Ok(got)
    });
    let sent = response.write_to(&server)?; // writev, resumed until all is sent
    drop(server);
    let got = reader.join().expect("client thread")?;

    let (head, rest) = got.split_once("\r\n\r\n").expect("a header");
    assert_eq!(sent, got.len());
    assert_eq!(head, format!("HTTP/1.1 200 OK\r\nContent-Length: {len}"));
    assert_eq!(rest, page);
    Ok(())
}

#[test]
fn sends_header_and_file_in_one_aggregate() {
    main().unwrap();
}
