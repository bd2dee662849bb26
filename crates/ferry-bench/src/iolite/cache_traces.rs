//! The file cache case's workload: a file set and lookup traces, all from
//! one seeded generator so every cache sees the same lookups.
//!
//! File sizes follow SURGE, the web workload model of Barford and Crovella
//! ("Generating representative Web workloads for network and server
//! performance evaluation", SIGMETRICS 1998): a lognormal body (μ 9.357,
//! σ 1.318, in ln bytes) and a Pareto tail (α 1.1, from k = 133 KB) holding
//! 7 % of the files; the tail is cut at `max` so the set stays on disk.
//! Popularity is Zipf over the files, independent of size (as SURGE
//! finds), the ranks shuffled.
//!
//! The traces:
//! - `zipf α`: independent lookups, Zipf(α) over the files;
//! - `scan + hot`: every other lookup is the next file of a cyclic scan
//!   over the 90 % cold files, the others Zipf(1.0) over a hot 10 %;
//! - `web`: Zipf-like popularity with Breslau et al.'s α 0.75 ("Web caching
//!   and Zipf-like distributions", INFOCOM 1999) and short-term temporal
//!   locality: a third of the lookups repeat one of the last 32 (a simple
//!   stand-in for SURGE's lognormal stack distances).

/// SplitMix64: small, seedable, good enough for workloads.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

/// `n` file sizes from SURGE's model (see the module doc), at most `max`
/// bytes, at least 1.
pub fn surge_sizes(rng: &mut Rng, n: usize, max: usize) -> Vec<usize> {
    (0..n)
        .map(|_| {
            let s = if rng.unit() < 0.07 {
                133_000.0 / rng.unit().powf(1.0 / 1.1)
            } else {
                (9.357 + 1.318 * rng.normal()).exp()
            };
            (s as usize).clamp(1, max)
        })
        .collect()
}

/// Zipf(α) over `n` ranks: samples by inverting the cumulative weights.
pub struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    pub fn new(n: usize, alpha: f64) -> Zipf {
        let mut acc = 0.0;
        let mut cdf: Vec<f64> = (1..=n)
            .map(|k| {
                acc += 1.0 / (k as f64).powf(alpha);
                acc
            })
            .collect();
        for c in &mut cdf {
            *c /= acc;
        }
        Zipf { cdf }
    }

    pub fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.unit();
        self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1)
    }
}

/// A trace: file indices, in lookup order.
pub struct Trace {
    pub name: String,
    pub lookups: Vec<u32>,
}

/// A popularity order: rank → file, shuffled so rank and size are
/// independent.
fn ranking(rng: &mut Rng, files: &[usize]) -> Vec<u32> {
    let mut r: Vec<u32> = files.iter().map(|&f| f as u32).collect();
    rng.shuffle(&mut r);
    r
}

pub fn zipf(seed: u64, n_files: usize, len: usize, alpha: f64) -> Trace {
    let mut rng = Rng::new(seed);
    let all: Vec<usize> = (0..n_files).collect();
    let rank = ranking(&mut rng, &all);
    let z = Zipf::new(n_files, alpha);
    Trace {
        name: format!("zipf α {alpha:.1}"),
        lookups: (0..len).map(|_| rank[z.sample(&mut rng)]).collect(),
    }
}

pub fn scan_hot(seed: u64, n_files: usize, len: usize) -> Trace {
    let mut rng = Rng::new(seed);
    let mut all: Vec<usize> = (0..n_files).collect();
    rng.shuffle(&mut all);
    let hot_n = (n_files / 10).max(1);
    let (hot, cold) = all.split_at(hot_n);
    let hot = ranking(&mut rng, hot);
    let z = Zipf::new(hot.len(), 1.0);
    let mut at = 0;
    let lookups = (0..len)
        .map(|i| {
            if i % 2 == 1 && !cold.is_empty() {
                at = (at + 1) % cold.len();
                cold[at] as u32
            } else {
                hot[z.sample(&mut rng)]
            }
        })
        .collect();
    Trace {
        name: "scan + hot 10 %".into(),
        lookups,
    }
}

pub fn web(seed: u64, n_files: usize, len: usize) -> Trace {
    let mut rng = Rng::new(seed);
    let all: Vec<usize> = (0..n_files).collect();
    let rank = ranking(&mut rng, &all);
    let z = Zipf::new(n_files, 0.75);
    let mut lookups: Vec<u32> = Vec::with_capacity(len);
    for _ in 0..len {
        let f = if lookups.len() >= 32 && rng.below(3) == 0 {
            lookups[lookups.len() - 1 - rng.below(32)]
        } else {
            rank[z.sample(&mut rng)]
        };
        lookups.push(f);
    }
    Trace {
        name: "web (SURGE sizes, Zipf 0.75, locality)".into(),
        lookups,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_favours_low_ranks_and_stays_in_range() {
        let z = Zipf::new(100, 1.0);
        let mut rng = Rng::new(1);
        let mut count = [0usize; 100];
        for _ in 0..20_000 {
            count[z.sample(&mut rng)] += 1;
        }
        assert!(count[0] > count[9] && count[9] > count[99], "{count:?}");
    }

    #[test]
    fn surge_sizes_have_a_body_and_a_tail() {
        let s = surge_sizes(&mut Rng::new(7), 5000, 8 << 20);
        let tail = s.iter().filter(|&&x| x >= 133_000).count();
        assert!((200..600).contains(&tail), "{tail}");
        assert!(s.iter().all(|&x| (1..=8 << 20).contains(&x)));
    }

    #[test]
    fn a_seed_gives_the_same_trace() {
        assert_eq!(web(3, 50, 500).lookups, web(3, 50, 500).lookups);
        let t = scan_hot(3, 50, 500);
        assert!(t.lookups.iter().all(|&f| f < 50));
    }
}
