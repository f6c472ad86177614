"""Chapter 8: RoPE from scratch, the paper's interleaved layout (``rope``)."""

import numpy as np

from ... import rope
from ..activities import implementation, investigation, prediction
from ..engine import Exercise
from ..inputs import Real, Reals, Wholes


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


#: What the text allows for RoPE's arguments (chapters 8 and 13).
ROPE_ARGS = {"x": Reals(), "positions": Wholes(), "base": Real()}



def _boundaries(seed):
    def random(shape, offset):
        return np.random.default_rng(seed + offset).normal(size=shape)

    return [
        {"x": random((1, 6), 20), "positions": np.array([0])},  # position 0 turns nothing; 3 pairs (odd)
        {"x": random((3, 4), 21), "positions": np.array([257, 2049, 40001])},  # not exact in bfloat16, float16
        {"x": random((3, 8), 22), "positions": np.array([5, 5, 0])},  # repeated and unsorted positions
        {"x": random((2, 2, 3, 4), 23), "positions": np.array([1, 2, 3])},  # two leading axes
        {"x": random((2, 6), 24), "positions": np.array([3, 99_999]), "base": 10.0},  # a small base, far out
    ]

EXERCISE = Exercise(
    "rope",
    "my_rope(x, positions, base=10000.0)",
    rope_interleaved,
    [
        {"x": _random((4, 8), 1), "positions": np.arange(4)},
        {"x": _random((2, 3, 16), 2), "positions": np.array([0, 7, 100])},
        {"x": _random((1, 2), 3), "positions": np.array([5])},
        {"x": _random((3, 8), 4), "positions": np.array([1, 2, 40]), "base": 500.0},
        {"x": _random((2, 4), 5), "positions": np.array([2**20, 2**20 + 1])},  # float32 angles: 0.06 rad off
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
    args=ROPE_ARGS,
    boundaries=_boundaries(800),
    precision="form the angles in float64",
    properties={
        "a rotation keeps the length of every pair (x[2i], x[2i+1]); your output changes some of them": _pair_lengths_changed,
    },
    label="ex-ch08-rope",
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    implementation(EXERCISE, minutes=25),
    prediction("ex-ch08-predict-base", 15),
    investigation("ex-ch08-bfloat16", 20),
    investigation("ex-ch08-which-layout", 15),
)
