"""Chapter 5: similarity against the offset (``similarity_by_offset``)."""

import numpy as np

from ... import absolute, analysis
from ..activities import implementation, investigation, prediction
from ..engine import Exercise
from ..inputs import Real, Whole, Wholes


def _sin(offsets, d_model, base=10000.0):
    a = np.asarray(offsets, dtype=float)[:, None] * absolute.sinusoidal_frequencies(d_model, base)[None, :]
    return np.sin(a).sum(axis=1)


def _doubled(offsets, d_model, base=10000.0):
    return 2 * analysis.similarity_by_offset(offsets, d_model, base)


def _ignores_base(offsets, d_model, base=10000.0):
    return analysis.similarity_by_offset(offsets, d_model, 10000.0)


def _hidden(rng):
    return [
        {
            "offsets": rng.integers(-3000, 3000, size=int(rng.integers(1, 30))),
            "d_model": 2 * int(rng.integers(1, 33)),
            "base": float(np.exp(rng.uniform(np.log(10.0), np.log(1e6)))),
        }
        for _ in range(3)
    ]



EXERCISE = Exercise(
    "similarity_by_offset",
    "my_similarity_by_offset(offsets, d_model, base=10000.0)",
    analysis.similarity_by_offset,
    [
        {"offsets": np.array([0, 1, 2, 10]), "d_model": 8},
        {"offsets": np.arange(-5, 6), "d_model": 16, "base": 100.0},
        {"offsets": np.array([0]), "d_model": 2},
        {"offsets": np.array([3, 700, 5000]), "d_model": 64},
    ],
    {
        "sin(a)sin(b) + cos(a)cos(b) = cos(a - b): the sum is of cosines of k w_i": _sin,
        "there are d_model/2 pairs, each contributing one cosine; you counted each twice": _doubled,
        "use the base argument: your values are the ones for base 10000 whatever base is passed": _ignores_base,
    },
    hidden=_hidden,
    label="ex-ch05-similarity-by-offset",
    args={"offsets": Wholes(), "d_model": Whole(), "base": Real()},
    boundaries=[
        {"offsets": np.array([-7]), "d_model": 6},  # one negative offset, three pairs
        {"offsets": np.array([2049, 40001, -3]), "d_model": 4, "base": 10.0},  # not exact in float16
    ],
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    implementation(EXERCISE, minutes=15),
    prediction("ex-ch05-one-pair", 10),
    investigation("ex-ch05-half-width", 15),
)
