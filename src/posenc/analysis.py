"""Measurements on encodings: similarity, offsets as rotations, wavelengths, decay, precision."""

from __future__ import annotations

import math

import numpy as np

from ._validation import as_real_array, check_base, check_choice, check_even_int, check_int, check_real
from .absolute import sinusoidal_frequencies
from .rope import LAYOUTS, apply_rope, rope_angles

__all__ = [
    "angle_rounding_error",
    "critical_dimension",
    "effective_scale",
    "offset_matrix",
    "principal_components",
    "rope_decay_bound",
    "rope_scores",
    "rotations_within_context",
    "score_terms",
    "similarity",
    "wavelengths",
]


def similarity(table, normalize: bool = False) -> np.ndarray:
    """Dot products of every pair of rows, ``table @ table.T``; cosine similarities if ``normalize``.

    For the sinusoidal table, entry ``[m, n]`` is ``s(m, n) = sum_i cos((n - m) theta_i)``: it
    depends on ``n - m`` only (a Toeplitz matrix) and is symmetric, so the plain dot
    product cannot tell "before" from "after".

    Returns a float64 array of shape ``(n, n)``.
    """
    table = as_real_array("table", table, ndim=2)
    if normalize:
        norms = np.linalg.norm(table, axis=1, keepdims=True)
        if np.any(norms == 0):
            row = int(np.flatnonzero(norms[:, 0] == 0)[0])
            raise ValueError(f"cannot normalize: row {row} of table is all zeros")
        table = table / norms
    return table @ table.T


def similarity_by_offset(offsets, d_model: int, base: float = 10000.0) -> np.ndarray:
    """``PE(p) . PE(p + k) = sum_i cos(k w_i)`` for each offset ``k``: the same for every ``p``.

    From ``sin a sin b + cos a cos b = cos(a - b)`` (Vaswani et al. 2017, section 3.5
    frequencies ``w_i = base**(-2i/d_model)``). ``d_model`` must be even (a lone final
    sine would add ``sin(w p) sin(w (p + k))``, which depends on ``p``).

    Returns a float64 array with one value per offset.
    """
    offsets = as_real_array("offsets", offsets, ndim=1)
    d_model = check_even_int("d_model", d_model)
    return np.cos(offsets[:, None] * sinusoidal_frequencies(d_model, base)[None, :]).sum(axis=1)


def offset_matrix(k: float, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The matrix ``M_k`` with ``sinusoidal(p + k) == offset_matrix(k) @ sinusoidal(p)`` for every ``p``.

    Block-diagonal, one 2x2 rotation per (sin, cos) pair, from the angle-sum identities
    ``sin(a + b) = sin a cos b + cos a sin b`` and ``cos(a + b) = cos a cos b - sin a sin b``::

        [ cos(k w_i)   sin(k w_i) ]
        [-sin(k w_i)   cos(k w_i) ]

    It depends on ``k`` but not on ``p``: this is the "linear function of PE_pos" of
    Vaswani et al. 2017, section 3.5. ``d_model`` must be even (a lone final sine has
    no cosine partner, and no fixed matrix can shift it).

    Returns a float64 array of shape ``(d_model, d_model)``.
    """
    k = check_real("k", k)
    d_model = check_int("d_model", d_model, minimum=2)
    if d_model % 2:
        raise ValueError(
            f"d_model must be even for offset_matrix, got {d_model}: the last column of an odd-width table "
            "is a sine with no cosine partner, and sin(theta (p + k)) is not a fixed linear function of sin(theta p)"
        )
    angles = k * sinusoidal_frequencies(d_model, base)
    matrix = np.zeros((d_model, d_model))
    c, s = np.cos(angles), np.sin(angles)
    even = np.arange(0, d_model, 2)
    matrix[even, even] = c
    matrix[even, even + 1] = s
    matrix[even + 1, even] = -s
    matrix[even + 1, even + 1] = c
    return matrix


def _check_positive_freq(inv_freq) -> np.ndarray:
    inv_freq = as_real_array("inv_freq", inv_freq)
    if np.any(inv_freq <= 0):
        raise ValueError(f"inv_freq must be > 0 (radians per position), got min {inv_freq.min()}")
    return inv_freq


def wavelengths(inv_freq) -> np.ndarray:
    """Tokens per full turn of each pair: ``2 pi / inv_freq``.

    For the default RoPE/sinusoidal speeds this runs from ``2 pi`` (pair 0) to
    ``2 pi * base ** ((d - 2) / d)`` (the last pair), a geometric progression.
    """
    return 2 * np.pi / _check_positive_freq(inv_freq)


def rotations_within_context(inv_freq, context_length: float) -> np.ndarray:
    """Full turns each pair completes over ``context_length`` tokens: ``L * inv_freq / (2 pi)``.

    Pairs with fewer than one turn never saw all their angles during training at
    length ``L``; past ``L`` they meet angles they have never seen.
    """
    context_length = check_real("context_length", context_length, positive=True)
    return context_length * _check_positive_freq(inv_freq) / (2 * np.pi)


def critical_dimension(head_dim: int, base: float, context_length: int) -> int:
    """``2 * ceil((d/2) * log_base(L / (2 pi)))``: how many dimensions complete a full turn within ``L``.

    Liu et al. 2023, "Scaling Laws of RoPE-based Extrapolation", section 3: the
    dimensions from this index on never complete a period during training, so their
    angles beyond ``L`` are out of distribution. 92 for Llama 2 (``d = 128``,
    ``base = 10000``, ``L = 4096``). Clipped to ``[0, head_dim]``.
    """
    head_dim = check_even_int("head_dim", head_dim)
    base = check_base(base)
    context_length = check_int("context_length", context_length, minimum=1)
    pairs = math.ceil(head_dim / 2 * math.log(context_length / (2 * math.pi)) / math.log(base))
    return int(min(max(2 * pairs, 0), head_dim))


def effective_scale(inv_freq, scaled_inv_freq) -> np.ndarray:
    """How many times slower each pair turns after scaling: ``inv_freq / scaled_inv_freq``.

    1 means the pair is untouched (extrapolated), ``s`` means fully interpolated.
    """
    original = _check_positive_freq(inv_freq)
    scaled = as_real_array("scaled_inv_freq", scaled_inv_freq)
    if scaled.shape != original.shape:
        raise ValueError(f"scaled_inv_freq must have the shape of inv_freq {original.shape}, got {scaled.shape}")
    return original / _check_positive_freq(scaled)


def rope_decay_bound(offsets, inv_freq) -> np.ndarray:
    """RoFormer's long-term-decay curve: ``(1 / (d/2)) * sum_{j=1}^{d/2} |S_j|``, ``S_j = sum_{k<j} exp(i r theta_k)``.

    Su et al. 2021, section 3.4.3 and figure 2. By Abel summation,
    ``|q_m . k_n| <= (max_j |h_{j+1} - h_j|) * sum_j |S_j|`` with ``r = m - n``: this is a
    decaying *upper bound* on the score for slowly varying ``h``, not the score
    itself; real scores can be large at long distances.

    Returns a float64 array with one value per offset.
    """
    offsets = as_real_array("offsets", offsets, ndim=1)
    angles = rope_angles(offsets, inv_freq)
    partial_sums = np.cumsum(np.exp(1j * angles), axis=1)
    return np.mean(np.abs(partial_sums), axis=1)


def rope_scores(q, k, offsets, inv_freq, layout: str = "half", attention_factor: float = 1.0) -> np.ndarray:
    """The RoPE score ``<R(m) q, R(n) k>`` for ``m - n = offset``, one per offset.

    By the relative property it depends on the offset only, so the key is placed at
    position 0 and the query at each offset.
    """
    layout = check_choice("layout", layout, LAYOUTS)
    q = as_real_array("q", q, ndim=1)
    k = as_real_array("k", k, ndim=1)
    if q.shape != k.shape:
        raise ValueError(f"q and k must have the same shape, got {q.shape} and {k.shape}")
    offsets = as_real_array("offsets", offsets, ndim=1)
    rotated_q = apply_rope(np.broadcast_to(q, (offsets.size, q.size)), offsets, inv_freq, layout, attention_factor)
    rotated_k = apply_rope(k[None, :], [0], inv_freq, layout, attention_factor)[0]
    return rotated_q @ rotated_k


def rope_score_matrix(queries, keys, inv_freq, layout: str = "half", attention_factor: float = 1.0) -> np.ndarray:
    """RoPE attention scores ``[m, n] = <R(m) queries[m], R(n) keys[n]>`` for positions ``0 .. n-1``.

    ``queries`` and ``keys`` have shape ``(n, head_dim)``; row ``m`` sits at position ``m``.
    With the same vector in every row the matrix depends on ``m - n`` only (Toeplitz),
    which makes the effect of the rotation speeds visible at a glance.

    Returns a float64 array of shape ``(n, n)``.
    """
    queries = as_real_array("queries", queries, ndim=2)
    keys = as_real_array("keys", keys, ndim=2)
    if queries.shape != keys.shape:
        raise ValueError(f"queries and keys must have the same shape, got {queries.shape} and {keys.shape}")
    positions = np.arange(queries.shape[0])
    rotated_q = apply_rope(queries, positions, inv_freq, layout, attention_factor)
    rotated_k = apply_rope(keys, positions, inv_freq, layout, attention_factor)
    return rotated_q @ rotated_k.T


def linear_shift_fit(table, k: int) -> tuple[np.ndarray, float]:
    """The best fixed matrix ``M`` with ``table[p + k] ~ M @ table[p]`` for every ``p``, and its worst error.

    Least squares over all rows (``numpy.linalg.lstsq``). For the sinusoidal table the
    error is rounding, since ``M`` is :func:`posenc.offset_matrix`; for the binary
    counter no matrix works (adding ``k`` involves carries, which are not linear).

    Returns ``(M, max_abs_error)``, ``M`` of shape ``(width, width)``.
    """
    table = as_real_array("table", table, ndim=2)
    k = check_int("k", k, minimum=1)
    if k >= table.shape[0]:
        raise ValueError(f"k must be smaller than the number of rows ({table.shape[0]}), got {k}")
    source, target = table[:-k], table[k:]
    solution, *_ = np.linalg.lstsq(source, target, rcond=None)
    return solution.T, float(np.max(np.abs(source @ solution - target)))


SCORE_TERMS = ("token, token", "token, position", "position, token", "position, position")


def score_terms(tokens, positions, a, combine: str = "add") -> np.ndarray:
    """The attention scores of every query ``m`` and key ``n``, split into four terms by where they come from.

    ``tokens`` holds the token vectors ``x_m`` as rows (shape ``(n, d_x)``), ``positions`` the
    position codes ``PE(m)`` as rows (``(n, d_p)``), and ``a`` is ``A = W_Q^T W_K``, so that the
    score before the ``1/sqrt(d)`` scaling is ``u_m^T A u_n`` for the combined input ``u``:

    * ``combine="add"``: ``u_m = x_m + PE(m)`` (``d_x == d_p``, ``a`` is ``(d, d)``). The terms are
      ``x_m^T A x_n``, ``x_m^T A PE(n)``, ``PE(m)^T A x_n`` and ``PE(m)^T A PE(n)``: one matrix
      ``A`` serves all four (the "mixed correlations" of Ke, He and Liu 2021, "Rethinking
      Positional Encoding in Language Pre-training", introduction).
    * ``combine="concat"``: ``u_m = [x_m; PE(m)]`` (``a`` is ``(d_x + d_p, d_x + d_p)``). ``A`` splits
      into blocks ``[[A_xx, A_xp], [A_px, A_pp]]`` and the terms are ``x_m^T A_xx x_n``,
      ``x_m^T A_xp PE(n)``, ``PE(m)^T A_px x_n`` and ``PE(m)^T A_pp PE(n)``: four independent
      blocks. The mixed terms vanish exactly when ``A_xp`` and ``A_px`` are zero.

    Returns a float64 array of shape ``(4, n, n)`` in the order of ``SCORE_TERMS`` (token-token,
    token-position, position-token, position-position); its sum over the first axis is the
    score matrix ``U A U^T`` of the combined input.
    """
    combine = check_choice("combine", combine, ("add", "concat"))
    tokens = as_real_array("tokens", tokens, ndim=2)
    positions = as_real_array("positions", positions, ndim=2)
    a = as_real_array("a", a, ndim=2)
    if tokens.shape[0] != positions.shape[0]:
        raise ValueError(
            f"tokens and positions must have one row per position each, got {tokens.shape[0]} and {positions.shape[0]}"
        )
    d_x, d_p = tokens.shape[1], positions.shape[1]
    if combine == "add":
        if d_x != d_p:
            raise ValueError(f"combine='add' needs tokens and positions of the same width, got {d_x} and {d_p}")
        if a.shape != (d_x, d_x):
            raise ValueError(f"a must have shape ({d_x}, {d_x}) for combine='add', got {a.shape}")
        blocks = (a, a, a, a)
    else:
        width = d_x + d_p
        if a.shape != (width, width):
            raise ValueError(
                f"a must have shape ({width}, {width}) for combine='concat' ({d_x} + {d_p}), got {a.shape}"
            )
        blocks = (a[:d_x, :d_x], a[:d_x, d_x:], a[d_x:, :d_x], a[d_x:, d_x:])
    pairs = ((tokens, tokens), (tokens, positions), (positions, tokens), (positions, positions))
    return np.stack([left @ block @ right.T for (left, right), block in zip(pairs, blocks, strict=True)])


def principal_components(table, n_components: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Principal component analysis of the rows of a table (one row per position).

    The rows are centred (the mean row subtracted) and decomposed by the singular value
    decomposition ``table - mean = U S V^T``. Component ``j`` is the direction ``V[:, j]``; the
    position ``p`` has the coordinate ``(U S)[p, j]`` along it, and the component explains the
    share ``S_j^2 / sum(S^2)`` of the total variance (the usual PCA by singular value
    decomposition). Signs of components are arbitrary; here each is flipped so that its
    coordinate at the first position is <= 0, which makes repeated runs comparable.

    Returns ``(coordinates, explained, directions)``: float64 arrays of shapes ``(n, c)``, ``(c,)``
    and ``(c, width)`` with ``c = n_components`` (default: ``min(n, width)``), components in order
    of decreasing variance.
    """
    table = as_real_array("table", table, ndim=2)
    n, width = table.shape
    if n < 2:
        raise ValueError(f"table must have at least 2 rows to have a variance, got {n}")
    most = min(n, width)
    c = most if n_components is None else check_int("n_components", n_components, minimum=1, maximum=most)
    centred = table - table.mean(axis=0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    total = np.sum(s**2)
    if total == 0:
        raise ValueError("table has no variance: every row is the same")
    sign = np.where(u[0] > 0, -1.0, 1.0)
    u, vt = u * sign, vt * sign[:, None]
    return (u * s)[:, :c], (s**2 / total)[:c], vt[:c]


def unseen_angle_distance(inv_freq, context_length: int, positions) -> np.ndarray:
    """For each pair: how far (radians) the angles at ``positions`` get from every angle seen within ``L``.

    The angles seen in training are ``p * theta_j mod 2 pi`` for ``p = 0 .. L - 1``; the result
    is, per pair, the largest circular distance from an angle ``q * theta_j`` (``q`` in
    ``positions``) to the nearest seen one. Fast pairs have seen their whole circle, so the
    distance is tiny; pairs that never completed a turn within ``L`` meet angles far from
    any they saw (the periodicity argument of Liu et al. 2023, measured).

    Returns a float64 array of shape ``(len(inv_freq),)``.
    """
    inv_freq = _check_positive_freq(as_real_array("inv_freq", inv_freq, ndim=1))
    context_length = check_int("context_length", context_length, minimum=1)
    positions = as_real_array("positions", positions, ndim=1)
    two_pi = 2 * np.pi
    worst = np.empty(inv_freq.size)
    for j, theta in enumerate(inv_freq):
        seen = np.sort(np.mod(np.arange(context_length) * theta, two_pi))
        query = np.mod(positions * theta, two_pi)
        index = np.searchsorted(seen, query)
        below = seen[(index - 1) % seen.size]
        above = seen[index % seen.size]
        gap_below = np.mod(query - below, two_pi)
        gap_above = np.mod(above - query, two_pi)
        worst[j] = np.max(np.minimum(gap_below, gap_above)) if positions.size else 0.0
    return worst


def angle_rounding_error(positions, inv_freq, dtype: str = "float32") -> np.ndarray:
    """``|angle formed in dtype - exact angle|`` in radians, for each position and pair.

    Mimics code that builds positions and angles in a low-precision dtype (the
    positions themselves are rounded first: bfloat16 holds every integer only up to
    256). The exact angle is the float64 product. ``dtype`` is "float16", "bfloat16",
    "float32" or "float64".

    Returns a float64 array of shape ``(len(positions), len(inv_freq))``.
    """
    import torch

    dtype = check_choice("dtype", dtype, ("float16", "bfloat16", "float32", "float64"))
    exact = rope_angles(positions, inv_freq)
    positions = as_real_array("positions", positions, ndim=1)
    inv_freq = as_real_array("inv_freq", inv_freq, ndim=1)
    torch_dtype = getattr(torch, dtype)
    low = torch.from_numpy(positions).to(torch_dtype)[:, None] * torch.from_numpy(inv_freq).to(torch_dtype)[None, :]
    return np.abs(low.to(torch.float64).numpy() - exact)
