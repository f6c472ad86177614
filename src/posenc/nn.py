"""PyTorch modules built on the posenc kernels, ready to drop into a model.

Every table here is computed by the NumPy kernels in float64 and stored as a
non-persistent buffer: it moves with ``.to(device)`` but is not written to the
``state_dict``, since it is a deterministic function of the hyperparameters (and a
table that grows would otherwise break loading). Only
:class:`posenc.nn.LearnedPositionalEmbedding` has parameters.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from ._rope_torch import rotate_with_tables, work_dtype
from ._validation import as_real_array, check_base, check_choice, check_even_int, check_int, check_real
from .absolute import sinusoidal
from .biases import alibi_slopes
from .rope import LAYOUTS, rope_cos_sin
from .scaling import SCALING_METHODS, scaled_inv_freq

__all__ = [
    "ALiBiBias",
    "LearnedPositionalEmbedding",
    "RotaryEmbedding",
    "SinusoidalPositionalEncoding",
]


def _check_embeddings(x: torch.Tensor, d_model: int) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() < 2 or x.shape[-1] != d_model:
        raise ValueError(f"x must have shape (..., seq, d_model={d_model}), got {tuple(x.shape)}")


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table (:func:`posenc.sinusoidal`) to token embeddings.

    ``forward(x)`` returns ``dropout(x * sqrt(d_model) + PE[offset : offset + seq])``
    when ``scale_embeddings`` (as Vaswani et al. 2017, section 3.4, do, so that
    embeddings initialised with small entries are not drowned by a table whose
    entries are of order 1), else ``dropout(x + PE[...])``.

    The table is a buffer of ``max_len`` rows that is recomputed, longer, when a
    longer input arrives: a fixed formula has a value at every position, unlike a
    learned table.
    """

    def __init__(
        self,
        d_model: int,
        max_len: int = 512,
        base: float = 10000.0,
        dropout: float = 0.0,
        scale_embeddings: bool = False,
    ):
        super().__init__()
        self.d_model = check_int("d_model", d_model, minimum=1)
        self.base = check_base(base)
        self.scale_embeddings = bool(scale_embeddings)
        self.dropout = nn.Dropout(check_real("dropout", dropout, minimum=0.0))
        if self.dropout.p >= 1:
            raise ValueError(f"dropout must be < 1, got {dropout}")
        self.register_buffer("pe", self._table(check_int("max_len", max_len, minimum=1)), persistent=False)

    def _table(self, length: int) -> torch.Tensor:
        return torch.from_numpy(sinusoidal(length, self.d_model, self.base, dtype=np.float32))

    def extend(self, length: int) -> None:
        """Make sure the table has at least ``length`` rows (it grows to the next power of two)."""
        if length > self.pe.shape[0]:
            new_length = 1 << (length - 1).bit_length()
            self.pe = self._table(new_length).to(self.pe.device)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """Token embeddings ``x`` of shape ``(..., seq, d_model)`` plus the rows ``offset .. offset + seq - 1``."""
        _check_embeddings(x, self.d_model)
        offset = check_int("offset", offset, minimum=0)
        seq = x.shape[-2]
        self.extend(offset + seq)
        if self.scale_embeddings:
            x = x * math.sqrt(self.d_model)
        return self.dropout(x + self.pe[offset : offset + seq].to(x.dtype))

    def extra_repr(self) -> str:
        rows = self.pe.shape[0]
        return f"d_model={self.d_model}, base={self.base}, scale_embeddings={self.scale_embeddings}, rows={rows}"


class LearnedPositionalEmbedding(nn.Module):
    """Adds a trained vector per position (``nn.Embedding(max_len, d_model)``), as BERT and GPT-2 do.

    Initialised from ``N(0, init_std**2)`` (0.02, as BERT and GPT-2). A sequence that
    reaches past ``max_len`` gets a ``ValueError``: there is no row to look up, and
    nothing in the model knows what such a row should be.
    """

    def __init__(
        self,
        max_len: int,
        d_model: int,
        dropout: float = 0.0,
        scale_embeddings: bool = False,
        init_std: float = 0.02,
    ):
        super().__init__()
        self.max_len = check_int("max_len", max_len, minimum=1)
        self.d_model = check_int("d_model", d_model, minimum=1)
        self.scale_embeddings = bool(scale_embeddings)
        self.dropout = nn.Dropout(check_real("dropout", dropout, minimum=0.0))
        if self.dropout.p >= 1:
            raise ValueError(f"dropout must be < 1, got {dropout}")
        self.embedding = nn.Embedding(self.max_len, self.d_model)
        nn.init.normal_(self.embedding.weight, mean=0.0, std=check_real("init_std", init_std, positive=True))

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """Token embeddings ``x`` of shape ``(..., seq, d_model)`` plus learned rows ``offset .. offset + seq - 1``."""
        _check_embeddings(x, self.d_model)
        offset = check_int("offset", offset, minimum=0)
        seq = x.shape[-2]
        if offset + seq > self.max_len:
            raise ValueError(
                f"a sequence of length {seq} starting at offset {offset} needs positions up to "
                f"{offset + seq - 1}, but this learned table only has rows for positions 0..{self.max_len - 1} "
                f"(max_len={self.max_len}); a learned embedding cannot extrapolate: train with longer "
                "sequences or use a scheme defined at every position (sinusoidal, RoPE, ALiBi)"
            )
        positions = torch.arange(offset, offset + seq, device=x.device)
        if self.scale_embeddings:
            x = x * math.sqrt(self.d_model)
        return self.dropout(x + self.embedding(positions).to(x.dtype))


class RotaryEmbedding(nn.Module):
    """Rotates queries and keys (RoPE), with any context-extension method of :func:`posenc.scaled_inv_freq`.

    ``forward(q, k, positions=None, offset=0)`` returns the rotated ``(q, k)``, shapes
    ``(..., seq, head_dim)``; positions default to ``offset .. offset + seq - 1``. The
    cos/sin tables (times the attention factor) are cached for positions
    ``0 .. cached_len - 1`` and regrown when needed, so a training loop does not
    recompute them. Method "dynamic" recomputes its frequencies from the current length
    (``max(positions) + 1``), as ``transformers`` does, and caches the last ones.
    Results equal :func:`posenc.apply_rope` with the same frequencies.
    """

    def __init__(
        self,
        head_dim: int,
        base: float = 10000.0,
        layout: str = "half",
        scaling: str = "default",
        factor: float = 1.0,
        original_max_position_embeddings: int = 2048,
        max_len: int = 2048,
        **scaling_params,
    ):
        super().__init__()
        self.head_dim = check_even_int("head_dim", head_dim)
        self.base = check_base(base)
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.scaling = check_choice("scaling", scaling, SCALING_METHODS)
        self.factor = factor
        self.original_max_position_embeddings = original_max_position_embeddings
        self.scaling_params = dict(scaling_params)
        self._dynamic = self.scaling == "dynamic"
        if self._dynamic and "seq_len" in self.scaling_params:
            raise TypeError("RotaryEmbedding sets seq_len for method 'dynamic' from its input; do not pass it")
        max_len = check_int("max_len", max_len, minimum=1)
        inv_freq, self.attention_factor = self._frequencies(original_max_position_embeddings)
        self.register_buffer("inv_freq", torch.from_numpy(inv_freq), persistent=False)
        self._cache_key = None
        self._typed: dict = {}
        self.register_buffer("cos_cached", torch.empty(0), persistent=False)
        self.register_buffer("sin_cached", torch.empty(0), persistent=False)
        self._build_tables(max_len, self.inv_freq.numpy(), key=None)

    def _frequencies(self, seq_len: int) -> tuple[np.ndarray, float]:
        params = dict(self.scaling_params, seq_len=seq_len) if self._dynamic else self.scaling_params
        return scaled_inv_freq(
            self.scaling, self.head_dim, self.base, self.factor, self.original_max_position_embeddings, **params
        )

    def _build_tables(self, length: int, inv_freq: np.ndarray, key) -> None:
        cos, sin = rope_cos_sin(np.arange(length), inv_freq, self.attention_factor)
        device = self.cos_cached.device
        self.cos_cached = torch.from_numpy(cos).to(device)
        self.sin_cached = torch.from_numpy(sin).to(device)
        self._cache_key = key
        self._typed = {}

    def _typed_tables(self, dtype: torch.dtype, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """The float64 tables converted once per (dtype, device), not at every call."""
        key = (dtype, device, self.cos_cached.data_ptr())
        if key not in self._typed:
            self._typed[key] = (self.cos_cached.to(device, dtype), self.sin_cached.to(device, dtype))
        return self._typed[key]

    def _tables_for(self, needed: int) -> tuple[torch.Tensor, torch.Tensor]:
        if self._dynamic:
            key = max(needed, self.original_max_position_embeddings)
            if key != self._cache_key or needed > self.cos_cached.shape[0]:
                inv_freq, _ = self._frequencies(key)
                self._build_tables(max(needed, 1), inv_freq, key)
                self.inv_freq = torch.from_numpy(inv_freq).to(self.inv_freq.device)
        elif needed > self.cos_cached.shape[0]:
            self._build_tables(1 << (needed - 1).bit_length(), self.inv_freq.cpu().numpy(), None)
        return self.cos_cached, self.sin_cached

    def forward(self, q: torch.Tensor, k: torch.Tensor, positions=None, offset: int = 0):
        """Rotated ``(q, k)``; positions are ``positions`` (non-negative integers) or ``offset .. offset + seq - 1``."""
        for name, t in (("q", q), ("k", k)):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
            if t.dim() < 2 or t.shape[-1] != self.head_dim:
                raise ValueError(f"{name} must have shape (..., seq, head_dim={self.head_dim}), got {tuple(t.shape)}")
        seq = q.shape[-2]
        if k.shape[-2] != seq and positions is None:
            raise ValueError(
                f"q has {seq} positions and k has {k.shape[-2]}: pass explicit positions, or rotate them separately"
            )
        if positions is None:
            offset = check_int("offset", offset, minimum=0)
            index = slice(offset, offset + seq)
            needed = offset + seq
        else:
            pos = as_real_array("positions", positions, ndim=1, integer=True)
            if pos.size != seq or k.shape[-2] != seq:
                raise ValueError(f"positions has {pos.size} entries but q and k have {seq} and {k.shape[-2]} rows")
            if pos.size and pos.min() < 0:
                raise ValueError(f"positions must be >= 0 for the cached tables, got {pos.min()}")
            index = torch.from_numpy(pos).to(self.cos_cached.device)
            needed = int(pos.max()) + 1 if pos.size else 0
        self._tables_for(needed)
        rotated = []
        for t in (q, k):
            cos, sin = self._typed_tables(work_dtype(t.dtype), t.device)
            rotated.append(rotate_with_tables(t, cos[index], sin[index], self.layout))
        return tuple(rotated)

    def extra_repr(self) -> str:
        return (
            f"head_dim={self.head_dim}, base={self.base}, layout={self.layout!r}, scaling={self.scaling!r}, "
            f"factor={self.factor}, attention_factor={self.attention_factor:.4f}"
        )


class ALiBiBias(nn.Module):
    """ALiBi attention biases (:func:`posenc.alibi_bias`) as a module, with an optional causal mask.

    ``forward(n_queries, n_keys=None)`` returns a float32 tensor of shape
    ``(n_heads, n_queries, n_keys)`` to add to the attention logits:
    ``-slope_h * (i - j)`` for past and present keys, and for future keys ``-inf``
    (when ``causal``) or 0. Queries are the *last* ``n_queries`` positions, as with a
    key/value cache.
    """

    def __init__(self, n_heads: int, causal: bool = True):
        super().__init__()
        self.n_heads = check_int("n_heads", n_heads, minimum=1)
        self.causal = bool(causal)
        self.register_buffer("slopes", torch.from_numpy(alibi_slopes(self.n_heads)).float(), persistent=False)
        self._cache: tuple | None = None  # (key, bias): a training loop asks for the same size every step

    def forward(self, n_queries: int, n_keys: int | None = None) -> torch.Tensor:
        """The ``(n_heads, n_queries, n_keys)`` bias for the last ``n_queries`` of ``n_keys`` positions."""
        n_queries = check_int("n_queries", n_queries, minimum=1)
        n_keys = n_queries if n_keys is None else check_int("n_keys", n_keys, minimum=n_queries)
        key = (n_queries, n_keys, self.slopes.device, self.slopes.dtype)
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, self._bias(n_queries, n_keys))
        return self._cache[1]

    def _bias(self, n_queries: int, n_keys: int) -> torch.Tensor:
        device = self.slopes.device
        query_pos = torch.arange(n_keys - n_queries, n_keys, device=device)[:, None]
        key_pos = torch.arange(n_keys, device=device)[None, :]
        distance = (query_pos - key_pos).float()
        bias = -self.slopes[:, None, None] * distance.clamp(min=0)[None]
        if self.causal:
            bias = bias.masked_fill((distance < 0)[None], float("-inf"))
        return bias

    def extra_repr(self) -> str:
        return f"n_heads={self.n_heads}, causal={self.causal}"
