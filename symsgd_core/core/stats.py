"""Error bars used by the experiments, defined once: proportions, censored waiting times, per-run means, quantiles.

* :func:`wilson` — Wilson score interval of a proportion (95 %);
* :func:`censored_exponential` — the mean of an exponential waiting time from right-censored runs (type I):
  rate = events / time at risk, exact Poisson (Garwood) interval on the rate, inverted for the mean, and the
  normal-approximation standard error ``mean/sqrt(events)`` (the one Notebook 04 shows);
  :func:`censored_exponential_ks` — its goodness of fit (KS against the law truncated at the budget);
  **no event is NaN**, and :func:`event_times` is the one conversion from the other markers (the compiled
  kernels' integer −1, None);
* :func:`mean_se` — mean ± standard error across independent runs;
* :func:`bootstrap_quantiles` — pooled quantiles with a run-level bootstrap interval;
* the two levels every check shares, defined in :mod:`.conventions` and re-exported here: :data:`Z_MC`
  (Monte-Carlo tolerances are ``Z_MC`` standard errors) and :data:`KS_ALPHA` (the level of the one-sample KS
  tests; critical distance :func:`ks_threshold`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as _stats

from .conventions import KS_ALPHA, Z_MC
from .validation import check_int

__all__ = ["KS_ALPHA", "Z95", "Z_MC", "bootstrap_quantiles", "censored_exponential", "censored_exponential_ks",
           "event_times", "ks_threshold", "mean_se", "wilson"]

#: The two-sided 95 % normal quantile.
Z95 = 1.959963984540054


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


def event_times(values) -> np.ndarray:
    """Per run, the time of the event as a float, NaN where there was none (a negative number — the compiled
    kernels' integer −1 —, None, NaN or ±inf in ``values``): the one conversion to the "no event" marker NaN."""
    a = np.asarray(values, dtype=object)
    t = np.array([np.nan if v is None else float(v) for v in a.ravel()], dtype=float).reshape(a.shape)
    seen = np.isfinite(t)
    seen[seen] = t[seen] >= 0
    t[~seen] = np.nan
    return t


def _observed(times) -> tuple[np.ndarray, np.ndarray]:
    """``(t, seen)``: ``times`` as floats and where an event was seen (finite); a negative time is an error."""
    t = np.asarray(times, dtype=float)
    seen = np.isfinite(t)
    if np.any(t[seen] < 0):
        raise ValueError("event times must be >= 0, NaN where there was no event (convert a −1 marker with "
                         "event_times)")
    return t, seen


def censored_exponential(times, exposure_end, alpha: float = 0.05) -> dict:
    """Mean waiting time of an exponential law from right-censored runs, with its exact (1 − α) interval.

    Args:
        times: per run, the time of the event (≥ 0), or NaN (no event seen; see :func:`event_times`).
        exposure_end: per run (or one number), the end of the time at risk of a run without an event (the
            budget, or an earlier competing end such as a divergence).

    Returns:
        dict ``events, exposure, mean, se, lo, hi``: ``mean`` = time at risk / events (the censored maximum-
        likelihood estimate), ``se = mean/sqrt(events)``; ``mean = se = hi = inf`` when no event was seen.
    Raises:
        ValueError: a negative event time, or no time at risk.
    """
    t, ev = _observed(times)
    end = np.broadcast_to(np.asarray(exposure_end, dtype=float), t.shape)
    d = int(ev.sum())
    E = float(np.sum(np.where(ev, t, end)))
    if not E > 0:
        raise ValueError("the total time at risk must be > 0")
    lo_rate = _stats.chi2.ppf(alpha / 2, 2 * d) / (2 * E) if d > 0 else 0.0
    hi_rate = _stats.chi2.ppf(1 - alpha / 2, 2 * d + 2) / (2 * E)
    mean = E / d if d else float("inf")
    return {"events": d, "exposure": E, "mean": mean, "se": mean / math.sqrt(d) if d else float("inf"),
            "lo": 1.0 / hi_rate, "hi": 1.0 / lo_rate if lo_rate > 0 else float("inf")}


def censored_exponential_ks(times, budget: float) -> dict:
    """Goodness of fit of event times to an exponential law, the runs without an event censored at ``budget``.

    Method (stated): the mean τ̂ is :func:`censored_exponential`'s; given an event within the budget T, an
    exponential time has the truncated law ``F(t) = (1 − e^{−t/τ̂}) / (1 − e^{−T/τ̂})`` on [0, T], and the
    observed times are compared with it by a one-sample Kolmogorov–Smirnov test. Estimating τ̂ from the same data
    makes the KS p-value conservative (too large); the test's power is that of n observed events.

    Args:
        times: per run, the event time (≥ 0, ≤ ``budget``) or NaN (none; see :func:`event_times`).
        budget: the common end of every run's time at risk.
    Returns:
        dict: ``statistic``, ``pvalue``, ``tau``, ``n_jumped`` (runs with an event), ``n_censored``.
    Raises:
        ValueError: fewer than 3 observed events (nothing to test), a negative time or budget ≤ 0.
    """
    t, seen = _observed(times)
    T = float(budget)
    if not T > 0:
        raise ValueError(f"budget must be > 0, got {budget!r}")
    n = int(seen.sum())
    if n < 3:
        raise ValueError(f"need at least 3 observed events for a goodness-of-fit test, got {n}")
    tau = censored_exponential(t, T)["mean"]
    norm = -np.expm1(-T / tau)
    res = _stats.kstest(t[seen], lambda x: -np.expm1(-np.asarray(x) / tau) / norm)
    return {"statistic": float(res.statistic), "pvalue": float(res.pvalue), "tau": float(tau), "n_jumped": n,
            "n_censored": int((~seen).sum())}


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
