//! `ferry::sort` against a model: std's stable sort of the same units.
//! Random lines (any terminator byte, a last line with or without it) and
//! records, split over inputs of every kind (lent memory, mapped files,
//! files read through buffers, memory streams), sorted with budgets from
//! one piece to dozens of runs and fan-ins that force merges of merges,
//! by byte keys (the engine's own comparison) and by closures (the
//! caller's); unique and stable semantics; merges of sorted inputs;
//! checks of sortedness.

use ferry::sort::{by, ByteKey, Checked, Compare, Framing, Input, Sorter};
use ferry::stream::Backend;
use ferry::{OpenOptions, Stream};
use proptest::prelude::*;
use std::cmp::Ordering;
use std::path::Path;

/// The orders the model tries: byte keys (whole, reversed, a range that
/// leaves ties) and closures the engine knows nothing about.
#[derive(Clone, Copy, Debug)]
enum Order {
    Whole,
    WholeReversed,
    Range(usize, usize),
    RangeReversed(usize, usize),
    /// A closure on the first byte only: many ties.
    FirstByte,
    /// A closure: by length, then bytes descending.
    LengthThenDescending,
}

fn order() -> impl Strategy<Value = Order> {
    prop_oneof![
        Just(Order::Whole),
        Just(Order::WholeReversed),
        (0usize..4, 0usize..4).prop_map(|(o, l)| Order::Range(o, l)),
        (0usize..4, 0usize..4).prop_map(|(o, l)| Order::RangeReversed(o, l)),
        Just(Order::FirstByte),
        Just(Order::LengthThenDescending),
    ]
}

/// Calls `f` with the comparison `o` stands for (a different type each).
fn with_order<R>(o: Order, f: impl FnOnce(&dyn Fn() -> Cmp) -> R) -> R {
    f(&move || match o {
        Order::Whole => Cmp::Key(ByteKey::WHOLE),
        Order::WholeReversed => Cmp::Key(ByteKey::WHOLE.reversed()),
        Order::Range(a, b) => Cmp::Key(ByteKey::new(a, b)),
        Order::RangeReversed(a, b) => Cmp::Key(ByteKey::new(a, b).reversed()),
        Order::FirstByte => Cmp::Closure(|a, b| a.first().cmp(&b.first())),
        Order::LengthThenDescending => {
            Cmp::Closure(|a, b| a.len().cmp(&b.len()).then_with(|| b.cmp(a)))
        }
    })
}

/// Either kind of order, as one type the model can hold.
#[derive(Clone, Copy)]
enum Cmp {
    Key(ByteKey),
    Closure(fn(&[u8], &[u8]) -> Ordering),
}

impl Compare for Cmp {
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Cmp::Key(k) => k.compare(a, b),
            Cmp::Closure(f) => f(a, b),
        }
    }

    fn byte_key(&self) -> Option<ByteKey> {
        match self {
            Cmp::Key(k) => Some(*k),
            Cmp::Closure(_) => None,
        }
    }
}

/// The model: a stable sort, then the first of each equal run.
fn model(units: &[Vec<u8>], cmp: &Cmp, unique: bool) -> Vec<Vec<u8>> {
    let mut v = units.to_vec();
    v.sort_by(|a, b| cmp.compare(a, b));
    if unique {
        v.dedup_by(|b, a| cmp.compare(a, b) == Ordering::Equal);
    }
    v
}

/// Units written out: lines each with the terminator, records as they are.
fn bytes_of(units: &[Vec<u8>], framing: Framing) -> Vec<u8> {
    let mut out = Vec::new();
    for u in units {
        out.extend_from_slice(u);
        if let Framing::Lines(t) = framing {
            out.push(t);
        }
    }
    out
}

/// A sort's settings, for [`sort_all`].
struct Settings<'d> {
    memory: u64,
    threads: usize,
    unique: bool,
    fan_in: Option<usize>,
    dir: &'d Path,
}

/// Sorts `inputs` by `cmp` with settings `s`: the output's bytes.
fn sort_all<'a>(
    framing: Framing,
    cmp: impl Compare,
    s: &Settings<'_>,
    inputs: impl IntoIterator<Item = Input<'a>>,
) -> std::io::Result<Vec<u8>> {
    let mut sorter = Sorter::new(framing, cmp)
        .memory(s.memory)
        .threads(s.threads)
        .unique(s.unique)
        .temp_dir(s.dir);
    if let Some(n) = s.fan_in {
        sorter = sorter.fan_in(n);
    }
    sorter.sort(inputs)?.into_vec()
}

/// How one input reaches the sort.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Lent,
    MappedFile,
    BufferedFile,
    MemoryStream,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Lent),
        Just(Kind::MappedFile),
        Just(Kind::BufferedFile),
        Just(Kind::MemoryStream),
    ]
}

/// `data` as an input of kind `k` (files written in `dir`).
fn input<'a>(data: &'a [u8], k: Kind, dir: &Path, n: usize) -> Input<'a> {
    let file = || {
        let p = dir.join(format!("in{n}"));
        std::fs::write(&p, data).unwrap();
        p
    };
    match k {
        Kind::Lent => Input::bytes(data),
        Kind::MappedFile => Input::path(file()),
        Kind::BufferedFile => {
            Input::path_with(file(), OpenOptions::read_only().backend(Backend::Buffered))
        }
        Kind::MemoryStream => Input::stream(Stream::from_bytes(data.to_vec())),
    }
}

/// Lines of bytes from a small alphabet that includes the terminator's
/// neighbours (never the terminator), so that many compare equal.
fn lines(eol: u8) -> impl Strategy<Value = Vec<Vec<u8>>> {
    let byte = prop_oneof![
        Just(eol.wrapping_add(1)),
        Just(eol.wrapping_sub(1)),
        Just(b'a'),
        Just(b'b'),
        Just(0xffu8),
    ]
    .prop_filter("not the terminator", move |&c| c != eol);
    prop::collection::vec(prop::collection::vec(byte, 0..12), 0..6000)
}

/// Budgets from a 64 KiB piece (the smallest: many runs for these
/// sizes) to one piece for everything.
fn budget() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(3 << 16),
        Just(200 << 10),
        Just(1 << 20),
        Just(64 << 20)
    ]
}

/// Lines long enough for the inputs to span several pieces.
fn widen(lines: Vec<Vec<u8>>, pad: usize) -> Vec<Vec<u8>> {
    lines
        .into_iter()
        .map(|mut l| {
            let c = l.first().copied().unwrap_or(b'a');
            l.resize(l.len() + pad, c);
            l
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Lines of any terminator, split over up to three inputs of any
    /// kind, sort as std's stable sort of all of them does, unique or
    /// not, on one thread or several, in memory or through runs.
    #[test]
    fn lines_sort_as_a_stable_sort_of_all_inputs(
        eol in prop_oneof![Just(b'\n'), Just(0u8), Just(b'b')],
        lines in lines(b'\n'),
        pad in prop_oneof![Just(0usize), Just(40usize)],
        cuts in prop::collection::vec(0usize..6000, 0..3),
        kinds in prop::collection::vec(kind(), 3),
        last_terminated: bool,
        o in order(),
        unique: bool,
        threads in 1usize..4,
        memory in budget(),
        fan_in in 2usize..5,
    ) {
        let lines: Vec<Vec<u8>> = widen(lines, pad)
            .into_iter()
            .map(|l| l.into_iter().map(|c| if c == eol { eol ^ 1 } else { c }).collect())
            .collect();
        let framing = Framing::Lines(eol);
        // Up to three inputs, each of whole lines; the last line of each
        // may lack its terminator.
        let mut bounds: Vec<usize> = cuts.iter().map(|&c| c.min(lines.len())).collect();
        bounds.sort_unstable();
        bounds.insert(0, 0);
        bounds.push(lines.len());
        let mut datas = Vec::new();
        for w in bounds.windows(2) {
            let part = &lines[w[0]..w[1]];
            let mut d = bytes_of(part, framing);
            // (An empty last line is its terminator alone: it keeps it.)
            if !last_terminated && part.last().is_some_and(|l| !l.is_empty()) {
                d.pop();
            }
            datas.push(d);
        }
        let dir = tempfile::tempdir().unwrap();
        let got = with_order(o, |make| {
            let inputs = datas
                .iter()
                .enumerate()
                .map(|(i, d)| input(d, kinds[i % kinds.len()], dir.path(), i));
            let settings = Settings { memory, threads, unique, fan_in: Some(fan_in), dir: dir.path() };
            sort_all(framing, make(), &settings, inputs)
        });
        let got = got.map_err(|e| TestCaseError::fail(e.to_string()))?;
        let want = with_order(o, |make| bytes_of(&model(&lines, &make(), unique), framing));
        prop_assert_eq!(got, want);
    }

    /// Records of any size, by a byte key (the engine's packed keys) or
    /// by a closure over the same key (the general path), sort as std's
    /// stable sort does, through runs when the budget is small.
    #[test]
    fn records_sort_as_a_stable_sort(
        size in 1usize..40,
        off in 0usize..40,
        len in 0usize..20,
        reverse: bool,
        closure: bool,
        seed: u64,
        n in 0usize..30_000,
        unique: bool,
        threads in 1usize..4,
        memory in budget(),
        kinds in prop::collection::vec(kind(), 2),
        cut in 0usize..30_000,
    ) {
        let mut x = seed | 1;
        let mut data = Vec::with_capacity(n * size);
        for _ in 0..n * size {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Few distinct bytes: equal keys, so stability shows.
            data.push((x % 3) as u8);
        }
        let mut key = ByteKey::new(off % size, len);
        if reverse {
            key = key.reversed();
        }
        let framing = Framing::Records(size);
        let cut = cut.min(n) * size;
        let dir = tempfile::tempdir().unwrap();
        let inputs = vec![
            input(&data[..cut], kinds[0], dir.path(), 0),
            input(&data[cut..], kinds[1], dir.path(), 1),
        ];
        let settings = Settings { memory, threads, unique, fan_in: None, dir: dir.path() };
        let got = if closure {
            // The same order, through a closure the engine cannot see into.
            sort_all(framing, by(move |a: &[u8], b: &[u8]| key.compare(a, b)), &settings, inputs)
        } else {
            sort_all(framing, key, &settings, inputs)
        };
        let got = got.map_err(|e| TestCaseError::fail(e.to_string()))?;
        let units: Vec<Vec<u8>> = data.chunks(size).map(<[u8]>::to_vec).collect();
        prop_assert_eq!(got, bytes_of(&model(&units, &Cmp::Key(key), unique), framing));
    }

    /// Inputs already sorted merge as a stable sort of their
    /// concatenation (ties to the earlier input), unique or not.
    #[test]
    fn sorted_inputs_merge_with_ties_to_the_earlier_input(
        parts in prop::collection::vec(lines(b'\n'), 1..4),
        o in order(),
        unique: bool,
        kinds in prop::collection::vec(kind(), 4),
    ) {
        let framing = Framing::Lines(b'\n');
        let dir = tempfile::tempdir().unwrap();
        let (got, want) = with_order(o, |make| {
            let sorted: Vec<Vec<Vec<u8>>> = parts.iter().map(|p| model(p, &make(), false)).collect();
            let datas: Vec<Vec<u8>> = sorted.iter().map(|p| bytes_of(p, framing)).collect();
            let inputs = datas
                .iter()
                .enumerate()
                .map(|(i, d)| input(d, kinds[i], dir.path(), i));
            let got = Sorter::new(framing, make())
                .unique(unique)
                .merge(inputs)
                .and_then(|s| s.into_vec());
            let all: Vec<Vec<u8>> = sorted.concat();
            (got, bytes_of(&model(&all, &make(), unique), framing))
        });
        prop_assert_eq!(got.map_err(|e| TestCaseError::fail(e.to_string()))?, want);
    }

    /// The check finds the first unit out of order (strictly, with
    /// unique) wherever the pieces are cut, or none.
    #[test]
    fn check_finds_the_first_unit_out_of_order(
        lines in lines(b'\n'),
        pad in prop_oneof![Just(0usize), Just(40usize)],
        sort_first: bool,
        swap in any::<prop::sample::Index>(),
        o in order(),
        unique: bool,
        memory in budget(),
        k in kind(),
    ) {
        let lines = widen(lines, pad);
        let dir = tempfile::tempdir().unwrap();
        let (got, want) = with_order(o, |make| {
            let cmp = make();
            let mut units = if sort_first { model(&lines, &cmp, false) } else { lines.clone() };
            if sort_first && units.len() > 1 {
                // One pair out of place (or not, when they tie).
                let i = swap.index(units.len() - 1);
                units.swap(i, i + 1);
            }
            let want = units
                .windows(2)
                .position(|w| {
                    let d = cmp.compare(&w[0], &w[1]);
                    d.is_gt() || (unique && d.is_eq())
                })
                .map_or(Checked::Sorted, |i| Checked::Disorder {
                    index: i as u64 + 1,
                    unit: units[i + 1].clone(),
                });
            let data = bytes_of(&units, Framing::Lines(b'\n'));
            let got = Sorter::lines(cmp)
                .memory(memory)
                .unique(unique)
                .check(input(&data, k, dir.path(), 0));
            (got, want)
        });
        prop_assert_eq!(got.map_err(|e| TestCaseError::fail(e.to_string()))?, want);
    }
}

/// Without `stable`, equal units may come in any order, but the output is
/// still sorted and holds the same units.
#[test]
fn an_unstable_sort_is_still_a_sort_of_the_same_units() {
    let data: Vec<u8> = (0..200_000u32)
        .flat_map(|i| format!("{}:{}\n", (i * 7919) % 97, i).into_bytes())
        .collect();
    let first_field = by(|a: &[u8], b: &[u8]| {
        let f = |l: &[u8]| l.split(|&c| c == b':').next().map(<[u8]>::to_vec);
        f(a).cmp(&f(b))
    });
    let out = Sorter::lines(&first_field)
        .stable(false)
        .threads(3)
        .sort([Input::bytes(&data)])
        .and_then(|s| s.into_vec())
        .unwrap();
    let got: Vec<&[u8]> = out
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert!(got
        .windows(2)
        .all(|w| first_field.compare(w[0], w[1]) != Ordering::Greater));
    let mut a = got.clone();
    let mut b: Vec<&[u8]> = data
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
}

/// No input, empty inputs and an empty file give an empty output, in
/// memory and with a budget that would make runs.
#[test]
fn empty_inputs_give_an_empty_output() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    for memory in [3 << 16, 64 << 20] {
        let none: [Input<'_>; 0] = [];
        let s = Sorter::lines(ByteKey::WHOLE).memory(memory);
        assert_eq!(s.sort(none).unwrap().into_vec().unwrap(), b"");
        let s = Sorter::lines(ByteKey::WHOLE).memory(memory);
        let out = s
            .sort([Input::bytes(b""), Input::path(&empty), Input::bytes(b"")])
            .unwrap();
        assert!(!out.is_external());
        assert_eq!(out.into_vec().unwrap(), b"");
        let s = Sorter::new(Framing::Records(7), ByteKey::WHOLE).memory(memory);
        assert_eq!(
            s.sort([Input::path(&empty)]).unwrap().into_vec().unwrap(),
            b""
        );
        let s = Sorter::lines(ByteKey::WHOLE).memory(memory);
        assert_eq!(s.check(Input::bytes(b"")).unwrap(), Checked::Sorted);
    }
}

/// A line longer than the whole budget is read to its end and sorted with
/// the others, in a mapped file and through a stream that is not.
#[test]
fn a_line_longer_than_the_budget_sorts_with_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let long = vec![b'm'; 3 << 20];
    let mut lines: Vec<Vec<u8>> = (0..60_000u32)
        .map(|i| format!("{:08}", (i * 7919) % 60_000).into_bytes())
        .collect();
    lines.insert(30_000, long.clone());
    lines.insert(100, b"zz".to_vec());
    let data = bytes_of(&lines, Framing::Lines(b'\n'));
    let mut want = lines.clone();
    want.sort();
    let want = bytes_of(&want, Framing::Lines(b'\n'));
    for k in [Kind::MappedFile, Kind::MemoryStream, Kind::Lent] {
        let sorted = Sorter::lines(ByteKey::WHOLE)
            .memory(3 << 16)
            .temp_dir(dir.path())
            .sort([input(&data, k, dir.path(), 0)])
            .unwrap();
        assert!(sorted.is_external(), "{k:?}");
        assert!(sorted.into_vec().unwrap() == want, "{k:?}");
    }
}

/// The output goes to any writer and to a descriptor, the same bytes.
#[test]
fn the_output_goes_to_a_writer_or_a_descriptor() {
    let data = b"b\nc\na\n";
    let mut w = Vec::new();
    Sorter::lines(ByteKey::WHOLE)
        .sort([Input::bytes(data)])
        .unwrap()
        .write_to(&mut w)
        .unwrap();
    assert_eq!(w, b"a\nb\nc\n");
    let f = tempfile::tempfile().unwrap();
    Sorter::lines(ByteKey::WHOLE)
        .sort([Input::bytes(data)])
        .unwrap()
        .write_to_fd(std::os::fd::AsFd::as_fd(&f))
        .unwrap();
    let mut back = vec![0u8; 6];
    std::os::unix::fs::FileExt::read_exact_at(&f, &mut back, 0).unwrap();
    assert_eq!(back, b"a\nb\nc\n");
}
