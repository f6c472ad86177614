"""Chapter 8: RoPE from scratch, the paper's interleaved layout (``rope``)."""

import numpy as np

from ... import rope
from ..engine import Exercise


def rope_interleaved(x, positions, base=10000.0):
    """The reference: :func:`posenc.apply_rope` with ``layout="interleaved"``."""
    return rope.apply_rope(x, positions, rope.rope_inv_freq(x.shape[-1], base), layout="interleaved")


def _clockwise(x, positions, base=10000.0):
    return rope.apply_rope(x, -np.asarray(positions, dtype=float), rope.rope_inv_freq(x.shape[-1], base), "interleaved")


def _half_layout(x, positions, base=10000.0):
    return rope.apply_rope(x, positions, rope.rope_inv_freq(x.shape[-1], base), layout="half")


def _multiplied(x, positions, base=10000.0):
    return rope.apply_rope(x, positions, 1 / rope.rope_inv_freq(x.shape[-1], base), layout="interleaved")


def _ignores_base(x, positions, base=10000.0):
    return rope_interleaved(x, positions, 10000.0)


def _float32(x, positions, base=10000.0):
    inv = rope.rope_inv_freq(x.shape[-1], base).astype(np.float32)
    angles = np.asarray(positions, dtype=np.float32)[:, None] * inv[None, :]
    a, b = x[..., 0::2], x[..., 1::2]
    c, s = np.cos(angles.astype(np.float64)), np.sin(angles.astype(np.float64))
    out = np.empty_like(x, dtype=np.float64)
    out[..., 0::2] = a * c - b * s
    out[..., 1::2] = a * s + b * c
    return out


def _pair_lengths_changed(kwargs, got):
    x = np.asarray(kwargs["x"], dtype=float)
    before = np.hypot(x[..., 0::2], x[..., 1::2])
    after = np.hypot(got[..., 0::2], got[..., 1::2])
    return not np.allclose(before, after, rtol=1e-6, atol=1e-9)


def _random(shape, seed):
    return np.random.default_rng(800 + seed).normal(size=shape)


def _hidden(rng):
    cases = []
    for _ in range(3):
        seq, half = int(rng.integers(1, 9)), int(rng.integers(1, 17))
        shape = (*(int(v) for v in rng.integers(1, 4, size=int(rng.integers(0, 3)))), seq, 2 * half)
        cases.append(
            {
                "x": rng.normal(size=shape),
                "positions": rng.integers(0, 100_000, size=seq),
                "base": float(np.exp(rng.uniform(np.log(100.0), np.log(1e6)))),
            }
        )
    return cases


_PRECISION = "form the angles in float64: at position 2**20 float32 angles are off by up to 0.06 radians"

EXERCISE = Exercise(
    "rope",
    "my_rope(x, positions, base=10000.0)",
    rope_interleaved,
    [
        {"x": _random((4, 8), 1), "positions": np.arange(4)},
        {"x": _random((2, 3, 16), 2), "positions": np.array([0, 7, 100])},
        {"x": _random((1, 2), 3), "positions": np.array([5])},
        {"x": _random((3, 8), 4), "positions": np.array([1, 2, 40]), "base": 500.0},
        {"x": _random((2, 4), 5), "positions": np.array([2**20, 2**20 + 1]), "_precision": _PRECISION},
    ],
    {
        "the rotation goes the wrong way: a' = a cos - b sin, b' = a sin + b cos": _clockwise,
        "the paper pairs dimensions (2j, 2j+1); you paired j with j + head_dim/2 (the 'half' layout)": _half_layout,
        "pair j turns by position * base**(-2j/head_dim); you multiplied by base**(2j/head_dim)": _multiplied,
        "use the base argument: your rotation is the one for base 10000 whatever base is passed": _ignores_base,
        "form the angles in float64: float32 angles lose accuracy as positions grow (up to 0.06 radians at position 2**20)": _float32,
    },
    atol=1e-8,
    hidden=_hidden,
    properties={
        "a rotation keeps the length of every pair (x[2i], x[2i+1]); your output changes some of them": _pair_lengths_changed,
    },
    hides=("posenc.rope:apply_rope", "posenc.rope:rope_angles"),
    label="ex-ch08-rope",
)
