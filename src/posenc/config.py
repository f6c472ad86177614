"""Read a model's position settings from its Hugging Face-style config: one entry per layer, as the model runs it.

:func:`posenc.from_config` maps a ``config.json`` (a dict, a ``transformers`` config object or a
:data:`posenc.MODELS` entry) to the positions of every layer, the way vLLM's ``get_rope()`` factory
and the ``transformers`` modeling code read it: what the layer does (:func:`posenc.config_families.read_family`
applies the family's rules for the config's ``model_type``: class defaults, layer pattern, NoPE layers,
linear-attention, convolution and cross-attention layers, query scales) and, for every layer that
rotates, the rotation speeds from :func:`posenc.scaled_inv_freq` (one registry of methods, read through
each method's :class:`posenc.scaling.MethodSpec`). Both config forms are read:

* legacy: ``rope_theta`` plus ``rope_scaling = {"type" or "rope_type": ..., "factor": ..., ...}``;
* newer (``transformers`` 5): ``rope_parameters = {"rope_type": ..., "rope_theta": ..., ...}``,
  flat, or nested by layer type (``{"full_attention": {...}, "sliding_attention": {...}}``).

A multimodal config is read through its language model: ``text_config``, ``llm_config``,
``language_config``, ``thinker_config`` (and its ``text_config``), ``decoder``.

Query scales that depend on the position (the layer multiplies its queries by them):
Llama 4's ``attn_temperature_tuning`` (:func:`posenc.attention_temperature_scale`), Ministral 3's and
Mistral 4's ``llama_4_scaling_beta`` (:func:`posenc.llama_4_scaling_query_scale`) and Qwen-1's
``use_logn_attn`` (:func:`posenc.logn_attention_scale`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ._validation import as_real_array, check_int, check_real, show_value
from .config_families import read_family
from .scaling import scaled_inv_freq, scaling_spec

__all__ = [
    "LayerPositions",
    "ModelLayers",
    "attention_temperature_scale",
    "from_config",
    "llama_4_scaling_query_scale",
    "logn_attention_scale",
    "text_config",
]


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
    with the class defaults filled in (read-only), e.g. ``config["max_position_embeddings"]``.
    """

    def __init__(self, layers, model_type=None, family="generic", nested="", note=None, config=None):
        super().__init__(layers)
        self.model_type = model_type
        self.family = family
        self.nested = nested
        self.note = note
        self.config = MappingProxyType(dict(config or {}))


# --- reading the config ------------------------------------------------------------------------

#: Where a multimodal config keeps its language model's config, in the order they are tried.
NESTED_TEXT_CONFIGS = ("text_config", "llm_config", "language_config", "thinker_config", "decoder")


def _as_dict(config, name: str = "config") -> dict:
    if hasattr(config, "to_dict") and callable(config.to_dict) and not isinstance(config, Mapping):
        config = config.to_dict()
    if not isinstance(config, Mapping):
        raise TypeError(
            f"{name} must be a mapping (a config.json read as a dict) or a transformers config object, "
            f"got {show_value(config)} of type {type(config).__name__}"
        )
    return dict(config)


def _has_layers(config: Mapping) -> bool:
    return any(config.get(k) is not None for k in ("num_hidden_layers", "n_layer", "n_layers", "num_layers"))


def text_config(config) -> tuple[dict, str]:
    """The language model's config inside ``config`` and its path ("" when ``config`` is one).

    A config without its own layer count is searched for ``text_config``, ``llm_config`` (InternVL),
    ``language_config`` (DeepSeek-VL), ``thinker_config`` (Qwen-Omni, whose ``text_config`` is inside)
    and ``decoder``, in that order, one level inside another if needed.
    """
    config = _as_dict(config)
    path = []
    for _ in range(3):
        if _has_layers(config) or config.get("model_type") in _LAYERLESS_FAMILIES:
            break
        for key in NESTED_TEXT_CONFIGS:
            if isinstance(config.get(key), Mapping):
                config = dict(config[key])
                path.append(key)
                break
        else:
            break
    if not _has_layers(config):
        nested = [k for k in NESTED_TEXT_CONFIGS if isinstance(config.get(k), Mapping)]
        where = f" (nor in {', '.join(path)})" if path else ""
        raise ValueError(
            "config needs 'num_hidden_layers' (the number of layers), which is missing"
            + where
            + ("" if nested or path else f"; a multimodal config keeps it in one of {list(NESTED_TEXT_CONFIGS)}")
        )
    return config, ".".join(path)


_LAYERLESS_FAMILIES: frozenset = frozenset()


def _number(name: str, value, **bounds) -> float:
    return check_real(name, value, **bounds)


def _integer(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, float) and value.is_integer():  # JSON writers sometimes store 4096.0
        value = int(value)
    return check_int(name, value, minimum=minimum)


def _get(config: Mapping, key: str):
    aliases = {"max_position_embeddings": ("max_position_embeddings", "n_positions", "max_seq_len")}
    for alias in aliases.get(key, (key,)):
        if config.get(alias) is not None:
            return alias, config[alias]
    return key, None


def _config_length(spec, params: dict, config: dict, field_name: str) -> int:
    """The trained length ``L`` that ``spec`` declares (2048, the functions' default, when it uses none)."""

    def max_positions():
        key, value = _get(config, "max_position_embeddings")
        if value is None:
            raise ValueError(f"rope_type {spec.name!r} needs config['max_position_embeddings'], which is missing")
        return _integer(f"config['{key}']", value)

    if spec.length is None:
        return 2048
    if spec.length == "max":
        return max_positions()
    # "original", as transformers' standardize_rope_params: a top-level value wins (Phi-3), then the
    # rope parameters, then max_position_embeddings
    if config.get("original_max_position_embeddings") is not None:
        return _integer("config['original_max_position_embeddings']", config["original_max_position_embeddings"])
    if params.get("original_max_position_embeddings") is not None:
        name = params.get("_original_field") or f"{field_name}['original_max_position_embeddings']"
        return _integer(name, params["original_max_position_embeddings"])
    return max_positions()


def _config_value(parameter, value, name: str):
    if parameter.kind == "bool":
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be true or false, got {show_value(value)}")
        return value
    if parameter.kind == "numbers":
        if not isinstance(value, list | tuple) or not all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value
        ):
            raise TypeError(f"{name} must be a list of numbers, got {show_value(value)}")
        return [float(v) for v in value]
    return _number(name, value)


def _method_arguments(spec, params: dict, config: dict, field_name: str, seq_len: int | None):
    """(factor, original_max_position_embeddings, keyword arguments) for posenc.scaled_inv_freq.

    Read as the method's :class:`posenc.scaling.MethodSpec` declares: which length is ``L``, how
    the factor is found, which keyword arguments come from the config, whether it takes ``seq_len``.
    """
    length = _config_length(spec, params, config, field_name)
    if spec.factor is None:
        factor = 1.0
    elif params.get("factor") is not None:
        factor = _number(f"{field_name}['factor']", params["factor"])
    elif spec.factor == "required":
        raise ValueError(f"rope_type {spec.name!r} needs {field_name}['factor'], which is missing")
    elif spec.factor == "derived":
        key, value = _get(config, "max_position_embeddings")
        if value is None:
            raise ValueError(
                f"rope_type {spec.name!r} needs {field_name}['factor'] or config['max_position_embeddings'] "
                "(the factor is max_position_embeddings / original_max_position_embeddings)"
            )
        factor = _integer(f"config['{key}']", value) / length
    else:  # "optional"
        factor = 1.0
    extra: dict = {}
    for parameter in spec.parameters:
        name = f"{field_name}['{parameter.name}']"
        if params.get(parameter.name) is not None:
            extra[parameter.name] = _config_value(parameter, params[parameter.name], name)
        elif parameter.required:
            raise ValueError(f"rope_type {spec.name!r} needs {name}, which is missing")
    if spec.reads_seq_len:
        if seq_len is not None:
            extra["seq_len"] = seq_len
        elif spec.seq_len_required:  # as transformers starts: the sequence at the trained length
            extra["seq_len"] = length
    return factor, length, extra


def _partial_factor(params: Mapping, field_name: str, head_dim: int) -> tuple[float, str]:
    """(partial_rotary_factor, the field it came from), from the standardized rope parameters."""
    if params.get("partial_rotary_factor") is not None:
        name = params.get("_partial_field") or f"{field_name}['partial_rotary_factor']"
        if not name.startswith("config") and not name.startswith("the class"):
            name = f"{field_name}['partial_rotary_factor']"
        value = _number(name, params["partial_rotary_factor"])
        if not 0.0 < value <= 1.0:
            raise ValueError(f"{name} must be in (0, 1] (the fraction of head_dim that rotates), got {value}")
        return value, name
    if params.get("_rotary_dim") is not None:  # GPT-J and Phi-1/2 give the rotated dimensions directly
        rotary = _integer("config['rotary_dim']", params["_rotary_dim"], minimum=2)
        if rotary > head_dim:
            raise ValueError(f"config['rotary_dim'] must be <= head_dim ({head_dim}), got {rotary}")
        return rotary / head_dim, "config['rotary_dim']"
    return 1.0, "partial_rotary_factor"


def _mrope(params: dict, field_name: str, rotary_dim: int, family_mrope) -> dict:
    """M-RoPE's sections and pair order: the config's, else the family's rotary class's defaults."""
    section = params.get("mrope_section")
    interleaved = params.get("mrope_interleaved")
    layout = None
    if family_mrope is not None:
        default_section, family_interleaved, layout = family_mrope
        section = default_section if section is None else section
        interleaved = family_interleaved
    if section is None:
        if params.get("rope_type") == "mrope":
            raise ValueError(f"rope_type 'mrope' needs {field_name}['mrope_section'], which is missing")
        return {}
    if not isinstance(section, list | tuple) or not all(
        isinstance(m, numbers.Integral) and not isinstance(m, bool) and m >= 0 for m in section
    ):
        raise TypeError(
            f"{field_name}['mrope_section'] must be a list of non-negative integers, got {show_value(section)}"
        )
    if sum(section) != rotary_dim // 2:
        raise ValueError(
            f"{field_name}['mrope_section'] must sum to the number of rotated pairs ({rotary_dim // 2}), "
            f"got {list(section)} (sum {sum(section)})"
        )
    if interleaved is not None and not isinstance(interleaved, bool):
        raise TypeError(f"{field_name}['mrope_interleaved'] must be true or false, got {show_value(interleaved)}")
    out = {"mrope_section": tuple(int(m) for m in section), "mrope_interleaved": bool(interleaved)}
    if layout is not None:
        out["layout"] = layout
    return out


def _layer_rope(key: str, params: dict, config: dict, head_dim: int, seq_len: int | None, family_mrope) -> dict:
    """inv_freq, attention factor and the rest for one set of rope parameters and head size."""
    params = dict(params)
    field_name = params.pop("_field")
    theta_field = params.pop("_theta_field", None) or f"{field_name}['rope_theta']"
    if not theta_field.startswith("config"):
        theta_field = f"{field_name}['rope_theta']"
    rope_type = params.get("rope_type", params.get("type")) or "default"
    if not isinstance(rope_type, str):
        raise TypeError(f"{field_name}['rope_type'] must be a string, got {show_value(rope_type)}")
    spec = scaling_spec(rope_type, f"{field_name}['rope_type']")  # its name or an alias ("su" for longrope)
    if params.get("rope_theta") is None:
        raise ValueError(
            f"config has no RoPE base for {key} layers: expected 'rope_theta' (or rope_parameters['rope_theta']). "
            "transformers' default is 10000.0; a model with learned, ALiBi or relative positions has no RoPE to read"
        )
    base = _number(theta_field, params["rope_theta"], strictly_above=1.0)
    factor, p_name = _partial_factor(params, field_name, head_dim)
    rotary_dim = head_dim if spec.partial_rotary else int(head_dim * factor)  # p-RoPE zeroes the slow pairs
    if rotary_dim < 2 or rotary_dim % 2:
        raise ValueError(
            f"{p_name} gives rotary_dim = int({head_dim} * {factor}) = {rotary_dim}; it must be even and >= 2 "
            "(dimensions rotate in pairs)"
        )
    mrope = _mrope(params, field_name, rotary_dim, family_mrope)
    scale, original, extra = _method_arguments(spec, params, config, field_name, seq_len)
    if spec.partial_rotary:
        extra["partial_rotary_factor"] = factor
    try:
        inv_freq, attention_factor = scaled_inv_freq(spec.name, rotary_dim, base, scale, original, **extra)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{field_name} (rope_type {rope_type!r}) for {key} layers: {error}") from error
    inv_freq = np.array(inv_freq, dtype=np.float64)
    inv_freq.setflags(write=False)
    scaling = {
        "factor": scale,
        "original_max_position_embeddings": original if spec.length is not None else None,
        **{k: tuple(v) if isinstance(v, list) else v for k, v in extra.items()},
    }
    return dict(
        rope_type=rope_type,
        base=base,
        rotary_dim=rotary_dim,
        inv_freq=inv_freq,
        attention_factor=float(attention_factor),
        scaling=MappingProxyType(scaling),
        **mrope,
    )


_EXTRA_FIELDS = (
    "layout",
    "direction",
    "sliding_window",
    "attention_chunk_size",
    "softmax_scale",
    "temperature_tuning",
    "llama_4_scaling",
    "logn_length",
)


def from_config(config, seq_len: int | None = None) -> ModelLayers:
    """The position settings of every layer of a model, read from its Hugging Face-style config.

    Parameters
    ----------
    config : dict
        The model's ``config.json`` as a dict (legacy ``rope_theta`` + ``rope_scaling``, or
        ``rope_parameters``), a ``transformers`` ``PretrainedConfig`` (read through ``to_dict()``),
        or a :data:`posenc.MODELS` entry. A multimodal config is read through its language model's
        config (:func:`posenc.config.text_config`). The config's ``model_type`` selects its family's
        rules and class defaults (:mod:`posenc.config_families`); an unknown one is read generically,
        and the result's ``note`` says so.
    seq_len : int, optional
        The current sequence length, for the methods that depend on it: "dynamic"
        (default ``max_position_embeddings``, as in ``transformers``) and "longrope" (the
        long factors once ``seq_len > original_max_position_embeddings``).

    Returns
    -------
    ModelLayers
        A list with one :class:`posenc.config.LayerPositions` per layer: for a layer that rotates,
        ``inv_freq`` (float64, one per rotated pair) and ``attention_factor`` as
        :func:`posenc.scaled_inv_freq` computes them for that layer's rope parameters
        (``transformers``' ``ROPE_INIT_FUNCTIONS`` give the same numbers in float32),
        ``rotary_dim = int(head_dim * partial_rotary_factor)``; ``rope`` False for a NoPE layer and
        for a layer that is not attention (``mixer`` says what it is). The list's ``model_type``,
        ``family``, ``nested`` and ``note`` say how the config was read.

    Unknown rope types and inconsistent or missing values raise a ``ValueError`` or
    ``TypeError`` naming the config field.
    """
    from .models import ModelEntry

    if isinstance(config, ModelEntry):
        if config.scheme != "rope":
            raise ValueError(f"config is {config.name!r}, a model with {config.scheme!r} positions: it has no RoPE")
        config = config.config
    config, nested = text_config(config)
    if seq_len is not None:
        seq_len = check_int("seq_len", seq_len, minimum=1)
    reading = read_family(config)
    from .config_families import FAMILIES

    family_mrope = getattr(FAMILIES.get(reading.model_type), "mrope", None)
    computed: dict = {}
    empty = np.zeros(0, dtype=np.float64)
    empty.setflags(write=False)
    result = []
    for i, plan in enumerate(reading.layers):
        extras = {k: v for k, v in plan.extras.items() if k in _EXTRA_FIELDS}
        if plan.rope_key is None:
            result.append(
                LayerPositions(
                    layer=i,
                    layer_type=plan.layer_type,
                    rope=False,
                    rope_type=None,
                    base=None,
                    head_dim=plan.head_dim,
                    rotary_dim=0,
                    inv_freq=empty,
                    mixer=plan.mixer,
                    **extras,
                )
            )
            continue
        cache_key = (plan.rope_key, plan.head_dim)
        if cache_key not in computed:
            computed[cache_key] = _layer_rope(
                plan.rope_key if plan.rope_key != "all" else plan.layer_type,
                reading.rope[plan.rope_key],
                reading.config,
                plan.head_dim,
                seq_len,
                family_mrope,
            )
        settings = dict(computed[cache_key])
        layout = settings.pop("layout", None)
        if layout is not None and "layout" not in extras:
            extras["layout"] = layout
        result.append(
            LayerPositions(
                layer=i,
                layer_type=plan.layer_type,
                rope=True,
                head_dim=plan.head_dim,
                mixer=plan.mixer,
                **settings,
                **extras,
            )
        )
    return ModelLayers(result, reading.model_type, reading.family, nested, reading.note, reading.config)
