//! The figures the benchmark programs print.

/// The `q` quantile of `v` (the median at 0.5); NaN when `v` is empty.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let i = ((v.len() as f64 * q) as usize).min(v.len().saturating_sub(1));
    v.get(i).copied().unwrap_or(f64::NAN)
}
