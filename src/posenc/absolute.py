"""Absolute position encodings: one vector per position, added to the token embedding.

Every table has shape ``(n_positions, width)``: row ``p`` is the code of position ``p``.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_real_array, check_base, check_dtype, check_int

__all__ = [
    "binary",
    "integer_encoding",
    "normalized_encoding",
    "sinusoidal",
    "sinusoidal_at",
    "sinusoidal_frequencies",
]


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


def sinusoidal_frequencies(d_model: int, base: float = 10000.0) -> np.ndarray:
    """Angular frequencies of the sinusoidal encoding, one per (sin, cos) pair.

    ``omega_i = base ** (-2 i / d_model)`` for pair ``i = 0 .. ceil(d_model / 2) - 1``
    (Vaswani et al. 2017, section 3.5). Pair 0 turns at 1 radian per position (wavelength
    ``2 pi``); the last pair of an even ``d_model`` has wavelength
    ``2 pi * base ** ((d_model - 2) / d_model)``, just short of ``2 pi * base``.
    """
    d_model = check_int("d_model", d_model, minimum=1)
    base = check_base(base)
    pair_index = np.arange((d_model + 1) // 2, dtype=np.float64)
    return base ** (-2.0 * pair_index / d_model)


def sinusoidal_at(positions, d_model: int, base: float = 10000.0, dtype=np.float64) -> np.ndarray:
    """The sinusoidal encoding evaluated at arbitrary real ``positions``.

    Same formula as :func:`posenc.sinusoidal`; fractional positions are allowed, which is
    what a plot of the continuous waves needs. Angles are formed in float64 and only
    the result is cast to ``dtype``.

    Returns an array of shape ``(len(positions), d_model)``.
    """
    positions = as_real_array("positions", positions, ndim=1)
    dtype = check_dtype("dtype", dtype)
    omega = sinusoidal_frequencies(d_model, base)
    angles = positions[:, None] * omega[None, :]  # float64 on purpose
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
