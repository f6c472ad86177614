"""Position ids in practice: left padding, packed sequences, and the masks that go with them.

A model is handed ``position_ids`` next to the tokens; nothing in the tokens says where a
sequence starts. Two batch layouts need them computed, not counted:

* **left padding** (a batch of prompts of different lengths, padded on the left for
  generation): a sequence's first real token must get position 0, so the ids come from the
  attention mask's running sum, as ``transformers`` computes them;
* **packing** (several documents concatenated in one row, for training without padding):
  positions restart at every document, and the attention mask must be block-diagonal so that
  no token sees another document.

Masks here are boolean, ``True`` where a query may attend to a key;
:func:`mask_to_bias` turns one into the additive ``0 / -inf`` bias that
:func:`posenc.scaled_dot_product_attention` takes, and :func:`rope_attention` runs RoPE
attention with one.

A fact the tests check: with *static* RoPE speeds, naive positions ``0 .. seq-1`` on a
left-padded row give the same attention outputs as the mask's positions (every position is
shifted by the same number of pads, and RoPE scores depend on differences only); they differ
for absolute encodings and for speeds that depend on the length (dynamic NTK, LongRoPE),
which read ``max(position_ids) + 1``.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_real_array, check_bool, check_int, check_inv_freq, show_value
from .attention import scaled_dot_product_attention
from .rope import apply_rope

__all__ = [
    "document_ids",
    "document_ids_from_position_ids",
    "document_mask",
    "mask_to_bias",
    "packed_position_ids",
    "padding_mask",
    "position_ids_from_mask",
    "rope_attention",
]


def _zero_one_mask(name: str, value) -> np.ndarray:
    """A padding mask as int64 0/1, shape ``(seq,)`` or ``(batch, seq)``; bools allowed."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as error:
        raise ValueError(f"{name} must be a rectangular array of 0s and 1s, got {show_value(value)}") from error
    if array.dtype.kind == "b":
        array = array.astype(np.int64)
    if array.dtype == object or array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of 0s and 1s (or booleans), got {show_value(value)}")
    if array.ndim not in (1, 2):
        raise ValueError(f"{name} must have shape (seq,) or (batch, seq), got shape {array.shape}")
    if array.shape[-1] == 0:
        raise ValueError(f"{name} must hold at least one position, got shape {array.shape}")
    if not np.all((array == 0) | (array == 1)):
        bad = array[(array != 0) & (array != 1)].ravel()[0]
        raise ValueError(f"{name} must hold only 0 (padding) and 1 (a real token), got {bad}")
    return array.astype(np.int64)


def position_ids_from_mask(attention_mask, fill_value: int = 0) -> np.ndarray:
    """Position ids from a padding mask: ``cumsum(mask) - 1`` along the row, padding set to ``fill_value``.

    ``attention_mask`` is ``(batch, seq)`` (or ``(seq,)``) of 1 for a real token, 0 for padding,
    as a tokenizer returns it. The running sum counts the real tokens so far, so the first real
    token of every row gets position 0 however many pads precede it (left padding), and a pad
    in the middle does not advance the count. ``transformers`` 5.23 computes exactly this in
    ``GenerationMixin._prepare_position_ids_for_generation`` (``generation/utils.py``):
    ``attention_mask.long().cumsum(-1) - 1``, then ``masked_fill(attention_mask == 0, 0)``;
    some models fill with 1 (Qwen2.5-Omni's and Idefics's own code), hence ``fill_value``. The
    pads' ids do not matter as long as the mask hides them; they only must be valid positions.

    Returns int64 of the shape of ``attention_mask``.
    """
    mask = _zero_one_mask("attention_mask", attention_mask)
    fill_value = check_int("fill_value", fill_value, minimum=0)
    return np.where(mask == 1, np.cumsum(mask, axis=-1) - 1, fill_value).astype(np.int64)


def padding_mask(attention_mask, causal: bool = True) -> np.ndarray:
    """Which key each query may see in a padded batch: ``allowed[b, i, j] = mask[b, j] and (j <= i if causal)``.

    ``attention_mask``: ``(batch, seq)`` (or ``(seq,)``) of 0/1 as for
    :func:`position_ids_from_mask`. Pads are hidden as keys. A pad's own query row would then be
    empty under a causal mask with left padding (nothing real before it); it is allowed to see
    itself only, so that every softmax row is defined. Its output is discarded anyway
    (``transformers`` instead fills such rows with the dtype's minimum, giving uniform weights).

    Returns a bool array ``(batch, seq, seq)`` (``(seq, seq)`` for a 1-D mask).
    """
    mask = _zero_one_mask("attention_mask", attention_mask).astype(bool)
    causal = check_bool("causal", causal)
    n = mask.shape[-1]
    allowed = np.broadcast_to(mask[..., None, :], (*mask.shape[:-1], n, n)).copy()
    if causal:
        allowed &= np.tril(np.ones((n, n), dtype=bool))
    pad_rows = ~mask
    diagonal = np.eye(n, dtype=bool)
    allowed |= pad_rows[..., :, None] & diagonal
    return allowed


def _lengths(lengths) -> np.ndarray:
    lengths = as_real_array("lengths", lengths, ndim=1, integer=True)
    if lengths.size == 0:
        raise ValueError("lengths must list at least one document, got an empty list")
    if np.any(lengths < 1):
        raise ValueError(f"lengths must be >= 1 (tokens per document), got {int(lengths.min())}")
    return lengths


def packed_position_ids(lengths, start: int = 0) -> np.ndarray:
    """Position ids of documents packed into one row: ``start, start+1, ..`` restarting at every document.

    ``lengths`` lists the documents' token counts, in packing order. For ``[2, 3, 1]``:
    ``[0, 1, 0, 1, 2, 0]``. This is what ``transformers``' ``DataCollatorWithFlattening``
    (``data/data_collator.py``) returns as ``position_ids`` (``position_ids_start`` is
    ``start``), and what its masking code reads to find the documents
    (:func:`document_ids_from_position_ids`).

    Returns int64, shape ``(sum(lengths),)``.
    """
    lengths = _lengths(lengths)
    start = check_int("start", start, minimum=0)
    offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return (np.arange(int(lengths.sum())) - offsets + start).astype(np.int64)


def document_ids(lengths) -> np.ndarray:
    """Which document each token of a packed row belongs to: ``[2, 3, 1]`` gives ``[0, 0, 1, 1, 1, 2]``.

    Returns int64, shape ``(sum(lengths),)``.
    """
    lengths = _lengths(lengths)
    return np.repeat(np.arange(lengths.size), lengths).astype(np.int64)


def document_ids_from_position_ids(position_ids) -> np.ndarray:
    """The documents of a packed row, read from its position ids: a new one wherever the id does not go up by 1.

    The rule of ``transformers``' ``find_packed_sequence_indices`` (``masking_utils.py``, 5.23):
    ``cumsum(diff(position_ids) != 1)`` with the first token in document 0. Its mask
    functions then let a query see only keys of its own document; they do so only when no
    2-D ``attention_mask`` is passed and there is no cache (``_preprocess_mask_arguments``):
    a packed row passed *with* an all-ones attention mask, or to a Llama model left at its
    config's ``use_cache=True`` (the model then makes a ``DynamicCache``, in training mode too),
    gets a plain causal mask, and its documents see each other.

    ``position_ids``: ``(seq,)`` or ``(batch, seq)`` of integers. Returns int64 of the same shape.
    """
    position_ids = as_real_array("position_ids", position_ids, integer=True)
    if position_ids.ndim not in (1, 2) or position_ids.shape[-1] == 0:
        raise ValueError(f"position_ids must have shape (seq,) or (batch, seq), seq >= 1, got {position_ids.shape}")
    step = np.diff(position_ids, axis=-1, prepend=position_ids[..., :1] - 1)
    return np.cumsum(step != 1, axis=-1).astype(np.int64)


def document_mask(lengths, causal: bool = True) -> np.ndarray:
    """The block-diagonal mask of a packed row: ``allowed[i, j] = doc(i) == doc(j) and (j <= i if causal)``.

    With it, attention over the packed row computes, for every document, what attention over
    that document alone computes (with :func:`packed_position_ids`); without it (a plain
    causal mask) every document after the first also attends to the ones before it.
    ``transformers`` builds the same mask from packed position ids
    (``packed_sequence_mask_function`` and the causal mask, ``masking_utils.py``).

    Returns a bool array ``(sum(lengths), sum(lengths))``.
    """
    documents = document_ids(lengths)
    causal = check_bool("causal", causal)
    allowed = documents[:, None] == documents[None, :]
    if causal:
        allowed &= np.tril(np.ones(allowed.shape, dtype=bool))
    return allowed


def mask_to_bias(mask) -> np.ndarray:
    """The additive attention bias of a boolean mask: 0 where ``mask`` is True, ``-inf`` where it is False.

    For :func:`posenc.scaled_dot_product_attention`'s ``bias`` (``softmax`` gives ``-inf`` weight 0).
    Returns float64 of the shape of ``mask``.
    """
    if hasattr(mask, "detach") and hasattr(mask, "cpu"):
        mask = mask.detach().cpu().numpy()
    try:
        array = np.asarray(mask)
    except (ValueError, TypeError) as error:
        raise ValueError(f"mask must be a rectangular array of booleans, got {show_value(mask)}") from error
    if array.dtype.kind != "b":
        raise TypeError(f"mask must be an array of booleans (True: may attend), got dtype {array.dtype}")
    if array.ndim < 2:
        raise ValueError(f"mask must have shape (..., n_queries, n_keys), got shape {array.shape}")
    return np.where(array, 0.0, -np.inf)


def rope_attention(q, k, v, positions, inv_freq, mask=None, layout: str = "half", attention_factor: float = 1.0):
    """RoPE attention: ``softmax(R(p) q . R(p) k / sqrt(d) + bias(mask)) v`` with queries and keys at ``positions``.

    :func:`posenc.apply_rope` on ``q`` and ``k`` (RoFormer eq. 34), then
    :func:`posenc.scaled_dot_product_attention` with :func:`mask_to_bias` of ``mask``.
    ``q``, ``k``, ``v``: ``(..., seq, d)``; with ``(batch, seq)`` positions (each row its own,
    e.g. from :func:`position_ids_from_mask`) they are ``(batch, seq, d)`` or
    ``(batch, heads, seq, d)``. ``mask``: booleans broadcastable to ``(..., seq, seq)``, True
    where a query may attend (:func:`padding_mask`, :func:`document_mask`); None: no mask
    (pass a causal one for a decoder); a 3-D mask with 4-D ``q`` is read as ``(batch, seq, seq)``,
    one mask for every head. Returns float64 ``(..., seq, d_v)``.
    """
    inv_freq = check_inv_freq(inv_freq)
    positions = as_real_array("positions", positions)
    if positions.ndim not in (1, 2):
        raise ValueError(f"positions must have shape (seq,) or (batch, seq), got shape {positions.shape}")
    q, k, v = (as_real_array(name, x) for name, x in (("q", q), ("k", k), ("v", v)))
    for name, x in (("q", q), ("k", k)):
        if x.ndim < 2 or x.shape[-1] != 2 * inv_freq.size:
            raise ValueError(
                f"{name} must have shape (..., seq, head_dim) with head_dim = 2 * len(inv_freq) = "
                f"{2 * inv_freq.size}, got shape {x.shape}"
            )
        if x.shape[-2] != positions.shape[-1]:
            raise ValueError(
                f"{name} has {x.shape[-2]} rows (axis -2) but positions has {positions.shape[-1]}; they must match"
            )
    q_rot = apply_rope(q, positions, inv_freq, layout, attention_factor)
    k_rot = apply_rope(k, positions, inv_freq, layout, attention_factor)
    bias = None
    if mask is not None:
        bias = mask_to_bias(mask)
        if bias.ndim == 3 and q_rot.ndim == 4:  # (batch, seq, seq) for (batch, heads, seq, d): every head
            bias = bias[:, None]
    try:
        return scaled_dot_product_attention(q_rot, k_rot, v, bias=bias)
    except ValueError as error:
        if "masked" in str(error):
            raise ValueError("mask leaves a query with no key to attend to (a row of False)") from None
        if "bias" in str(error):
            shape = None if bias is None else bias.shape
            raise ValueError(f"mask must broadcast to the scores (..., seq, seq), got shape {shape}") from None
        raise
