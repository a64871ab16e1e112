"""Error bars used by the experiments, defined once: proportions, censored waiting times, per-run means, quantiles.

* :func:`wilson` — Wilson score interval of a proportion (95 %);
* :func:`censored_exponential` — the mean of an exponential waiting time from right-censored runs (type I):
  rate = events / time at risk, exact Poisson (Garwood) interval on the rate, inverted for the mean;
* :func:`mean_se` — mean ± standard error across independent runs;
* :func:`bootstrap_quantiles` — pooled quantiles with a run-level bootstrap interval;
* the two levels every check shares: :data:`Z_MC` (Monte-Carlo tolerances are ``Z_MC`` standard errors) and
  :data:`KS_ALPHA` (the level of the one-sample KS tests, critical distance :func:`ks_threshold`).

(:func:`symsgd_core.rank_jumps.analysis.exponential_waiting_time` is the same censored estimate with a
normal-approximation standard error, the one Notebook 04 shows.)
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as _stats

from .validation import check_int

__all__ = ["KS_ALPHA", "Z95", "Z_MC", "bootstrap_quantiles", "censored_exponential", "ks_threshold", "mean_se",
           "wilson"]

#: The two-sided 95 % normal quantile.
Z95 = 1.959963984540054

#: Monte-Carlo tolerances are ``Z_MC`` standard errors (two-sided p ≈ 6e-5 per comparison).
Z_MC = 4.0

#: Level of the one-sample Kolmogorov–Smirnov tests of simulated laws against closed forms (two-sided).
KS_ALPHA = 1e-4


def ks_threshold(n: int) -> float:
    """The KS distance that ``n`` i.i.d. samples of the true law exceed with probability :data:`KS_ALPHA`."""
    return float(_stats.kstwo.ppf(1.0 - KS_ALPHA, check_int("n", n, minimum=1)))


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float, float]:
    """``(p̂, lo, hi)``: the Wilson score interval of ``k`` successes in ``n`` trials (NaN for n = 0)."""
    k, n = check_int("k", k, minimum=0), check_int("n", n, minimum=0)
    if k > n:
        raise ValueError(f"k must be <= n, got k={k}, n={n}")
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return p, max(0.0, centre - half), min(1.0, centre + half)


def censored_exponential(event_times, exposure_end, alpha: float = 0.05) -> dict:
    """Mean waiting time of an exponential law from right-censored runs, with its exact (1 − α) interval.

    Args:
        event_times: per run, the time of the event, or NaN (no event seen).
        exposure_end: per run (or one number), the end of the time at risk of a run without an event (the
            budget, or an earlier competing end such as a divergence).

    Returns:
        dict ``events, exposure, mean, lo, hi`` (``mean = hi = inf`` when no event was seen).
    """
    t = np.asarray(event_times, dtype=float)
    end = np.broadcast_to(np.asarray(exposure_end, dtype=float), t.shape)
    ev = np.isfinite(t)
    d = int(ev.sum())
    E = float(np.sum(np.where(ev, t, end)))
    if not E > 0:
        raise ValueError("the total time at risk must be > 0")
    lo_rate = _stats.chi2.ppf(alpha / 2, 2 * d) / (2 * E) if d > 0 else 0.0
    hi_rate = _stats.chi2.ppf(1 - alpha / 2, 2 * d + 2) / (2 * E)
    return {"events": d, "exposure": E, "mean": E / d if d else float("inf"),
            "lo": 1.0 / hi_rate, "hi": 1.0 / lo_rate if lo_rate > 0 else float("inf")}


def mean_se(x) -> tuple[float, float]:
    """Mean and standard error (ddof = 1) of the finite entries of ``x`` (NaN when there are too few)."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return float("nan"), float("nan")
    return float(x.mean()), (float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else float("nan"))


def bootstrap_quantiles(per_run_values, qs=(0.05, 0.5, 0.95), n_boot: int = 1000, seed: int = 0) -> dict:
    """Pooled quantiles of per-run samples, each with a run-level bootstrap 95 % interval.

    Returns:
        ``{q: (estimate, lo, hi)}``; empty when no run has a value.
    """
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    runs = [np.asarray(v, dtype=float) for v in per_run_values if len(v)]
    if not runs:
        return {}
    est = np.quantile(np.concatenate(runs), qs)
    boots = np.array([np.quantile(np.concatenate([runs[i] for i in rng.integers(0, len(runs), len(runs))]), qs)
                      for _ in range(check_int("n_boot", n_boot, minimum=1))])
    return {float(q): (float(e), float(np.quantile(boots[:, j], 0.025)), float(np.quantile(boots[:, j], 0.975)))
            for j, (q, e) in enumerate(zip(qs, est))}
