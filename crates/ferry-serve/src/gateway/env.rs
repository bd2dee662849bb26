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
) -> Vec<(String, Vec<u8>)> {
    use std::os::unix::ffi::OsStrExt;
    let mut env: Vec<(String, Vec<u8>)> = Vec::with_capacity(32);
    let mut set = |k: &str, v: &[u8]| env.push((k.to_string(), v.to_vec()));
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
    set("GATEWAY_INTERFACE", b"CGI/1.1");
    set(
        "SERVER_SOFTWARE",
        concat!("ferry/", env!("CARGO_PKG_VERSION")).as_bytes(),
    );
    set("SERVER_PROTOCOL", format!("HTTP/1.{minor}").as_bytes());
    set("REQUEST_METHOD", method);
    set("REQUEST_URI", target.as_bytes());
    set("SCRIPT_NAME", &route.script_name);
    if !route.path_info.is_empty() {
        set("PATH_INFO", &route.path_info);
        let mut translated = root.as_os_str().as_bytes().to_vec();
        translated.extend_from_slice(&route.path_info);
        set("PATH_TRANSLATED", &translated);
    }
    let query = target
        .split('#')
        .next()
        .and_then(|t| t.split_once('?'))
        .map_or("", |(_, q)| q);
    set("QUERY_STRING", query.as_bytes());
    if let Some(f) = &route.script_file {
        set("SCRIPT_FILENAME", f.as_os_str().as_bytes());
    }
    set("DOCUMENT_ROOT", root.as_os_str().as_bytes());
    // PHP refuses to run as CGI without it (`cgi.force_redirect`).
    set("REDIRECT_STATUS", b"200");
    if let Some(p) = ends.peer {
        set("REMOTE_ADDR", p.ip().to_string().as_bytes());
        set("REMOTE_PORT", p.port().to_string().as_bytes());
    }
    if let Some(l) = ends.local {
        set("SERVER_ADDR", l.ip().to_string().as_bytes());
        set("SERVER_PORT", l.port().to_string().as_bytes());
    }
    if ends.https {
        set("HTTPS", b"on");
        set("REQUEST_SCHEME", b"https");
    } else {
        set("REQUEST_SCHEME", b"http");
    }
    if body_len > 0 {
        set("CONTENT_LENGTH", body_len.to_string().as_bytes());
    }

    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let rest = head.get(line_end + 1..).unwrap_or(&[]);
    let parsed: &[httparse::Header<'_>] = match httparse::parse_headers(rest, &mut headers) {
        Ok(httparse::Status::Complete((_, h))) => h,
        _ => &[],
    };
    let mut host: Option<&[u8]> = None;
    let mut http: Vec<(String, Vec<u8>)> = Vec::new();
    for h in parsed {
        let name = h.name;
        if name.eq_ignore_ascii_case("content-length")
            || name.eq_ignore_ascii_case("transfer-encoding")
        {
            continue;
        }
        if name.eq_ignore_ascii_case("content-type") {
            env.push(("CONTENT_TYPE".into(), h.value.to_vec()));
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
        if name.eq_ignore_ascii_case("host") {
            host = Some(h.value);
        }
        let key: String = "HTTP_"
            .chars()
            .chain(name.chars().map(|c| {
                if c == '-' {
                    '_'
                } else {
                    c.to_ascii_uppercase()
                }
            }))
            .collect();
        match http.iter_mut().find(|(k, _)| *k == key) {
            // Several lines make one list (RFC 9110, 5.3); cookies join
            // with `; ` (RFC 6265, 5.4).
            Some((_, v)) => {
                v.extend_from_slice(if key == "HTTP_COOKIE" { b"; " } else { b", " });
                v.extend_from_slice(h.value);
            }
            None => http.push((key, h.value.to_vec())),
        }
    }
    let server_name: Vec<u8> = match host {
        Some(h) => host_name(h).to_vec(),
        None => ends
            .local
            .map_or_else(Vec::new, |l| l.ip().to_string().into_bytes()),
    };
    env.push(("SERVER_NAME".into(), server_name));
    env.extend(http);
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

    fn var<'a>(env: &'a [(String, Vec<u8>)], k: &str) -> Option<&'a [u8]> {
        env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_slice())
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

    #[test]
    fn empty_lines_before_the_request_line_change_nothing() {
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
        let head = b"\r\n\r\nPOST /s HTTP/1.1\r\nHost: h\r\nContent-Type: a/b\r\n\r\n";
        let env = build(head, "/s", 1, &route, Path::new("/"), ends, 0);
        assert_eq!(var(&env, "REQUEST_METHOD"), Some(&b"POST"[..]));
        assert_eq!(var(&env, "CONTENT_TYPE"), Some(&b"a/b"[..]));
        assert_eq!(var(&env, "SERVER_NAME"), Some(&b"h"[..]));
        assert_eq!(var(&env, "HTTPS"), None);
        assert_eq!(var(&env, "REQUEST_SCHEME"), Some(&b"http"[..]));
    }

    #[test]
    fn a_host_loses_its_port_but_not_its_brackets() {
        assert_eq!(host_name(b"[::1]:80"), b"[::1]");
        assert_eq!(host_name(b"a.b"), b"a.b");
        assert_eq!(host_name(b"a.b:1"), b"a.b");
    }
}
