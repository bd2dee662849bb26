//! `ferry serve [DIR]`: the HTTP server (`ferry_serve`). The CLI parses
//! the options, says where it serves, and turns SIGINT and SIGTERM into a
//! graceful stop; the server is the library's.

use super::common::{self, Tool};
use std::ffi::OsString;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const HELP: &str = "Usage: ferry serve [OPTION]... [DIR]
Serve the files of DIR (the current directory by default) over HTTP/1.1
(or HTTPS, with --tls-cert and --tls-key):
GET and HEAD, keep-alive and pipelining, ETag and Last-Modified with 304
answers, byte ranges (206, multipart/byteranges, 416), index.html, and
pre-compressed siblings (FILE.br, FILE.zst, FILE.gz) to clients whose
Accept-Encoding takes them.
Small files are sent from ferry's file cache with the response head in
one gathered write; large ones by sendfile, never copied into the server.

Options:
  -l, --listen ADDR:PORT   listen on ADDR:PORT (repeatable; default
                             127.0.0.1:8080; a port of 0 takes a free one)
  -w, --workers N          N worker threads, one event loop each (default:
                             one per CPU)
      --list               list directories that have no index.html
      --follow-symlinks    follow symbolic links that lead out of DIR
                             (by default they are refused with 403)
      --cache-size BYTES   bytes the file cache may hold (default 64 MiB;
                             suffixes K, M, G)
      --access-log FILE    append a line per response to FILE, in the
                             Common Log Format (default: no log)
      --header-timeout T   close a connection that sends no whole request
                             head within T of starting to wait for one
                             (default 60s; units ms, s, m)
      --send-timeout T     drop a response whose client takes nothing for
                             T (default 60s)
      --max-connections N  open connections per worker at most (default
                             1024); past it the one idle longest is closed
                             to make room, or the new one if none is idle
      --cgi PREFIX         run executable files below the URL path PREFIX
                             (/cgi-bin) as CGI/1.1 programs, a process per
                             request (repeatable)
      --fastcgi EXT=ADDR   send requests for files ending in EXT (.php) to
                             the FastCGI server at ADDR (HOST:PORT, or a
                             Unix socket's path) (repeatable)
      --ipc-cgi PREFIX=PROGRAM  send requests below the URL path PREFIX to
                             PROGRAM, a long-lived program on ferry's ipc
                             (one per worker, restarted if it dies): its
                             bodies reach the client without a copy
      --gateway-timeout T  a program that sends nothing for T gets its
                             request a 504 (default 60s)
      --max-body BYTES     refuse request bodies (to programs) longer than
                             BYTES with 413 (default 1M)
      --tls-cert FILE      speak HTTPS on every listener, with the
                             certificate chain in FILE (PEM); needs --tls-key
      --tls-key FILE       the certificate's private key (PEM)
      --help               display this help and exit
      --version            output version information and exit

SIGINT and SIGTERM stop the server: it accepts no more connections and
lets the responses under way finish. SIGHUP opens the access log anew
(after a log rotator moved it away).
";

/// `90`, `90s`, `500ms`, `2m`: above zero, at most a day.
fn duration(v: &str) -> Option<Duration> {
    let (num, unit) = match v.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => v.split_at(i),
        None => (v, "s"),
    };
    let n: u64 = num.parse().ok()?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.checked_mul(60)?),
        _ => return None,
    };
    (d > Duration::ZERO && d <= Duration::from_secs(86_400)).then_some(d)
}

pub fn main(t: &Tool, args: Vec<OsString>) -> i32 {
    use lexopt::prelude::*;
    let mut listen: Vec<SocketAddr> = Vec::new();
    let mut dir: Option<OsString> = None;
    let mut cfg = ferry_serve::Config::new(".");
    let (mut tls_cert, mut tls_key): (Option<OsString>, Option<OsString>) = (None, None);
    let mut p = lexopt::Parser::from_args(args);
    loop {
        let arg = common::next_arg!(t, p, HELP, 2);
        let value = |p: &mut lexopt::Parser| -> Result<String, i32> {
            p.value()
                .map(|v| v.to_string_lossy().into_owned())
                .map_err(|e| {
                    t.bad_option(e);
                    2
                })
        };
        match arg {
            Short('l') | Long("listen") => {
                let v = match value(&mut p) {
                    Ok(v) => v,
                    Err(c) => return c,
                };
                match v.to_socket_addrs() {
                    Ok(addrs) => listen.extend(addrs.take(1)),
                    Err(e) => {
                        t.usage_error(format_args!(
                            "invalid address {}: {e}",
                            common::quote_always(&v)
                        ));
                        return 2;
                    }
                }
            }
            Short('w') | Long("workers") => {
                let v = match value(&mut p) {
                    Ok(v) => v,
                    Err(c) => return c,
                };
                match v.parse::<usize>() {
                    Ok(n) if (1..=1024).contains(&n) => cfg.workers = n,
                    _ => {
                        t.usage_error(format_args!(
                            "invalid number of workers: {}",
                            common::quote_always(&v)
                        ));
                        return 2;
                    }
                }
            }
            Long("cache-size") => {
                let v = match value(&mut p) {
                    Ok(v) => v,
                    Err(c) => return c,
                };
                match crate::size::parse_size(&v) {
                    Ok(n) if n > 0 => cfg.cache_bytes = usize::try_from(n).unwrap_or(usize::MAX),
                    _ => {
                        t.usage_error(format_args!(
                            "invalid cache size: {}",
                            common::quote_always(&v)
                        ));
                        return 2;
                    }
                }
            }
            Long("access-log") => match p.value() {
                Ok(v) => cfg.access_log = Some(v.into()),
                Err(e) => {
                    t.bad_option(e);
                    return 2;
                }
            },
            Long("header-timeout") | Long("send-timeout") => {
                let name = match &arg {
                    Long(n) => n.to_string(),
                    _ => String::new(),
                };
                let v = match value(&mut p) {
                    Ok(v) => v,
                    Err(c) => return c,
                };
                let Some(d) = duration(&v) else {
                    t.usage_error(format_args!(
                        "invalid time for --{name}: {}",
                        common::quote_always(&v)
                    ));
                    return 2;
                };
                if name == "header-timeout" {
                    cfg.header_timeout = d;
                } else {
                    cfg.send_timeout = d;
                }
            }
            Long("max-connections") => {
                let v = match value(&mut p) {
                    Ok(v) => v,
                    Err(c) => return c,
                };
                match v.parse::<usize>() {
                    Ok(n) if n > 0 => cfg.max_connections = n,
                    _ => {
                        t.usage_error(format_args!(
                            "invalid number of connections: {}",
                            common::quote_always(&v)
                        ));
                        return 2;
                    }
                }
            }
            Long("cgi") => {
                let v = match value(&mut p) {
                    Ok(v) => v,
                    Err(c) => return c,
                };
                if !v.starts_with('/') {
                    t.usage_error(format_args!(
                        "invalid --cgi prefix (a URL path, as /cgi-bin): {}",
                        common::quote_always(&v)
                    ));
                    return 2;
                }
                cfg.cgi.push(v);
            }
            Long("fastcgi") => {
                let v = match value(&mut p) {
                    Ok(v) => v,
                    Err(c) => return c,
                };
                let parsed = v.split_once('=').and_then(|(ext, addr)| {
                    let ok = ext.starts_with('.') && ext.len() > 1 && !ext.contains('/');
                    Some((ext, addr.parse::<ferry_serve::GatewayAddr>().ok()?)).filter(|_| ok)
                });
                match parsed {
                    Some((ext, addr)) => cfg.fastcgi.push(ferry_serve::FastCgi {
                        ext: ext.to_string(),
                        addr,
                    }),
                    None => {
                        t.usage_error(format_args!(
                            "invalid --fastcgi (EXT=ADDR, as .php=127.0.0.1:9000): {}",
                            common::quote_always(&v)
                        ));
                        return 2;
                    }
                }
            }
            Long("ipc-cgi") => {
                let v = match value(&mut p) {
                    Ok(v) => v,
                    Err(c) => return c,
                };
                match v.split_once('=') {
                    Some((prefix, program)) if prefix.starts_with('/') && !program.is_empty() => {
                        cfg.ipc_cgi.push(ferry_serve::IpcCgi {
                            prefix: prefix.to_string(),
                            program: program.into(),
                        })
                    }
                    _ => {
                        t.usage_error(format_args!(
                            "invalid --ipc-cgi (PREFIX=PROGRAM, as /app=./app): {}",
                            common::quote_always(&v)
                        ));
                        return 2;
                    }
                }
            }
            Long("gateway-timeout") => {
                let v = match value(&mut p) {
                    Ok(v) => v,
                    Err(c) => return c,
                };
                let Some(d) = duration(&v) else {
                    t.usage_error(format_args!(
                        "invalid time for --gateway-timeout: {}",
                        common::quote_always(&v)
                    ));
                    return 2;
                };
                cfg.gateway_timeout = d;
            }
            Long("max-body") => {
                let v = match value(&mut p) {
                    Ok(v) => v,
                    Err(c) => return c,
                };
                match crate::size::parse_size(&v) {
                    Ok(n) => cfg.body_max = n,
                    _ => {
                        t.usage_error(format_args!(
                            "invalid body size: {}",
                            common::quote_always(&v)
                        ));
                        return 2;
                    }
                }
            }
            Long("tls-cert") => match p.value() {
                Ok(v) => tls_cert = Some(v),
                Err(e) => {
                    t.bad_option(e);
                    return 2;
                }
            },
            Long("tls-key") => match p.value() {
                Ok(v) => tls_key = Some(v),
                Err(e) => {
                    t.bad_option(e);
                    return 2;
                }
            },
            Long("list") => cfg.list = true,
            Long("follow-symlinks") => cfg.follow_symlinks = true,
            Value(v) if dir.is_none() => dir = Some(v),
            Value(v) => {
                t.usage_error(format_args!(
                    "extra operand {}",
                    common::quote_always(&v.to_string_lossy())
                ));
                return 2;
            }
            other => {
                t.bad_option(other.unexpected());
                return 2;
            }
        }
    }
    if let Some(d) = dir {
        cfg.root = d.into();
    }
    match (tls_cert, tls_key) {
        (Some(cert), Some(key)) => {
            cfg.tls = Some(ferry_serve::TlsFiles {
                cert: cert.into(),
                key: key.into(),
            })
        }
        (None, None) => {}
        (Some(_), None) => {
            t.usage_error(format_args!("--tls-cert needs --tls-key"));
            return 2;
        }
        (None, Some(_)) => {
            t.usage_error(format_args!("--tls-key needs --tls-cert"));
            return 2;
        }
    }
    let scheme = if cfg.tls.is_some() { "https" } else { "http" };
    if !listen.is_empty() {
        cfg.listen = listen;
    }
    let root = cfg.root.clone();
    let server = match ferry_serve::Server::start(cfg) {
        Ok(s) => s,
        Err(e) => {
            t.error(format_args!("{e}"));
            return 1;
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register(sig, stop.clone()) {
            t.error(format_args!("cannot handle signal {sig}: {e}"));
            server.shutdown();
            return 1;
        }
    }
    let hup = Arc::new(AtomicBool::new(false));
    if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGHUP, hup.clone()) {
        t.error(format_args!("cannot handle signal SIGHUP: {e}"));
        server.shutdown();
        return 1;
    }
    for a in server.local_addrs() {
        eprintln!("ferry serve: serving {} on {scheme}://{a}/", root.display());
    }
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
        if hup.swap(false, Ordering::SeqCst) {
            if let Err(e) = server.reopen_logs() {
                t.error(format_args!("reopening the access log: {e}"));
            }
        }
    }
    eprintln!("ferry serve: stopping");
    server.shutdown();
    0
}

#[cfg(test)]
mod tests {
    use super::duration;
    use std::time::Duration;

    #[test]
    fn times_take_a_unit_or_mean_seconds() {
        assert_eq!(duration("90"), Some(Duration::from_secs(90)));
        assert_eq!(duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(duration("2m"), Some(Duration::from_secs(120)));
        for bad in [
            "",
            "0",
            "0ms",
            "-1",
            "1h",
            "s",
            "1.5s",
            "99999999999999999999",
            "1441m",
        ] {
            assert_eq!(duration(bad), None, "{bad:?}");
        }
    }
}
