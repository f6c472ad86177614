"""Chapter 15: a quoted curve's value between two quoted lengths (``interpolate_at_length``)."""

import numpy as np

from ... import papers
from ..activities import implementation, investigation, prediction
from ..answers import Choice, Choices
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


_BISECT = """
import bisect


def my_interpolate_at_length(lengths, values, length):
    lengths = [float(v) for v in lengths]
    j = bisect.bisect_right(lengths, length) - 1
    j = min(j, len(lengths) - 2)
    l0, l1 = lengths[j], lengths[j + 1]
    v0, v1 = float(values[j]), float(values[j + 1])
    return v0 + (v1 - v0) * math.log(length / l0) / math.log(l1 / l0)
"""

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
    answers=(_BISECT,),
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
ACTIVITIES = (
    prediction(
        "ex-ch15-predict",
        15,
        "A prediction for both models with a reason, written before looking.",
        (
            "Table 2: YaRN (s = 16) 7B goes from 2.42 at 65536 to more than 10 at 98304, past its 64k window (s L ="
            " 16 x 4096); YaRN (s = 32) 7B keeps falling to 2.36 at 98304 and is 2.37 at 131072."
        ),
        (
            "Explains: the limit is set by the window the rescaled frequencies cover (s L), not by the length of "
            "the fine-tuning data (64k tokens for both)."
        ),
        answer=Choices(
            "At 98,304 tokens, is each model's perplexity near its value at 65,536, or far above it?",
            (
                Choice(
                    "Both far above: neither saw a sequence longer than 64k in fine-tuning",
                    "The s = 32 model falls to 2.36: the limit is the window s·L its rescaled frequencies cover, not "
                    "the length of the fine-tuning data.",
                ),
                Choice(
                    "The s = 16 model far above (more than 10), the s = 32 model near (2.36)",
                    "Past s·L = 16 × 4096 = 65,536 the s = 16 model's slow pairs reach angles it never saw; "
                    "the s = 32 model's window reaches 131,072.",
                    correct=True,
                ),
                Choice(
                    "The s = 32 model far above, the s = 16 model near",
                    "Reversed: the s = 16 model's window ends at 16 × 4096 = 65,536 tokens, and it goes above 10.",
                ),
                Choice(
                    "Both near: YaRN keeps the perplexity flat at any length",
                    "Only within its window: the s = 16 model goes from 2.42 at 65,536 to more than 10 at 98,304.",
                ),
            ),
        ),
    ),
    implementation(INTERPOLATE, minutes=20),
    investigation(
        "ex-ch15-investigate",
        25,
        (
            "For each Figure 1 curve, finds the longest length with a perplexity below its value at 8192: Together "
            "34816, YaRN (s = 16) 75776 (13B) and 77824 (7B), Code Llama and YaRN (s = 32) 131072."
        ),
        (
            "Compares with the windows: Together's and the s = 16 curves stay below their 8k value a little past "
            "their window and rise beyond it; Code Llama stays below it up to 131072, the last length measured, "
            "with its minimum (81920 and 94208) inside its 100k window; the s = 32 data end at the window."
        ),
        (
            "For the lab (text, bits per character), seed by seed and by chapter 12's margin rule: zero-shot, every "
            "extension is above its 1x value at 4x in all 12 seeds (behind by the rule); fine-tuned, dynamic NTK "
            "(below in 11 of 12 seeds) and LongRoPE (11 of 12) are below it by the rule; YaRN (9 of 12), PI (8 of "
            "12) and NTK-aware (6 of 12) are inconclusive; YaRN with matched betas and the plain model fine-tuned "
            "without a method stay above it in all 12 seeds."
        ),
        (
            "Says what the two sets have in common: a fine-tune at the target length, with a method that fits "
            "it, keeps the longer context from hurting within the extended window; and notes that each lab curve is "
            "relative to the model's own loss at L, which the fine-tune raised, so the lab shows no gain over the "
            "original model at its margin."
        ),
    ),
)
