//! FastCGI (the 1996 specification, responder role) to an application
//! server such as php-fpm: a connection per request, run in the worker's
//! own event loop ([`exchange`]) as nginx runs its `fastcgi_pass`. The
//! records are built and read here — a few fixed 8-byte headers —
//! because the maintained FastCGI client crate runs only on tokio, and
//! its last blocking version gathers the whole output into one `Vec`
//! with no bound. The output's records are read into page-aligned
//! buffers, and the response's body is slices of them: the STDOUT stream
//! is never copied out of the buffers it was read into.

pub(crate) mod exchange;

use super::Job;
use crate::status::Status;
use ferry::{Aggregate, Buf, BufMut};

const VERSION: u8 = 1;
const BEGIN_REQUEST: u8 = 1;
const END_REQUEST: u8 = 3;
const PARAMS: u8 = 4;
const STDIN: u8 = 5;
const STDOUT: u8 = 6;
const STDERR: u8 = 7;
const RESPONDER: u16 = 1;
/// The request's id (one request per connection).
const ID: u16 = 1;
/// Content bytes a record holds at most.
const RECORD_MAX: usize = 0xffff;

/// A record's header.
fn header(out: &mut Vec<u8>, kind: u8, len: usize) {
    let pad = (8 - len % 8) % 8;
    out.extend_from_slice(&[VERSION, kind]);
    out.extend_from_slice(&ID.to_be_bytes());
    out.extend_from_slice(&(len as u16).to_be_bytes());
    out.extend_from_slice(&[pad as u8, 0]);
}

/// `bytes` as records of `kind`, then the empty record that ends the
/// stream.
fn stream(out: &mut Vec<u8>, kind: u8, bytes: &[u8]) {
    for piece in bytes.chunks(RECORD_MAX) {
        header(out, kind, piece.len());
        out.extend_from_slice(piece);
        out.resize(out.len() + (8 - piece.len() % 8) % 8, 0);
    }
    header(out, kind, 0);
}

/// A name-value pair's length (1 byte below 128, else 4 with the top
/// bit set).
fn pair_len(out: &mut Vec<u8>, n: usize) {
    if n < 128 {
        out.push(n as u8);
    } else {
        out.extend_from_slice(&((n as u32) | 0x8000_0000).to_be_bytes());
    }
}

/// The bytes of the whole request: BEGIN_REQUEST, PARAMS, STDIN.
pub(crate) fn encode(job: &Job) -> Vec<u8> {
    let mut params = Vec::with_capacity(job.env.bytes_len() + 8 * job.env.len());
    for (k, v) in job.env.iter() {
        pair_len(&mut params, k.len());
        pair_len(&mut params, v.len());
        params.extend_from_slice(k);
        params.extend_from_slice(v);
    }
    let mut out = Vec::with_capacity(params.len() + job.body.len() + 64);
    header(&mut out, BEGIN_REQUEST, 8);
    out.extend_from_slice(&RESPONDER.to_be_bytes());
    // Flags 0: the server closes the connection after the request.
    out.extend_from_slice(&[0; 6]);
    stream(&mut out, PARAMS, &params);
    stream(&mut out, STDIN, &job.body);
    out
}

fn new_chunk() -> Result<BufMut, Status> {
    BufMut::try_with_capacity_aligned(super::classic::CHUNK, 4096)
        .map_err(|_| Status::ServiceUnavailable)
}

/// Where the reading of the records stands.
#[derive(Default)]
struct Records {
    /// A record header being gathered.
    head: [u8; 8],
    head_have: usize,
    /// The current record: its kind, content and padding still to come.
    kind: u8,
    content_left: usize,
    pad_left: usize,
    /// STDOUT content in the chunk being filled (offsets in it).
    ranges: Vec<(usize, usize)>,
    /// STDERR content, logged at the end.
    errors: Vec<u8>,
    /// END_REQUEST's body so far.
    end: Vec<u8>,
}

impl Records {
    /// Reads `bytes`, which lie at `base` in the chunk; true once the
    /// request's END_REQUEST is whole. Err: a record breaks the protocol.
    fn scan(&mut self, mut bytes: &[u8], mut base: usize) -> Result<bool, Status> {
        let broken = |what: &str| {
            eprintln!("ferry serve: FastCGI: {what}");
            Status::BadGateway
        };
        while !bytes.is_empty() {
            if self.content_left == 0 && self.pad_left == 0 && self.head_have < 8 {
                let take = (8 - self.head_have).min(bytes.len());
                self.head[self.head_have..self.head_have + take].copy_from_slice(&bytes[..take]);
                self.head_have += take;
                bytes = &bytes[take..];
                base += take;
                if self.head_have < 8 {
                    break;
                }
                let h = self.head;
                if h[0] != VERSION {
                    return Err(broken("a record of another version"));
                }
                self.kind = h[1];
                let id = u16::from_be_bytes([h[2], h[3]]);
                self.content_left = u16::from_be_bytes([h[4], h[5]]) as usize;
                self.pad_left = h[6] as usize;
                // Records with id 0 are management records, which
                // are never asked for.
                if id != ID {
                    return Err(broken("a record of another request"));
                }
                if !matches!(self.kind, STDOUT | STDERR | END_REQUEST) {
                    // Management records (GET_VALUES_RESULT,
                    // UNKNOWN_TYPE) are not asked for.
                    return Err(broken("an unexpected record"));
                }
                if self.kind == END_REQUEST && self.content_left != 8 {
                    return Err(broken("a malformed END_REQUEST"));
                }
            }
            if self.content_left > 0 {
                let take = self.content_left.min(bytes.len());
                match self.kind {
                    STDOUT => match self.ranges.last_mut() {
                        Some(r) if r.1 == base => r.1 += take,
                        _ => self.ranges.push((base, base + take)),
                    },
                    STDERR => {
                        if self.errors.len() < 64 << 10 {
                            self.errors.extend_from_slice(&bytes[..take]);
                        }
                    }
                    _ => self.end.extend_from_slice(&bytes[..take]),
                }
                self.content_left -= take;
                bytes = &bytes[take..];
                base += take;
            }
            if self.content_left == 0 && self.pad_left > 0 {
                let take = self.pad_left.min(bytes.len());
                self.pad_left -= take;
                bytes = &bytes[take..];
                base += take;
            }
            if self.content_left == 0 && self.pad_left == 0 && self.head_have == 8 {
                self.head_have = 0;
                if self.kind == END_REQUEST {
                    // protocolStatus: 0 is REQUEST_COMPLETE.
                    if self.end[4] != 0 {
                        return Err(broken("the request was refused"));
                    }
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// The STDOUT bytes of `chunk` (now frozen) join `out`: by reference
    /// when they fill most of it; copied out when they are few (records
    /// of a byte or two among padding and STDERR), so that a response
    /// never pins much more memory than its own length.
    fn settle(&mut self, chunk: &Buf, out: &mut Aggregate) {
        let useful: usize = self.ranges.iter().map(|(a, b)| b - a).sum();
        if useful * 2 >= chunk.len() {
            for (a, b) in self.ranges.drain(..) {
                out.append_buf(chunk.slice(a..b));
            }
            return;
        }
        let mut copy = Vec::with_capacity(useful);
        for (a, b) in self.ranges.drain(..) {
            copy.extend_from_slice(&chunk[a..b]);
        }
        if !copy.is_empty() {
            out.append_buf(Buf::from(copy));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::{Kind, Route};

    fn job(body: &[u8]) -> Job {
        Job {
            route: Route {
                kind: Kind::FastCgi(0),
                script_name: b"/a.php".to_vec(),
                path_info: Vec::new(),
                script_file: Some("/srv/a.php".into()),
            },
            env: {
                let mut v = crate::gateway::env::Vars::default();
                v.set(b"A", b"1");
                v.set(b"LONG", &[b'x'; 300]);
                v
            },
            body: body.to_vec(),
            head_only: false,
            minor: 1,
            close: false,
        }
    }

    /// The records of a response: STDOUT in `pieces`, then END_REQUEST.
    fn response(pieces: &[&[u8]], err: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for p in pieces {
            header(&mut out, STDOUT, p.len());
            out.extend_from_slice(p);
            out.resize(out.len() + (8 - p.len() % 8) % 8, 0);
        }
        if !err.is_empty() {
            header(&mut out, STDERR, err.len());
            out.extend_from_slice(err);
            out.resize(out.len() + (8 - err.len() % 8) % 8, 0);
        }
        header(&mut out, STDOUT, 0);
        header(&mut out, END_REQUEST, 8);
        out.extend_from_slice(&[0; 8]);
        out
    }

    #[test]
    fn a_request_is_begin_params_and_stdin_records_each_ended() {
        let big = vec![7u8; RECORD_MAX + 10];
        let bytes = encode(&job(&big));
        assert_eq!(&bytes[..8], &[1, BEGIN_REQUEST, 0, 1, 0, 8, 0, 0]);
        assert_eq!(&bytes[8..10], &[0, 1], "responder");
        // PARAMS: `A`=`1` (1-byte lengths), `LONG` (a 4-byte length).
        let p = &bytes[16..];
        assert_eq!(p[1], PARAMS);
        let len = u16::from_be_bytes([p[4], p[5]]) as usize;
        assert_eq!(&p[8..12], &[1, 1, b'A', b'1']);
        assert_eq!(&p[12..17], &[4, 0x80, 0, 1, 44]);
        let stdin_at = 16 + 8 + len + p[6] as usize + 8;
        assert_eq!(bytes[stdin_at + 1], STDIN);
        assert_eq!(
            u16::from_be_bytes([bytes[stdin_at + 4], bytes[stdin_at + 5]]) as usize,
            RECORD_MAX
        );
        // Two STDIN records carry the body, an empty one ends it.
        assert_eq!(&bytes[bytes.len() - 8..], &[1, STDIN, 0, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn stdout_is_gathered_however_the_records_are_split() {
        let wire = response(
            &[b"Content-Type: a/b\r\n\r\n", b"hello ", b"world"],
            b"a warning",
        );
        for split in 1..wire.len() {
            let mut r = Records::default();
            let mut out = Aggregate::new();
            // Two chunks, cut at `split`.
            let (a, b) = wire.split_at(split);
            let ended_a = r.scan(a, 0).unwrap();
            r.settle(&Buf::from(a.to_vec()), &mut out);
            assert!(!ended_a, "split at {split}");
            assert!(r.scan(b, 0).unwrap(), "split at {split}");
            r.settle(&Buf::from(b.to_vec()), &mut out);
            assert_eq!(
                out.copy_to_vec(),
                b"Content-Type: a/b\r\n\r\nhello world",
                "split at {split}"
            );
            assert_eq!(r.errors, b"a warning");
        }
    }

    #[test]
    fn sparse_output_is_copied_out_not_pinned_with_its_chunk() {
        // One byte of STDOUT among a chunk of STDERR and padding.
        let mut wire = Vec::new();
        header(&mut wire, STDOUT, 1);
        wire.extend_from_slice(b"x");
        wire.resize(wire.len() + 7, 0);
        let err = vec![b'e'; 8000];
        header(&mut wire, STDERR, err.len());
        wire.extend_from_slice(&err);
        let chunk = Buf::from(wire.clone());
        let mut r = Records::default();
        assert!(!r.scan(&wire, 0).unwrap());
        let mut out = Aggregate::new();
        r.settle(&chunk, &mut out);
        assert_eq!(out.copy_to_vec(), b"x");
        let b = out.bufs().next().unwrap();
        let inside = chunk.as_ptr() as usize..chunk.as_ptr() as usize + chunk.len();
        assert!(
            !inside.contains(&(b.as_ptr() as usize)),
            "the chunk is pinned"
        );
    }

    #[test]
    fn records_that_break_the_protocol_are_a_502() {
        let mut bad_version = response(&[b"x"], b"");
        bad_version[0] = 2;
        let mut other_id = response(&[b"x"], b"");
        other_id[3] = 9;
        // Id 0 is for management records, never part of a response.
        let mut management = response(&[b"x"], b"");
        management[3] = 0;
        let mut refused = response(&[], b"");
        let n = refused.len();
        refused[n - 4] = 1;
        let mut odd_kind = response(&[b"x"], b"");
        odd_kind[1] = 11;
        for wire in [bad_version, other_id, management, refused, odd_kind] {
            assert_eq!(Records::default().scan(&wire, 0), Err(Status::BadGateway));
        }
    }
}
