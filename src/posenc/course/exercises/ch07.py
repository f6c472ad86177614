"""Chapter 7: ALiBi slopes for any number of heads (``alibi_slopes``)."""

import math

import numpy as np

from ... import biases
from ..activities import implementation, investigation, prediction
from ..answers import Choice, Choices
from ..engine import Exercise
from ..inputs import Whole


def _power_formula_everywhere(n_heads):
    return np.array([2 ** (-8 * (h + 1) / n_heads) for h in range(n_heads)])


def _from_zero(n_heads):
    return np.array([2 ** (-8 * h / n_heads) for h in range(n_heads)])


def _truncated_next_power(n_heads):
    m = 2 ** math.ceil(math.log2(n_heads))
    return np.array([2 ** (-8 * (h + 1) / m) for h in range(m)])[:n_heads]


_LOOP = """
def my_alibi_slopes(n_heads):
    m = 1
    while m * 2 <= n_heads:
        m *= 2
    slopes = [2 ** (-8 * (h + 1) / m) for h in range(m)]
    extra = [2 ** (-8 * (h + 1) / (2 * m)) for h in range(0, 2 * m, 2)]
    return np.array(slopes + extra[: n_heads - m])
"""

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
    answers=(_LOOP,),
    hidden=lambda rng: [{"n_heads": int(n)} for n in rng.integers(1, 97, size=4)],
    label="ex-ch07-alibi-slopes",
    args={"n_heads": Whole()},
    # each side of every power of two up to 64
    boundaries=[{"n_heads": n} for n in (2, 4, 5, 7, 9, 15, 17, 31, 32, 33, 63, 64, 65)],
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
ACTIVITIES = (
    implementation(EXERCISE, minutes=20),
    prediction(
        "ex-ch07-predict-buckets",
        15,
        "Encoder: both past keys in bucket 15, the key 200 ahead in 31; decoder: 31, 31 and 0.",
        (
            "Meaning: the bias cannot tell 200 back from 1000 back (the last bucket starts 91 back in the encoder);"
            " it says only 'far', so the model must rely on content."
        ),
        answer=Choices(
            "T5's defaults: which buckets hold the keys 200 back, 1000 back and 200 ahead, in an encoder and in a "
            "decoder?",
            (
                Choice(
                    "Encoder 14, 15, 31; decoder 30, 31, 0",
                    "Past max_distance (128) the buckets stop growing: 200 back and 1000 back share the last bucket.",
                ),
                Choice(
                    "Encoder 15, 15, 31; decoder 31, 31, 0",
                    "Both past keys are beyond max_distance and share the past's last bucket; a decoder gives "
                    "every key ahead the bucket of r = 0.",
                    correct=True,
                ),
                Choice(
                    "Encoder 15, 15, 31; decoder 31, 31, 31",
                    "A decoder has no buckets for keys ahead: every one gets the bucket of r = 0.",
                ),
                Choice(
                    "Encoder 31, 31, 15; decoder 31, 31, 0",
                    "In the encoder buckets 0 to 15 serve the past and 16 to 31 the future.",
                ),
            ),
        ),
    ),
    investigation(
        "ex-ch07-half-span",
        15,
        (
            "Computes, per head, the number of recent keys holding half of the attention: 2, 3, 6, 12, 23, 45, 89 "
            "and 173."
        ),
        "Compares with ln 2 / mu_h: close, slightly shorter for the gentlest head (e^-4 not negligible).",
        "Spans double from head to head, from a couple of keys to a couple of hundred.",
    ),
)
