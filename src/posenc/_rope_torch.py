"""The torch side of :func:`posenc.apply_rope`, kept apart so ``import posenc`` does not import torch.

Two code paths compute the same rotation:

* a differentiable one (plain tensor expressions) when autograd must see the
  operation;
* a fast one otherwise, which allocates only the output tensor. On a CPU a fresh
  full-size temporary costs about as much as a pass over the data (page faults), and
  the reference ``q * cos + rotate_half(q) * sin`` makes five of them. The
  "interleaved" layout runs as one complex multiplication (one pass); the "half"
  layout as one multiplication and two fused multiply-adds on the halves, block by
  block so that the later passes find their data in cache.
"""

from __future__ import annotations

import numpy as np
import torch


def work_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype the rotation runs in: float32 for 16-bit inputs, else the input's own."""
    if not dtype.is_floating_point:
        raise TypeError(f"x must have a floating dtype, got {dtype}")
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def cos_sin_tables(positions: np.ndarray, inv_freq: np.ndarray, attention_factor: float, dtype, device):
    """``attention_factor * (cos, sin)`` of the float64 angles ``positions x inv_freq``, as ``dtype`` on ``device``.

    The same numbers as :func:`posenc.rope_cos_sin`, formed with torch's vectorised
    float64 cos/sin (about 15x faster than NumPy's for a 2048 x 64 table).
    """
    angles = torch.from_numpy(positions)[:, None] * torch.from_numpy(inv_freq)[None, :]
    cos = (attention_factor * angles.cos()).to(device=device, dtype=dtype)
    sin = (attention_factor * angles.sin()).to(device=device, dtype=dtype)
    return cos, sin


def rotate_torch(x: torch.Tensor, positions: np.ndarray, inv_freq: np.ndarray, attention_factor: float, layout: str):
    """Rotate ``x`` (..., seq, head_dim) by float64 angles ``positions[:, None] * inv_freq[None, :]``."""
    cos, sin = cos_sin_tables(positions, inv_freq, attention_factor, work_dtype(x.dtype), x.device)
    return rotate_with_tables(x, cos, sin, layout)


def rotate_with_tables(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str) -> torch.Tensor:
    """Rotate ``x`` with torch ``cos``/``sin`` tables already in ``work_dtype(x.dtype)`` on ``x.device``."""
    work = work_dtype(x.dtype)
    if torch.is_grad_enabled() and x.requires_grad:
        return _rotate_differentiable(x.to(work), cos, sin, layout).to(x.dtype)
    if work != x.dtype:
        return _rotate_fast(x.to(work), cos, sin, layout).to(x.dtype)
    return _rotate_fast(x, cos, sin, layout)


def _rotate_differentiable(x, cos, sin, layout):
    half = cos.shape[-1]
    if layout == "half":
        a, b = x[..., :half], x[..., half:]
        return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


# On the CPU the "half" layout makes three passes (one multiplication, two fused
# multiply-adds on the halves); done block by block, each block's passes run in cache.
# About 1 MiB per block measured best here (10% faster than whole-tensor passes).
_BLOCK_BYTES = 1 << 20


def _rotate_fast(x, cos, sin, layout):
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    half = cos.shape[-1]
    if layout == "interleaved" and x.device.type in ("cpu", "cuda"):
        xc = torch.view_as_complex(x.contiguous().unflatten(-1, (half, 2)))
        torch.mul(xc, torch.complex(cos, sin), out=torch.view_as_complex(out.unflatten(-1, (half, 2))))
        return out
    rows, width = x.shape[-2:]
    blocks_in, blocks_out = x.reshape(-1, rows, width), out.view(-1, rows, width)
    step = blocks_in.shape[0]
    if x.device.type == "cpu":
        step = max(1, _BLOCK_BYTES // max(1, rows * width * x.element_size()))
    cos_full = torch.cat((cos, cos), dim=-1) if layout == "half" else None
    for first in range(0, blocks_in.shape[0], step):
        _rotate_block(blocks_in[first : first + step], blocks_out[first : first + step], cos, sin, cos_full, layout)
    return out


def _rotate_block(x, out, cos, sin, cos_full, layout):
    half = cos.shape[-1]
    if layout == "half":
        torch.mul(x, cos_full, out=out)
        out[..., :half].addcmul_(x[..., half:], sin, value=-1)
        out[..., half:].addcmul_(x[..., :half], sin)
        return
    a, b = x[..., 0::2], x[..., 1::2]
    out_a, out_b = out[..., 0::2], out[..., 1::2]
    torch.mul(a, cos, out=out_a)
    out_a.addcmul_(b, sin, value=-1)
    torch.mul(b, cos, out=out_b)
    out_b.addcmul_(a, sin)
