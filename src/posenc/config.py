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

import numbers
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from ._config_guard import check_config_limits
from ._config_text import NESTED_TEXT_CONFIGS, _as_dict, _has_layers, _text_config, nested_model_type, text_config
from ._layer_positions import (
    QWEN_LOGN_POSITIONS,
    LayerPositions,
    ModelLayers,
    attention_temperature_scale,
    llama_4_scaling_query_scale,
    logn_attention_scale,
)
from ._validation import check_int, check_real, show_value
from .config_families import read_family
from .scaling import scaled_inv_freq, scaling_spec

__all__ = [
    "NESTED_TEXT_CONFIGS",
    "QWEN_LOGN_POSITIONS",
    "LayerPositions",
    "ModelLayers",
    "attention_temperature_scale",
    "from_config",
    "llama_4_scaling_query_scale",
    "logn_attention_scale",
    "nested_model_type",
    "text_config",
]
_READ_ELSEWHERE = (_as_dict, _has_layers)  # posenc.config._as_dict: the readers of other schemes and the check use it


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
    "rotated_part",
    "stack",
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
    check_config_limits(config, seq_len=seq_len)  # bounded time and memory on any file (posenc._config_guard)
    # non-RoPE position schemes (posenc.config_schemes)
    from .config_schemes import read_scheme

    scheme_reading = read_scheme(config, seq_len, read=from_config)
    if scheme_reading is not None:
        return scheme_reading
    # end of non-RoPE position schemes

    from .models import ModelEntry

    if isinstance(config, ModelEntry):
        if config.scheme != "rope":
            raise ValueError(f"config is {config.name!r}, a model with {config.scheme!r} positions: it has no RoPE")
        config = config.config
    config, nested, renamed = _text_config(config)
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
    return ModelLayers(result, reading.model_type, reading.family, nested, reading.note, reading.config, renamed)
