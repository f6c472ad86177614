"""Plain scaled dot-product attention in NumPy, small enough to read in one sitting.

Used to show what attention does *without* positions (it is permutation-equivariant)
and what a bias such as ALiBi does to a softmax row. float64 throughout.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_real_array, check_bool, check_int, show_value

__all__ = [
    "attention_weights",
    "permutation_equivariance_gap",
    "random_projections",
    "scaled_dot_product_attention",
    "self_attention",
    "softmax",
]


def softmax(logits, axis: int = -1) -> np.ndarray:
    """``exp(z - max z) / sum exp(z - max z)`` along ``axis``; ``-inf`` entries (masked) get weight 0.

    Subtracting the row's maximum first keeps ``exp`` from overflowing on large scores
    (it changes nothing else: the factor ``exp(-max z)`` cancels).
    """
    if isinstance(logits, np.ndarray | list | tuple) or hasattr(logits, "detach"):
        try:
            z = as_real_array("logits", logits, allow_neg_inf=True)
        except ValueError as error:
            if "finite" not in str(error):
                raise
            raise ValueError("logits must not contain NaN or +inf (-inf marks a masked entry)") from None
    else:
        shown = f"{show_value(logits)} of type {type(logits).__name__}"
        raise TypeError(f"logits must be an array of real numbers, got {shown}")
    if z.ndim == 0:
        raise ValueError("logits must have at least one dimension (a row of scores), got a scalar")
    axis = check_int("axis", axis, minimum=-z.ndim, maximum=z.ndim - 1)
    if z.size == 0:  # nothing to normalise: an empty result, as for any empty input
        return z
    top = np.max(z, axis=axis, keepdims=True)
    if np.any(np.isneginf(top)):
        raise ValueError("every row of logits is masked (-inf everywhere): nothing to attend to")
    z = z - top
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def attention_weights(q, k, bias=None, causal: bool = False) -> np.ndarray:
    """``softmax(q k^T / sqrt(d) + bias)`` with an optional causal mask (Vaswani et al. 2017, eq. 1).

    ``q``: ``(..., n_q, d)``, ``k``: ``(..., n_k, d)``; ``bias`` broadcasts to
    ``(..., n_q, n_k)``. Returns the weights, rows summing to 1.
    """
    q = as_real_array("q", q)
    k = as_real_array("k", k)
    causal = check_bool("causal", causal)
    for name, array in (("q", q), ("k", k)):
        if array.ndim < 2:
            raise ValueError(f"{name} must have shape (..., n, d), got shape {array.shape}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same width d (last axis), got q {q.shape} and k {k.shape}")
    try:
        logits = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    except ValueError as error:
        raise ValueError(f"the leading (batch) axes of q {q.shape} and k {k.shape} do not broadcast") from error
    if bias is not None:
        bias = as_real_array("bias", bias, allow_neg_inf=True)
        try:
            logits = logits + bias
        except ValueError as error:
            raise ValueError(
                f"bias must broadcast to the scores' shape {logits.shape} (..., n_q, n_k), got shape {bias.shape}"
            ) from error
    if causal:
        n_q, n_k = logits.shape[-2:]
        future = np.arange(n_k)[None, :] > np.arange(n_q)[:, None] + (n_k - n_q)
        logits = np.where(future, -np.inf, logits)
    return softmax(logits, axis=-1)


def scaled_dot_product_attention(q, k, v, bias=None, causal: bool = False) -> np.ndarray:
    """``attention_weights(q, k, bias, causal) @ v``."""
    v = as_real_array("v", v)
    weights = attention_weights(q, k, bias, causal)
    if v.ndim < 2:
        raise ValueError(f"v must have shape (..., n_k, d_v), got shape {v.shape}")
    if v.shape[-2] != weights.shape[-1]:
        raise ValueError(f"v must have one row per key: {weights.shape[-1]} keys, got v of shape {v.shape}")
    return weights @ v


def random_projections(
    d_model: int, d_head: int | None = None, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded random query, key and value matrices ``(d_model, d_head)``, entries ~ N(0, 1/d_model)."""
    d_model = check_int("d_model", d_model, minimum=1)
    d_head = d_model if d_head is None else check_int("d_head", d_head, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(0.0, 1.0 / np.sqrt(d_model), size=(d_model, d_head)) for _ in range(3))


def self_attention(x, w_q, w_k, w_v, bias=None, causal: bool = False) -> np.ndarray:
    """One attention head on the rows of ``x`` (``(n, d_model)``): ``SDPA(x w_q, x w_k, x w_v)``."""
    x = as_real_array("x", x, ndim=2)
    w_q, w_k, w_v = _check_projections(x.shape[1], w_q, w_k, w_v)
    return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, bias, causal)


def _check_projections(d_model: int, w_q, w_k, w_v, rows_name: str = "x") -> tuple[np.ndarray, ...]:
    """Three 2-D projections with ``d_model`` rows; ``w_q`` and ``w_k`` of the same width."""
    checked = []
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        w = as_real_array(name, w)
        if w.ndim != 2 or w.shape[0] != d_model:
            raise ValueError(
                f"{name} must have shape (d_model, d_head) = ({d_model}, ...) to multiply the rows of "
                f"{rows_name} (width {d_model}), got shape {w.shape}"
            )
        checked.append(w)
    if checked[0].shape[1] != checked[1].shape[1]:
        raise ValueError(
            f"w_q and w_k must have the same number of columns (queries and keys share a width), "
            f"got {checked[0].shape} and {checked[1].shape}"
        )
    return tuple(checked)


def permutation_equivariance_gap(tokens, permutation, w_q, w_k, w_v, positions=None, causal: bool = False) -> float:
    """How much reordering a sentence changes attention beyond reordering its outputs.

    Returns ``max |attn(tokens[perm] + P) - attn(tokens + P)[perm]|`` where ``P`` is the
    ``positions`` table (one row per *slot*, so it stays put while the tokens move) or
    zero. Without positions and without a mask the gap is zero to rounding: plain
    self-attention is permutation-equivariant, so "the cat sat" and "sat cat the" get
    the same output vectors, reordered. With a position table it is not; nor with a
    causal mask (``causal=True``), because each token then sees a different prefix.
    """
    tokens = as_real_array("tokens", tokens, ndim=2)
    _check_projections(tokens.shape[1], w_q, w_k, w_v, rows_name="tokens")
    permutation = as_real_array("permutation", permutation, ndim=1, integer=True)
    if sorted(permutation.tolist()) != list(range(tokens.shape[0])):
        raise ValueError(
            f"permutation must reorder 0..{tokens.shape[0] - 1} (one index per row of tokens), "
            f"got {permutation.tolist()}"
        )
    slots = np.zeros_like(tokens) if positions is None else as_real_array("positions", positions, ndim=2)
    if slots.shape != tokens.shape:
        raise ValueError(f"positions must have the shape of tokens {tokens.shape}, got {slots.shape}")
    reordered = self_attention(tokens[permutation] + slots, w_q, w_k, w_v, causal=causal)
    original_then_reordered = self_attention(tokens + slots, w_q, w_k, w_v, causal=causal)[permutation]
    return float(np.max(np.abs(reordered - original_then_reordered)))
