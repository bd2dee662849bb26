//! A request body sent `Transfer-Encoding: chunked`, decoded as it comes
//! (RFC 9112, 7.1) for a program, which is given its length
//! (`CONTENT_LENGTH`), as nginx gives it to FastCGI. Chunk sizes are read
//! by `httparse`; extensions and trailer fields are dropped.

use crate::status::Status;

/// Bytes a chunk-size line (with extensions) or a trailer field may take.
const LINE_MAX: usize = 4096;
/// Bytes the trailer section may take in all.
const TRAILERS_MAX: usize = 16 << 10;

/// Checks the chunk-size line at the start of `rest` more strictly than
/// the parser does (RFC 9112, 7.1): hex digits first, no control byte in
/// the extensions, CRLF at its end (a bare LF is how a proxy in front
/// could be made to see other chunks than the server does). Ok while the
/// line is unfinished and still within `LINE_MAX`.
fn size_line(rest: &[u8]) -> Result<(), ()> {
    let Some(lf) = rest.iter().take(LINE_MAX + 1).position(|&b| b == b'\n') else {
        return if rest.len() <= LINE_MAX {
            Ok(())
        } else {
            Err(())
        };
    };
    let line = rest[..lf].strip_suffix(b"\r").ok_or(())?;
    let bad = |b: &u8| (*b < 0x20 && *b != b'\t') || *b == 0x7f;
    if !line.first().is_some_and(u8::is_ascii_hexdigit) || line.iter().any(bad) {
        return Err(());
    }
    Ok(())
}

/// Where the decoder is in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// At a chunk-size line.
    Size,
    /// In a chunk's data: this many bytes left.
    Data(u64),
    /// After a chunk's data: its CRLF.
    DataEnd,
    /// After the last chunk: trailer fields, then an empty line.
    Trailers(usize),
    /// The body is whole.
    Done,
}

/// A chunked body being decoded.
#[derive(Debug)]
pub(crate) struct Chunked {
    phase: Phase,
    /// The decoded body may take this many bytes (413 past it).
    max: u64,
}

impl Chunked {
    pub(crate) fn new(max: u64) -> Chunked {
        Chunked {
            phase: Phase::Size,
            max,
        }
    }

    pub(crate) fn done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Decodes what it can of `input` into `body`; returns how many bytes
    /// of `input` it took. Err: the status to answer with (400 for a body
    /// that is not chunked as it says, 413 past the limit).
    pub(crate) fn feed(&mut self, input: &[u8], body: &mut Vec<u8>) -> Result<usize, Status> {
        let mut at = 0;
        loop {
            let rest = &input[at..];
            match self.phase {
                Phase::Done => return Ok(at),
                Phase::Size => match size_line(rest)
                    .and_then(|_| httparse::parse_chunk_size(rest).map_err(|_| ()))
                {
                    Ok(httparse::Status::Complete((n, 0))) => {
                        at += n;
                        self.phase = Phase::Trailers(0);
                    }
                    Ok(httparse::Status::Complete((n, size))) => {
                        if (body.len() as u64).saturating_add(size) > self.max {
                            return Err(Status::PayloadTooLarge);
                        }
                        at += n;
                        self.phase = Phase::Data(size);
                    }
                    Ok(httparse::Status::Partial) if rest.len() <= LINE_MAX => return Ok(at),
                    _ => return Err(Status::BadRequest),
                },
                Phase::Data(left) => {
                    if rest.is_empty() {
                        return Ok(at);
                    }
                    let take = usize::try_from(left).unwrap_or(usize::MAX).min(rest.len());
                    body.extend_from_slice(&rest[..take]);
                    at += take;
                    let left = left - take as u64;
                    self.phase = if left == 0 {
                        Phase::DataEnd
                    } else {
                        Phase::Data(left)
                    };
                }
                Phase::DataEnd => {
                    if rest.starts_with(b"\r\n") {
                        at += 2;
                        self.phase = Phase::Size;
                    } else if rest.is_empty() || rest == b"\r" {
                        return Ok(at);
                    } else {
                        return Err(Status::BadRequest);
                    }
                }
                Phase::Trailers(seen) => {
                    let Some(lf) = rest.iter().position(|&b| b == b'\n') else {
                        if rest.len() > LINE_MAX || seen + rest.len() > TRAILERS_MAX {
                            return Err(Status::BadRequest);
                        }
                        return Ok(at);
                    };
                    if lf == 0 || rest[lf - 1] != b'\r' {
                        return Err(Status::BadRequest);
                    }
                    at += lf + 1;
                    if lf == 1 {
                        self.phase = Phase::Done;
                    } else if seen + lf + 1 > TRAILERS_MAX {
                        return Err(Status::BadRequest);
                    } else {
                        self.phase = Phase::Trailers(seen + lf + 1);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn encode(data: &[u8], sizes: &[usize], trailer: &str) -> Vec<u8> {
        let mut out = Vec::new();
        let mut at = 0;
        let mut k = 0;
        while at < data.len() {
            let n = sizes[k % sizes.len()].max(1).min(data.len() - at);
            k += 1;
            out.extend_from_slice(format!("{n:x};ext=1\r\n").as_bytes());
            out.extend_from_slice(&data[at..at + n]);
            out.extend_from_slice(b"\r\n");
            at += n;
        }
        out.extend_from_slice(format!("0\r\n{trailer}\r\n").as_bytes());
        out
    }

    proptest! {
        /// Any body, in any chunks, fed in any pieces, comes out whole,
        /// and nothing after the body's end is taken.
        #[test]
        fn a_chunked_body_decodes_whole_however_it_is_cut(
            data in proptest::collection::vec(any::<u8>(), 0..3000),
            sizes in proptest::collection::vec(1usize..700, 1..5),
            cuts in proptest::collection::vec(1usize..200, 1..10),
            trailer in prop_oneof![Just(""), Just("X-T: 1\r\n")],
        ) {
            let mut wire = encode(&data, &sizes, trailer);
            wire.extend_from_slice(b"GET /next");
            let mut d = Chunked::new(1 << 20);
            let mut body = Vec::new();
            let mut pending: Vec<u8> = Vec::new();
            let mut at = 0;
            let mut k = 0;
            while !d.done() && at < wire.len() {
                let n = cuts[k % cuts.len()].min(wire.len() - at);
                k += 1;
                pending.extend_from_slice(&wire[at..at + n]);
                at += n;
                let took = d.feed(&pending, &mut body).unwrap();
                pending.drain(..took);
            }
            prop_assert!(d.done());
            prop_assert_eq!(&body, &data);
            pending.extend_from_slice(&wire[at..]);
            prop_assert_eq!(&pending[..], b"GET /next");
        }
    }

    #[test]
    fn bodies_not_chunked_as_they_say_or_too_long_are_refused() {
        let bad = |wire: &[u8], max: u64| {
            let mut body = Vec::new();
            Chunked::new(max).feed(wire, &mut body).err()
        };
        assert_eq!(bad(b"zz\r\n", 100), Some(Status::BadRequest));
        // Lines a lenient parser would frame otherwise than a proxy.
        assert_eq!(bad(b"5;\nX\r\nabcde\r\n", 100), Some(Status::BadRequest));
        assert_eq!(bad(b"5\nabcde\r\n", 100), Some(Status::BadRequest));
        assert_eq!(bad(b"\r\n", 100), Some(Status::BadRequest));
        assert_eq!(bad(b"5;a=\x00\r\nabcde\r\n", 100), Some(Status::BadRequest));
        assert_eq!(bad(b";x\r\n", 100), Some(Status::BadRequest));
        assert_eq!(bad(b"3\r\nabcX\r\n", 100), Some(Status::BadRequest));
        assert_eq!(
            bad(b"3\r\nabc\r\n0\r\nX\n\r\n", 100),
            Some(Status::BadRequest)
        );
        assert_eq!(
            bad(b"ffffffffffffffff\r\n", 100),
            Some(Status::PayloadTooLarge)
        );
        assert_eq!(bad(b"40\r\n", 63), Some(Status::PayloadTooLarge));
        assert_eq!(bad(&[b'1'; LINE_MAX + 1], 100), Some(Status::BadRequest));
        let mut trailers = b"0\r\n".to_vec();
        for _ in 0..2000 {
            trailers.extend_from_slice(b"X-Trailer: yes\r\n");
        }
        assert_eq!(bad(&trailers, 100), Some(Status::BadRequest));
        // Within the limit exactly: taken.
        let mut body = Vec::new();
        let mut d = Chunked::new(3);
        assert_eq!(d.feed(b"3\r\nabc\r\n0\r\n\r\n", &mut body), Ok(13));
        assert!(d.done());
        assert_eq!(body, b"abc");
    }
}
