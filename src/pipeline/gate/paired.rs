//! The paired comparison of one metric's per-query values with the baseline's: the deltas, how
//! many queries got better, worse or stayed, a two-sided paired randomization (sign-flip) test of
//! the mean delta (Fisher's randomization test, as compared for IR by Smucker, Allan & Carterette,
//! CIKM 2007) and a paired bootstrap 95 % confidence interval of the mean delta. Deterministic:
//! every random draw comes from a SplitMix64 generator with a fixed seed, so the same deltas give
//! the same p-value and interval on every machine. docs/metrics.md states the rules.

use super::EPS;
use super::model::{PairedComparison, PairedMethod};
use crate::pipeline::score::stats::percentile;

/// With at most this many non-zero deltas, the randomization test enumerates all 2^n sign
/// assignments (exact p); with more, it draws [`PERMUTATIONS`] of them.
pub const EXACT_MAX: usize = 20;
/// Random sign assignments drawn by the Monte-Carlo test: p = (1 + extreme) / (1 + N).
pub const PERMUTATIONS: usize = 10_000;
/// Bootstrap resamples of the queries for the confidence interval.
pub const BOOTSTRAPS: usize = 10_000;
/// How far a sum of sign-flipped deltas may be from the observed one, per non-zero delta, and
/// still tie with it (the baseline's 6-decimal rounding, both ways).
pub const TIE_PER_DELTA: f64 = 1e-6;
/// The fixed seed of every draw (the test and the bootstrap each start from it).
pub const SEED: u64 = 0x0e7a_16a7_e039_5eed;

/// SplitMix64 (Steele, Lea & Flood, 2014): a 64-bit generator in four lines, good enough for
/// resampling and reproducible everywhere.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Two-sided p-value of the paired randomization test of `deltas` (current − baseline per
/// query): the share of sign assignments whose |sum| is at least the observed |sum|. Zero deltas
/// do not change under a sign flip and are left out (which does not change p). Exact with at
/// most [`EXACT_MAX`] non-zero deltas, else Monte-Carlo with [`PERMUTATIONS`] draws.
pub fn randomization_p(deltas: &[f64]) -> (f64, PairedMethod, usize) {
    let nz: Vec<f64> = deltas.iter().copied().filter(|d| d.abs() > EPS).collect();
    if nz.is_empty() {
        return (1.0, PairedMethod::Exact, 1);
    }
    let observed: f64 = nz.iter().sum::<f64>().abs();
    // sums equal to the observed one up to rounding count as extreme: the baseline keeps its
    // values to 6 decimals, so each delta is off its exact value by up to 5e-7 and two sign
    // assignments that tie exactly (−1/3 and +1/3 of Recall@5) can differ by up to 1e-6 per
    // delta; float summation adds its own 1e-9
    let tie = TIE_PER_DELTA * nz.len() as f64 + 1e-9 * (1.0 + observed);
    // whether the sum with the deltas whose bit is set in `bits` (word i / 64 for delta i)
    // sign-flipped is as extreme as the observed one
    let extreme = |bits: &[u64]| {
        let flip = |i: usize| bits[i / 64] >> (i % 64) & 1 == 1;
        let s: f64 = nz
            .iter()
            .enumerate()
            .map(|(i, &d)| if flip(i) { -d } else { d })
            .sum();
        s.abs() >= observed - tie
    };
    if nz.len() <= EXACT_MAX {
        let total: u64 = 1 << nz.len();
        let extreme = (0..total).filter(|&mask| extreme(&[mask])).count();
        let p = extreme as f64 / total as f64;
        (p, PairedMethod::Exact, total as usize)
    } else {
        let mut rng = SplitMix64(SEED);
        let words = nz.len().div_ceil(64);
        let mut draw = || (0..words).map(|_| rng.next()).collect::<Vec<u64>>();
        let extreme = (0..PERMUTATIONS).filter(|_| extreme(&draw())).count();
        let p = (1 + extreme) as f64 / (1 + PERMUTATIONS) as f64;
        (p, PairedMethod::MonteCarlo, PERMUTATIONS)
    }
}

/// Paired bootstrap 95 % interval of the mean delta: [`BOOTSTRAPS`] resamples of the queries
/// with replacement, the 2.5th and 97.5th percentiles (nearest rank) of their means.
pub fn bootstrap_ci95(deltas: &[f64]) -> Option<[f64; 2]> {
    if deltas.is_empty() {
        return None;
    }
    let n = deltas.len();
    let mut rng = SplitMix64(SEED);
    // a uniform index below n: the bias of the modulo is below 2^-40 for any query count
    // evalgate sees
    let mut below_n = || (rng.next() % n as u64) as usize;
    let means: Vec<f64> = (0..BOOTSTRAPS)
        .map(|_| (0..n).map(|_| deltas[below_n()]).sum::<f64>() / n as f64)
        .collect();
    Some([percentile(&means, 2.5)?, percentile(&means, 97.5)?])
}

/// The paired comparison of `pairs` (baseline, current per query present in both); `None`
/// with no pair. `higher` says which way is better. The Holm-adjusted p-value and whether it is
/// significant are set by the gate, which knows the family.
pub fn compare(pairs: &[(f64, f64)], higher: bool) -> Option<PairedComparison> {
    if pairs.is_empty() {
        return None;
    }
    // a delta within the baseline's rounding (6 decimals) is no change: 0 in the mean, the
    // interval and the test alike
    let deltas: Vec<f64> = pairs
        .iter()
        .map(|(b, c)| c - b)
        .map(|d| if d.abs() <= EPS { 0.0 } else { d })
        .collect();
    let changed = deltas.iter().filter(|d| d.abs() > EPS);
    let better = changed.clone().filter(|&&d| (d > 0.0) == higher).count();
    let worse = changed.count() - better;
    let (p_value, method, permutations) = randomization_p(&deltas);
    Some(PairedComparison {
        queries: deltas.len(),
        better,
        worse,
        unchanged: deltas.len() - better - worse,
        mean_delta: deltas.iter().sum::<f64>() / deltas.len() as f64,
        delta_ci95: bootstrap_ci95(&deltas),
        p_value,
        method,
        permutations,
        p_holm: None,
        significant: None,
    })
}

/// Holm–Bonferroni adjusted p-values of a family, in the order given: the i-th smallest of m
/// (i from 0) is multiplied by (m − i), made monotone and capped at 1.
pub fn holm(ps: &[f64]) -> Vec<f64> {
    let m = ps.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| ps[a].total_cmp(&ps[b]).then(a.cmp(&b)));
    let mut out = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * ps[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// Two-sided p-value of McNemar's exact test of paired yes/no verdicts with `b` entries that
/// went one way and `c` the other: min(1, 2 · P(X ≤ min(b, c))) for X ~ Binomial(b + c, ½);
/// 1 when nothing flipped. Summed in logarithms, so thousands of flips do not underflow.
pub fn mcnemar_p(b: usize, c: usize) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    // ln P(X = i), from ln P(X = 0) = −n ln 2 by the ratio (n − i) / (i + 1)
    let mut ln_pmf = -(n as f64) * std::f64::consts::LN_2;
    let mut tail = 0.0;
    for i in 0..=k {
        tail += ln_pmf.exp();
        ln_pmf += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    (2.0 * tail).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_is_the_two_sided_binomial_tail_of_the_discordant_pairs() {
        assert_eq!(mcnemar_p(0, 0), 1.0);
        // 5 flips all one way: 2 · (1/2)^5
        assert!((mcnemar_p(5, 0) - 2.0 / 32.0).abs() < 1e-15);
        assert!((mcnemar_p(0, 5) - 2.0 / 32.0).abs() < 1e-15);
        // b = 1, c = 9: 2 · (1 + 10) / 1024
        assert!((mcnemar_p(1, 9) - 22.0 / 1024.0).abs() < 1e-14);
        // balanced flips: p = 1
        assert_eq!(mcnemar_p(3, 3), 1.0);
        assert_eq!(mcnemar_p(1, 0), 1.0);
        // large counts do not underflow: 2000 flips one way is far below any alpha, not NaN
        let p = mcnemar_p(2000, 0);
        assert!((0.0..1e-300).contains(&p), "{p}");
        let p = mcnemar_p(1000, 1100);
        assert!(p > 0.02 && p < 0.04, "{p}");
    }

    #[test]
    fn ten_equal_positive_deltas_give_p_2_over_1024_exactly() {
        let (p, method, n) = randomization_p(&[0.1; 10]);
        assert_eq!(method, PairedMethod::Exact);
        assert_eq!(n, 1024);
        assert_eq!(p, 2.0 / 1024.0);
    }

    #[test]
    fn zero_deltas_are_left_out_without_changing_p() {
        let mut d = vec![0.1; 10];
        d.extend([0.0; 30]);
        assert_eq!(randomization_p(&d).0, 2.0 / 1024.0);
    }

    #[test]
    fn monte_carlo_with_many_equal_deltas_gives_the_smallest_p() {
        // 2^-29 is far below 1/10,001: no random assignment is as extreme (beyond the two
        // all-equal ones, which 10,000 draws almost never hit)
        let (p, method, n) = randomization_p(&[0.05; 30]);
        assert_eq!(method, PairedMethod::MonteCarlo);
        assert_eq!(n, PERMUTATIONS);
        assert_eq!(p, 1.0 / 10_001.0);
    }

    #[test]
    fn monte_carlo_agrees_with_the_exact_test_within_its_error() {
        // 21 deltas: just past exact enumeration; the exact p of the same deltas without the
        // smallest one is close, and Monte-Carlo's standard error is ~0.005 at p ≈ 0.3
        let d: Vec<f64> = (0..21)
            .map(|i| {
                if i % 3 == 0 {
                    -0.2
                } else {
                    0.1 + i as f64 * 0.001
                }
            })
            .collect();
        let (mc, _, _) = randomization_p(&d);
        // exact by brute force in the test, over 2^21 assignments
        let obs: f64 = d.iter().sum::<f64>().abs();
        let total = 1u64 << d.len();
        let extreme = (0..total)
            .filter(|mask| {
                let s: f64 = d
                    .iter()
                    .enumerate()
                    .map(|(i, x)| if mask >> i & 1 == 1 { -x } else { *x })
                    .sum();
                s.abs() >= obs - 1e-9
            })
            .count();
        let exact = extreme as f64 / total as f64;
        assert!((mc - exact).abs() < 0.02, "mc {mc} exact {exact}");
    }

    #[test]
    fn exact_ties_stay_ties_against_a_baseline_rounded_to_6_decimals() {
        // Recall@5 values in thirds: the baseline keeps 0.333333 and 0.666667, so −1/3 + 2/3
        // and +1/3 no longer sum alike; found by the cross-check with ranx (tests/crosscheck.rs)
        let thirds = [
            (0, 1),
            (1, 0),
            (2, 0),
            (0, 2),
            (3, 1),
            (1, 2),
            (0, 1),
            (2, 1),
            (0, 3),
            (1, 0),
            (3, 0),
            (2, 3),
        ];
        let exact: Vec<f64> = thirds
            .iter()
            .map(|&(b, c)| c as f64 / 3.0 - b as f64 / 3.0)
            .collect();
        let rounded: Vec<f64> = thirds
            .iter()
            .map(|&(b, c)| {
                let b = ((b as f64 / 3.0) * 1e6).round() / 1e6;
                c as f64 / 3.0 - b
            })
            .collect();
        let (pe, _, _) = randomization_p(&exact);
        let (pr, _, _) = randomization_p(&rounded);
        assert_eq!(pe, pr);
    }

    #[test]
    fn the_same_deltas_give_the_same_p_and_interval() {
        let d: Vec<f64> = (0..200)
            .map(|i| ((i * 37 % 11) as f64 - 5.0) / 50.0)
            .collect();
        let a = compare(&d.iter().map(|x| (0.5, 0.5 + x)).collect::<Vec<_>>(), true).unwrap();
        let b = compare(&d.iter().map(|x| (0.5, 0.5 + x)).collect::<Vec<_>>(), true).unwrap();
        assert_eq!(a.p_value, b.p_value);
        assert_eq!(a.delta_ci95, b.delta_ci95);
        assert_eq!(a.method, PairedMethod::MonteCarlo);
    }

    #[test]
    fn an_unchanged_system_has_p_1_and_an_interval_of_0() {
        let pairs: Vec<(f64, f64)> = (0..50)
            .map(|i| (i as f64 / 50.0, i as f64 / 50.0))
            .collect();
        let c = compare(&pairs, true).unwrap();
        assert_eq!(c.p_value, 1.0);
        assert_eq!(c.delta_ci95, Some([0.0, 0.0]));
        assert_eq!((c.better, c.worse, c.unchanged), (0, 0, 50));
        assert_eq!(c.mean_delta, 0.0);
    }

    #[test]
    fn a_delta_within_the_baselines_rounding_is_no_change() {
        let pairs: Vec<(f64, f64)> = (0..30)
            .map(|i| (0.434482, 0.43448213 + i as f64 * 1e-9))
            .collect();
        let c = compare(&pairs, true).unwrap();
        assert_eq!((c.p_value, c.mean_delta, c.unchanged), (1.0, 0.0, 30));
        assert_eq!(c.delta_ci95, Some([0.0, 0.0]));
    }

    #[test]
    fn counts_follow_the_direction() {
        let pairs = [(0.5, 0.4), (0.5, 0.6), (0.5, 0.7), (0.5, 0.5)];
        let c = compare(&pairs, true).unwrap();
        assert_eq!((c.better, c.worse, c.unchanged), (2, 1, 1));
        let c = compare(&pairs, false).unwrap();
        assert_eq!((c.better, c.worse, c.unchanged), (1, 2, 1));
    }

    #[test]
    fn a_uniform_drop_has_an_interval_below_0() {
        let pairs: Vec<(f64, f64)> = (0..40)
            .map(|i| (0.8, if i % 4 == 0 { 0.8 } else { 0.5 }))
            .collect();
        let c = compare(&pairs, true).unwrap();
        let [lo, hi] = c.delta_ci95.unwrap();
        assert!(lo < hi && hi < 0.0, "{lo} {hi}");
        assert!(c.p_value < 0.001);
        assert_eq!(c.worse, 30);
    }

    #[test]
    fn holm_multiplies_by_the_rank_and_stays_monotone() {
        let a = holm(&[0.01, 0.04, 0.03]);
        // sorted 0.01, 0.03, 0.04 → 0.03, 0.06, 0.04 → monotone 0.03, 0.06, 0.06
        assert!((a[0] - 0.03).abs() < 1e-12);
        assert!((a[2] - 0.06).abs() < 1e-12);
        assert!((a[1] - 0.06).abs() < 1e-12);
        assert_eq!(holm(&[0.9, 0.8]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }
}
