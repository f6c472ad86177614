"""Chapter 15: a quoted curve's value between two quoted lengths (``interpolate_at_length``)."""

import numpy as np

from ... import papers
from ..activities import implementation, investigation, prediction
from ..engine import Exercise
from ..inputs import Numbers, Real


def interpolate_at_length(lengths, values, length):
    """The reference: :func:`posenc.interpolate_at_length`."""
    return papers.interpolate_at_length(lengths, values, length)


def _linear_in_length(lengths, values, length):
    return float(np.interp(length, lengths, values))


def _nearest(lengths, values, length):
    lengths = np.asarray(lengths, dtype=float)
    return float(np.asarray(values, dtype=float)[np.argmin(np.abs(np.log(lengths) - np.log(length)))])


def _geometric(lengths, values, length):
    return float(np.exp(np.interp(np.log(length), np.log(lengths), np.log(values))))


def _hidden(rng):
    cases = []
    for _ in range(5):
        n = int(rng.integers(2, 9))
        lengths = np.cumsum(rng.integers(256, 8192, size=n)).tolist()
        values = rng.uniform(0.0, 12.0, size=n).round(2).tolist()
        j = int(rng.integers(0, n - 1))
        length = float(np.exp(rng.uniform(np.log(lengths[j]), np.log(lengths[j + 1]))))
        if rng.random() < 0.4:  # at a quoted length: the first, the last or one between
            length = lengths[int(rng.choice([0, n - 1, j]))]
        cases.append({"lengths": lengths, "values": values, "length": length})
    return cases


def _within(kwargs):
    """The text's domain: increasing quoted lengths, and a length within them."""
    lengths = np.asarray(kwargs["lengths"], dtype=float)
    return bool(np.all(np.diff(lengths) > 0) and lengths[0] <= float(kwargs["length"]) <= lengths[-1])


def _shifted(value, rng):
    """Lengths moved (still increasing, the first and last kept) for a rerun with the same values."""
    lengths = np.asarray(value)
    middle = lengths.copy()
    middle[1:-1] = middle[1:-1] + (np.diff(lengths)[1:] // 3 if lengths.size > 2 else 0)
    return [middle, lengths * 2]


_PI = [2048, 4096, 6144, 8192, 10240]  # YaRN paper, Table 1: PI (s = 2)
_PI_VALUES = [3.92, 3.51, 3.51, 3.34, 8.07]



INTERPOLATE = Exercise(
    "paper_interpolate",
    "my_interpolate_at_length(lengths, values, length)",
    interpolate_at_length,
    [
        # YaRN paper, Table 1, PI (s = 2): at a quoted length, and between two
        {"lengths": [2048, 4096, 6144, 8192, 10240], "values": [3.92, 3.51, 3.51, 3.34, 8.07], "length": 4096},
        {"lengths": [2048, 4096, 6144, 8192, 10240], "values": [3.92, 3.51, 3.51, 3.34, 8.07], "length": 9000},
        # Table 2, YaRN (s = 32) 7B: unevenly spaced lengths
        {"lengths": [8192, 32768, 65536, 98304, 131072], "values": [3.56, 2.70, 2.45, 2.36, 2.37], "length": 16384},
        {"lengths": [8192, 32768, 65536, 98304, 131072], "values": [3.56, 2.70, 2.45, 2.36, 2.37], "length": 120000},
        # a passkey accuracy that falls to 0 (authors' repository, NTK-aware, LLaMA 7B at 32k)
        {"lengths": [2048, 4096, 8192, 16384, 32768], "values": [0.84, 0.8, 0.9, 0.92, 0.0], "length": 20000},
    ],
    {
        "interpolate linearly in log(length), the axis the quoted lengths are spaced on: halfway between "
        "8192 and 32768 is 16384, not 20480": _linear_in_length,
        "between two quoted lengths, blend the two neighbouring values; do not take the nearest one": _nearest,
        "interpolate the values themselves, not their logarithms (a value of 0 must stay reachable)": _geometric,
    },
    returns="float",
    hidden=_hidden,
    label="ex-ch15-interpolate",
    args={
        "lengths": Numbers(forms=("ndarray", "float64"), vary=_shifted),
        "values": Numbers(forms=("ndarray",)),
        "length": Real(forms=("int", "np.float64")),
    },
    boundaries=[
        {"lengths": _PI, "values": _PI_VALUES, "length": 2048},  # the first quoted length
        {"lengths": _PI, "values": _PI_VALUES, "length": 10240},  # the last
        {"lengths": _PI, "values": _PI_VALUES, "length": 10239.5},  # just before the last
        {"lengths": [4096, 16384], "values": [2.5, 0.0], "length": 8192},  # two quoted lengths, down to 0
        {"lengths": np.array(_PI), "values": np.array(_PI_VALUES), "length": 5000},  # NumPy arrays, as ch. 15 has
        # in the upper half (in log length) of interior segments: nearer the next quoted length than the last
        {"lengths": _PI, "values": _PI_VALUES, "length": 7900},
        {"lengths": [8192, 32768, 65536, 98304, 131072], "values": [3.56, 2.70, 2.45, 2.36, 2.37], "length": 60000},
    ],
    domain=_within,
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    prediction("ex-ch15-predict", 15),
    implementation(INTERPOLATE, minutes=20),
    investigation("ex-ch15-investigate", 25),
)
