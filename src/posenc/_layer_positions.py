"""The per-layer result of :func:`posenc.from_config` and the query scales it names (re-exported by
:mod:`posenc.config`, where they are documented as ``posenc.config.LayerPositions`` and so on).

Kept apart from the reading itself so that the readers of other schemes (:mod:`posenc.config_schemes`)
build the same result without importing the RoPE reading.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ._validation import as_real_array, check_int, check_real

# --- query scales that depend on the position -------------------------------------------------

#: Qwen-1's ``logn_list`` has one entry per ``i = 1 .. 32767`` (``range(1, 32768)``): positions 0 .. 32766.
QWEN_LOGN_POSITIONS = 32767


def logn_attention_scale(positions, trained_length: int) -> np.ndarray:
    """Qwen-1's log-n attention scale of the query at each position: ``max(1, ln(p + 1) / ln(L))``.

    ``p`` is the 0-based position and ``L`` the training length (the config's ``seq_length``). Qwen's
    ``modeling_qwen.py`` (``QWenAttention``, ``use_logn_attn``) builds ``logn_list = [log(i, L) if i > L
    else 1 for i in range(1, 32768)]`` and, at inference only (``not self.training``) and once the key
    length exceeds ``L``, multiplies the query at position ``p`` by entry ``p``: ``log_L(p + 1)`` once
    ``p + 1 > L``, so the logits grow by ``ln(n) / ln(L)`` and the softmax keeps its sharpness as the
    number of keys ``n`` grows past the trained length (Chiang and Cholak 2022; Su 2021, "entropy
    invariance"). 1 for every ``p < L``.

    The table ends at position 32766: past it, Qwen's code slices fewer entries than there are queries
    and ``expand_as`` fails, so the model has no scale there. Positions from 32767 on are refused.

    Returns a float64 array with the shape of ``positions``.
    """
    positions = as_real_array("positions", positions, integer=True)
    if np.any(positions < 0):
        raise ValueError(f"positions must be >= 0, got min {positions.min()}")
    if np.any(positions >= QWEN_LOGN_POSITIONS):
        raise ValueError(
            f"positions must be < {QWEN_LOGN_POSITIONS}: Qwen's logn_list covers positions 0 .. "
            f"{QWEN_LOGN_POSITIONS - 1} only (range(1, 32768)); got max {positions.max()}"
        )
    trained_length = check_int("trained_length", trained_length, minimum=2)
    scale = np.log(positions.astype(np.float64) + 1.0) / math.log(trained_length)
    return np.where(positions + 1 > trained_length, scale, 1.0)


def attention_temperature_scale(positions, floor_scale: float = 8192.0, attn_scale: float = 0.1) -> np.ndarray:
    """Llama 4's attention temperature of the query at each position: ``1 + s ln(floor((p + 1) / F) + 1)``.

    ``p`` is the 0-based position, ``F`` = ``floor_scale`` and ``s`` = ``attn_scale``
    (defaults 8192 and 0.1, as in Meta's ``llama_models/llama4/args.py``). Meta's
    ``Attention.forward`` (``llama4/model.py``) and ``transformers``'
    ``Llama4TextAttention`` multiply the query of the NoPE layers by it (temperature
    tuning, Nakanishi 2025, arXiv:2501.19399): exactly 1 for ``p < F - 1``, then growing
    by steps like the log of the number of ``F``-token blocks, so short contexts are not
    affected. The logits scale by it once (only the query is multiplied).

    Returns a float64 array with the shape of ``positions``.
    """
    positions = as_real_array("positions", positions, integer=True)
    if np.any(positions < 0):
        raise ValueError(f"positions must be >= 0, got min {positions.min()}")
    floor_scale = check_real("floor_scale", floor_scale, positive=True)
    attn_scale = check_real("attn_scale", attn_scale, minimum=0.0)
    return np.log(np.floor((positions.astype(np.float64) + 1.0) / floor_scale) + 1.0) * attn_scale + 1.0


def llama_4_scaling_query_scale(positions, beta: float, original_max_position_embeddings: int) -> np.ndarray:
    """The query scale of ``llama_4_scaling_beta``: ``1 + beta ln(1 + floor(p / L))``.

    ``p`` is the 0-based position and ``L`` the rope parameters' ``original_max_position_embeddings``.
    ``transformers``' Ministral 3 and Mistral 4 attention (``get_llama_4_attn_scale`` in
    ``modeling_ministral3.py`` / ``modeling_mistral4.py``) multiply every layer's queries by it, after
    the rotation: 1 within the first ``L`` positions, then ``1 + beta ln 2`` up to ``2L - 1``, and so on,
    the same shape as Llama 4's temperature (:func:`posenc.attention_temperature_scale`) with ``p`` in
    place of ``p + 1``.

    Returns a float64 array with the shape of ``positions``.
    """
    positions = as_real_array("positions", positions, integer=True)
    if np.any(positions < 0):
        raise ValueError(f"positions must be >= 0, got min {positions.min()}")
    beta = check_real("beta", beta, minimum=0.0)
    length = check_int("original_max_position_embeddings", original_max_position_embeddings, minimum=1)
    return 1.0 + beta * np.log1p(np.floor(positions.astype(np.float64) / length))


# --- the per-layer result ----------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LayerPositions:
    """The position settings of one layer, as :func:`posenc.from_config` reads them.

    Attributes
    ----------
    layer : int
        The layer index, 0-based.
    layer_type : str
        "full_attention", "sliding_attention", "chunked_attention", "linear_attention", "conv", ...
        (from ``layer_types`` or the family's pattern).
    mixer : str
        What mixes the tokens: "attention" (softmax attention over the sequence), "linear attention",
        "convolution", "state space", "recurrence" or "cross-attention". Only "attention" layers can rotate.
    rope : bool
        True when the layer rotates its queries and keys; False for a NoPE attention layer and for every
        layer that is not attention.
    rope_type : str or None
        The method (``rope_type``) whose speeds :func:`posenc.scaled_inv_freq` computed; None without rotation.
    base : float or None
        ``rope_theta`` of this layer; None without rotation.
    head_dim : int
        The head size the rotation sees (DeepSeek's MLA: ``qk_rope_head_dim``; Gemma 4's full layers:
        ``global_head_dim``); 0 for a layer that is not attention.
    rotary_dim : int
        How many dimensions rotate: ``int(head_dim * partial_rotary_factor)``; 0 without rotation.
    inv_freq : numpy.ndarray
        float64, one speed per rotated pair (``rotary_dim // 2``), read-only; empty without rotation.
    attention_factor : float
        Multiplies cos and sin (YaRN's and LongRoPE's temperature); 1.0 otherwise.
    scaling : Mapping
        The arguments :func:`posenc.scaled_inv_freq` got besides head size and base: ``factor``,
        ``original_max_position_embeddings`` (None for a method that uses no trained length) and the
        method's own parameters (``beta_fast``, ``low_freq_factor``, ``short_factor``, ``seq_len``, ...);
        empty without rotation.
    layout : str
        "half" (pairs ``(i, i + rotary_dim/2)``, ``rotate_half``) or "interleaved" (pairs ``(2i, 2i+1)``).
    direction : int
        1 for the usual sense of rotation, -1 where the model's ``rotate_half`` flips the signs (the angle
        is ``-p * theta``; NanoChat).
    mrope_section : tuple of int or None
        M-RoPE's pairs per axis (temporal, height, width); they sum to ``rotary_dim // 2``.
    mrope_interleaved : bool
        True when the axes take turns pair by pair (Qwen3-VL, Qwen3.5), False for consecutive blocks.
    sliding_window : int or None
        The window of a sliding-attention layer.
    attention_chunk_size : int or None
        Llama 4's chunked attention: the layer attends within blocks of this many tokens.
    softmax_scale : float
        Multiplies the softmax scale ``1/sqrt(d)``: DeepSeek's ``mscale(s, mscale_all_dim)**2``; 1.0 otherwise.
    temperature_tuning : tuple or None
        ``(floor_scale, attn_scale)``: Llama 4's query temperature (:func:`posenc.attention_temperature_scale`).
    llama_4_scaling : tuple or None
        ``(beta, L)``: the query scale of :func:`posenc.llama_4_scaling_query_scale`.
    logn_length : int or None
        Qwen-1's ``seq_length`` when ``use_logn_attn`` (:func:`posenc.logn_attention_scale`).
    rotated_part : str
        Which ``rotary_dim`` dimensions of the head rotate: "leading" (the first ones, ``x[..., :rotary_dim]``) or
        "trailing" (the last ones: DeepSeek V4 lays each head out as ``[nope | rope]``).
    scheme : str
        The position signal the layer works with (``posenc.config_schemes.SCHEMES``): "rope" for a layer
        that rotates, "none" for one that gets no position signal (a NoPE layer, a layer that is not
        attention), or, for a model without RoPE, "learned", "sinusoidal", "alibi", "relative_buckets",
        "relative_learned", "relative_sinusoidal" (:mod:`posenc.config_schemes`). Left out, it is "rope"
        when ``rope`` is True, else "none".
    position_params : Mapping
        The scheme's parameters (read-only; ``posenc.config_schemes.PARAMETERS``); empty for "rope"
        (its parameters are the fields above) and for the RoPE reading's "none".
    stack : str
        "encoder" or "decoder" for a layer of an encoder-decoder model (encoder layers first), else ""; for BLT, the
        module that holds the layer ("patcher", "local_encoder", "global_transformer", "local_decoder"), in the
        order the model runs them.
    """

    layer: int
    layer_type: str
    rope: bool
    rope_type: str | None
    base: float | None
    head_dim: int
    rotary_dim: int
    inv_freq: np.ndarray = field(repr=False)
    attention_factor: float = 1.0
    scaling: Mapping = field(default_factory=lambda: MappingProxyType({}), repr=False)
    mixer: str = "attention"
    layout: str = "half"
    direction: int = 1
    mrope_section: tuple[int, ...] | None = None
    mrope_interleaved: bool = False
    sliding_window: int | None = None
    attention_chunk_size: int | None = None
    softmax_scale: float = 1.0
    temperature_tuning: tuple[float, float] | None = None
    llama_4_scaling: tuple[float, int] | None = None
    logn_length: int | None = None
    rotated_part: str = "leading"
    # non-RoPE position schemes (posenc.config_schemes): what signal the layer works with, its parameters, its stack
    scheme: str | None = None
    position_params: Mapping = field(default_factory=lambda: MappingProxyType({}), repr=False)
    stack: str = ""

    def __post_init__(self):
        if self.scheme is None:  # the RoPE reading: a rotating layer is "rope", any other layer "none"
            object.__setattr__(self, "scheme", "rope" if self.rope else "none")

    def query_scale(self, positions) -> np.ndarray:
        """The factor this layer multiplies the query at each position by (1 where it has none)."""
        positions = as_real_array("positions", positions, integer=True)
        scale = np.ones(positions.shape, dtype=np.float64)
        if self.temperature_tuning is not None:
            scale = scale * attention_temperature_scale(positions, *self.temperature_tuning)
        if self.llama_4_scaling is not None:
            scale = scale * llama_4_scaling_query_scale(positions, *self.llama_4_scaling)
        if self.logn_length is not None:
            scale = scale * logn_attention_scale(positions, self.logn_length)
        return scale


class ModelLayers(list):
    """The list :func:`posenc.from_config` returns: one :class:`LayerPositions` per layer, plus how it was read.

    ``model_type`` is the config's (the language model's, for a multimodal config), ``family`` the rules
    used ("generic" where the family has none of its own), ``nested`` the path of the language model's
    config inside the one given (e.g. "text_config"; "" at the top level), ``note`` one line when the
    ``model_type`` is unknown (read generically), else None, and ``config`` the language model's config
    with the class defaults filled in (read-only), e.g. ``config["max_position_embeddings"]``. ``renamed`` is
    ``(written, read as)`` where the nested config's ``model_type`` is read as another family, as the reference
    library reads it (:func:`posenc.config.nested_model_type`), else None.
    """

    def __init__(self, layers, model_type=None, family="generic", nested="", note=None, config=None, renamed=None):
        super().__init__(layers)
        self.model_type = model_type
        self.renamed = renamed
        self.family = family
        self.nested = nested
        self.note = note
        self.config = MappingProxyType(dict(config or {}))
