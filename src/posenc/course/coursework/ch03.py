"""Chapter 3: the binary counter (``binary``)."""

import numpy as np

from ... import absolute
from ..activities import implementation, investigation, prediction
from ..engine import Exercise
from ..inputs import Whole


def _msb_first(n_positions, n_bits):
    return absolute.binary(n_positions, n_bits)[:, ::-1]


def _off_by_one(n_positions, n_bits):
    p = np.arange(1, n_positions + 1)
    return (p[:, None] >> np.arange(n_bits)[None, :]) & 1


def _uint8(n_positions, n_bits):
    """Bits of p modulo 256 (a uint8 holds 8 bits), zero above bit 7."""
    table = absolute.binary(n_positions, n_bits) * 1
    p = np.arange(n_positions) % 256
    table[:, : min(n_bits, 8)] = (p[:, None] >> np.arange(min(n_bits, 8))[None, :]) & 1
    table[:, 8:] = 0
    return table


_UINT8 = (
    "a uint8 holds only 8 bits (positions 0 to 255): np.unpackbits or .astype(np.uint8) loses bit 8 and up; "
    "shift the position itself, (p >> j) & 1, in a wide integer type"
)


def _eight_columns(kwargs, got, expected):
    return kwargs["n_bits"] > 8 and got.ndim == 2 and got.shape == (expected.shape[0], 8)


def _uint8_error(kwargs, error):
    return kwargs["n_positions"] > 256 and ("uint8" in str(error) or isinstance(error, OverflowError))


def _hidden(rng):
    sizes = [int(rng.integers(1, 5000)) for _ in range(3)] + [int(rng.integers(257, 3000))]
    # enough bits for every position (posenc.binary asks for that), sometimes a few more
    return [{"n_positions": n, "n_bits": max(1, (n - 1).bit_length()) + int(rng.integers(0, 3))} for n in sizes]



EXERCISE = Exercise(
    "binary",
    "my_binary(n_positions, n_bits)",
    absolute.binary,
    [
        {"n_positions": 16, "n_bits": 4},
        {"n_positions": 5, "n_bits": 3},
        {"n_positions": 1, "n_bits": 1},
        {"n_positions": 600, "n_bits": 10},  # past 256 positions, more than 8 bits
    ],
    {
        "column j is bit j, least significant first (period 2**(j+1)); yours is most significant first": _msb_first,
        "row p holds the bits of p itself, starting from p = 0": _off_by_one,
        _UINT8: _uint8,
    },
    returns="array",
    binary=True,
    hidden=_hidden,
    args={"n_positions": Whole(), "n_bits": Whole()},
    boundaries=[
        {"n_positions": 2, "n_bits": 1},
        {"n_positions": 8, "n_bits": 3},  # exactly 2**n_bits positions
        {"n_positions": 9, "n_bits": 4},  # one past
        {"n_positions": 256, "n_bits": 8},
        {"n_positions": 257, "n_bits": 9},
        {"n_positions": 3, "n_bits": 6},  # more bits than needed: the top ones are 0
    ],
    domain=lambda kwargs: kwargs["n_bits"] >= max(1, (kwargs["n_positions"] - 1).bit_length()),
    detectors={_UINT8: _eight_columns},
    error_hints={_UINT8: _uint8_error},
    label="ex-ch03-binary",
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    implementation(EXERCISE, minutes=15),
    prediction("ex-ch03-sines-only", 10),
    investigation("ex-ch03-average-flips", 15),
)
