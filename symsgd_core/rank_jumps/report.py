"""Notebook 04's printed tables: one function per table, from the experiments' results and checks.

Each function returns a :class:`~symsgd_core.core.report.Report`: the table's text lines (``.lines()``, or
``str(report)``) and the values later cells use (``report["name"]``). Math is written in Unicode (``B₁``, ``sₖ²ᐟᴸ``,
``‖θᵢ − θ̂‖²``), never ``B_1`` or ``^(…)``; a subscript with no Unicode form is named in words ("the basin radius").
Bad input (a result without the runs or rows a table needs) raises ``ValueError`` naming what is missing.

This module imports the topic's public names from the package (``from . import …``), so import it as
``from symsgd_core.rank_jumps import report`` (the package first).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..core.checking import CheckResult, roundoff_tolerance
from ..core.report import Report
from . import (
    DEFAULT_RANK_TOL,
    EPSILON_EXPERIMENT,
    LANGEVIN_RANK_TOL,
    balancedness,
    basin_radius,
    distance_to_rank,
    in_B,
    min_norm_completion,
    numerical_rank,
)
from .analysis import loss_hessian_top_eigenvalue, sgd_imbalance_scale

__all__ = [
    "anneal_report",
    "basin_report",
    "eckart_young_report",
    "explosion_report",
    "langevin_report",
    "mechanism_report",
    "min_norm_report",
    "minima_report",
    "noise_report",
    "origin_report",
    "setup_report",
    "trap_report",
]

#: The ε of the minimum-norm table (§6): below, at and above the default ε.
MIN_NORM_TABLE_EPS = (0.1, 0.2, 0.3)


def _need(condition: bool, what: str) -> None:
    if not condition:
        raise ValueError(what)


def _matrix(A) -> str:
    """A small matrix on one line: ``[[1, 0.2], [5, 1]]``."""
    return "[" + ", ".join("[" + ", ".join(f"{x:g}" for x in row) + "]" for row in np.asarray(A)) + "]"


def setup_report(exp=EPSILON_EXPERIMENT) -> Report:
    """The ε-completion and the runs' settings (``exp``: an :class:`~.experiments.EpsilonExperiment`), said once."""
    problem = exp.problem
    observed = ", ".join(f"({i + 1},{j + 1})" for i, j in zip(*np.nonzero(problem.mask)))
    return Report([
        f"target A* = {_matrix(problem.target)}, observed entries {observed} (N = {problem.n_observed}); "
        f"network depth L = {exp.depth}, width {exp.width}",
        f"phase 0 (GD to a minimum): η = {exp.lr_phase0}, γ = {exp.weight_decay_hot}, {exp.phase0_steps} steps;  "
        f"hot phase: η = {exp.lr_hot}, γ = {exp.weight_decay_hot};  cold phase: η = {exp.lr_cold}, "
        f"γ = {exp.weight_decay_cold}",
        f"rank = number of singular values of A above {DEFAULT_RANK_TOL:g} (Langevin comparison: "
        f"{LANGEVIN_RANK_TOL:g})",
    ])


def trap_report(result, problem, lr: float = EPSILON_EXPERIMENT.lr_hot,
                weight_decay: float = EPSILON_EXPERIMENT.weight_decay_hot) -> Report:
    """§0's numbers that the GD-vs-SGD figure's status line does not give (``result``: a
    :class:`~.experiments.TrapResult`): every SGD run's jump step, GD's largest imbalance and the step ``η·λₘₐₓ``
    (``λₘₐₓ``: the top Hessian eigenvalue of 𝓛ᵧ at the start). Values: ``lam_max``."""
    gd, sgd = result.gd, result.sgd
    _need(sgd.n_runs > 0, "the trap result has no SGD run")
    lam_max = loss_hessian_top_eigenvalue(result.start, problem, weight_decay)
    return Report([
        f"SGD jump steps (−1: none): {sgd.jump_step(1).tolist()}",
        f"largest imbalance of GD: {gd.balancedness.max():.1e} (round-off: a GD minimum is balanced)",
        f"the step: η·λₘₐₓ = {lr} × {lam_max:.2f} = {lr * lam_max:.2f} (not small)",
    ], values={"lam_max": lam_max})


def minima_report(start, start_rank: int, rank_one, problem, imbalance: CheckResult,
                  lr: float = EPSILON_EXPERIMENT.lr_hot,
                  weight_decay: float = EPSILON_EXPERIMENT.weight_decay_hot) -> Report:
    """§0's fine print: the two minima (GD's ``start`` of rank ``start_rank``, ``rank_one``) and
    their Bᵣ membership and imbalance, SGD's mean imbalance at small η (``imbalance``:
    :func:`~.checks.check_sgd_imbalance`) and the layers' own scale. Values: ``layer_scales`` (rank-2, rank-1)."""
    rows = imbalance.details.get("rows")
    _need(bool(rows), "the imbalance check has no rows (details['rows'])")
    target_rank = int(numerical_rank(np.linalg.svd(problem.target, compute_uv=False)))
    scales = [sgd_imbalance_scale(p, problem, lr, weight_decay)["layer_scale"] for p in (start, rank_one)]
    lines = [
        f"rank of A* = {target_rank};  GD's minimum: rank {start_rank}, in B₁: {bool(in_B(start, 1)[0])}, "
        f"in B₂: {bool(in_B(start, 2)[0])};  the rank-1 minimum: in B₁: {bool(in_B(rank_one, 1)[0])}",
        f"imbalance at the two minima: {balancedness(start)[0]:.1e}, {balancedness(rank_one)[0]:.1e}",
    ]
    lines += [f"  η = {row['lr']}: mean imbalance {row['measured_mean']:.4f} in [{row['lower']:.4f}, "
              f"{row['upper']:.4f}] (mean/η = {row['measured_mean'] / row['lr']:.3f}: of order η)" for row in rows]
    lines.append(f"layer scale (largest Frobenius norm of WₗWₗᵀ) at the rank-2 and rank-1 minima: {scales[0]:.2f}, "
                 f"{scales[1]:.2f}")
    return Report(lines, values={"layer_scales": tuple(scales)})


def explosion_report(explosion: Sequence[CheckResult], as_printed: CheckResult, depth: int) -> Report:
    """Appendix: the explosion's distances (every other row of :func:`~.checks.check_explosion`'s first result) against
    ``L·i⁻²ᐟᴸ``, the fitted exponents, and the reply's formula as printed (``as_printed``)."""
    _need(len(explosion) > 0 and "i" in explosion[0].details, "the explosion check has no rows (details['i'])")
    d = explosion[0].details
    lines = [f"  i = {i:6.0f}:  ‖θᵢ − θ̂‖² = {dist:.4f} (L·i⁻²ᐟᴸ = {depth * i ** (-2 / depth):.4f}),  "
             f"‖Aᵢ − Â‖ = {dA:.2e}" for i, dist, dA in zip(d["i"][::2], d["dist_sq"][::2], d["dA"][::2])]
    lines += [f"fitted exponents: parameters {d['fitted_exponent']:.4f} (−2/L = {-2 / depth}), A "
              f"{d['dA_exponent']:.4f}",
              f"the reply's formula as printed: relative error {as_printed.measured:.4f} = L − 1 (the factor L it "
              "drops)"]
    return Report(lines)


def eckart_young_report(A) -> Report:
    """Appendix: the distance of ``A`` (GD's minimum, ``(2, 2)``) to the rank-1 matrices, in units of the rank
    threshold. Values: ``distance``."""
    dist, _ = distance_to_rank(A, 1)
    return Report([f"distance of GD's minimum to the rank-1 matrices: s₂ = {dist:.4f} = "
                   f"{dist / DEFAULT_RANK_TOL:.0f} × the rank threshold"], values={"distance": dist})


def origin_report(origin: CheckResult) -> Report:
    """Appendix: the L = 2 threshold and the origin's smallest Hessian eigenvalue per depth and γ (``origin``:
    :func:`~.checks.check_origin_condition`)."""
    _need("rows" in origin.details and "gamma_c" in origin.details,
          "the origin check has no rows or threshold (details['rows'], details['gamma_c'])")
    lines = [f"L = 2 threshold: γ = s₁(∇𝓛(0))/2 = {origin.details['gamma_c']:.4f} (s₁: the largest singular value "
             "of the fit's gradient in A at θ = 0)"]
    lines += [f"  L = {row['depth']}, γ = {row['weight_decay']:.4f}: smallest Hessian eigenvalue "
              f"{row['min_eig']:+.4f} (predicted {row['predicted']:+.4f}) → "
              f"{'minimum' if row['min_eig'] > 0 else 'saddle'}" for row in origin.details["rows"]]
    return Report(lines)


def mechanism_report(result, exponents, depth: int) -> Report:
    """§3, beyond the figure's status line: the ranks GD and SGD take at every record after the forced phase and
    the largest s₂(A) then (``result``: a :class:`~.experiments.MechanismResult`), and the per-layer exponents pₗ
    of the second singular values (``exponents``: :func:`~.checks.check_layer_decay`'s ``details['exponents']``)."""
    p = np.asarray(exponents, dtype=float)
    _need(p.size == depth, f"{p.size} exponents for depth {depth}")
    s2_after = max(result.gd.singular_values[..., 1].max(), result.sgd.singular_values[..., 1].max())
    return Report([
        f"after the forced phase: GD ranks {np.unique(result.gd.rank).tolist()}, SGD ranks "
        f"{np.unique(result.sgd.rank).tolist()} at every record; largest s₂(A): {s2_after:.2g}",
        f"per-layer exponents pₗ: {np.round(p, 5).tolist()}  sum = {p.sum():.3f} (L = {depth})",
    ])


def basin_report(result, depth: int = EPSILON_EXPERIMENT.depth,
                 weight_decay: float = EPSILON_EXPERIMENT.weight_decay_hot, shrink: float = 100.0) -> Report:
    """§4, beyond the figure's status line (which gives the radius, the fit slope and the measured edge): the
    first-order basin radius at γ/``shrink`` against the figure's (``result``: a :class:`~.experiments.BasinResult`).
    Values: ``radius_small``."""
    small = basin_radius(depth, weight_decay / shrink, result.slope)
    return Report([f"at γ/{shrink:g} the first-order basin radius is {small:.4f} = the figure's radius/"
                   f"{result.alpha_c / small:.0f} (it scales like γ¹ᐟ⁽ᴸ⁻²⁾, L = {depth})"],
                  values={"radius_small": small})


def anneal_report(small_eps: dict, jump_bound: float, ensemble=None, exp=EPSILON_EXPERIMENT) -> Report:
    """§6, beyond the figure's status line: the two minima at ε = 0.1 and the cold γ (``small_eps``:
    :func:`~.experiments.minima_losses`), and the one-sided bound ``jump_bound`` on the jump probability in the hot
    phase at ε = 0.1 (with the share of §2's ``ensemble``, at the default ε, that jumped)."""
    lower = "rank 1" if small_eps["rank1"] < small_eps["rank2"] else "rank 2"
    jumped = (f" (at ε = {exp.eps}: {np.mean(ensemble.jump_steps >= 0):.2f} of the runs jumped)"
              if ensemble is not None else "")
    return Report([
        f"at ε = 0.1, γ = {exp.weight_decay_cold}: rank-1 minimum {small_eps['rank1']:.5f}, rank-2 minimum "
        f"{small_eps['rank2']:.5f} (lower: {lower})",
        f"→ with 95% confidence a run jumps with probability < {jump_bound:.3f} within {exp.hot_steps} hot steps at "
        f"ε = 0.1{jumped}",
    ])


def min_norm_report(depth: int, sweep: Sequence[dict], eps: float = EPSILON_EXPERIMENT.eps,
                    eps_grid: Iterable[float] = (), table_eps: Iterable[float] = MIN_NORM_TABLE_EPS) -> Report:
    """§6's fine print: the rank-1 and best rank-2 completion's penalty and the minimum-norm rank per ε of
    ``table_eps``; on ``eps_grid`` the largest ε with rank 2 and the smallest with rank 1; and at ``eps``,
    𝓛ᵧ/γ of the two minima per cold γ of ``sweep`` (:func:`~.experiments.cold_weight_decay_sweep`) with their
    γ → 0 limits. Values: ``grid_ranks``."""
    _need(len(sweep) > 0, "the weight-decay sweep has no rows")
    lines = ["ε      rank-1 completion (x = 1/ε)   best rank-2 completion     minimum-norm rank"]
    for e in table_eps:
        mn = min_norm_completion(e, depth)
        r2 = (f"x = {mn['x_rank2']:.3f}: {mn['penalty_rank2']:.4f}" if np.isfinite(mn["penalty_rank2"])
              else "none (cusp only)")
        lines.append(f"{e:<6} {mn['penalty_rank1']:10.4f}                   {r2:<26} {mn['rank']}")
    grid = np.asarray(list(eps_grid), dtype=float)
    ranks = np.array([min_norm_completion(e, depth)["rank"] for e in grid], dtype=int)
    if grid.size:
        _need(bool(np.any(ranks == 2)) and bool(np.any(ranks == 1)), "the ε grid holds only one minimum-norm rank")
        lines.append(f"minimum-norm rank 2 for every grid ε ≤ {grid[ranks == 2].max():.2f}, rank 1 for every grid "
                     f"ε ≥ {grid[ranks == 1].min():.2f}")
    mn = min_norm_completion(eps, depth)
    lines += ["", f"ε = {eps}: 𝓛ᵧ/γ of the two minima as the cold γ → 0 (limits: {mn['penalty_rank1']:.3f} and "
                  f"{mn['penalty_rank2']:.3f})"]
    for row in sweep:
        winner = "rank 1" if row["rank1"] < row["rank2"] else "rank 2"
        lines.append(f"  γ = {row['weight_decay']:<7} rank 1: {row['rank1'] / row['weight_decay']:.3f}   rank 2: "
                     f"{row['rank2'] / row['weight_decay']:.3f}   lower: {winner}")
    return Report(lines, values={"grid_ranks": ranks})


def langevin_report(runs: dict, minima_hot: dict,
                    weight_decay: float = EPSILON_EXPERIMENT.weight_decay_hot) -> Report:
    """§5, beyond the figures' status lines: per Langevin temperature (``runs``: ``{label: LangevinResult}``, the
    matched one first) the first steps at rank ≤ 1 of SGD and Langevin; the two minima at the hot γ
    (``minima_hot``); and in the matched run SGD's median s₂(A) at rank 1 against round-off. Values:
    ``sgd_floor``, ``roundoff``."""
    _need(len(runs) > 0, "no Langevin result")
    lines = []
    for name, L in runs.items():
        first = {k: [int(r.steps[np.argmax(row <= 1)]) for row in r.rank if np.any(row <= 1)]
                 for k, r in (("SGD", L.sgd), ("Langevin", L.langevin))}
        lines.append(f"{name:>10}: first step at rank ≤ 1: {first}")
    relation = "<" if minima_hot["rank1"] < minima_hot["rank2"] else "≥"
    lines.append(f"at γ = {weight_decay}: rank-1 minimum {minima_hot['rank1']:.4f} {relation} rank-2 minimum "
                 f"{minima_hot['rank2']:.4f}")
    sgd = next(iter(runs.values())).sgd
    s2 = sgd.singular_values[..., 1][sgd.rank == 1]
    floor = roundoff_tolerance(sgd.singular_values[..., 0].max())
    med = float(np.median(s2)) if s2.size else float("nan")
    lines.append(f"median s₂(A) of SGD at rank 1: {med:.1e} (round-off level {floor:.1e}; Langevin's noise floor is "
                 "in its status line)")
    return Report(lines, values={"sgd_floor": med, "roundoff": floor})


def noise_report(near: dict, at_rank2: dict, minima_by_decay: dict, eps: float = 0.1) -> Report:
    """§5's fine print: the share of SGD's per-step noise η²C on rank-raising directions per push a (``near``:
    :func:`~.analysis.raising_noise_near`), the rank of C at the rank-2 minimum (``at_rank2``), and the two minima
    at ``eps`` per γ (``minima_by_decay``: ``{γ: minima_losses(eps, γ)}``)."""
    _need(len(near.get("a", ())) > 0, "no push a in the raising-noise rows")
    lines = [f"  push a = {a:.2f}: share of η²C on rank-raising directions {share:.2e}"
             for a, share in zip(near["a"], near["share"])]
    lines.append(f"rank of C at the rank-2 minimum: {int(at_rank2['rank_C'][0])} "
                 "(at most N − 1: the artefact)")
    lines += [f"ε = {eps}, γ = {g}: rank-1 minimum {m['rank1']:.4f}, rank-2 minimum {m['rank2']:.4f}"
              for g, m in minima_by_decay.items()]
    return Report(lines)
