"""A small rotary KV cache: what a cached key holds, and when reusing it goes wrong.

When a decoder generates, the keys and values of earlier tokens are kept (the KV cache) so
that each new token costs one row of attention, not a whole pass. With RoPE a key can be
cached in two forms:

* **rotated** (``store="rotated"``): rotated once, at its own position, with the speeds of the
  moment, as ``transformers`` does (its attention applies ``apply_rotary_pos_emb``, then
  ``past_key_values.update``; ``DynamicCache`` holds the rotated keys). Exact for static speeds:
  the query is rotated at its position and scores depend on the difference only. Stale when the
  speeds change with the length: dynamic NTK (a new base at every step past the trained length;
  :func:`posenc.dynamic_ntk_cached_keys` gives the same keys and angle errors) and LongRoPE
  (short factors up to the original length, long ones past it: at the switch every cached key
  was rotated with the wrong set; ``transformers``' Phi-3 drops its cache there and recomputes,
  ``Phi3ForCausalLM.prepare_inputs_for_generation``).
* **unrotated** (``store="unrotated"``): rotated when read, with the current speeds and at
  positions chosen then, which is what a window that re-assigns positions needs.

A StreamingLLM window (``window``, ``n_sink``) keeps the first ``n_sink`` tokens (attention
sinks) and the last ``window`` ones. Xiao et al. 2023, "Efficient Streaming Language Models
with Attention Sinks" (ICLR 2024), section 3.2: positions are those *within the cache*
(``position_rule="cache"``: a cache holding tokens [0, 1, 2, 3, 6, 7, 8] while decoding token 9
uses positions 0 .. 7, not [0, 1, 2, 3, 6, 7, 8, 9]), and for RoPE the keys are cached
before rotation and rotated at every decoding step (their code:
``streaming_llm/pos_shift/modify_llama.py``, key positions ``arange(kv_seq_len)``;
``kv_cache.py``, ``StartRecentKVCache``, 4 sink tokens by default). ``position_rule="original"``
keeps every token's position in the text, so the distances to the sinks grow without bound.

Pure NumPy, float64 angles; one head (or any fixed leading axes) per cache.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import as_real_array, check_choice, check_even_int, check_int
from .attention import softmax
from .rope import LAYOUTS, rotate_pairs
from .scaling import SCALING_METHODS, scaled_inv_freq

__all__ = ["CACHE_STORES", "POSITION_RULES", "RotaryKVCache", "cache_score_error"]

#: How a cache holds its keys, "rotated" at their positions when appended or "unrotated" (rotated when read).
CACHE_STORES = ("rotated", "unrotated")
#: Which positions cached keys are rotated at, "original" (in the text) or "cache" (index in the cache, StreamingLLM).
POSITION_RULES = ("original", "cache")


def _float_array(name: str, value, what: str) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray of shape {what}, got {type(value).__name__}")
    if not np.issubdtype(value.dtype, np.floating):
        raise TypeError(f"{name} must have a floating dtype, got {value.dtype}")
    if not np.all(np.isfinite(value)):
        raise ValueError(f"{name} must be finite, got NaN or infinite entries")
    return value.astype(np.float64)


class _Rows:
    """Rows along axis -2 in a buffer that doubles when full, so appending one row at a time costs O(1) amortised."""

    def __init__(self, first: np.ndarray):
        self._buffer = first.copy()
        self._n = first.shape[-2]

    def append(self, rows: np.ndarray) -> None:
        n_new = rows.shape[-2]
        if self._n + n_new > self._buffer.shape[-2]:
            capacity = max(2 * self._buffer.shape[-2], self._n + n_new)
            grown = np.empty((*self._buffer.shape[:-2], capacity, self._buffer.shape[-1]), dtype=self._buffer.dtype)
            grown[..., : self._n, :] = self._buffer[..., : self._n, :]
            self._buffer = grown
        self._buffer[..., self._n : self._n + n_new, :] = rows
        self._n += n_new

    def keep(self, rows: np.ndarray) -> None:
        kept = self._buffer[..., rows, :]  # fancy indexing copies first, so the rows may move down safely
        self._buffer[..., : rows.size, :] = kept
        self._n = rows.size

    @property
    def array(self) -> np.ndarray:
        return self._buffer[..., : self._n, :]


class RotaryKVCache:
    """A KV cache for one attention head under a RoPE scheme, with its rules for reuse.

    :meth:`append` each token's key and value (a prompt at once, then one per step); then
    :meth:`keys_for_query` and :meth:`rotate_query` give what attention uses, :meth:`attend` its
    output for the newest token's query, :meth:`fresh_keys` the keys a full recompute would give,
    and :func:`posenc.cache_score_error` the logit error of reusing the cache. A real cache would not
    keep the unrotated keys beside the rotated ones; this one does, to measure what reuse costs.

    Parameters
    ----------
    head_dim, method, base, factor, original_max_position_embeddings, **params
        The RoPE scheme, as for :func:`posenc.scaled_inv_freq`. For a method whose speeds follow the
        current length ("dynamic", "longrope"), the cache passes ``seq_len`` itself: the current
        length ``n`` = largest position used + 1, as ``transformers`` reads ``max(position_ids) + 1``.
    store : {"rotated", "unrotated"}
        Keys rotated once when appended, with the speeds of that length (``transformers``'
        ``DynamicCache``), or stored as they come and rotated when read, with the current speeds.
    layout : {"half", "interleaved"}
    window : int, optional
        Keep only the last ``window`` tokens (and the ``n_sink`` first ones); None keeps all.
    n_sink : int
        Tokens at the start that are never evicted (StreamingLLM's attention sinks); needs ``window``.
    position_rule : {"original", "cache"}
        Rotate keys and the query at their positions in the text, or at their indices in the
        cache (StreamingLLM, section 3.2; needs ``store="unrotated"``).
    """

    def __init__(
        self,
        head_dim: int,
        method: str = "default",
        base: float = 10000.0,
        factor: float = 1.0,
        original_max_position_embeddings: int = 2048,
        *,
        store: str = "rotated",
        layout: str = "half",
        window: int | None = None,
        n_sink: int = 0,
        position_rule: str = "original",
        **params,
    ):
        self.head_dim = check_even_int("head_dim", head_dim)
        self.method = check_choice("method", method, SCALING_METHODS)
        self.store = check_choice("store", store, CACHE_STORES)
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.position_rule = check_choice("position_rule", position_rule, POSITION_RULES)
        self.window = None if window is None else check_int("window", window, minimum=1)
        self.n_sink = check_int("n_sink", n_sink, minimum=0)
        if self.n_sink and self.window is None:
            raise ValueError(f"n_sink={self.n_sink} needs a window (the sinks are what a window never evicts)")
        if self.position_rule == "cache" and self.store == "rotated":
            raise ValueError(
                'position_rule="cache" re-assigns positions inside the cache at every step, which needs the keys '
                'stored before rotation: use store="unrotated" (StreamingLLM, section 3.2)'
            )
        if "seq_len" in params:
            raise TypeError("RotaryKVCache sets seq_len (the current length) itself; do not pass it")
        self._follows_length = SCALING_METHODS[self.method].spec.reads_seq_len
        self._scheme = (base, factor, original_max_position_embeddings, dict(params))
        self._speeds(1)  # check the scheme now, not at the first append
        self._length = 0  # largest rotation position + 1 so far
        self._keys = self._raw = self._values = None
        self._positions = np.zeros(0, dtype=np.int64)
        self._rotated_at = np.zeros(0, dtype=np.int64)

    # --- the scheme ---------------------------------------------------------------------------
    def _speeds(self, length: int) -> tuple[np.ndarray, float]:
        base, factor, original, params = self._scheme
        if self._follows_length:
            params = dict(params, seq_len=max(length, 1))
        return scaled_inv_freq(self.method, self.head_dim, base, factor, original, **params)

    def _rotate(self, x: np.ndarray, positions, length: int) -> np.ndarray:
        inv_freq, attention_factor = self._speeds(length)
        angles = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq
        return rotate_pairs(x, attention_factor * np.cos(angles), attention_factor * np.sin(angles), self.layout)

    @property
    def inv_freq(self) -> np.ndarray:
        """The speeds at the current length (those a fresh rotation uses now)."""
        return self._speeds(self._length)[0]

    @property
    def attention_factor(self) -> float:
        """The attention factor at the current length."""
        return self._speeds(self._length)[1]

    @property
    def length(self) -> int:
        """The current length, the largest position used for rotation + 1 (0 while empty)."""
        return self._length

    def __len__(self) -> int:
        return int(self._positions.size)

    @property
    def positions(self) -> np.ndarray:
        """The text position of every cached token, oldest first."""
        return self._positions.copy()

    @property
    def rotation_lengths(self) -> np.ndarray:
        """The length whose speeds each stored key was rotated with (rotated store); the current one otherwise."""
        if self.store == "unrotated":
            return np.full(len(self), self._length, dtype=np.int64)
        return self._rotated_at.copy()

    @property
    def values(self) -> np.ndarray:
        """The cached values, ``(..., n_cached, d_v)``."""
        self._check_not_empty()
        return self._values.array.copy()

    # --- filling ------------------------------------------------------------------------------
    def append(self, keys, values, positions=None) -> RotaryKVCache:
        """Add the keys and values of new tokens (unrotated, as the projections give them); returns the cache.

        ``keys``: ``(..., n_new, head_dim)``, ``values``: ``(..., n_new, d_v)``, the same leading axes
        at every call. ``positions``: their positions in the text, increasing and after the last
        cached one (default: continuing from it, from 0). The current length becomes the largest
        position + 1 (``position_rule="cache"``: the number of cached tokens); a rotated store rotates
        the new keys with the speeds of that length, and a window then evicts the oldest non-sink tokens.
        """
        keys = _float_array("keys", keys, "(..., n_new, head_dim)")
        values = _float_array("values", values, "(..., n_new, d_v)")
        if keys.ndim < 2 or keys.shape[-1] != self.head_dim:
            raise ValueError(f"keys must have shape (..., n_new, head_dim={self.head_dim}), got {keys.shape}")
        n_new = keys.shape[-2]
        if n_new < 1:
            raise ValueError(f"keys must hold at least one token (axis -2), got shape {keys.shape}")
        if values.ndim != keys.ndim or values.shape[:-1] != keys.shape[:-1]:
            raise ValueError(
                f"values must have shape (..., n_new, d_v) with the leading axes and n_new of keys "
                f"{keys.shape[:-1]}, got {values.shape}"
            )
        if self._raw is not None and keys.shape[:-2] != self._raw.array.shape[:-2]:
            raise ValueError(
                f"keys must keep the leading axes of the cached keys {self._raw.array.shape[:-2]}, "
                f"got {keys.shape[:-2]}"
            )
        if self._raw is not None and values.shape[-1] != self._values.array.shape[-1]:
            raise ValueError(f"values must keep d_v = {self._values.array.shape[-1]}, got {values.shape[-1]}")
        last = int(self._positions[-1]) if len(self) else -1
        if positions is None:
            new_positions = np.arange(last + 1, last + 1 + n_new, dtype=np.int64)
        else:
            new_positions = as_real_array("positions", positions, ndim=1, integer=True)
            if new_positions.size != n_new:
                raise ValueError(f"positions must hold one position per new key ({n_new}), got {new_positions.size}")
            if np.any(np.diff(new_positions) <= 0) or new_positions[0] <= last:
                raise ValueError(
                    f"positions must increase and come after the last cached position {last}, "
                    f"got {new_positions.tolist()[:8]}"
                )
        self._positions = np.concatenate((self._positions, new_positions))
        if self.position_rule == "original":
            self._length = max(self._length, int(new_positions[-1]) + 1)
        stored = [(self._raw, keys), (self._values, values)]
        if self.store == "rotated":  # position_rule="original" here: rotate the new keys once, with today's speeds
            stored.append((self._keys, self._rotate(keys, new_positions, self._length)))
            self._rotated_at = np.concatenate((self._rotated_at, np.full(n_new, self._length, dtype=np.int64)))
        for rows, new in stored:
            if rows is not None:
                rows.append(new)
        if self._raw is None:
            self._raw, self._values = _Rows(keys), _Rows(values)
            self._keys = _Rows(stored[2][1]) if self.store == "rotated" else None
        self._evict()
        if self.position_rule == "cache":
            self._length = max(self._length, len(self))
        return self

    def _evict(self) -> None:
        """Keep the first ``n_sink`` and the last ``window`` tokens."""
        n = len(self)
        if self.window is None or n <= self.n_sink + self.window:
            return
        keep = np.concatenate((np.arange(self.n_sink), np.arange(n - self.window, n)))
        self._positions = self._positions[keep]
        self._raw.keep(keep)
        self._values.keep(keep)
        if self.store == "rotated":
            self._keys.keep(keep)
            self._rotated_at = self._rotated_at[keep]

    # --- reading ------------------------------------------------------------------------------
    def _check_not_empty(self) -> None:
        if not len(self):
            raise ValueError("the cache is empty: append keys and values first")

    def key_positions(self) -> np.ndarray:
        """The positions the cached keys are rotated at when read: text positions, or ``0 .. n_cached-1``."""
        self._check_not_empty()
        if self.position_rule == "cache":
            return np.arange(len(self), dtype=np.int64)
        return self._positions.copy()

    def query_position(self) -> int:
        """The position the newest token's query is rotated at: its text position, or ``n_cached - 1``."""
        return int(self.key_positions()[-1])

    def keys_for_query(self) -> np.ndarray:
        """The keys as attention uses them now: the stored rotated keys, or the unrotated ones rotated now.

        Rotated store: each key as rotated when appended (speeds of ``rotation_lengths``).
        Unrotated store: every key rotated at :meth:`key_positions` with the current speeds.
        """
        self._check_not_empty()
        if self.store == "rotated":
            return self._keys.array.copy()
        return self.fresh_keys()

    def fresh_keys(self) -> np.ndarray:
        """The keys a full recompute would give: each cached key rotated at :meth:`key_positions`, current speeds."""
        self._check_not_empty()
        return self._rotate(self._raw.array, self.key_positions(), self._length)

    def angle_error(self) -> np.ndarray:
        """How far each stored pair is turned ahead of a fresh rotation, ``(n_cached, head_dim/2)``, radians.

        ``p (theta_i(c) - theta_i(n))`` wrapped to ``(-pi, pi]``, with ``p`` the key's position, ``c``
        the length it was rotated at (:attr:`rotation_lengths`), ``n`` the current one; 0 for an
        unrotated store. Under dynamic NTK it equals :func:`posenc.dynamic_ntk_cached_keys`'s error.
        """
        self._check_not_empty()
        current = self._speeds(self._length)[0]
        lengths, which = np.unique(self.rotation_lengths, return_inverse=True)
        rotated_with = np.array([self._speeds(int(c))[0] for c in lengths])[which]
        error = self.key_positions()[:, None] * (rotated_with - current)
        return np.angle(np.exp(1j * error))

    def rotate_query(self, query) -> np.ndarray:
        """The newest token's query rotated at :meth:`query_position` with the current speeds.

        ``query``: ``(..., head_dim)``, leading axes broadcasting against the cache's. Returns float64.
        """
        self._check_not_empty()
        query = _float_array("query", query, "(..., head_dim)")
        if query.ndim < 1 or query.shape[-1] != self.head_dim:
            raise ValueError(f"query must have shape (..., head_dim={self.head_dim}), got {query.shape}")
        return self._rotate(query[..., None, :], [self.query_position()], self._length)[..., 0, :]

    def scores(self, query, recompute: bool = False) -> np.ndarray:
        """Attention logits ``R q . k / sqrt(head_dim)`` of the newest query against the cache, ``(..., n_cached)``.

        ``recompute=True``: against :meth:`fresh_keys` instead of :meth:`keys_for_query`.
        """
        if not isinstance(recompute, bool):
            raise TypeError(f"recompute must be True or False, got {recompute!r}")
        q = self.rotate_query(query)
        keys = self.fresh_keys() if recompute else self.keys_for_query()
        try:
            return np.einsum("...d,...nd->...n", q, keys) / math.sqrt(self.head_dim)
        except ValueError as error:
            raise ValueError(
                f"query's leading axes {q.shape[:-1]} do not broadcast with the cache's {keys.shape[:-2]}"
            ) from error

    def attend(self, query, recompute: bool = False) -> np.ndarray:
        """The attention output of the newest query: ``softmax(scores) @ values``, ``(..., d_v)``."""
        weights = softmax(self.scores(query, recompute), axis=-1)
        return np.einsum("...n,...nv->...v", weights, self._values.array)


def cache_score_error(cache, query) -> np.ndarray:
    """The logit error of reusing a cache: ``scores(reused keys) - scores(recomputed keys)``, ``(..., n_cached)``.

    ``cache``: a :class:`RotaryKVCache`; ``query``: the newest token's query ``(..., head_dim)``.
    Zero for static speeds, or for an unrotated store; for a rotated store under dynamic NTK or
    past LongRoPE's switch it is what the stale angles of :meth:`RotaryKVCache.angle_error` do to
    the logits. Float64.
    """
    if not isinstance(cache, RotaryKVCache):
        raise TypeError(f"cache must be a posenc.RotaryKVCache, got {type(cache).__name__}")
    return cache.scores(query) - cache.scores(query, recompute=True)
