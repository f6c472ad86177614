"""Relative schemes that act on the attention scores, not on the token vectors.

Index convention everywhere (the book's notation page): ``[m, n]`` is the query at
position ``m`` attending to the key at position ``n``, and the relative position is
``r = n - m`` (negative for keys in the past; the distance back is ``m - n = -r``).
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import as_real_array, check_bool, check_int

__all__ = [
    "alibi_bias",
    "alibi_slopes",
    "relative_positions",
    "shaw_relative_indices",
    "t5_bucket_matrix",
    "t5_relative_bucket",
]


def relative_positions(n_positions: int) -> np.ndarray:
    """The ``(n_positions, n_positions)`` int64 matrix of relative positions ``r = n - m`` (key minus query)."""
    n_positions = check_int("n_positions", n_positions, minimum=0)
    positions = np.arange(n_positions, dtype=np.int64)
    return positions[None, :] - positions[:, None]


def _power_of_two_slopes(n: int) -> list[float]:
    start = 2.0 ** (-8.0 / n)  # = 2 ** -(2 ** -(log2(n) - 3))
    return [start ** (h + 1) for h in range(n)]


def alibi_slopes(n_heads: int) -> np.ndarray:
    """The ALiBi head slopes of Press et al. 2022 ("Train Short, Test Long"), section 3.

    For ``n`` a power of two: the geometric sequence ``2**(-8/n), 2**(-16/n), ...,
    2**-8`` (``1/2 ... 1/256`` for 8 heads). Otherwise, as the authors' code does: the
    slopes of the largest power of two ``m < n``, then every other slope of ``2m``
    heads (the ones between), until there are ``n``.

    Returns a float64 array of shape ``(n_heads,)``.
    """
    n_heads = check_int("n_heads", n_heads, minimum=1)
    closest = 2 ** math.floor(math.log2(n_heads))
    slopes = _power_of_two_slopes(closest)
    if closest < n_heads:
        slopes += _power_of_two_slopes(2 * closest)[0::2][: n_heads - closest]
    return np.asarray(slopes, dtype=np.float64)


def alibi_bias(n_positions: int, n_heads: int, bidirectional: bool = False) -> np.ndarray:
    """ALiBi biases added to the attention logits: ``[h, m, n] = -mu_h * (m - n)`` for ``n <= m``.

    Press et al. 2022, eq. in section 3: the penalty grows linearly with how far back
    the key is; ``mu_h`` is head ``h``'s slope (the paper's ``m``). Entries for future keys
    (``n > m``) are 0: hiding them is the causal mask's job, and a bias that never touches
    them cannot fight the mask.

    ``bidirectional=True`` gives the form for encoders (no causal mask), symmetric in the
    two directions: ``[h, m, n] = -mu_h * |m - n|`` everywhere, as the ALiBi authors
    prescribe for encoder attention (ofirpress/attention_with_linear_biases, issue 5:
    ``relative_position = abs(memory_position - context_position)``) and as MosaicML's
    ``build_alibi_bias(..., full=True)`` computes it (llm-foundry,
    ``llmfoundry/models/layers/attention.py``). On and below the diagonal the two forms agree.

    Returns a float64 array of shape ``(n_heads, n_positions, n_positions)``.
    """
    slopes = alibi_slopes(n_heads)
    distance = -relative_positions(n_positions)  # m - n
    if check_bool("bidirectional", bidirectional):
        return -slopes[:, None, None] * np.abs(distance).astype(np.float64)[None, :, :]
    past = np.where(distance >= 0, distance, 0).astype(np.float64)
    return -slopes[:, None, None] * past[None, :, :]


def t5_relative_bucket(relative_position, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128):
    """T5's bucket index for each relative position ``r = n - m`` (Raffel et al. 2020, section 2.1).

    Half the buckets (of each direction, when ``bidirectional``) hold one exact
    offset each (0, 1, 2, ...); the rest cover offsets up to ``max_distance`` in
    logarithmically growing ranges; everything farther shares the last bucket. In the
    causal case (``bidirectional=False``) all future offsets share bucket 0 with
    offset 0. Matches ``T5Attention._relative_position_bucket`` in ``transformers``.

    Returns an int64 array with the shape of ``relative_position``.
    """
    relative = as_real_array("relative_position", relative_position, integer=True)
    if not isinstance(bidirectional, bool):
        raise TypeError(f"bidirectional must be True or False, got {bidirectional!r}")
    num_buckets = check_int("num_buckets", num_buckets, minimum=4 if bidirectional else 2)
    buckets = np.zeros(relative.shape, dtype=np.int64)
    if bidirectional:
        num_buckets //= 2
        buckets += (relative > 0).astype(np.int64) * num_buckets
        distance = np.abs(relative)
    else:
        distance = -np.minimum(relative, 0)
    max_exact = num_buckets // 2
    max_distance = check_int("max_distance", max_distance, minimum=max_exact + 1)
    is_small = distance < max_exact
    with np.errstate(divide="ignore"):  # log(0) only where is_small already holds
        log_ratio = np.log(np.maximum(distance, 1) / max_exact) / math.log(max_distance / max_exact)
    large = max_exact + (log_ratio * (num_buckets - max_exact)).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return buckets + np.where(is_small, distance, large)


def t5_bucket_matrix(
    n_positions: int, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> np.ndarray:
    """The ``(n_positions, n_positions)`` matrix of T5 buckets for query ``m`` and key ``n``.

    See :func:`posenc.t5_relative_bucket`.
    """
    return t5_relative_bucket(relative_positions(n_positions), bidirectional, num_buckets, max_distance)


def shaw_relative_indices(n_positions: int, max_relative_position: int) -> np.ndarray:
    """Shaw et al.'s clipped relative indices: ``clip(n - m, -c, c) + c`` (Shaw, Uszkoreit, Vaswani 2018, section 3.2).

    ``c = max_relative_position`` is the clipping distance (the paper's ``k``). Each
    entry indexes one of ``2c + 1`` learned vectors; every key more than ``c`` positions
    away shares the vector of distance ``c`` in its direction.

    Returns an int64 array of shape ``(n_positions, n_positions)`` with values in ``[0, 2c]``.
    """
    c = check_int("max_relative_position", max_relative_position, minimum=1)
    return np.clip(relative_positions(n_positions), -c, c) + c
