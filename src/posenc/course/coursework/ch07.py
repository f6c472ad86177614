"""Chapter 7: ALiBi slopes for any number of heads (``alibi_slopes``)."""

import math

import numpy as np

from ... import biases
from ..activities import implementation, investigation, prediction
from ..engine import Exercise
from ..inputs import Whole


def _power_formula_everywhere(n_heads):
    return np.array([2 ** (-8 * (h + 1) / n_heads) for h in range(n_heads)])


def _from_zero(n_heads):
    return np.array([2 ** (-8 * h / n_heads) for h in range(n_heads)])


def _truncated_next_power(n_heads):
    m = 2 ** math.ceil(math.log2(n_heads))
    return np.array([2 ** (-8 * (h + 1) / m) for h in range(m)])[:n_heads]



EXERCISE = Exercise(
    "alibi_slopes",
    "my_alibi_slopes(n_heads)",
    biases.alibi_slopes,
    [{"n_heads": 8}, {"n_heads": 1}, {"n_heads": 16}, {"n_heads": 12}, {"n_heads": 6}, {"n_heads": 3}],
    {
        "for a head count that is not a power of two, take the slopes of the nearest lower power of two, "
        "then every other slope of twice as many heads": _power_formula_everywhere,
        "the first slope is 2**(-8/n), not 1: count heads from 1": _from_zero,
        "truncating the next power of two's slopes is a shortcut some code takes; the paper interleaves "
        "the extra slopes instead": _truncated_next_power,
    },
    returns="ndarray",
    hidden=lambda rng: [{"n_heads": int(n)} for n in rng.integers(1, 97, size=4)],
    label="ex-ch07-alibi-slopes",
    args={"n_heads": Whole()},
    # each side of every power of two up to 64
    boundaries=[{"n_heads": n} for n in (2, 4, 5, 7, 9, 15, 17, 31, 32, 33, 63, 64, 65)],
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    implementation(EXERCISE, minutes=20),
    prediction("ex-ch07-predict-buckets", 15),
    investigation("ex-ch07-half-span", 15),
)
