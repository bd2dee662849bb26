//! Programs behind `ferry serve --ipc-cgi PREFIX=PROGRAM`: long-lived
//! processes that take requests and give back responses over ferry's ipc,
//! as the IO-Lite paper's Flash-Lite ran CGI — no process per request, and
//! no copy of the body: the program writes it into its own pool (a memfd
//! the server maps read-only), and the server sends it to the client from
//! there. A body the program keeps (a page it built once, say) goes again
//! and again by reference, never written anew.
//!
//! The server starts one instance per worker, with its standard input and
//! output connected to the two channels (standard output is then sent to
//! standard error, so that a stray `println!` cannot break the channel),
//! and starts it again if it dies. Requests come in order, and the
//! replies must go in the same order.
//!
//! ```no_run
//! use ferry_serve::cgi;
//! fn main() -> std::io::Result<()> {
//!     cgi::serve(|req, reply| {
//!         reply.header("Content-Type", "text/plain")?;
//!         reply.write(b"you asked for ")?;
//!         reply.write(req.var("PATH_INFO").unwrap_or(b"/"))?;
//!         Ok(())
//!     })
//! }
//! ```
//!
//! A reply is a CGI response (RFC 3875, 6): `Status`, `Location` and
//! other headers, then the body; the server adds `Content-Length`,
//! `Date` and the connection's own headers.

use ferry::ipc::{Receiver, Sender, SenderConfig, SlotMut, Socket};
use ferry::{Aggregate, Buf};
use std::io;
use std::os::fd::AsFd;
use std::time::Duration;

/// The first bytes of every request message.
const MAGIC: &[u8; 4] = b"FRQ1";

/// Slots of a program's pool (64 KiB each: 64 MiB of address space,
/// memory only as written): replies in flight to slow clients hold
/// theirs until sent.
const SLOTS: usize = 1024;

/// A request, as the server passed it: the meta-variables (RFC 3875,
/// 4.1) and the body.
#[derive(Debug)]
pub struct Request {
    /// The variables' names, one after another.
    names: String,
    /// Their values, each with a NUL after it (for C, `var_c`).
    values: Vec<u8>,
    /// Each variable: its name's span in `names`, its value's in
    /// `values` (without the NUL).
    spans: Vec<[usize; 4]>,
    body: Aggregate,
}

impl Request {
    /// A meta-variable's value (`REQUEST_METHOD`, `PATH_INFO`,
    /// `QUERY_STRING`, `HTTP_ACCEPT`, …).
    ///
    /// ```
    /// let r = ferry_serve::cgi::Request::new(vec![("PATH_INFO".into(), b"/a".to_vec())], b"");
    /// assert_eq!(r.var("PATH_INFO"), Some(&b"/a"[..]));
    /// assert_eq!(r.var("QUERY_STRING"), None);
    /// ```
    pub fn var(&self, name: &str) -> Option<&[u8]> {
        self.vars().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    /// [`var`](Self::var) as a C string (`None` also for a value with a
    /// NUL in it, which no request carries).
    ///
    /// ```
    /// let r = ferry_serve::cgi::Request::new(vec![("A".into(), b"x".to_vec())], b"");
    /// assert_eq!(r.var_c("A").unwrap().to_bytes(), b"x");
    /// ```
    pub fn var_c(&self, name: &str) -> Option<&std::ffi::CStr> {
        let s = self
            .spans
            .iter()
            .find(|s| &self.names[s[0]..s[1]] == name)?;
        std::ffi::CStr::from_bytes_with_nul(&self.values[s[2]..=s[3]]).ok()
    }

    /// Every meta-variable, in the order given.
    pub fn vars(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.spans
            .iter()
            .map(|s| (&self.names[s[0]..s[1]], &self.values[s[2]..s[3]]))
    }

    /// The request's body (empty for most methods), by reference to the
    /// server's buffers.
    pub fn body(&self) -> &Aggregate {
        &self.body
    }

    /// A request made here (for a program's own tests).
    pub fn new(vars: Vec<(String, Vec<u8>)>, body: &[u8]) -> Request {
        let mut r = Request {
            names: String::new(),
            values: Vec::new(),
            spans: Vec::with_capacity(vars.len()),
            body: Aggregate::from(Buf::from(body.to_vec())),
        };
        for (k, v) in vars {
            let (a, c) = (r.names.len(), r.values.len());
            r.names.push_str(&k);
            r.values.extend_from_slice(&v);
            r.spans.push([a, r.names.len(), c, r.values.len()]);
            r.values.push(0);
        }
        r
    }
}

/// The response being built: headers, then the body's buffers.
pub struct Reply<'a> {
    tx: &'a mut Sender,
    head: Vec<u8>,
    body: Aggregate,
    /// A slot being filled by [`write`](Self::write), and how far.
    filling: Option<(SlotMut, usize)>,
}

impl Reply<'_> {
    /// Sets the status (`Status: 404 Not Found`); 200 if never set.
    pub fn status(&mut self, code: u16, reason: &str) -> io::Result<()> {
        if !(200..=599).contains(&code) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cgi: not a final status: {code}"),
            ));
        }
        self.header("Status", &format!("{code} {reason}"))
    }

    /// Adds a header line. A name that is not a token, or a value with a
    /// line break or a control byte, is refused.
    pub fn header(&mut self, name: &str, value: &str) -> io::Result<()> {
        let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        if name.is_empty() || !name.bytes().all(token) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cgi: not a header name: {name:?}"),
            ));
        }
        if value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cgi: a control byte in the value of {name}"),
            ));
        }
        self.head.extend_from_slice(name.as_bytes());
        self.head.extend_from_slice(b": ");
        self.head.extend_from_slice(value.as_bytes());
        self.head.extend_from_slice(b"\r\n");
        Ok(())
    }

    /// Appends `bytes` to the body, written straight into the pool's
    /// slots (the one copy that makes them).
    pub fn write(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let (slot, at) = match &mut self.filling {
                Some(f) => f,
                None => self.filling.insert((self.tx.alloc()?, 0)),
            };
            let take = (slot.len() - *at).min(bytes.len());
            slot[*at..*at + take].copy_from_slice(&bytes[..take]);
            *at += take;
            bytes = &bytes[take..];
            if *at == slot.len() {
                self.seal();
            }
        }
        Ok(())
    }

    /// Appends buffers to the body by reference: buffers of this
    /// program's pool (from [`alloc`](Self::alloc), or kept from earlier
    /// replies) go as they are; others are copied into the pool once.
    pub fn append(&mut self, data: impl Into<Aggregate>) {
        self.seal();
        self.body.append(data.into());
    }

    /// A free slot of the pool, to fill and [`SlotMut::freeze`]: a `Buf`
    /// that can go in this reply and in any later one, never copied.
    pub fn alloc(&mut self) -> io::Result<SlotMut> {
        self.tx.alloc()
    }

    fn seal(&mut self) {
        if let Some((slot, n)) = self.filling.take() {
            if n > 0 {
                self.body.append_buf(slot.freeze(n));
            }
        }
    }

    fn finish(mut self) -> io::Result<()> {
        self.seal();
        self.head.extend_from_slice(b"\r\n");
        let mut msg = Aggregate::from(Buf::from(std::mem::take(&mut self.head)));
        msg.append(std::mem::take(&mut self.body));
        self.tx.send(msg)
    }
}

/// Serves requests until the server closes the channel: `handler` fills
/// each reply. A handler's error becomes a 500 for that request (the
/// program goes on). Run outside `ferry serve` (standard input not a
/// channel), it fails with a message that says so.
pub fn serve(
    mut handler: impl FnMut(&Request, &mut Reply<'_>) -> io::Result<()>,
) -> io::Result<()> {
    let not_served = |e: io::Error| {
        io::Error::new(
            e.kind(),
            format!("cgi: standard input and output are not ferry serve's channels ({e})"),
        )
    };
    let requests = Socket::from(io::stdin().as_fd().try_clone_to_owned()?);
    let replies = Socket::from(io::stdout().as_fd().try_clone_to_owned()?);
    // A stray print goes to the server's log, not into the channel.
    rustix::stdio::dup2_stdout(io::stderr().as_fd())?;
    let mut tx = Sender::new(
        replies,
        SenderConfig {
            slot_size: 64 << 10,
            slots: SLOTS,
            timeout: Some(Duration::from_secs(60)),
            ring: true,
        },
    )
    .map_err(not_served)?;
    // SAFETY: the peer is the `ferry serve` that started this program
    // with this socket as its standard input; its requests come from a
    // ferry `Sender` that nothing else writes for.
    let mut rx =
        unsafe { Receiver::new(requests, Some(Duration::from_secs(30))) }.map_err(not_served)?;
    rx.set_timeout(None);
    while let Some(msg) = rx.recv()? {
        let req = decode_request(msg)?;
        let mut reply = Reply {
            tx: &mut tx,
            head: Vec::new(),
            body: Aggregate::new(),
            filling: None,
        };
        match handler(&req, &mut reply) {
            Ok(()) => reply.finish()?,
            Err(e) => {
                drop(reply);
                eprintln!("cgi: {e}");
                let mut failed = Reply {
                    tx: &mut tx,
                    head: Vec::new(),
                    body: Aggregate::new(),
                    filling: None,
                };
                failed.status(500, "Internal Server Error")?;
                failed.header("Content-Type", "text/plain")?;
                failed.write(b"500 Internal Server Error\n")?;
                failed.finish()?;
            }
        }
    }
    Ok(())
}

/// A request's message: `FRQ1`, the variables (count, then each name and
/// value with a u32 length), the body's length (u64) and the body.
pub(crate) fn encode_request(vars: &crate::gateway::env::Vars, body: &[u8]) -> Vec<u8> {
    let size = vars.bytes_len() + 8 * vars.len();
    let mut out = Vec::with_capacity(16 + size + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(vars.len() as u32).to_le_bytes());
    for (k, v) in vars.iter() {
        out.extend_from_slice(&(k.len() as u32).to_le_bytes());
        out.extend_from_slice(k);
        out.extend_from_slice(&(v.len() as u32).to_le_bytes());
        out.extend_from_slice(v);
    }
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// Where the decoding of a request message stands.
struct Cursor<'a> {
    msg: &'a Aggregate,
    at: usize,
}

impl Cursor<'_> {
    /// The next `n` bytes, appended to `out`.
    fn take_into(&mut self, n: usize, out: &mut Vec<u8>) -> io::Result<()> {
        if self.msg.len().saturating_sub(self.at) < n {
            return Err(malformed());
        }
        let from = out.len();
        out.resize(from + n, 0);
        self.msg.copy_to_slice(self.at, &mut out[from..]);
        self.at += n;
        Ok(())
    }

    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut b = [0u8; N];
        if self.msg.len().saturating_sub(self.at) < N {
            return Err(malformed());
        }
        self.msg.copy_to_slice(self.at, &mut b);
        self.at += N;
        Ok(b)
    }

    fn len32(&mut self) -> io::Result<usize> {
        Ok(u32::from_le_bytes(self.array()?) as usize)
    }
}

fn malformed() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "cgi: a malformed request message",
    )
}

fn decode_request(mut msg: Aggregate) -> io::Result<Request> {
    let mut c = Cursor { msg: &msg, at: 0 };
    if &c.array::<4>()? != MAGIC {
        return Err(malformed());
    }
    let n = c.len32()?;
    let mut names = Vec::new();
    let mut values = Vec::new();
    let mut spans = Vec::with_capacity(n.min(256));
    for _ in 0..n {
        let kl = c.len32()?;
        let a = names.len();
        c.take_into(kl, &mut names)?;
        // Each name on its own, so that every span is a whole string.
        std::str::from_utf8(&names[a..]).map_err(|_| malformed())?;
        let vl = c.len32()?;
        let v = values.len();
        c.take_into(vl, &mut values)?;
        spans.push([a, names.len(), v, values.len()]);
        values.push(0);
    }
    let len = u64::from_le_bytes(c.array()?);
    let at = c.at;
    if msg.len() as u64 - at as u64 != len {
        return Err(malformed());
    }
    let names = String::from_utf8(names).map_err(|_| malformed())?;
    msg.advance(at);
    Ok(Request {
        names,
        values,
        spans,
        body: msg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_message_comes_back_as_it_went() {
        let mut vars = crate::gateway::env::Vars::default();
        vars.set(b"A", b"1");
        vars.set(b"EMPTY", b"");
        let msg = encode_request(&vars, b"the body");
        let r = decode_request(Aggregate::from(Buf::from(msg.clone()))).unwrap();
        assert_eq!(r.var("A"), Some(&b"1"[..]));
        assert_eq!(r.var("EMPTY"), Some(&b""[..]));
        assert_eq!(r.body().copy_to_vec(), b"the body");
        // Every cut short, and a byte too many, is refused.
        for cut in 0..msg.len() {
            assert!(decode_request(Aggregate::from(Buf::from(msg[..cut].to_vec()))).is_err());
        }
        let mut long = msg;
        long.push(0);
        assert!(decode_request(Aggregate::from(Buf::from(long))).is_err());
    }

    #[test]
    fn a_name_that_is_not_utf8_on_its_own_is_refused_even_if_two_make_one() {
        // "é" is C3 A9: cut between two names, the names together would
        // be UTF-8 but neither is.
        let mut msg = MAGIC.to_vec();
        msg.extend_from_slice(&2u32.to_le_bytes());
        for name in [&b"A\xc3"[..], &b"\xa9B"[..]] {
            msg.extend_from_slice(&(name.len() as u32).to_le_bytes());
            msg.extend_from_slice(name);
            msg.extend_from_slice(&1u32.to_le_bytes());
            msg.push(b'v');
        }
        msg.extend_from_slice(&0u64.to_le_bytes());
        assert!(decode_request(Aggregate::from(Buf::from(msg))).is_err());
        // A body in pieces (several buffers) decodes as one.
        let mut vars = crate::gateway::env::Vars::default();
        vars.set(b"N\xc3\xa9", b"\xff\x00value");
        let whole = encode_request(&vars, b"0123456789");
        let mut pieces = Aggregate::new();
        for chunk in whole.chunks(3) {
            pieces.append_buf(Buf::from(chunk.to_vec()));
        }
        let r = decode_request(pieces).unwrap();
        assert_eq!(r.var("Né"), Some(&b"\xff\x00value"[..]));
        assert_eq!(r.var_c("Né"), None, "a NUL inside");
        assert_eq!(r.body().copy_to_vec(), b"0123456789");
    }
}
