"""Command line: ``python -m symsgd_core check``, ``python -m symsgd_core bench``,
``python -m symsgd_core sweep NAME`` (makes a shipped precomputed grid) and ``python -m symsgd_core warm``
(compiles every numba kernel into its on-disk cache; the set-up step runs it)."""

from __future__ import annotations

import argparse
import json
import sys
import time


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


def _json_safe(value):
    """Plain JSON values: arrays become lists, and non-finite floats (a failed check may
    measure inf or NaN) become the strings "inf", "-inf", "nan", so the output is strict JSON."""
    import math

    import numpy as np

    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def _check(args) -> int:
    from . import run_checks
    from .core.checking import PRECONDITION_NOT_MET, format_value, threshold_text

    t0 = time.perf_counter()
    results = run_checks(seed=args.seed, names=args.only or None)
    elapsed = time.perf_counter() - t0
    if args.json:
        print(json.dumps(_json_safe([r.as_dict() for r in results]), indent=1, default=str, allow_nan=False))
    else:
        rows = [[r.name, r.claim if len(r.claim) <= 70 else r.claim[:67] + "...",
                 "-" if r.precondition else format_value(r.measured),
                 "-" if r.precondition else threshold_text(r.relation, r.tolerance), r.outcome] for r in results]
        print(_table(rows, ["check", "claim", "measured", "tolerance", "result"]))
        for r in results:
            if r.precondition:
                print(f"\n{PRECONDITION_NOT_MET} {r.name}: {r.precondition}\n  so this claim was not tested: "
                      f"{r.claim}\n  details: {r.details}")
            elif not r.passed:
                print(f"\nFAILED {r.name}: {r.claim}\n  tolerance from: {r.tolerance_source}\n  details: {r.details}")
        n_pre = sum(bool(r.precondition) for r in results)
        n_fail = sum(not r.passed for r in results) - n_pre
        untested = f", {n_pre} not tested (precondition not met)" if n_pre else ""
        print(f"\n{len(results) - n_fail - n_pre} passed, {n_fail} failed{untested} in {elapsed:.1f} s "
              f"(seed {args.seed})")
    # the policy for every result that did not pass, an unmet precondition included: the claim went untested
    return 1 if any(not r.passed for r in results) or not results else 0


def _bench(args) -> int:
    from .benchmarks import run_benchmarks

    rows = run_benchmarks(args.only or None)
    if args.json:
        print(json.dumps([r.as_dict() for r in rows], indent=1))
    else:
        table = [[r.name, f"{r.figure:.4g} {r.unit}", f"{r.baseline:.4g} {r.unit}", f"{r.ratio:.1f}x",
                  r.target, "yes" if r.met else "NO"] for r in rows]
        print(_table(table, ["benchmark", "figure", "baseline", "ratio", "target", "met"]))
    return 0


def _warm(args) -> int:
    from .warm import warm_kernels

    seconds = warm_kernels(log=print)
    print(f"{'total':34s} {sum(seconds.values()):6.1f} s")
    return 0


def _sweep(args) -> int:
    from .sde_noise.experiments import write_grid

    client = None
    if args.scheduler:
        from dask.distributed import Client  # the optional extra ``sweep``

        client = Client(args.scheduler)

    def progress(fraction: float) -> None:
        print(f"\r{100 * fraction:5.1f} % of a task group done", end="", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    try:
        path = write_grid(args.name, args.out, client=client, n_workers=args.workers, cache_dir=args.cache,
                          progress=progress, reuse=args.reuse)
    finally:
        if client is not None:
            client.close()
    print(f"\nwrote {path} in {time.perf_counter() - t0:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m symsgd_core", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check", help="run every proofs-as-code check; exit 1 if any fails or "
                       "could not be tested (precondition not met)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print results as JSON")
    p.add_argument("--only", nargs="*", help="run only these check names")
    p.set_defaults(func=_check)
    b = sub.add_parser("bench", help="run the benchmarks and print figure, baseline, ratio, target")
    b.add_argument("--json", action="store_true", help="print results as JSON")
    b.add_argument("--only", nargs="*", help="run only benchmarks whose name starts with these")
    b.set_defaults(func=_bench)
    k = sub.add_parser("warm", help="compile every numba kernel into its on-disk cache (seconds per engine)")
    k.set_defaults(func=_warm)
    w = sub.add_parser("sweep", help="run a named parameter sweep and write its grid file (e.g. sde05: Notebook 05)")
    w.add_argument("name", help="the grid: sde05 (Notebook 05's shipped grid) or tiny (seconds)")
    w.add_argument("--out", default=None, help="output JSON (default: the package's data_files/)")
    w.add_argument("--workers", type=int, default=None, help="local processes (default: every core; 1: serial)")
    w.add_argument("--cache", default=None, help="directory of the on-disk task cache (finished tasks are kept)")
    w.add_argument("--scheduler", default=None, help="address of a dask.distributed scheduler to run on instead")
    w.add_argument("--reuse", default=None, help="a stored grid JSON: its tasks with identical parameters are kept, "
                   "only new tasks run")
    w.set_defaults(func=_sweep)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
