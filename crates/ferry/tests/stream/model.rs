//! Model test: random sequences of salloc / free / realloc / salloc_at /
//! mode switches / std reads, writes and seeks, on every backend, against a
//! `Vec<u8>` model of the file.

use ferry::stream::Backend;
use ferry::{Mode, OpenOptions, Region, RegionMut, Stream};
use proptest::prelude::*;
use std::io::{Read, Seek, SeekFrom, Write};

#[derive(Debug, Clone)]
enum Op {
    /// salloc(len) in read mode; keep the region outstanding?
    Read(usize, bool),
    /// salloc_mut(len) filled with a byte; keep outstanding?
    Write(usize, u8, bool),
    /// Free the i-th outstanding read region.
    FreeRead(usize),
    /// Free the i-th outstanding write region.
    FreeWrite(usize),
    /// Resize the most recent write region (if it still is the most recent).
    Realloc(usize, u8),
    /// salloc_at(len, Start(off)) in read mode.
    ReadAt(usize, u64),
    /// salloc_mut_at(len, Start(off)).
    WriteAt(usize, u64, u8),
    /// std Read::read into a buffer of n bytes.
    StdRead(usize),
    /// std Write::write_all of n bytes of a value.
    StdWrite(usize, u8),
    /// std Seek.
    Seek(i64, u8),
    SetMode(bool),
    Flush,
    /// Take a read region's bytes as a Buf and keep it.
    IntoBuf(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let len = prop_oneof![0usize..20, 0usize..300, 4000usize..9000];
    prop_oneof![
        4 => (len.clone(), any::<bool>()).prop_map(|(l, k)| Op::Read(l, k)),
        4 => (len.clone(), any::<u8>(), any::<bool>()).prop_map(|(l, b, k)| Op::Write(l, b, k)),
        2 => any::<usize>().prop_map(Op::FreeRead),
        3 => any::<usize>().prop_map(Op::FreeWrite),
        1 => (len.clone(), any::<u8>()).prop_map(|(l, b)| Op::Realloc(l, b)),
        1 => (len.clone(), 0u64..20_000).prop_map(|(l, o)| Op::ReadAt(l, o)),
        1 => (len.clone(), 0u64..20_000, any::<u8>()).prop_map(|(l, o, b)| Op::WriteAt(l, o, b)),
        2 => len.clone().prop_map(Op::StdRead),
        2 => (len, any::<u8>()).prop_map(|(l, b)| Op::StdWrite(l, b)),
        1 => (-5000i64..20_000, 0u8..3).prop_map(|(d, w)| Op::Seek(d, w)),
        1 => any::<bool>().prop_map(Op::SetMode),
        1 => Just(Op::Flush),
        1 => any::<usize>().prop_map(Op::IntoBuf),
    ]
}

/// Applies a write at `off` to the model (holes read as zeros).
fn put(model: &mut Vec<u8>, off: u64, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    let off = off as usize;
    if model.len() < off + bytes.len() {
        model.resize(off + bytes.len(), 0);
    }
    model[off..off + bytes.len()].copy_from_slice(bytes);
}

struct Harness<'s> {
    s: &'s Stream,
    model: Vec<u8>,
    pos: u64,
    /// Writes in allocation order not yet applied to the model.
    pending: Vec<(u64, Vec<u8>)>,
    reads: Vec<(Region<'s>, Vec<u8>)>,
    /// Outstanding write regions: (region, index into pending).
    writes: Vec<(RegionMut<'s>, usize)>,
    /// The most recent allocation is this write region (index in writes),
    /// and the offset has not moved since.
    last_write: Option<usize>,
    bufs: Vec<(ferry::Buf, Vec<u8>)>,
}

impl<'s> Harness<'s> {
    /// Every region still held and every Buf taken kept its bytes; frees
    /// the regions.
    fn check_held(&mut self) -> Result<(), TestCaseError> {
        for (r, want) in self.reads.drain(..) {
            prop_assert_eq!(&r[..], &want[..], "a held region changed");
        }
        for (b, want) in &self.bufs {
            prop_assert_eq!(&b[..], &want[..], "a Buf taken from a region changed");
        }
        Ok(())
    }

    fn new(s: &'s Stream, initial: &[u8]) -> Harness<'s> {
        Harness {
            s,
            model: initial.to_vec(),
            pos: 0,
            pending: Vec::new(),
            reads: Vec::new(),
            writes: Vec::new(),
            last_write: None,
            bufs: Vec::new(),
        }
    }

    /// Frees every write region and brings the model up to date (reads of
    /// bytes under outstanding write regions are not defined).
    fn settle(&mut self) {
        for (r, _) in self.writes.drain(..) {
            r.free().unwrap();
        }
        self.last_write = None;
        for (off, bytes) in self.pending.drain(..) {
            put(&mut self.model, off, &bytes);
        }
    }

    fn write(
        &mut self,
        mut r: RegionMut<'s>,
        len: usize,
        b: u8,
        keep: bool,
    ) -> Result<(), TestCaseError> {
        prop_assert_eq!(r.len(), len);
        r.fill(b);
        self.pending.push((self.pos, vec![b; len]));
        self.pos += len as u64;
        if keep {
            self.writes.push((r, self.pending.len() - 1));
            self.last_write = Some(self.writes.len() - 1);
        } else {
            drop(r);
            self.last_write = None;
        }
        Ok(())
    }

    fn expect_read(&self, len: usize) -> Vec<u8> {
        let start = (self.pos as usize).min(self.model.len());
        let end = (start + len).min(self.model.len());
        self.model[start..end].to_vec()
    }

    fn step(&mut self, op: Op) -> Result<(), TestCaseError> {
        let s = self.s;
        match op {
            Op::Read(len, keep) => {
                self.settle();
                let r = s.salloc(len).unwrap();
                let want = self.expect_read(len);
                prop_assert_eq!(&r[..], &want[..], "salloc({}) at {}", len, self.pos);
                self.pos += r.len() as u64;
                if keep {
                    self.reads.push((r, want));
                }
            }
            Op::ReadAt(len, off) => {
                self.settle();
                self.pos = off;
                let r = s.salloc_at(len, SeekFrom::Start(off)).unwrap();
                let want = self.expect_read(len);
                prop_assert_eq!(&r[..], &want[..], "salloc_at({}, {})", len, off);
                self.pos += r.len() as u64;
                self.reads.push((r, want));
            }
            Op::Write(len, b, keep) => self.write(s.salloc_mut(len).unwrap(), len, b, keep)?,
            Op::WriteAt(len, off, b) => {
                self.pos = off;
                self.write(
                    s.salloc_mut_at(len, SeekFrom::Start(off)).unwrap(),
                    len,
                    b,
                    true,
                )?
            }
            Op::FreeRead(i) if !self.reads.is_empty() => {
                let (r, want) = self.reads.swap_remove(i % self.reads.len());
                prop_assert_eq!(&r[..], &want[..], "a read region changed while held");
                r.free().unwrap();
            }
            Op::FreeWrite(i) if !self.writes.is_empty() => {
                let i = i % self.writes.len();
                let (r, _) = self.writes.remove(i);
                r.free().unwrap();
                self.last_write = match self.last_write {
                    Some(l) if l == i => None,
                    Some(l) if l > i => Some(l - 1),
                    other => other,
                };
            }
            Op::Realloc(len, b) => {
                if let Some(l) = self.last_write {
                    let (r, p) = &mut self.writes[l];
                    let old = r.len();
                    r.realloc(len).unwrap();
                    if len > old {
                        r[old..].fill(b);
                    }
                    let start = self.pending[*p].0;
                    self.pending[*p].1 = r.to_vec();
                    self.pos = start + len as u64;
                }
            }
            Op::StdRead(n) => {
                self.settle();
                let mut buf = vec![0u8; n];
                let mut h = s;
                let k = h.read(&mut buf).unwrap();
                let want = self.expect_read(n);
                prop_assert!(k <= want.len());
                prop_assert!(
                    k > 0 || want.is_empty() || n == 0,
                    "read returned 0 before the end"
                );
                prop_assert_eq!(&buf[..k], &want[..k]);
                self.pos += k as u64;
            }
            Op::StdWrite(n, b) => {
                let mut h = s;
                h.write_all(&vec![b; n]).unwrap();
                self.pending.push((self.pos, vec![b; n]));
                self.pos += n as u64;
                self.last_write = None;
            }
            Op::Seek(d, w) => {
                let to = match w {
                    0 => SeekFrom::Start(d.unsigned_abs()),
                    1 => SeekFrom::Current(d),
                    _ => {
                        // From the end needs the length: settle first.
                        self.settle();
                        s.flush().unwrap();
                        SeekFrom::End(d.min(0))
                    }
                };
                let want = match to {
                    SeekFrom::Start(n) => Some(n),
                    SeekFrom::Current(d) => self.pos.checked_add_signed(d),
                    SeekFrom::End(d) => (self.model.len() as u64).checked_add_signed(d),
                };
                let mut h = s;
                let got = h.seek(to);
                match want {
                    Some(p) => {
                        prop_assert_eq!(got.unwrap(), p);
                        self.pos = p;
                    }
                    None => prop_assert!(got.is_err()),
                }
                self.last_write = None;
            }
            Op::SetMode(read) => {
                if read {
                    s.set_mode(Mode::Read).unwrap();
                } else {
                    s.set_mode(Mode::Write).unwrap();
                }
            }
            Op::Flush => s.flush().unwrap(),
            Op::IntoBuf(i) if !self.reads.is_empty() => {
                let (r, want) = self.reads.swap_remove(i % self.reads.len());
                self.bufs.push((r.into_buf(), want));
            }
            _ => {}
        }
        Ok(())
    }
}

fn run(s: &Stream, initial: &[u8], ops: Vec<Op>) -> Result<Vec<u8>, TestCaseError> {
    let mut h = Harness::new(s, initial);
    for op in ops {
        h.step(op)?;
    }
    h.settle();
    h.check_held()?;
    s.flush().unwrap();
    prop_assert_eq!(s.len().unwrap(), h.model.len() as u64);
    Ok(h.model)
}

/// Read lengths: tiny, small, around a page, and larger than a buffer.
fn read_lens() -> impl Strategy<Value = usize> + Clone {
    prop_oneof![
        0usize..20,
        0usize..300,
        4000usize..9000,
        60_000usize..200_000
    ]
}

/// Only the operations a read-only stream allows.
fn read_op() -> impl Strategy<Value = Op> {
    let len = read_lens();
    prop_oneof![
        4 => (len.clone(), any::<bool>()).prop_map(|(l, k)| Op::Read(l, k)),
        2 => any::<usize>().prop_map(Op::FreeRead),
        1 => (len.clone(), 0u64..300_000).prop_map(|(l, o)| Op::ReadAt(l, o)),
        2 => len.prop_map(Op::StdRead),
        1 => (-5000i64..300_000, 0u8..3).prop_map(|(d, w)| Op::Seek(d, w)),
        1 => any::<usize>().prop_map(Op::IntoBuf),
    ]
}

/// Only what a pipe allows: reads without seeking.
fn pipe_op() -> impl Strategy<Value = Op> {
    let len = read_lens();
    prop_oneof![
        4 => (len.clone(), any::<bool>()).prop_map(|(l, k)| Op::Read(l, k)),
        2 => any::<usize>().prop_map(Op::FreeRead),
        2 => len.prop_map(Op::StdRead),
        1 => any::<usize>().prop_map(Op::IntoBuf),
    ]
}

fn initial() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        proptest::collection::vec(any::<u8>(), 0..100),
        proptest::collection::vec(any::<u8>(), 5000..20_000),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn memory_stream_matches_model(init in initial(), ops in proptest::collection::vec(op(), 0..60)) {
        let s = Stream::from_bytes(init.clone());
        let model = run(&s, &init, ops)?;
        prop_assert_eq!(s.into_vec().unwrap(), model);
    }

    #[test]
    fn buffered_file_stream_matches_model(
        init in initial(),
        ops in proptest::collection::vec(op(), 0..60),
        small in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, &init).unwrap();
        let mut o = OpenOptions::new().read(true).write(true);
        if small {
            o = o.buffer_size(4096);
        }
        let s = Stream::open(&path, &o).unwrap();
        let model = run(&s, &init, ops)?;
        s.close().unwrap();
        prop_assert!(std::fs::read(&path).unwrap() == model, "file differs from the model");
    }

    #[test]
    fn read_only_streams_match_model_on_every_backend(
        init in prop_oneof![initial(), proptest::collection::vec(any::<u8>(), 100_000..300_000)],
        ops in proptest::collection::vec(read_op(), 0..40),
        backend in prop_oneof![Just(Backend::Mapped), Just(Backend::Buffered)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, &init).unwrap();
        let s = Stream::open(&path, &OpenOptions::read_only().backend(backend)).unwrap();
        let model = run(&s, &init, ops)?;
        prop_assert!(model == init);
    }

    #[test]
    fn pipe_streams_match_model(
        init in prop_oneof![initial(), proptest::collection::vec(any::<u8>(), 100_000..300_000)],
        ops in proptest::collection::vec(pipe_op(), 0..40),
    ) {
        let (r, mut w) = std::io::pipe().unwrap();
        let feed = init.clone();
        let writer = std::thread::spawn(move || {
            for c in feed.chunks(7919) {
                w.write_all(c).unwrap();
            }
        });
        let s = Stream::from_fd(r.into()).unwrap();
        let mut h = Harness::new(&s, &init);
        for op in ops {
            h.step(op)?;
        }
        h.check_held()?;
        // Drain the rest so the writer can finish, and check it too.
        let mut rest = Vec::new();
        (&s).read_to_end(&mut rest).unwrap();
        prop_assert!(rest[..] == init[h.pos as usize..], "the rest of the pipe differs");
        writer.join().unwrap();
    }
}
