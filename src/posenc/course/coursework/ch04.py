"""Chapter 4: the offset matrix (``offset_matrix``)."""

import numpy as np

from ... import analysis
from ..activities import implementation, investigation, prediction
from ..engine import Exercise
from ..inputs import Real, Whole


def _blocks(angles):
    d = 2 * angles.size
    m = np.zeros((d, d))
    e = np.arange(0, d, 2)
    m[e, e] = m[e + 1, e + 1] = np.cos(angles)
    m[e, e + 1] = np.sin(angles)
    m[e + 1, e] = -np.sin(angles)
    return m


def _transposed(k, d_model, base=10000.0):
    return analysis.offset_matrix(k, d_model, base).T


def _no_frequency(k, d_model, base=10000.0):
    return _blocks(np.full(d_model // 2, float(k)))


def _ignores_base(k, d_model, base=10000.0):
    return analysis.offset_matrix(k, d_model, 10000.0)


def _hidden(rng):
    return [
        {
            "k": int(rng.integers(-2000, 2000)),
            "d_model": 2 * int(rng.integers(1, 17)),
            "base": float(np.exp(rng.uniform(np.log(10.0), np.log(1e6)))),
        }
        for _ in range(3)
    ]



EXERCISE = Exercise(
    "offset_matrix",
    "my_offset_matrix(k, d_model, base=10000.0)",
    analysis.offset_matrix,
    [
        {"k": 1, "d_model": 4},
        {"k": 5, "d_model": 8},
        {"k": -3, "d_model": 6, "base": 100.0},
        {"k": 0, "d_model": 2},
        {"k": 1000, "d_model": 16},
    ],
    {
        "the blocks are transposed (that matrix shifts by -k): the sine in the first row is +sin(k w_i)": _transposed,
        "each block turns by k times its pair's frequency w_i = base**(-2i/d_model), not by k": _no_frequency,
        "use the base argument: your matrix is the one for base 10000 whatever base is passed": _ignores_base,
    },
    hidden=_hidden,
    label="ex-ch04-offset-matrix",
    args={"k": Whole(), "d_model": Whole(), "base": Real()},
    boundaries=[{"k": -1, "d_model": 2}, {"k": 7, "d_model": 6, "base": 10.0}, {"k": 2049, "d_model": 4}],
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    implementation(EXERCISE, minutes=20),
    prediction("ex-ch04-predict-blocks", 15),
    investigation("ex-ch04-full-turn", 15),
)
