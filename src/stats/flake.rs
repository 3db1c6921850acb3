//! The gate's test against flaky tests: does a test fail on the merge base and pass on
//! head because of the change, or by chance?
//!
//! The null hypothesis is that the change does nothing: every run of the test fails
//! independently with one unknown probability `p`, on the merge base and on head alike.
//! After the first runs pick the candidates (tests that failed both base runs and passed
//! the head run), each candidate is rerun on both sides, and it reproduces only when every
//! rerun agrees: `a` failures of `a` reruns on base and `b` passes of `b` reruns on head.
//! Under the null that happens with probability `p^a (1 - p)^b`, whose largest value over
//! every `p` is `a^a b^b / (a + b)^(a + b)` (at `p = a / (a + b)`). With `n` candidates and
//! an error rate `alpha` per pull request, a candidate reproduces when that bound is at
//! most `alpha / n` (Bonferroni over the candidates): the reruns are independent of the
//! first runs that chose the candidates, so the chance that any test whose outcome does
//! not depend on the change is called reproducing is at most `alpha`, whatever `p` is and
//! however many tests the pull request adds. The comparison is made in exact integers,
//! with `alpha` read as the binary fraction its `f64` denotes.

use num_bigint::BigUint;
use num_traits::Pow;

use super::{StatsError, exact_rational};

/// The most reruns a side may plan: beyond it the bound cannot shrink usefully
/// (`4^-64` is far below any error rate a configuration may give).
pub const MAX_PLANNED_RERUNS: u64 = 64;

/// `alpha` as an exact fraction `num / den` of non-negative integers.
fn fraction(alpha: f64) -> Result<(BigUint, BigUint), StatsError> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(StatsError::InvalidRate(alpha));
    }
    let exact = exact_rational(alpha)?;
    let num = exact
        .numer()
        .to_biguint()
        .ok_or(StatsError::InvalidRate(alpha))?;
    let den = exact
        .denom()
        .to_biguint()
        .ok_or(StatsError::InvalidRate(alpha))?;
    Ok((num, den))
}

/// Whether `base_failures` failing reruns on base and `head_passes` passing reruns on head
/// (and no other outcome) rule out chance at `alpha` spread over `candidates` tests:
/// `sup_p p^a (1 - p)^b <= alpha / candidates`.
///
/// # Errors
/// `alpha` outside (0, 1).
pub fn reproduces(
    base_failures: u64,
    head_passes: u64,
    candidates: u64,
    alpha: f64,
) -> Result<bool, StatsError> {
    let (num, den) = fraction(alpha)?;
    let (a, b) = (base_failures, head_passes);
    if a > MAX_PLANNED_RERUNS * 4 || b > MAX_PLANNED_RERUNS * 4 {
        return Err(StatsError::TooLarge);
    }
    let pow = |x: u64| Pow::pow(BigUint::from(x), x);
    // a^a b^b / (a+b)^(a+b) <= num / (den n)  <=>  a^a b^b den n <= num (a+b)^(a+b)
    let lhs = pow(a) * pow(b) * den * BigUint::from(candidates.max(1));
    let rhs = num * pow(a + b);
    Ok(lhs <= rhs)
}

/// The reruns each side plans for `candidates` tests so that a test that agrees on every
/// one of them reproduces: the least `m` with `4^-m <= alpha / candidates` (the bound at
/// `a = b = m`). `None` when no candidate, or when more than [`MAX_PLANNED_RERUNS`] would
/// be needed.
///
/// # Errors
/// `alpha` outside (0, 1).
pub fn planned_reruns(candidates: u64, alpha: f64) -> Result<Option<u64>, StatsError> {
    let (num, den) = fraction(alpha)?;
    if candidates == 0 {
        return Ok(None);
    }
    let need = den * BigUint::from(candidates);
    let mut power = num;
    for m in 0..=MAX_PLANNED_RERUNS {
        if power >= need {
            return Ok(Some(m));
        }
        power <<= 2;
    }
    Ok(None)
}

/// The largest chance, over every failure probability `p`, that a test whose outcome does
/// not depend on the change fails `base_failures` times on base and passes `head_passes`
/// times on head: `a^a b^b / (a + b)^(a + b)`, for reports (floating point, descriptive).
pub fn chance_bound(base_failures: u64, head_passes: u64) -> f64 {
    #[expect(clippy::cast_precision_loss, reason = "descriptive; counts are small")]
    let (a, b) = (base_failures as f64, head_passes as f64);
    if a + b == 0.0 {
        return 1.0;
    }
    let term = |x: f64| {
        if x == 0.0 {
            0.0
        } else {
            x * (x / (a + b)).ln()
        }
    };
    (term(a) + term(b)).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound by brute force over a fine grid of `p` (it never exceeds the true supremum).
    fn grid_sup(a: u64, b: u64) -> f64 {
        (0..=20_000)
            .map(|i| {
                let p = f64::from(i) / 20_000.0;
                p.powi(i32::try_from(a).unwrap()) * (1.0 - p).powi(i32::try_from(b).unwrap())
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn the_bound_is_the_supremum_over_every_failure_probability() {
        for a in 0..12 {
            for b in 0..12 {
                let exact = chance_bound(a, b);
                let grid = grid_sup(a, b);
                assert!(grid <= exact * (1.0 + 1e-9), "{a} {b}: {grid} > {exact}");
                assert!(exact - grid < 1e-4, "{a} {b}: {grid} far below {exact}");
            }
        }
    }

    #[test]
    fn the_exact_decision_agrees_with_the_bound() {
        for n in [1, 2, 3, 10, 100] {
            for a in 0..15 {
                for b in 0..15 {
                    let alpha = 0.01;
                    #[expect(clippy::cast_precision_loss, reason = "small counts")]
                    let threshold = alpha / n as f64;
                    let bound = chance_bound(a, b);
                    // Away from the boundary the float and the exact answers agree.
                    if (bound - threshold).abs() > 1e-9 {
                        assert_eq!(
                            reproduces(a, b, n, alpha).unwrap(),
                            bound <= threshold,
                            "a={a} b={b} n={n}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn known_values() {
        // 4^-4 = 1/256 <= 1 %, 4^-3 = 1/64 is not.
        assert!(reproduces(4, 4, 1, 0.01).unwrap());
        assert!(!reproduces(3, 3, 1, 0.01).unwrap());
        // (4/7)^4 (3/7)^3 = 0.0084.
        assert!(reproduces(4, 3, 1, 0.01).unwrap());
        assert!(!reproduces(4, 3, 2, 0.01).unwrap());
        // Nothing rerun is no evidence at all.
        assert!(!reproduces(0, 0, 1, 0.5).unwrap());
        assert!(!reproduces(10, 0, 1, 0.01).unwrap());
        assert_eq!(planned_reruns(1, 0.01).unwrap(), Some(4));
        assert_eq!(planned_reruns(2, 0.01).unwrap(), Some(4));
        assert_eq!(planned_reruns(3, 0.01).unwrap(), Some(5));
        assert_eq!(planned_reruns(10, 0.01).unwrap(), Some(5));
        assert_eq!(planned_reruns(11, 0.01).unwrap(), Some(6));
        assert_eq!(planned_reruns(0, 0.01).unwrap(), None);
        assert_eq!(planned_reruns(u64::MAX, 1e-300).unwrap(), None);
        assert!(reproduces(1, 1, 1, 0.0).is_err());
        assert!(planned_reruns(1, 1.0).is_err());
        assert!(planned_reruns(1, f64::NAN).is_err());
    }

    #[test]
    fn the_planned_reruns_are_the_fewest_that_can_reproduce() {
        for n in 1..200 {
            for alpha in [0.001, 0.01, 0.05, 0.2] {
                let m = planned_reruns(n, alpha).unwrap().unwrap();
                assert!(reproduces(m, m, n, alpha).unwrap(), "{n} {alpha}");
                assert!(m == 0 || !reproduces(m - 1, m - 1, n, alpha).unwrap());
            }
        }
    }

    /// Simulated: tests that fail at random with probability p, whatever the change, go
    /// through the whole procedure (two base runs and one head run pick the candidates,
    /// then the planned reruns); the share of pull requests with a false reproduction stays
    /// under alpha at every p and for one and for ten such tests.
    #[test]
    fn simulated_flaky_tests_reproduce_at_most_alpha_of_the_time() {
        let mut rng = crate::test_rng::XorShift::new(0x9e37_79b9_7f4a_7c15);
        let mut uniform = move || rng.uniform();
        let alpha = 0.01;
        for p in [0.1, 0.3, 0.5, 0.7, 0.9] {
            for tests in [1_u64, 10] {
                let trials = 20_000;
                let mut false_reproduced = 0;
                for _ in 0..trials {
                    let mut fails = || uniform() < p;
                    let candidates: u64 = (0..tests)
                        .filter(|_| fails() && fails() && !fails())
                        .count()
                        .try_into()
                        .unwrap();
                    let Some(m) = planned_reruns(candidates, alpha).unwrap() else {
                        continue;
                    };
                    let any = (0..candidates).any(|_| {
                        let base = (0..m).all(|_| fails());
                        let head = (0..m).all(|_| !fails());
                        base && head && reproduces(m, m, candidates, alpha).unwrap()
                    });
                    false_reproduced += u32::from(any);
                }
                let rate = f64::from(false_reproduced) / f64::from(trials);
                assert!(rate <= alpha, "p={p} tests={tests}: {rate}");
            }
        }
    }
}
