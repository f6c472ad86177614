"""Chapter 9: turns within the trained context (``turns_within_context``)."""

import numpy as np

from ... import analysis, rope
from ..activities import implementation, investigation, prediction
from ..answers import Choice, Choices
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


_WAVELENGTHS = """
def my_turns(head_dim, base, context_length):
    wavelength = 2 * np.pi * base ** (np.arange(0, head_dim, 2) / head_dim)
    return context_length / wavelength
"""

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
    answers=(_WAVELENGTHS,),
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
ACTIVITIES = (
    implementation(EXERCISE, minutes=10),
    prediction(
        "ex-ch09-predict",
        15,
        "(a) Up: doubling L moves the one-turn crossing by about 4.8 pairs, about 10 dimensions: 100.",
        (
            "(b) Down: the 50 times larger base moves it to about half the dimensions, 64; both checked with "
            "critical_dimension."
        ),
        answer=Choices(
            "Llama 2's critical dimension is 92. What becomes of it (a) when L doubles to 8192, (b) when the base "
            "grows 50 times, to 500,000, at L = 4096?",
            (
                Choice(
                    "(a) Down, to about 84; (b) up, to about 120",
                    "Directions swapped: a longer L gives every pair more turns, so more pairs turn (up); a larger "
                    "base slows the pairs, so fewer do (down).",
                ),
                Choice(
                    "(a) Up, to 128: at twice the length every pair turns; (b) down, to about 64",
                    "Doubling L moves the one-turn crossing by only (d/2)·log_b 2 ≈ 4.8 pairs: the critical "
                    "dimension rises to about 100.",
                ),
                Choice(
                    "(a) Up, to about 100; (b) up, to about 120: a larger base gives longer wavelengths",
                    "Longer wavelengths mean fewer pairs complete a turn within L: the critical dimension falls, to "
                    "64.",
                ),
                Choice(
                    "(a) Up, to about 100; (b) down, to about 64",
                    "Doubling L moves the crossing by (d/2)·log_b 2 ≈ 4.8 pairs, about 10 dimensions; the "
                    "larger base moves it to about half the dimensions.",
                    correct=True,
                ),
            ),
        ),
    ),
    investigation(
        "ex-ch09-llama3",
        15,
        "Counts the pairs with at least one turn within 8192: 35 of 64 (29 never turn).",
        "Critical dimension 70 (Llama 2: 92).",
        "Slowest wavelength about 2.56 million tokens, about 312 L, against about 13 L for Llama 2.",
    ),
)
