//! Sorted output assembled on a second thread: the producer copies lines
//! or records into page-aligned blocks of 1 MiB, which the calling
//! thread writes as they fill, so that the kernel's copy of one block
//! into the output overlaps the assembling of the next. Two blocks are
//! in flight at most; written blocks go back to the producer to fill
//! again (no fresh pages after the first few).

use super::error::Failure;
use crate::BufMut;
use std::io;
use std::sync::mpsc;

/// The size of one block.
const BLOCK: usize = 1 << 20;

/// The producer's side: bytes put here reach the output in order.
pub(crate) struct Blocks {
    out: BufMut,
    full: mpsc::SyncSender<BufMut>,
    empty: mpsc::Receiver<BufMut>,
}

impl Blocks {
    /// Appends `data` (of any length).
    #[inline]
    pub(crate) fn put(&mut self, data: &[u8]) -> Result<(), Failure> {
        if self.out.tail_room() >= data.len() {
            self.out.extend_from_slice(data);
            return Ok(());
        }
        self.put_slow(data)
    }

    #[inline(never)]
    fn put_slow(&mut self, mut data: &[u8]) -> Result<(), Failure> {
        while !data.is_empty() {
            if self.out.tail_room() == 0 {
                self.send()?;
            }
            let n = self.out.tail_room().min(data.len());
            self.out.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        Ok(())
    }

    /// Hands the current block to the writer and takes an empty one.
    fn send(&mut self) -> Result<(), Failure> {
        let next = match self.empty.try_recv() {
            Ok(b) => b,
            Err(_) => BufMut::try_with_capacity_aligned(BLOCK, 4096).map_err(|e| (None, e))?,
        };
        let full = std::mem::replace(&mut self.out, next);
        self.full.send(full).map_err(|_| {
            // The writer stopped: its own error is the one reported.
            (None, io::Error::other("the output stopped"))
        })
    }
}

/// Runs `produce` on a second thread and writes what it puts with `emit`
/// on this one. The first error wins: the output's (after which the
/// producer is stopped at its next block), else the producer's.
pub(crate) fn through_writer(
    produce: impl FnOnce(&mut Blocks) -> Result<(), Failure> + Send,
    mut emit: impl FnMut(&[u8]) -> io::Result<()>,
) -> Result<(), Failure> {
    let (full_tx, full_rx) = mpsc::sync_channel::<BufMut>(1);
    let (empty_tx, empty_rx) = mpsc::channel::<BufMut>();
    let first = BufMut::try_with_capacity_aligned(BLOCK, 4096).map_err(|e| (None, e))?;
    std::thread::scope(|s| {
        let producer = s.spawn(move || {
            let mut b = Blocks {
                out: first,
                full: full_tx,
                empty: empty_rx,
            };
            produce(&mut b)?;
            if !b.out.is_empty() {
                let last = std::mem::take(&mut b.out);
                b.full
                    .send(last)
                    .map_err(|_| (None, io::Error::other("the output stopped")))?;
            }
            Ok(())
        });
        let mut written = Ok(());
        for mut b in full_rx.iter() {
            written = emit(&b).map_err(|e| (None, e));
            if written.is_err() {
                break;
            }
            b.clear();
            let _ = empty_tx.send(b);
        }
        // Dropping the receiver stops a producer waiting to send.
        drop(full_rx);
        let produced = match producer.join() {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        };
        written.and(produced)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_arrive_in_order_across_blocks() {
        let mut got = Vec::new();
        let r = through_writer(
            |b| {
                for i in 0..300_000u32 {
                    b.put(&i.to_le_bytes())?;
                }
                b.put(&vec![7u8; 3 * BLOCK + 5])
            },
            |d| {
                got.extend_from_slice(d);
                Ok(())
            },
        );
        assert!(r.is_ok());
        let mut want = Vec::new();
        for i in 0..300_000u32 {
            want.extend_from_slice(&i.to_le_bytes());
        }
        want.extend(std::iter::repeat_n(7u8, 3 * BLOCK + 5));
        assert_eq!(got, want);
    }

    #[test]
    fn an_output_error_stops_the_producer_and_is_reported() {
        let mut calls = 0;
        let r = through_writer(
            |b| {
                // Far more than fits: the producer must be stopped.
                for _ in 0..10_000 {
                    b.put(&[1u8; 64 << 10])?;
                }
                Ok(())
            },
            |_| {
                calls += 1;
                Err(io::Error::from_raw_os_error(libc::ENOSPC))
            },
        );
        let (name, e) = r.unwrap_err();
        assert_eq!((name, e.raw_os_error()), (None, Some(libc::ENOSPC)));
        assert_eq!(calls, 1);
    }

    #[test]
    fn a_producer_error_is_reported() {
        let r = through_writer(
            |b| {
                b.put(b"partial")?;
                Err((Some("run".into()), io::Error::from_raw_os_error(libc::EIO)))
            },
            |_| Ok(()),
        );
        let (name, e) = r.unwrap_err();
        assert_eq!(name.as_deref(), Some("run"));
        assert_eq!(e.raw_os_error(), Some(libc::EIO));
    }
}
