"""Curves of the scalar model ``ℓ = (u w x − y)²`` in the ``(u, w)`` plane, as lists a plot draws.

Each curve is returned as ``(u, w)`` lists inside the box ``|u|, |w| ≤ extent``, with ``None`` where a piece ends
or leaves the box (a plot leaves a gap there): the hyperbolas ``u² − w² = c`` (gradient flow's conserved quantity),
the curves ``u·w = c`` (the loss's level sets and its valley) and the symmetry orbits ``(λu₀, w₀/λ)``; the loss
surfaces under them are grids of the box.
"""

from __future__ import annotations

import numpy as np

from ..core.validation import check_positive
from .data import Moments
from .models import ScalarModel

__all__ = ["hyperbola_family_xy", "hyperbola_xy", "orbit_xy", "population_loss_surface", "product_level_xy",
           "records_in_box", "sample_loss_surface"]


def _in_box(u, w, extent: float) -> tuple[list, list]:
    """``u``, ``w`` as lists of floats, ``None`` at the points outside the box."""
    inside = (np.abs(u) <= extent) & (np.abs(w) <= extent)
    return ([float(a) if ok else None for a, ok in zip(u, inside)],
            [float(b) if ok else None for b, ok in zip(w, inside)])


def hyperbola_xy(c: float, extent: float, n: int = 241) -> tuple[list, list]:
    """Points of ``u² − w² = c`` inside the box ``|u|, |w| ≤ extent``, both branches (``n`` points each, a ``None``
    after each). ``c = 0`` gives the two balanced lines ``u = ±w``.

    Raises:
        ValueError: ``extent`` not > 0 or ``n`` < 2.
    """
    extent = check_positive("extent", extent)
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    s = np.linspace(-extent, extent, n)
    if c > 0:
        branches = [(np.sqrt(c + s * s), s), (-np.sqrt(c + s * s), s)]
    elif c < 0:
        branches = [(s, np.sqrt(-c + s * s)), (s, -np.sqrt(-c + s * s))]
    else:
        branches = [(s, s), (s, -s)]
    us: list = []
    ws: list = []
    for bu, bw in branches:
        a, b = _in_box(bu, bw, extent)
        us += a + [None]
        ws += b + [None]
    return us, ws


def hyperbola_family_xy(levels, extent: float) -> tuple[list, list]:
    """The hyperbolas ``u² − w² = c`` for every ``c`` of ``levels``, one after the other (:func:`hyperbola_xy`)."""
    us: list = []
    ws: list = []
    for c in levels:
        a, b = hyperbola_xy(float(c), extent)
        us += a
        ws += b
    return us, ws


def product_level_xy(c: float, extent: float, n: int = 400) -> tuple[list, list]:
    """Points of ``u·w = c`` inside ``|u|, |w| ≤ extent`` (both branches; ``None`` between them).

    ``c = 0`` gives the two axes. Used for loss level sets (``uw x = y``) and for valleys (``uw = β₂/β₁``).
    """
    extent = check_positive("extent", extent)
    if c == 0:
        return [-extent, extent, None, 0.0, 0.0], [0.0, 0.0, None, -extent, extent]
    us: list = []
    ws: list = []
    lo = abs(c) / extent
    if lo > extent:
        return [], []
    mag = np.geomspace(lo, extent, n)
    for sign in (1.0, -1.0):
        u = sign * mag
        w = c / u
        us += u.tolist() + [None]
        ws += w.tolist() + [None]
    return us, ws


def orbit_xy(u0: float, w0: float, lambdas, extent: float) -> tuple[list, list]:
    """The symmetry orbit ``(λu₀, w₀/λ)`` at ``lambdas`` (> 0), ``None`` where it is outside the box."""
    lambdas = np.asarray(lambdas, dtype=float)
    return _in_box(lambdas * u0, w0 / lambdas, extent)


def records_in_box(path, diverged: bool, extent: float) -> int:
    """How many records of ``path`` (``(K, 2)``: ``(u, w)`` per record) to draw in the box: all of them, or, if the
    run ``diverged``, those before the path first leaves the box (at least one)."""
    path = np.asarray(path, dtype=float)
    if not diverged:
        return path.shape[0]
    out = np.max(np.abs(path), axis=1) > extent
    return max(int(np.argmax(out)) if out.any() else path.shape[0], 1)


def sample_loss_surface(x: float, y: float, extent: float, n: int = 121) -> tuple[np.ndarray, np.ndarray]:
    """``√ℓ = |uwx − y|`` of the one sample ``(x, y)`` on an ``n × n`` grid of the box: ``(grid, z)``, ``z[i, j]`` at
    ``(u = grid[j], w = grid[i])``."""
    grid = np.linspace(-extent, extent, n)
    U, W = np.meshgrid(grid, grid)
    theta = np.column_stack([U.ravel(), W.ravel()])
    return grid, np.sqrt(ScalarModel().per_sample_loss(theta, np.array([x]), np.array([y]))[:, 0]).reshape(n, n)


def population_loss_surface(moments: Moments, extent: float, n: int = 101) -> tuple[np.ndarray, np.ndarray]:
    """``√(L − L_min) = |uw − β₂/β₁|·√β₁`` of the population loss with ``moments`` on an ``n × n`` grid of the box:
    ``(grid, z)``, ``z[i, j]`` at ``(u = grid[j], w = grid[i])``."""
    grid = np.linspace(-extent, extent, n)
    U, W = np.meshgrid(grid, grid)
    return grid, np.sqrt(np.maximum(moments.loss(U * W) - moments.loss_floor, 0.0))
