//! A connection's requests for programs: refused at once, or their
//! bodies read (after a `100 Continue` if asked) and handed to the
//! program's runner, whose response comes later into an awaited slot.

use super::chunked::Chunked;
use super::{Conn, Pending, DISCARD_MAX};
use crate::gateway::{self, Dispatch, Job, Route};
use crate::request::{self, BodyKind};
use crate::response;
use crate::site::Site;
use std::collections::VecDeque;
use std::time::Instant;

/// A request for a program whose body is being read.
pub(super) struct Collecting {
    route: Route,
    /// The request's head as sent (for the meta-variables).
    head: Vec<u8>,
    target: String,
    minor: u8,
    head_only: bool,
    close: bool,
    want: usize,
    /// A body sent chunked: decoded as it comes (`want` is then 0).
    chunked: Option<Chunked>,
    body: Vec<u8>,
    line: Option<Vec<u8>>,
}

impl Conn {
    /// A request for a program (its head of `n` bytes at the buffer's
    /// start): refused at once (TRACE or CONNECT, a body too long), or
    /// its body read next (by its length, or decoded from chunks).
    pub(super) fn for_program(
        &mut self,
        route: Result<Route, crate::status::Status>,
        req: request::Request,
        n: usize,
        line: Option<Vec<u8>>,
        log: Option<&mut Vec<u8>>,
        gw: &mut Dispatch<'_>,
    ) {
        use crate::request::Method;
        use crate::status::Status;
        let head_only = req.method == Method::Head;
        // A body refused is read and dropped if short, else the
        // connection ends after the answer.
        let droppable = match req.body {
            BodyKind::None => true,
            BodyKind::Length(len) => len <= DISCARD_MAX && !req.expect_continue,
            BodyKind::Chunked => false,
        };
        let refuse = |st: Status, extra: &[(&str, &str)]| {
            let close = !req.keep_alive || !droppable;
            response::error_with(st, req.minor, head_only, close, extra)
        };
        // Programs take any method (PUT, DELETE, OPTIONS… reach them as
        // REQUEST_METHOD, as nginx passes them to FastCGI), but TRACE,
        // which would echo the request's credentials, and CONNECT, which
        // is for proxies.
        let untaken = matches!(req.method, Method::Trace | Method::Connect);
        let refused = match (&route, req.body) {
            (Err(st), _) => Some(refuse(*st, &[])),
            _ if untaken => Some(refuse(
                Status::MethodNotAllowed,
                &[("Allow", "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS")],
            )),
            (_, BodyKind::Length(len)) if len > gw.body_max() => {
                Some(refuse(Status::PayloadTooLarge, &[]))
            }
            _ => None,
        };
        let head = self.inbuf.as_slice()[..n].to_vec();
        self.consume(n);
        if let Some(r) = refused {
            if let (BodyKind::Length(len), false) = (req.body, r.close) {
                self.discard = len;
                self.discard_since = Instant::now();
            }
            if let (Some(out), Some(line)) = (log, &line) {
                self.log_line(out, line, &r);
            }
            self.queue(r);
            return;
        }
        let Ok(route) = route else { return };
        let want = match req.body {
            BodyKind::Length(len) => len as usize,
            _ => 0,
        };
        let chunked = (req.body == BodyKind::Chunked).then(|| Chunked::new(gw.body_max()));
        if req.expect_continue && (want > 0 || chunked.is_some()) && req.minor >= 1 {
            self.out.push_back(Pending {
                head: b"HTTP/1.1 100 Continue\r\n\r\n".to_vec(),
                head_off: 0,
                pieces: VecDeque::new(),
                awaited: None,
                since: Instant::now(),
            });
        }
        self.collecting = Some(Box::new(Collecting {
            route,
            head,
            target: req.target,
            minor: req.minor,
            head_only,
            close: !req.keep_alive,
            want,
            chunked,
            body: Vec::with_capacity(want.min(1 << 20)),
            line,
        }));
        self.discard_since = Instant::now();
    }

    /// Moves body bytes of the program's request out of the head buffer;
    /// once it is whole, hands the request to its program. False: more
    /// bytes are needed.
    pub(super) fn collect(&mut self, site: &Site, gw: &mut Dispatch<'_>) -> bool {
        let Some(c) = &mut self.collecting else {
            return true;
        };
        let (took, outcome) = match &mut c.chunked {
            Some(d) => match d.feed(self.inbuf.as_slice(), &mut c.body) {
                Ok(took) => (took, Ok(d.done())),
                Err(st) => (0, Err(st)),
            },
            None => {
                let take = (c.want - c.body.len()).min(self.inbuf.len());
                c.body.extend_from_slice(&self.inbuf.as_slice()[..take]);
                (take, Ok(c.body.len() == c.want))
            }
        };
        self.consume(took);
        let whole = match outcome {
            Ok(whole) => whole,
            Err(st) => {
                // Not a body the program can be given: answered here, and
                // the connection ends (its framing is lost).
                let c = self.collecting.take();
                self.inbuf.clear();
                let head_only = c.as_ref().is_some_and(|c| c.head_only);
                let minor = c.as_ref().map_or(1, |c| c.minor);
                self.queue(response::error(st, minor, head_only, true));
                return true;
            }
        };
        if !whole {
            return false;
        }
        let Some(c) = self.collecting.take() else {
            return false;
        };
        let c = *c;
        let ends = gateway::env::Ends {
            peer: self.peer,
            local: self.local_addr(),
            https: self.tls.is_some(),
        };
        let env = gateway::env::build(
            &c.head,
            &c.target,
            c.minor,
            &c.route,
            &site.root_path,
            ends,
            c.body.len() as u64,
        );
        if c.close {
            self.closing = true;
        }
        let job = Job {
            route: c.route,
            env,
            body: c.body,
            head_only: c.head_only,
            minor: c.minor,
            close: c.close,
        };
        let awaited = gw.run(job, self.index);
        self.out.push_back(Pending {
            head: Vec::new(),
            head_off: 0,
            pieces: VecDeque::new(),
            awaited: Some((awaited, c.line)),
            since: Instant::now(),
        });
        true
    }
}
