"""Chapter 4: the offset matrix (``offset_matrix``)."""

import numpy as np

from ... import analysis
from ..activities import implementation, investigation, prediction
from ..answers import Choice, Choices
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


_VECTORISED = """
def my_offset_matrix(k, d_model, base=10000.0):
    w = base ** (-np.arange(0, d_model, 2) / d_model)
    c, s = np.cos(k * w), np.sin(k * w)
    m = np.zeros((d_model, d_model))
    e = np.arange(0, d_model, 2)
    m[e, e], m[e, e + 1], m[e + 1, e], m[e + 1, e + 1] = c, s, -s, c
    return m
"""

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
    answers=(_VECTORISED,),
    hidden=_hidden,
    label="ex-ch04-offset-matrix",
    args={"k": Whole(), "d_model": Whole(), "base": Real()},
    boundaries=[{"k": -1, "d_model": 2}, {"k": 7, "d_model": 6, "base": 10.0}, {"k": 2049, "d_model": 4}],
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
ACTIVITIES = (
    implementation(EXERCISE, minutes=20),
    prediction(
        "ex-ch04-predict-blocks",
        15,
        (
            "Block i turns by 1000 theta_i: 1000, 316, 100, 32, 10, 3.2, 1 and 0.3 rad; the slowest pair (0.3 rad) "
            "is near the identity."
        ),
        (
            "A fast pair can be nearer: pair 3 (about 32 rad, five whole turns plus 0.2) beats pair 6 (1 rad), "
            "since a block shows the angle only modulo 2 pi; slow pairs make long offsets unambiguous."
        ),
        answer=Choices(
            "Which block of M_1000 is nearer the identity: pair 3 (turned by about 32 radians) or pair 6 (turned by "
            "1 radian)?",
            (
                Choice(
                    "Pair 6: it turned by far less",
                    "A block shows the angle only modulo 2π: 32 radians is five whole turns plus about 0.2, nearer "
                    "the identity than 1 radian.",
                ),
                Choice(
                    "Pair 3: 32 radians is five whole turns plus about 0.2 radians",
                    "A block cannot show whole turns, so a fast pair knows a long offset only modulo its "
                    "wavelength.",
                    correct=True,
                ),
                Choice(
                    "Neither: a shift of 1000 takes every block far from the identity",
                    "Pair 3's block is within about 0.2 of the identity, and the slowest pair's within about 0.3.",
                ),
            ),
        ),
    ),
    investigation(
        "ex-ch04-full-turn",
        15,
        "Finds k = 710 (710/2 pi is about 113.00001 turns; 355/113 approximates pi).",
        "No integer k > 0 gives exactly the identity: k = 2 pi j would make pi = k/(2j) rational.",
        (
            "Notes that for the full M_k all pairs would have to complete whole turns at once: codes never repeat "
            "exactly."
        ),
    ),
)
