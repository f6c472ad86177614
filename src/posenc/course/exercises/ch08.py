"""Chapter 8: RoPE from scratch, the paper's interleaved layout (``rope``)."""

import numpy as np

from ... import rope
from ..activities import implementation, investigation, prediction
from ..answers import Choice, Choices
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


_COMPLEX = """
def my_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    z = x[..., 0::2] + 1j * x[..., 1::2]
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    z = z * np.exp(1j * np.outer(np.asarray(positions, dtype=np.float64), theta))
    out = np.empty(x.shape)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out
"""

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
    answers=(_COMPLEX,),
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
ACTIVITIES = (
    implementation(EXERCISE, minutes=25),
    prediction(
        "ex-ch08-predict-base",
        15,
        "Pair 0's speed does not change; the slowest pair becomes almost ten times slower.",
        (
            "The curve falls roughly like 1 - ln r / ln b: with base 100,000 it is higher at almost every distance "
            "past the first few tokens (98.9% of 11 to 10,000), about 0.17 on average over 5,000 to 10,000 where "
            "base 10,000 is about 0."
        ),
        answer=Choices(
            "The base goes from 10,000 to 100,000. Which pair keeps its speed, and what happens to the curve of "
            "the score against the distance?",
            (
                Choice(
                    "Pair 0 keeps its speed; the curve stays higher at long distances",
                    "θ_i = b^(−2i/d), so pair 0 keeps 1 radian per token and the slowest pair becomes almost "
                    "ten times slower; the curve falls roughly like 1 − ln r / ln b.",
                    correct=True,
                ),
                Choice(
                    "The slowest pair keeps its speed; the curve stays higher at long distances",
                    "θ_i = b^(−2i/d): pair 0 turns 1 radian per token for every base; the slowest pair becomes "
                    "almost ten times slower.",
                ),
                Choice(
                    "Pair 0 keeps its speed; the curve falls sooner",
                    "Slower pairs stay aligned for longer: the curve falls roughly like 1 − ln r / ln b, higher for "
                    "a larger b.",
                ),
                Choice(
                    "Every pair slows ten times, so the whole curve stretches ten times to the right",
                    "Pair i slows by 10^(2i/d): pair 0 not at all, the slowest pair by almost 10.",
                ),
            ),
        ),
    ),
    investigation(
        "ex-ch08-bfloat16",
        20,
        (
            "Uses angle_rounding_error: 30 of the 64 pairs are off by more than 0.1 rad, all but one (pair 36) "
            "among pairs 0 to 31."
        ),
        (
            "Explains: bfloat16 stores 5000 as 4992 (spacing 32), an error of about 8 theta_i radians, above 0.1 "
            "when theta_i > 0.0125, so the fast (low-numbered) pairs."
        ),
        "Pair 0 is off by 8 radians, more than a whole turn.",
    ),
    investigation(
        "ex-ch08-which-layout",
        15,
        "Rotates a probe with the module, such as the unit vector e_0 at position 1.",
        "Finds which dimension picks up the sine: dimension 4 = d/2, not dimension 1.",
        "Concludes the module uses the half layout (i, i + d/2) by default.",
    ),
)
