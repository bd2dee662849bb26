//! Copy a file with `ferry::transfer::copy`: the kernel moves the bytes
//! (`copy_file_range`, two threads for large files), none pass through
//! this program's memory, and the stats say which path moved them.
//!
//! `cargo run -p ferry --example copy_file` (`cargo test` runs it too).

use ferry::transfer::{self, TransferOptions};
use std::fs::File;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let (from, to) = (dir.path().join("from"), dir.path().join("to"));
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&from, &data)?;

    // Both offsets start at 0; each moves as read/write would move it.
    let input = File::open(&from)?;
    let output = File::create(&to)?;
    let st = transfer::copy(&input, &output, &TransferOptions::new())?;

    let methods: Vec<_> = st.methods().collect();
    println!("copied {} bytes by {methods:?}", st.bytes);
    println!("bytes copied in user space: {}", st.user_copied());
    assert_eq!(st.bytes, data.len() as u64);
    assert_eq!(std::fs::read(&to)?, data);
    Ok(())
}

#[test]
fn copies_a_file() {
    main().unwrap();
}
