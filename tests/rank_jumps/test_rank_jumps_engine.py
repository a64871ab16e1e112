"""Tests of the deep-linear-network engine (symsgd_core.rank_jumps: network, problems, engine, stepping)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symsgd_core import dln, rank_jumps, sde_noise
from symsgd_core.benchmarks import rank_jumps as bench
from symsgd_core.core.checking import EPS64
from symsgd_core.dln.engine import build_result

EXP = rank_jumps.EPSILON_EXPERIMENT


@pytest.fixture(scope="module")
def eps_problem():
    return rank_jumps.epsilon_completion(0.2)


@pytest.fixture(scope="module")
def phase0_8():
    """Phase-0 GD minima (Notebook 04's starting points) of 8 runs."""
    return rank_jumps.phase0_minima(n_runs=8)


def _roundoff(params: rank_jumps.Params, n_steps: int) -> float:
    """Round-off budget of compiled vs reference after ``n_steps``: 64·eps·steps·width·max|θ|.

    Each step sums ≤ width products per entry in a different order (SIMD vs BLAS);
    over a few hundred steps at these learning rates errors add up, they are not amplified.
    """
    width = max(params.arch.dims)
    return 64 * EPS64 * max(n_steps, 1) * width * max(1.0, float(np.abs(params.flat).max()))


# --------------------------------------------------------------------------- network & problems
def test_architecture_and_layout():
    arch = rank_jumps.make_architecture((3, 2), depth=3, width=5)
    assert arch.dims == (2, 5, 5, 3)
    assert arch.layer_shapes == [(5, 2), (5, 5), (3, 5)]
    assert arch.n_params == 10 + 25 + 15
    p = rank_jumps.init_params(arch, 4, seed=1)
    assert p.flat.shape == (4, 50)
    W = p.layers()
    A = W[2] @ W[1] @ W[0]
    np.testing.assert_allclose(p.end_to_end(), A, rtol=1e-14)
    back = rank_jumps.Params.from_layers(W)
    np.testing.assert_array_equal(back.flat, p.flat)


def test_init_is_fan_in_gaussian_and_reproducible():
    arch = rank_jumps.make_architecture((2, 2), 3, 200)
    p = rank_jumps.init_params(arch, 2, seed=3)
    # middle layer 200×200 ~ N(0, 1/200): sample variance within 4 standard errors
    w = p.layer(1)[0].ravel()
    se = np.sqrt(2.0 / w.size) / 200
    assert abs(w.var() - 1 / 200) < 4 * se
    np.testing.assert_array_equal(p.flat, rank_jumps.init_params(arch, 2, seed=3).flat)
    # run r does not depend on how many runs are drawn
    np.testing.assert_array_equal(rank_jumps.init_params(arch, 5, seed=3).flat[:2], p.flat)


@pytest.mark.parametrize("depth", [0, -1])
def test_depth_below_one_is_an_error(depth):
    with pytest.raises(ValueError, match="depth"):
        rank_jumps.make_architecture((2, 2), depth, 4)


def test_problems(eps_problem):
    assert eps_problem.n_observed == 3
    np.testing.assert_array_equal(eps_problem.mask, [[True, True], [False, True]])
    assert np.linalg.matrix_rank(eps_problem.target) == 1
    rp = dln.problems.random_low_rank_completion((6, 5), 2, 0.5, seed=0)
    assert np.linalg.matrix_rank(rp.target) == 2 and rp.mask.any()
    with pytest.raises(ValueError, match="no observed entries"):
        rank_jumps.CompletionProblem(np.ones((2, 2)), np.zeros((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="eps"):
        rank_jumps.epsilon_completion(0.0)
    with pytest.raises(ValueError, match="observed_fraction"):
        dln.problems.random_low_rank_completion((3, 3), 1, 0.0)
    np.testing.assert_array_equal(eps_problem.row_entries([0]), [[True, True], [False, False]])


@settings(max_examples=15, deadline=None)
@given(depth=st.integers(1, 4), m=st.integers(1, 3), n=st.integers(1, 3), seed=st.integers(0, 1000))
def test_gradient_matches_finite_differences(depth, m, n, seed):
    problem = dln.problems.random_low_rank_completion((m, n), 1, 0.8, seed=seed)
    arch = rank_jumps.make_architecture((m, n), depth, 3)
    p = rank_jumps.init_params(arch, 1, seed)
    weight_decay = 0.05
    g = rank_jumps.gradient(p, problem, weight_decay).flat[0]
    h = 1e-6
    fd = np.empty_like(g)
    for k in range(g.size):
        e = np.zeros_like(p.flat)
        e[0, k] = h
        fd[k] = (dln.problems.loss(rank_jumps.Params(arch, p.flat + e), problem, weight_decay)[0]
                 - dln.problems.loss(rank_jumps.Params(arch, p.flat - e), problem, weight_decay)[0]) / (2 * h)
    # central differences: O(h²)·(third derivative) + eps·loss/h
    np.testing.assert_allclose(g, fd, atol=1e-6 * (1 + np.abs(g).max()))


def test_balanced_factorisation_and_induced_penalty():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(3, 4))
    for depth in (1, 2, 3, 5):
        arch = rank_jumps.make_architecture((3, 4), depth, 4)
        theta = dln.network.balanced_factorisation(A, arch, seed=depth)
        np.testing.assert_allclose(theta.end_to_end()[0], A, atol=1e-13)
        assert rank_jumps.balancedness(theta)[0] < 1e-13
        np.testing.assert_allclose(theta.norm_sq()[0], dln.network.induced_penalty(A, depth), rtol=1e-13)
    with pytest.raises(ValueError, match="rank"):
        dln.network.balanced_factorisation(A, rank_jumps.make_architecture((3, 4), 3, 2))


def test_numerical_rank_threshold_is_stated():
    assert rank_jumps.DEFAULT_RANK_TOL == 1e-3
    ranks = rank_jumps.numerical_rank([[1.0, 2e-3], [1.0, 5e-4], [0, 0], [np.nan, 1]])
    np.testing.assert_array_equal(ranks, [2, 1, 0, -1])


def test_B_r_membership(phase0_8):
    # rank-2 minimum: every layer has s₂ ≈ 0.33^{1/4} ≈ 0.76 > α, so it is in B_2 only
    assert rank_jumps.in_B(phase0_8, 2).all()
    assert not rank_jumps.in_B(phase0_8, 1).any()
    crit = dln.network.BrCriterion(C=1.0)
    assert not rank_jumps.in_B(phase0_8, 2, crit).any()  # ‖θ‖² ≈ 7.4 > C
    with pytest.raises(ValueError):
        dln.network.BrCriterion(alpha=0)


# --------------------------------------------------------------------------- compiled path vs reference
CASES = [
    dict(method="sgd"),
    dict(method="sgd", batch_size=3),
    dict(method="gd"),
    dict(method="langevin", temperature=1e-3),
    dict(method="forced", entries="row0"),
]


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c["method"] + str(c.get("batch_size", "")))
def test_compiled_path_matches_reference_step_for_step(depth, case):
    problem = dln.problems.random_low_rank_completion((3, 2), 1, 0.7, seed=depth)
    arch = rank_jumps.make_architecture(problem.shape, depth, 4)
    p = rank_jumps.init_params(arch, 3, depth)
    kw = dict(case)
    if kw.get("entries") == "row0":
        kw["entries"] = problem.row_entries([0])
    n = 60
    compiled = rank_jumps.run(p, problem, n, lr=0.05, weight_decay=0.02, record_every=1, seed=5, **kw,
                              engine="compiled")
    ref = rank_jumps.run(p, problem, n, lr=0.05, weight_decay=0.02, record_every=1, seed=5, **kw, engine="reference")
    tol = _roundoff(p, n)
    np.testing.assert_allclose(compiled.final.flat, ref.final.flat, rtol=0, atol=tol)
    np.testing.assert_allclose(compiled.singular_values, ref.singular_values, rtol=0, atol=tol)
    np.testing.assert_allclose(compiled.norm_sq, ref.norm_sq, rtol=0, atol=tol * compiled.norm_sq.max())
    np.testing.assert_array_equal(compiled.steps, np.arange(n + 1))


def test_compiled_path_matches_reference_with_schedules(eps_problem, phase0_8):
    p = phase0_8.select(slice(0, 3))
    Schedule = rank_jumps.Schedule
    for sched in (Schedule.anneal(40, 0.3, 0.027, 0.05, 0.01), Schedule.cyclic(0.05, 0.3, 16, 0.027)):
        compiled = rank_jumps.run(p, eps_problem, 100, schedule=sched, record_every=10, seed=2, engine="compiled")
        ref = rank_jumps.run(p, eps_problem, 100, schedule=sched, record_every=10, seed=2, engine="reference")
        np.testing.assert_allclose(compiled.final.flat, ref.final.flat, rtol=0, atol=_roundoff(p, 100))
        lr, _ = sched.values(100)
        np.testing.assert_allclose(compiled.times[-1], lr.sum())


def test_draws_do_not_depend_on_recording_or_ensemble_size(eps_problem, phase0_8):
    a = rank_jumps.run(phase0_8, eps_problem, 3000, lr=0.3, weight_decay=0.027, seed=9, record_every=100)
    b = rank_jumps.run(phase0_8, eps_problem, 3000, lr=0.3, weight_decay=0.027, seed=9, record_every=7,
                       record_layers=False)
    c = rank_jumps.run(phase0_8.select([2, 3]), eps_problem, 3000, lr=0.3, weight_decay=0.027, seed=9,
                       record_every=3000)
    np.testing.assert_array_equal(a.final.flat, b.final.flat)
    # run r uses child r of SeedSequence(seed): a sub-ensemble [2, 3] re-uses children 0, 1
    d = rank_jumps.run(phase0_8.select([0, 1]), eps_problem, 3000, lr=0.3, weight_decay=0.027, seed=9,
                       record_every=3000)
    np.testing.assert_array_equal(d.final.flat, a.final.flat[:2])
    assert c.final.flat.shape == (2, EXP.arch.n_params)
    assert b.steps[-1] == 3000 and b.steps[0] == 0


# The kernels run the ensemble's runs in parallel blocks (one per numba thread). Digests of
# (final θ, diverged_step) computed with the serial kernels of before (commit 60b3471) for fixed seeds: the
# parallel kernels must reproduce them bit for bit, whatever the thread count and the partition into blocks.
SERIAL_DIGESTS = {
    "sgd1": "48550ad4af221c4b",  # batch 1, L = 4, 8 runs, 7 of them diverge
    "sgd1_long": "aba6ec5ec645002a",
    "sgdb2": "1916c6b8a4acf9ee",
    "sgd_L1": "1b29ac2b9b48b06b",
    "forced": "b838707cad7b54b4",
    "gd": "abed8116fb0b7e3b",
    "langevin": "4ed27e4ce32e3d36",
}


def _digest(res) -> str:
    import hashlib

    h = hashlib.sha256(np.ascontiguousarray(res.final.flat).tobytes())
    h.update(res.diverged_step.astype(np.int64).tobytes())
    return h.hexdigest()[:16]


def _digest_cases(eps_problem, phase0_8):
    s5 = phase0_8.select([0, 1, 2, 3, 4])
    p1 = rank_jumps.init_params(rank_jumps.make_architecture((2, 2), 1, 8), 5, 1)
    hot = dict(lr=EXP.lr_hot, weight_decay=EXP.weight_decay_hot)
    return {
        "sgd1": lambda: rank_jumps.run(phase0_8, eps_problem, 500, lr=0.8, weight_decay=EXP.weight_decay_hot, seed=1,
                                       record_every=50),
        "sgd1_long": lambda: rank_jumps.run(phase0_8, eps_problem, 3000, seed=3, record_every=100, **hot),
        "sgdb2": lambda: rank_jumps.run(s5, eps_problem, 1000, seed=2, batch_size=2, record_every=100, **hot),
        "sgd_L1": lambda: rank_jumps.run(p1, eps_problem, 1000, lr=0.1, weight_decay=0.01, seed=2, record_every=100),
        "forced": lambda: rank_jumps.run(s5, eps_problem, 1000, method="forced", entries=eps_problem.row_entries([0]),
                                         seed=4, record_every=100, **hot),
        "gd": lambda: rank_jumps.run(s5, eps_problem, 500, method="gd", record_every=100, **hot),
        "langevin": lambda: rank_jumps.run(s5, eps_problem, 500, method="langevin", temperature=1e-3, seed=5,
                                           record_every=100, **hot),
    }


@pytest.mark.parametrize("blocks", [1, 2, 3, 8])
def test_parallel_kernels_reproduce_the_serial_engine_bit_for_bit(eps_problem, phase0_8, blocks, monkeypatch):
    """Any partition of the runs into blocks (what the thread count decides) gives the serial engine's bits."""
    from symsgd_core.dln import _kernels

    monkeypatch.setattr(_kernels, "n_blocks", lambda n_runs: min(blocks, n_runs))
    for name, case in _digest_cases(eps_problem, phase0_8).items():
        assert _digest(case()) == SERIAL_DIGESTS[name], name


@pytest.mark.parametrize("blocks", [1, 2])
def test_fixed_shape_kernel_reproduces_the_serial_engine_bit_for_bit(eps_problem, phase0_8, blocks, monkeypatch):
    """The engine stepping every batch-1 run with the kernel compiled for the network's widths gives the digests of
    the serial engine of before (divergences, forced sampling and the long run included), on one block and two."""
    from symsgd_core.dln import _kernels

    monkeypatch.setattr(_kernels, "n_blocks", lambda n_runs: min(blocks, n_runs))
    monkeypatch.setattr(_kernels, "use_fixed_shape", lambda shape, work: True)
    calls = []
    original = _kernels.fixed_shape_kernel
    monkeypatch.setattr(_kernels, "fixed_shape_kernel", lambda shape, parallel: calls.append(shape) or original(
        shape, parallel))
    cases = _digest_cases(eps_problem, phase0_8)
    for name in ("sgd1", "sgd1_long", "forced"):
        assert _digest(cases[name]()) == SERIAL_DIGESTS[name], name
    assert calls == [(2, EXP.width, 2, EXP.depth)] * 3  # it was the fixed-shape kernel that stepped


@pytest.mark.parametrize("shape", [(2, 8, 2, 4), (3, 4, 2, 2), (2, 5, 3, 3)])
def test_fixed_shape_kernel_gives_the_generic_kernels_bits(shape, monkeypatch):
    """Both batch-1 kernels on the same draws: a schedule, a start step off the flush period, runs that diverge
    and a run frozen on entry give the same parameters, snapshots (NaN after divergence) and divergence steps, to
    the bit and the sign of zero, whatever the blocks."""
    from symsgd_core.dln import _kernels
    from symsgd_core.dln.stepping import DIVERGENCE_RESIDUAL, flush_threshold

    n, w, m, depth = shape
    problem = dln.problems.random_low_rank_completion((m, n), 1, 0.7, seed=depth)
    arch = rank_jumps.make_architecture(problem.shape, depth, w)
    assert _kernels.fixed_shape(arch.dims) == shape
    R, T = 9, 700
    p = rank_jumps.init_params(arch, R, 3)
    rows, cols = (a.astype(np.int64) for a in np.nonzero(problem.mask))
    vals = problem.target[rows, cols].astype(np.float64)
    rng = np.random.default_rng(sum(shape))
    idx = rng.integers(0, rows.size, size=(R, T, 1))
    lr = np.where(np.arange(T) < 400, 0.05, 0.02) * rng.uniform(1.0, 1.5, T)
    weight_decay = np.full(T, 0.027)
    rec_pos = np.arange(9, T + 1, 9, dtype=np.int64)
    out = {}
    for blocks in (1, 3):
        monkeypatch.setattr(_kernels, "n_blocks", lambda n_runs, b=blocks: min(b, n_runs))
        for fixed in (False, True):
            theta, div_step = p.flat.copy(), np.full(R, -1, dtype=np.int64)
            theta[:2] *= 6.0  # runs 0 and 1 start far out: they diverge
            div_step[4] = 0  # frozen on entry
            snaps = np.empty((R, rec_pos.size, arch.n_params))
            _kernels.sgd_chunk(theta, np.asarray(arch.dims, dtype=np.int64), arch.offsets, rows, cols, vals, idx, lr,
                               weight_decay, rec_pos, snaps, div_step, 37, DIVERGENCE_RESIDUAL,
                               flush_threshold(depth), fixed=fixed)
            out[blocks, fixed] = (theta, snaps, div_step)
    generic = out[1, False]
    assert np.sum(generic[2] > 0) == 2, "runs 0 and 1, and only they, must diverge for this test to mean something"
    for key, got in out.items():
        for a, b in zip(got, generic):
            np.testing.assert_array_equal(a, b, err_msg=str(key))
            np.testing.assert_array_equal(np.signbit(a), np.signbit(b), err_msg=str(key))


def test_fixed_shape_and_when_the_engine_uses_it(monkeypatch):
    from symsgd_core.dln import _kernels

    assert _kernels.fixed_shape((2, 8, 8, 8, 2)) == (2, 8, 2, 4)
    assert _kernels.fixed_shape(np.array([3, 5, 4])) == (3, 5, 4, 2)
    assert _kernels.fixed_shape((2, 8, 4, 2)) is None  # hidden widths differ
    assert _kernels.fixed_shape((2, 2)) is None  # depth 1
    with pytest.raises(ValueError, match="L >= 2"):
        _kernels._fixed_shape_source(2, 8, 2, 1, False)
    monkeypatch.setattr(_kernels, "_FIXED_KERNELS", {})
    shape = (2, 7, 2, 5)
    assert not _kernels.use_fixed_shape(shape, _kernels.FIXED_SHAPE_MIN_WORK - 1)
    assert _kernels.use_fixed_shape(shape, _kernels.FIXED_SHAPE_MIN_WORK)
    kernel = _kernels.fixed_shape_kernel(shape, False)  # made (not compiled yet): this process has it now
    assert _kernels.fixed_shape_kernel(shape, False) is kernel and kernel.targetoptions.get("nogil") is True
    assert _kernels.use_fixed_shape(shape, 1) and not _kernels.use_fixed_shape((2, 7, 2, 4), 1)


def test_prefetched_draws_in_many_chunks_reproduce_the_serial_engine(eps_problem, phase0_8, monkeypatch):
    """The engine draws the next chunk's random numbers in a background thread while the kernel steps the
    current chunk. With chunks of a few steps (many prefetched draws) the numbers are still the serial engine's."""
    import threading

    from symsgd_core.dln import engine, stepping

    monkeypatch.setattr(engine, "_CHUNK_ELEMENTS", 5 * 8 * EXP.arch.n_params)  # langevin: 5 steps per chunk
    threads = set()
    original = stepping.prefetched

    def spying(items, produce):
        def produce_spied(item):
            threads.add(threading.current_thread().name)
            return produce(item)
        return original(items, produce_spied)

    monkeypatch.setattr(engine, "prefetched", spying)
    for name, case in _digest_cases(eps_problem, phase0_8).items():
        assert _digest(case()) == SERIAL_DIGESTS[name], name
    assert any(t.startswith("symsgd-draws") for t in threads)  # (a one-chunk run draws in the caller)


def test_prefetched_keeps_the_order_of_a_plain_loop():
    from symsgd_core.dln.stepping import prefetched

    calls = []

    def produce(k):
        calls.append(k)
        return k * k

    assert list(prefetched(range(5), produce)) == [(k, k * k) for k in range(5)]
    assert calls == list(range(5))
    assert list(prefetched([3], produce)) == [(3, 9)] and list(prefetched([], produce)) == []


def test_stepping_kernels_release_the_gil():
    """The block kernels run without the GIL, so the prefetching thread's draws overlap them."""
    from symsgd_core.dln import _kernels
    from symsgd_core.dln import _sde_kernels as _sde_kernels

    for f in (_kernels._sgd_block, _kernels._sgd_par, _kernels._gd_block, _kernels._gd_par,
              _sde_kernels._weighted_block, _sde_kernels._weighted_par):
        assert f.targetoptions.get("nogil") is True, f.py_func.__name__


def test_one_and_two_threads_give_the_same_numbers(eps_problem, phase0_8):
    """``numba.set_num_threads(1)`` and ``(2)``: the same records and final parameters, bit for bit. 32 runs: two
    parallel blocks on two threads (``MIN_BLOCK_RUNS``); the records hold > 64 matrices per layer, so the batched
    SVD runs several blocks in parallel too."""
    import numba

    from symsgd_core.dln import _kernels

    p32 = phase0_8.select(list(range(8)) * 4)
    assert _kernels.n_blocks(32) == min(2, numba.get_num_threads()) and _kernels.n_blocks(12) == 1

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("NUMBA_NUM_THREADS=1: a second thread is not available")
    before = numba.get_num_threads()
    out = {}
    try:
        for n in (1, 2):
            numba.set_num_threads(n)
            out[n] = [rank_jumps.run(p32, eps_problem, 1000, lr=0.3, weight_decay=0.027, seed=7, record_every=20),
                      rank_jumps.run(p32, eps_problem, 300, method="langevin", temperature=1e-3, lr=0.3,
                                     weight_decay=0.027, seed=7, record_every=10),
                      sde_noise.run_sde(p32, eps_problem, 300, lr=0.3, weight_decay=0.027, dt=0.1, seed=7,
                                        record_every=10)]
    finally:
        numba.set_num_threads(before)
    for a, b in zip(out[1], out[2]):
        for field in ("singular_values", "layer_singular_values", "loss", "balancedness", "rank", "diverged_step"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
        np.testing.assert_array_equal(a.final.flat, b.final.flat)
    assert out[1][0].layer_singular_values.shape[:2] == (32, 51)


def test_sgd_update_formula_single_step(eps_problem):
    """One step by hand: W_ℓ ← (1 − 2ηλ)W_ℓ − 2η r Q_ℓ[i,:]ᵀ P_ℓ[:,j]ᵀ with the drawn entry."""
    arch = EXP.arch
    p = rank_jumps.init_params(arch, 1, 4)
    lr, weight_decay = 0.05, 0.027
    res = rank_jumps.run(p, eps_problem, 1, lr=lr, weight_decay=weight_decay, seed=11, record_every=1)
    e = np.random.default_rng(np.random.SeedSequence(11).spawn(1)[0]).integers(0, 3, size=(1, 1))[0, 0]
    rows, cols, vals = eps_problem.entries
    i, j = rows[e], cols[e]
    W = [w[0] for w in p.layers()]
    r = (W[3] @ W[2] @ W[1] @ W[0])[i, j] - vals[e]
    expected = []
    for ell in range(4):
        P = np.eye(2)
        for w in W[:ell]:
            P = w @ P
        Q = np.eye(2)
        for w in W[ell + 1:][::-1]:
            Q = Q @ w
        expected.append((1 - 2 * lr * weight_decay) * W[ell] - 2 * lr * r * np.outer(Q[i], P[:, j]))
    got = res.final.layers()
    for ell in range(4):
        np.testing.assert_allclose(got[ell][0], expected[ell], atol=1e-14)


# --------------------------------------------------------------------------- bad parameters
def test_bad_parameters_raise_clear_errors(eps_problem, phase0_8):
    p = phase0_8
    with pytest.raises(ValueError, match="2·lr·weight_decay"):
        rank_jumps.run(p, eps_problem, 10, lr=20.0, weight_decay=0.027)
    with pytest.raises(ValueError, match="lr"):
        rank_jumps.run(p, eps_problem, 10, lr=0.0, weight_decay=0.027)
    with pytest.raises(ValueError, match="weight_decay"):
        rank_jumps.run(p, eps_problem, 10, lr=0.1, weight_decay=-0.1)
    with pytest.raises(ValueError, match="method"):
        rank_jumps.run(p, eps_problem, 10, lr=0.1, weight_decay=0.0, method="adam")
    with pytest.raises(ValueError, match="entries"):
        rank_jumps.run(p, eps_problem, 10, lr=0.1, weight_decay=0.0, method="forced")
    with pytest.raises(ValueError, match="selects no entry"):
        rank_jumps.run(p, eps_problem, 10, lr=0.1, weight_decay=0.0, method="forced", entries=np.zeros((2, 2), bool))
    with pytest.raises(ValueError, match="subset"):
        rank_jumps.run(p, eps_problem, 10, lr=0.1, weight_decay=0.0, method="forced", entries=np.ones((2, 2), bool))
    with pytest.raises(ValueError, match="temperature"):
        rank_jumps.run(p, eps_problem, 10, lr=0.1, weight_decay=0.0, method="langevin")
    with pytest.raises(ValueError, match="shape"):
        rank_jumps.run(p, dln.problems.random_low_rank_completion((3, 3), 1, 0.5), 10, lr=0.1, weight_decay=0.0)
    with pytest.raises(ValueError, match="not both"):
        rank_jumps.run(p, eps_problem, 10, lr=0.1, weight_decay=0.0, schedule=rank_jumps.Schedule.constant(0.1, 0.0))
    with pytest.raises(ValueError, match="n_steps"):
        rank_jumps.run(p, eps_problem, -1, lr=0.1, weight_decay=0.0)
    with pytest.raises(ValueError, match="finite"):
        rank_jumps.run(rank_jumps.Params(p.arch, np.full_like(p.flat, np.nan)), eps_problem, 1, lr=0.1,
                       weight_decay=0.0)


def test_step_size_error_names_only_what_the_caller_passed(eps_problem, phase0_8):
    """lr=5, weight_decay=0.2 used to fail with "segments[0]: …", naming a schedule the caller never passed."""
    with pytest.raises(ValueError, match="2·lr·weight_decay") as err:
        rank_jumps.run(phase0_8, eps_problem, 10, lr=5, weight_decay=0.2)
    message = str(err.value)
    assert "segment" not in message and "schedule" not in message
    assert "lr=5.0, weight_decay=0.2" in message
    with pytest.raises(ValueError, match=r"segments\[1\]: 2·lr·weight_decay"):  # a real schedule is named
        rank_jumps.Schedule.phases([(10, 0.3, 0.027), (10, 5.0, 0.2)])


def test_an_ensemble_of_zero_runs_is_an_error(eps_problem, phase0_8):
    """An empty selection used to run and return arrays of 0 runs."""
    with pytest.raises(ValueError, match="0 runs"):
        rank_jumps.run(phase0_8.select([]), eps_problem, 10, lr=0.1, weight_decay=0.0)
    with pytest.raises(ValueError, match="0 runs"):
        rank_jumps.run(phase0_8.select(np.zeros(8, bool)), eps_problem, 10, method="gd", lr=0.1, weight_decay=0.0)


@pytest.mark.parametrize("method", ["sgd", "gd"])
def test_divergence_is_reported_never_silent(eps_problem, method):
    p = rank_jumps.init_params(EXP.arch, 4, 0)
    for engine in ("compiled", "reference"):
        res = rank_jumps.run(p, eps_problem, 400, method=method, lr=1.5, weight_decay=0.0, record_every=10,
                             engine=engine)
        assert res.diverged.all(), res.summary()
        for r in range(4):
            k = res.diverged_step[r]
            assert k > 0
            before = res.steps < k
            assert np.all(np.isfinite(res.singular_values[r][before]))
            assert np.all(np.isnan(res.singular_values[r][~before]))  # NaN only after the flagged step
            assert np.all(res.rank[r][~before] == -1)
            assert "diverged at step" in res.outcome(r)
        assert np.all(np.isfinite(res.final.flat))  # frozen at the last state before divergence
        assert "diverged" in res.summary()


def test_large_step_collapses_to_zero(eps_problem, phase0_8):
    """Notebook 04: η = 0.4 (λ = 0.027) sends the phase-0 minima to A = 0 (B_0), reported as collapse."""
    res = rank_jumps.run(phase0_8.select(slice(0, 4)), eps_problem, 6000, lr=0.4, weight_decay=EXP.weight_decay_hot,
                         seed=0)
    ok = ~res.diverged
    assert ok.sum() >= 3
    assert res.collapsed[ok].all(), res.summary()
    assert np.all(res.singular_values[ok, -1] < rank_jumps.DEFAULT_RANK_TOL)
    assert "collapsed to A = 0" in res.outcome(int(np.flatnonzero(ok)[0]))
    assert res.in_B[ok, -1, 0].all()


def test_forced_row_decays_to_exact_zero_without_denormals(eps_problem):
    """A forced run long enough for the unsampled row to pass the flush threshold ends exactly at 0."""
    p = rank_jumps.phase0_minima(n_runs=1)
    lr, weight_decay = 0.3, EXP.weight_decay_hot
    res = rank_jumps.run(p, eps_problem, 12_000, method="forced", entries=eps_problem.row_entries([0]), lr=lr,
                         weight_decay=weight_decay,
                  record_every=12_000)
    assert (1 - 2 * lr * weight_decay) ** 12_000 < dln.stepping.flush_threshold(4)
    np.testing.assert_array_equal(res.final.layer(3)[0, 1], 0.0)
    assert res.final_rank[0] == 1


# --------------------------------------------------------------------------- records and events
def test_events_from_synthetic_ranks():
    steps = np.arange(6) * 10
    rank = np.array([[2, 2, 1, 1, 1, 1], [2, 1, 2, 1, 1, 1], [2, 2, 2, 2, 2, 2], [2, 1, 0, 0, 0, 0],
                     [2, 2, -1, -1, -1, -1]])
    sv = np.zeros((5, 6, 2))
    rec = dict(rank=rank, sv=sv, lsv=None, loss=sv[..., 0], fit=sv[..., 0], norm_sq=sv[..., 0], balance=sv[..., 0],
               inB=None)
    div = np.array([-1, -1, -1, -1, 15])
    res = build_result(steps, steps * 0.1, rec, div, rank_jumps.init_params(EXP.arch, 5), {})
    np.testing.assert_array_equal(res.first_step_at_rank[:, 1], [20, 10, -1, 10, -1])
    np.testing.assert_array_equal(res.returned_up, [False, True, False, False, False])
    assert res.first_return_step[1] == 20
    np.testing.assert_array_equal(res.collapsed, [False, False, False, True, False])
    np.testing.assert_array_equal(res.jump_step(1), [20, 10, -1, 10, -1])
    frac = res.fraction_at_rank()
    np.testing.assert_allclose(frac.sum(axis=1), 1.0)
    assert frac[-1, 3] == pytest.approx(0.2)  # the diverged column
    assert "rose back" in res.outcome(1)


def test_schedules():
    lr, weight_decay = rank_jumps.Schedule.anneal(3, 0.3, 0.027, 0.05, 0.01).values(5)
    np.testing.assert_allclose(lr, [0.3, 0.3, 0.3, 0.05, 0.05])
    np.testing.assert_allclose(weight_decay, [0.027, 0.027, 0.027, 0.01, 0.01])
    lr, _ = rank_jumps.Schedule.cyclic(0.1, 0.3, 4, 0.01).values(8)
    np.testing.assert_allclose(lr, [0.1, 0.2, 0.3, 0.2] * 2)
    with pytest.raises(ValueError, match="2·lr·weight_decay"):
        rank_jumps.Schedule.phases([(10, 0.3, 0.027), (10, 30.0, 0.027)])


def test_matched_langevin_temperature(eps_problem, phase0_8):
    tau = dln.noise.matched_langevin_temperature(phase0_8.select([0]), eps_problem, lr=0.3,
                                                           weight_decay=0.027)
    # by hand: per-entry gradients (2 r q pᵀ) around their mean, traced, η/(2 B P)
    p = phase0_8.select([0])
    grads = []
    for i, j in zip(*np.nonzero(eps_problem.mask)):
        single = np.zeros((2, 2), bool)
        single[i, j] = True
        grads.append(rank_jumps.gradient(p, rank_jumps.CompletionProblem(eps_problem.target, single), 0.0).flat[0])
    g = np.array(grads)
    expected = 0.3 * np.mean(np.sum((g - g.mean(0)) ** 2, axis=1)) / (2 * p.arch.n_params)
    np.testing.assert_allclose(tau, [expected], rtol=1e-12)
    assert tau[0] > 0


def test_phase0_cache_returns_copies():
    a = rank_jumps.phase0_minima(n_runs=2)
    a.flat[:] = 0.0
    b = rank_jumps.phase0_minima(n_runs=2)
    assert np.abs(b.flat).max() > 0.1


# --------------------------------------------------------------------------- Notebook 04's experiment
def test_notebook04_phases(eps_problem):
    """Phase 0 → rank-2 minima (1.62, 0.33); hot SGD jumps to rank 1 in most of 32 seeds within 6·10⁴
    steps, hot GD stays rank 2; cold phase: jumped SGD stays rank 1, GD stays rank 2."""
    p0 = rank_jumps.phase0_minima(n_runs=32)
    s = rank_jumps.singular_values(p0)
    np.testing.assert_allclose(s, np.broadcast_to([1.62, 0.33], s.shape), atol=0.01)
    assert np.all(rank_jumps.numerical_rank(s) == 2)
    sgd = rank_jumps.run(p0, eps_problem, EXP.hot_steps, lr=EXP.lr_hot, weight_decay=EXP.weight_decay_hot, seed=0)
    jumped = sgd.jump_step(1) >= 0
    assert jumped.mean() > 0.5, sgd.summary()
    assert not sgd.returned_up.any() and not sgd.diverged.any() and not sgd.collapsed.any()
    gd = rank_jumps.run(p0.select(slice(0, 4)), eps_problem, EXP.hot_steps, method="gd", lr=EXP.lr_hot,
                        weight_decay=EXP.weight_decay_hot,
                 record_layers=False)
    assert np.all(gd.rank == 2)
    cold_sgd = rank_jumps.run(sgd.final.select(jumped), eps_problem, 20_000, lr=EXP.lr_cold,
                              weight_decay=EXP.weight_decay_cold, seed=1)
    assert np.all(cold_sgd.rank == 1)
    cold_gd = rank_jumps.run(gd.final, eps_problem, 20_000, method="gd", lr=EXP.lr_cold,
                             weight_decay=EXP.weight_decay_cold,
                      record_layers=False)
    assert np.all(cold_gd.rank == 2)


# --------------------------------------------------------------------------- benchmark baselines compute the same thing
def test_benchmark_baselines_agree_with_engine(eps_problem, phase0_8):
    p = phase0_8.select(slice(0, 3))
    idx = bench._draws(3, 200)
    ours = rank_jumps.run(p, eps_problem, 200, lr=0.3, weight_decay=0.027, seed=0, record_every=100)
    tol = _roundoff(p, 200)
    for baseline in (bench.numpy_batched_sgd, bench.numpy_batched_sgd_sparse):
        np.testing.assert_allclose(baseline(p, eps_problem, idx, 0.3, 0.027)[0], ours.final.flat, atol=tol)
    for parallel in (False, True):  # the plain compiled loop of the benchmark, serial and prange
        flat, snaps = bench.compiled_loop_sgd(p, eps_problem, idx, 0.3, 0.027, parallel=parallel)
        np.testing.assert_allclose(flat, ours.final.flat, atol=tol)
        np.testing.assert_allclose(snaps[:, -1], ours.final.flat, atol=tol)
        assert snaps.shape == (3, 2, EXP.arch.n_params)
    for parallel in (False, True):  # the same loop compiled for the network's widths
        flat, snaps = bench.fixed_loop_sgd(p, eps_problem, idx, 0.3, 0.027, parallel=parallel)
        np.testing.assert_allclose(flat, ours.final.flat, atol=tol)
        np.testing.assert_allclose(snaps[:, -1], ours.final.flat, atol=tol)
        assert snaps.shape == (3, 2, EXP.arch.n_params)
    wide = rank_jumps.init_params(rank_jumps.make_architecture((2, 2), 3, 5), 2, 0)  # another shape: compiled anew
    wide_run = rank_jumps.run(wide, eps_problem, 200, lr=0.05, weight_decay=0.027, seed=0, record_every=100)
    np.testing.assert_allclose(bench.fixed_loop_sgd(wide, eps_problem, idx[:2], 0.05, 0.027)[0], wide_run.final.flat,
                               atol=_roundoff(wide, 200))
    with pytest.raises(ValueError, match="depth >= 3"):
        bench.fixed_loop_sgd(rank_jumps.init_params(rank_jumps.make_architecture((2, 2), 2, 4), 1, 0), eps_problem,
                             idx[:1], 0.3, 0.027)
    np.testing.assert_allclose(bench.torch_naive_sgd(p.select([0]), eps_problem, idx[:1], 0.3, 0.027)[0],
                               ours.final.flat[:1], atol=tol)
    gd = rank_jumps.run(p, eps_problem, 50, method="gd", lr=0.05, weight_decay=0.027, record_every=50)
    np.testing.assert_allclose(bench.numpy_batched_gd(p, eps_problem, 50, 0.05, 0.027), gd.final.flat, atol=tol)


def test_batched_singular_values_match_lapack():
    from symsgd_core.dln._kernels import batched_singular_values

    rng = np.random.default_rng(1)
    for shape in [(200, 8, 8), (200, 2, 8), (200, 8, 2), (50, 5, 3), (5, 1, 1)]:
        W = rng.normal(size=shape)
        W[::3, :, -1] = 0.0  # rank-deficient
        W[1::4] *= 1e-9  # badly scaled
        ref = np.linalg.svd(W, compute_uv=False)
        got = batched_singular_values(W)
        # both are backward stable: absolute error O(k·eps·s₁) per matrix
        assert np.all(np.abs(got - ref) <= 64 * shape[1] * EPS64 * ref[:, :1])
    # known singular values spanning 20 decades
    U = np.linalg.qr(rng.normal(size=(8, 8)))[0]
    V = np.linalg.qr(rng.normal(size=(8, 8)))[0]
    s = np.array([1.3, 1e-3, 1e-8, 1e-12, 0, 0, 0, 0])
    got = batched_singular_values(((U * s) @ V.T)[None])[0]
    assert np.all(np.abs(got - s) <= 64 * 8 * EPS64 * 1.3)
