"""Absolute position encodings: one vector per position, added to the token embedding.

Every table has shape ``(n_positions, width)``: row ``p`` is the code of position ``p``.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_real_array, check_base, check_choice, check_dtype, check_int

__all__ = [
    "SINUSOIDAL_LAYOUTS",
    "SINUSOIDAL_TIMESCALES",
    "binary",
    "integer_encoding",
    "normalized_code_collisions",
    "normalized_encoding",
    "sinusoidal",
    "sinusoidal_at",
    "sinusoidal_frequencies",
    "sinusoidal_variant",
]

#: Column layouts of a sinusoidal table found in code: "interleaved" puts pair ``i`` in
#: columns ``(2i, 2i+1)`` (the paper's formula); "concatenated" puts every sine first and
#: every cosine after them, pair ``i`` in columns ``(i, i + d_model/2)`` (tensor2tensor).
SINUSOIDAL_LAYOUTS = ("interleaved", "concatenated")

#: Frequency conventions: "paper" is ``base ** (-2i/d_model)``, whose last wavelength is
#: ``2 pi base ** ((d_model-2)/d_model)``; "tensor2tensor" is ``base ** (-i/(d_model/2 - 1))``,
#: a geometric progression whose last wavelength is exactly ``2 pi base``.
SINUSOIDAL_TIMESCALES = ("paper", "tensor2tensor")


def integer_encoding(n_positions: int, d_model: int) -> np.ndarray:
    """The naive encoding: every entry of row ``p`` equals ``p``.

    Its norm grows like ``p * sqrt(d_model)``, so for long sequences it swamps token
    embeddings whose entries are of order 1 (chapter 1 measures this).

    Returns a float64 array of shape ``(n_positions, d_model)``.
    """
    n_positions = check_int("n_positions", n_positions, minimum=0)
    d_model = check_int("d_model", d_model, minimum=1)
    return np.repeat(np.arange(n_positions, dtype=np.float64)[:, None], d_model, axis=1)


def normalized_encoding(n_positions: int, d_model: int) -> np.ndarray:
    """Positions squeezed into [0, 1]: every entry of row ``p`` equals ``p / (n_positions - 1)``.

    The same position gets a different code in sequences of different lengths, and
    the step between neighbours, ``1 / (n_positions - 1)``, shrinks as the sequence
    grows. A one-position sequence is encoded as 0.

    Returns a float64 array of shape ``(n_positions, d_model)``.
    """
    n_positions = check_int("n_positions", n_positions, minimum=0)
    d_model = check_int("d_model", d_model, minimum=1)
    column = np.arange(n_positions, dtype=np.float64) / max(n_positions - 1, 1)
    return np.repeat(column[:, None], d_model, axis=1)


def normalized_code_collisions(n_positions: int, dtype=np.float16) -> np.ndarray:
    """Where the normalised code ``p / (n_positions - 1)``, stored in ``dtype``, fails to separate neighbours.

    Returns the positions ``p`` (int64, increasing) whose code rounds to the same ``dtype``
    number as the code of ``p + 1``. Rounding is monotone, so two positions ``p < q`` share
    a code only if every neighbouring pair between them does: the result is empty exactly
    when all ``n_positions`` codes are distinct, and its length is ``n_positions`` minus the
    number of distinct codes. The code is formed in float64 and rounded once to ``dtype``
    (round half to even, as IEEE 754 and NumPy do); chapter 1 measures it for float16,
    whose neighbouring numbers just below 1 are ``2**-11`` apart.
    """
    n_positions = check_int("n_positions", n_positions, minimum=0)
    dtype = check_dtype("dtype", dtype)
    codes = normalized_encoding(n_positions, 1)[:, 0].astype(dtype)
    return np.flatnonzero(codes[1:] == codes[:-1]).astype(np.int64)


def sinusoidal_frequencies(d_model: int, base: float = 10000.0, *, timescales: str = "paper") -> np.ndarray:
    """Angular frequencies of the sinusoidal encoding, one per (sin, cos) pair, in radians per token.

    ``timescales="paper"`` (the default): ``theta_i = base ** (-2 i / d_model)`` for pair
    ``i = 0 .. ceil(d_model / 2) - 1`` (Vaswani et al. 2017, section 3.5). Pair 0 turns at
    1 radian per position (wavelength ``2 pi``); the last pair of an even ``d_model`` has
    wavelength ``2 pi * base ** ((d_model - 2) / d_model)``, short of ``2 pi * base``.

    ``timescales="tensor2tensor"``: ``theta_i = base ** (-i / (d_model/2 - 1))`` for
    ``i = 0 .. d_model/2 - 1``, the geometric sequence of timescales from 1 to ``base``
    of ``get_timing_signal_1d`` in tensor2tensor (``tensor2tensor/layers/common_attention.py``,
    with ``min_timescale=1``, ``max_timescale=base``); its last wavelength is exactly
    ``2 pi * base``. It needs an even ``d_model`` (one frequency per pair; for
    ``d_model = 2`` the single pair turns at 1 radian per token, as there).
    """
    d_model = check_int("d_model", d_model, minimum=1)
    base = check_base(base)
    timescales = check_choice("timescales", timescales, SINUSOIDAL_TIMESCALES)
    if timescales == "paper":
        pair_index = np.arange((d_model + 1) // 2, dtype=np.float64)
        return base ** (-2.0 * pair_index / d_model)
    _check_even_for("timescales='tensor2tensor'", d_model)
    n_pairs = d_model // 2
    pair_index = np.arange(n_pairs, dtype=np.float64)
    return base ** (-pair_index / max(n_pairs - 1, 1))


def _check_even_for(option: str, d_model: int) -> None:
    if d_model % 2:
        raise ValueError(
            f"d_model must be even with {option} (one sine and one cosine per frequency), got {d_model}; "
            "only the paper's interleaved table gives an odd width a final sine column"
        )


def sinusoidal_at(positions, d_model: int, base: float = 10000.0, dtype=np.float64) -> np.ndarray:
    """The sinusoidal encoding evaluated at arbitrary real ``positions``.

    Same formula as :func:`posenc.sinusoidal`; fractional positions are allowed, which is
    what a plot of the continuous waves needs. Angles are formed in float64 and only
    the result is cast to ``dtype``.

    Returns an array of shape ``(len(positions), d_model)``.
    """
    positions = as_real_array("positions", positions, ndim=1)
    dtype = check_dtype("dtype", dtype)
    theta = sinusoidal_frequencies(d_model, base)
    angles = positions[:, None] * theta[None, :]  # float64 on purpose
    table = np.empty((positions.size, d_model), dtype=np.float64)
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return table.astype(dtype, copy=False)


def sinusoidal(n_positions: int, d_model: int, base: float = 10000.0, dtype=np.float64) -> np.ndarray:
    """The fixed sinusoidal encoding of "Attention Is All You Need".

    ``PE[p, 2i] = sin(p / base**(2i/d_model))`` and
    ``PE[p, 2i+1] = cos(p / base**(2i/d_model))`` (Vaswani et al. 2017, section 3.5).
    Here ``i`` indexes a *pair of dimensions*, not a position. For odd ``d_model`` the
    last column is the sine of the final pair, which has no cosine partner.

    Angles are formed in float64 and cast to ``dtype`` at the end, so a float32 table
    is accurate to float32 rounding even at positions in the millions.

    Returns an array of shape ``(n_positions, d_model)``.
    """
    n_positions = check_int("n_positions", n_positions, minimum=0)
    return sinusoidal_at(np.arange(n_positions), d_model, base, dtype)


def sinusoidal_variant(
    n_positions: int,
    d_model: int,
    base: float = 10000.0,
    *,
    layout: str = "interleaved",
    timescales: str = "paper",
    dtype=np.float64,
) -> np.ndarray:
    """The sinusoidal table in either column layout and either frequency convention found in code.

    With ``theta_i = sinusoidal_frequencies(d_model, base, timescales=timescales)``:

    * ``layout="interleaved"``: ``PE[p, 2i] = sin(p theta_i)``, ``PE[p, 2i+1] = cos(p theta_i)``,
      as in the paper's formula (Vaswani et al. 2017, section 3.5);
    * ``layout="concatenated"``: ``PE[p, i] = sin(p theta_i)``, ``PE[p, i + d_model/2] = cos(p theta_i)``,
      all sines then all cosines, as ``get_timing_signal_1d`` of tensor2tensor lays them out.

    ``layout="concatenated", timescales="tensor2tensor"`` is tensor2tensor's timing signal
    (``min_timescale=1``, ``max_timescale=base``); the defaults give exactly
    :func:`posenc.sinusoidal`. The two layouts hold the same columns in another order:
    ``concatenated == interleaved[:, posenc.interleaved_to_half_permutation(d_model)]``.
    An odd ``d_model`` is allowed only with the defaults (the final sine column).
    Angles are formed in float64 and cast to ``dtype`` at the end.

    Returns an array of shape ``(n_positions, d_model)``.
    """
    n_positions = check_int("n_positions", n_positions, minimum=0)
    d_model = check_int("d_model", d_model, minimum=1)
    layout = check_choice("layout", layout, SINUSOIDAL_LAYOUTS)
    timescales = check_choice("timescales", timescales, SINUSOIDAL_TIMESCALES)
    dtype = check_dtype("dtype", dtype)
    if layout == "concatenated":
        _check_even_for("layout='concatenated'", d_model)
    theta = sinusoidal_frequencies(d_model, base, timescales=timescales)
    angles = np.arange(n_positions, dtype=np.float64)[:, None] * theta[None, :]
    table = np.empty((n_positions, d_model), dtype=np.float64)
    if layout == "interleaved":
        table[:, 0::2] = np.sin(angles)
        table[:, 1::2] = np.cos(angles[:, : d_model // 2])
    else:
        half = d_model // 2
        table[:, :half] = np.sin(angles)
        table[:, half:] = np.cos(angles)
    return table.astype(dtype, copy=False)


def binary(n_positions: int, n_bits: int) -> np.ndarray:
    """The binary counter: row ``p`` holds the bits of ``p``, least significant first.

    Column ``j`` is bit ``j``; it repeats with period ``2 ** (j + 1)``, so column order
    matches the sinusoidal pairs (fastest first). ``n_positions`` may be at most
    ``2 ** n_bits`` (beyond that the counter would wrap around and repeat codes).

    Returns an int64 array of 0s and 1s with shape ``(n_positions, n_bits)``.
    """
    n_bits = check_int("n_bits", n_bits, minimum=1, maximum=62)
    n_positions = check_int("n_positions", n_positions, minimum=0)
    if n_positions > 2**n_bits:
        needed = max(1, (n_positions - 1).bit_length())
        raise ValueError(
            f"n_positions={n_positions} needs at least {needed} bits to give every position "
            f"its own code, got n_bits={n_bits}"
        )
    positions = np.arange(n_positions, dtype=np.int64)
    return (positions[:, None] >> np.arange(n_bits, dtype=np.int64)[None, :]) & 1
