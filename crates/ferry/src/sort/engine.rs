//! The sort's course: pieces read ([`super::input`]), each sorted in
//! memory ([`super::memory`], [`super::records`]); a lone piece kept for
//! the output, more written as runs ([`super::runs`]) — the next piece
//! read while the last is written — and merged ([`super::merge`]) as the
//! output is written ([`Sorted`]), through blocks assembled on a second
//! thread ([`super::blocks`]) where the units are in memory.

use super::blocks::through_writer;
use super::error::{self, Error, Failure, Place};
use super::input::{Piece, Pieces, Whole};
use super::records::{self, Layout};
use super::runs::{self, Run};
use super::{memory, merge, Checked, Compare, Framing, Input, Sorter};
use std::io;
use std::os::fd::BorrowedFd;

/// Sorted units, ready to be written: every input has been read.
/// Dropping it removes its runs (their files have no name, or lost it
/// when they were made).
pub struct Sorted<'a, C> {
    cmp: C,
    framing: Framing,
    unique: bool,
    state: State<'a>,
}

enum State<'a> {
    /// One piece, sorted in memory: where its units lie, in order.
    Units {
        piece: Piece<'a>,
        spans: Vec<(usize, usize)>,
    },
    /// One piece of records sorted by a byte key: their order.
    Records {
        piece: Piece<'a>,
        layout: Layout,
        order: Vec<u32>,
    },
    /// Runs on disk, merged as the output is written.
    Runs {
        runs: Vec<Run>,
        records: Option<Layout>,
    },
    /// Inputs taken as sorted, merged as the output is written.
    Merge { inputs: Vec<Whole<'a>> },
}

/// A record size of 0 is refused before anything is read.
fn valid(framing: Framing) -> io::Result<()> {
    if framing == Framing::Records(0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a record size of 0",
        ));
    }
    Ok(())
}

/// The most bytes one piece may hold, for a memory budget.
fn piece_limit(memory: u64) -> usize {
    // The budget holds a piece, its sorted copy on its way to disk, and
    // the next piece being read.
    (memory / 3).clamp(1 << 16, usize::MAX as u64) as usize
}

pub(crate) fn sort<'a, C: Compare>(
    s: Sorter<'_, C>,
    inputs: Vec<Input<'a>>,
) -> io::Result<Sorted<'a, C>> {
    valid(s.framing)?;
    let Sorter {
        cmp,
        framing,
        memory,
        temp_dir,
        threads,
        unique,
        stable,
        fan_in,
        mut progress,
    } = s;
    let mut limit = piece_limit(memory);
    let records = match (framing, cmp.byte_key()) {
        (Framing::Records(size), Some(k)) => {
            limit = limit.min(records::MAX_PIECE_RECORDS.saturating_mul(size));
            Some(Layout::new(size, k))
        }
        _ => None,
    };
    let mut pieces = Pieces::new(inputs, framing, limit);
    let first = pieces.next_piece()?;
    let second = match first {
        Some(_) => pieces.next_piece()?,
        None => None,
    };
    let Some(second) = second else {
        // Everything in one piece: sorted in memory.
        let piece = first.unwrap_or_default();
        let state = match records {
            Some(layout) => {
                let order = records::order(&piece, layout, threads);
                State::Records {
                    piece,
                    layout,
                    order,
                }
            }
            None => {
                let mut units = framing.split(&piece);
                memory::sort_units(&mut units, &cmp, threads, stable);
                let spans = memory::spans(&piece, units);
                State::Units { piece, spans }
            }
        };
        return Ok(Sorted {
            cmp,
            framing,
            unique,
            state,
        });
    };
    let dir = temp_dir.unwrap_or_else(runs::default_temp_dir);
    let fan_in = fan_in.unwrap_or_else(runs::fan_in);
    let mut done: Vec<Run> = Vec::new();
    let mut pending = None;
    // A run's memory, back from the kernel, for the run after next.
    let mut spare = None;
    let mut next = first;
    let mut after = Some(second);
    while let Some(piece) = next.take() {
        let started = match records {
            Some(l) => {
                let order = records::order(&piece, l, threads);
                let sorted = records::gather(&piece, l, &order, unique, spare.take())
                    .map_err(|e| Error::at(Place::Temp(dir.display().to_string()), e))?;
                runs::start_run_of(&dir, sorted)?
            }
            None => {
                let mut units = framing.split(&piece);
                memory::sort_units(&mut units, &cmp, threads, stable);
                let u = unique.then_some(&cmp);
                runs::start_run(&dir, &units, framing, u, spare.take())?
            }
        };
        if let Some(p) = progress.as_mut() {
            p(piece.len() as u64);
        }
        pieces.recycle(piece);
        if let Some((run, af, req)) = pending.take() {
            spare = runs::finish_run(&run, af, req)?;
            done.push(run);
            if done.len() > fan_in {
                merge::merge_first(&mut done, fan_in, &dir, framing, &cmp, unique, records)?;
            }
        }
        pending = Some(started);
        // The next piece is read while the run is written.
        next = match after.take() {
            Some(p) => Some(p),
            None => pieces.next_piece()?,
        };
    }
    if let Some((run, af, req)) = pending.take() {
        runs::finish_run(&run, af, req)?;
        done.push(run);
    }
    while done.len() > fan_in {
        merge::merge_first(&mut done, fan_in, &dir, framing, &cmp, unique, records)?;
    }
    Ok(Sorted {
        cmp,
        framing,
        unique,
        state: State::Runs {
            runs: done,
            records,
        },
    })
}

pub(crate) fn merge<'a, C: Compare>(
    s: Sorter<'_, C>,
    inputs: Vec<Input<'a>>,
) -> io::Result<Sorted<'a, C>> {
    valid(s.framing)?;
    let mut wholes = Vec::with_capacity(inputs.len());
    for (i, input) in inputs.into_iter().enumerate() {
        wholes.push(input.read_whole(i)?);
    }
    Ok(Sorted {
        cmp: s.cmp,
        framing: s.framing,
        unique: s.unique,
        state: State::Merge { inputs: wholes },
    })
}

pub(crate) fn check<C: Compare>(s: Sorter<'_, C>, input: Input<'_>) -> io::Result<Checked> {
    valid(s.framing)?;
    let mut pieces = Pieces::new(vec![input], s.framing, piece_limit(s.memory));
    let mut last: Option<Vec<u8>> = None;
    let mut index = 0u64;
    while let Some(piece) = pieces.next_piece()? {
        let units = s.framing.split(&piece);
        let mut prev = last.as_deref();
        for &u in &units {
            if let Some(p) = prev {
                let d = s.cmp.compare(p, u);
                if d.is_gt() || (s.unique && d.is_eq()) {
                    return Ok(Checked::Disorder {
                        index,
                        unit: u.to_vec(),
                    });
                }
            }
            prev = Some(u);
            index += 1;
        }
        let tail = units.last().map(|u| u.to_vec());
        drop(units);
        last = tail.or(last);
        pieces.recycle(piece);
    }
    Ok(Checked::Sorted)
}

impl<C: Compare> Sorted<'_, C> {
    /// Whether the units are in runs on disk (else in memory).
    pub fn is_external(&self) -> bool {
        matches!(self.state, State::Runs { .. })
    }

    /// Gives the sorted output to `emit`, in pieces of any size (a line,
    /// its terminator, a block of 1 MiB): the units, each line followed
    /// by its terminator. An error of `emit` ends it, as
    /// [`Place::Output`].
    pub fn emit(self, emit: impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        let Sorted {
            cmp,
            framing,
            unique,
            state,
        } = self;
        let unique_by = unique.then_some(&cmp);
        let term = framing.terminator();
        let r = match state {
            State::Units { piece, spans } => {
                let units = spans.iter().map(|&(s, n)| &piece[s..s + n]);
                write_units(units, term, unique_by, emit)
            }
            State::Records {
                piece,
                layout,
                order,
            } => records::write_sorted(&piece, layout, &order, unique, emit),
            State::Runs {
                runs,
                records: Some(l),
            } => records::merge(runs, l, unique, emit),
            State::Runs {
                runs,
                records: None,
            } => merge::merge_runs(runs, framing, &cmp, unique, emit),
            State::Merge { inputs } => {
                let each: Vec<Vec<&[u8]>> = inputs.iter().map(|b| framing.split(b)).collect();
                let merged = merge::merge_sorted(each, &cmp);
                write_units(merged.into_iter(), term, unique_by, emit)
            }
        };
        r.map_err(error::failure)
    }

    /// Writes the sorted output to `w` (buffered here: any writer will
    /// do).
    pub fn write_to(self, w: impl io::Write) -> io::Result<()> {
        let mut w = io::BufWriter::with_capacity(128 << 10, w);
        self.emit(|b| io::Write::write_all(&mut w, b))?;
        io::Write::flush(&mut w).map_err(|e| Error::at(Place::Output, e))
    }

    /// Writes the sorted output to descriptor `fd` at its offset, with
    /// `write(2)` ([`crate::transfer::OrderedOut`]); signals are the
    /// process's, as for `write(2)`.
    pub fn write_to_fd(self, fd: BorrowedFd<'_>) -> io::Result<()> {
        let mut out = crate::transfer::OrderedOut::new(fd);
        self.emit(|b| out.write(b))?;
        out.flush().map_err(|e| Error::at(Place::Output, e))
    }

    /// The sorted output as bytes.
    pub fn into_vec(self) -> io::Result<Vec<u8>> {
        let mut v = Vec::new();
        self.emit(|b| {
            v.try_reserve(b.len())
                .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
            v.extend_from_slice(b);
            Ok(())
        })?;
        Ok(v)
    }
}

/// Writes `units`, each with its terminator (the first of each equal run
/// only with `unique`): gathered into blocks on a second thread while
/// this one writes them.
fn write_units<'u, C: Compare>(
    units: impl Iterator<Item = &'u [u8]> + Send,
    term: Option<u8>,
    unique: Option<&C>,
    emit: impl FnMut(&[u8]) -> io::Result<()>,
) -> Result<(), Failure> {
    through_writer(
        |out| {
            let mut prev: Option<&[u8]> = None;
            for l in units {
                if let Some(c) = unique {
                    if let Some(p) = prev {
                        if c.same(p, l) {
                            continue;
                        }
                    }
                    prev = Some(l);
                }
                out.put(l)?;
                if let Some(t) = term {
                    out.put(&[t])?;
                }
            }
            Ok(())
        },
        emit,
    )
}
