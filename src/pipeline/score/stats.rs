//! Run-to-run statistics: mean, sample standard deviation, 95 % Student-t confidence interval.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// A metric over N runs. Undefined per-run values (0/0) are kept as `null` and left out of the
/// statistics; when every run is undefined the summary is undefined too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Per-run values, `null` where undefined.
    pub per_run: Vec<Option<f64>>,
    /// Number of defined values.
    pub n: usize,
    /// Mean of the defined values; `null` when none is.
    pub mean: Option<f64>,
    /// Sample standard deviation (n − 1); `null` when n < 2.
    pub sd: Option<f64>,
    /// 95 % Student-t confidence interval of the mean, `[low, high]`; `null` when n < 2.
    pub ci95: Option<[f64; 2]>,
    /// Smallest defined value.
    pub min: Option<f64>,
    /// Largest defined value.
    pub max: Option<f64>,
}

impl Summary {
    pub fn of(per_run: Vec<Option<f64>>) -> Summary {
        let vals: Vec<f64> = per_run.iter().flatten().copied().collect();
        let n = vals.len();
        let mean = (n > 0).then(|| vals.iter().sum::<f64>() / n as f64);
        let (sd, ci95) = match mean {
            Some(mean) if n >= 2 => {
                let var = vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
                let sd = var.sqrt();
                let half = t_critical(n - 1) * sd / (n as f64).sqrt();
                (Some(sd), Some([mean - half, mean + half]))
            }
            _ => (None, None),
        };
        Summary {
            per_run,
            n,
            mean,
            sd,
            ci95,
            min: vals.iter().copied().reduce(f64::min),
            max: vals.iter().copied().reduce(f64::max),
        }
    }

    /// Half-width of the confidence interval.
    pub fn half_width(&self) -> Option<f64> {
        self.ci95.map(|[lo, hi]| (hi - lo) / 2.0)
    }
}

/// Two-sided 95 % critical value of Student's t with `df` degrees of freedom.
pub fn t_critical(df: usize) -> f64 {
    StudentsT::new(0.0, 1.0, df as f64)
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(f64::NAN)
}

/// Percentile (nearest-rank) of an unsorted slice; `None` when empty.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    Some(v[rank.min(v.len()) - 1])
}

#[cfg(test)]
impl Summary {
    /// The summary of runs that all have a value.
    pub fn of_defined(values: &[f64]) -> Summary {
        Summary::of(values.iter().map(|v| Some(*v)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_critical_matches_tables() {
        assert!((t_critical(7) - 2.3646).abs() < 1e-4);
        assert!((t_critical(1) - 12.7062).abs() < 1e-3);
    }

    #[test]
    fn summary_of_runs() {
        let s = Summary::of_defined(&[0.5, 0.7, 0.6]);
        assert_eq!(s.n, 3);
        assert!((s.mean.unwrap() - 0.6).abs() < 1e-12);
        assert!((s.sd.unwrap() - 0.1).abs() < 1e-12);
        let half = 4.302652729911275 * 0.1 / 3f64.sqrt();
        let [lo, hi] = s.ci95.unwrap();
        assert!((lo - (0.6 - half)).abs() < 1e-9 && (hi - (0.6 + half)).abs() < 1e-9);
        assert_eq!(s.min, Some(0.5));
        assert_eq!(s.max, Some(0.7));
    }

    #[test]
    fn one_run_has_no_interval_and_undefined_runs_are_skipped() {
        let s = Summary::of_defined(&[0.4]);
        assert_eq!(s.sd, None);
        assert_eq!(s.ci95, None);
        let u = Summary::of(vec![None, Some(0.2), None]);
        assert_eq!(u.n, 1);
        assert_eq!(u.mean, Some(0.2));
        let all = Summary::of(vec![None, None]);
        assert_eq!(all.mean, None);
    }

    #[test]
    fn percentiles() {
        let v = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(percentile(&v, 50.0), Some(3.0));
        assert_eq!(percentile(&v, 95.0), Some(5.0));
        assert_eq!(percentile(&[], 50.0), None);
    }
}
