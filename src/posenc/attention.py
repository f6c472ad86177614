"""Plain scaled dot-product attention in NumPy, small enough to read in one sitting.

Used to show what attention does *without* positions (it is permutation-equivariant)
and what a bias such as ALiBi does to a softmax row. float64 throughout.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_real_array, check_int

__all__ = [
    "attention_weights",
    "permutation_equivariance_gap",
    "random_projections",
    "scaled_dot_product_attention",
    "self_attention",
    "softmax",
]


def softmax(logits, axis: int = -1) -> np.ndarray:
    """``exp(z - max z) / sum exp(z - max z)`` along ``axis``; ``-inf`` entries (masked) get weight 0."""
    z = np.asarray(logits, dtype=np.float64)
    if np.any(np.isnan(z)) or np.any(np.isposinf(z)):
        raise ValueError("logits must not contain NaN or +inf (-inf marks a masked entry)")
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
    if q.ndim < 2 or k.ndim < 2 or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have shapes (..., n, d) with the same d, got {q.shape} and {k.shape}")
    logits = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if bias is not None:
        logits = logits + as_real_array("bias", bias)
    if causal:
        n_q, n_k = logits.shape[-2:]
        future = np.arange(n_k)[None, :] > np.arange(n_q)[:, None] + (n_k - n_q)
        logits = np.where(future, -np.inf, logits)
    return softmax(logits, axis=-1)


def scaled_dot_product_attention(q, k, v, bias=None, causal: bool = False) -> np.ndarray:
    """``attention_weights(q, k, bias, causal) @ v``."""
    v = as_real_array("v", v)
    weights = attention_weights(q, k, bias, causal)
    if v.shape[-2] != weights.shape[-1]:
        raise ValueError(f"v must have one row per key: {weights.shape[-1]} keys, got v of shape {v.shape}")
    return weights @ v


def random_projections(
    d_model: int, d_head: int | None = None, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded random query, key and value matrices ``(d_model, d_head)``, entries ~ N(0, 1/d_model)."""
    d_model = check_int("d_model", d_model, minimum=1)
    d_head = d_model if d_head is None else check_int("d_head", d_head, minimum=1)
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(0.0, 1.0 / np.sqrt(d_model), size=(d_model, d_head)) for _ in range(3))


def self_attention(x, w_q, w_k, w_v, bias=None, causal: bool = False) -> np.ndarray:
    """One attention head on the rows of ``x`` (``(n, d_model)``): ``SDPA(x w_q, x w_k, x w_v)``."""
    x = as_real_array("x", x, ndim=2)
    return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, bias, causal)


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
