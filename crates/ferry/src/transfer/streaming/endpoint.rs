//! The two ends of a transfer, and the channel parameters each declares
//! (Roadrunner's §3): what kind of thing an endpoint is — a regular file
//! (or a range of one), a pipe or FIFO, a TCP, UDP or Unix socket, a
//! terminal, a character or block device, memory — and how large one
//! transfer on it may be.
//!
//! | endpoint | block type | maximum block size B |
//! |---|---|---|
//! | regular file, block device | variable | 1 MiB (ferry's transfer unit) |
//! | the same opened `O_DIRECT` | fixed | the device's block (`st_blksize`) |
//! | pipe, FIFO | variable | its capacity (`F_GETPIPE_SZ`) |
//! | stream socket (TCP, Unix) | variable | its send or receive buffer |
//! | datagram socket (UDP) | variable | 65 507, one datagram |
//! | datagram socket (Unix) | variable | its send or receive buffer |
//! | terminal | variable | 4 096 (the line discipline's buffer) |
//! | other character device | variable | `st_blksize` |
//! | memory source | variable | its length |
//! | memory sink ([`Endpoint::collect`]) | variable | `usize::MAX` |
//! | ferry [`Stream`] ([`Endpoint::stream`]), mapped | variable | 1 MiB |
//! | ferry [`Stream`], any other | variable | its buffer size |
//! | ipc [`Receiver`] ([`Endpoint::ipc_receiver`]) | variable | its sender's slot size |
//! | ipc [`Sender`] ([`Endpoint::ipc_sender`]) | variable | its slot size |
//!
//! A caller with a record size of its own imposes it
//! ([`Endpoint::impose`]): `ferry pipe --fixed 512` makes a sink take
//! 512-byte blocks only, whatever it is.
//!
//! ```
//! use ferry::transfer::endpoint::{Direction, Endpoint, EndpointKind};
//! use ferry::transfer::overlay::{BlockType, Case};
//! use std::os::fd::AsFd;
//!
//! let (r, w) = std::io::pipe()?;
//! let file = tempfile::tempfile()?;
//! let src = Endpoint::fd(file.as_fd())?;
//! let dst = Endpoint::fd(w.as_fd())?;
//! assert_eq!((src.kind(), dst.kind()), (EndpointKind::File, EndpointKind::Pipe));
//! let (pi, po) = (src.params(Direction::Source)?, dst.params(Direction::Sink)?);
//! assert_eq!(po.block, BlockType::Variable);
//! // A file's 1 MiB transfers into a 64 KiB pipe: each split by reference.
//! if po.max.get() < pi.max.get() {
//!     assert_eq!(Case::of(pi, po), Case::Split);
//! }
//! # drop(r);
//! # Ok::<(), std::io::Error>(())
//! ```

use crate::ipc::{Receiver, Sender};
use crate::sys::channel::{self, Family, FdKind};
use crate::transfer::overlay::ChannelParams;
use crate::{Aggregate, Stream};
use std::io;
use std::num::NonZeroUsize;
use std::os::fd::BorrowedFd;
use std::sync::Mutex;

/// ferry's unit of transfer from and to regular files: what one
/// `copy_file_range`, `splice` or mapped window moves at a time.
pub const FILE_BLOCK: usize = 1 << 20;

/// The largest UDP payload over IPv4.
const UDP_MAX: usize = 65_507;

/// The terminal line discipline's buffer (`N_TTY_BUF_SIZE`).
const TTY_BLOCK: usize = 4096;

/// Which way bytes go through an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Bytes are read from it.
    Source,
    /// Bytes are written to it.
    Sink,
}

/// What an endpoint is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EndpointKind {
    /// A regular file (or a range of one).
    File,
    /// A pipe or FIFO.
    Pipe,
    /// A TCP socket (IPv4 or IPv6).
    TcpSocket,
    /// A UDP socket.
    UdpSocket,
    /// A Unix-domain stream socket.
    UnixStream,
    /// A Unix-domain datagram socket.
    UnixDatagram,
    /// Another kind of socket.
    Socket,
    /// A terminal.
    Tty,
    /// A character device that is not a terminal (`/dev/null`, …).
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Bytes in memory (an [`Aggregate`] as source).
    Memory,
    /// A ferry [`Stream`] (alloc stream), read by `salloc` regions and
    /// written through its buffers.
    Stream,
    /// One end of an ipc channel ([`crate::ipc`]): buffers passed by
    /// reference through the sender's pool.
    Ipc,
}

/// One end of a transfer. See the [module docs](self).
#[derive(Debug)]
pub struct Endpoint<'a> {
    inner: Inner<'a>,
    imposed: Option<ChannelParams>,
}

#[derive(Debug)]
enum Inner<'a> {
    Fd {
        fd: BorrowedFd<'a>,
        kind: FdKind,
        direct: bool,
        range: Option<FileRange>,
    },
    Memory(Aggregate),
    /// A memory sink: output blocks appended by reference.
    Collect(std::sync::Mutex<Aggregate>),
    /// A ferry alloc stream.
    Stream(&'a Stream),
    /// The receiving end of an ipc channel, as a source.
    IpcIn(&'a Mutex<Receiver>),
    /// The sending end of an ipc channel, as a sink.
    IpcOut(&'a Mutex<Sender>),
}

/// A range of a regular file: from `offset`, `len` bytes or to the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileRange {
    /// Where the range starts.
    pub offset: u64,
    /// How many bytes; `None`: to the end of the file.
    pub len: Option<u64>,
}

impl<'a> Endpoint<'a> {
    /// A descriptor, whatever it is (one `fstat`; for a socket its type and
    /// family too). A directory is refused (`EISDIR`).
    pub fn fd(fd: BorrowedFd<'a>) -> io::Result<Endpoint<'a>> {
        let kind = channel::fd_kind(fd)?;
        if kind == FdKind::Directory {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "a directory is not a transfer endpoint",
            ));
        }
        let direct = matches!(kind, FdKind::Regular { .. } | FdKind::BlockDevice { .. })
            && channel::is_direct(fd)?;
        Ok(Endpoint {
            inner: Inner::Fd {
                fd,
                kind,
                direct,
                range: None,
            },
            imposed: None,
        })
    }

    /// A range of a regular file, at explicit offsets (the descriptor's own
    /// offset is neither used nor moved). As a source, the bytes from
    /// `offset` (`len` of them, or to the end); as a sink, the bytes go to
    /// the file from `offset` on (positioned writes), at most `len` of
    /// them: past that the transfer fails `WriteZero`. Anything but a
    /// regular file is refused (`ESPIPE`).
    pub fn file_range(
        fd: BorrowedFd<'a>,
        offset: u64,
        len: Option<u64>,
    ) -> io::Result<Endpoint<'a>> {
        let mut e = Endpoint::fd(fd)?;
        match &mut e.inner {
            Inner::Fd {
                kind: FdKind::Regular { .. },
                range,
                ..
            } => *range = Some(FileRange { offset, len }),
            _ => {
                return Err(io::Error::from_raw_os_error(libc::ESPIPE));
            }
        }
        Ok(e)
    }

    /// Bytes in memory, as a source.
    pub fn memory(data: impl Into<Aggregate>) -> Endpoint<'static> {
        Endpoint {
            inner: Inner::Memory(data.into()),
            imposed: None,
        }
    }

    /// A memory sink: each output block is appended to an [`Aggregate`]
    /// by reference — slices of the source's buffers (a memory source's
    /// own, or the page-aligned buffers a descriptor was read into), no
    /// byte copied unless the case makes a block contiguous or pads it.
    /// Take the bytes with [`into_collected`](Self::into_collected). Its
    /// channel takes blocks of any size (variable, B = `usize::MAX`)
    /// unless a record size is [imposed](Self::impose).
    ///
    /// ```
    /// use ferry::transfer::endpoint::Endpoint;
    /// use ferry::transfer::{between, TransferOptions};
    /// let src = Endpoint::memory(ferry::Buf::from_static(b"hello, world"));
    /// let dst = Endpoint::collect();
    /// let st = between(&src, &dst, &TransferOptions::new())?;
    /// assert_eq!((st.bytes, st.user_copied()), (12, 0));
    /// assert_eq!(dst.into_collected().unwrap(), b"hello, world"[..]);
    /// # Ok::<(), ferry::transfer::TransferError>(())
    /// ```
    pub fn collect() -> Endpoint<'static> {
        Endpoint {
            inner: Inner::Collect(std::sync::Mutex::new(Aggregate::new())),
            imposed: None,
        }
    }

    /// A ferry alloc stream, as a source or a sink, at its offset.
    ///
    /// As a source, input blocks are its `salloc` regions taken as
    /// [`Buf`](crate::Buf)s: a mapped file's pages or the stream's own
    /// read buffers, by reference (nothing copied in user space; a region
    /// is a whole block unless the stream ends, so a pipe or socket stream
    /// delivers full blocks). As a sink, output blocks go into its buffers
    /// (one copy in user space, counted as [`Method::ReadWrite`](crate::transfer::Method::ReadWrite))
    /// or, from a descriptor on its own parameters, are read straight into
    /// the stream's write regions (the kernel's copy only); the stream is
    /// flushed at the end, and only bytes that reached its file count as
    /// moved. Bytes the stream read ahead or holds unwritten before the
    /// transfer are its own: they come first and are kept.
    ///
    /// A [`SharedStream`](crate::SharedStream) takes part through its
    /// guard: `Endpoint::stream(&shared.lock())` holds the stream for the
    /// whole transfer.
    ///
    /// ```
    /// use ferry::transfer::endpoint::Endpoint;
    /// use ferry::transfer::{between, TransferOptions};
    /// let input = ferry::Stream::from_bytes(b"from one stream to another".to_vec());
    /// let output = ferry::Stream::memory();
    /// let st = between(&Endpoint::stream(&input), &Endpoint::stream(&output),
    ///                  &TransferOptions::new())?;
    /// assert_eq!(st.bytes, 26);
    /// assert_eq!(output.into_vec()?, b"from one stream to another");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stream(s: &'a Stream) -> Endpoint<'a> {
        Endpoint {
            inner: Inner::Stream(s),
            imposed: None,
        }
    }

    /// The receiving end of an ipc channel, as a source: each buffer it
    /// receives is an input block, by reference (the sender's pool
    /// pages; nothing copied in user space). The end of the input is the
    /// sender's orderly close; a sender that went away without one (killed)
    /// is a read error (`UnexpectedEof`) after the bytes that came.
    /// As a sink it is refused.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use ferry::transfer::endpoint::Endpoint;
    /// use ferry::transfer::{between, TransferOptions};
    /// let (a, b) = ferry::ipc::pair()?;
    /// let mut tx = ferry::ipc::Sender::new(a, Default::default())?;
    /// // SAFETY: the peer is this example's own ferry Sender.
    /// let rx = std::sync::Mutex::new(unsafe { ferry::ipc::Receiver::new(b, None)? });
    /// tx.send_bytes(b"through the pool")?;
    /// tx.close()?;
    /// let out = Endpoint::collect();
    /// between(&Endpoint::ipc_receiver(&rx), &out, &TransferOptions::new())?;
    /// assert_eq!(out.into_collected().unwrap(), b"through the pool"[..]);
    /// # Ok(()) }
    /// ```
    pub fn ipc_receiver(rx: &'a Mutex<Receiver>) -> Endpoint<'a> {
        Endpoint {
            inner: Inner::IpcIn(rx),
            imposed: None,
        }
    }

    /// The sending end of an ipc channel, as a sink: a descriptor on its
    /// own parameters (no record size imposed) is read straight into the
    /// pool's slots, one slot a read (the kernel's copy only), and each
    /// slot sent by reference; any other input goes through the overlay
    /// and [`Sender::write_buf`] (its pool's buffers by reference, others
    /// copied into slots, counted in
    /// [`TransferStats::memcpy_bytes`](crate::transfer::TransferStats::memcpy_bytes)). The sender is not closed at the
    /// end: the caller does ([`Sender::close`]) when it has sent all.
    /// As a source it is refused.
    pub fn ipc_sender(tx: &'a Mutex<Sender>) -> Endpoint<'a> {
        Endpoint {
            inner: Inner::IpcOut(tx),
            imposed: None,
        }
    }

    /// The receiver, for an endpoint made by [`ipc_receiver`](Self::ipc_receiver).
    pub(crate) fn ipc_source(&self) -> Option<&'a Mutex<Receiver>> {
        match &self.inner {
            Inner::IpcIn(r) => Some(r),
            _ => None,
        }
    }

    /// The sender, for an endpoint made by [`ipc_sender`](Self::ipc_sender).
    pub(crate) fn ipc_sink(&self) -> Option<&'a Mutex<Sender>> {
        match &self.inner {
            Inner::IpcOut(t) => Some(t),
            _ => None,
        }
    }

    /// The stream, for an endpoint made by [`stream`](Self::stream).
    pub fn as_stream(&self) -> Option<&'a Stream> {
        match &self.inner {
            Inner::Stream(s) => Some(s),
            _ => None,
        }
    }

    /// The bytes a [`collect`](Self::collect) sink received (`None` for
    /// any other endpoint).
    pub fn into_collected(self) -> Option<Aggregate> {
        match self.inner {
            Inner::Collect(m) => Some(m.into_inner().unwrap_or_else(|p| p.into_inner())),
            _ => None,
        }
    }

    /// Bytes a memory sink holds so far (0 for any other endpoint).
    pub(crate) fn collected_len(&self) -> usize {
        match &self.inner {
            Inner::Collect(m) => m.lock().unwrap_or_else(|p| p.into_inner()).len(),
            _ => 0,
        }
    }

    /// Appends an output block to a memory sink; false if this is not one.
    pub(crate) fn collect_block(&self, a: Aggregate) -> bool {
        match &self.inner {
            Inner::Collect(m) => {
                let mut g = m.lock().unwrap_or_else(|p| p.into_inner());
                for b in a.bufs() {
                    g.append_buf(b.clone());
                }
                true
            }
            _ => false,
        }
    }

    /// The same endpoint with channel parameters the caller imposes (a
    /// record size, a fixed block a device or protocol needs).
    pub fn impose(mut self, params: ChannelParams) -> Endpoint<'a> {
        self.imposed = Some(params);
        self
    }

    /// What the endpoint is.
    pub fn kind(&self) -> EndpointKind {
        match &self.inner {
            Inner::Fd { kind, .. } => match *kind {
                FdKind::Regular { .. } => EndpointKind::File,
                FdKind::Pipe => EndpointKind::Pipe,
                FdKind::Socket {
                    stream,
                    family: Family::Inet,
                } => {
                    if stream {
                        EndpointKind::TcpSocket
                    } else {
                        EndpointKind::UdpSocket
                    }
                }
                FdKind::Socket {
                    stream,
                    family: Family::Unix,
                } => {
                    if stream {
                        EndpointKind::UnixStream
                    } else {
                        EndpointKind::UnixDatagram
                    }
                }
                FdKind::Socket { .. } => EndpointKind::Socket,
                FdKind::Tty => EndpointKind::Tty,
                FdKind::CharDevice { .. } => EndpointKind::CharDevice,
                FdKind::BlockDevice { .. } => EndpointKind::BlockDevice,
                // Refused by `fd`; `Other` (an epoll or event descriptor…)
                // is read and written as a character device would be.
                FdKind::Directory | FdKind::Other => EndpointKind::CharDevice,
            },
            Inner::Memory(_) | Inner::Collect(_) => EndpointKind::Memory,
            Inner::Stream(_) => EndpointKind::Stream,
            Inner::IpcIn(_) | Inner::IpcOut(_) => EndpointKind::Ipc,
        }
    }

    /// The channel parameters imposed with [`impose`](Self::impose), if any.
    pub fn imposed(&self) -> Option<ChannelParams> {
        self.imposed
    }

    /// The bytes of a memory source.
    pub(crate) fn memory_source(&self) -> Option<&Aggregate> {
        match &self.inner {
            Inner::Memory(a) => Some(a),
            _ => None,
        }
    }

    /// The file range, for an endpoint made by [`file_range`](Self::file_range).
    pub fn range(&self) -> Option<FileRange> {
        match &self.inner {
            Inner::Fd { range, .. } => *range,
            _ => None,
        }
    }

    /// The descriptor, for an endpoint that has one.
    pub fn as_fd(&self) -> Option<BorrowedFd<'a>> {
        match &self.inner {
            Inner::Fd { fd, .. } => Some(*fd),
            _ => None,
        }
    }

    /// The channel parameters of this endpoint used as a source or a sink
    /// (sockets have a buffer each way): imposed ones if any, else the
    /// table in the [module docs](self).
    pub fn params(&self, dir: Direction) -> io::Result<ChannelParams> {
        if let Some(p) = self.imposed {
            return Ok(p);
        }
        let var = |b: usize| ChannelParams::variable(nonzero(b));
        Ok(match &self.inner {
            Inner::Fd {
                fd, kind, direct, ..
            } => match *kind {
                FdKind::Regular { blksize, .. } | FdKind::BlockDevice { blksize } if *direct => {
                    ChannelParams::fixed(nonzero(blksize as usize))
                }
                FdKind::Regular { .. } | FdKind::BlockDevice { .. } => var(FILE_BLOCK),
                FdKind::Pipe => var(channel::pipe_capacity(*fd)?),
                FdKind::Socket {
                    stream: false,
                    family: Family::Inet,
                } => var(UDP_MAX),
                FdKind::Socket { .. } => var(channel::socket_buffer(*fd, dir == Direction::Sink)?),
                FdKind::Tty => var(TTY_BLOCK),
                FdKind::CharDevice { blksize } => var(blksize as usize),
                FdKind::Directory | FdKind::Other => var(TTY_BLOCK),
            },
            Inner::Memory(a) => var(a.len()),
            Inner::Collect(_) => var(usize::MAX),
            Inner::Stream(s) if s.is_mapped() => var(FILE_BLOCK),
            Inner::Stream(s) => var(s.buffer_size()),
            Inner::IpcIn(r) => var(r.lock().unwrap_or_else(|p| p.into_inner()).slot_size()),
            Inner::IpcOut(t) => var(t.lock().unwrap_or_else(|p| p.into_inner()).slot_size()),
        })
    }
}

/// A size of at least 1 (a kernel that reports 0 gets the smallest block).
fn nonzero(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN)
}
