//! An external sort of lines or fixed-size records, by the caller's order,
//! taking its pieces by reference.
//!
//! ```text
//!  inputs ──► pieces (≤ memory / 3)  ──sort on N threads──►  one piece:  sorted in memory
//!             mapped pages / lent                            ──► output blocks (2nd thread)
//!             memory, by reference;                         more pieces: a run per piece
//!             pipes read into memory                         ──aio write──► temp file
//!                                                            (the next piece is read meanwhile)
//!                                             runs ──k-way merge (heap)──► output
//! ```
//!
//! **Units.** The sort orders *units*: lines ending in a terminator byte
//! (the last line of an input may lack it; it is written with one), or
//! binary records of a fixed size ([`Framing`]). A unit is a slice of the
//! buffer it was read into — a mapped input's pages, memory the caller
//! lent ([`Input::bytes`]), or a piece read from a pipe — never a copy of
//! its own.
//!
//! **Order.** The caller's, through [`Compare`]: a closure ([`by`]), a
//! type of its own (keys, numbers, a locale's collation…), or a
//! [`ByteKey`] (the unsigned bytes of one range of each unit, ascending
//! or descending: `memcmp`, or an unsigned big-endian integer). An order
//! that is a byte key says so, and the engine then compares packed key
//! prefixes itself: eight bytes beside each line, twelve beside each
//! record's index, one integer comparison for most pairs. The sort is
//! stable unless [`Sorter::stable`] says otherwise; [`Sorter::unique`]
//! keeps the first unit of each run of equal ones ([`Compare::same`]).
//!
//! **Memory and runs.** Inputs are read a piece at a time, a piece being
//! at most a third of the memory budget ([`Sorter::memory`]): the budget
//! holds one piece being sorted, the sorted copy of the last on its way
//! to disk, and the next being read. Everything in one piece is sorted in
//! memory and written from there. Otherwise each piece is sorted, written
//! as a run to a temporary file ([`Sorter::temp_dir`]) by one
//! asynchronous request ([`crate::aio`]) while the next piece is read,
//! and the runs are merged k-way, at most [`Sorter::fan_in`] at a time
//! (a group beyond that is merged into a run of its own first). Memory
//! is allocated fallibly: a budget the machine cannot give is an
//! `OutOfMemory` error, not an abort.
//!
//! **Output.** A sort returns [`Sorted`] once every input is read, so the
//! output may be one of the inputs (opened, and truncated, only then).
//! Its bytes go to any writer ([`Sorted::write_to`]), a descriptor
//! ([`Sorted::write_to_fd`]) or a closure ([`Sorted::emit`]); from
//! memory they are gathered into 1 MiB page-aligned blocks on a second
//! thread while the calling thread writes the last.
//!
//! **Errors** are [`io::Error`]s naming what failed: their inner
//! [`Error`] gives the [`Place`] (which input, temporary file or
//! directory, or the output) and the cause. Nothing panics on bad input.
//!
//! ```
//! use ferry::sort::{ByteKey, Input, Sorter};
//! let data = b"pear\napple\nfig\napple\n";
//! let out = Sorter::lines(ByteKey::WHOLE)
//!     .unique(true)
//!     .sort([Input::bytes(data)])?
//!     .into_vec()?;
//! assert_eq!(out, b"apple\nfig\npear\n");
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Records of 16 bytes by an unsigned big-endian key in bytes 4..8,
//! through runs on disk (a small budget):
//!
//! ```
//! use ferry::sort::{ByteKey, Framing, Input, Sorter};
//! let recs: Vec<u8> = (0..100_000u32)
//!     .flat_map(|i| {
//!         let mut r = [0u8; 16];
//!         r[4..8].copy_from_slice(&(i.wrapping_mul(2_654_435_761)).to_be_bytes());
//!         r
//!     })
//!     .collect();
//! let out = Sorter::new(Framing::Records(16), ByteKey::new(4, 4))
//!     .memory(512 << 10)
//!     .sort([Input::bytes(&recs)])?
//!     .into_vec()?;
//! let keys: Vec<u32> = out
//!     .chunks(16)
//!     .map(|r| u32::from_be_bytes(r[4..8].try_into().unwrap()))
//!     .collect();
//! assert!(keys.windows(2).all(|w| w[0] <= w[1]));
//! # Ok::<(), std::io::Error>(())
//! ```

mod blocks;
mod compare;
mod engine;
mod error;
mod input;
mod memory;
mod merge;
mod records;
mod runs;

pub use compare::{by, By, ByteKey, Compare};
pub use engine::Sorted;
pub use error::{Error, Place};
pub use input::Input;

use std::io;
use std::path::PathBuf;

/// How an input divides into the units sorted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Framing {
    /// Lines ending in this byte (`b'\n'`, or `0` for `sort -z`).
    Lines(u8),
    /// Binary records of this many bytes (not 0); an input must hold a
    /// whole number of them.
    Records(usize),
}

impl Framing {
    /// The units of `b` (a last line without its terminator is a line).
    pub(crate) fn split(self, b: &[u8]) -> Vec<&[u8]> {
        match self {
            Framing::Lines(eol) => {
                let mut v = Vec::new();
                let mut start = 0;
                for i in memchr::memchr_iter(eol, b) {
                    v.push(&b[start..i]);
                    start = i + 1;
                }
                if start < b.len() {
                    v.push(&b[start..]);
                }
                v
            }
            Framing::Records(n) => b.chunks(n).collect(),
        }
    }

    /// The terminator written after each unit (none for records).
    pub(crate) fn terminator(self) -> Option<u8> {
        match self {
            Framing::Lines(eol) => Some(eol),
            Framing::Records(_) => None,
        }
    }
}

/// The machine's physical memory in bytes (0 if unknown): what a budget
/// given as a share of memory (`sort -S 50%`) is a share of.
pub fn physical_memory() -> u64 {
    crate::sys::physical_memory()
}

/// A sort's settings; [`sort`](Sorter::sort), [`merge`](Sorter::merge)
/// and [`check`](Sorter::check) run it.
///
/// ```
/// use ferry::sort::{by, Input, Sorter};
/// let dir = tempfile::tempdir()?;
/// let sorted = Sorter::lines(by(|a: &[u8], b: &[u8]| a.len().cmp(&b.len())))
///     .memory(64 << 20)
///     .threads(2)
///     .temp_dir(dir.path())
///     .sort([Input::bytes(b"three\none\ntwo\n")])?;
/// let mut out = Vec::new();
/// sorted.write_to(&mut out)?;
/// assert_eq!(out, b"one\ntwo\nthree\n"); // stable: "one" before "two"
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Sorter<'p, C> {
    cmp: C,
    framing: Framing,
    memory: u64,
    temp_dir: Option<PathBuf>,
    threads: usize,
    unique: bool,
    stable: bool,
    fan_in: Option<usize>,
    progress: Option<Box<dyn FnMut(u64) + 'p>>,
}

impl<'p, C: Compare> Sorter<'p, C> {
    /// A sort of `framing`'s units by `cmp`: stable, not unique, with a
    /// quarter of the machine's memory (at least 64 MiB), temporary files
    /// in `$TMPDIR` (else `/tmp`), on as many threads as there are CPUs
    /// (at most 8).
    pub fn new(framing: Framing, cmp: C) -> Sorter<'p, C> {
        Sorter {
            cmp,
            framing,
            memory: (physical_memory() / 4).max(64 << 20),
            temp_dir: None,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
            unique: false,
            stable: true,
            fan_in: None,
            progress: None,
        }
    }

    /// A sort of lines ending in `\n`.
    pub fn lines(cmp: C) -> Sorter<'p, C> {
        Sorter::new(Framing::Lines(b'\n'), cmp)
    }

    /// The memory budget in bytes (`sort -S`): a piece is at most a
    /// third of it (at least 64 KiB, and longer where one line is).
    pub fn memory(mut self, bytes: u64) -> Self {
        self.memory = bytes;
        self
    }

    /// Where runs go (`sort -T`).
    pub fn temp_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.temp_dir = Some(dir.into());
        self
    }

    /// How many threads sort a piece (`sort --parallel`; at least 1).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }

    /// Only the first of each run of equal units (`sort -u`): the first
    /// in input order where the sort is stable.
    pub fn unique(mut self, on: bool) -> Self {
        self.unique = on;
        self
    }

    /// Whether equal units keep their input order (the default). A sort
    /// that need not may be faster in memory; runs and merges are stable
    /// either way.
    pub fn stable(mut self, on: bool) -> Self {
        self.stable = on;
        self
    }

    /// At most this many runs merged at once (at least 2). By default a
    /// quarter of the descriptors the process may open, at most 64.
    pub fn fan_in(mut self, runs: usize) -> Self {
        self.fan_in = Some(runs.max(2));
        self
    }

    /// Calls `f` with the size of each piece once it is sorted and on its
    /// way to disk (not for a sort in memory).
    pub fn on_progress(mut self, f: impl FnMut(u64) + 'p) -> Self {
        self.progress = Some(Box::new(f));
        self
    }

    /// Reads and sorts `inputs` as one: in memory when they fit a piece,
    /// else into runs on disk. Every input has been read (and closed)
    /// when this returns.
    pub fn sort<'a>(
        self,
        inputs: impl IntoIterator<Item = Input<'a>>,
    ) -> io::Result<Sorted<'a, C>> {
        engine::sort(self, inputs.into_iter().collect())
    }

    /// Merges `inputs`, each taken as sorted already (`sort -m`): ties go
    /// to the earlier input. Every input is read whole first (the output
    /// may be one of them).
    pub fn merge<'a>(
        self,
        inputs: impl IntoIterator<Item = Input<'a>>,
    ) -> io::Result<Sorted<'a, C>> {
        engine::merge(self, inputs.into_iter().collect())
    }

    /// Whether `input` is sorted (`sort -c`): strictly, each unit after
    /// the one before, with [`unique`](Sorter::unique). Read a piece at a
    /// time; the first unit out of order ends it.
    ///
    /// ```
    /// use ferry::sort::{ByteKey, Checked, Input, Sorter};
    /// let c = Sorter::lines(ByteKey::WHOLE).check(Input::bytes(b"a\nc\nb\n"))?;
    /// assert_eq!(c, Checked::Disorder { index: 2, unit: b"b".to_vec() });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn check(self, input: Input<'_>) -> io::Result<Checked> {
        engine::check(self, input)
    }
}

/// What [`Sorter::check`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checked {
    /// Every unit is in order.
    Sorted,
    /// Unit number `index` (from 0) comes before the one preceding it
    /// (or equals it, with `unique`).
    Disorder {
        /// Its position in the input.
        index: u64,
        /// Its bytes (without a terminator).
        unit: Vec<u8>,
    },
}
