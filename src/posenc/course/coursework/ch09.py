"""Chapter 9: turns within the trained context (``turns_within_context``)."""

import numpy as np

from ... import analysis, rope
from ..activities import implementation, investigation, prediction
from ..engine import Exercise
from ..inputs import Real, Whole


def turns_within_context(head_dim, base, context_length):
    """The reference: full turns of each pair within ``context_length`` tokens."""
    return analysis.rotations_within_context(rope.rope_inv_freq(head_dim, base), context_length)


def _radians(head_dim, base, context_length):
    return context_length * rope.rope_inv_freq(head_dim, base)


def _wavelength(head_dim, base, context_length):
    return analysis.wavelengths(rope.rope_inv_freq(head_dim, base))


def _inverted(head_dim, base, context_length):
    return context_length / (2 * np.pi * rope.rope_inv_freq(head_dim, base))


def _hidden(rng):
    return [
        {
            "head_dim": 2 * int(rng.integers(1, 129)),
            "base": float(np.exp(rng.uniform(np.log(10.0), np.log(1e7)))),
            "context_length": int(rng.integers(1, 200_000)),
        }
        for _ in range(3)
    ]



EXERCISE = Exercise(
    "turns_within_context",
    "my_turns(head_dim, base, context_length)",
    turns_within_context,
    [
        {"head_dim": 8, "base": 10000.0, "context_length": 2048},
        {"head_dim": 128, "base": 500000.0, "context_length": 8192},
        {"head_dim": 2, "base": 10.0, "context_length": 1},
    ],
    {
        "that is the angle in radians; a full turn is 2 pi radians": _radians,
        "that is each pair's wavelength (tokens per turn); turns = context length / wavelength": _wavelength,
        "turns = context_length * theta_j / (2 pi); you divided by theta_j": _inverted,
    },
    hidden=_hidden,
    label="ex-ch09-turns",
    args={"head_dim": Whole(), "base": Real(), "context_length": Whole()},
    boundaries=[
        {"head_dim": 6, "base": 500000.0, "context_length": 131072},  # three pairs, a long context
        {"head_dim": 128, "base": 10000.0, "context_length": 4096},
        # a NumPy base keeps the result float64: exponents formed in float32 are 4e-7 off here
        {"head_dim": 254, "base": np.float64(500000.0), "context_length": 131072},
    ],
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    implementation(EXERCISE, minutes=10),
    prediction("ex-ch09-predict", 15),
    investigation("ex-ch09-llama3", 15),
)
