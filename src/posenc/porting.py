"""Checking a port of RoPE against a reference at long positions, not at 0.

A re-implementation that drops a config's scaling (``rope_scaling`` / ``rope_parameters``) or
reads the base the old way (``getattr(config, "rope_theta", 10000)``; ``transformers`` 5 keeps it
in ``config.rope_parameters``, so the attribute is missing and the default wins) is exactly right
at position 0, where every angle is 0, and for the fast pairs that the by-parts methods (YaRN,
Llama 3) leave alone; its error grows with the position. A test at a handful of short positions
passes. :func:`port_check` reports the largest error per range of positions, so that the
ranges a short test never reaches are seen.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_real_array, show_value

__all__ = ["port_check"]


def _evaluate(name: str, candidate, positions: np.ndarray) -> np.ndarray:
    """``candidate(positions)`` or the array itself, as float64 with one row per position."""
    value = candidate(positions.copy()) if callable(candidate) else candidate
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as error:
        raise ValueError(f"{name} must give a rectangular array, got {show_value(value)}") from error
    if array.dtype == object or array.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must be an array with one row per position, or a function of the positions returning one; "
            f"got {show_value(value)}"
        )
    if array.ndim < 1 or array.shape[0] != positions.size:
        raise ValueError(f"{name} must have one row per position ({positions.size}), got shape {array.shape}")
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got NaN or infinite entries")
    return array


def port_check(candidate, reference, positions, edges=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The largest ``|candidate - reference|`` in each range of positions: where a port starts to disagree.

    ``candidate`` and ``reference``: arrays with one row per entry of ``positions`` (rotated
    queries or keys, angles, cos/sin tables), or functions that take the int64 positions and
    return such an array. ``positions``: integers >= 0. ``edges``: increasing boundaries of the
    ranges ``[edges[j], edges[j+1])``; default ``0, 1, 2, 4, 8, ...`` up past the largest position
    (position 0 on its own, then one range per power of two). Ranges holding no position are left out.

    Returns ``(starts, stops, max_error)``: int64, int64, float64, one entry per range.
    """
    positions = as_real_array("positions", positions, ndim=1, integer=True)
    if positions.size == 0:
        raise ValueError("positions must hold at least one position, got an empty array")
    if np.any(positions < 0):
        raise ValueError(f"positions must be >= 0, got {int(positions.min())}")
    top = int(positions.max())
    if edges is None:
        edges = np.array([0] + [1 << k for k in range(top.bit_length() + 1)], dtype=np.int64)
    else:
        edges = as_real_array("edges", edges, ndim=1, integer=True)
        if edges.size < 2 or np.any(np.diff(edges) <= 0):
            raise ValueError(f"edges must hold at least two increasing boundaries, got {edges.tolist()[:8]}")
        if positions.min() < edges[0] or top >= edges[-1]:
            raise ValueError(
                f"edges must cover every position: [{edges[0]}, {edges[-1]}) does not hold "
                f"{int(positions.min())} .. {top}"
            )
    got = _evaluate("candidate", candidate, positions)
    expected = _evaluate("reference", reference, positions)
    if got.shape != expected.shape:
        raise ValueError(f"candidate and reference must have the same shape, got {got.shape} and {expected.shape}")
    error = np.abs(got - expected).reshape(positions.size, -1).max(axis=1, initial=0.0)
    which = np.searchsorted(edges, positions, side="right") - 1
    used = np.unique(which)
    max_error = np.array([error[which == j].max() for j in used], dtype=np.float64)
    return edges[used].astype(np.int64), edges[used + 1].astype(np.int64), max_error
