"""Summary statistics, percentage differences and significance tests as MMTests computes them.

References are to gormanm/mmtests: `bin/lib/MMTests/Stat.pm` (current statistics and pdiff/pndiff),
`bin/lib/MMTests/Summarise.pm` (best-first sorting, BAmean-NN), `bin/lib/MMTests/Compare.pm`
(significance markers), and for the 2011 era the shell helpers `stat/pdiff`, `stat/pndiff` and
`stat/lib/VMR/Stat.pm` as of commit 78b06ca5^.

All functions take a sequence of numbers and return a Python float; "no value" is NaN, as in
MMTests. `preferred` is "lower" (latencies, times) or "higher" (throughput).
"""

from __future__ import annotations

import math
from typing import Sequence, Tuple

import numpy as np
from scipy import stats as _sps

NAN = float("nan")

#: q such that mean ± q·stddev is the 95% interval MMTests draws: R's qnorm(1 - 0.05/2).
CI_Q = float(_sps.norm.ppf(0.975))

#: Default level of the 2018–2024 t-test (Compare.pm@8cd087ae^, `_SignificanceLevel` default).
TTEST_LEVEL = 0.10


def _arr(samples: Sequence[float]) -> np.ndarray:
    return np.asarray(samples, dtype=float).ravel()


def _check_preferred(preferred: str) -> None:
    if preferred not in ("lower", "higher"):
        raise ValueError(f"preferred must be 'lower' or 'higher', not {preferred!r}")


# --------------------------------------------------------------------------------------------
# Means and spreads (Stat.pm)


def amean(samples: Sequence[float]) -> float:
    """Arithmetic mean, sum/n; NaN for no samples (Stat.pm `calc_amean`)."""
    x = _arr(samples)
    return float(x.sum() / x.size) if x.size else NAN


def hmean(samples: Sequence[float]) -> float:
    """Harmonic mean, n / Σ(1/x); NaN for no samples or any sample <= 0 (Stat.pm `calc_hmean`)."""
    x = _arr(samples)
    if not x.size or bool((x <= 0).any()):
        return NAN
    return float(x.size / (1.0 / x).sum())


def gmean(samples: Sequence[float]) -> float:
    """Geometric mean, (Πx)^(1/n); NaN for no samples (Stat.pm `calc_geomean`).

    Computed through logarithms so long runs do not overflow; NaN if any sample is negative
    (the product's real root is then undefined), 0 if any sample is 0."""
    x = _arr(samples)
    if not x.size or bool((x < 0).any()):
        return NAN
    if bool((x == 0).any()):
        return 0.0
    return float(np.exp(np.log(x).mean()))


def stddev(samples: Sequence[float], ddof: int = 1) -> float:
    """Standard deviation around the arithmetic mean.

    ddof=1 (default): sample stddev sqrt(Σ(x-mean)²/(n-1)), NaN for n <= 1 (Stat.pm
    `calc_stddev("amean")`). ddof=0: population stddev sqrt(Σ(x-mean)²/n), as the 2011 shell
    reports computed it (stat/lib/VMR/Stat.pm `calc_stddev` @78b06ca5^); NaN for n == 0."""
    x = _arr(samples)
    if x.size <= ddof or not x.size:
        return NAN
    return float(np.sqrt(((x - x.mean()) ** 2).sum() / (x.size - ddof)))


def hstddev(samples: Sequence[float]) -> float:
    """MMTests' spread of a harmonic mean H: sqrt(Σ(1/x - 1/H)² · H⁴ / n).

    NaN for n <= 1 or when H is NaN (Stat.pm `calc_stddev("hmean")`)."""
    x = _arr(samples)
    h = hmean(x)
    if x.size <= 1 or math.isnan(h):
        return NAN
    return float(np.sqrt(((1.0 / x - 1.0 / h) ** 2).sum() * h**4 / x.size))


def coeffvar(samples: Sequence[float], mean: str = "amean") -> float:
    """Coefficient of variation in percent, stddev·100/mean (Stat.pm `calc_coeffvar`).

    mean="amean" uses amean/stddev, mean="hmean" uses hmean/hstddev. A NaN stddev counts as 0;
    a NaN or zero mean gives 0."""
    if mean == "amean":
        m, sd = amean(samples), stddev(samples)
    elif mean == "hmean":
        m, sd = hmean(samples), hstddev(samples)
    else:
        raise ValueError(f"mean must be 'amean' or 'hmean', not {mean!r}")
    sd = 0.0 if math.isnan(sd) else sd
    if math.isnan(m) or m == 0:
        return 0.0
    return sd * 100.0 / m


def minimum(samples: Sequence[float]) -> float:
    """Smallest sample; NaN for none (Stat.pm `calc_min`)."""
    x = _arr(samples)
    return float(x.min()) if x.size else NAN


def maximum(samples: Sequence[float]) -> float:
    """Largest sample; NaN for none (Stat.pm `calc_max`)."""
    x = _arr(samples)
    return float(x.max()) if x.size else NAN


def best_first(samples: Sequence[float], preferred: str) -> np.ndarray:
    """Samples sorted best first: ascending if lower is better, descending if higher is better
    (Summarise.pm `extractSummary`)."""
    _check_preferred(preferred)
    x = np.sort(_arr(samples))
    return x if preferred == "lower" else x[::-1]


def best_count(n: int, percent: float) -> int:
    """How many of n best-first samples a "-NN" statistic uses: int(n·NN/100), at least 1
    (Summarise.pm `runStatFunc`)."""
    return max(1, int(n * percent / 100))


def best_mean(samples: Sequence[float], percent: float, preferred: str) -> float:
    """BAmean-NN (lower is better: amean) or BHmean-NN (higher is better: hmean) of the best
    int(n·NN/100) (at least 1) samples of the best-first sorted list (Summarise.pm `runStatFunc`)."""
    x = best_first(samples, preferred)
    if not x.size:
        return NAN
    top = x[: best_count(x.size, percent)]
    return amean(top) if preferred == "lower" else hmean(top)


def mean_for(samples: Sequence[float], preferred: str) -> float:
    """The mean MMTests reports for a metric: Hmean if higher is better, else Amean
    (Summarise.pm `getStatName`/`runStatFunc`)."""
    _check_preferred(preferred)
    return hmean(samples) if preferred == "higher" else amean(samples)


def stddev_for(samples: Sequence[float], preferred: str) -> float:
    """The stddev matching `mean_for`: HStddev if higher is better, else sample Stddev."""
    _check_preferred(preferred)
    return hstddev(samples) if preferred == "higher" else stddev(samples)


# --------------------------------------------------------------------------------------------
# Percentage differences


def pdiff(new: float, base: float) -> float:
    """Gain in percent when higher is better: new·100/base - 100 (Stat.pm `pdiff`).

    0 if new == base or new == 0; 100 if base == 0."""
    if new == base or new == 0:
        return 0.0
    if base == 0:
        return 100.0
    return new * 100.0 / base - 100.0


def pndiff(new: float, base: float) -> float:
    """Gain in percent when lower is better: 100 - new·100/base (Stat.pm `pndiff`).

    0 if new == base; 100 if new == 0; -99 if base == 0 (and new != 0)."""
    if new == base:
        return 0.0
    if new == 0:
        return 100.0
    if base == 0:
        return -99.0
    return 100.0 - new * 100.0 / base


def pdiff_2011(new: float, base: float) -> float:
    """2011 gain when higher is better: (new - base)·100/new; 0 if new == base or new == 0
    (stat/pdiff @7ed65ad9 .. 78b06ca5^)."""
    if new == base or new == 0:
        return 0.0
    return (new - base) * 100.0 / new


def pndiff_2011(new: float, base: float) -> float:
    """2011 gain when lower is better: -(new - base)·100/new; 0 if new == base or new == 0
    (stat/pndiff @7ed65ad9 .. 78b06ca5^)."""
    if new == base or new == 0:
        return 0.0
    return -(new - base) * 100.0 / new


def compare_func(preferred: str, era: str = "current"):
    """The % function for a metric's own rows: pdiff if higher is better, else pndiff
    (Summarise.pm `getStatCompareFunc`); era "2011" gives the 2011 formulas."""
    _check_preferred(preferred)
    if era == "2011":
        return pdiff_2011 if preferred == "higher" else pndiff_2011
    return pdiff if preferred == "higher" else pndiff


# --------------------------------------------------------------------------------------------
# Significance


def ci_halfwidth(sd: float) -> float:
    """Half-width of MMTests' 95% interval: qnorm(0.975, mean=0, sd=stddev) = 1.96·stddev
    (Stat.pm `_calc_meanci`; note: stddev itself, not the standard error). NaN stays NaN."""
    return CI_Q * sd


def cidiff(base_mean: float, base_hw: float, new_mean: float, new_hw: float) -> float:
    """(base - new) / (half-width_base + half-width_new); the raw difference if the half-widths
    sum to 0 (Stat.pm `cidiff` as called by Compare.pm `_generateComparisonTable`)."""
    diff = base_mean - new_mean
    total = base_hw + new_hw
    if total == 0:
        return diff
    return diff / total


def ci_significant(base_mean: float, base_sd: float, new_mean: float, new_sd: float) -> bool:
    """Current (since 2024-11) significance: the two 95% intervals mean ± 1.96·stddev do not
    overlap, i.e. |cidiff| > 1. No interval (NaN mean or stddev, e.g. n <= 1) → not significant
    (Compare.pm `_generateComparisonTable`)."""
    vals = (base_mean, base_sd, new_mean, new_sd)
    if any(math.isnan(v) for v in vals):
        return False
    ratio = cidiff(base_mean, ci_halfwidth(base_sd), new_mean, ci_halfwidth(new_sd))
    return abs(ratio) > 1


def ci_significant_samples(base: Sequence[float], new: Sequence[float], preferred: str) -> bool:
    """`ci_significant` on raw samples, using the metric's mean and stddev (Amean/Stddev if lower
    is better, Hmean/HStddev if higher is better), as Summarise.pm `extractSummary` does."""
    return ci_significant(
        mean_for(base, preferred), stddev_for(base, preferred), mean_for(new, preferred), stddev_for(new, preferred)
    )


def ttest(
    base_mean: float, base_sd: float, base_n: int, new_mean: float, new_sd: float, new_n: int, level: float = TTEST_LEVEL
) -> Tuple[bool, float]:
    """The 2018-10 .. 2024-11 significance test (Compare.pm@8cd087ae^ `_significanceTest`).

    SE = sqrt(s_b²/n_b + s_n²/n_n) (Welch-style), t = |mean_b - mean_n| / SE, df = n_b + n_n - 2
    (pooled-style), two-sided p = 2·P(T_df > t). Returns (p < level, p) with p as a fraction.
    If SE == 0 the means either differ (significant, p = 0) or not (p = 1). A NaN stddev (n <= 1)
    gives (False, NaN)."""
    se = math.sqrt(base_sd**2 / base_n + new_sd**2 / new_n) if base_n and new_n else 0.0
    if math.isnan(se) or math.isnan(base_mean) or math.isnan(new_mean):
        return False, NAN
    delta = base_mean - new_mean
    if se == 0:
        return (delta != 0), (0.0 if delta != 0 else 1.0)
    df = base_n + new_n - 2
    if df <= 0:
        return False, NAN
    p = 2.0 * float(_sps.t.sf(abs(delta) / se, df))
    return p < level, p


def ttest_samples(base: Sequence[float], new: Sequence[float], preferred: str, level: float = TTEST_LEVEL) -> Tuple[bool, float]:
    """`ttest` on raw samples with the metric's mean and stddev variants."""
    b, n = _arr(base), _arr(new)
    return ttest(
        mean_for(b, preferred), stddev_for(b, preferred), b.size, mean_for(n, preferred), stddev_for(n, preferred), n.size, level
    )
