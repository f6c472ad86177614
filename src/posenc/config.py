"""Read a model's position settings from its Hugging Face-style config: one entry per layer.

:func:`posenc.from_config` maps a ``config.json`` (as a dict, or a ``transformers``
config object) to the RoPE of every layer, the way vLLM's ``get_rope()`` factory and
``transformers``' rotary embedding classes read it: the rotation speeds come from
:func:`posenc.scaled_inv_freq` (one registry of methods), the layer pattern from the
config's layer fields. Both config forms are read:

* legacy: ``rope_theta`` (``rotary_emb_base`` in GPT-NeoX and Qwen-1) plus
  ``rope_scaling = {"type" or "rope_type": ..., "factor": ..., ...}``;
* newer (``transformers`` 5): ``rope_parameters = {"rope_type": ..., "rope_theta": ..., ...}``,
  flat, or nested by layer type (``{"full_attention": {...}, "sliding_attention": {...}}``).

Layer patterns (what each ``transformers`` modeling file does with them):

* NoPE layers: ``no_rope_layers`` (1 = RoPE, 0 = no position encoding, Llama 4 and
  SmolLM3), or ``no_rope_layer_interval`` = k (layer ``i`` is NoPE when ``(i + 1) % k == 0``;
  ``configuration_llama4.py``, ``configuration_smollm3.py``);
* local and global layers with different bases: ``layer_types`` ("sliding_attention" /
  "full_attention"); Gemma 3's legacy ``rope_local_base_freq`` (sliding layers) and
  ``sliding_window_pattern`` = k (layer ``i`` is sliding unless ``(i + 1) % k == 0``;
  ``configuration_gemma3.py``; ``rope_scaling`` applies to the full-attention layers only);
  ModernBERT's ``global_rope_theta`` / ``local_rope_theta`` and ``global_attn_every_n_layers``
  = k (layer ``i`` is global when ``i % k == 0``; ``rope_scaling`` applies to both kinds;
  ``configuration_modernbert.py``);
* query scaling by position: Llama 4's ``attn_temperature_tuning`` (NoPE layers only,
  :func:`posenc.attention_temperature_scale`) and Qwen-1's ``use_logn_attn`` (every layer,
  :func:`posenc.logn_attention_scale`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ._validation import as_real_array, check_int, check_real, show_value
from .scaling import SCALING_METHODS, scaled_inv_freq

__all__ = [
    "LayerPositions",
    "attention_temperature_scale",
    "from_config",
    "logn_attention_scale",
]


# --- query scales that depend on the position -------------------------------------------------


def logn_attention_scale(positions, trained_length: int) -> np.ndarray:
    """Qwen-1's log-n attention scale of the query at each position: ``max(1, ln(p + 1) / ln(L))``.

    ``p`` is the 0-based position and ``L`` the training length (the config's
    ``seq_length``). Qwen's ``modeling_qwen.py`` (``QWenAttention``, ``use_logn_attn``) builds
    ``logn_list = [log(i, L) if i > L else 1 for i in range(1, 32768)]`` and multiplies the
    query at position ``p`` by entry ``p``, i.e. by ``log_L(p + 1)`` once ``p + 1 > L``: the
    logits grow by ``ln(n) / ln(L)`` so the softmax keeps its sharpness as the number of
    keys ``n`` grows past the trained length (Chiang and Cholak 2022; Su 2021, "entropy
    invariance"). 1 for every ``p < L``.

    Returns a float64 array with the shape of ``positions``.
    """
    positions = as_real_array("positions", positions, integer=True)
    if np.any(positions < 0):
        raise ValueError(f"positions must be >= 0, got min {positions.min()}")
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


# --- the per-layer result ----------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LayerPositions:
    """The position settings of one attention layer, as :func:`posenc.from_config` reads them.

    Attributes
    ----------
    layer : int
        The layer index, 0-based.
    layer_type : str
        "full_attention", "sliding_attention", ... (from ``layer_types`` or the model's pattern).
    rope : bool
        False for a NoPE layer (no rotation at all).
    rope_type : str or None
        The method (``rope_type``) whose speeds :func:`posenc.scaled_inv_freq` computed; None for NoPE.
    base : float or None
        ``rope_theta`` of this layer; None for NoPE.
    head_dim : int
        Dimensions per attention head (for DeepSeek's MLA: ``qk_rope_head_dim``, the rotated part).
    rotary_dim : int
        How many of them rotate: ``int(head_dim * partial_rotary_factor)``; 0 for NoPE.
    inv_freq : numpy.ndarray
        float64, one speed per rotated pair (``rotary_dim // 2``), read-only; empty for NoPE.
    attention_factor : float
        Multiplies cos and sin (YaRN's and LongRoPE's temperature); 1.0 otherwise.
    mrope_section : tuple of int or None
        M-RoPE's pairs per axis (temporal, height, width); they sum to ``rotary_dim // 2``.
    temperature_tuning : tuple or None
        ``(floor_scale, attn_scale)``: Llama 4's query temperature on this layer
        (:func:`posenc.attention_temperature_scale`).
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
    mrope_section: tuple[int, ...] | None = None
    temperature_tuning: tuple[float, float] | None = None
    logn_length: int | None = None

    def query_scale(self, positions) -> np.ndarray:
        """The factor this layer multiplies the query at each position by (1 where it has none)."""
        positions = as_real_array("positions", positions, integer=True)
        scale = np.ones(positions.shape, dtype=np.float64)
        if self.temperature_tuning is not None:
            scale = scale * attention_temperature_scale(positions, *self.temperature_tuning)
        if self.logn_length is not None:
            scale = scale * logn_attention_scale(positions, self.logn_length)
        return scale


# --- reading the config ------------------------------------------------------------------------

_ALIASES = {
    "num_hidden_layers": ("num_hidden_layers", "n_layer", "n_layers", "num_layers"),
    "hidden_size": ("hidden_size", "n_embd", "d_model"),
    "num_attention_heads": ("num_attention_heads", "n_head", "n_heads", "num_heads"),
    "max_position_embeddings": ("max_position_embeddings", "n_positions", "max_seq_len"),
}


def _as_dict(config, name: str = "config") -> dict:
    if hasattr(config, "to_dict") and callable(config.to_dict) and not isinstance(config, Mapping):
        config = config.to_dict()
    if not isinstance(config, Mapping):
        raise TypeError(
            f"{name} must be a mapping (a config.json read as a dict) or a transformers config object, "
            f"got {show_value(config)} of type {type(config).__name__}"
        )
    return dict(config)


def _get(config: dict, key: str, default=None):
    for alias in _ALIASES.get(key, (key,)):
        if config.get(alias) is not None:
            return alias, config[alias]
    return key, default


def _number(name: str, value, **bounds) -> float:
    return check_real(name, value, **bounds)


def _integer(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, float) and value.is_integer():  # JSON writers sometimes store 4096.0
        value = int(value)
    return check_int(name, value, minimum=minimum)


def _head_dim(config: dict) -> int:
    if config.get("qk_rope_head_dim") is not None:  # DeepSeek MLA: only this part rotates
        return _integer("config['qk_rope_head_dim']", config["qk_rope_head_dim"], minimum=2)
    if config.get("head_dim") is not None:
        return _integer("config['head_dim']", config["head_dim"], minimum=2)
    hidden_key, hidden = _get(config, "hidden_size")
    heads_key, heads = _get(config, "num_attention_heads")
    if hidden is None or heads is None:
        missing = "hidden_size" if hidden is None else "num_attention_heads"
        raise ValueError(f"config needs 'head_dim', or 'hidden_size' and 'num_attention_heads'; '{missing}' is missing")
    hidden = _integer(f"config['{hidden_key}']", hidden)
    heads = _integer(f"config['{heads_key}']", heads)
    if hidden % heads:
        raise ValueError(
            f"config['{hidden_key}'] ({hidden}) must be a multiple of config['{heads_key}'] ({heads}) "
            "when head_dim is not given"
        )
    return hidden // heads


def _partial_factor(config: dict, params: Mapping, head_dim: int) -> tuple[float, str]:
    """(partial_rotary_factor, the field it came from); rope parameters take priority, as in transformers."""
    for where, mapping, key in (
        ("rope parameters", params, "partial_rotary_factor"),
        ("config", config, "partial_rotary_factor"),
        ("config", config, "rotary_pct"),
    ):
        if mapping.get(key) is not None:
            name = f"{where}['{key}']" if where == "config" else f"rope_parameters['{key}']"
            value = _number(name, mapping[key])
            if not 0.0 < value <= 1.0:
                raise ValueError(f"{name} must be in (0, 1] (the fraction of head_dim that rotates), got {value}")
            return value, name
    if config.get("rotary_dim") is not None:  # GPT-J and Phi-1/2 give the rotated dimensions directly
        rotary = _integer("config['rotary_dim']", config["rotary_dim"], minimum=2)
        if rotary > head_dim:
            raise ValueError(f"config['rotary_dim'] must be <= head_dim ({head_dim}), got {rotary}")
        return rotary / head_dim, "config['rotary_dim']"
    return 1.0, "partial_rotary_factor"


def _rope_parameters(config: dict, layer_types: list[str]) -> dict[str, dict | None]:
    """Rope parameters per layer type, each a flat dict with rope_type and rope_theta (None: NoPE)."""
    nested = None
    source = None
    for key in ("rope_parameters", "rope_scaling"):
        value = config.get(key)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise TypeError(f"config['{key}'] must be a mapping or null, got {show_value(value)}")
        source = key
        if any(kind in value for kind in set(layer_types)):
            nested = {kind: (None if value.get(kind) is None else dict(value[kind])) for kind in value}
        break
    scaling = dict(config[source]) if source and nested is None else {}
    per_type: dict[str, dict | None] = {}
    gemma_local = config.get("rope_local_base_freq")
    global_theta = config.get("global_rope_theta")
    for kind in dict.fromkeys(layer_types):
        if nested is not None:
            if kind not in nested:
                raise ValueError(
                    f"config['{source}'] is nested by layer type but has no entry for {kind!r} "
                    f"(it has {sorted(nested)})"
                )
            per_type[kind] = nested[kind]
            continue
        params = dict(scaling)
        sliding = kind == "sliding_attention"
        if gemma_local is not None:  # Gemma 3 legacy: rope_scaling only for the global layers
            theta_key = "rope_local_base_freq" if sliding else "rope_theta"
            if sliding:
                params = {}
        elif global_theta is not None or config.get("local_rope_theta") is not None:  # ModernBERT legacy
            theta_key = "local_rope_theta" if sliding else "global_rope_theta"
        else:
            theta_key = "rotary_emb_base" if config.get("rope_theta") is None else "rope_theta"
        if params.get("rope_theta") is None:
            if config.get(theta_key) is None:
                raise ValueError(
                    f"config has no RoPE base for {kind} layers: expected 'rope_theta' (or "
                    f"rope_parameters['rope_theta']; '{theta_key}' here). transformers' default is 10000.0; "
                    "a model with learned, ALiBi or relative positions has no RoPE to read"
                )
            params["rope_theta"] = config[theta_key]
            params["_theta_field"] = f"config['{theta_key}']"
        per_type[kind] = params
    for params in per_type.values():
        if params is not None:
            params.setdefault("_field", source or "rope_parameters")
    return per_type


def _layer_types(config: dict, n_layers: int) -> list[str]:
    if config.get("layer_types") is not None:
        types = config["layer_types"]
        if not isinstance(types, list | tuple) or not all(isinstance(t, str) for t in types):
            raise TypeError(f"config['layer_types'] must be a list of strings, got {show_value(types)}")
        if len(types) != n_layers:
            raise ValueError(f"config['layer_types'] must have one entry per layer ({n_layers}), got {len(types)}")
        return list(types)
    if config.get("sliding_window_pattern") is not None:  # Gemma 3 legacy
        k = _integer("config['sliding_window_pattern']", config["sliding_window_pattern"])
        return ["sliding_attention" if (i + 1) % k else "full_attention" for i in range(n_layers)]
    if config.get("global_attn_every_n_layers") is not None:  # ModernBERT
        k = _integer("config['global_attn_every_n_layers']", config["global_attn_every_n_layers"])
        return ["sliding_attention" if i % k else "full_attention" for i in range(n_layers)]
    return ["full_attention"] * n_layers


def _uses_rope(config: dict, n_layers: int) -> list[bool]:
    if config.get("no_rope_layers") is not None:  # 1 = RoPE, 0 = NoPE (Llama 4, SmolLM3)
        flags = config["no_rope_layers"]
        if not isinstance(flags, list | tuple) or not all(f in (0, 1) and not isinstance(f, float) for f in flags):
            raise TypeError(f"config['no_rope_layers'] must be a list of 0 and 1 (1 = RoPE), got {show_value(flags)}")
        if len(flags) < n_layers:
            raise ValueError(f"config['no_rope_layers'] must cover every layer ({n_layers}), got {len(flags)}")
        return [bool(f) for f in flags[:n_layers]]
    if config.get("no_rope_layer_interval") is not None:
        k = _integer("config['no_rope_layer_interval']", config["no_rope_layer_interval"])
        return [(i + 1) % k != 0 for i in range(n_layers)]
    return [True] * n_layers


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
        return _integer(f"{field_name}['original_max_position_embeddings']", params["original_max_position_embeddings"])
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


def _layer_rope(kind: str, params: dict, config: dict, head_dim: int, seq_len: int | None) -> dict:
    """inv_freq, attention factor and the rest for one layer type."""
    field_name = params.pop("_field")
    theta_field = params.pop("_theta_field", f"{field_name}['rope_theta']")
    rope_type = params.get("rope_type", params.get("type")) or "default"
    if not isinstance(rope_type, str):
        raise TypeError(f"{field_name}['rope_type'] must be a string, got {show_value(rope_type)}")
    methods = {name: f.spec for f in SCALING_METHODS.values() for name in f.spec.config_names}
    if rope_type not in methods:
        raise ValueError(f"{field_name}['rope_type'] must be one of {sorted(methods)}, got {rope_type!r}")
    spec = methods[rope_type]
    base = _number(theta_field, params["rope_theta"], strictly_above=1.0)
    factor, p_name = _partial_factor(config, params, head_dim)
    rotary_dim = head_dim if spec.partial_rotary else int(head_dim * factor)  # p-RoPE zeroes the slow pairs
    if rotary_dim < 2 or rotary_dim % 2:
        raise ValueError(
            f"{p_name} gives rotary_dim = int({head_dim} * {factor}) = {rotary_dim}; it must be even and >= 2 "
            "(dimensions rotate in pairs)"
        )
    mrope = params.get("mrope_section")
    if mrope is not None:
        if not isinstance(mrope, list | tuple) or not all(
            isinstance(m, numbers.Integral) and not isinstance(m, bool) and m >= 0 for m in mrope
        ):
            raise TypeError(
                f"{field_name}['mrope_section'] must be a list of non-negative integers, got {show_value(mrope)}"
            )
        if sum(mrope) != rotary_dim // 2:
            raise ValueError(
                f"{field_name}['mrope_section'] must sum to the number of rotated pairs ({rotary_dim // 2}), "
                f"got {list(mrope)} (sum {sum(mrope)})"
            )
        mrope = tuple(int(m) for m in mrope)
    elif rope_type == "mrope":
        raise ValueError(f"rope_type 'mrope' needs {field_name}['mrope_section'], which is missing")
    scale, original, extra = _method_arguments(spec, params, config, field_name, seq_len)
    if spec.partial_rotary:
        extra["partial_rotary_factor"] = factor
    try:
        inv_freq, attention_factor = scaled_inv_freq(spec.name, rotary_dim, base, scale, original, **extra)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{field_name} (rope_type {rope_type!r}) for {kind} layers: {error}") from error
    inv_freq = np.array(inv_freq, dtype=np.float64)
    inv_freq.setflags(write=False)
    return dict(
        rope_type=rope_type,
        base=base,
        rotary_dim=rotary_dim,
        inv_freq=inv_freq,
        attention_factor=float(attention_factor),
        mrope_section=mrope,
    )


def from_config(config, seq_len: int | None = None) -> list[LayerPositions]:
    """The position settings of every layer of a model, read from its Hugging Face-style config.

    Parameters
    ----------
    config : dict
        The model's ``config.json`` as a dict (legacy ``rope_theta`` + ``rope_scaling``, or
        ``rope_parameters``), a ``transformers`` ``PretrainedConfig`` (read through
        ``to_dict()``), or a :data:`posenc.MODELS` entry's ``.config``. A multimodal config
        is read through its ``text_config``. Fields read: ``num_hidden_layers``; ``head_dim``
        (else ``hidden_size / num_attention_heads``; DeepSeek's ``qk_rope_head_dim``);
        ``partial_rotary_factor`` (or GPT-NeoX's ``rotary_pct``, GPT-J's ``rotary_dim``);
        ``max_position_embeddings``; ``original_max_position_embeddings``; the layer
        pattern fields listed in the docstring of the ``posenc.config`` module.
    seq_len : int, optional
        The current sequence length, for the methods that depend on it: "dynamic"
        (default ``max_position_embeddings``, as in ``transformers``) and "longrope" (the
        long factors once ``seq_len > original_max_position_embeddings``).

    Returns
    -------
    list of :class:`posenc.config.LayerPositions`
        One per layer: ``inv_freq`` (float64, one per rotated pair) and ``attention_factor``
        as :func:`posenc.scaled_inv_freq` computes them for that layer's rope parameters
        (``transformers``' ``ROPE_INIT_FUNCTIONS`` give the same numbers in float32),
        ``rotary_dim = int(head_dim * partial_rotary_factor)``, ``rope`` False for a NoPE layer.

    Unknown rope types and inconsistent or missing values raise a ``ValueError`` or
    ``TypeError`` naming the config field.
    """
    from .models import ModelEntry

    if isinstance(config, ModelEntry):
        if config.scheme != "rope":
            raise ValueError(f"config is {config.name!r}, a model with {config.scheme!r} positions: it has no RoPE")
        config = config.config
    config = _as_dict(config)
    if config.get("num_hidden_layers") is None and isinstance(config.get("text_config"), Mapping):
        config = dict(config["text_config"])
    if seq_len is not None:
        seq_len = check_int("seq_len", seq_len, minimum=1)
    layers_key, n_layers = _get(config, "num_hidden_layers")
    if n_layers is None:
        raise ValueError("config needs 'num_hidden_layers' (the number of layers), which is missing")
    n_layers = _integer(f"config['{layers_key}']", n_layers, minimum=0)
    layer_types = _layer_types(config, n_layers)
    uses_rope = _uses_rope(config, n_layers)
    head_dim = _head_dim(config)
    per_type = _rope_parameters(config, layer_types) if any(uses_rope) else {}
    computed = {
        kind: None if p is None else _layer_rope(kind, p, config, head_dim, seq_len) for kind, p in per_type.items()
    }

    temperature = None
    if config.get("attn_temperature_tuning"):
        floor_scale = _number("config['floor_scale']", config.get("floor_scale", 8192.0), positive=True)
        attn_scale = _number("config['attn_scale']", config.get("attn_scale", 0.1), minimum=0.0)
        temperature = (floor_scale, attn_scale)
    logn = None
    if config.get("use_logn_attn"):
        if config.get("seq_length") is None:
            raise ValueError(
                "config['use_logn_attn'] needs config['seq_length'] (the trained length), which is missing"
            )
        logn = _integer("config['seq_length']", config["seq_length"], minimum=2)

    empty = np.zeros(0, dtype=np.float64)
    empty.setflags(write=False)
    result = []
    for i, (kind, rope) in enumerate(zip(layer_types, uses_rope, strict=True)):
        settings = computed.get(kind) if rope else None
        if settings is None:
            result.append(
                LayerPositions(
                    layer=i,
                    layer_type=kind,
                    rope=False,
                    rope_type=None,
                    base=None,
                    head_dim=head_dim,
                    rotary_dim=0,
                    inv_freq=empty,
                    temperature_tuning=temperature,
                    logn_length=logn,
                )
            )
        else:
            result.append(
                LayerPositions(layer=i, layer_type=kind, rope=True, head_dim=head_dim, logn_length=logn, **settings)
            )
    return result
