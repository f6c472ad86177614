"""Chapter 10: the NTK-aware base (``ntk_base``)."""

import numpy as np

from ... import scaling
from ..activities import implementation, investigation, prediction
from ..answers import Choice, Choices
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


_EXP_LOG = """
def my_ntk_base(base, factor, head_dim):
    return float(base * math.exp(math.log(factor) * head_dim / (head_dim - 2)))
"""

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
    answers=(_EXP_LOG,),
    hidden=_hidden,
    label="ex-ch10-ntk-base",
    args={"base": Real(), "factor": Real(), "head_dim": Whole()},
    boundaries=[
        {"base": 10000.0, "factor": 2.5, "head_dim": 6},  # a fractional factor, three pairs
        {"base": 10.0, "factor": 1.0001, "head_dim": 256},  # barely any extension
    ],
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
ACTIVITIES = (
    implementation(EXERCISE, minutes=15),
    prediction(
        "ex-ch10-predict",
        15,
        (
            "PI: pair 0 at 0.25 rad/token, last pair 4 times slower. NTK: pair 0 unchanged, last pair 4 times "
            "slower."
        ),
        "Dynamic NTK at 2L: effective factor 5, pair 0 unchanged, last pair 5 times slower.",
        answer=Choices(
            "Llama 2 extended with s = 4: pair 0's speed, and how many times slower the last pair turns, under "
            "PI, NTK-aware scaling and dynamic NTK at n = 2L?",
            (
                Choice(
                    "PI 0.25 rad/token, 4×; NTK 1 rad/token, 4×; dynamic 1 rad/token, 4×",
                    "Dynamic NTK at n = 2L uses the effective factor s·n/L − (s − 1) = 5, not the configured 4.",
                ),
                Choice(
                    "PI 0.25 rad/token, 4×; NTK 1 rad/token, 4×; dynamic 1 rad/token, 5×",
                    "Dynamic NTK is NTK-aware scaling with the effective factor s·n/L − (s − 1) = 5 at "
                    "n = 2L.",
                    correct=True,
                ),
                Choice(
                    "PI 0.25 rad/token, 4×; NTK 0.25 rad/token, 4×; dynamic 0.5 rad/token, 2×",
                    "NTK-aware scaling changes the base, and θ_0 = b^0 = 1 for any base: pair 0 never slows.",
                ),
                Choice(
                    "PI 1 rad/token, 4×; NTK 1 rad/token, 4×; dynamic 1 rad/token, 2×",
                    "PI divides every position by s, so pair 0 slows too, to 0.25 rad/token.",
                ),
            ),
        ),
    ),
    investigation(
        "ex-ch10-count",
        15,
        "From 8^(2i/126): more than 2 for i > 21, 42 pairs; more than 4 for i > 42, 21 pairs.",
        "Counts the same 42 and 21 with effective_scale.",
        "PI slows all 64 pairs by 8; NTK-aware slows pairs 0 to 21 by at most 2, pair 0 not at all.",
    ),
)
