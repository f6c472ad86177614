"""RoPE over a grid of image patches: each pair turns by the dot product of the patch's
coordinates with the pair's own frequency vector.

A patch at ``p = (row, col)`` has its pair ``i`` turned by the angle ``p . f_i``, where
``f_i = (f_row, f_col)`` is that pair's *frequency vector* (radians per unit of row and of
column). The score of a query at ``p`` and a key at ``p'`` then depends on ``p' - p`` only,
whatever the vectors (each pair is a 1-D RoPE along the direction of ``f_i``). The schemes in
use differ only in the vectors, so one kernel (:func:`grid_rope_angles`) serves them all:

* **1-D RoPE over the raster order** (a sequence model reading the patches row by row):
  ``f_i = (W * inv_freq[i], inv_freq[i])`` for a grid ``W`` patches wide, so the patch below is
  ``W`` positions away and the patch beside it one (:func:`raster_pair_frequencies`).
* **Axial 2-D RoPE**: half the pairs turn with the row, half with the column
  (:func:`axial_pair_frequencies`). Qwen2-VL's vision encoder gives both halves the same
  speeds (transformers' ``Qwen2VLVisionRotaryEmbedding``; ``posenc.axial_rope_angles``);
  Pixtral gives the rows the even-numbered speeds of ``rope_inv_freq(head_dim)`` and the
  columns the odd-numbered ones (transformers' ``PixtralVisionRotaryEmbedding``:
  ``cat([inv_freq[0::2], inv_freq[1::2]])``); DINOv3 uses the same speeds for both, on
  coordinates normalised to ``[-1, 1]`` (:func:`patch_coordinates` with ``centred=True``) and
  times ``2 pi`` (transformers' ``DINOv3ViTRopePositionEmbedding``).
* **Mixed-frequency RoPE** (RoPE-Mixed, Heo et al. 2024, "Rotary Position Embedding for
  Vision Transformer", arXiv 2403.13298): each pair's vector points in its own direction, so a
  diagonal offset gets speeds of its own; the vectors are learned, and
  :func:`mixed_pair_frequencies` gives the starting values of the authors' code
  (``naver-ai/rope-vit``, ``deit/models_v2_rope.py`` at commit ``04a2ad8``,
  ``init_random_2d_freqs``).

DINOv3 trains with its coordinates shifted, stretched per axis ("jitter") and rescaled
(:func:`augment_patch_coordinates`), so that other resolutions and aspect ratios look like
ones it has seen.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_real_array, check_choice, check_int, check_inv_freq, check_real, show_value

__all__ = [
    "patch_coordinates",
    "augment_patch_coordinates",
    "raster_pair_frequencies",
    "axial_pair_frequencies",
    "mixed_pair_frequencies",
    "grid_rope_angles",
    "grid_similarity",
]


def patch_coordinates(height: int, width: int, centred: bool = False) -> np.ndarray:
    """The ``(row, col)`` of every patch of a ``height x width`` grid, in raster order (row by row).

    ``centred=False``: integers, ``row = n // width``, ``col = n % width`` for patch ``n``.
    ``centred=True``: each patch's centre with the grid mapped onto ``[-1, 1]`` on both axes,
    ``2 (row + 0.5) / height - 1`` and ``2 (col + 0.5) / width - 1``, as DINOv3 places its
    patches (transformers' ``get_patches_center_coordinates``), so that a grid of any size
    spans the same range.

    Returns a float64 array of shape ``(height * width, 2)``.
    """
    height = check_int("height", height, minimum=1)
    width = check_int("width", width, minimum=1)
    if not isinstance(centred, bool | np.bool_):
        raise TypeError(f"centred must be True or False, got {show_value(centred)}")
    rows, cols = np.divmod(np.arange(height * width), width)
    coords = np.stack((rows, cols), axis=-1).astype(np.float64)
    if centred:
        coords = 2.0 * (coords + 0.5) / np.array([height, width], dtype=np.float64) - 1.0
    return coords


def _axis_pair(name: str, value) -> np.ndarray:
    """One number per axis (row, col): a scalar is used for both."""
    pair = as_real_array(name, value)
    if pair.ndim == 0:
        pair = np.repeat(pair, 2)
    if pair.shape != (2,):
        raise ValueError(f"{name} must be one number or two (row, col), got {show_value(value)}")
    return pair


def augment_patch_coordinates(coords, shift=None, jitter=None, rescale=None) -> np.ndarray:
    """DINOv3's coordinate augmentation with the random draws given: shift, then jitter, then rescale.

    ``coords + shift`` (``shift = (d_row, d_col)``), then times ``jitter = (j_row, j_col)`` (each
    axis stretched on its own), then times the scalar ``rescale``; ``None`` skips a step. In
    training DINOv3 draws ``d`` uniformly from ``[-s, s]``, ``log j`` uniformly from
    ``[-log J, log J]`` per axis and ``log r`` from ``[-log R, log R]`` (transformers'
    ``augment_patches_center_coordinates``, with ``pos_embed_shift``, ``pos_embed_jitter`` and
    ``pos_embed_rescale`` as ``s``, ``J`` and ``R``); the draws are the caller's here, so the
    result is reproducible. Returns float64 of the shape of ``coords``, ``(n, 2)``.
    """
    coords = as_real_array("coords", coords, ndim=2)
    if coords.shape[1] != 2:
        raise ValueError(f"coords must have shape (n, 2): a (row, col) per patch, got shape {coords.shape}")
    out = coords.astype(np.float64, copy=True)
    if shift is not None:
        out = out + _axis_pair("shift", shift)
    if jitter is not None:
        stretch = _axis_pair("jitter", jitter)
        if np.any(stretch <= 0):
            raise ValueError(f"jitter must be > 0 (a stretch of each axis), got {show_value(jitter)}")
        out = out * stretch
    if rescale is not None:
        out = out * check_real("rescale", rescale, positive=True)
    return out


def raster_pair_frequencies(inv_freq, width: int) -> np.ndarray:
    """1-D RoPE over the raster order as frequency vectors: ``f_i = (width * inv_freq[i], inv_freq[i])``.

    Patch ``(row, col)`` sits at position ``row * width + col`` of the sequence, so its pair ``i``
    turns by ``(row * width + col) * inv_freq[i]``, :func:`posenc.rope_angles` of that position.
    Returns float64 of shape ``(len(inv_freq), 2)``.
    """
    inv_freq = check_inv_freq(inv_freq)
    width = check_int("width", width, minimum=1)
    return np.stack((width * inv_freq, inv_freq), axis=-1)


AXIAL_SPLITS = ("repeat", "alternate")


def axial_pair_frequencies(inv_freq, split: str = "repeat") -> np.ndarray:
    """Axial 2-D RoPE as frequency vectors: the first pairs turn with the row, the others with the column.

    * ``split="repeat"`` (Qwen2-VL's vision encoder, DINOv3): both axes get every speed of
      ``inv_freq``, rows first: ``2 * len(inv_freq)`` pairs, vectors ``(inv_freq[k], 0)`` then
      ``(0, inv_freq[k])``; the angles equal :func:`posenc.axial_rope_angles`.
    * ``split="alternate"`` (Pixtral): the rows get ``inv_freq[0::2]``, the columns
      ``inv_freq[1::2]``: ``len(inv_freq)`` pairs (which must be even), so the two axes have
      interleaved, different speeds.

    Returns float64 of shape ``(n_pairs, 2)``, a ``(row, col)`` frequency per pair.
    """
    inv_freq = check_inv_freq(inv_freq)
    split = check_choice("split", split, AXIAL_SPLITS)
    if split == "repeat":
        rows, cols = inv_freq, inv_freq
    else:
        if inv_freq.size % 2:
            raise ValueError(
                f'split="alternate" deals the speeds out to rows and columns in turn, so inv_freq needs an even '
                f"length, got {inv_freq.size}"
            )
        rows, cols = inv_freq[0::2], inv_freq[1::2]
    zeros_r, zeros_c = np.zeros_like(rows), np.zeros_like(cols)
    return np.concatenate((np.stack((rows, zeros_r), axis=-1), np.stack((zeros_c, cols), axis=-1)))


def mixed_pair_frequencies(head_dim: int, base: float = 10.0, direction: float = 0.0) -> np.ndarray:
    """RoPE-Mixed's starting frequency vectors for one head (Heo et al. 2024, arXiv 2403.13298).

    Magnitudes ``m_k = base ** (-4k / head_dim)`` for ``k < head_dim / 4`` (``base`` 10 in the
    authors' RoPE-Mixed models: ``rope_theta=10.0`` in the ``rope_mixed_deit_*`` models of
    ``naver-ai/rope-vit``, ``deit/models_v2_rope.py`` at commit ``04a2ad8``); the first
    ``head_dim / 4`` pairs point in the direction ``phi = direction`` (radians from the column
    axis towards the row axis), the next ``head_dim / 4`` in ``phi + pi / 2``:
    ``f = m_k (sin phi, cos phi)`` as ``(row, col)``. With ``phi = 0`` this is axial RoPE with
    the columns first. The authors' code (``init_random_2d_freqs`` in that file) draws ``phi``
    uniformly from ``[0, 2 pi)`` for each head of each layer, then trains every vector. Returns float64 of
    shape ``(head_dim // 2, 2)``.
    """
    head_dim = check_int("head_dim", head_dim, minimum=4)
    if head_dim % 4:
        raise ValueError(f"head_dim must be a multiple of 4 (two directions, pairs of dimensions), got {head_dim}")
    base = check_real("base", base, positive=True)
    direction = check_real("direction", direction)
    magnitudes = base ** (-4.0 * np.arange(head_dim // 4) / head_dim)
    blocks = [magnitudes[:, None] * np.array([np.sin(phi), np.cos(phi)]) for phi in (direction, direction + np.pi / 2)]
    return np.concatenate(blocks)


def grid_rope_angles(coords, pair_freqs) -> np.ndarray:
    """Angles of 2-D RoPE: pair ``i`` of the patch at ``coords[n]`` turns by ``coords[n] . pair_freqs[i]``.

    ``coords``: ``(n, 2)``, a ``(row, col)`` per patch (:func:`patch_coordinates`);
    ``pair_freqs``: ``(n_pairs, 2)``, a ``(row, col)`` frequency per pair
    (:func:`raster_pair_frequencies`, :func:`axial_pair_frequencies`,
    :func:`mixed_pair_frequencies`, or learned ones). Rotate with :func:`posenc.apply_rope`'s
    pairing of choice (``rotate_pairs`` with these angles). Returns float64 ``(n, n_pairs)``.
    """
    coords = as_real_array("coords", coords, ndim=2)
    if coords.shape[1] != 2:
        raise ValueError(f"coords must have shape (n, 2): a (row, col) per patch, got shape {coords.shape}")
    pair_freqs = as_real_array("pair_freqs", pair_freqs, ndim=2)
    if pair_freqs.shape[1] != 2:
        raise ValueError(
            f"pair_freqs must have shape (n_pairs, 2): a (row, col) frequency per pair, got shape {pair_freqs.shape}"
        )
    return coords.astype(np.float64) @ pair_freqs.astype(np.float64).T


def grid_similarity(coords, pair_freqs, centre: int) -> np.ndarray:
    """How alike 2-D RoPE leaves the patch ``centre`` and every patch: ``mean_i cos((p - p_c) . f_i)``.

    The score of a query and a key with the same content, ``q = k``, equal weight in every pair
    (``|q_i| = 1``), divided by its value at no offset: 1 at the centre itself, and for every
    other patch the average over the pairs of the cosine of the angle the offset turns that pair
    by (:func:`grid_rope_angles` of the offset). Under 1-D RoPE over the raster order
    (:func:`raster_pair_frequencies`) the patch above is ``width`` positions away, under axial
    RoPE one row away; the map shows which of its neighbours a patch still resembles.

    ``coords`` ``(n, 2)`` and ``pair_freqs`` ``(n_pairs, 2)`` as for :func:`grid_rope_angles`;
    ``centre`` an index into ``coords``. Returns float64 of shape ``(n,)``.
    """
    angles = grid_rope_angles(coords, pair_freqs)
    centre = check_int("centre", centre, minimum=0, maximum=angles.shape[0] - 1)
    return np.cos(angles - angles[centre]).mean(axis=-1)
