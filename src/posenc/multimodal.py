"""RoPE for images and video: several position ids per token, each rotating its own pairs.

A text token has one position; an image patch has a row and a column, a video patch
also a frame. Multimodal RoPE keeps RoPE's rotation of each pair by
``position * inv_freq[i]`` and only changes *which* position drives pair ``i``:

* **M-RoPE** (the Qwen2-VL report, Wang et al. 2024, "Multimodal Rotary Position
  Embedding"): every token carries three position ids ``(t, h, w)``;
  ``mrope_section = (s_t, s_h, s_w)`` splits the ``head_dim/2`` pairs into three
  consecutive blocks, the first ``s_t`` pairs turned by ``t``, the next ``s_h`` by ``h``,
  the last ``s_w`` by ``w``. Text tokens get ``t = h = w``, which is ordinary RoPE.
* **Interleaved M-RoPE** (Qwen3-VL): the same three ids, dealt to the pairs in the
  repeating pattern ``t, h, w, t, h, w, ...`` (so every axis gets fast and slow
  frequencies), the pairs past ``3 * s_h`` and ``3 * s_w`` going to ``t``.
* **2-D axial RoPE** (the Qwen2-VL vision encoder): an image patch at ``(row, col)``; the
  first half of the pairs is turned by the row, the second half by the column, both
  halves with the same frequencies ``rope_inv_freq(head_dim // 2)``.

Each axis keeps RoPE's relative property on its own: the score of a query and a key
depends on the differences ``t_k - t_q``, ``h_k - h_q`` and ``w_k - w_q`` only.

The reference implementations are in the ``transformers`` library (5.x):
``Qwen2VLRotaryEmbedding.recomposition_frequencies`` and ``Qwen2VLModel.get_rope_index``
(``models/qwen2_vl/modeling_qwen2_vl.py``, the same in Qwen2.5-VL),
``Qwen3VLTextRotaryEmbedding.recomposition_frequencies``
(``models/qwen3_vl/modeling_qwen3_vl.py``), ``Qwen2VLVisionRotaryEmbedding`` for the 2-D
axial form, and GLM-4V (``models/glm4v/modeling_glm4v.py``), which uses M-RoPE's sections
with the "interleaved" pair layout.
"""

from __future__ import annotations

import numbers

import numpy as np

from ._validation import as_real_array, check_choice, check_int, check_inv_freq, check_real, is_torch, show_value
from .rope import LAYOUTS, rotate_pairs

__all__ = [
    "apply_axial_rope",
    "apply_mrope",
    "axial_rope_angles",
    "mrope_angles",
    "mrope_pair_axes",
    "mrope_position_ids",
]


def _check_sections(mrope_section) -> np.ndarray:
    if isinstance(mrope_section, str | bytes):
        raise TypeError(f"mrope_section must be three integers (t, h, w), got the string {mrope_section!r}")
    sections = as_real_array("mrope_section", mrope_section, ndim=1, integer=True)
    if sections.size != 3:
        raise ValueError(
            f"mrope_section must hold three integers (pairs for t, h and w), "
            f"got {sections.size}: {show_value(mrope_section)}"
        )
    if np.any(sections < 0):
        raise ValueError(f"mrope_section must hold integers >= 0, got {sections.tolist()}")
    return sections


def mrope_pair_axes(mrope_section, mrope_interleaved: bool = False) -> np.ndarray:
    """Which position id turns each pair: 0 for ``t``, 1 for ``h``, 2 for ``w``.

    ``mrope_section = (s_t, s_h, s_w)`` counts the pairs of each axis; there are
    ``s_t + s_h + s_w = head_dim/2`` pairs.

    * ``mrope_interleaved=False`` (Qwen2-VL, Qwen2.5-VL, GLM-4V): consecutive blocks,
      ``[0]*s_t + [1]*s_h + [2]*s_w``, as ``torch.cat([m[i % 3] for i, m in
      enumerate(freq.split(mrope_section, dim=-1))])`` in transformers'
      ``Qwen2VLRotaryEmbedding.recomposition_frequencies``.
    * ``mrope_interleaved=True`` (Qwen3-VL): pair ``i`` goes to ``h`` when
      ``i % 3 == 1 and i < 3 * s_h``, to ``w`` when ``i % 3 == 2 and i < 3 * s_w``, and to
      ``t`` otherwise, as ``Qwen3VLTextRotaryEmbedding.recomposition_frequencies`` does
      (Qwen3-VL's ``[24, 20, 20]``: ``t h w t h w ... t h w t t t t``). A section too large
      for that pattern to give each axis its count (``3 * s_h - 2 > head_dim/2 - 1``, say)
      is refused.

    Returns an int64 array of shape ``(sum(mrope_section),)``.
    """
    sections = _check_sections(mrope_section)
    if not isinstance(mrope_interleaved, bool | np.bool_):
        raise TypeError(f"mrope_interleaved must be True or False, got {show_value(mrope_interleaved)}")
    n_pairs = int(sections.sum())
    if not mrope_interleaved:
        return np.repeat(np.arange(3, dtype=np.int64), sections)
    axes = np.zeros(n_pairs, dtype=np.int64)
    for axis in (1, 2):
        axes[axis : min(3 * int(sections[axis]), n_pairs) : 3] = axis
    counts = np.bincount(axes, minlength=3)
    if not np.array_equal(counts, sections):
        raise ValueError(
            f"mrope_section={sections.tolist()} cannot be dealt out in the interleaved pattern t, h, w, t, h, w, ...: "
            f"with {n_pairs} pairs it gives t, h, w {counts.tolist()} pairs; h may have at most {(n_pairs + 1) // 3} "
            f"and w at most {n_pairs // 3} pairs"
        )
    return axes


def _axes_for(mrope_section, mrope_interleaved, n_pairs: int) -> np.ndarray:
    sections = _check_sections(mrope_section)
    if int(sections.sum()) != n_pairs:
        raise ValueError(
            f"mrope_section must sum to head_dim/2 = len(inv_freq) = {n_pairs} (one entry per rotated pair), "
            f"got {sections.tolist()} (sum {int(sections.sum())})"
        )
    return mrope_pair_axes(sections, mrope_interleaved)


def mrope_angles(position_ids, inv_freq, mrope_section, mrope_interleaved: bool = False) -> np.ndarray:
    """M-RoPE angles: pair ``i`` of a token turns by ``position_ids[axis(i)] * inv_freq[i]``.

    ``axis(i)`` is :func:`posenc.mrope_pair_axes` of ``mrope_section`` (consecutive blocks,
    Qwen2-VL; or the interleaved pattern with ``mrope_interleaved=True``, Qwen3-VL).
    Formed in float64. Where ``t = h = w`` this is :func:`posenc.rope_angles`.

    Parameters
    ----------
    position_ids : array-like of shape ``(3, seq)`` or ``(3, batch, seq)``
        The ``t``, ``h`` and ``w`` position of every token, as transformers' ``get_rope_index``
        returns them (see :func:`posenc.mrope_position_ids`).
    inv_freq : array-like of shape ``(head_dim // 2,)``
    mrope_section : tuple of int
        ``(s_t, s_h, s_w)``, which sum to ``len(inv_freq)``.
    mrope_interleaved : bool

    Returns
    -------
    numpy.ndarray
        float64, of shape ``(seq, head_dim // 2)`` or ``(batch, seq, head_dim // 2)``.
    """
    inv_freq = check_inv_freq(inv_freq)
    axes = _axes_for(mrope_section, mrope_interleaved, inv_freq.size)
    positions = as_real_array("position_ids", position_ids)
    if positions.ndim not in (2, 3) or positions.shape[0] != 3:
        raise ValueError(
            f"position_ids must have shape (3, seq) or (3, batch, seq): one row each for t, h and w; "
            f"got shape {positions.shape}"
        )
    return np.moveaxis(positions[axes], 0, -1) * inv_freq


def axial_rope_angles(rows, cols, inv_freq) -> np.ndarray:
    """2-D axial RoPE angles of image patches: ``[rows * inv_freq | cols * inv_freq]``.

    The first ``len(inv_freq)`` pairs turn by the patch's row, the other ``len(inv_freq)``
    by its column, so ``head_dim = 4 * len(inv_freq)``; Qwen2-VL's vision encoder uses
    ``inv_freq = rope_inv_freq(head_dim // 2, base)`` (transformers'
    ``Qwen2VLVisionRotaryEmbedding``: ``compute_axial_rope_parameters`` and
    ``recomposition_frequencies``, ``cat([freq_h, freq_w])``). Formed in float64.

    Returns a float64 array of shape ``(len(rows), 2 * len(inv_freq))``.
    """
    rows = as_real_array("rows", rows, ndim=1)
    cols = as_real_array("cols", cols, ndim=1)
    if rows.shape != cols.shape:
        raise ValueError(
            f"rows and cols must have the same length (one of each per patch), got {rows.size} and {cols.size}"
        )
    inv_freq = check_inv_freq(inv_freq)
    return np.concatenate((rows[:, None] * inv_freq, cols[:, None] * inv_freq), axis=-1)


def _rotate(x, angles: np.ndarray, layout: str, attention_factor: float):
    """Rotate the pairs of ``x`` (NumPy or torch) by ``angles`` (float64, broadcastable to ``x[..., :half]``)."""
    return rotate_pairs(x, attention_factor * np.cos(angles), attention_factor * np.sin(angles), layout)


def _check_x(x, n_positions: int, n_pairs: int, batch: int | None) -> None:
    if not (is_torch(x) or isinstance(x, np.ndarray)):
        raise TypeError(f"x must be a numpy.ndarray or torch.Tensor, got {type(x).__name__}")
    shape = tuple(x.shape)
    if len(shape) < (2 if batch is None else 3):
        wanted = "(..., seq, head_dim)" if batch is None else "(batch, ..., seq, head_dim)"
        raise ValueError(f"x must have shape {wanted}, got shape {shape}")
    if shape[-1] != 2 * n_pairs:
        raise ValueError(
            f"x has head_dim={shape[-1]} (its last axis) but there are {n_pairs} rotation angles per token; "
            f"head_dim must be {2 * n_pairs}"
        )
    if shape[-2] != n_positions:
        raise ValueError(f"x has seq={shape[-2]} (its second-to-last axis) but there are {n_positions} positions")
    if batch is not None and shape[0] != batch:
        raise ValueError(f"x has batch={shape[0]} (its first axis) but position_ids has batch={batch}")


def apply_mrope(
    x,
    position_ids,
    inv_freq,
    mrope_section,
    mrope_interleaved: bool = False,
    layout: str = "half",
    attention_factor: float = 1.0,
):
    """Rotate the queries or keys ``x`` by their M-RoPE angles (:func:`posenc.mrope_angles`).

    The rotation of :func:`posenc.apply_rope`, pair ``i`` at angle ``theta``:
    ``a' = a cos(theta) - b sin(theta)``, ``b' = a sin(theta) + b cos(theta)``, times
    ``attention_factor``. ``layout="half"`` pairs dimensions ``(i, i + head_dim/2)`` as
    Qwen2-VL, Qwen2.5-VL and Qwen3-VL do (``apply_rotary_pos_emb`` with ``rotate_half``);
    ``layout="interleaved"`` pairs ``(2i, 2i + 1)`` as GLM-4V does (``rotate_half_llm``
    with the cos/sin ``repeat_interleave``'d).

    Parameters
    ----------
    x : numpy.ndarray or torch.Tensor
        Shape ``(..., seq, head_dim)`` for ``position_ids`` of shape ``(3, seq)``, or
        ``(batch, ..., seq, head_dim)`` (e.g. ``(batch, heads, seq, head_dim)``) for
        ``position_ids`` of shape ``(3, batch, seq)``.
    position_ids, inv_freq, mrope_section, mrope_interleaved
        As in :func:`posenc.mrope_angles`.
    layout : {"half", "interleaved"}
    attention_factor : float

    Returns
    -------
    numpy.ndarray or torch.Tensor
        The same type, shape and dtype as ``x`` (angles in float64; float16 and bfloat16
        rotated in float32).
    """
    layout = check_choice("layout", layout, LAYOUTS)
    attention_factor = check_real("attention_factor", attention_factor, positive=True)
    angles = mrope_angles(position_ids, inv_freq, mrope_section, mrope_interleaved)
    batch = angles.shape[0] if angles.ndim == 3 else None
    _check_x(x, angles.shape[-2], angles.shape[-1], batch)
    if batch is not None:  # (batch, seq, pairs) -> (batch, 1, ..., 1, seq, pairs)
        angles = angles.reshape((batch,) + (1,) * (len(x.shape) - 3) + angles.shape[1:])
    return _rotate(x, angles, layout, attention_factor)


def apply_axial_rope(x, rows, cols, inv_freq, layout: str = "half", attention_factor: float = 1.0):
    """Rotate image-patch queries or keys ``x`` by their 2-D axial angles (:func:`posenc.axial_rope_angles`).

    ``x`` has shape ``(..., n_patches, head_dim)`` with ``head_dim = 4 * len(inv_freq)``;
    ``rows[i]``, ``cols[i]`` is patch ``i``'s place in the grid. ``layout="half"`` is what
    Qwen2-VL's vision encoder does (``apply_rotary_pos_emb_vision``, ``rotate_half``);
    ``"interleaved"`` pairs ``(2i, 2i + 1)``. Returns the same type, shape and dtype as ``x``.
    """
    layout = check_choice("layout", layout, LAYOUTS)
    attention_factor = check_real("attention_factor", attention_factor, positive=True)
    angles = axial_rope_angles(rows, cols, inv_freq)
    _check_x(x, angles.shape[0], angles.shape[1], None)
    return _rotate(x, angles, layout, attention_factor)


def _segment_error(index: int, segment) -> TypeError:
    return TypeError(
        f"segments[{index}] must be an integer (a run of text tokens) or a (t, h, w) grid of three "
        f"integers (an image or video), got {show_value(segment)}"
    )


def mrope_position_ids(segments, spatial_merge_size: int = 1, time_interval: float = 1.0) -> np.ndarray:
    """The ``(3, seq)`` M-RoPE position ids ``(t, h, w)`` of text runs and images, as Qwen2-VL builds them.

    ``segments`` lists the parts of the sequence in order: an integer ``n`` is a run of
    ``n`` text tokens, a triple ``(t, h, w)`` an image (``t = 1``) or a video in patches
    before merging (transformers' ``image_grid_thw``). Following
    ``Qwen2VLModel.get_rope_index`` (transformers 5.x, ``models/qwen2_vl/modeling_qwen2_vl.py``)
    with ``p`` the next free position (0 at the start):

    * text: ``t = h = w = p, p + 1, ...``; then ``p`` moves past the run;
    * image or video: a grid of ``t x (h/m) x (w/m)`` tokens (``m = spatial_merge_size``),
      frame-major then row-major, with ``t = p + frame``, ``h = p + row``,
      ``w = p + col``; then ``p`` grows by ``max(h, w) / m`` (the frames do not count: after a
      video of more frames than ``max(h, w) / m``, the next text shares ``t`` ids with its last
      frames).

    ``time_interval`` spaces the frames of a video (a grid with ``t > 1``) as Qwen2.5-VL does,
    ``t = p + floor(frame * time_interval)`` with ``time_interval = tokens_per_second *
    second_per_grid_t`` (``Qwen2_5_VLModel.get_rope_index``: the frames' ids follow the video's
    seconds, not its frame count); images keep ``t = p``. Here the product is formed in float64;
    transformers forms it in float32, which can land one below where ``frame * time_interval``
    is within float32 rounding of a whole number. Qwen3-VL instead splits a video into one-frame
    grids with a timestamp's text tokens before each (``Qwen3VLModel.get_rope_index``): pass the
    frames as ``(1, h, w)`` segments with the timestamps' token counts between them.

    Returns an int64 array of shape ``(3, total tokens)``.
    """
    m = check_int("spatial_merge_size", spatial_merge_size, minimum=1)
    time_interval = check_real("time_interval", time_interval, minimum=0.0)
    if isinstance(segments, str | bytes) or not hasattr(segments, "__iter__") or is_torch(segments):
        raise TypeError(
            f"segments must be a list of text-run lengths and (t, h, w) grids, got {show_value(segments)} "
            f"of type {type(segments).__name__}"
        )
    parts = []
    position = 0
    for index, segment in enumerate(segments):
        if isinstance(segment, numbers.Integral) and not isinstance(segment, bool | np.bool_):
            n = check_int(f"segments[{index}]", segment, minimum=0)
            parts.append(np.broadcast_to(np.arange(position, position + n, dtype=np.int64), (3, n)))
            position += n
            continue
        if isinstance(segment, str | bytes) or not hasattr(segment, "__len__") or len(segment) != 3:
            raise _segment_error(index, segment)
        if any(isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Integral) for v in segment):
            raise _segment_error(index, segment)
        t, h, w = (check_int(f"segments[{index}]", int(v), minimum=1) for v in segment)
        if h % m or w % m:
            raise ValueError(
                f"segments[{index}] = ({t}, {h}, {w}): h and w must be multiples of spatial_merge_size={m} "
                f"(the vision encoder merges {m} x {m} patches into one token)"
            )
        frames = np.floor(np.arange(t) * time_interval).astype(np.int64) if t > 1 else np.zeros(1, dtype=np.int64)
        grid = np.meshgrid(frames, np.arange(h // m), np.arange(w // m), indexing="ij")
        parts.append(np.stack(grid).reshape(3, -1).astype(np.int64) + position)
        position += max(h, w) // m
    if not parts:
        return np.zeros((3, 0), dtype=np.int64)
    return np.concatenate(parts, axis=1)
