//! Options of listening sockets that a server built on ferry sets.

use std::io;
use std::os::fd::AsFd;
use std::time::Duration;

/// Hands out a listener's connections only once each has sent its first
/// bytes (`TCP_DEFER_ACCEPT`), for protocols where the client speaks
/// first, as HTTP's and TLS's do. A server then reads a request at once
/// after `accept` instead of finding nothing, waiting for readiness and
/// waking again; a connection that sends nothing reaches `accept` only
/// after about `wait` (rounded up to whole seconds), when the kernel stops
/// holding it back.
///
/// Fails with the kernel's error when `listener` is not a TCP socket.
///
/// ```
/// let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
/// ferry::net::defer_accept(&listener, std::time::Duration::from_secs(1))?;
/// let addr = listener.local_addr()?;
/// let mut client = std::net::TcpStream::connect(addr)?;
/// std::io::Write::write_all(&mut client, b"GET / HTTP/1.1\r\n\r\n")?;
/// let (mut conn, _) = listener.accept()?;
/// let mut first = [0u8; 3];
/// std::io::Read::read_exact(&mut conn, &mut first)?;
/// assert_eq!(&first, b"GET");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn defer_accept(listener: impl AsFd, wait: Duration) -> io::Result<()> {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let secs = u32::try_from(secs).unwrap_or(u32::MAX).max(1);
    crate::sys::channel::set_defer_accept(listener.as_fd(), secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{ErrorKind, Write};
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn a_silent_connection_waits_and_one_that_spoke_is_accepted() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        defer_accept(&l, Duration::from_secs(30)).unwrap();
        l.set_nonblocking(true).unwrap();
        let addr = l.local_addr().unwrap();
        let _silent = TcpStream::connect(addr).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(l.accept().unwrap_err().kind(), ErrorKind::WouldBlock);
        let mut spoke = TcpStream::connect(addr).unwrap();
        spoke.write_all(b"x").unwrap();
        let t = std::time::Instant::now();
        let peer = loop {
            match l.accept() {
                Ok((_, peer)) => break peer,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    assert!(t.elapsed() < Duration::from_secs(10));
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => panic!("{e}"),
            }
        };
        assert_eq!(peer, spoke.local_addr().unwrap());
    }

    #[test]
    fn a_socket_that_is_not_tcp_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let l = std::os::unix::net::UnixListener::bind(dir.path().join("s")).unwrap();
        assert!(defer_accept(&l, Duration::from_secs(1)).is_err());
    }
}
