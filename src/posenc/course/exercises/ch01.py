"""Chapter 1: one attention head from scratch (``self_attention``)."""

import numpy as np

from ... import attention
from ..activities import implementation, investigation, prediction
from ..answers import Choice, Choices
from ..engine import Exercise
from ..inputs import Reals


def _case(n, d_model, d_k, d_v, scale=1.0, seed=0):
    rng = np.random.default_rng(100 + seed)
    return {
        "x": rng.normal(size=(n, d_model)) * scale,
        "w_q": rng.normal(size=(d_model, d_k)) / np.sqrt(d_model),
        "w_k": rng.normal(size=(d_model, d_k)) / np.sqrt(d_model),
        "w_v": rng.normal(size=(d_model, d_v)) / np.sqrt(d_model),
    }


def _hidden(rng):
    cases = []
    for _ in range(3):
        n, d_model, d_k, d_v = (int(v) for v in rng.integers(1, 12, size=4))
        cases.append(
            _case(n, d_model, d_k, d_v, scale=float(rng.choice([1.0, 3.0, 40.0])), seed=int(rng.integers(1e6)))
        )
    return cases


def _softmax(scores, axis=-1):
    scores = scores - scores.max(axis=axis, keepdims=True)
    weights = np.exp(scores)
    return weights / weights.sum(axis=axis, keepdims=True)


def _no_scale(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return _softmax(q @ k.T) @ v


def _scale_by_d(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return _softmax(q @ k.T / q.shape[-1]) @ v


def _wrong_axis(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return _softmax(q @ k.T / np.sqrt(q.shape[-1]), axis=0) @ v


def _no_softmax(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return (q @ k.T / np.sqrt(q.shape[-1])) @ v


def _scale_by_model_width(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return _softmax(q @ k.T / np.sqrt(x.shape[-1])) @ v


def _overflowed(kwargs, got, expected):
    return bool(np.isfinite(expected).all() and not np.isfinite(got).all())


_TORCH = """
def my_self_attention(x, w_q, w_k, w_v):
    x, w_q, w_k, w_v = (torch.as_tensor(np.array(a), dtype=torch.float64) for a in (x, w_q, w_k, w_v))
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1) @ v
"""

EXERCISE = Exercise(
    "self_attention",
    "my_self_attention(x, w_q, w_k, w_v)",
    attention.self_attention,
    [
        _case(3, 4, 4, 4, seed=1),
        _case(5, 8, 8, 8, seed=2),
        _case(1, 2, 2, 2, seed=3),
        _case(6, 8, 3, 5, seed=4),  # non-square projections: the key width is not x's width
        _case(7, 16, 4, 16, scale=40.0, seed=5),  # scores in the thousands: exp overflows without the max
    ],
    {
        "scale the scores by 1/sqrt(d), where d is the width of the queries and keys": _no_scale,
        "divide the scores by sqrt(d), not by d": _scale_by_d,
        "the softmax runs over the keys (each row of weights must sum to 1): use axis=-1": _wrong_axis,
        "turn the scores into weights with a softmax before mixing the values": _no_softmax,
        "d is the width of the queries and keys (w_q.shape[1], q.shape[-1]), not the width of x: "
        "here the projections are not square": _scale_by_model_width,
    },
    answers=(_TORCH,),
    hidden=_hidden,
    args={"x": Reals(), "w_q": Reals(), "w_k": Reals(), "w_v": Reals()},
    boundaries=[
        _case(1, 1, 1, 1, seed=6),  # one token: its weight is 1
        _case(4, 3, 1, 2, seed=7),  # d = 1: the scale is 1
        _case(2, 5, 5, 1, scale=10.0, seed=8),
        _case(12, 8, 8, 8, scale=40.0, seed=10),  # large scores, near ties: float32 is off by 1e-4 relative here
    ],
    precision="compute in float64 (large scores lose digits in float32)",
    detectors={
        "your output has inf or NaN where the answer is finite: exp overflows on large scores; subtract each "
        "row's maximum score before exp (it cancels in the ratio)": _overflowed,
    },
    label="ex-ch01-attention",
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
ACTIVITIES = (
    implementation(EXERCISE, minutes=20),
    prediction(
        "ex-ch01-predict-mask",
        10,
        "Only a and b change; c and d keep their outputs.",
        (
            "Reason: under the mask a word's output depends on itself and the set of words up to it, and attention "
            "ignores their order: a and b now see different sets, c and d the same ones."
        ),
        answer=Choices(
            "After the swap (causal mask, no positions), which words get a different output vector?",
            (
                Choice(
                    "All four: the order of the words changed",
                    "c and d see the same set of words as before, and within that set attention ignores order.",
                ),
                Choice(
                    "Only a and b",
                    "Now a sees b and a instead of itself alone, and b only itself instead of a and b; c and d "
                    "see the same sets as before.",
                    correct=True,
                ),
                Choice(
                    "None: without positions, attention ignores order",
                    "Without the mask it would; under the causal mask a and b see different sets of words after "
                    "the swap.",
                ),
                Choice(
                    "Only c and d",
                    "c and d see the same sets of words as before; it is a and b whose visible words change.",
                ),
            ),
        ),
    ),
    investigation(
        "ex-ch01-float16",
        20,
        (
            "Finds by search the first length with a shared code, n = 2051 (positions 1537 and 1538): float16's "
            "spacing just below 1 is 2^-11, and the step 1/(n-1) must fall a little below it."
        ),
        (
            "Counts the neighbour pairs sharing a code with normalized_code_collisions and plots their share "
            "against n: at n = 4097, 1024 of 4096 (25%), all among positions >= 2048."
        ),
        (
            "Explains why neighbours suffice: rounding never reverses order, so if p < q share a code, every "
            "position between them does too, p and p + 1 included."
        ),
    ),
)
