//! Generated inputs, free of any tool: also the ferry-bench tests' (they
//! include this file by path).

/// The next of a xorshift64 sequence.
pub fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Text-ish bytes: words, spaces, tabs, newlines, some control and high
/// bytes, valid and invalid UTF-8.
pub fn texty(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let r = xorshift(&mut x);
        match r % 40 {
            0..=24 => v.push(b'a' + (r >> 8) as u8 % 26),
            25..=29 => v.push(b' '),
            30 => v.push(b'\t'),
            31..=33 => v.push(b'\n'),
            34 => v.extend_from_slice("é".as_bytes()),
            35 => v.extend_from_slice("日本".as_bytes()),
            36 => v.push(0x80 | ((r >> 16) as u8 % 64)), // stray continuation byte
            37 => v.push((r >> 16) as u8 % 32),          // control
            38 => v.extend_from_slice(b"\r\n"),
            _ => v.extend_from_slice("\u{2003}x\u{a0}".as_bytes()), // em space, no-break space
        }
    }
    v.truncate(n);
    v
}
