"""What notebook 01's §5 figures show: a run of :mod:`.experiments` with its :class:`~symsgd_core.core.results.Outcome`,
whose numbers are the claims' own (:mod:`.claims`): §5a :func:`rank1_view`, §5b :func:`relu_balance_view`.

It sits above both: the claims read the experiments' runs, and an outcome quotes the claims, so neither of those two
modules imports the other's reader.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from ..core.results import Outcome
from .claims import rank1_claims, relu_balance_claims, traces_met
from .experiments import (
    RELU_SMALL,
    Rank1BalanceRun,
    ReLUBalanceRun,
    rank1_balance,
    relu_balance_run,
    shipped_relu_balance,
)

__all__ = ["RANK1_OUTCOMES", "RELU_BALANCE_OUTCOMES", "RELU_LIVE_CHUNKS", "ReLUBalanceView", "rank1_outcome",
           "rank1_view", "relu_balance_outcome", "relu_balance_view"]


#: The outcomes of §5a (:func:`rank1_outcome`).
RANK1_OUTCOMES = ("all_diverged", "some_diverged", "compared")


def rank1_outcome(run: Rank1BalanceRun) -> Outcome:
    """§5a's outcome: ``all_diverged`` (number ``runs``: how many were started), ``some_diverged`` (number
    ``diverged``: left out) or ``compared`` (both failures but the last). Unless every run diverged, numbers of the
    noise-balance claim over the last part of the mean run (:func:`~.claims.rank1_claims`): ``trace_ratio``,
    ``predicted_ratio`` (the law's, from G's drift), ``traces_met`` (the traces within
    :data:`~.claims.TRACES_MET_FACTOR` of each other) and ``norm_ratio`` (‖u‖²/‖w‖² at the end)."""
    if run.runs.G.shape[1] == 0:
        return Outcome("all_diverged", True, {"runs": int(run.settings["runs"])})
    nb = rank1_claims(run)[0].details
    numbers = {"trace_ratio": nb["trace_ratio"], "predicted_ratio": nb["predicted_ratio"],
               "traces_met": bool(traces_met(nb["trace_ratio"])),
               "norm_ratio": float(run.mean.u_sq[-1] / run.mean.w_sq[-1])}
    if run.diverged:
        return Outcome("some_diverged", True, {**numbers, "diverged": int(run.diverged)})
    return Outcome("compared", False, numbers)

@functools.wraps(rank1_balance, assigned=("__module__", "__annotations__"))
def rank1_view(*args, **kwargs) -> Rank1BalanceRun:
    """§5a's figure: :func:`~.experiments.rank1_balance` (same arguments) with its outcome (:func:`rank1_outcome`)."""
    run = rank1_balance(*args, **kwargs)
    return replace(run, outcome=rank1_outcome(run))


@dataclass(frozen=True, eq=False)
class ReLUBalanceView:
    """§5b's figure: the shipped paper-size ReLU run and a small one simulated now, over the last ``window``.

    Attributes:
        paper: the shipped run (None: its file is missing).  live: the small run (:data:`RELU_SMALL` with the
            sliders).  window: the fraction of each run the ratios average over.
        outcome: :func:`relu_balance_outcome`.
    """

    paper: ReLUBalanceRun | None
    live: ReLUBalanceRun
    window: float
    outcome: Outcome


#: The outcomes of §5b (:func:`relu_balance_outcome`).
RELU_BALANCE_OUTCOMES = ("compared", "paper_missing", "live_diverged")


def relu_balance_outcome(paper: ReLUBalanceRun | None, paper_error: str | None, live: ReLUBalanceRun,
                         window: float) -> Outcome:
    """§5b's outcome: ``live_diverged`` (the live run diverged; a failure), ``paper_missing`` (the shipped file is
    missing; a failure) or ``compared``. Numbers: per run (prefix ``paper_``, ``live_``) where it exists and did not
    diverge, ``trace_ratio`` (mean Tr_u / mean Tr_w over the window), ``predicted_ratio`` (the law's, from G's drift)
    and ``norm_ratio`` (‖u‖²/‖w‖² at the end) (:func:`~.claims.relu_balance_claims`); for the paper run also
    ``paper_quartiles`` (the middle half of the neurons' trace ratios) and ``paper_dead`` (dead neurons). Label, where
    the file is missing: ``paper_error`` (why, in words)."""
    numbers: dict = {}
    labels: dict = {}
    for prefix, run in (("paper_", paper), ("live_", None if live.diverged else live)):
        if run is not None:
            nb, norms = relu_balance_claims(run, window)
            numbers.update({prefix + "trace_ratio": nb.details["trace_ratio"],
                            prefix + "predicted_ratio": nb.details["predicted_ratio"],
                            prefix + "norm_ratio": norms.details["norm_ratio"]})
    if paper is not None:
        numbers.update(paper_quartiles=paper.neuron_ratio_quartiles, paper_dead=paper.dead_neurons)
    else:
        labels["paper_error"] = paper_error
    if live.diverged:
        return Outcome("live_diverged", True, numbers, labels)
    return (Outcome("paper_missing", True, numbers, labels) if paper is None
            else Outcome("compared", False, numbers, labels))


#: The live run's record chunks (progress is reported after each).
RELU_LIVE_CHUNKS = 5


def relu_balance_view(window: float = 0.25, hidden: int = RELU_SMALL["hidden"], lr: float = RELU_SMALL["lr"],
                      steps: int = RELU_SMALL["steps"], seed: int = 0, data_path=None, cache: dict | None = None,
                      progress=None) -> ReLUBalanceView:
    """§5b: the shipped run at ``data_path`` (None: the package's) and :func:`relu_balance_run` at :data:`RELU_SMALL`
    with ``hidden``, ``lr``, ``steps``, ``seed``, compared over the last ``window``. ``cache``: a dict the caller
    keeps between calls, holding the last live run by its settings (a change of ``window`` alone re-simulates
    nothing); ``progress`` gets the live run's fraction done."""
    paper, paper_error = shipped_relu_balance(data_path)
    key = (int(hidden), float(lr), int(steps), int(seed))
    cache = {} if cache is None else cache
    if key not in cache:
        cache.clear()
        cache[key] = relu_balance_run(**{**RELU_SMALL, "hidden": int(hidden), "lr": float(lr), "steps": int(steps),
                                         "seed": int(seed)}, chunks=RELU_LIVE_CHUNKS, progress=progress)
    live = cache[key]
    return ReLUBalanceView(paper, live, float(window), relu_balance_outcome(paper, paper_error, live, window))
