"""Chapter 6: scale the token embeddings, then add positions (``scaled_embedding``)."""

import math
import re

import numpy as np

from ... import absolute
from ..activities import implementation, investigation, prediction
from ..engine import Exercise
from ..inputs import Reals


def scaled_embedding(token_embeddings, position_table):
    """The reference: ``token_embeddings * sqrt(d_model) + position_table[:seq]``."""
    d = token_embeddings.shape[-1]
    return token_embeddings * math.sqrt(d) + position_table[: token_embeddings.shape[-2]]


def _none(token_embeddings, position_table):
    return token_embeddings + position_table[: token_embeddings.shape[-2]]


def _positions(token_embeddings, position_table):
    d = token_embeddings.shape[-1]
    return token_embeddings + math.sqrt(d) * position_table[: token_embeddings.shape[-2]]


def _divided(token_embeddings, position_table):
    d = token_embeddings.shape[-1]
    return token_embeddings / math.sqrt(d) + position_table[: token_embeddings.shape[-2]]


def _whole_table(kwargs, error):
    """The whole table added: the error is a broadcast of the sequence's rows against all of the table's (NumPy
    names both shapes, torch both sizes)."""
    table, embeddings = kwargs["position_table"], kwargs["token_embeddings"]
    rows, seq = table.shape[0], embeddings.shape[-2]
    text = str(error)
    if rows == seq:
        return False
    if "broadcast" in text:
        shapes = {tuple(int(n) for n in found.split(",") if n.strip()) for found in re.findall(r"\(([\d, ]+)\)", text)}
        return tuple(table.shape) in shapes and tuple(embeddings.shape) in shapes
    return "must match the size" in text and f"({rows})" in text and f"({seq})" in text


def _case(shape, rows, seed, scale=1.0):
    rng = np.random.default_rng(600 + seed)
    return {"token_embeddings": rng.normal(size=shape) * scale, "position_table": absolute.sinusoidal(rows, shape[-1])}


def _hidden(rng):
    cases = []
    for _ in range(3):
        shape = tuple(int(v) for v in rng.integers(1, 6, size=int(rng.integers(1, 3)))) + tuple(
            int(v) for v in rng.integers(1, 20, size=2)
        )
        cases.append(_case(shape, shape[-2] + int(rng.integers(0, 10)), int(rng.integers(1e6))))
    return cases



EXERCISE = Exercise(
    "scaled_embedding",
    "my_add_positions(token_embeddings, position_table)",
    scaled_embedding,
    [_case((5, 16), 8, 1, scale=0.02), _case((2, 3, 4), 3, 2), _case((4, 7), 4, 3)],
    {
        "multiply the token embeddings by sqrt(d_model) before adding the positions": _none,
        "scale the token embeddings, not the position table": _positions,
        "multiply by sqrt(d_model); you divided": _divided,
    },
    hidden=_hidden,
    args={"token_embeddings": Reals(), "position_table": Reals()},
    boundaries=[_case((1, 3), 5, 4), _case((2, 1, 1), 1, 5), _case((3, 6), 3, 6)],  # seq 1, width 1, rows = seq
    error_hints={
        "the table has more rows than the sequence is long: add only its first seq rows, "
        "position_table[:seq] with seq = token_embeddings.shape[-2]": _whole_table,
    },
    label="ex-ch06-scaled-embedding",
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    implementation(EXERCISE, minutes=10),
    prediction("ex-ch06-predict-ratio", 10),
    investigation("ex-ch06-param-count", 15),
)
