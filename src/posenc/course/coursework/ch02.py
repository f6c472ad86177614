"""Chapter 2: the sinusoidal table (``sinusoidal``)."""

import numpy as np

from ... import absolute
from ..activities import implementation, investigation, prediction
from ..engine import Exercise
from ..inputs import Real, Whole


def _table(n_positions, d_model, angle):
    """Interleaved sin/cos columns from an ``angle(p, i)`` rule (p and i broadcast)."""
    p = np.arange(n_positions, dtype=np.float64)[:, None]
    i = np.arange((d_model + 1) // 2, dtype=np.float64)[None, :]
    a = angle(p, i) + 0 * i
    table = np.empty((n_positions, d_model))
    table[:, 0::2] = np.sin(a)
    table[:, 1::2] = np.cos(a[:, : d_model // 2])
    return table


def _swapped(n_positions, d_model, base=10000.0):
    a = _table(n_positions, d_model, lambda p, i: p / base ** (2 * i / d_model))
    out = a.copy()
    even = d_model // 2 * 2
    out[:, 0:even:2], out[:, 1:even:2] = a[:, 1:even:2], a[:, 0:even:2]
    return out


def _i_is_position(n_positions, d_model, base=10000.0):
    return _table(n_positions, d_model, lambda p, i: p / base ** (2 * p / d_model))


def _multiplied(n_positions, d_model, base=10000.0):
    return _table(n_positions, d_model, lambda p, i: p * base ** (2 * i / d_model))


def _column_exponent(n_positions, d_model, base=10000.0):
    """The exponent uses the column index (2i for sines, 2i+1 for cosines) instead of 2i for both."""
    p = np.arange(n_positions, dtype=np.float64)[:, None]
    col = np.arange(d_model, dtype=np.float64)[None, :]
    a = p / base ** (col / d_model)
    return np.where(col % 2 == 0, np.sin(a), np.cos(a))


def _column_speeds(n_positions, d_model, base=10000.0):
    """Every column its own speed: exponent 2j/d_model for column j (sines at even j, cosines at odd j)."""
    p = np.arange(n_positions, dtype=np.float64)[:, None]
    col = np.arange(d_model, dtype=np.float64)[None, :]
    a = p / base ** (2 * col / d_model)
    return np.where(col % 2 == 0, np.sin(a), np.cos(a))


def _concatenated(n_positions, d_model, base=10000.0):
    """All sines first, then all cosines (tensor2tensor's layout), instead of interleaved pairs."""
    table = absolute.sinusoidal(n_positions, d_model, base)
    return np.concatenate((table[:, 0::2], table[:, 1::2]), axis=1)


def _ignores_base(n_positions, d_model, base=10000.0):
    return absolute.sinusoidal(n_positions, d_model, 10000.0)


def _float32(n_positions, d_model, base=10000.0):
    p = np.arange(n_positions, dtype=np.float32)[:, None]
    i = np.arange((d_model + 1) // 2, dtype=np.float32)[None, :]
    a = (p / np.float32(base) ** (np.float32(2) * i / np.float32(d_model))).astype(np.float32)
    table = np.empty((n_positions, d_model))
    table[:, 0::2] = np.sin(a.astype(np.float64))
    table[:, 1::2] = np.cos(a[:, : d_model // 2].astype(np.float64))
    return table


_ODD = (
    "d_model is odd here: the last column is the sine of a final pair that has no cosine, so there are "
    "(d_model + 1) // 2 sines and d_model // 2 cosines"
)


def _odd_shape(kwargs, got, expected):
    return kwargs["d_model"] % 2 == 1 and got.shape[0] == expected.shape[0] and got.shape != expected.shape


def _odd_error(kwargs, error):
    return kwargs["d_model"] % 2 == 1 and isinstance(error, ValueError | IndexError | RuntimeError)


def _hidden(rng):
    return [
        {
            "n_positions": int(rng.integers(1, 200)),
            "d_model": int(rng.integers(1, 40)),
            "base": float(np.exp(rng.uniform(np.log(10.0), np.log(1e6)))),
        }
        for _ in range(4)
    ]



EXERCISE = Exercise(
    "sinusoidal",
    "my_sinusoidal(n_positions, d_model, base=10000.0)",
    absolute.sinusoidal,
    [
        {"n_positions": 4, "d_model": 4},
        {"n_positions": 50, "d_model": 16},
        {"n_positions": 7, "d_model": 6, "base": 100.0},
        {"n_positions": 1, "d_model": 2},
        {"n_positions": 9, "d_model": 5, "_hint": _ODD},
        {"n_positions": 300_000, "d_model": 4},  # float32 angles are off by about 0.02 radians here
    ],
    {
        "sin and cos are swapped: even columns (0, 2, ...) hold the sines, odd columns the cosines": _swapped,
        "i is the index of a (sin, cos) pair of dimensions, not the position: the exponent is 2i/d_model": _i_is_position,
        "divide the position by base**(2i/d_model); you multiplied": _multiplied,
        "both columns of pair i use the exponent 2i/d_model; the cosine column must not use its own index 2i+1": _column_exponent,
        "i counts pairs, not columns: the sine and the cosine of pair i share the exponent 2i/d_model; you gave column j the exponent 2j/d_model, so every column turns at its own speed": _column_speeds,
        "the paper interleaves the pairs (sin, cos, sin, cos, ...); you put all sines first": _concatenated,
        "use the base argument: your table is the one for base 10000 whatever base is passed": _ignores_base,
        "form the angles in float64: float32 angles lose accuracy as positions grow (about 0.02 radians at position 300000)": _float32,
    },
    hidden=_hidden,
    args={"n_positions": Whole(), "d_model": Whole(), "base": Real()},
    boundaries=[
        {"n_positions": 3, "d_model": 1, "_hint": _ODD},  # one column: the sine of pair 0
        {"n_positions": 5, "d_model": 3, "base": 10.0, "_hint": _ODD},
        {"n_positions": 2, "d_model": 8, "base": 2.0},
    ],
    precision="form the angles in float64",
    detectors={_ODD: _odd_shape},
    error_hints={_ODD: _odd_error},
    label="ex-ch02-sinusoidal",
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    implementation(EXERCISE, minutes=20),
    prediction("ex-ch02-predict-base", 10),
    investigation("ex-ch02-turns", 15),
)
