"""Chapter 13: find the bug in a half-layout RoPE (``rope_half``) and in a checkpoint permutation
(``permute_for_half``)."""

import numpy as np
import torch

from ... import rope
from ..activities import implementation, investigation, prediction
from ..engine import Exercise
from ..inputs import Reals, Whole
from . import ch08


# --- RoPE in the half (rotate_half) layout --------------------------------------------------------
def rope_half(x, positions, base=10000.0):
    """The reference: :func:`posenc.apply_rope` with ``layout="half"``."""
    return rope.apply_rope(x, positions, rope.rope_inv_freq(x.shape[-1], base), layout="half")


def _clockwise(x, positions, base=10000.0):
    """rotate_half returning (x2, -x1): every pair turns the other way, RoPE at negated positions."""
    return rope.apply_rope(x, -np.asarray(positions, dtype=float), rope.rope_inv_freq(x.shape[-1], base), "half")


def _interleaved(x, positions, base=10000.0):
    return rope.apply_rope(x, positions, rope.rope_inv_freq(x.shape[-1], base), layout="interleaved")


def _exponent_i_over_d(x, positions, base=10000.0):
    """theta_i = base**(-i/d): np.arange(d // 2) / d in place of np.arange(0, d, 2) / d."""
    d = x.shape[-1]
    return rope.apply_rope(x, positions, rope.rope_inv_freq(2 * d, base)[: d // 2], layout="half")


def _counted_from_one(x, positions, base=10000.0):
    """theta_i = base**(-2i/d) with i = 1 .. d/2: RoFormer's 1-based count put into the 0-based formula."""
    d = x.shape[-1]
    return rope.apply_rope(x, positions, rope.rope_inv_freq(d, base) * base ** (-2 / d), layout="half")


def _repeated_table(x, positions, base=10000.0):
    """cos and sin tables built with np.repeat(angles, 2) (the interleaved layout's table) for rotate_half."""
    d = x.shape[-1]
    angles = rope.rope_angles(np.asarray(positions, dtype=float), rope.rope_inv_freq(d, base))
    cos, sin = np.cos(np.repeat(angles, 2, axis=-1)), np.sin(np.repeat(angles, 2, axis=-1))
    x = np.asarray(x, dtype=float)
    rotated = np.concatenate([-x[..., d // 2 :], x[..., : d // 2]], axis=-1)
    return x * cos + rotated * sin


def _bfloat16_positions(x, positions, base=10000.0):
    """Positions built in bfloat16 (torch.arange(n, dtype=torch.bfloat16)): integers above 256 are rounded."""
    rounded = torch.as_tensor(np.asarray(positions, dtype=np.float64)).to(torch.bfloat16).double().numpy()
    return rope.apply_rope(x, rounded, rope.rope_inv_freq(x.shape[-1], base), layout="half")


def _float32_angles(kwargs, expected):
    """What angles formed in float32 (as transformers forms them) may change: 8 float32 roundings of each angle.

    An angle's error moves each entry of its pair by at most the error times the pair's length.
    """
    x = np.asarray(kwargs["x"], dtype=np.float64)
    d = x.shape[-1]
    angles = np.abs(np.asarray(kwargs["positions"], dtype=np.float64))[:, None] * rope.rope_inv_freq(
        d, kwargs.get("base", 10000.0)
    )
    error = 8 * np.finfo(np.float32).eps * (angles + 1.0)
    allowance = error * np.hypot(x[..., : d // 2], x[..., d // 2 :])
    return np.concatenate([allowance, allowance], axis=-1)


def _random(shape, seed):
    return np.random.default_rng(1300 + seed).normal(size=shape)



# the same regimes as chapter 8's RoPE exercise: leading axes, odd pair counts, large positions
_rope_hidden = ch08._hidden

ROPE_HALF = Exercise(
    "rope_half",
    "my_rope_half(x, positions, base=10000.0)",
    rope_half,
    [
        {"x": _random((4, 8), 1), "positions": np.arange(4)},
        {"x": _random((2, 3, 16), 2), "positions": np.array([0, 7, 100])},
        {"x": _random((1, 2), 3), "positions": np.array([5])},
        {"x": _random((3, 8), 4), "positions": np.array([1, 2, 40]), "base": 500.0},
        {"x": _random((3, 8), 5), "positions": np.array([257, 1001, 5000])},
        {"x": _random((2, 4), 6), "positions": np.array([2**20, 2**20 + 1])},
    ],
    {
        "the rotation goes the wrong way: rotate_half(x) is (-x2, x1), so that a' = a cos - b sin and "
        "b' = b cos + a sin; (x2, -x1) turns every pair clockwise, which is RoPE at negated positions": _clockwise,
        "this layout pairs dimension i with i + head_dim/2; you paired (2i, 2i+1), the interleaved layout": _interleaved,
        "the exponent is 2i/d for pair i (np.arange(0, d, 2) / d); you used i/d, so the slowest pair turns "
        "far too fast": _exponent_i_over_d,
        "pair 0 turns at 1 radian per token: the exponent 2i/d counts pairs from i = 0 (RoFormer's "
        "10000**(-2(i-1)/d) counts from 1 and gives the same speeds)": _counted_from_one,
        "in the half layout the cos and sin tables are [angles, angles] (np.concatenate), so that dimension "
        "i and i + d/2 share pair i's angle; np.repeat(angles, 2) is the interleaved layout's table": _repeated_table,
        "form the positions in float64 (or at least float32): bfloat16 holds every integer only up to 256, "
        "so positions such as 257 or 5000 are rounded": _bfloat16_positions,
    },
    atol=1e-8,
    hidden=_rope_hidden,
    args=ch08.ROPE_ARGS,
    boundaries=ch08._boundaries(1300),
    tolerance=_float32_angles,
    precision="angles formed in float32 (as `transformers` forms them) pass too, within 8 float32 roundings of "
    "each angle",
    label="ex-ch13-fix-rope",
)


# --- the checkpoint permutation --------------------------------------------------------------------
def permute_for_half(w, n_heads):
    """The reference: each head's rows reordered by :func:`posenc.interleaved_to_half_permutation`."""
    w = np.asarray(w)
    head_dim = w.shape[0] // n_heads
    perm = rope.interleaved_to_half_permutation(head_dim)
    return w[np.concatenate([h * head_dim + perm for h in range(n_heads)])]


def _one_head(w, n_heads):
    """The whole matrix permuted as if it were one head."""
    return permute_for_half(w, 1)


def _inverse(w, n_heads):
    """The half -> interleaved direction: reshape (heads, 2, head_dim/2) instead of (heads, head_dim/2, 2)."""
    w = np.asarray(w)
    head_dim = w.shape[0] // n_heads
    inverse = np.argsort(rope.interleaved_to_half_permutation(head_dim))
    return w[np.concatenate([h * head_dim + inverse for h in range(n_heads)])]


def _columns(w, n_heads):
    return permute_for_half(np.asarray(w).T, n_heads).T


def _head_dim_from_columns(w, n_heads):
    """head_dim taken as d_model / n_heads (the input width), as if rows == d_model."""
    w = np.asarray(w)
    return permute_for_half(w, w.shape[0] // (w.shape[1] // n_heads))


def _permute_hidden(rng):
    cases = []
    for _ in range(3):
        n_heads, head_dim = int(rng.integers(1, 9)), 2 * int(rng.integers(1, 17))
        cases.append({"w": rng.normal(size=(n_heads * head_dim, int(rng.integers(1, 65)))), "n_heads": n_heads})
    return cases


def _whole_heads(kwargs) -> bool:
    """The text's shapes: n_heads heads of an even head_dim each."""
    rows, heads = np.shape(kwargs["w"])[0], int(kwargs["n_heads"])
    return heads >= 1 and rows % heads == 0 and (rows // heads) % 2 == 0


def _weights(rows, columns, seed):
    return np.random.default_rng(1310 + seed).normal(size=(rows, columns))



PERMUTE_FOR_HALF = Exercise(
    "permute_for_half",
    "my_permute_for_half(w, n_heads)",
    permute_for_half,
    [
        {"w": _weights(16, 16, 1), "n_heads": 2},  # a query projection: 2 heads of 8, d_model 16
        {"w": _weights(16, 8, 2), "n_heads": 2},  # more output rows than inputs
        {"w": _weights(8, 5, 3), "n_heads": 1},
        {"w": _weights(16, 32, 4), "n_heads": 2},  # a grouped-query key projection: 2 of 4 heads
        {"w": _weights(12, 6, 5), "n_heads": 6},  # head_dim 2: nothing to reorder
    ],
    {
        "the permutation acts within each head: reorder rows h * head_dim + perm for every head h, with "
        "perm = [0, 2, ..., head_dim - 2, 1, 3, ..., head_dim - 1]; you reordered all rows as one head": _one_head,
        "that is the inverse (half -> interleaved): the new row i of a head is its old row 2i for "
        "i < head_dim/2, and old row 2(i - head_dim/2) + 1 after": _inverse,
        "the output coordinates of an nn.Linear weight are its rows (w has shape (n_heads * head_dim, "
        "d_model)); you reordered the columns": _columns,
        "head_dim is w.shape[0] // n_heads, the rows of this projection: a grouped-query key projection "
        "has n_kv_heads * head_dim rows, not d_model": _head_dim_from_columns,
    },
    hidden=_permute_hidden,
    args={"w": Reals(), "n_heads": Whole()},
    boundaries=[
        {"w": _weights(4, 1, 6), "n_heads": 1},  # one column
        {"w": _weights(32, 3, 7), "n_heads": 4},  # four heads of 8
        {"w": _weights(6, 4, 8), "n_heads": 1},  # one head of 6: three pairs
    ],
    allowed=("posenc.interleaved_to_half_permutation",),
    domain=_whole_heads,
    label="ex-ch13-fix-permute",
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    implementation(ROPE_HALF, minutes=15),
    implementation(PERMUTE_FOR_HALF, minutes=15),
    prediction("ex-ch13-predict-table", 10),
    investigation("ex-ch13-gqa", 20),
)
