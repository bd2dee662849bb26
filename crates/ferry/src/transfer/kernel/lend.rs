//! Owned bytes into a pipe or a socket by reference: the kernel takes the
//! pages under each [`Buf`] (`vmsplice`; for a socket, through a private
//! pipe and `splice` on out of it) instead of a copy.
//!
//! No completion says when the kernel lets go of pages handed over this
//! way (a pipe's reader may splice them on into a socket, whose queue
//! holds them until acknowledged), so only memory nobody writes again may
//! go: the block is marked lent (`Block::lend`) — it never becomes
//! writable again, and its pages are dropped before its memory is reused,
//! the kernel keeping the old ones. Memory that cannot be lent (a `Vec`'s)
//! and pieces below the threshold are written as usual, by copy — and so
//! is a unique heap or pool buffer (`Buf::worth_lending`): it is
//! recycled right after the write, and dropping its pages and faulting
//! fresh ones in then costs more than the copy (measured).

use crate::sys::channel::wait_ready;
use crate::sys::sigguard::SignalGuard;
use crate::sys::transfer::{self as st, WriteEnd};
use crate::Aggregate;
use std::cell::RefCell;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// Where lent bytes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Into {
    /// A pipe (or FIFO): `vmsplice` straight in.
    Pipe,
    /// A stream socket: `vmsplice` into a private pipe, `splice` out.
    Socket,
}

/// What a lending write did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Lending {
    /// Bytes that arrived, both ways.
    pub bytes: u64,
    /// Of those, handed over by reference.
    pub lent: u64,
    /// Data-moving system calls.
    pub calls: u64,
}

thread_local! {
    /// This thread's private pipe (read end, write end, capacity), empty
    /// between uses; dropped after any failure that may have left bytes
    /// in it.
    static PRIVATE: RefCell<Option<(OwnedFd, OwnedFd, usize)>> = const { RefCell::new(None) };
}

fn private_pipe() -> io::Result<(OwnedFd, OwnedFd, usize)> {
    // (`try_with`: from another thread-local's destructor this one may be
    // gone already; a pipe of the call's own does then.)
    if let Ok(Some(p)) = PRIVATE.try_with(|c| c.borrow_mut().take()) {
        return Ok(p);
    }
    let (r, w) = st::pipe()?;
    let cap = crate::sys::fileio::set_pipe_size(w.as_fd(), 1 << 20).unwrap_or(1 << 16);
    Ok((r, w, cap))
}

/// Writes all of `data` to `out`, lending pieces of at least `threshold`
/// bytes whose memory allows it. A descriptor that would block is waited
/// for; a pipe or socket whose reader has gone is `EPIPE`, never a
/// SIGPIPE. On failure the error comes with what arrived.
pub(crate) fn write_lending(
    out: BorrowedFd<'_>,
    into: Into,
    data: &Aggregate,
    threshold: usize,
) -> Result<Lending, (Lending, io::Error)> {
    let mut done = Lending::default();
    let mut guard = SignalGuard::sigpipe();
    let r = match into {
        Into::Pipe => into_pipe(out, data, threshold, &mut done),
        Into::Socket => into_socket(out, data, threshold, &mut done),
    };
    match r {
        Ok(()) => Ok(done),
        Err(e) => {
            guard.saw_io(&e);
            Err((done, e))
        }
    }
}

fn into_pipe(
    out: BorrowedFd<'_>,
    data: &Aggregate,
    threshold: usize,
    done: &mut Lending,
) -> io::Result<()> {
    let we = WriteEnd::check(out)?;
    for b in data.bufs() {
        let lend = b.len() >= threshold && b.worth_lending() && b.lend();
        let mut off = 0;
        while off < b.len() {
            done.calls += 1;
            let r = if lend {
                st::vmsplice(we, &b[off..])
            } else {
                st::write(out, &b[off..])
            };
            match r {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    off += n;
                    done.bytes += n as u64;
                    if lend {
                        done.lent += n as u64;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_ready(out, true)?,
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

fn into_socket(
    out: BorrowedFd<'_>,
    data: &Aggregate,
    threshold: usize,
    done: &mut Lending,
) -> io::Result<()> {
    let mut pipe: Option<(OwnedFd, OwnedFd, usize)> = None;
    for b in data.bufs() {
        if !(b.len() >= threshold && b.worth_lending() && b.lend()) {
            let mut off = 0;
            while off < b.len() {
                done.calls += 1;
                match crate::sys::zerocopy::send(out, &b[off..], false) {
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(n) => {
                        off += n;
                        done.bytes += n as u64;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_ready(out, true)?,
                    Err(e) => return Err(e),
                }
            }
            continue;
        }
        if pipe.is_none() {
            pipe = Some(private_pipe()?);
        }
        let Some((pr, pw, cap)) = pipe.as_ref() else {
            continue;
        };
        let we = WriteEnd::check(pw.as_fd())?;
        let mut off = 0;
        while off < b.len() {
            let end = b.len().min(off + cap);
            done.calls += 1;
            // The private pipe is empty here: this cannot block.
            let mut held = st::vmsplice(we, &b[off..end])?;
            off += held;
            while held > 0 {
                done.calls += 1;
                match st::splice(pr.as_fd(), out, held, st::SpliceHint::More) {
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(n) => {
                        held -= n;
                        done.bytes += n as u64;
                        done.lent += n as u64;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_ready(out, true)?,
                    // The pipe still holds bytes: it is dropped, not kept.
                    Err(e) => return Err(e),
                }
            }
        }
    }
    // Empty again: kept for this thread's next write.
    if let Some(p) = pipe {
        // (If the thread-local is gone, as above, the pipe just closes.)
        let _ = PRIVATE.try_with(|c| *c.borrow_mut() = Some(p));
    }
    Ok(())
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use crate::{Buf, Pool, PoolConfig};
    use std::io::Read;

    fn pool() -> Pool {
        // One class, so a freed slot is the next one handed out.
        Pool::new(
            PoolConfig::default()
                .with_classes(vec![1 << 16])
                .with_shards(1),
        )
        .unwrap()
    }

    fn filled(pool: &Pool, byte: u8) -> Buf {
        let mut m = pool.alloc(60_000).unwrap();
        m.extend_from_slice(&vec![byte; 60_000]);
        m.freeze()
    }

    /// Lend a pool buffer to a pipe nobody has read yet, drop
    /// it, take the same slot again and overwrite it. The reader must
    /// still get the bytes that were written.
    #[test]
    fn a_lent_slot_reused_and_overwritten_leaves_the_pipe_alone() {
        let pool = pool();
        for into in [Into::Pipe, Into::Socket] {
            let (mut r, w): (Box<dyn Read + Send>, OwnedFd) = match into {
                Into::Pipe => {
                    let (r, w) = std::io::pipe().unwrap();
                    (Box::new(r), w.into())
                }
                Into::Socket => {
                    let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
                    (Box::new(b), a.into())
                }
            };
            let b = filled(&pool, b'A');
            let addr = b.as_ptr();
            let done = write_lending(w.as_fd(), into, &Aggregate::from(b.clone()), 1).unwrap();
            assert_eq!((done.bytes, done.lent), (60_000, 60_000), "{into:?}");
            assert!(b.is_lent());
            // Lent: never writable again, even when unique.
            let b = b.try_into_mut().unwrap_err();
            drop(b);
            let mut again = pool.alloc(60_000).unwrap();
            assert_eq!(again.spare_capacity_mut().as_ptr(), addr, "the same slot");
            again.extend_from_slice(&vec![b'B'; 60_000]);
            let again = again.freeze();
            // The slot was handed out with fresh pages and is writable.
            assert!(!again.is_lent());
            drop(w);
            let mut got = Vec::new();
            r.read_to_end(&mut got).unwrap();
            assert!(
                got.iter().all(|&c| c == b'A') && got.len() == 60_000,
                "{into:?}"
            );
            assert!(again.iter().all(|&c| c == b'B'));
        }
    }

    #[test]
    fn memory_that_cannot_be_lent_is_copied() {
        let (mut r, w) = std::io::pipe().unwrap();
        let v = Buf::from(vec![7u8; 50_000]);
        let done = write_lending(w.as_fd(), Into::Pipe, &Aggregate::from(v.clone()), 1).unwrap();
        assert_eq!((done.bytes, done.lent), (50_000, 0));
        assert!(!v.is_lent());
        drop(w);
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert_eq!(got, vec![7u8; 50_000]);
    }

    #[test]
    fn a_read_end_is_refused_before_anything_moves() {
        let (r, w) = std::io::pipe().unwrap();
        std::io::Write::write_all(&mut &w, b"pipe bytes").unwrap();
        let pool = pool();
        let b = filled(&pool, b'C');
        let e = write_lending(r.as_fd(), Into::Pipe, &Aggregate::from(b.clone()), 1).unwrap_err();
        assert_eq!(e.1.raw_os_error(), Some(libc::EBADF));
        assert_eq!(e.0.bytes, 0);
        assert!(
            b.iter().all(|&c| c == b'C'),
            "the pipe's bytes went into the buffer"
        );
    }

    #[test]
    fn a_gone_reader_is_epipe_not_a_signal() {
        let pool = pool();
        for into in [Into::Pipe, Into::Socket] {
            let w: OwnedFd = match into {
                Into::Pipe => std::io::pipe().unwrap().1.into(),
                Into::Socket => std::os::unix::net::UnixStream::pair().unwrap().0.into(),
            };
            // (The read ends were dropped at once.)
            let b = filled(&pool, b'D');
            let (done, e) = write_lending(w.as_fd(), into, &Aggregate::from(b), 1).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EPIPE), "{into:?}");
            assert_eq!(done.bytes, 0);
        }
    }

    #[test]
    fn mixed_pieces_arrive_in_order_through_a_socket() {
        let pool = pool();
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        let reader = std::thread::spawn(move || {
            let mut all = Vec::new();
            b.read_to_end(&mut all).unwrap();
            all
        });
        let mut agg = Aggregate::new();
        let mut want = Vec::new();
        let mut kept = Vec::new();
        for i in 0..30u8 {
            let piece = match i % 3 {
                // Shared (the caller keeps a clone): lent.
                0 => {
                    let b = filled(&pool, i);
                    kept.push(b.clone());
                    b
                }
                // Unique: recycled right after, so copied.
                1 => filled(&pool, i),
                // Small, and a Vec's: copied.
                _ => Buf::from(vec![i; 1000 + i as usize]),
            };
            want.extend_from_slice(&piece);
            agg.append_buf(piece);
        }
        let done = write_lending(a.as_fd(), Into::Socket, &agg, 4096).unwrap();
        drop(agg);
        drop(a);
        assert_eq!(done.bytes, want.len() as u64);
        assert_eq!(done.lent, 10 * 60_000);
        assert!(kept.iter().all(|b| b.is_lent()));
        assert!(reader.join().unwrap() == want);
    }
}
