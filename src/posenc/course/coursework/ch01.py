"""Chapter 1: one attention head from scratch (``self_attention``)."""

import numpy as np

from ... import attention
from ..activities import implementation, investigation, prediction
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
CHAPTER_ACTIVITIES = (
    implementation(EXERCISE, minutes=20),
    prediction("ex-ch01-predict-mask", 10),
    investigation("ex-ch01-float16", 20),
)
