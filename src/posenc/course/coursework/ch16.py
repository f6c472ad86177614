"""Chapter 16: position ids from a padding mask (``position_ids_from_mask``) and per-document positions of a
packed row (``packed_position_ids``)."""

import numpy as np

from ... import positions
from ..activities import implementation, investigation, prediction
from ..engine import Exercise
from ..inputs import Wholes


# --- position ids from the attention mask ------------------------------------------------------------
def position_ids_from_mask(attention_mask):
    """The reference: :func:`posenc.position_ids_from_mask` (pads filled with 0, as ``generate`` does)."""
    return positions.position_ids_from_mask(attention_mask)


def _mask(attention_mask) -> np.ndarray:
    return np.asarray(attention_mask, dtype=np.int64)


def _column_index(attention_mask):
    """0 .. seq-1 in every row: the positions of an unpadded batch."""
    mask = _mask(attention_mask)
    return np.broadcast_to(np.arange(mask.shape[-1]), mask.shape).copy()


def _pads_left_at_minus_one(attention_mask):
    """cumsum(mask) - 1 without filling the pads: -1 before a row's first real token."""
    return np.cumsum(_mask(attention_mask), axis=-1) - 1


def _counted_from_one(attention_mask):
    """The running sum itself: the first real token at position 1."""
    mask = _mask(attention_mask)
    return np.where(mask == 1, np.cumsum(mask, axis=-1), 0)


def _pads_at_one(attention_mask):
    """Pads filled with 1 (some models' own code) where generate fills 0."""
    return positions.position_ids_from_mask(attention_mask, fill_value=1)


def _minus_leading_pads(attention_mask):
    """The column minus the number of pads before the row's first real token: wrong after a pad in the middle."""
    mask = _mask(attention_mask)
    leading = np.argmax(mask == 1, axis=-1)
    leading = np.where(mask.any(axis=-1), leading, mask.shape[-1])
    shifted = np.arange(mask.shape[-1]) - np.asarray(leading)[..., None]
    return np.where(mask == 1, shifted, 0)


def _down_the_batch(attention_mask):
    """The running sum taken down the batch (axis 0) instead of along each row."""
    mask = _mask(attention_mask)
    return np.where(mask == 1, np.cumsum(mask, axis=0) - 1, 0)


def _random_mask(rng, shape):
    """0/1 with a run of left pads per row and some pads in the middle."""
    mask = (rng.random(shape) > 0.2).astype(np.int64)
    rows = mask.reshape(-1, shape[-1])
    for row in rows:
        row[: int(rng.integers(0, shape[-1]))] = 0
        if rng.random() < 0.8:
            row[-1] = 1  # most prompts end with a real token
    return rows.reshape(shape)


def _mask_hidden(rng):
    cases = []
    for _ in range(4):
        seq = int(rng.integers(1, 65))
        shape = (seq,) if rng.random() < 0.25 else (int(rng.integers(1, 6)), seq)
        cases.append({"attention_mask": _random_mask(rng, shape)})
    return cases


def _is_mask(kwargs) -> bool:
    """What the text describes: 0s and 1s, shape (batch, seq) or (seq,), seq >= 1."""
    mask = np.asarray(kwargs["attention_mask"])
    return mask.ndim in (1, 2) and mask.shape[-1] >= 1 and bool(np.isin(mask, (0, 1)).all())


def _vary_mask(mask, rng):
    """Other masks of the same batch: reversed rows, no padding, the first entry flipped, one more real token."""
    mask = np.asarray(mask)
    yield mask[..., ::-1].copy()
    yield np.ones_like(mask)
    flipped = mask.copy()
    flipped.flat[0] = 1 - flipped.flat[0]
    yield flipped
    yield np.concatenate((mask, np.ones_like(mask[..., :1])), axis=-1)




POSITION_IDS = Exercise(
    "position_ids_from_mask",
    "my_position_ids_from_mask(attention_mask)",
    position_ids_from_mask,
    [
        {"attention_mask": np.array([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])},  # left padding
        {"attention_mask": np.array([0, 0, 0, 1, 1])},  # one row, 1-D
        {"attention_mask": np.array([[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]])},  # pads in the middle
        {"attention_mask": np.array([[1]])},
    ],
    {
        "the first real token of every row is at position 0, however many pads come before it: count the real "
        "tokens (the running sum of the mask), not the columns": _column_index,
        "the pads need a valid position too: cumsum(mask) - 1 gives -1 before a row's first real token; set every "
        "pad to 0, as transformers does (masked_fill(attention_mask == 0, 0))": _pads_left_at_minus_one,
        "positions count from 0: subtract 1 from the running sum, so that a row's first real token is at 0": (
            _counted_from_one
        ),
        "fill the pads with 0, as transformers' generate does; you filled them with 1 (the mask hides them either "
        "way, but this exercise follows generate)": _pads_at_one,
        "a pad in the middle of a row does not advance the count: use the running sum of the mask, not the column "
        "minus the number of leading pads": _minus_leading_pads,
        "count along each row (the last axis): each row is one sequence, so the running sum runs over its columns, "
        "not down the batch": _down_the_batch,
    },
    hidden=_mask_hidden,
    label="ex-ch16-position-ids",
    args={
        "attention_mask": Wholes(
            about="0s and 1s of shape (batch, seq) or (seq,), as a list, a NumPy array (int64, int32 or float64) "
            "or a torch tensor",
            vary=_vary_mask,
        )
    },
    boundaries=[
        {"attention_mask": np.array([[0, 0, 0], [1, 1, 1]])},  # a row of pads only
        {"attention_mask": np.array([1])},
        {"attention_mask": np.array([0])},
        {"attention_mask": np.array([[1, 1, 1, 0, 0]])},  # right padding
        {"attention_mask": np.array([1, 0, 1, 0, 1, 0, 1])},  # every other token a pad
        # positions past 2**15 and 2**16: an int16 or uint16 count wraps here
        {"attention_mask": np.concatenate([np.zeros(3, dtype=np.int64), np.ones(70_000, dtype=np.int64)])},
        {"attention_mask": np.r_[np.zeros(300, dtype=np.int64), np.ones(1700, dtype=np.int64)][None]},
        {"attention_mask": np.array([[0, 1], [1, 0], [0, 0], [1, 1]])},
        {"attention_mask": np.array([[0, 1, 1], [0, 0, 1]])},  # more columns than rows
    ],
    domain=_is_mask,
)


# --- per-document positions of a packed row ----------------------------------------------------------------
def packed_position_ids(lengths):
    """The reference: :func:`posenc.packed_position_ids` (from 0 in every document)."""
    return positions.packed_position_ids(lengths)


def _lengths(lengths) -> np.ndarray:
    return np.asarray(lengths, dtype=np.int64)


def _one_count(lengths):
    """0 .. total-1: the positions of one document, as if nothing were packed."""
    return np.arange(_lengths(lengths).sum())


def _restart_at_one(lengths):
    return positions.packed_position_ids(lengths) + 1


def _which_document(lengths):
    return positions.document_ids(lengths)


def _minus_document_end(lengths):
    """The index minus where each document ends (np.cumsum(lengths)) instead of where it starts."""
    lengths = _lengths(lengths)
    return np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths), lengths)


def _packed_hidden(rng):
    cases = []
    for _ in range(4):
        count = int(rng.integers(1, 21))
        top = int(rng.choice([3, 40, 300]))
        cases.append({"lengths": rng.integers(1, top + 1, size=count)})
    return cases


def _positive(kwargs) -> bool:
    lengths = np.asarray(kwargs["lengths"])
    return lengths.ndim == 1 and lengths.size >= 1 and bool(np.all(lengths >= 1))


def _vary_lengths(lengths, rng):
    lengths = np.asarray(lengths)
    yield lengths[::-1].copy()
    yield lengths + 1
    yield np.r_[lengths, 2]




PACKED_POSITIONS = Exercise(
    "packed_position_ids",
    "my_packed_position_ids(lengths)",
    packed_position_ids,
    [
        {"lengths": [2, 3, 1]},
        {"lengths": [5]},
        {"lengths": [1, 1, 1]},
        {"lengths": np.array([4, 2, 6])},
        {"lengths": [3, 1, 4, 1, 5]},
    ],
    {
        "positions restart at 0 at the first token of every document; you counted through the whole row as if it "
        "were one document": _one_count,
        "each document's first token is at position 0, not 1": _restart_at_one,
        "that is which document each token belongs to; the position counts the tokens before it within its own "
        "document": _which_document,
        "subtract where each document starts (the total length of the documents before it, "
        "np.cumsum(lengths) - lengths), not where it ends": _minus_document_end,
    },
    hidden=_packed_hidden,
    label="ex-ch16-packed-positions",
    args={"lengths": Wholes(vary=_vary_lengths)},
    boundaries=[
        {"lengths": [1]},
        {"lengths": [1] * 40},  # every document one token long
        {"lengths": [2000]},
        {"lengths": [1, 1500, 1]},
        {"lengths": [40_000, 30_000, 5]},  # positions past 2**15, a row past 2**16: int16 or uint16 wraps
        {"lengths": [7, 1]},
        {"lengths": [2, 2, 2, 2]},
    ],
    domain=_positive,
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    implementation(POSITION_IDS, minutes=15),
    implementation(PACKED_POSITIONS, minutes=15),
    prediction("ex-ch16-predict-continuing", 10),
    investigation("ex-ch16-port-yarn", 20),
)
