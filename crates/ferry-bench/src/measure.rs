//! Interleaved measurement: every variant runs once per round, rounds
//! repeat, the order rotates each round so no variant always goes first.

use super::report::{Row, Target, Unit};
use std::time::{Duration, Instant};

/// One thing to time. The closure does one measured run and returns the
/// time that counts (so it can leave out set-up such as warming a file) and
/// the amount of work done (operations or bytes).
pub struct Variant<'a> {
    pub name: String,
    pub run: Box<dyn FnMut() -> Result<(Duration, f64), String> + 'a>,
}

impl<'a> Variant<'a> {
    pub fn new(
        name: impl Into<String>,
        run: impl FnMut() -> Result<(Duration, f64), String> + 'a,
    ) -> Self {
        Variant {
            name: name.into(),
            run: Box::new(run),
        }
    }
}

/// Samples of one variant: seconds per unit of work, per run.
#[derive(Clone, Debug)]
pub struct Samples {
    pub name: String,
    pub per_unit: Vec<f64>,
}

impl Samples {
    pub fn median(&self) -> f64 {
        median(&self.per_unit)
    }
}

pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// Runs `rounds` rounds of all variants, rotating the order each round.
pub fn interleave(rounds: usize, variants: &mut [Variant<'_>]) -> Result<Vec<Samples>, String> {
    let n = variants.len();
    let mut out: Vec<Samples> = variants
        .iter()
        .map(|v| Samples {
            name: v.name.clone(),
            per_unit: Vec::with_capacity(rounds),
        })
        .collect();
    for r in 0..rounds {
        for k in 0..n {
            let i = (r + k) % n;
            let (d, work) =
                (variants[i].run)().map_err(|e| format!("{}: {e}", variants[i].name))?;
            out[i].per_unit.push(d.as_secs_f64() / work.max(1e-12));
        }
    }
    Ok(out)
}

/// Scales an iteration count (at least 1).
#[derive(Clone, Copy)]
pub struct Scale(pub f64);

impl Scale {
    pub fn of(self, n: usize) -> usize {
        ((n as f64 * self.0) as usize).max(1)
    }
}

pub fn timed(ops: usize, mut f: impl FnMut()) -> Result<(Duration, f64), String> {
    let t = Instant::now();
    f();
    Ok((t.elapsed(), ops as f64))
}

pub fn find<'a>(s: &'a [Samples], name: &str) -> &'a Samples {
    s.iter().find(|x| x.name == name).expect("variant exists")
}

pub fn compare(
    s: &[Samples],
    what: &str,
    ferry: &str,
    base: &str,
    unit: Unit,
    target: Target,
    runs: usize,
) -> Row {
    Row {
        what: what.into(),
        ferry_name: ferry.into(),
        ferry: find(s, ferry).median(),
        baseline_name: base.into(),
        baseline: Some(find(s, base).median()),
        unit,
        target,
        runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn interleave_rotates_and_collects_every_round() {
        let order = std::cell::RefCell::new(Vec::new());
        let mut vs = vec![
            Variant::new("a", || {
                order.borrow_mut().push('a');
                Ok((Duration::from_millis(2), 2.0))
            }),
            Variant::new("b", || {
                order.borrow_mut().push('b');
                Ok((Duration::from_millis(3), 1.0))
            }),
        ];
        let s = interleave(3, &mut vs).unwrap();
        drop(vs);
        assert_eq!(order.into_inner(), vec!['a', 'b', 'b', 'a', 'a', 'b']);
        assert_eq!(s[0].per_unit.len(), 3);
        assert!((s[0].median() - 0.001).abs() < 1e-12);
        assert!((s[1].median() - 0.003).abs() < 1e-12);
    }

    #[test]
    fn a_failing_variant_names_itself() {
        let mut vs = vec![Variant::new("broken", || Err("disk on fire".to_string()))];
        let e = interleave(1, &mut vs).unwrap_err();
        assert_eq!(e, "broken: disk on fire");
    }
}
