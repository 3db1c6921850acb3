//! Statistical decisions about flaky commands.
//!
//! A candidate is only certified when an exact one-sided binomial test rejects
//! "the true pass rate is at most `rate`" at level `alpha = 1 - confidence`.
//! Every such test is carried out in exact integer arithmetic: each binary
//! `f64` parameter is read as the dyadic rational it denotes, so the decision
//! has no rounding error at all. Floating point is used only for descriptive
//! numbers (Wilson bound, reported bounds) and for the Jeffreys confidence
//! sequence, which is always combined with an exact worst-case gate before it
//! can accept anything.
//!
//! Contents: the exact gate and the pass count it requires, Clopper-Pearson,
//! Wilson and Jeffreys lower bounds, early acceptance and rejection of a
//! sequentially sampled candidate, a harmonic split of a run-wide error budget
//! over many tests, and fixed-size holdout plans; [`flake`]: the gate's test that a test
//! fails on the merge base and passes on head because of the change, not by chance.

pub mod flake;

use std::f64::consts::PI;

use num_bigint::{BigInt, BigUint};
use num_rational::BigRational;
use num_traits::{One, Pow, ToPrimitive, Zero};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};
use thiserror::Error;

/// Upper limit on bisection steps (a loop also stops once its bracket cannot be split).
const MAX_BISECTION_STEPS: usize = 2_000;
/// Number of halvings of [0, 1] used for the Clopper-Pearson bound
/// (a final bracket of width 2^-60).
const CP_STEPS: usize = 60;

/// The most runs of a plan whose exact gate is computed: a holdout (`--holdout-runs`, and
/// the holdout counts of a reduce report the judge reads), candidate sampling with a rate
/// (`--candidate-runs`) and a baseline with a rate (`--baseline-runs`). The exact
/// arithmetic grows with the square of the runs; at this size every computation of a plan
/// takes well under a second.
pub const MAX_PLAN_RUNS: u64 = 2_000;

/// Reasons a statistical computation refuses its parameters.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StatsError {
    /// A pass rate outside the open interval (0, 1), or NaN.
    #[error("rate must lie strictly between 0 and 1, got {0}")]
    InvalidRate(f64),
    /// A confidence level outside the open interval (0, 1), or NaN.
    #[error("confidence must lie strictly between 0 and 1, got {0}")]
    InvalidConfidence(f64),
    /// A binomial experiment (or plan) with no trials.
    #[error("the number of runs must be at least 1")]
    ZeroRuns,
    /// More successes than trials: `(passes, runs)`.
    #[error("{0} passes exceed {1} runs")]
    PassesExceedRuns(u64, u64),
    /// A prefix longer than the plan: `(samples, planned)`.
    #[error("{0} samples exceed the planned {1}")]
    SamplesExceedPlanned(u64, u64),
    /// The harmonic allocation is indexed from 1.
    #[error("family index must be at least 1")]
    ZeroFamilyIndex,
    /// An infinite or NaN value has no rational equivalent.
    #[error("{0} is not a finite number")]
    NotFinite(f64),
    /// A plan that fails the exact gate even if every run passes: `(runs, rate, confidence)`.
    #[error("{0} runs at rate {1} and confidence {2} cannot pass even if all pass")]
    Unpassable(u64, f64, f64),
    /// Family member `j`'s alpha is below the gap between 1 and the double under it.
    #[error("alpha of family member {0} is too small for a confidence below 1")]
    AlphaTooSmall(u64),
    /// A plan whose `required_passes` (first) differs from its parameters' (second).
    #[error("plan records {0} required passes, but its parameters give {1:?}")]
    InconsistentPlan(u64, Option<u64>),
    /// The exact computation would need more bits than can be addressed.
    #[error("the exact computation is too large")]
    TooLarge,
}

/// A non-negative dyadic rational `num / 2^exp`.
struct Dyadic {
    num: BigUint,
    exp: u64,
}

/// Splits a finite nonzero `x` into sign, odd mantissa and binary exponent,
/// so that `|x| = mant * 2^exp2`; zero gives mantissa 0.
fn decompose(x: f64) -> (bool, u64, i64) {
    let bits = x.to_bits();
    let negative = bits >> 63 == 1;
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let fraction = bits & ((1u64 << 52) - 1);
    let (mut mant, mut exp2) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), biased - 1075)
    };
    if mant == 0 {
        return (negative, 0, 0);
    }
    let tz = mant.trailing_zeros();
    mant >>= tz;
    exp2 += i64::from(tz);
    (negative, mant, exp2)
}

/// The exact value of a finite double: every finite `f64` equals
/// `m * 2^e` for an integer mantissa `m` and exponent `e`, returned here as a
/// reduced rational (odd mantissa over a power of two, or an integer).
pub fn exact_rational(x: f64) -> Result<BigRational, StatsError> {
    if !x.is_finite() {
        return Err(StatsError::NotFinite(x));
    }
    let (negative, mant, exp2) = decompose(x);
    let numer = if negative {
        -BigInt::from(mant)
    } else {
        BigInt::from(mant)
    };
    Ok(if exp2 >= 0 {
        BigRational::from_integer(numer << exp2)
    } else {
        BigRational::new_raw(numer, BigInt::one() << exp2.unsigned_abs())
    })
}

/// The exact dyadic form of a double in [0, 1] (callers check the range;
/// there the binary exponent is never positive).
fn unit_dyadic(x: f64) -> Dyadic {
    let (_, mant, exp2) = decompose(x);
    debug_assert!((0.0..=1.0).contains(&x) && exp2 <= 0);
    let (num, exp) = (BigUint::from(mant), exp2.unsigned_abs());
    Dyadic { num, exp }
}

fn check_rate(rate: f64) -> Result<(), StatsError> {
    let valid = rate > 0.0 && rate < 1.0;
    valid.then_some(()).ok_or(StatsError::InvalidRate(rate))
}

/// Validates `confidence` and returns `1 - confidence` exactly.
fn alpha_of(confidence: f64) -> Result<Dyadic, StatsError> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(StatsError::InvalidConfidence(confidence));
    }
    let c = unit_dyadic(confidence);
    let num = (BigUint::one() << c.exp) - c.num;
    Ok(Dyadic { num, exp: c.exp })
}

fn check_counts(passes: u64, runs: u64) -> Result<(), StatsError> {
    if runs == 0 {
        Err(StatsError::ZeroRuns)
    } else if passes > runs {
        Err(StatsError::PassesExceedRuns(passes, runs))
    } else {
        Ok(())
    }
}

fn check_prefix(passes: u64, samples: u64, planned: u64) -> Result<(), StatsError> {
    if planned == 0 {
        Err(StatsError::ZeroRuns)
    } else if samples > planned {
        Err(StatsError::SamplesExceedPlanned(samples, planned))
    } else if passes > samples {
        Err(StatsError::PassesExceedRuns(passes, samples))
    } else {
        Ok(())
    }
}

/// `sum_{i < count} C(n, i) x^i y^(n - i)` by Horner's rule in `y`, so each
/// step multiplies the accumulator by a (usually one-limb) integer.
fn lower_sum(n: u64, count: u64, x: &BigUint, y: &BigUint) -> BigUint {
    let mut acc = BigUint::zero();
    let mut coef = BigUint::one();
    let mut x_pow = BigUint::one();
    for i in 0..count {
        acc = acc * y + &coef * &x_pow;
        if i + 1 < count {
            coef = coef * (n - i) / (i + 1);
            x_pow *= x;
        }
    }
    acc * Pow::pow(y, n - count + 1)
}

/// Decides `P[X >= k] <= alpha` for `X ~ Bin(n, p)` exactly, with `p` and
/// `alpha` dyadic rationals in [0, 1]. The shorter of the two tails is summed.
fn tail_at_most(k: u64, n: u64, p: &Dyadic, alpha: &Dyadic) -> Result<bool, StatsError> {
    let one = BigUint::one();
    let alpha_is_one = alpha.num == (&one << alpha.exp);
    if k == 0 || p.num == (&one << p.exp) {
        return Ok(alpha_is_one);
    }
    if p.num.is_zero() {
        return Ok(true);
    }
    let m = &p.num;
    let q = (&one << p.exp) - m;
    // The tail is T / 2^(e n); compare it with alpha = A / 2^f by cross-multiplying.
    let en = p.exp.checked_mul(n).ok_or(StatsError::TooLarge)?;
    if n - k < k {
        let upper = lower_sum(n, n - k + 1, &q, m);
        Ok((upper << alpha.exp) <= (&alpha.num << en))
    } else {
        let lower = lower_sum(n, k, m, &q);
        let conf_num = (&one << alpha.exp) - &alpha.num;
        Ok((conf_num << en) <= (lower << alpha.exp))
    }
}

/// Exact one-sided binomial test: true iff `P[X >= passes] <= 1 - confidence`
/// for `X ~ Bin(runs, rate)`, i.e. "true pass rate <= rate" is rejected.
/// The tail `sum_{i >= k} C(n,i) r^i (1-r)^(n-i)` and `alpha` are compared as
/// exact rationals built from the binary values of `rate` and `confidence`;
/// equivalently, the Clopper-Pearson lower bound is at least `rate`.
pub fn exact_rate_gate(
    passes: u64,
    runs: u64,
    rate: f64,
    confidence: f64,
) -> Result<bool, StatsError> {
    check_counts(passes, runs)?;
    check_rate(rate)?;
    let alpha = alpha_of(confidence)?;
    tail_at_most(passes, runs, &unit_dyadic(rate), &alpha)
}

/// One-sided Clopper-Pearson lower bound `L = inf{p : P[X >= k | Bin(n, p)] > alpha}`
/// (0 when `k = 0`), i.e. the `alpha` quantile of `Beta(k, n - k + 1)`. Found
/// by 60 halvings of [0, 1] with the exact tail test at each probe; the lower
/// end of the final bracket is returned, so the value never exceeds `L`.
pub fn clopper_pearson_lower(passes: u64, runs: u64, confidence: f64) -> Result<f64, StatsError> {
    check_counts(passes, runs)?;
    let alpha = alpha_of(confidence)?;
    if passes == 0 {
        return Ok(0.0);
    }
    bisect(0.0, 1.0, CP_STEPS, |p| {
        tail_at_most(passes, runs, &unit_dyadic(p), &alpha)
    })
}

/// Halves `[lo, hi]`, keeping `below(lo)` true and `below(hi)` false for a
/// monotone predicate, at most `steps` times or until the bracket cannot be
/// split in `f64`; returns the final `lo`.
fn bisect(
    mut lo: f64,
    mut hi: f64,
    steps: usize,
    mut below: impl FnMut(f64) -> Result<bool, StatsError>,
) -> Result<f64, StatsError> {
    for _ in 0..steps {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if below(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// One-sided Wilson score lower bound
/// `(p + z^2/(2n) - z sqrt(p(1-p)/n + z^2/(4n^2))) / (1 + z^2/n)` with
/// `p = passes/runs` and `z` the standard normal quantile of `confidence`.
/// Descriptive only: it is an approximation and never drives a decision.
pub fn wilson_lower(passes: u64, runs: u64, confidence: f64) -> Result<f64, StatsError> {
    check_counts(passes, runs)?;
    alpha_of(confidence)?;
    let z = normal_quantile(confidence);
    let n = runs as f64;
    let phat = passes as f64 / n;
    let z2 = z * z;
    let centre = phat + z2 / (2.0 * n);
    let margin = z * ((phat * (1.0 - phat) + z2 / (4.0 * n)) / n).sqrt();
    Ok(((centre - margin) / (1.0 + z2 / n)).clamp(0.0, 1.0))
}

/// The smallest pass count `k` for which `exact_rate_gate(k, runs, rate, confidence)`
/// holds (the gate is monotone in `k`, so this is a binary search), or `None`
/// when even `k = runs` fails, i.e. when `rate^runs > 1 - confidence`.
pub fn required_passes(runs: u64, rate: f64, confidence: f64) -> Result<Option<u64>, StatsError> {
    if !exact_rate_gate(runs, runs, rate, confidence)? {
        return Ok(None);
    }
    let (mut lo, mut hi) = (0u64, runs); // gate fails at lo (k = 0 never passes), holds at hi
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if exact_rate_gate(mid, runs, rate, confidence)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(Some(hi))
}

/// Lower end of the Jeffreys mixture confidence sequence. With `S` passes in
/// `t` samples, `E_t(p) = B(S + 1/2, t - S + 1/2) / (B(1/2, 1/2) p^S (1-p)^(t-S))`
/// is a nonnegative martingale under `p`, so by Ville's inequality
/// `{p : E_t(p) < 1/alpha}` covers the true rate at every `t` at once with
/// probability at least `1 - alpha`. Returns the infimum of that set, found by
/// bisection on `(0, S/t]`, where `ln E_t` decreases; it is 0 when `S = 0` or
/// `t = 0`. Double precision; the returned end of the bracket lies outside the set.
pub fn jeffreys_lower(passes: u64, samples: u64, confidence: f64) -> Result<f64, StatsError> {
    alpha_of(confidence)?;
    if passes > samples {
        return Err(StatsError::PassesExceedRuns(passes, samples));
    }
    if passes == 0 {
        return Ok(0.0);
    }
    let threshold = -(1.0 - confidence).ln();
    let s = passes as f64;
    let f = (samples - passes) as f64;
    let ln_mix = ln_beta(s + 0.5, f + 0.5) - PI.ln();
    let ln_e = |p: f64| {
        let fails = if f > 0.0 { f * (-p).ln_1p() } else { 0.0 };
        ln_mix - s * p.ln() - fails
    };
    // E_t at the maximum-likelihood point S/t is at most 1 < 1/alpha: inside the set.
    bisect(0.0, s / samples as f64, MAX_BISECTION_STEPS, |p| {
        Ok(ln_e(p) >= threshold)
    })
}

/// Early acceptance of a candidate after `samples` of `planned` runs. Before
/// the end it requires `passes >= min_passes`, a Jeffreys lower bound of at
/// least `rate`, and the exact gate at the planned size with every unobserved
/// run counted as a failure, so an early accept is never one the full-size
/// exact test could overturn. At `samples == planned` only the count and the
/// exact gate apply.
pub fn early_accept(
    passes: u64,
    samples: u64,
    planned: u64,
    min_passes: u64,
    rate: f64,
    confidence: f64,
) -> Result<bool, StatsError> {
    check_prefix(passes, samples, planned)?;
    check_rate(rate)?;
    alpha_of(confidence)?;
    if passes < min_passes {
        return Ok(false);
    }
    if samples < planned && jeffreys_lower(passes, samples, confidence)? < rate {
        return Ok(false);
    }
    exact_rate_gate(passes, planned, rate, confidence)
}

/// Early rejection: true when even if all `planned - samples` remaining runs
/// pass, the final count stays below `min_passes` or (with a rate) fails the
/// exact gate at the planned size.
pub fn early_reject(
    passes: u64,
    samples: u64,
    planned: u64,
    min_passes: u64,
    rate: Option<f64>,
    confidence: f64,
) -> Result<bool, StatsError> {
    check_prefix(passes, samples, planned)?;
    alpha_of(confidence)?;
    if let Some(rate) = rate {
        check_rate(rate)?;
    }
    let best = passes + (planned - samples);
    if best < min_passes {
        return Ok(true);
    }
    match rate {
        None => Ok(false),
        Some(rate) => Ok(!exact_rate_gate(best, planned, rate, confidence)?),
    }
}

/// Harmonic allocation of a run-wide error budget over a sequence of tests:
/// `alpha_j = min(1 - confidence, (1 - run_confidence) / (j (j + 1)))` exactly,
/// for `j >= 1`. Since `sum_j 1/(j(j+1)) = 1`, the allocations add up to at
/// most `1 - run_confidence`, however many tests are run.
pub fn family_alpha(
    j: u64,
    confidence: f64,
    run_confidence: f64,
) -> Result<BigRational, StatsError> {
    if j == 0 {
        return Err(StatsError::ZeroFamilyIndex);
    }
    alpha_of(confidence)?;
    alpha_of(run_confidence)?;
    let one = BigRational::one();
    let own = &one - exact_rational(confidence)?;
    let jb = BigInt::from(j);
    let pairs = BigRational::from_integer(&jb * (&jb + 1u32));
    let share = (&one - exact_rational(run_confidence)?) / pairs;
    Ok(if share < own { share } else { own })
}

/// The double nearest to `1 - alpha_j` from above (rounded toward one), so
/// that the exact alpha `1 - c` a test at confidence `c` uses never exceeds
/// the allocation `alpha_j` of [`family_alpha`]. Fails when that double would be 1.
pub fn family_confidence(j: u64, confidence: f64, run_confidence: f64) -> Result<f64, StatsError> {
    let alpha = family_alpha(j, confidence, run_confidence)?;
    let target = BigRational::one() - &alpha;
    let mut c = alpha.to_f64().map_or(1.0, |a| 1.0 - a).clamp(0.0, 1.0);
    while exact_rational(c)? < target {
        c = c.next_up();
    }
    while c > 0.0 && exact_rational(c.next_down())? >= target {
        c = c.next_down();
    }
    if c >= 1.0 {
        Err(StatsError::AlphaTooSmall(j))
    } else {
        Ok(c)
    }
}

/// A fixed-size holdout plan: `runs` fresh runs, certified when the exact
/// gate rejects "pass rate <= rate" at `confidence`, i.e. when at least
/// `required_passes` runs pass.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HoldoutPlan {
    /// Number of runs.
    pub runs: u64,
    /// Pass rate the candidate must beat.
    pub rate: f64,
    /// Confidence of the one-sided test (`alpha = 1 - confidence`).
    pub confidence: f64,
    /// Smallest pass count that certifies (see [`required_passes`]).
    pub required_passes: u64,
}

impl HoldoutPlan {
    /// Builds a plan, refusing one that could not certify even with `runs`
    /// passes out of `runs` (`rate^runs > 1 - confidence`).
    pub fn new(runs: u64, rate: f64, confidence: f64) -> Result<HoldoutPlan, StatsError> {
        match required_passes(runs, rate, confidence)? {
            Some(required_passes) => Ok(HoldoutPlan {
                runs,
                rate,
                confidence,
                required_passes,
            }),
            None => Err(StatsError::Unpassable(runs, rate, confidence)),
        }
    }
}

/// Outcome of a holdout: the exact decision plus descriptive bounds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HoldoutResult {
    /// Whether the exact gate rejected "pass rate <= rate".
    pub certified: bool,
    /// Runs that passed.
    pub passes: u64,
    /// Runs made.
    pub runs: u64,
    /// Conservative Clopper-Pearson lower bound on the pass rate.
    pub lower_bound: f64,
    /// Wilson score lower bound (descriptive).
    pub wilson_lower: f64,
    /// Rate that had to be beaten.
    pub rate: f64,
    /// Confidence of the test.
    pub confidence: f64,
    /// Pass count that certifies.
    pub required_passes: u64,
}

/// Evaluates a holdout with `passes` of `plan.runs` runs passing: certified
/// iff `P[X >= passes | Bin(runs, rate)] <= 1 - confidence` exactly. A plan
/// whose `required_passes` does not match its parameters is refused.
pub fn holdout_result(plan: &HoldoutPlan, passes: u64) -> Result<HoldoutResult, StatsError> {
    let actual = required_passes(plan.runs, plan.rate, plan.confidence)?;
    if actual != Some(plan.required_passes) {
        return Err(StatsError::InconsistentPlan(plan.required_passes, actual));
    }
    Ok(HoldoutResult {
        certified: exact_rate_gate(passes, plan.runs, plan.rate, plan.confidence)?,
        passes,
        runs: plan.runs,
        lower_bound: clopper_pearson_lower(passes, plan.runs, plan.confidence)?,
        wilson_lower: wilson_lower(passes, plan.runs, plan.confidence)?,
        rate: plan.rate,
        confidence: plan.confidence,
        required_passes: plan.required_passes,
    })
}

/// Standard normal quantile for `p` in (0, 1).
fn normal_quantile(p: f64) -> f64 {
    Normal::standard().inverse_cdf(p)
}

/// `ln B(a, b)` for `a, b > 0`.
fn ln_beta(a: f64, b: f64) -> f64 {
    // Both arguments are counts plus one half, so statrs' positivity check always holds.
    statrs::function::beta::ln_beta(a, b)
}

#[cfg(test)]
mod tests {
    use super::StatsError::*;
    use super::*;
    use statrs::distribution::{Beta, Binomial, ContinuousCDF, DiscreteCDF, Normal};
    use std::collections::HashMap;

    const NS: [u64; 6] = [1, 2, 5, 20, 50, 200];
    const RATES: [f64; 6] = [0.01, 0.1, 0.5, 0.9, 0.95, 0.99];
    const CONFS: [f64; 4] = [0.5, 0.9, 0.95, 0.999];

    /// P[X >= k] for X ~ Bin(n, p) from statrs: the survival function at k - 1.
    fn statrs_tail(k: u64, n: u64, p: f64) -> f64 {
        k.checked_sub(1)
            .map_or(1.0, |j| Binomial::new(p, n).unwrap().sf(j))
    }

    /// All tails P[X >= k], k = 0..=n, summed term by term in `BigRational`.
    fn naive_tails(n: u64, p: f64) -> Vec<BigRational> {
        let r = exact_rational(p).unwrap();
        let s = BigRational::one() - &r;
        let (mut r_pow, mut s_pow) = (vec![BigRational::one()], vec![BigRational::one()]);
        for i in 0..n as usize {
            r_pow.push(&r_pow[i] * &r);
            s_pow.push(&s_pow[i] * &s);
        }
        let mut coef = BigInt::one();
        let mut tails = vec![BigRational::zero(); n as usize + 2];
        let mut terms = Vec::new();
        for i in 0..=n {
            let c = BigRational::from_integer(coef.clone());
            terms.push(c * &r_pow[i as usize] * &s_pow[(n - i) as usize]);
            coef = coef * (n - i) / (i + 1);
        }
        for i in (0..=n as usize).rev() {
            tails[i] = &tails[i + 1] + &terms[i];
        }
        tails
    }

    fn exact_alpha(conf: f64) -> BigRational {
        BigRational::one() - exact_rational(conf).unwrap()
    }

    #[test]
    fn exact_rational_reads_binary_values() {
        let r = |n: i64, d: u32| BigRational::new(BigInt::from(n), BigInt::one() << d);
        assert_eq!(exact_rational(0.5).unwrap(), r(1, 1));
        // 0.1 is stored as 3602879701896397 / 2^55, slightly above one tenth.
        assert_eq!(exact_rational(0.1).unwrap(), r(3_602_879_701_896_397, 55));
        assert_eq!(exact_rational(-3.0).unwrap(), r(-3, 0));
        assert_eq!(exact_rational(-0.0).unwrap(), BigRational::zero());
        assert_eq!(exact_rational(5e-324).unwrap(), r(1, 1074));
        assert!(exact_rational(f64::MAX).unwrap().is_integer());
        for x in [0.95, 1e-300, 123.456, 0.999, 2.0f64.powi(70)] {
            assert_eq!(exact_rational(x).unwrap().to_f64(), Some(x));
        }
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(matches!(exact_rational(x), Err(NotFinite(_))));
        }
    }

    #[test]
    fn fast_tail_matches_naive_rational_sum() {
        for n in 1..=16 {
            for rate in [1e-5, 0.3, 0.5, 0.7, 0.999_999] {
                let tails = naive_tails(n, rate);
                assert_eq!(tails[0], BigRational::one());
                for conf in CONFS {
                    for k in 0..=n {
                        let naive = tails[k as usize] <= exact_alpha(conf);
                        assert_eq!(exact_rate_gate(k, n, rate, conf).unwrap(), naive);
                    }
                }
            }
        }
    }

    #[test]
    fn gate_matches_statrs_binomial_tail() {
        let mut boundary = Vec::new();
        for (n, rate, conf) in grid() {
            for k in 0..=n {
                let ours = exact_rate_gate(k, n, rate, conf).unwrap();
                let tail = statrs_tail(k, n, rate);
                if (tail - (1.0 - conf)).abs() <= 1e-12 {
                    // Too close to call in floating point: the exact sum decides.
                    assert_eq!(ours, naive_tails(n, rate)[k as usize] <= exact_alpha(conf));
                    boundary.push((k, n, rate, conf, tail, ours));
                } else {
                    assert_eq!(ours, tail <= 1.0 - conf, "k={k} n={n} r={rate} c={conf}");
                }
            }
        }
        println!("boundary cases (k, n, rate, conf, statrs tail, exact gate): {boundary:?}");
        assert!(boundary.len() <= 4, "{boundary:?}");
    }

    fn grid() -> impl Iterator<Item = (u64, f64, f64)> {
        let pairs = NS.into_iter().flat_map(|n| RATES.map(|r| (n, r)));
        pairs.flat_map(|(n, r)| CONFS.map(|c| (n, r, c)))
    }

    #[test]
    fn required_passes_known_values() {
        let req = |n, r, c| required_passes(n, r, c).unwrap();
        // 0.9^20 = 0.1216 > 0.05: even 20 of 20 cannot reject "rate <= 0.9".
        assert_eq!(req(20, 0.9, 0.95), None);
        // Bin(20, 1/2): P[X>=15] = 21700/2^20 = 0.0207 <= 0.05 < P[X>=14] = 60460/2^20 = 0.0577.
        assert_eq!(req(20, 0.5, 0.95), Some(15));
        // Bin(50, 0.9): P[X>=49] = 5.9 * 0.9^49 = 0.0338; P[X>=48] = 0.0338 + 12.25 * 0.9^48 = 0.112.
        assert_eq!(req(50, 0.9, 0.95), Some(49));
        // Bin(20, 1/2) at alpha 1/2: P[X>=11] = 0.412 <= 0.5 < P[X>=10] = 0.588.
        assert_eq!(req(20, 0.5, 0.5), Some(11));
        // N = 1: only 1 of 1 can certify, and only when rate <= alpha.
        assert_eq!(req(1, 0.01, 0.95), Some(1));
        assert_eq!(req(1, 0.5, 0.5), Some(1)); // a tie: the tail equals alpha exactly
        assert_eq!(req(1, 0.9, 0.5), None);
        assert_eq!(req(1, 0.5, 0.999), None);
        // Binary 0.1 = 0.1000000000000000055 > 1 - binary 0.9 = 0.0999999999999999778.
        assert_eq!(req(1, 0.1, 0.9), None);
        // Binary 0.05 = 0.0500000000000000028 < 1 - binary 0.95 = 0.0500000000000000444.
        assert_eq!(req(1, 0.05, 0.95), Some(1));
        let alpha = 1.0 - 0.95; // exact (Sterbenz): a tail equal to alpha still passes
        assert_eq!(req(1, alpha, 0.95), Some(1));
        assert_eq!(req(1, alpha.next_up(), 0.95), None);
        // Near 0 and 1: 1 - (1-1e-9)^5 = 5e-9 passes; (1-1e-9)^200 and 0.99^200 = 0.134 do not.
        assert_eq!(req(5, 1e-9, 0.999), Some(1));
        assert_eq!(req(200, 1.0 - 1e-9, 0.999), None);
        assert_eq!(req(200, 0.99, 0.999), None);
        // Against statrs over the whole grid (any disagreement must be a float tie).
        for (n, rate, conf) in grid() {
            let float = (1..=n).find(|&k| statrs_tail(k, n, rate) <= 1.0 - conf);
            let ours = req(n, rate, conf);
            if ours != float {
                let k = ours.or(float).unwrap();
                assert!((statrs_tail(k, n, rate) - (1.0 - conf)).abs() <= 1e-12);
            }
        }
    }

    #[test]
    fn clopper_pearson_matches_beta_quantile() {
        for (n, conf) in NS.into_iter().flat_map(|n| CONFS.map(|c| (n, c))) {
            let alpha = alpha_of(conf).unwrap();
            let step = if n == 200 { 23 } else { 1 };
            for k in (0..=n).step_by(step).chain([1, n]) {
                let ours = clopper_pearson_lower(k, n, conf).unwrap();
                if k == 0 {
                    assert_eq!(ours, 0.0);
                    continue;
                }
                let beta = Beta::new(k as f64, (n - k + 1) as f64).unwrap();
                let reference = beta.inverse_cdf(1.0 - conf);
                assert!((ours - reference).abs() <= 1e-9, "{k}/{n} {conf}");
                assert!(ours <= reference + 1e-12);
                // Exactly conservative: the tail at the bound is still <= alpha ...
                assert!(tail_at_most(k, n, &unit_dyadic(ours), &alpha).unwrap());
                // ... and tight: at the top of the final bracket it exceeds alpha.
                let up = ours + 2f64.powi(-60);
                let up = if up > ours { up } else { ours.next_up() };
                assert!(!tail_at_most(k, n, &unit_dyadic(up), &alpha).unwrap());
            }
        }
    }

    #[test]
    fn wilson_matches_its_formula() {
        let normal = Normal::new(0.0, 1.0).unwrap();
        for (n, conf) in NS.into_iter().flat_map(|n| CONFS.map(|c| (n, c))) {
            let (z, nf) = (normal.inverse_cdf(conf), n as f64);
            for k in 0..=n {
                let ph = k as f64 / nf;
                let root = (ph * (1.0 - ph) / nf + z * z / (4.0 * nf * nf)).sqrt();
                let direct = (ph + z * z / (2.0 * nf) - z * root) / (1.0 + z * z / nf);
                let ours = wilson_lower(k, n, conf).unwrap();
                assert!((ours - direct.max(0.0)).abs() <= 1e-9, "{k}/{n} {conf}");
            }
        }
    }

    #[test]
    fn jeffreys_lower_properties() {
        for conf in CONFS {
            let (alpha, threshold) = (1.0 - conf, -(1.0 - conf).ln());
            // S = t = 1: E_1(p) = B(3/2, 1/2) / (pi p) = 1 / (2p), so L_1 = alpha / 2.
            assert!((jeffreys_lower(1, 1, conf).unwrap() - alpha / 2.0).abs() < 1e-15);
            assert_eq!(jeffreys_lower(0, 0, conf).unwrap(), 0.0);
            for t in [1u64, 2, 5, 20, 50, 200, 1000] {
                let mut previous = 0.0;
                for s in (0..=t).step_by(if t > 200 { 37 } else { 1 }).chain([t]) {
                    let l = jeffreys_lower(s, t, conf).unwrap();
                    assert!(l >= previous && l <= s as f64 / t as f64);
                    previous = l;
                    if s == 0 {
                        assert_eq!(l, 0.0);
                        continue;
                    }
                    // Independent evaluation of ln E_t with statrs' ln_beta.
                    let (sf, ff) = (s as f64, (t - s) as f64);
                    let ln_mix = statrs::function::beta::ln_beta(sf + 0.5, ff + 0.5) - PI.ln();
                    let ln_e = |p: f64| ln_mix - sf * p.ln() - ff * (1.0 - p).ln();
                    assert!(ln_e(l + 1e-9) < threshold, "{s}/{t} {conf}");
                    assert!(l < 1e-9 || ln_e(l - 1e-9) >= threshold, "{s}/{t} {conf}");
                }
            }
        }
    }

    #[test]
    fn early_accept_never_beats_worst_case_gate() {
        let mut accepted = 0;
        let plans = (1..=24u64).flat_map(|n| [0.5, 0.8, 0.9].map(|r| (n, r)));
        for (planned, rate, conf) in plans.flat_map(|(n, r)| [0.9, 0.95].map(|c| (n, r, c))) {
            for (s, t) in (0..=planned).flat_map(|t| (0..=t).map(move |s| (s, t))) {
                let acc = early_accept(s, t, planned, 1, rate, conf).unwrap();
                let rej = early_reject(s, t, planned, 1, Some(rate), conf).unwrap();
                assert!(!(acc && rej) && (t < planned || acc != rej));
                if acc {
                    accepted += 1;
                    // Counting every remaining run as a failure still passes.
                    assert!(exact_rate_gate(s, planned, rate, conf).unwrap());
                    assert!(t == planned || jeffreys_lower(s, t, conf).unwrap() >= rate);
                }
            }
        }
        assert!(accepted > 0);
        assert!(early_reject(0, 0, 5, 6, None, 0.9).unwrap());
        assert!(!early_reject(0, 0, 5, 5, None, 0.9).unwrap());
    }

    #[test]
    fn family_confidence_rounds_toward_one() {
        let used_alpha = |c: f64| BigRational::one() - exact_rational(c).unwrap();
        for (conf, run) in [(0.95, 0.9), (0.999, 0.95), (0.5, 0.99)] {
            for j in 1..=200 {
                let alpha = family_alpha(j, conf, run).unwrap();
                let c = family_confidence(j, conf, run).unwrap();
                assert!(used_alpha(c) <= alpha);
                // Tight: the double just below would spend more than the allocation.
                assert!(used_alpha(c.next_down()) > alpha);
            }
            let (mut nominal, mut used) = (BigRational::zero(), BigRational::zero());
            for j in 1..=1000 {
                nominal += family_alpha(j, conf, run).unwrap();
                used += used_alpha(family_confidence(j, conf, run).unwrap());
            }
            assert!(used <= nominal && nominal <= exact_alpha(run));
        }
        let tiny = family_confidence(1 << 27, 0.95, 0.95);
        assert_eq!(tiny, Err(AlphaTooSmall(1 << 27)));
        assert_eq!(family_alpha(0, 0.95, 0.95), Err(ZeroFamilyIndex));
    }

    /// Sequentially samples `candidates` candidates of a command passing with
    /// probability `p_true` (xorshift64, fixed seed); returns (accepted, mean samples).
    fn simulate(p_true: f64, planned: u64, rate: f64, conf: f64, candidates: u64) -> (u64, f64) {
        let mut memo = HashMap::new();
        let mut decide = |s: u64, t: u64| {
            *memo.entry((s, t)).or_insert_with(|| {
                let acc = early_accept(s, t, planned, 1, rate, conf);
                let rej = early_reject(s, t, planned, 1, Some(rate), conf);
                (acc.unwrap(), rej.unwrap())
            })
        };
        let mut rng = crate::test_rng::XorShift::new(0x9E37_79B9_7F4A_7C15);
        let mut uniform = || rng.uniform();
        let (mut accepted, mut drawn) = (0, 0);
        for _ in 0..candidates {
            let (mut s, mut t) = (0, 0);
            loop {
                let (acc, rej) = decide(s, t);
                if acc || rej {
                    accepted += u64::from(acc);
                    break;
                }
                assert!(t < planned);
                s += u64::from(uniform() < p_true);
                t += 1;
            }
            drawn += t;
        }
        (accepted, drawn as f64 / candidates as f64)
    }

    #[test]
    fn simulated_false_acceptance_is_controlled() {
        // The N = 20, rate 0.9 plan can never pass (0.9^20 > 0.05): rejected before sampling.
        assert!(HoldoutPlan::new(20, 0.9, 0.95).is_err());
        assert_eq!(simulate(0.7, 20, 0.9, 0.95, 2000), (0, 0.0));
        // A passable plan (N = 50 needs 49) for the same 0.7 command, then the least
        // favourable null (true rate exactly 0.9: acceptance P[X >= 49] = 0.0338).
        for p_true in [0.7, 0.9] {
            let (acc, mean) = simulate(p_true, 50, 0.9, 0.95, 2000);
            println!("p={p_true} N=50: accepted {acc}/2000, mean samples {mean:.2}");
            assert!(acc as f64 / 2000.0 <= 0.05);
        }
        let (acc, mean) = simulate(0.998, 50, 0.9, 0.95, 2000);
        println!("p=0.998 N=50: accepted {acc}/2000, mean samples {mean:.2}");
        assert!(acc > 1800);
    }

    /// The cap the help texts and docs/reduce.md state, and a plan at the cap computed in
    /// well under a second even in this unoptimised build.
    #[test]
    fn plans_at_the_cap_are_computed_quickly() {
        assert_eq!(MAX_PLAN_RUNS, 2000, "the help texts and the docs say 2000");
        let started = std::time::Instant::now();
        let plan = HoldoutPlan::new(MAX_PLAN_RUNS, 0.9, 0.95).unwrap();
        let result = holdout_result(&plan, MAX_PLAN_RUNS).unwrap();
        assert!(result.certified);
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
    }

    #[test]
    fn holdout_plan_and_result() {
        let refused = HoldoutPlan::new(20, 0.9, 0.95);
        assert_eq!(refused, Err(Unpassable(20, 0.9, 0.95)));
        let plan = HoldoutPlan::new(50, 0.9, 0.95).unwrap();
        assert_eq!(plan.required_passes, 49);
        let pass = holdout_result(&plan, 49).unwrap();
        assert!(pass.certified && pass.lower_bound >= 0.9 && pass.lower_bound < 0.98);
        assert!(pass.wilson_lower > 0.0 && pass.wilson_lower < 0.98);
        let fail = holdout_result(&plan, 48).unwrap();
        assert!(!fail.certified && fail.lower_bound < 0.9);
        assert_eq!(holdout_result(&plan, 51), Err(PassesExceedRuns(51, 50)));
        let mut forged = plan.clone();
        forged.required_passes = 40;
        assert_eq!(
            holdout_result(&forged, 45),
            Err(InconsistentPlan(40, Some(49)))
        );
        fn serializable<T: Serialize>(_: &T) {}
        serializable(&plan);
        serializable(&pass);
    }

    fn rate_err<T>(r: Result<T, StatsError>) -> bool {
        matches!(r, Err(InvalidRate(_)))
    }

    fn conf_err<T>(r: Result<T, StatsError>) -> bool {
        matches!(r, Err(InvalidConfidence(_)))
    }

    #[test]
    fn invalid_parameters_are_errors() {
        for bad in [0.0, 1.0, -0.1, 1.5, f64::NAN, f64::INFINITY] {
            assert!(rate_err(exact_rate_gate(1, 2, bad, 0.9)));
            assert!(rate_err(required_passes(2, bad, 0.9)));
            assert!(rate_err(early_accept(1, 1, 2, 0, bad, 0.9)));
            assert!(rate_err(early_reject(0, 1, 2, 5, Some(bad), 0.9)));
            assert!(rate_err(HoldoutPlan::new(2, bad, 0.9)));
            assert!(conf_err(exact_rate_gate(1, 2, 0.5, bad)));
            assert!(conf_err(clopper_pearson_lower(1, 2, bad)));
            assert!(conf_err(wilson_lower(1, 2, bad)));
            assert!(conf_err(jeffreys_lower(1, 2, bad)));
            assert!(conf_err(early_reject(1, 1, 2, 0, None, bad)));
            assert!(conf_err(family_alpha(1, bad, 0.9)));
            assert!(conf_err(family_confidence(1, 0.9, bad)));
        }
        assert_eq!(exact_rate_gate(0, 0, 0.5, 0.9), Err(ZeroRuns));
        assert_eq!(clopper_pearson_lower(0, 0, 0.9), Err(ZeroRuns));
        assert_eq!(required_passes(0, 0.5, 0.9), Err(ZeroRuns));
        assert_eq!(early_reject(0, 0, 0, 0, None, 0.9), Err(ZeroRuns));
        assert_eq!(exact_rate_gate(3, 2, 0.5, 0.9), Err(PassesExceedRuns(3, 2)));
        assert_eq!(wilson_lower(3, 2, 0.9), Err(PassesExceedRuns(3, 2)));
        assert_eq!(jeffreys_lower(1, 0, 0.9), Err(PassesExceedRuns(1, 0)));
        assert_eq!(
            early_accept(1, 3, 2, 0, 0.5, 0.9),
            Err(SamplesExceedPlanned(3, 2))
        );
    }
}
