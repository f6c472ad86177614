"""Chapter 10: the NTK-aware base (``ntk_base``)."""

import numpy as np

from ... import scaling
from ..activities import implementation, investigation, prediction
from ..engine import Exercise
from ..inputs import Real, Whole


def ntk_base(base, factor, head_dim):
    """The reference: :func:`posenc.ntk_scaled_base`."""
    return scaling.ntk_scaled_base(base, factor, head_dim)


def _inverted_exponent(base, factor, head_dim):
    return base * factor ** ((head_dim - 2) / head_dim)


def _no_exponent(base, factor, head_dim):
    return base * factor


def _divided(base, factor, head_dim):
    return base / factor ** (head_dim / (head_dim - 2))


def _hidden(rng):
    return [
        {
            "base": float(np.exp(rng.uniform(np.log(100.0), np.log(1e7)))),
            "factor": float(rng.uniform(1.0, 64.0)),
            "head_dim": 2 * int(rng.integers(2, 129)),
        }
        for _ in range(3)
    ]



EXERCISE = Exercise(
    "ntk_base",
    "my_ntk_base(base, factor, head_dim)",
    ntk_base,
    [
        {"base": 10000.0, "factor": 2.0, "head_dim": 128},
        {"base": 10000.0, "factor": 8.0, "head_dim": 128},
        {"base": 500000.0, "factor": 4.0, "head_dim": 64},
        {"base": 10000.0, "factor": 1.0, "head_dim": 4},
    ],
    {
        "the exponent is d/(d-2), so that the slowest pair slows down by exactly the factor; you used (d-2)/d": _inverted_exponent,
        "raise the factor to the power d/(d-2) before multiplying the base": _no_exponent,
        "a larger base means slower rotations: multiply the base, do not divide it": _divided,
    },
    rtol=1e-10,
    returns="float",
    hidden=_hidden,
    label="ex-ch10-ntk-base",
    args={"base": Real(), "factor": Real(), "head_dim": Whole()},
    boundaries=[
        {"base": 10000.0, "factor": 2.5, "head_dim": 6},  # a fractional factor, three pairs
        {"base": 10.0, "factor": 1.0001, "head_dim": 256},  # barely any extension
    ],
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    implementation(EXERCISE, minutes=15),
    prediction("ex-ch10-predict", 15),
    investigation("ex-ch10-count", 15),
)
