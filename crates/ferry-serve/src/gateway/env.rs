//! The meta-variables a program gets (RFC 3875, 4.1), from the request's
//! head as sent and the route it took.

use super::Route;
use std::net::SocketAddr;
use std::path::Path;

/// Header lines read for the variables at most (the head parsed before
/// had no more than the request parser's own limit).
const MAX_HEADERS: usize = 100;

/// What the variables say of the connection.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ends {
    pub peer: Option<SocketAddr>,
    pub local: Option<SocketAddr>,
    /// The request came over TLS: `HTTPS=on`, `REQUEST_SCHEME=https`
    /// (the variables nginx's `fastcgi_params` and Apache set).
    pub https: bool,
}

/// A request's variables, names and values in one buffer (a request
/// makes two allocations here, not two per variable), in the order set.
#[derive(Debug, Default, Clone)]
pub(crate) struct Vars {
    bytes: Vec<u8>,
    /// Each variable: where its name starts, where its value starts (the
    /// name's end), where the value ends.
    spans: Vec<[usize; 3]>,
}

impl Vars {
    pub(crate) fn set(&mut self, name: &[u8], value: &[u8]) {
        let a = self.bytes.len();
        self.bytes.extend_from_slice(name);
        let b = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.spans.push([a, b, self.bytes.len()]);
    }

    /// `name` set to `value` as `Display` writes it (a number, an
    /// address), with no allocation of its own.
    fn set_shown(&mut self, name: &[u8], value: impl std::fmt::Display) {
        use std::io::Write;
        let a = self.bytes.len();
        self.bytes.extend_from_slice(name);
        let b = self.bytes.len();
        // Writing into a Vec cannot fail.
        let _ = write!(self.bytes, "{value}");
        self.spans.push([a, b, self.bytes.len()]);
    }

    /// A request header's variable (`HTTP_` and its name, upper case,
    /// `-` as `_`); a second line of the same name joins the first (RFC
    /// 9110, 5.3; cookies with `; `, RFC 6265, 5.4).
    fn set_header(&mut self, name: &str, value: &[u8]) {
        let a = self.bytes.len();
        self.bytes.extend_from_slice(b"HTTP_");
        self.bytes.extend(name.bytes().map(|c| {
            if c == b'-' {
                b'_'
            } else {
                c.to_ascii_uppercase()
            }
        }));
        let b = self.bytes.len();
        let key = a..b;
        let seen = self
            .spans
            .iter()
            .position(|s| self.bytes[s[0]..s[1]] == self.bytes[key.clone()]);
        match seen {
            Some(i) => {
                let [_, va, vb] = self.spans[i];
                self.bytes.extend_from_within(va..vb);
                let cookie = &self.bytes[key] == b"HTTP_COOKIE";
                self.bytes
                    .extend_from_slice(if cookie { b"; " } else { b", " });
                self.bytes.extend_from_slice(value);
                self.spans[i] = [a, b, self.bytes.len()];
            }
            None => {
                self.bytes.extend_from_slice(value);
                self.spans.push([a, b, self.bytes.len()]);
            }
        }
    }

    /// The variables, names and values, in the order set.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.spans
            .iter()
            .map(|&[a, b, c]| (&self.bytes[a..b], &self.bytes[b..c]))
    }

    /// The value of `name`.
    #[cfg(test)]
    pub(crate) fn get(&self, name: &str) -> Option<&[u8]> {
        self.iter()
            .find(|(n, _)| *n == name.as_bytes())
            .map(|(_, v)| v)
    }

    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// The bytes of every name and value together.
    pub(crate) fn bytes_len(&self) -> usize {
        self.spans.iter().map(|s| s[2] - s[0]).sum()
    }
}

/// The variables for the request whose head is `head`: `target` and
/// `minor` as the request parser read them, `body_len` bytes of body.
pub(crate) fn build(
    head: &[u8],
    target: &str,
    minor: u8,
    route: &Route,
    root: &Path,
    ends: Ends,
    body_len: u64,
) -> Vars {
    use std::os::unix::ffi::OsStrExt;
    let mut env = Vars {
        bytes: Vec::with_capacity(1024),
        spans: Vec::with_capacity(32),
    };
    // Empty lines before the request line are allowed (RFC 9112, 2.2).
    let start = head
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(head.len());
    let head = &head[start..];
    let line_end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
    let method = head[..line_end]
        .split(|&b| b == b' ')
        .next()
        .unwrap_or(b"GET");
    env.set(b"GATEWAY_INTERFACE", b"CGI/1.1");
    env.set(
        b"SERVER_SOFTWARE",
        concat!("ferry/", env!("CARGO_PKG_VERSION")).as_bytes(),
    );
    env.set_shown(b"SERVER_PROTOCOL", format_args!("HTTP/1.{minor}"));
    env.set(b"REQUEST_METHOD", method);
    env.set(b"REQUEST_URI", target.as_bytes());
    env.set(b"SCRIPT_NAME", &route.script_name);
    if !route.path_info.is_empty() {
        env.set(b"PATH_INFO", &route.path_info);
        let a = env.bytes.len();
        env.bytes.extend_from_slice(b"PATH_TRANSLATED");
        let b = env.bytes.len();
        env.bytes.extend_from_slice(root.as_os_str().as_bytes());
        env.bytes.extend_from_slice(&route.path_info);
        env.spans.push([a, b, env.bytes.len()]);
    }
    let query = target
        .split('#')
        .next()
        .and_then(|t| t.split_once('?'))
        .map_or("", |(_, q)| q);
    env.set(b"QUERY_STRING", query.as_bytes());
    if let Some(f) = &route.script_file {
        env.set(b"SCRIPT_FILENAME", f.as_os_str().as_bytes());
    }
    env.set(b"DOCUMENT_ROOT", root.as_os_str().as_bytes());
    // PHP refuses to run as CGI without it (`cgi.force_redirect`).
    env.set(b"REDIRECT_STATUS", b"200");
    if let Some(p) = ends.peer {
        env.set_shown(b"REMOTE_ADDR", p.ip());
        env.set_shown(b"REMOTE_PORT", p.port());
    }
    if let Some(l) = ends.local {
        env.set_shown(b"SERVER_ADDR", l.ip());
        env.set_shown(b"SERVER_PORT", l.port());
    }
    if ends.https {
        env.set(b"HTTPS", b"on");
        env.set(b"REQUEST_SCHEME", b"https");
    } else {
        env.set(b"REQUEST_SCHEME", b"http");
    }
    if body_len > 0 {
        env.set_shown(b"CONTENT_LENGTH", body_len);
    }

    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    // A head the server took may hold more lines than usual (up to
    // `request::MAX_HEADERS`): parsed again with room for them all.
    let mut more = Vec::new();
    let rest = head.get(line_end + 1..).unwrap_or(&[]);
    let parsed: &[httparse::Header<'_>] = match httparse::parse_headers(rest, &mut headers) {
        Ok(httparse::Status::Complete((_, h))) => h,
        Err(httparse::Error::TooManyHeaders) => {
            more.resize(crate::request::MAX_HEADERS, httparse::EMPTY_HEADER);
            match httparse::parse_headers(rest, &mut more) {
                Ok(httparse::Status::Complete((_, h))) => h,
                _ => &[],
            }
        }
        _ => &[],
    };
    match parsed.iter().find(|h| h.name.eq_ignore_ascii_case("host")) {
        Some(h) => env.set(b"SERVER_NAME", host_name(h.value)),
        None => match ends.local {
            Some(l) => env.set_shown(b"SERVER_NAME", l.ip()),
            None => env.set(b"SERVER_NAME", b""),
        },
    }
    for h in parsed {
        let name = h.name;
        if name.eq_ignore_ascii_case("content-length")
            || name.eq_ignore_ascii_case("transfer-encoding")
        {
            continue;
        }
        if name.eq_ignore_ascii_case("content-type") {
            env.set(b"CONTENT_TYPE", h.value);
            continue;
        }
        // `Proxy` would become HTTP_PROXY, which many programs take for
        // their proxy ("httpoxy"); names with `_` would be confused with
        // others once `-` becomes `_` (nginx drops them too).
        if name.eq_ignore_ascii_case("proxy")
            || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            continue;
        }
        env.set_header(name, h.value);
    }
    env
}

/// The host of a `Host` value, without its port (`[::1]:80` → `[::1]`).
fn host_name(h: &[u8]) -> &[u8] {
    if h.starts_with(b"[") {
        return match h.iter().position(|&b| b == b']') {
            Some(i) => &h[..=i],
            None => h,
        };
    }
    match h.iter().rposition(|&b| b == b':') {
        Some(i) => &h[..i],
        None => h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::Kind;

    fn var<'a>(env: &'a Vars, k: &str) -> Option<&'a [u8]> {
        env.get(k)
    }

    #[test]
    fn the_variables_follow_rfc_3875_and_drop_the_proxy_header() {
        let head = b"POST /cgi-bin/a.cgi/x/y?q=1&r HTTP/1.1\r\nHost: example.org:8080\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nProxy: http://evil\r\nX-A: 1\r\nx-a: 2\r\nCookie: a=1\r\nCookie: b=2\r\nX_Under: no\r\n\r\n";
        let route = Route {
            kind: Kind::Classic,
            script_name: b"/cgi-bin/a.cgi".to_vec(),
            path_info: b"/x/y".to_vec(),
            script_file: Some("/srv/cgi-bin/a.cgi".into()),
        };
        let ends = Ends {
            peer: Some("10.0.0.2:5555".parse().unwrap()),
            local: Some("10.0.0.1:8080".parse().unwrap()),
            https: true,
        };
        let env = build(
            head,
            "/cgi-bin/a.cgi/x/y?q=1&r",
            1,
            &route,
            Path::new("/srv"),
            ends,
            5,
        );
        assert_eq!(var(&env, "REQUEST_METHOD"), Some(&b"POST"[..]));
        assert_eq!(var(&env, "SCRIPT_NAME"), Some(&b"/cgi-bin/a.cgi"[..]));
        assert_eq!(var(&env, "PATH_INFO"), Some(&b"/x/y"[..]));
        assert_eq!(var(&env, "PATH_TRANSLATED"), Some(&b"/srv/x/y"[..]));
        assert_eq!(var(&env, "QUERY_STRING"), Some(&b"q=1&r"[..]));
        assert_eq!(var(&env, "CONTENT_LENGTH"), Some(&b"5"[..]));
        assert_eq!(var(&env, "CONTENT_TYPE"), Some(&b"text/plain"[..]));
        assert_eq!(var(&env, "SERVER_NAME"), Some(&b"example.org"[..]));
        assert_eq!(var(&env, "SERVER_PORT"), Some(&b"8080"[..]));
        assert_eq!(var(&env, "REMOTE_ADDR"), Some(&b"10.0.0.2"[..]));
        assert_eq!(var(&env, "HTTPS"), Some(&b"on"[..]));
        assert_eq!(var(&env, "REQUEST_SCHEME"), Some(&b"https"[..]));
        assert_eq!(var(&env, "HTTP_X_A"), Some(&b"1, 2"[..]));
        assert_eq!(var(&env, "HTTP_COOKIE"), Some(&b"a=1; b=2"[..]));
        assert_eq!(var(&env, "HTTP_PROXY"), None);
        assert_eq!(var(&env, "HTTP_X_UNDER"), None);
        assert_eq!(var(&env, "HTTP_CONTENT_LENGTH"), None);
    }

    /// The variables of `head` for a classic program at `/s`, over plain
    /// HTTP with no addresses known.
    fn plain(head: &[u8]) -> Vars {
        let route = Route {
            kind: Kind::Classic,
            script_name: b"/s".to_vec(),
            path_info: Vec::new(),
            script_file: None,
        };
        let ends = Ends {
            peer: None,
            local: None,
            https: false,
        };
        build(head, "/s", 1, &route, Path::new("/"), ends, 0)
    }

    #[test]
    fn empty_lines_before_the_request_line_change_nothing() {
        let env = plain(b"\r\n\r\nPOST /s HTTP/1.1\r\nHost: h\r\nContent-Type: a/b\r\n\r\n");
        assert_eq!(var(&env, "REQUEST_METHOD"), Some(&b"POST"[..]));
        assert_eq!(var(&env, "CONTENT_TYPE"), Some(&b"a/b"[..]));
        assert_eq!(var(&env, "SERVER_NAME"), Some(&b"h"[..]));
        assert_eq!(var(&env, "HTTPS"), None);
        assert_eq!(var(&env, "REQUEST_SCHEME"), Some(&b"http"[..]));
    }

    #[test]
    fn a_head_with_more_lines_than_usual_passes_them_all() {
        let many: String = (0..500).map(|i| format!("X-{i}: v{i}\r\n")).collect();
        let head = format!("GET /s HTTP/1.1\r\nHost: h\r\n{many}\r\n");
        let env = plain(head.as_bytes());
        assert_eq!(var(&env, "SERVER_NAME"), Some(&b"h"[..]));
        assert_eq!(var(&env, "HTTP_X_0"), Some(&b"v0"[..]));
        assert_eq!(var(&env, "HTTP_X_499"), Some(&b"v499"[..]));
    }

    proptest::proptest! {
        /// Variables and header lines in any order read back as a list
        /// of pairs would hold them: a header's second line joins its
        /// first, in the first one's place.
        #[test]
        fn vars_read_back_as_a_list_of_pairs_holds_them(
            ops in proptest::collection::vec(
                (proptest::bool::ANY, "(Cookie|cookie|[A-Za-z]{1,3}(-[a-z]{1,2})?)", proptest::collection::vec(proptest::num::u8::ANY, 0..20)),
                0..40,
            )
        ) {
            let mut vars = Vars::default();
            let mut model: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            for (header, name, value) in &ops {
                if *header {
                    vars.set_header(name, value);
                    let key: Vec<u8> = b"HTTP_".iter().copied().chain(name.bytes().map(|c| {
                        if c == b'-' { b'_' } else { c.to_ascii_uppercase() }
                    })).collect();
                    match model.iter_mut().find(|(k, _)| *k == key) {
                        Some((k, v)) => {
                            let sep: &[u8] = if k == b"HTTP_COOKIE" { b"; " } else { b", " };
                            v.extend_from_slice(sep);
                            v.extend_from_slice(value);
                        }
                        None => model.push((key, value.clone())),
                    }
                } else {
                    vars.set(name.as_bytes(), value);
                    model.push((name.as_bytes().to_vec(), value.clone()));
                }
            }
            let got: Vec<(Vec<u8>, Vec<u8>)> =
                vars.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
            proptest::prop_assert_eq!(&got, &model);
            proptest::prop_assert_eq!(vars.len(), model.len());
            proptest::prop_assert_eq!(
                vars.bytes_len(),
                model.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>()
            );
        }
    }

    #[test]
    fn a_host_loses_its_port_but_not_its_brackets() {
        assert_eq!(host_name(b"[::1]:80"), b"[::1]");
        assert_eq!(host_name(b"a.b"), b"a.b");
        assert_eq!(host_name(b"a.b:1"), b"a.b");
    }
}
