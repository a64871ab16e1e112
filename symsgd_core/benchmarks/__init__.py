"""Benchmarks, run by ``python -m symsgd_core bench``. One module per area."""

from . import engine, rank_jumps, sde_noise, stationary, ui_balance, ui_lifting, ui_rank_jumps  # noqa: F401  (registers them)
from .registry import BenchResult, best_time, register_benchmark, registered_benchmarks, run_benchmarks

__all__ = ["BenchResult", "best_time", "register_benchmark", "registered_benchmarks", "run_benchmarks"]
