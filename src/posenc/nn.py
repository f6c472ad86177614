"""PyTorch modules built on the posenc kernels, ready to drop into a model.

Every table here is computed by the NumPy kernels in float64 and stored as a
non-persistent buffer: it moves with ``.to(device)`` but is not written to the
``state_dict``, since it is a deterministic function of the hyperparameters (and a
table that grows would otherwise break loading). Only
:class:`posenc.nn.LearnedPositionalEmbedding` has parameters.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import torch
from torch import nn

from ._rope_torch import cos_sin_tables, rotate_with_tables, work_dtype
from ._validation import as_real_array, check_base, check_bool, check_choice, check_even_int, check_int, check_real
from .absolute import sinusoidal
from .biases import alibi_slopes
from .rope import LAYOUTS, keep_fastest_pairs, rope_cos_sin
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
    when ``scale_embeddings`` (as Vaswani et al. 2017, section 3.4, do; the paper gives
    no reason, and chapter 6 offers one: embeddings initialised with small entries are
    otherwise drowned by a table whose entries are of order 1), else ``dropout(x + PE[...])``.

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
        self.scale_embeddings = check_bool("scale_embeddings", scale_embeddings)
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

    Initialised from ``N(0, init_std**2)`` (0.02, as GPT: Radford et al. 2018, section 4.1). A sequence that
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
        self.scale_embeddings = check_bool("scale_embeddings", scale_embeddings)
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
                f"(max_len={self.max_len}): there is no row past max_len, and nothing in the model says what one "
                "should be. Train with sequences this long; to run past the training length, use a scheme built "
                "for it (a relative scheme such as ALiBi, or RoPE with a context extension such as YaRN), and "
                "measure it at that length"
            )
        positions = torch.arange(offset, offset + seq, device=x.device)
        if self.scale_embeddings:
            x = x * math.sqrt(self.d_model)
        return self.dropout(x + self.embedding(positions).to(x.dtype))


#: Rows of cos/sin that :class:`RotaryEmbedding` may cache for positions 0, 1, 2, ... (at least ``max_len``).
ROTARY_CACHE_ROWS = 8192


class RotaryEmbedding(nn.Module):
    """Rotates queries and keys (RoPE), with any context-extension method of :func:`posenc.scaled_inv_freq`.

    ``forward(q, k, positions=None, offset=0)`` returns the rotated ``(q, k)``, shapes
    ``(..., seq, head_dim)``; positions default to ``offset .. offset + seq - 1``, or are
    given as ``(seq,)`` or, per sequence, ``(batch, seq)`` (``transformers``'
    ``position_ids``: left padding, packed sequences; ``q`` and ``k`` are then
    ``(batch, heads, seq, head_dim)`` or ``(batch, seq, head_dim)``). Method "dynamic"
    recomputes its frequencies from the current length (``max(positions) + 1``), as
    ``transformers`` does. Results equal :func:`posenc.apply_rope` with the same
    frequencies.

    ``partial_rotary_factor`` (default 1): only the first
    ``rotary_dim = int(head_dim * partial_rotary_factor)`` dimensions of each head rotate
    and the rest pass through, with speeds ``scaled_inv_freq(scaling, rotary_dim, ...)``:
    what ``transformers`` computes for a config's ``partial_rotary_factor`` (GPT-NeoX's
    ``rotary_pct``, Phi-2, GLM; ``modeling_gpt_neox.GPTNeoXRotaryEmbedding``).

    Memory grows with the number of positions asked for, not with the largest one: the
    cos/sin rows for positions ``0 .. cached_len - 1`` are cached (grown to the next power
    of two when needed, never past ``max(max_len, ROTARY_CACHE_ROWS)`` rows), so a
    training loop does not recompute them; rows for positions past the cache (one
    decoding step at position 2**26, say) are computed for those positions only, at
    every call. Angles are formed in float64 from integer positions, accurate to
    ``position * inv_freq * 2**-53`` radians (7e-9 at position 2**26). Positions handed
    over as a floating tensor or array narrower than float64 (float32 holds every whole
    number only up to 2**24) may have been rounded before they arrive: past that limit
    the module warns, with the spacing of that dtype at the largest position and the
    angle error it can cause in pair 0. Pass integer positions to keep them exact.
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
        partial_rotary_factor: float = 1.0,
        p_rope: float = 1.0,
        **scaling_params,
    ):
        super().__init__()
        self.head_dim = check_even_int("head_dim", head_dim)
        self.base = check_base(base)
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.scaling = check_choice("scaling", scaling, SCALING_METHODS)
        self.partial_rotary_factor = check_real("partial_rotary_factor", partial_rotary_factor, strictly_above=0.0)
        if self.partial_rotary_factor > 1:
            raise ValueError(
                f"partial_rotary_factor must be in (0, 1] (the fraction of each head that rotates), "
                f"got {partial_rotary_factor}"
            )
        self.rotary_dim = int(self.head_dim * self.partial_rotary_factor)
        if self.rotary_dim < 2 or self.rotary_dim % 2:
            raise ValueError(
                f"partial_rotary_factor={partial_rotary_factor} gives rotary_dim = int({self.head_dim} * "
                f"{partial_rotary_factor}) = {self.rotary_dim}; it must be even and >= 2 (dimensions rotate in pairs)"
            )
        self.p_rope = check_real("p_rope", p_rope, minimum=0.0)
        if self.p_rope > 1:
            raise ValueError(f"p_rope must be between 0 and 1 (the fraction of pairs that rotate), got {p_rope}")
        self.factor = factor
        self.original_max_position_embeddings = original_max_position_embeddings
        self.scaling_params = dict(scaling_params)
        self._dynamic = SCALING_METHODS[self.scaling].spec.reads_seq_len  # speeds that follow the current length
        if self._dynamic and "seq_len" in self.scaling_params:
            raise TypeError(
                f"RotaryEmbedding sets seq_len for method {self.scaling!r} from its input; do not pass it"
            )
        max_len = check_int("max_len", max_len, minimum=1)
        self.cache_limit = max(max_len, ROTARY_CACHE_ROWS)
        inv_freq, self.attention_factor = self._frequencies(original_max_position_embeddings)
        self._cached_inv_freq = inv_freq  # the speeds the cache holds (dynamic: those of the trained length)
        self._current_inv_freq = inv_freq
        self.register_buffer("inv_freq", torch.from_numpy(inv_freq), persistent=False)
        self._typed: dict = {}
        self.register_buffer("cos_cached", torch.empty(0), persistent=False)
        self.register_buffer("sin_cached", torch.empty(0), persistent=False)
        self._build_tables(max_len)

    def _frequencies(self, seq_len: int) -> tuple[np.ndarray, float]:
        params = dict(self.scaling_params, seq_len=seq_len) if self._dynamic else self.scaling_params
        inv_freq, attention_factor = scaled_inv_freq(
            self.scaling, self.rotary_dim, self.base, self.factor, self.original_max_position_embeddings, **params
        )
        if self.p_rope < 1:
            inv_freq = keep_fastest_pairs(inv_freq, self.p_rope)
        return inv_freq, attention_factor

    def _build_tables(self, length: int) -> None:
        cos, sin = rope_cos_sin(np.arange(length), self._cached_inv_freq, self.attention_factor)
        device = self.cos_cached.device
        self.cos_cached = torch.from_numpy(cos).to(device)
        self.sin_cached = torch.from_numpy(sin).to(device)
        self._typed = {}

    def _typed_tables(self, dtype: torch.dtype, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """The float64 tables converted once per (dtype, device), not at every call."""
        key = (dtype, device, self.cos_cached.data_ptr())
        if key not in self._typed:
            self._typed[key] = (self.cos_cached.to(device, dtype), self.sin_cached.to(device, dtype))
        return self._typed[key]

    def _speeds_for(self, needed: int) -> tuple[np.ndarray, bool]:
        """The speeds for positions below ``needed``, and whether the cache holds their rows."""
        inv_freq = self._cached_inv_freq
        if self._dynamic and needed > self.original_max_position_embeddings:
            inv_freq, _ = self._frequencies(needed)
        if inv_freq is not self._current_inv_freq:  # dynamic: the buffer shows the speeds last used
            self.inv_freq = torch.from_numpy(inv_freq).to(self.inv_freq.device)
            self._current_inv_freq = inv_freq
        cached = inv_freq is self._cached_inv_freq and needed <= self.cache_limit
        if cached and needed > self.cos_cached.shape[0]:
            self._build_tables(min(1 << (needed - 1).bit_length(), self.cache_limit))
        return inv_freq, cached

    def _warn_if_rounded(self, positions) -> None:
        """Warn when floating positions pass the largest whole number their dtype holds exactly."""
        if isinstance(positions, torch.Tensor) and positions.is_floating_point():
            digits = 1 - int(math.log2(torch.finfo(positions.dtype).eps))
        elif isinstance(positions, np.ndarray) and np.issubdtype(positions.dtype, np.floating):
            digits = np.finfo(positions.dtype).nmant + 1
        else:
            return
        if positions.numel() if isinstance(positions, torch.Tensor) else positions.size:
            largest = float(abs(positions).max())
            if math.isfinite(largest) and largest > 2**digits:
                spacing = 2.0 ** (math.floor(math.log2(largest)) - digits + 1)
                speed = float(self._cached_inv_freq[0])
                warnings.warn(
                    f"positions are {positions.dtype}, which holds every whole number only up to 2**{digits} = "
                    f"{2**digits}; they reach {largest:.0f}, where consecutive values of that dtype are "
                    f"{spacing:g} apart, so a position may already be off by up to {spacing / 2:g} and pair 0 "
                    f"({speed:g} rad per position) turned by up to {spacing / 2 * speed:.3g} rad too much or too "
                    "little. Pass integer positions (torch.long) to keep them exact",
                    stacklevel=3,
                )

    def _check_positions(self, positions, q: torch.Tensor, k: torch.Tensor) -> np.ndarray:
        self._warn_if_rounded(positions)
        pos = as_real_array("positions", positions, integer=True)
        seq = q.shape[-2]
        if pos.ndim == 1:
            if pos.size != seq or k.shape[-2] != seq:
                raise ValueError(f"positions has {pos.size} entries but q and k have {seq} and {k.shape[-2]} rows")
        elif pos.ndim == 2:
            for name, t in (("q", q), ("k", k)):
                if t.dim() < 3 or t.shape[-2] != pos.shape[1] or pos.shape[0] not in (1, t.shape[0]):
                    raise ValueError(
                        f"positions of shape (batch, seq) = {pos.shape} need {name} of shape (batch, heads, seq, "
                        f"head_dim) or (batch, seq, head_dim) with that batch (or positions batch 1) and seq, "
                        f"got {name} of shape {tuple(t.shape)}"
                    )
        else:
            raise ValueError(f"positions must have shape (seq,) or (batch, seq), got shape {pos.shape}")
        if pos.size and pos.min() < 0:
            raise ValueError(f"positions must be >= 0 (token indices), got {pos.min()}")
        return pos

    def forward(self, q: torch.Tensor, k: torch.Tensor, positions=None, offset: int = 0):
        """Rotated ``(q, k)``; positions are ``positions`` (non-negative integers) or ``offset .. offset + seq - 1``."""
        for name, t in (("q", q), ("k", k)):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
            if not t.is_floating_point():
                raise TypeError(f"{name} must have a floating dtype such as float32, got {t.dtype}")
            if t.dim() < 2 or t.shape[-1] != self.head_dim:
                raise ValueError(f"{name} must have shape (..., seq, head_dim={self.head_dim}), got {tuple(t.shape)}")
        seq = q.shape[-2]
        if k.shape[-2] != seq and positions is None:
            raise ValueError(
                f"q has {seq} positions and k has {k.shape[-2]}: pass explicit positions, or rotate them separately"
            )
        if positions is None:
            offset = check_int("offset", offset, minimum=0)
            pos = None
            needed = offset + seq
        else:
            pos = self._check_positions(positions, q, k)
            needed = int(pos.max()) + 1 if pos.size else 0
        inv_freq, cached = self._speeds_for(needed)
        tables: dict = {}
        rotated = []
        for t in (q, k):
            key = (work_dtype(t.dtype), t.device)
            if key not in tables:
                if cached:
                    cos, sin = self._typed_tables(*key)
                    index = slice(offset, offset + seq) if pos is None else torch.from_numpy(pos).to(cos.device)
                    tables[key] = (cos[index], sin[index])
                else:  # past the cache: rows for these positions only
                    where = np.arange(offset, offset + seq) if pos is None else pos
                    tables[key] = cos_sin_tables(where, inv_freq, self.attention_factor, *key)
            rotated.append(rotate_with_tables(t, *tables[key], self.layout))
        return tuple(rotated)

    def extra_repr(self) -> str:
        partial = f", rotary_dim={self.rotary_dim}" if self.rotary_dim != self.head_dim else ""
        partial += f", p_rope={self.p_rope}" if self.p_rope < 1 else ""
        return (
            f"head_dim={self.head_dim}, base={self.base}, layout={self.layout!r}, scaling={self.scaling!r}, "
            f"factor={self.factor}, attention_factor={self.attention_factor:.4f}{partial}"
        )


class ALiBiBias(nn.Module):
    """ALiBi attention biases (:func:`posenc.alibi_bias`) as a module, with an optional causal mask.

    ``forward(n_queries, n_keys=None)`` returns a float32 tensor of shape
    ``(n_heads, n_queries, n_keys)`` to add to the attention logits:
    ``-slope_h * (i - j)`` for past and present keys, and for future keys ``-inf``
    (when ``causal``) or 0. Queries are the *last* ``n_queries`` positions, as with a
    key/value cache.

    ``bidirectional=True`` is ALiBi for encoders: ``-slope_h * |i - j|`` on both sides
    of the diagonal and no mask (``posenc.alibi_bias(..., bidirectional=True)``).
    ``causal`` defaults to ``not bidirectional``; ``causal=True`` with
    ``bidirectional=True`` is refused (the mask would hide the future keys that the
    symmetric bias weighs).
    """

    def __init__(self, n_heads: int, causal: bool | None = None, bidirectional: bool = False):
        super().__init__()
        self.n_heads = check_int("n_heads", n_heads, minimum=1)
        self.bidirectional = check_bool("bidirectional", bidirectional)
        self.causal = not self.bidirectional if causal is None else check_bool("causal", causal)
        if self.causal and self.bidirectional:
            raise ValueError(
                "causal=True and bidirectional=True contradict each other: a bidirectional (encoder) bias "
                "needs causal=False (or leave causal out)"
            )
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
        if self.bidirectional:
            return -self.slopes[:, None, None] * distance.abs()[None]
        bias = -self.slopes[:, None, None] * distance.clamp(min=0)[None]
        if self.causal:
            bias = bias.masked_fill((distance < 0)[None], float("-inf"))
        return bias

    def extra_repr(self) -> str:
        return f"n_heads={self.n_heads}, causal={self.causal}, bidirectional={self.bidirectional}"
