"""Rotary position embedding (RoPE): rotate each 2-D pair of a query or key by its position.

Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding",
section 3.2 (eq. 13-15 for the rotation, eq. 34 for the efficient form). Pair ``i``
turns by ``position * inv_freq[i]`` radians, with ``inv_freq[i] = base**(-2*i/head_dim)``,
so the dot product of a rotated query at ``m`` and key at ``n`` depends on ``m - n``
only (the relative property).

Two memory layouts of the pairs are in use and give different numbers for the same
weights:

* ``"half"``: pair ``i`` is dimensions ``(i, i + head_dim/2)``, as GPT-NeoX and the Llama
  family in the ``transformers`` library do it (``rotate_half``);
* ``"interleaved"``: pair ``i`` is dimensions ``(2i, 2i + 1)``, as the RoFormer paper,
  GPT-J, Meta's original Llama code and the complex-number form do it.

:func:`posenc.interleaved_to_half_permutation` maps one onto the other.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_real_array, check_base, check_choice, check_even_int, check_inv_freq, check_real, is_torch

__all__ = [
    "LAYOUTS",
    "apply_rope",
    "apply_rope_complex",
    "interleaved_to_half_permutation",
    "p_rope_inv_freq",
    "rope_angles",
    "rope_cos_sin",
    "rope_inv_freq",
]

#: Names of the two pair layouts; "half" pairs ``(i, i + head_dim/2)`` and "interleaved" pairs ``(2i, 2i + 1)``.
LAYOUTS = ("half", "interleaved")


def rope_inv_freq(head_dim: int, base: float = 10000.0) -> np.ndarray:
    """Rotation speed of each pair in radians per position: ``base ** (-2 * i / head_dim)``.

    ``i = 0 .. head_dim/2 - 1`` (RoFormer eq. 15). Pair 0 is the *fastest* (1 radian per
    token, wavelength ``2 pi``); the last pair is the slowest (wavelength
    ``2 pi * base ** ((head_dim - 2) / head_dim)``).

    Returns a float64 array of shape ``(head_dim // 2,)``.
    """
    head_dim = check_even_int("head_dim", head_dim)
    base = check_base(base)
    return base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)


def p_rope_inv_freq(head_dim: int, base: float = 10000.0, p: float = 1.0) -> np.ndarray:
    """p-RoPE: RoPE's speeds with only the fastest fraction ``p`` of the pairs kept, the rest set to 0.

    Barbero et al. 2024, "Round and Round We Go! What makes Rotary Positional Encodings
    useful?" (arXiv 2410.06205): Gemma 7B uses RoPE's lowest frequencies mostly for what
    the authors suspect is semantic information, so p-RoPE removes the slowest fraction
    ``1 - p`` of them. The paper's pseudocode (``apply_p_rope``, with ``p`` named
    ``rope_percentage``) rotates ``rope_angles = int(p * head_dim // 2)`` pairs, i.e.
    ``floor(p * head_dim / 2)``, and leaves the other ``head_dim // 2 - rope_angles``
    unrotated. Google DeepMind's Gemma code (``gemma/gm/math/_positional_embeddings.py``,
    ``apply_rope(rope_proportion=...)``, which pads their timescales with infinity) and
    ``transformers``' rope type "proportional" (``modeling_rope_utils``) compute::

        inv_freq[i] = base ** (-2 * i / head_dim)   for i <  int(p * head_dim // 2)
        inv_freq[i] = 0                             for i >= int(p * head_dim // 2)

    The kept speeds are exactly those of :func:`posenc.rope_inv_freq` (the exponent keeps
    ``head_dim``, unlike partial RoPE's ``rotary_dim``), and the result has ``head_dim // 2``
    entries, for :func:`posenc.apply_rope` with every dimension: a pair with speed 0 never
    turns. ``p = 1`` is RoPE, ``p = 0`` is NoPE (all zeros).

    Returns a float64 array of shape ``(head_dim // 2,)``.
    """
    return keep_fastest_pairs(rope_inv_freq(head_dim, base), p)


def keep_fastest_pairs(inv_freq, p: float) -> np.ndarray:
    """p-RoPE's rule: a copy of ``inv_freq`` whose pairs ``i >= int(p * head_dim // 2)`` get speed 0.

    ``head_dim = 2 * len(inv_freq)``; the rule of Barbero et al.'s ``apply_p_rope`` and of
    ``transformers``' "proportional" rope type (see :func:`p_rope_inv_freq`). Used by
    :func:`p_rope_inv_freq`, the "proportional" scaling method and ``posenc.nn``'s ``p_rope``.
    """
    inv_freq = np.array(check_inv_freq(inv_freq), dtype=np.float64)
    p = check_real("p", p, minimum=0.0)
    if p > 1:
        raise ValueError(f"p must be between 0 and 1 (the fraction of pairs that rotate), got {p}")
    inv_freq[int(p * (2 * inv_freq.size) // 2) :] = 0.0
    return inv_freq


def rope_angles(positions, inv_freq) -> np.ndarray:
    """Rotation angle of every pair at every position: ``positions[:, None] * inv_freq[None, :]``.

    Formed in float64 whatever the input dtypes: at position ``2**20`` a float32 angle
    would be off by up to ``2**20 * 2**-24 = 0.06`` radians before any rounding of the
    result (chapter 8 measures this). Positions may be fractional (interpolated).

    Returns a float64 array of shape ``(len(positions), len(inv_freq))``.
    """
    positions = as_real_array("positions", positions, ndim=1)
    inv_freq = check_inv_freq(inv_freq)
    return positions[:, None] * inv_freq[None, :]


def rope_cos_sin(positions, inv_freq, attention_factor: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``(attention_factor * cos(angles), attention_factor * sin(angles))``, float64, shape ``(seq, head_dim//2)``.

    The attention factor (YaRN's temperature, Peng et al. 2023, eq. 22) scales both the
    query and the key when both are rotated, so the logits scale by its square.
    """
    attention_factor = check_real("attention_factor", attention_factor, positive=True)
    angles = rope_angles(positions, inv_freq)
    return attention_factor * np.cos(angles), attention_factor * np.sin(angles)


def _check_x_against(x, n_positions: int, n_pairs: int, rotary_dim: int | None = None) -> None:
    shape = tuple(x.shape)
    if len(shape) < 2:
        raise ValueError(f"x must have shape (..., seq, head_dim), got shape {shape}")
    if rotary_dim is None and shape[-1] != 2 * n_pairs:
        raise ValueError(
            f"x has head_dim={shape[-1]} (its last axis) but inv_freq has {n_pairs} frequencies; "
            f"RoPE needs head_dim == 2 * len(inv_freq) = {2 * n_pairs} (for partial RoPE, which rotates only "
            f"the first dimensions of each head, pass rotary_dim={2 * n_pairs})"
        )
    if rotary_dim is not None and shape[-1] < rotary_dim:
        raise ValueError(f"rotary_dim={rotary_dim} must be <= head_dim, the last axis of x, got x of shape {shape}")
    if shape[-2] != n_positions:
        raise ValueError(
            f"x has seq={shape[-2]} positions (its second-to-last axis) but positions has "
            f"{n_positions} entries; they must match"
        )


def _check_rope_input(x, positions, n_pairs: int, rotary_dim) -> tuple[np.ndarray, int]:
    """Validate ``x`` against ``positions`` (``(seq,)`` or ``(batch, seq)``) and ``rotary_dim``.

    Returns the positions (float64) and the number of dimensions that rotate.
    """
    if rotary_dim is not None:
        rotary_dim = check_even_int("rotary_dim", rotary_dim)
        if rotary_dim != 2 * n_pairs:
            raise ValueError(
                f"rotary_dim must be 2 * len(inv_freq) = {2 * n_pairs} (one frequency per rotated pair), "
                f"got rotary_dim={rotary_dim}"
            )
    positions = as_real_array("positions", positions)
    if positions.ndim not in (1, 2):
        raise ValueError(
            f"positions must be 1-dimensional (seq,) or 2-dimensional (batch, seq), got shape {positions.shape}"
        )
    if positions.ndim == 2:
        shape = tuple(x.shape)
        if len(shape) < 3:
            raise ValueError(
                f"positions of shape (batch, seq) = {positions.shape} need x of shape (batch, heads, seq, "
                f"head_dim) or (batch, seq, head_dim), got x of shape {shape}"
            )
        if positions.shape[0] not in (1, shape[0]):
            raise ValueError(
                f"positions has batch {positions.shape[0]} (its first axis) but x has batch {shape[0]} (its "
                "first axis); they must match, or positions must have batch 1"
            )
    _check_x_against(x, positions.shape[-1], n_pairs, rotary_dim)
    return positions, 2 * n_pairs


def _broadcast_table(table, ndim: int):
    """Reshape a ``(batch, seq, pairs)`` table to ``(batch, 1, ..., 1, seq, pairs)`` for an ``ndim``-axis ``x``."""
    if table.ndim == 2:
        return table
    return table.reshape((table.shape[0],) + (1,) * (ndim - 3) + tuple(table.shape[1:]))


def apply_rope(
    x, positions, inv_freq, layout: str = "half", attention_factor: float = 1.0, *, rotary_dim: int | None = None
):
    """Rotate every pair of ``x`` by ``position * inv_freq``; the RoPE of RoFormer eq. 34.

    For pair ``i`` with coordinates ``(a, b)`` at position ``p`` and angle
    ``theta = p * inv_freq[i]``::

        a' = a cos(theta) - b sin(theta)
        b' = a sin(theta) + b cos(theta)

    both multiplied by ``attention_factor``. ``layout`` says which dimensions form a
    pair (see the module docstring).

    Parameters
    ----------
    x : numpy.ndarray or torch.Tensor
        Queries or keys, shape ``(..., seq, head_dim)``, a floating dtype. With 2-D
        positions, ``(batch, heads, seq, head_dim)`` or ``(batch, seq, head_dim)``: the
        first axis is the batch.
    positions : array-like of shape ``(seq,)`` or ``(batch, seq)``
        The position of each row; integers, or fractions for interpolated positions.
        A ``(batch, seq)`` array gives each sequence of the batch its own positions, as
        the ``position_ids`` that ``transformers`` passes (left padding, packed
        sequences); batch 1 applies to every sequence.
    inv_freq : array-like of shape ``(head_dim // 2,)``, or ``(rotary_dim // 2,)``
        From :func:`posenc.rope_inv_freq`, :func:`posenc.p_rope_inv_freq` or
        :func:`posenc.scaled_inv_freq`.
    layout : {"half", "interleaved"}
    attention_factor : float
        Multiplies cos and sin (1 except for YaRN).
    rotary_dim : int, optional
        Partial RoPE: only the first ``rotary_dim`` dimensions of each head rotate (in
        the chosen layout *within* them: "half" pairs ``(i, i + rotary_dim/2)``,
        "interleaved" pairs ``(2i, 2i + 1)``) and the other ``head_dim - rotary_dim`` pass
        through unchanged, as GPT-NeoX (``rotary_pct``), GPT-J, Phi-2 and GLM do
        (``transformers``' ``modeling_gpt_neox.apply_rotary_pos_emb`` slices
        ``q[..., :rotary_dim]``). It must equal ``2 * len(inv_freq)``; such models use
        ``inv_freq = rope_inv_freq(rotary_dim, base)``, the speeds spread over the rotated
        dimensions only. ``None`` (default): every dimension rotates, and an ``x`` whose
        ``head_dim`` is not ``2 * len(inv_freq)`` is an error.

    Returns
    -------
    Same type, shape and dtype as ``x``. Angles are formed in float64; float16 and
    bfloat16 inputs are rotated in float32 and rounded once at the end. A large float32
    or float64 CPU tensor comes back in memory allocated by NumPy (huge pages: faster to
    fill), an ordinary tensor except that it cannot be resized in place.
    """
    layout = check_choice("layout", layout, LAYOUTS)
    inv_freq = check_inv_freq(inv_freq)
    if not (is_torch(x) or isinstance(x, np.ndarray)):
        raise TypeError(f"x must be a numpy.ndarray or torch.Tensor, got {type(x).__name__}")
    positions, rotated = _check_rope_input(x, positions, inv_freq.size, rotary_dim)
    attention_factor = check_real("attention_factor", attention_factor, positive=True)
    if is_torch(x):
        from ._rope_torch import rotate_torch

        return rotate_torch(x, positions, inv_freq, attention_factor, layout)
    angles = positions[..., None] * inv_freq
    cos, sin = attention_factor * np.cos(angles), attention_factor * np.sin(angles)
    cos, sin = _broadcast_table(cos, x.ndim), _broadcast_table(sin, x.ndim)
    if rotated == x.shape[-1]:
        return _rotate_numpy(x, cos, sin, layout)
    out = np.array(x, copy=True)
    out[..., :rotated] = _rotate_numpy(x[..., :rotated], cos, sin, layout)
    return out


def rotate_pairs(x, cos: np.ndarray, sin: np.ndarray, layout: str = "half"):
    """Rotate every pair of ``x`` (NumPy array or torch tensor) by angles given as their cos and sin.

    ``a' = a cos - b sin``, ``b' = a sin + b cos`` per pair, with pairs as ``layout`` says;
    ``cos`` and ``sin`` are float64 arrays broadcastable to ``x[..., :head_dim // 2]`` (any
    factor, such as YaRN's attention factor, already in them). The step that
    :func:`apply_rope`, M-RoPE (:mod:`posenc.multimodal`) and the dynamic NTK cache
    (:func:`posenc.dynamic_ntk_cached_keys`) share. float16 and bfloat16 are rotated in float32.
    Returns the type, shape and dtype of ``x`` (broadcast with the tables).
    """
    layout = check_choice("layout", layout, LAYOUTS)
    if is_torch(x):
        import torch

        from ._rope_torch import rotate_with_tables, work_dtype

        if not x.is_floating_point():
            raise TypeError(f"x must have a floating dtype, got {x.dtype}")
        work = work_dtype(x.dtype)
        cos_t = torch.as_tensor(np.asarray(cos), dtype=work, device=x.device)
        sin_t = torch.as_tensor(np.asarray(sin), dtype=work, device=x.device)
        while cos_t.dim() < x.dim():  # NumPy's broadcasting: missing leading axes are 1
            cos_t, sin_t = cos_t.unsqueeze(0), sin_t.unsqueeze(0)
        return rotate_with_tables(x, cos_t, sin_t, layout)
    return _rotate_numpy(x, np.asarray(cos), np.asarray(sin), layout)


def _rotate_numpy(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, layout: str) -> np.ndarray:
    if not np.issubdtype(x.dtype, np.floating):
        raise TypeError(f"x must have a floating dtype, got {x.dtype}")
    work = np.float32 if x.dtype.itemsize < 4 else x.dtype
    xw = x.astype(work, copy=False)
    cos = cos.astype(work)
    sin = sin.astype(work)
    half = cos.shape[-1]
    if layout == "half":
        a, b = xw[..., :half], xw[..., half:]
        out = np.concatenate((a * cos - b * sin, a * sin + b * cos), axis=-1)
    else:
        a, b = xw[..., 0::2], xw[..., 1::2]
        rows = np.broadcast_shapes((*xw.shape[:-1], half), cos.shape)[:-1]
        out = np.empty((*rows, 2 * half), dtype=work)
        out[..., 0::2] = a * cos - b * sin
        out[..., 1::2] = a * sin + b * cos
    return out.astype(x.dtype, copy=False)


def apply_rope_complex(x, positions, inv_freq, attention_factor: float = 1.0) -> np.ndarray:
    """RoPE in its complex-number form (RoFormer section 3.2.1): ``z_i * exp(1j * p * inv_freq[i])``.

    Reads consecutive dimensions ``(2i, 2i+1)`` as the complex number
    ``z_i = x[2i] + 1j * x[2i+1]`` (``1j``: the imaginary unit), multiplies by the unit
    phasor of its angle and by ``attention_factor``, and reads the result back. This is the "interleaved"
    layout of :func:`posenc.apply_rope`, written independently, so that tests can prove
    the two agree. NumPy in and out (torch tensors are converted).

    Returns a float array of the same shape as ``x`` (float64 unless ``x`` is float32).
    """
    try:
        x = np.asarray(x.detach().cpu().numpy() if is_torch(x) else x)
    except (ValueError, TypeError) as error:  # ragged nested lists
        raise ValueError(f"x must be a rectangular array of shape (..., seq, head_dim), got {x!r:.60}") from error
    if not np.issubdtype(x.dtype, np.floating):
        raise TypeError(f"x must have a floating dtype, got {x.dtype}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x must be finite, got NaN or infinite entries")
    inv_freq = check_inv_freq(inv_freq)
    positions = as_real_array("positions", positions, ndim=1)
    _check_x_against(x, positions.size, inv_freq.size)
    attention_factor = check_real("attention_factor", attention_factor, positive=True)
    z = x[..., 0::2].astype(np.float64) + 1j * x[..., 1::2].astype(np.float64)
    z = z * (attention_factor * np.exp(1j * rope_angles(positions, inv_freq)))
    out = np.stack((z.real, z.imag), axis=-1).reshape(x.shape)
    return out.astype(np.float32) if x.dtype == np.float32 else out


def interleaved_to_half_permutation(head_dim: int) -> np.ndarray:
    """Indices that reorder an "interleaved" vector into the "half" layout.

    ``perm = [0, 2, 4, ..., head_dim-2, 1, 3, ..., head_dim-1]``, so that for any ``x``::

        apply_rope(x[..., perm], pos, f, layout="half")
            == apply_rope(x, pos, f, layout="interleaved")[..., perm]

    This is the permutation applied to the query and key projection rows when Meta's
    Llama checkpoints are converted for the ``transformers`` library. ``numpy.argsort(perm)``
    gives the inverse.
    """
    head_dim = check_even_int("head_dim", head_dim)
    return np.concatenate((np.arange(0, head_dim, 2), np.arange(1, head_dim, 2)))
