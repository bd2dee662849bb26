//! Read a text file through an alloc stream (`ferry::Stream`): lines
//! borrowed from the stream's own buffer with `next_line` (no copy, no
//! allocation per line), then the whole file as `salloc` regions — the
//! stream's buffer (or the file's mapped pages) lent to the program, given
//! back when the region is dropped.
//!
//! `cargo run -p ferry --example stream_lines` (`cargo test` runs it too).

use ferry::{OpenOptions, Stream};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.txt");
    let text: String = (0..20_000)
        .map(|i| format!("{i} {}\n", "word ".repeat(i % 17)))
        .collect();
    std::fs::write(&path, &text)?;

    // Lines: each one a slice of the stream's buffer, valid until the next
    // call on the stream (the borrow checker sees to it).
    let mut s = Stream::open(&path, &OpenOptions::read_only())?;
    let (mut lines, mut longest) = (0, 0);
    while let Some(line) = s.next_line()? {
        lines += 1;
        longest = longest.max(line.len());
    }
    println!("{lines} lines, the longest {longest} bytes with its newline");
    assert_eq!(lines, text.lines().count());
    assert_eq!(longest, text.lines().map(|l| l.len() + 1).max().unwrap());

    // Regions: up to 64 KiB at a time, several may be held at once; an
    // empty one is the end of the file.
    let s = Stream::open(&path, &OpenOptions::read_only())?;
    let (mut bytes, mut newlines) = (0, 0);
    loop {
        let region = s.salloc(64 << 10)?;
        if region.is_empty() {
            break;
        }
        bytes += region.len();
        newlines += region.iter().filter(|&&b| b == b'\n').count();
    } // each region is freed (sfree) as it goes out of scope
    assert_eq!((bytes, newlines), (text.len(), lines));
    Ok(())
}

#[test]
fn reads_lines_and_regions() {
    main().unwrap();
}
