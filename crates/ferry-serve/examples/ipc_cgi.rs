//! A program for `ferry serve --ipc-cgi /app=PATH-TO-THIS`: the pages
//! below `/app`, answered over ferry's ipc.
//!
//! * `/app/bytes/N` — N bytes (`a` to `z` over and over), built into the
//!   program's pool; up to 16 bodies of at most 4 MiB are kept and sent by
//!   reference every time after;
//! * `/app/echo` — the meta-variables and the request body;
//! * `/app/status/N` — an empty response of status N;
//! * `/app/exit` — the program exits (its requests get 502s);
//! * `/app/hang` — the program stops answering (504s, after the gateway
//!   timeout).

use ferry::Aggregate;
use ferry_serve::cgi;
use std::collections::HashMap;
use std::io;

fn main() -> io::Result<()> {
    let mut kept: HashMap<usize, Aggregate> = HashMap::new();
    cgi::serve(|req, reply| {
        let path = String::from_utf8_lossy(req.var("PATH_INFO").unwrap_or(b"/")).into_owned();
        let mut parts = path.trim_start_matches('/').splitn(2, '/');
        match (parts.next().unwrap_or(""), parts.next()) {
            ("bytes", Some(n)) => {
                let Ok(n) = n.parse::<usize>() else {
                    return reply.status(400, "Bad Request");
                };
                if n > 64 << 20 {
                    return reply.status(400, "Bad Request");
                }
                reply.header("Content-Type", "application/octet-stream")?;
                if let Some(body) = kept.get(&n) {
                    reply.append(body.clone());
                    return Ok(());
                }
                let mut body = Aggregate::new();
                let mut at = 0;
                while at < n {
                    let mut slot = reply.alloc()?;
                    let take = (n - at).min(slot.len());
                    for (i, b) in slot[..take].iter_mut().enumerate() {
                        *b = b'a' + ((at + i) % 26) as u8;
                    }
                    body.append_buf(slot.freeze(take));
                    at += take;
                }
                // Kept within bounds: the pool must keep room for others.
                if n <= 4 << 20 && kept.len() < 16 {
                    kept.insert(n, body.clone());
                }
                reply.append(body);
                Ok(())
            }
            ("echo", _) => {
                reply.header("Content-Type", "text/plain")?;
                for (k, v) in req.vars() {
                    reply.write(k.as_bytes())?;
                    reply.write(b"=")?;
                    reply.write(v)?;
                    reply.write(b"\n")?;
                }
                reply.write(b"body=")?;
                reply.append(req.body().clone());
                Ok(())
            }
            ("status", Some(n)) => match n.parse::<u16>() {
                Ok(code) => reply.status(code, "As Asked"),
                Err(_) => reply.status(400, "Bad Request"),
            },
            ("exit", _) => std::process::exit(3),
            ("hang", _) => loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            },
            _ => {
                reply.status(404, "Not Found")?;
                reply.header("Content-Type", "text/plain")?;
                reply.write(b"no such page\n")
            }
        }
    })
}
