//! Read a file with `ferry::aio`, double-buffered: while the program works
//! on one chunk, the next is already being read (io_uring, or worker
//! threads where the kernel refuses it). Each `Request` owns its buffer
//! until the kernel is done with it; `into_inner` hands it back.
//!
//! `cargo run -p ferry --example aio_double_buffer` (`cargo test` runs it too).

use ferry::aio::AsyncFile;

/// Bytes per request.
const CHUNK: usize = 256 << 10;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("data");
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 256) as u8).collect();
    std::fs::write(&path, &data)?;

    let file = AsyncFile::open(&path)?;
    let size = file.len()?;
    // A read must lie inside the file when it starts: the last is shorter.
    let start = |at: u64| file.read_at(at, CHUNK.min((size - at) as usize));

    let (mut sum, mut at) = (0u64, 0u64);
    let mut next = if size > 0 { Some(start(0)?) } else { None };
    while let Some(request) = next.take() {
        let len = CHUNK.min((size - at) as usize) as u64;
        // Start the following chunk before working on this one.
        if at + len < size {
            next = Some(start(at + len)?);
        }
        request.wait(None)?; // done, or its error
        let chunk = request.into_inner();
        sum += chunk.iter().map(|&b| u64::from(b)).sum::<u64>();
        at += chunk.len() as u64;
    }

    println!("read {at} bytes with {:?}, byte sum {sum}", file.backend());
    assert_eq!(at, data.len() as u64);
    assert_eq!(sum, data.iter().map(|&b| u64::from(b)).sum::<u64>());
    Ok(())
}

#[test]
fn reads_a_file_double_buffered() {
    main().unwrap();
}
