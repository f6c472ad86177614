"""The torch side of :func:`posenc.apply_rope`, kept apart so ``import posenc`` does not import torch.

Two code paths compute the same rotation:

* a differentiable one (plain tensor expressions) when autograd must see the
  operation;
* a fast one otherwise, which allocates only the output tensor. On a CPU a fresh
  full-size temporary costs about as much as a pass over the data (page faults), and
  the reference ``q * cos + rotate_half(q) * sin`` makes five of them. The
  "interleaved" layout runs as one complex multiplication (one pass); the "half"
  layout as one multiplication over the whole tensor (the cosines of both halves) and two
  fused multiply-adds on the halves (the sines).

Why whole-tensor passes rather than cache-sized blocks: every torch operation on a
large tensor is one parallel region whose threads wait for each other at its end.
Blocks of about 1 MiB ran 10% faster on an idle machine, but made hundreds of regions
per call, and when another process kept one core busy each region waited for the
thread that had lost its core: 3.2 s instead of 0.17 s beside a training process.
Three regions per tensor lose at most one time slice each.

Why the output comes from NumPy on the CPU: a fresh 128 MiB tensor from torch's
allocator is faulted in 4 KiB page by page (32768 faults, 45 ms here, more than the
rotation itself); NumPy advises the kernel to back large arrays with transparent huge
pages (``madvise(MADV_HUGEPAGE)``, on Linux where transparent huge pages are set to
"madvise"), and the same tensor is ready in 10 ms. The result is an ordinary CPU tensor
that shares the array's memory (it cannot be resized in place).
"""

from __future__ import annotations

import math

import numpy as np
import torch

#: Outputs at least this large on the CPU are allocated by NumPy (transparent huge pages, see above).
_NUMPY_OUTPUT_BYTES = 1 << 22
_NUMPY_DTYPES = {torch.float32: np.float32, torch.float64: np.float64}


def _new_output(shape: tuple, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """An uninitialised tensor for the result; large CPU ones backed by NumPy's huge-page-advised memory."""
    if device.type == "cpu" and dtype in _NUMPY_DTYPES:
        if math.prod(shape) * torch.finfo(dtype).bits // 8 >= _NUMPY_OUTPUT_BYTES:
            return torch.from_numpy(np.empty(shape, dtype=_NUMPY_DTYPES[dtype]))
    return torch.empty(shape, dtype=dtype, device=device)


def work_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype the rotation runs in: float32 for 16-bit inputs, else the input's own."""
    if not dtype.is_floating_point:
        raise TypeError(f"x must have a floating dtype, got {dtype}")
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


# Small tables are formed in pieces below torch's parallel grain size (32768 elements), so
# that each piece runs on the calling thread: a parallel region, however short, can wait a
# whole time slice (up to 100 ms measured) for a thread whose core another process holds.
_SERIAL_ELEMENTS = 1 << 14


def cos_sin_tables(positions: np.ndarray, inv_freq: np.ndarray, attention_factor: float, dtype, device):
    """``attention_factor * (cos, sin)`` of float64 angles ``positions[..., None] * inv_freq``, ``dtype`` on ``device``.

    ``positions`` of shape ``(seq,)`` or ``(batch, seq)`` give tables of shape
    ``(seq, pairs)`` or ``(batch, seq, pairs)``. The same numbers as
    :func:`posenc.rope_cos_sin`, formed with torch's vectorised float64 cos/sin (about
    10x faster than NumPy's for a 2048 x 64 table), piece by piece on the calling thread.
    """
    positions = np.asarray(positions, dtype=np.float64)
    pairs = inv_freq.shape[0]
    cos = torch.empty((*positions.shape, pairs), dtype=dtype)
    sin = torch.empty((*positions.shape, pairs), dtype=dtype)
    flat = torch.from_numpy(positions.reshape(-1, 1))
    speeds = torch.from_numpy(inv_freq)[None, :]
    cos_rows, sin_rows = cos.view(-1, pairs), sin.view(-1, pairs)
    step = max(1, _SERIAL_ELEMENTS // pairs)
    for first in range(0, flat.shape[0], step):
        angles = flat[first : first + step] * speeds
        cos_piece, sin_piece = angles.cos(), angles.sin()
        if attention_factor != 1.0:
            cos_piece.mul_(attention_factor)
            sin_piece.mul_(attention_factor)
        cos_rows[first : first + step].copy_(cos_piece)
        sin_rows[first : first + step].copy_(sin_piece)
    return cos.to(device), sin.to(device)


#: Tables at most this large are kept from one call to the next (:func:`rotate_torch`).
_KEPT_TABLE_BYTES = 1 << 24
_last_tables: tuple | None = None  # (positions, inv_freq, attention_factor, dtype, device, inference, cos, sin)


def _tables(positions: np.ndarray, inv_freq: np.ndarray, attention_factor: float, dtype, device, x_type=torch.Tensor):
    """:func:`cos_sin_tables`, reusing the previous call's tables when every argument is equal (compared
    value by value, so an array changed in place is seen): a key is rotated with its query's positions,
    and every layer of a model with the same ones. Only for a plain CPU tensor ``x`` (of type ``x_type``):
    a subclass (a fake tensor while tracing) or another device forms its own. Forming them anew costs
    little in itself, but their small allocations and float64 cos/sin took 5-10 ms each right after a
    large tensor was freed, measured on these machines."""
    global _last_tables
    if device.type != "cpu" or (x_type is not torch.Tensor):  # no reuse across CUDA streams or tracing modes
        return cos_sin_tables(positions, inv_freq, attention_factor, dtype, device)
    last = _last_tables
    inference = torch.is_inference_mode_enabled()  # tables made under inference_mode cannot join a graph
    if (
        last is not None
        and (last[2], last[3], last[4], last[5]) == (attention_factor, dtype, device, inference)
        and np.array_equal(last[0], positions)
        and np.array_equal(last[1], inv_freq)
    ):
        return last[6], last[7]
    cos, sin = cos_sin_tables(positions, inv_freq, attention_factor, dtype, device)
    if 2 * cos.numel() * cos.element_size() <= _KEPT_TABLE_BYTES:
        _last_tables = (np.array(positions), np.array(inv_freq), attention_factor, dtype, device, inference, cos, sin)
    return cos, sin


def rotate_torch(x: torch.Tensor, positions: np.ndarray, inv_freq: np.ndarray, attention_factor: float, layout: str):
    """Rotate ``x`` (..., seq, head_dim) by float64 angles ``positions[..., None] * inv_freq``.

    ``positions`` is ``(seq,)`` or ``(batch, seq)``; when ``2 * len(inv_freq) < head_dim``
    only the first ``2 * len(inv_freq)`` dimensions rotate (partial RoPE).
    """
    cos, sin = _tables(positions, inv_freq, attention_factor, work_dtype(x.dtype), x.device, type(x))
    return rotate_with_tables(x, cos, sin, layout)


def rotate_with_tables(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str) -> torch.Tensor:
    """Rotate ``x`` with torch ``cos``/``sin`` tables already in ``work_dtype(x.dtype)`` on ``x.device``.

    The tables are ``(seq, pairs)``, or ``(batch, seq, pairs)`` for per-sequence
    positions (the first axis of ``x`` is then its batch). When ``2 * pairs`` is less
    than ``head_dim`` only the first ``2 * pairs`` dimensions rotate and the rest are
    copied (partial RoPE).
    """
    if cos.dim() == 3:
        shape = (cos.shape[0],) + (1,) * (x.dim() - 3) + tuple(cos.shape[1:])
        cos, sin = cos.reshape(shape), sin.reshape(shape)
    work = work_dtype(x.dtype)
    if torch.is_grad_enabled() and x.requires_grad:
        return _rotate_differentiable(x.to(work), cos, sin, layout).to(x.dtype)
    if work != x.dtype:
        return _rotate_fast(x.to(work), cos, sin, layout).to(x.dtype)
    return _rotate_fast(x, cos, sin, layout)


def _rotate_pairs(x, cos, sin, layout):
    half = cos.shape[-1]
    if layout == "half":
        a, b = x[..., :half], x[..., half:]
        return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


def _rotate_differentiable(x, cos, sin, layout):
    rotated = 2 * cos.shape[-1]
    if rotated == x.shape[-1]:
        return _rotate_pairs(x, cos, sin, layout)
    return torch.cat((_rotate_pairs(x[..., :rotated], cos, sin, layout), x[..., rotated:]), dim=-1)


def _rotate_fast(x, cos, sin, layout):
    half = cos.shape[-1]
    rotated = 2 * half
    shape = (*torch.broadcast_shapes(x.shape[:-1], cos.shape[:-1]), x.shape[-1])
    out = _new_output(shape, x.dtype, x.device)
    if rotated < x.shape[-1]:  # partial RoPE: the last dimensions pass through
        out[..., rotated:].copy_(x[..., rotated:])
        x, out_rot = x[..., :rotated], out[..., :rotated]
    else:
        out_rot = out
    if layout == "interleaved" and x.device.type in ("cpu", "cuda"):
        if x.stride(-1) != 1 or any(s % 2 for s in x.stride()[:-1]) or x.storage_offset() % 2:
            x = x.contiguous()
        xc = torch.view_as_complex(x.unflatten(-1, (half, 2)))
        torch.mul(xc, torch.complex(cos, sin), out=torch.view_as_complex(out_rot.unflatten(-1, (half, 2))))
        return out
    if layout == "half":
        # the cosine terms of both halves in one pass over whole rows (for a contiguous x and a
        # (positions, rotary_dim) table torch runs it as one long loop, about twice as fast per element
        # as the same product on a half, whose loop restarts every half row); then the sines
        torch.mul(x, torch.cat((cos, cos), dim=-1), out=out_rot)
        out_rot[..., :half].addcmul_(x[..., half:], sin, value=-1)
        out_rot[..., half:].addcmul_(x[..., :half], sin)
        return out
    a, b = x[..., 0::2], x[..., 1::2]  # "interleaved" on a device without complex support
    out_a, out_b = out_rot[..., 0::2], out_rot[..., 1::2]
    torch.mul(a, cos, out=out_a)
    out_a.addcmul_(b, sin, value=-1)
    torch.mul(b, cos, out=out_b)
    out_b.addcmul_(a, sin)
    return out
