"""Rotary position embedding (RoPE): rotate each 2-D pair of a query or key by its position.

Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding",
section 3.2 (eq. 13-15 for the rotation, eq. 34 for the efficient form). Pair ``j``
turns by ``position * inv_freq[j]`` radians, with ``inv_freq[j] = base**(-2j/head_dim)``,
so the dot product of a rotated query at ``m`` and key at ``n`` depends on ``m - n``
only (the relative property).

Two memory layouts of the pairs are in use and give different numbers for the same
weights:

* ``"half"``: pair ``j`` is dimensions ``(j, j + head_dim/2)``, as GPT-NeoX and the Llama
  family in the ``transformers`` library do it (``rotate_half``);
* ``"interleaved"``: pair ``j`` is dimensions ``(2j, 2j + 1)``, as the RoFormer paper,
  GPT-J, Meta's original Llama code and the complex-number form do it.

:func:`posenc.interleaved_to_half_permutation` maps one onto the other.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_real_array, check_base, check_choice, check_even_int, check_real

__all__ = [
    "LAYOUTS",
    "apply_rope",
    "apply_rope_complex",
    "interleaved_to_half_permutation",
    "rope_angles",
    "rope_cos_sin",
    "rope_inv_freq",
]

#: Names of the two pair layouts; "half" pairs ``(j, j + head_dim/2)`` and "interleaved" pairs ``(2j, 2j + 1)``.
LAYOUTS = ("half", "interleaved")


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "requires_grad")


def rope_inv_freq(head_dim: int, base: float = 10000.0) -> np.ndarray:
    """Rotation speed of each pair in radians per position: ``base ** (-2j / head_dim)``.

    ``j = 0 .. head_dim/2 - 1`` (RoFormer eq. 15). Pair 0 is the *fastest* (1 radian per
    token, wavelength ``2 pi``); the last pair is the slowest (wavelength
    ``2 pi * base ** ((head_dim - 2) / head_dim)``).

    Returns a float64 array of shape ``(head_dim // 2,)``.
    """
    head_dim = check_even_int("head_dim", head_dim)
    base = check_base(base)
    return base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)


def _check_inv_freq(inv_freq) -> np.ndarray:
    inv_freq = as_real_array("inv_freq", inv_freq, ndim=1)
    if inv_freq.size == 0:
        raise ValueError("inv_freq must hold at least one frequency, got an empty array")
    if np.any(inv_freq < 0):
        raise ValueError(f"inv_freq must be >= 0 (radians per position), got min {inv_freq.min()}")
    return inv_freq


def rope_angles(positions, inv_freq) -> np.ndarray:
    """Rotation angle of every pair at every position: ``positions[:, None] * inv_freq[None, :]``.

    Formed in float64 whatever the input dtypes: at position ``2**20`` a float32 angle
    would be off by up to ``2**20 * 2**-24 = 0.06`` radians before any rounding of the
    result (chapter 8 measures this). Positions may be fractional (interpolated).

    Returns a float64 array of shape ``(len(positions), len(inv_freq))``.
    """
    positions = as_real_array("positions", positions, ndim=1)
    inv_freq = _check_inv_freq(inv_freq)
    return positions[:, None] * inv_freq[None, :]


def rope_cos_sin(positions, inv_freq, attention_factor: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``(attention_factor * cos(angles), attention_factor * sin(angles))``, float64, shape ``(seq, head_dim//2)``.

    The attention factor (YaRN's temperature, Peng et al. 2023, eq. 22) scales both the
    query and the key when both are rotated, so the logits scale by its square.
    """
    attention_factor = check_real("attention_factor", attention_factor, positive=True)
    angles = rope_angles(positions, inv_freq)
    return attention_factor * np.cos(angles), attention_factor * np.sin(angles)


def _check_x_against(x, n_positions: int, n_pairs: int) -> None:
    shape = tuple(x.shape)
    if len(shape) < 2:
        raise ValueError(f"x must have shape (..., seq, head_dim), got shape {shape}")
    if shape[-1] != 2 * n_pairs:
        raise ValueError(
            f"x has head_dim={shape[-1]} (its last axis) but inv_freq has {n_pairs} frequencies; "
            f"RoPE needs head_dim == 2 * len(inv_freq) = {2 * n_pairs}"
        )
    if shape[-2] != n_positions:
        raise ValueError(
            f"x has seq={shape[-2]} positions (its second-to-last axis) but positions has "
            f"{n_positions} entries; they must match"
        )


def apply_rope(x, positions, inv_freq, layout: str = "half", attention_factor: float = 1.0):
    """Rotate every pair of ``x`` by ``position * inv_freq``; the RoPE of RoFormer eq. 34.

    For pair ``j`` with coordinates ``(a, b)`` at position ``p`` and angle
    ``theta = p * inv_freq[j]``::

        a' = a cos(theta) - b sin(theta)
        b' = a sin(theta) + b cos(theta)

    both multiplied by ``attention_factor``. ``layout`` says which dimensions form a
    pair (see the module docstring).

    Parameters
    ----------
    x : numpy.ndarray or torch.Tensor
        Queries or keys, shape ``(..., seq, head_dim)``, a floating dtype.
    positions : array-like of shape ``(seq,)``
        The position of each row; integers, or fractions for interpolated positions.
    inv_freq : array-like of shape ``(head_dim // 2,)``
        From :func:`posenc.rope_inv_freq` or :func:`posenc.scaled_inv_freq`.
    layout : {"half", "interleaved"}
    attention_factor : float
        Multiplies cos and sin (1 except for YaRN).

    Returns
    -------
    Same type, shape and dtype as ``x``. Angles are formed in float64; float16 and
    bfloat16 inputs are rotated in float32 and rounded once at the end.
    """
    layout = check_choice("layout", layout, LAYOUTS)
    inv_freq = _check_inv_freq(inv_freq)
    positions = as_real_array("positions", positions, ndim=1)
    if not (_is_torch(x) or isinstance(x, np.ndarray)):
        raise TypeError(f"x must be a numpy.ndarray or torch.Tensor, got {type(x).__name__}")
    _check_x_against(x, positions.size, inv_freq.size)
    attention_factor = check_real("attention_factor", attention_factor, positive=True)
    if _is_torch(x):
        from ._rope_torch import rotate_torch

        return rotate_torch(x, positions, inv_freq, attention_factor, layout)
    cos, sin = rope_cos_sin(positions, inv_freq, attention_factor)
    return _rotate_numpy(x, cos, sin, layout)


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
        out = np.empty(xw.shape, dtype=work)
        out[..., 0::2] = a * cos - b * sin
        out[..., 1::2] = a * sin + b * cos
    return out.astype(x.dtype, copy=False)


def apply_rope_complex(x, positions, inv_freq, attention_factor: float = 1.0) -> np.ndarray:
    """RoPE in its complex-number form (RoFormer section 3.2.1): ``z_j * exp(i * p * inv_freq[j])``.

    Reads consecutive dimensions ``(2j, 2j+1)`` as the complex number
    ``z_j = x[2j] + i x[2j+1]``, multiplies by the unit phasor of its angle and by
    ``attention_factor``, and reads the result back. This is the "interleaved"
    layout of :func:`posenc.apply_rope`, written independently, so that tests can prove
    the two agree. NumPy in and out (torch tensors are converted).

    Returns a float array of the same shape as ``x`` (float64 unless ``x`` is float32).
    """
    x = np.asarray(x.detach().cpu().numpy() if _is_torch(x) else x)
    if not np.issubdtype(x.dtype, np.floating):
        raise TypeError(f"x must have a floating dtype, got {x.dtype}")
    inv_freq = _check_inv_freq(inv_freq)
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
