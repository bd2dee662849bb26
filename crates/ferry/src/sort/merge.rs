//! Merging: runs on disk k-way by a heap, and inputs that are already
//! sorted.
//!
//! The merge reads each run through a ferry stream, its lines taken as
//! `Buf`s by reference into the stream's buffers (copied one by one only
//! for a terminator other than `\n`); records come a block at a time
//! ([`super::records`]). Ties go to the earlier run, and the runs are in
//! input order, so the merge keeps a stable sort stable. More runs than
//! one merge may hold open ([`super::runs::fan_in`]) are merged a group
//! at a time into a run in the group's place.

use super::error::{Fail, Failure};
use super::records::{self, Layout};
use super::runs::{self, Run};
use super::{Compare, Framing};
use crate::{Buf, Stream};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::io;

/// One run's next line, in the merge's heap (the smallest first; on a
/// tie the earlier run).
struct Head<'c, C> {
    line: Buf,
    run: usize,
    cmp: &'c C,
}

impl<C: Compare> Ord for Head<'_, C> {
    fn cmp(&self, o: &Self) -> Ordering {
        self.cmp
            .compare(&o.line, &self.line)
            .then_with(|| o.run.cmp(&self.run))
    }
}

impl<C: Compare> PartialOrd for Head<'_, C> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl<C: Compare> PartialEq for Head<'_, C> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl<C: Compare> Eq for Head<'_, C> {}

/// Merges the runs (sorted line streams) into `emit`, each line followed
/// by its terminator in a call of its own, the first of each equal run
/// only with `unique`.
pub(crate) fn merge_runs<C: Compare>(
    runs: Vec<Run>,
    framing: Framing,
    cmp: &C,
    unique: bool,
    mut emit: impl FnMut(&[u8]) -> io::Result<()>,
) -> Result<(), Failure> {
    let term = framing.terminator();
    let mut streams: Vec<Stream> = Vec::with_capacity(runs.len());
    let mut names: Vec<String> = Vec::with_capacity(runs.len());
    for r in runs {
        let (s, name) = r.into_stream()?;
        streams.push(s);
        names.push(name);
    }
    let mut sources: Vec<Source<'_>> = streams
        .iter_mut()
        .map(|s| match framing {
            Framing::Lines(b'\n') => Source::Lines(s.buf_lines()),
            Framing::Lines(eol) => Source::Other(s, eol),
            Framing::Records(n) => Source::Records(s, n),
        })
        .collect();
    let mut heap = BinaryHeap::with_capacity(sources.len());
    for k in 0..sources.len() {
        if let Some(line) = sources[k].next().map_err(|e| (Some(names[k].clone()), e))? {
            heap.push(Head { line, run: k, cmp });
        }
    }
    let mut last: Option<Buf> = None;
    while let Some(h) = heap.pop() {
        let keep = !unique || last.as_ref().is_none_or(|p| !cmp.same(p, &h.line));
        if keep {
            emit(&h.line).map_err(|e| (None, e))?;
            if let Some(t) = term {
                emit(&[t]).map_err(|e| (None, e))?;
            }
            if unique {
                last = Some(h.line.clone());
            }
        }
        let k = h.run;
        if let Some(line) = sources[k].next().map_err(|e| (Some(names[k].clone()), e))? {
            heap.push(Head { line, run: k, cmp });
        }
    }
    Ok(())
}

/// A run's lines: `Buf`s by reference into the stream's buffers (lines
/// ending in `\n`), or read one by one (other terminators).
enum Source<'s> {
    Lines(crate::stream::Lines<'s>),
    Other(&'s mut Stream, u8),
    /// Records: `salloc` regions of the stream, by reference.
    Records(&'s mut Stream, usize),
}

impl Source<'_> {
    fn next(&mut self) -> io::Result<Option<Buf>> {
        match self {
            Source::Lines(it) => match it.next() {
                Some(Ok(b)) => {
                    let n = b.len() - usize::from(b.ends_with(b"\n"));
                    Ok(Some(b.slice(..n)))
                }
                Some(Err(e)) => Err(e),
                None => Ok(None),
            },
            Source::Other(s, eol) => read_line(s, *eol),
            Source::Records(s, n) => {
                let r = s.salloc(*n)?;
                if r.is_empty() {
                    return Ok(None);
                }
                Ok(Some(r.into_buf()))
            }
        }
    }
}

/// The next line of a run (without its terminator), copied.
fn read_line(s: &mut Stream, eol: u8) -> io::Result<Option<Buf>> {
    let mut v = Vec::new();
    let n = std::io::BufRead::read_until(s, eol, &mut v)?;
    if n == 0 {
        return Ok(None);
    }
    if v.last() == Some(&eol) {
        v.pop();
    }
    Ok(Some(Buf::from(v)))
}

/// Merges the first `n` runs into one run in their place (the earliest
/// input, so ties still go to the earlier line): the merge's fan-in stays
/// within the descriptors a process may hold, however many runs there are.
pub(crate) fn merge_first<C: Compare>(
    runs: &mut Vec<Run>,
    n: usize,
    dir: &std::path::Path,
    framing: Framing,
    cmp: &C,
    unique: bool,
    records: Option<Layout>,
) -> Result<(), Fail> {
    let group: Vec<Run> = runs.drain(..n).collect();
    let (file, name) = runs::temp_file(dir)?;
    let mut out = crate::transfer::OrderedOut::new(std::os::fd::AsFd::as_fd(&file));
    let merged = match records {
        Some(l) => records::merge(group, l, unique, |b| out.write(b)),
        None => merge_runs(group, framing, cmp, unique, |b| out.write(b)),
    };
    let fail = |(n, e): Failure| Fail::Temp(n.unwrap_or(name.clone()), e);
    merged.map_err(fail)?;
    out.flush().map_err(|e| fail((None, e)))?;
    runs.insert(0, Run::new(file, name));
    Ok(())
}

/// Merges inputs taken as sorted (each split into its units), the
/// earliest input first on ties.
pub(crate) fn merge_sorted<'a, C: Compare>(inputs: Vec<Vec<&'a [u8]>>, cmp: &C) -> Vec<&'a [u8]> {
    let mut at = vec![0usize; inputs.len()];
    let mut out = Vec::with_capacity(inputs.iter().map(Vec::len).sum());
    loop {
        let mut best: Option<usize> = None;
        for (k, v) in inputs.iter().enumerate() {
            if at[k] < v.len() {
                best = match best {
                    Some(b) if cmp.compare(inputs[b][at[b]], v[at[k]]) != Ordering::Greater => {
                        Some(b)
                    }
                    _ => Some(k),
                };
            }
        }
        let Some(b) = best else {
            return out;
        };
        out.push(inputs[b][at[b]]);
        at[b] += 1;
    }
}
