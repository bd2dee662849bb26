//! Endpoints on real descriptors: what each is, the channel parameters it
//! declares, and the streaming case of every pair — a matrix like the
//! Roadrunner paper's Table 5, following its rules (the paper's own table
//! disagrees with them for UDP→UDP, TCP→TCP and TCP→UDP).

use crate::support::{nz, pty};
use ferry::transfer::endpoint::{Direction, Endpoint, EndpointKind};
use ferry::transfer::overlay::{BlockType, Case, ChannelParams};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsFd;
use std::os::unix::net::{UnixDatagram, UnixStream};

fn pipe_of(size: usize) -> (std::io::PipeReader, std::io::PipeWriter) {
    let (r, w) = std::io::pipe().unwrap();
    assert_eq!(rustix::pipe::fcntl_setpipe_size(&w, size).unwrap(), size);
    (r, w)
}

#[test]
fn kinds_and_parameters_of_real_descriptors() {
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join("f")).unwrap();
    let (pr, pw) = pipe_of(1 << 20);
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let tcp = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (us, _us2) = UnixStream::pair().unwrap();
    let (ud, _ud2) = UnixDatagram::pair().unwrap();
    let (_master, tty) = pty();
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .unwrap();

    let var = |b| ChannelParams::variable(nz(b));
    let kind = |fd| Endpoint::fd(fd).unwrap().kind();
    let params = |fd, d| Endpoint::fd(fd).unwrap().params(d).unwrap();
    assert_eq!(kind(file.as_fd()), EndpointKind::File);
    assert_eq!(params(file.as_fd(), Direction::Source), var(1 << 20));
    assert_eq!(kind(pr.as_fd()), EndpointKind::Pipe);
    assert_eq!(kind(pw.as_fd()), EndpointKind::Pipe);
    assert_eq!(params(pw.as_fd(), Direction::Sink), var(1 << 20));
    assert_eq!(kind(tcp.as_fd()), EndpointKind::TcpSocket);
    assert_eq!(kind(udp.as_fd()), EndpointKind::UdpSocket);
    assert_eq!(params(udp.as_fd(), Direction::Sink), var(65_507));
    assert_eq!(kind(us.as_fd()), EndpointKind::UnixStream);
    assert_eq!(kind(ud.as_fd()), EndpointKind::UnixDatagram);
    assert_eq!(kind(tty.as_fd()), EndpointKind::Tty);
    assert_eq!(params(tty.as_fd(), Direction::Sink), var(4096));
    assert_eq!(kind(null.as_fd()), EndpointKind::CharDevice);

    // A socket's two directions have a buffer each: the kernel doubles
    // what is asked (socket(7)), so ask for different sizes and see each.
    rustix::net::sockopt::set_socket_send_buffer_size(&tcp, 64 << 10).unwrap();
    rustix::net::sockopt::set_socket_recv_buffer_size(&tcp, 96 << 10).unwrap();
    assert_eq!(params(tcp.as_fd(), Direction::Sink), var(128 << 10));
    assert_eq!(params(tcp.as_fd(), Direction::Source), var(192 << 10));
    rustix::net::sockopt::set_socket_send_buffer_size(&us, 32 << 10).unwrap();
    assert_eq!(params(us.as_fd(), Direction::Sink), var(64 << 10));

    // Imposed parameters win.
    let fixed = ChannelParams::fixed(nz(512)).gather(false);
    let e = Endpoint::fd(pw.as_fd()).unwrap().impose(fixed);
    assert_eq!(e.params(Direction::Sink).unwrap(), fixed);
    assert_eq!(e.kind(), EndpointKind::Pipe);
}

#[test]
fn bad_endpoints_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::File::open(dir.path()).unwrap();
    let e = Endpoint::fd(d.as_fd()).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::IsADirectory, "{e}");
    let (r, _w) = std::io::pipe().unwrap();
    let e = Endpoint::file_range(r.as_fd(), 0, Some(10)).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ESPIPE), "{e}");
    let f = std::fs::File::create(dir.path().join("f")).unwrap();
    let e = Endpoint::file_range(f.as_fd(), 4096, None).unwrap();
    assert_eq!(e.range().map(|r| (r.offset, r.len)), Some((4096, None)));
}

/// A file opened O_DIRECT is a fixed-block channel of the file system's
/// block; where the file system refuses O_DIRECT (tmpfs) that is said.
#[test]
fn direct_files_are_fixed_block_channels() {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = tempfile::tempdir_in(std::env::var_os("CARGO_TARGET_TMPDIR").unwrap_or(".".into()))
        .unwrap();
    let path = dir.path().join("direct");
    std::fs::write(&path, vec![1u8; 8192]).unwrap();
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
    {
        Ok(f) => {
            let p = Endpoint::fd(f.as_fd())
                .unwrap()
                .params(Direction::Source)
                .unwrap();
            assert_eq!(p.block, BlockType::Fixed);
            assert!(p.max.get().is_power_of_two() && p.max.get() >= 512, "{p:?}");
        }
        Err(e) => eprintln!("skipped: {} refuses O_DIRECT ({e})", dir.path().display()),
    }
}

/// Every pair of a set of real endpoints: the case follows the paper's
/// rules for their parameters. The sizes are set so that each case shows.
#[test]
fn table_5_of_real_endpoints() {
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join("f")).unwrap();
    let (_r64, w64) = pipe_of(64 << 10);
    let (_r1m, w1m) = pipe_of(1 << 20);
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (_master, tty) = pty();
    let fix = |b| ChannelParams::fixed(nz(b));
    std::fs::write(dir.path().join("m"), vec![1u8; 4 << 20]).unwrap();
    let mapped = ferry::Stream::open(
        dir.path().join("m"),
        &ferry::OpenOptions::read_only().backend(ferry::stream::Backend::Mapped),
    )
    .unwrap();
    assert!(mapped.is_mapped());
    let buffered = ferry::Stream::from_bytes(vec![0u8; 10]);
    assert_eq!(buffered.buffer_size(), 128 << 10);
    let src = |name: &str| -> Endpoint<'_> {
        match name {
            "file" => Endpoint::fd(file.as_fd()).unwrap(),
            "pipe64K" => Endpoint::fd(w64.as_fd()).unwrap(),
            "memory100K" => Endpoint::memory(ferry::Buf::from(vec![0u8; 100 << 10])),
            "udp" => Endpoint::fd(udp.as_fd()).unwrap(),
            "disk512" => Endpoint::fd(file.as_fd()).unwrap().impose(fix(512)),
            "disk8K" => Endpoint::fd(file.as_fd()).unwrap().impose(fix(8192)),
            "mapStream" => Endpoint::stream(&mapped),
            "stream128K" => Endpoint::stream(&buffered),
            _ => unreachable!(),
        }
    };
    let sink = |name: &str| -> Endpoint<'_> {
        match name {
            "file" => Endpoint::fd(file.as_fd()).unwrap(),
            "pipe64K" => Endpoint::fd(w64.as_fd()).unwrap(),
            "pipe1M" => Endpoint::fd(w1m.as_fd()).unwrap(),
            "udp" => Endpoint::fd(udp.as_fd()).unwrap(),
            "tty" => Endpoint::fd(tty.as_fd()).unwrap(),
            "fix4K" => Endpoint::fd(file.as_fd()).unwrap().impose(fix(4096)),
            "fix512" => Endpoint::fd(file.as_fd()).unwrap().impose(fix(512)),
            "memory" => Endpoint::collect(),
            "memfix4K" => Endpoint::collect().impose(fix(4096)),
            "stream" => Endpoint::stream(&buffered),
            "strfix4K" => Endpoint::stream(&buffered).impose(fix(4096)),
            _ => unreachable!(),
        }
    };
    let sinks = [
        "file", "pipe64K", "pipe1M", "udp", "tty", "fix4K", "fix512", "memory", "memfix4K",
        "stream", "strfix4K",
    ];
    // Expected case numbers, one row per source, columns as `sinks`.
    // A memory sink takes any size (case 1 from everything) unless a
    // record size is imposed on it, when it is a fixed channel like any.
    // A ferry stream is a variable channel of its buffer's size (a mapped
    // one: ferry's 1 MiB file window).
    let table: [(&str, [u8; 11]); 8] = [
        ("file", [1, 2, 1, 2, 2, 4, 4, 1, 4, 2, 4]),
        ("pipe64K", [1, 1, 1, 2, 2, 4, 4, 1, 4, 1, 4]),
        ("memory100K", [1, 2, 1, 2, 2, 4, 4, 1, 4, 1, 4]),
        ("udp", [1, 1, 1, 1, 2, 4, 4, 1, 4, 1, 4]),
        ("disk512", [1, 1, 1, 1, 1, 4, 1, 1, 4, 1, 4]),
        ("disk8K", [1, 1, 1, 1, 2, 3, 3, 1, 3, 1, 3]),
        ("mapStream", [1, 2, 1, 2, 2, 4, 4, 1, 4, 2, 4]),
        ("stream128K", [1, 2, 1, 2, 2, 4, 4, 1, 4, 1, 4]),
    ];
    let mut shown = String::from("source \\ sink");
    for s in sinks {
        shown += &format!(" {s:>8}");
    }
    for (s, row) in table {
        let i = src(s).params(Direction::Source).unwrap();
        shown += &format!("\n{s:13}");
        for (k, want) in sinks.iter().zip(row) {
            let o = sink(k).params(Direction::Sink).unwrap();
            let got = Case::of(i, o).number();
            shown += &format!(" {got:>8}");
            assert_eq!(got, want, "{s} -> {k}: {i:?} -> {o:?}");
        }
    }
    eprintln!("{shown}");
}
