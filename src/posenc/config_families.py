"""How each model family reads its config, layer by layer: defaults, layer patterns, which layers rotate.

A ``config.json`` means what its model's code does with it. :func:`posenc.config_families.read_family` maps a
config to one
``LayerPlan`` per layer (what mixes the tokens there, which rope parameters it rotates with, if any,
the head size the rotation sees, per-layer facts such as query scales) and the rope parameters per key,
following the reference library (``transformers`` 5.23) for the config's ``model_type``:

* **class defaults**: a field the config leaves out takes the configuration class's default, read from
  ``posenc._family_defaults.TABLE`` (generated from the library's ``configuration_*.py`` classes and
  checked against them by the tests);
* **the generic reading**: what the library's base classes do (``PreTrainedConfig`` and
  ``RotaryEmbeddingConfigMixin.convert_rope_params_to_dict`` / ``standardize_rope_params`` in
  ``modeling_rope_utils.py``): a legacy ``rope_scaling`` wins over ``rope_parameters``; the config's
  ``rope_theta`` (else the class's ``default_theta``) and ``partial_rotary_factor`` (else the class's) fill
  in what the rope parameters leave out; ``original_max_position_embeddings`` at the top level wins over
  the rope parameters' own; rope parameters nested by layer type are read per type (an entry ``null``:
  those layers do not rotate); every softmax-attention layer rotates, with ``head_dim`` (else
  ``hidden_size // num_attention_heads``);
* **family rules** (``FAMILIES``): what a family's ``modeling_*.py`` / ``configuration_*.py`` do
  differently, each naming its file: the layer pattern a config without ``layer_types`` gets, attention
  layers that skip the rotation (NoPE), layers that are linear attention, convolution, state space or
  cross-attention (no positions), legacy fields, the head size that rotates, M-RoPE, query scales.

A ``model_type`` neither the table nor the rules know (or none) is read with the generic reading plus the
legacy fields configs of earlier years use (``rotary_emb_base``, ``rotary_pct``, ``rotary_dim``,
``rope_local_base_freq`` + ``sliding_window_pattern``, ``global_rope_theta`` / ``local_rope_theta``,
``no_rope_layers``), and the reading carries a one-line note saying so.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ._family_defaults import TABLE, TEXT_MODEL_TYPES
from ._validation import check_int, show_value

__all__ = ["FAMILIES", "MIXERS", "Family", "FamilyReading", "LayerPlan", "read_family", "text_model_type"]

#: What mixes the tokens in a layer, by layer type name; a layer type not listed is softmax attention.
MIXERS = {
    "linear_attention": "linear attention",
    "conv": "convolution",
    "mamba": "state space",
    "recurrent": "recurrence",
    "cross_attention": "cross-attention",
}

_TF = "transformers src/transformers/models/{0}/{1}_{0}.py"


def _modeling(name: str, detail: str = "") -> str:
    return _TF.format(name, "modeling") + (f" ({detail})" if detail else "")


def _configuration(name: str, detail: str = "") -> str:
    return _TF.format(name, "configuration") + (f" ({detail})" if detail else "")


@dataclass(frozen=True)
class LayerPlan:
    """One layer as its model runs it, before the rotation speeds are computed."""

    layer_type: str
    mixer: str  # "attention" (softmax attention over the sequence) or a value of MIXERS
    rope_key: str | None  # key into FamilyReading.rope; None: this layer does not rotate
    head_dim: int  # the head size the rotation sees (0 where there is no attention)
    extras: Mapping = field(default_factory=dict)  # fields of LayerPositions: window, query scales, M-RoPE, ...


@dataclass(frozen=True)
class FamilyReading:
    """What :func:`posenc.config_families.read_family` found: layers, rope parameters per key, defaults filled in."""

    model_type: str | None
    family: str  # which rules read it: the model_type, or "generic"
    layers: list[LayerPlan]
    rope: dict  # key -> flat rope parameters (rope_type, rope_theta, ...; "_field" names where they were read)
    config: dict  # the config with the class defaults filled in
    note: str | None = None  # set when the model_type is unknown


@dataclass(frozen=True)
class Family:
    """One family's rules; each hook is optional (None: the generic reading).

    * ``layer_types(config, given) -> list``: the layer types (``given``: the config's ``layer_types``, or None);
    * ``rope_parameters(config, raw, layer_types, entry) -> (params, field) or None``: the rope parameters,
      flat or nested by layer type, where the family converts legacy fields its own way (None: generic);
    * ``mixer(config, i, layer_type) -> str``: what mixes the tokens, where the layer type does not say;
    * ``rotates(config, i, layer_type) -> bool``: whether attention layer ``i`` applies the rotation;
    * ``head_dim(config, layer_type) -> int``: the head size the rotation sees;
    * ``extras(config, i, layer_type, params) -> dict``: per-layer facts (``params``: the layer's rope parameters);
    * ``mrope``: ``(default mrope_section, interleaved, layout)`` for a family whose rotary class is M-RoPE;
    * ``layout(config) -> str``: "half" (``rotate_half``, pairs ``(i, i + d/2)``) or "interleaved" (pairs
      ``(2i, 2i + 1)``: ``rotate_every_two``, the complex form, or a de-interleaving ``apply_rotary_pos_emb``).
    """

    source: str
    layer_types: Callable | None = None
    rope_parameters: Callable | None = None
    mixer: Callable | None = None
    rotates: Callable | None = None
    head_dim: Callable | None = None
    extras: Callable | None = None
    mrope: tuple | None = None
    layout: Callable | None = None


def interleaved(config) -> str:
    return "interleaved"


# --- small readers ---------------------------------------------------------------------------------


def _int_field(config: Mapping, key: str, minimum: int = 1) -> int:
    value = config[key]
    if isinstance(value, float) and value.is_integer():  # JSON writers sometimes store 4096.0
        value = int(value)
    return check_int(f"config['{key}']", value, minimum=minimum)


def n_layers(config: Mapping) -> int:
    """``num_hidden_layers`` (or GPT-2-style ``n_layer``, ``n_layers``, ``num_layers``)."""
    for key in ("num_hidden_layers", "n_layer", "n_layers", "num_layers"):
        if config.get(key) is not None:
            return _int_field(config, key, minimum=0)
    raise ValueError("config needs 'num_hidden_layers' (the number of layers), which is missing")


def _first(config: Mapping, keys) -> str | None:
    return next((k for k in keys if config.get(k) is not None), None)


def generic_head_dim(config: Mapping, layer_type: str | None = None) -> int:
    """``head_dim``, else ``hidden_size // num_attention_heads`` (as the library's rope init functions)."""
    if config.get("head_dim"):
        return _int_field(config, "head_dim", minimum=2)
    hidden_key = _first(config, ("hidden_size", "n_embd", "d_model"))
    heads_key = _first(config, ("num_attention_heads", "n_head", "n_heads", "num_heads"))
    if hidden_key is None or heads_key is None:
        missing = "hidden_size" if hidden_key is None else "num_attention_heads"
        raise ValueError(f"config needs 'head_dim', or 'hidden_size' and 'num_attention_heads'; '{missing}' is missing")
    hidden = _int_field(config, hidden_key)
    heads = _int_field(config, heads_key)
    if hidden % heads:
        raise ValueError(
            f"config['{hidden_key}'] ({hidden}) must be a multiple of config['{heads_key}'] ({heads}) "
            "when head_dim is not given"
        )
    return hidden // heads


def field_head_dim(key: str) -> Callable:
    """The rotation sees ``config[key]`` (DeepSeek's ``qk_rope_head_dim``, JetMoE's ``kv_channels``)."""

    def head_dim(config, layer_type=None):
        if config.get(key) is None:
            raise ValueError(f"config needs '{key}' (the head size that rotates), which is missing")
        return _int_field(config, key, minimum=2)

    return head_dim


def _nested_keys(params: Mapping, layer_types) -> list[str]:
    """As ``nested_rope_parameter_keys``: the keys of ``params`` that are layer types of this config."""
    kinds = set(layer_types)
    return [key for key in params if key in kinds]


def every_kth(full: str, other: str, key: str | None, default: int, offset: int = 1) -> Callable:
    """Layer ``i`` is ``full`` when ``(i + offset) % k == 0``, else ``other``; ``k = config[key]`` or ``default``."""

    def pattern(config):
        k = _int_field(config, key) if key and config.get(key) is not None else default
        return [full if (i + offset) % k == 0 else other for i in range(n_layers(config))]

    return pattern


def no_rope_flags(config: Mapping) -> list[bool] | None:
    """Llama 4 / SmolLM3 ``no_rope_layers`` (1 = RoPE, 0 = NoPE); empty or missing: ``no_rope_layer_interval``.

    As ``configuration_llama4.py``: ``self.no_rope_layers if self.no_rope_layers else default_no_rope_layers``
    with layer ``i`` NoPE when ``(i + 1) % no_rope_layer_interval == 0``.
    """
    n = n_layers(config)
    flags = config.get("no_rope_layers")
    if flags is not None and not isinstance(flags, list | tuple):
        raise TypeError(f"config['no_rope_layers'] must be a list of 0 and 1 (1 = RoPE), got {show_value(flags)}")
    if flags:
        if not all(f in (0, 1) and not isinstance(f, float | str) for f in flags):
            raise TypeError(f"config['no_rope_layers'] must be a list of 0 and 1 (1 = RoPE), got {show_value(flags)}")
        if len(flags) < n:
            raise ValueError(f"config['no_rope_layers'] must cover every layer ({n}), got {len(flags)}")
        return [bool(f) for f in flags[:n]]
    if config.get("no_rope_layer_interval") is not None:
        k = _int_field(config, "no_rope_layer_interval")
        return [(i + 1) % k != 0 for i in range(n)]
    return None


# --- rules shared by several families ------------------------------------------------------------------


def rotates_unless_no_rope(config, i, layer_type) -> bool:
    flags = no_rope_flags(config)
    return True if flags is None else flags[i]


def rotates_on_sliding_with_window(config, i, layer_type) -> bool:
    """``sliding_window = config.sliding_window if sliding else None``; RoPE ``if self.sliding_window is not None``."""
    return layer_type == "sliding_attention" and config.get("sliding_window") is not None


def rotates_unless_windowed_full(config, i, layer_type) -> bool:
    """``if self.sliding_window is None or self.is_sliding: apply_rotary_pos_emb``."""
    return config.get("sliding_window") is None or layer_type == "sliding_attention"


def rotates_on_sliding(config, i, layer_type) -> bool:
    """``if self.is_local_attention: apply_rotary_pos_emb``."""
    return layer_type == "sliding_attention"


def never_rotates(config, i, layer_type) -> bool:
    return False


def legacy_nested(scaled: tuple[str, ...], full_key: str | None, local_key: str | None) -> Callable:
    """Gemma 3 / Olmo 3 / ModernBERT ``convert_rope_params_to_dict``: legacy fields into rope parameters per layer type.

    Without ``rope_parameters`` the class starts from ``{"sliding_attention": {"rope_type": "default"},
    "full_attention": {"rope_type": "default"}}`` and updates the entries in ``scaled`` with a legacy
    ``rope_scaling`` (Gemma 3 and Olmo 3: full attention only; ModernBERT: both). The full layers' base
    is ``config[full_key]`` and the sliding layers' ``config[local_key]``, each else the class default
    (Olmo 3 pops ``rope_theta`` for the full layers, so its sliding layers keep the class default:
    ``local_key`` None). With ``rope_parameters`` given, the same fields fill in missing bases.
    """

    def convert(config, raw, layer_types, entry):
        thetas = entry["default_theta"] if entry else 10000.0
        full_default = thetas["global"] if isinstance(thetas, Mapping) else thetas
        local_default = thetas["local"] if isinstance(thetas, Mapping) else thetas
        source = "rope_parameters"
        if raw.get("rope_parameters") is not None:
            if not isinstance(raw["rope_parameters"], Mapping):
                raise TypeError(
                    f"config['rope_parameters'] must be a mapping or null, got {show_value(raw['rope_parameters'])}"
                )
            params = copy.deepcopy(dict(raw["rope_parameters"]))
            if not _nested_keys(params, ("full_attention", "sliding_attention")):
                return None  # a flat dict: the generic reading
        else:
            params = {"sliding_attention": {"rope_type": "default"}, "full_attention": {"rope_type": "default"}}
        if raw.get("rope_scaling") is not None and raw.get("rope_parameters") is None:
            scaling = raw["rope_scaling"]
            if not isinstance(scaling, Mapping):
                raise TypeError(f"config['rope_scaling'] must be a mapping or null, got {show_value(scaling)}")
            for kind in scaled:
                params[kind].update(copy.deepcopy(dict(scaling)))
            source = "rope_scaling"
        for kind, key, default in (
            ("full_attention", full_key, full_default),
            ("sliding_attention", local_key, local_default),
        ):
            if params.get(kind) is None or "rope_theta" in params[kind]:
                continue
            value = raw.get(key) if key else None
            params[kind]["rope_theta"] = default if value is None else value
            params[kind]["_theta_field"] = f"config['{key}']" if value is not None else "the class default_theta"
        return params, source

    return convert


def legacy_aliases(theta_key: str | None, partial_key: str | None, partial_default: float | None) -> Callable:
    """GPT-NeoX's ``convert_rope_params_to_dict``: ``rotary_emb_base`` is the base, ``rotary_pct`` the partial."""

    def convert(config, raw, layer_types, entry):
        source = "rope_scaling" if raw.get("rope_scaling") else "rope_parameters"
        params = raw.get("rope_scaling") or raw.get("rope_parameters") or {}
        if not isinstance(params, Mapping):
            raise TypeError(f"config['{source}'] must be a mapping or null, got {show_value(params)}")
        params = copy.deepcopy(dict(params))
        default_theta = entry["default_theta"] if entry else 10000.0
        if theta_key is not None and "rope_theta" not in params:
            params["rope_theta"] = raw.get(theta_key, default_theta)
            if raw.get(theta_key) is not None:
                params["_theta_field"] = f"config['{theta_key}']"
        if partial_key is not None and "partial_rotary_factor" not in params:
            value = raw.get(partial_key, partial_default)
            if value is not None:
                params["partial_rotary_factor"] = value
                if raw.get(partial_key) is not None:
                    params["_partial_field"] = f"config['{partial_key}']"
        return params, source

    return convert


def _query_scale_llama4(config, i, layer_type, params):
    """Llama 4: ``attn_temperature_tuning`` multiplies the NoPE layers' queries (``Llama4TextAttention``)."""
    flags = no_rope_flags(config)
    rope = True if flags is None else flags[i]
    extras = {}
    if layer_type == "chunked_attention" and config.get("attention_chunk_size") is not None:
        extras["attention_chunk_size"] = _int_field(config, "attention_chunk_size")
    if config.get("attn_temperature_tuning") and not rope:
        extras["temperature_tuning"] = (float(config.get("floor_scale", 8192.0)), float(config.get("attn_scale", 0.1)))
    return extras


def _query_scale_llama_4_beta(config, i, layer_type, params):
    """Ministral 3 / Mistral 4: ``query_states * get_llama_4_attn_scale(position_ids, beta, original_max_pos)``."""
    if params is None:
        return {}
    beta = params.get("llama_4_scaling_beta")
    length = params.get("original_max_position_embeddings")
    if beta is None or length is None:
        return {}
    return {"llama_4_scaling": (float(beta), int(length))}


def _deepseek_softmax(config, i, layer_type, params):
    """DeepSeek V2/V3 ``yarn_apply_mscale``: softmax scale times ``mscale(s, mscale_all_dim)**2``.

    Applied when the rope type is not "default" and ``mscale_all_dim`` is set (non-zero); ``mscale(s, m) =
    0.1 m ln(s) + 1`` for ``s > 1``, else 1 (``yarn_get_mscale``).
    """
    if params is None or params.get("rope_type", "default") == "default":
        return {}
    all_dim = params.get("mscale_all_dim") or 0
    factor = params.get("factor")
    if not all_dim or factor is None:
        return {}
    mscale = 1.0 if factor <= 1 else 0.1 * all_dim * math.log(factor) + 1.0
    return {"softmax_scale": mscale * mscale}


def _combine(*hooks) -> Callable:
    def extras(config, i, layer_type, params):
        out = {}
        for hook in hooks:
            out.update(hook(config, i, layer_type, params))
        return out

    return extras


def _window(config, i, layer_type, params):
    """A sliding-attention layer's window (``config.sliding_window``), as the masks of the library use it."""
    if layer_type == "sliding_attention" and config.get("sliding_window") is not None:
        return {"sliding_window": _int_field(config, "sliding_window")}
    return {}


def _logn(config, i, layer_type, params):
    """Qwen-1 ``use_logn_attn``: every layer scales its queries by ``log_L(p + 1)`` past ``L = seq_length``."""
    if not config.get("use_logn_attn"):
        return {}
    if config.get("seq_length") is None:
        raise ValueError("config['use_logn_attn'] needs config['seq_length'] (the trained length), which is missing")
    return {"logn_length": _int_field(config, "seq_length", minimum=2)}


# --- the families -----------------------------------------------------------------------------------

#: model_type -> the rules that differ from the generic reading (see :class:`posenc.config_families.Family`).
FAMILIES: dict[str, Family] = {}


def _register(names, family: Family) -> None:
    for name in names:
        FAMILIES[name] = family


def _pattern(function: Callable) -> Callable:
    """A layer pattern used only when the config gives no ``layer_types``."""

    def layer_types(config, given):
        return given if given is not None else function(config)

    return layer_types


def _llama4_types(config, given):
    if given is not None:
        return given
    return [
        "chunked_attention" if rope else "full_attention"
        for rope in (no_rope_flags(config) or [True] * n_layers(config))
    ]


def _gemma4_types(config, given):
    """Gemma 4: 5 sliding : 1 full when not given, and the last layer is always full attention."""
    k = int(config.get("_pattern", 6))
    types = list(given) if given is not None else every_kth("full_attention", "sliding_attention", None, k)(config)
    if types:
        types[-1] = "full_attention"
    return types


def _gemma4_head_dim(config, layer_type=None):
    """Gemma 4's full-attention layers use ``global_head_dim`` (default 512), unless ``per_layer_config`` says."""
    if layer_type == "full_attention" and "per_layer_config" not in config:
        return int(config.get("global_head_dim") or 512)
    return generic_head_dim(config, layer_type)


def _exaone_types(config, given):
    if given is not None:
        return given
    if config.get("sliding_window") is None:
        return ["full_attention"] * n_layers(config)
    pattern = config.get("sliding_window_pattern", 4)
    if isinstance(pattern, str):  # "LLLG": L local, G global, repeated
        return [
            "full_attention" if pattern[i % len(pattern)] == "G" else "sliding_attention"
            for i in range(n_layers(config))
        ]
    return every_kth("full_attention", "sliding_attention", "sliding_window_pattern", 4)(config)


def _cohere2_moe_types(config, given):
    if given is not None:
        return given
    first = int(config.get("first_k_dense_replace") or 0)
    prefix_k = int(config.get("prefix_dense_sliding_window_pattern") or 4)
    k = int(config.get("sliding_window_pattern") or 4)
    prefix = ["sliding_attention" if (i + 1) % prefix_k else "full_attention" for i in range(first)]
    rest = ["sliding_attention" if (i + 1) % k else "full_attention" for i in range(n_layers(config) - first)]
    return prefix + rest


def _cohere2_moe_rotates(config, i, layer_type):
    """``self.sliding_window is not None or self.force_rope`` (dense prefix layers with pattern 1 always rotate)."""
    first = int(config.get("first_k_dense_replace") or 0)
    mlp = config.get("mlp_layer_types")
    dense = mlp[i] == "dense" if mlp else i < first
    force = dense and config.get("prefix_dense_sliding_window_pattern") == 1
    return rotates_on_sliding_with_window(config, i, layer_type) or force


def _recurrent_gemma_types(config, given):
    if given is not None:
        return given
    blocks = list(config.get("block_types") or ("recurrent", "recurrent", "attention"))
    return [blocks[i % len(blocks)] for i in range(n_layers(config))]


def _olmo_hybrid_types(config, given):
    if given is not None:
        return given
    n = n_layers(config)
    types = ["full_attention" if i % 4 == 3 else "linear_attention" for i in range(n)]
    if n and "full_attention" not in types:
        types[-1] = "full_attention"
    return types


def _muse_rotates(config, i, layer_type):
    """MuSE: ``layer_rope_theta[i] == 0`` marks a NoPE layer (default: every 4th counted back from the last)."""
    thetas = config.get("layer_rope_theta")
    if thetas is None:
        return (n_layers(config) - 1 - i) % 4 != 0
    return bool(thetas[i])


def _mllama_mixer(config, i, layer_type):
    layers = config.get("cross_attention_layers")
    if layers is None:
        layers = [3, 8, 13, 18, 23, 28, 33, 38]
    return "cross-attention" if i in layers else MIXERS.get(layer_type, "attention")


def _rope_interleave(config) -> str:
    """DeepSeek-style: ``rope_interleave`` (default True) de-interleaves q and k before ``rotate_half``."""
    return "interleaved" if config.get("rope_interleave", True) else "half"


def _direction_reversed(config, i, layer_type, params):
    """NanoChat's ``rotate_half`` returns ``cat(x2, -x1)``: every pair turns the other way."""
    return {"direction": -1}


def _rotates_unless_no_rope_every_4th(config, i, layer_type) -> bool:
    """Mistral Large 4: ``no_rope_layers`` (1 = RoPE), else NoPE every ``no_rope_layer_interval`` (default 4)."""
    flags = no_rope_flags({**config, "no_rope_layer_interval": config.get("no_rope_layer_interval", 4)})
    return flags[i]


_GEMMA_LIKE = ("rope_theta", "rope_local_base_freq")

_register(
    ["llama4_text"],
    Family(
        source=_configuration("llama4", "no_rope_layers, no_rope_layer_interval 4, attention_chunk_size 8192")
        + "; "
        + _modeling("llama4", "Llama4TextAttention: use_rope; NoPE layers attend globally, attn_temperature_tuning"),
        layer_types=_llama4_types,
        rotates=rotates_unless_no_rope,
        extras=_query_scale_llama4,
        layout=interleaved,
    ),
)
_register(
    ["smollm3"],
    Family(source=_modeling("smollm3", "use_rope = no_rope_layers[layer_idx]"), rotates=rotates_unless_no_rope),
)
_register(
    ["cohere"],
    Family(source=_modeling("cohere", "rotate_half pairs (2i, 2i+1)"), layout=interleaved),
)
_register(
    ["cohere2"],
    Family(
        source=_modeling("cohere2", "Cohere2Attention: RoPE only where sliding_window is set; pairs (2i, 2i+1)")
        + "; "
        + _configuration("cohere2", "sliding_window_pattern 4"),
        layer_types=_pattern(every_kth("full_attention", "sliding_attention", "sliding_window_pattern", 4)),
        rotates=rotates_on_sliding_with_window,
        extras=_window,
        layout=interleaved,
    ),
)
_register(
    ["cohere2_moe"],
    Family(
        source=_modeling("cohere2_moe", "RoPE where sliding_window is set, or force_rope on a dense prefix")
        + "; "
        + _configuration("cohere2_moe", "prefix_dense_sliding_window_pattern, sliding_window_pattern"),
        layer_types=_cohere2_moe_types,
        rotates=_cohere2_moe_rotates,
        extras=_window,
        layout=interleaved,
    ),
)
for _name in ("exaone4", "exaone_moe"):
    _register(
        [_name],
        Family(
            source=_modeling(_name, "no RoPE on the full-attention layers of a windowed model"),
            layer_types=_exaone_types,
            rotates=rotates_unless_windowed_full,
            extras=_window,
        ),
    )
_register(
    ["kolibri1"],
    Family(
        source=_modeling("kolibri1", "no RoPE on the full-attention layers of a windowed model"),
        layer_types=_pattern(every_kth("full_attention", "sliding_attention", None, 5)),
        rotates=rotates_unless_windowed_full,
        extras=_window,
    ),
)
_register(
    ["flint"],
    Family(
        source=_modeling("flint", "RoPE only where sliding_window is set"),
        layer_types=_pattern(
            lambda c: [
                "full_attention" if i < 2 or i % 4 == 1 or i == n_layers(c) - 1 else "sliding_attention"
                for i in range(n_layers(c))
            ]
        ),
        rotates=rotates_on_sliding_with_window,
        extras=_window,
    ),
)
_register(
    ["afmoe"],
    Family(
        source=_modeling("afmoe", "AfmoeAttention: RoPE on the local layers only"),
        layer_types=_pattern(every_kth("full_attention", "sliding_attention", "global_attn_every_n_layers", 4)),
        rotates=rotates_on_sliding,
        extras=_window,
    ),
)
_register(
    ["gemma3_text"],
    Family(
        source=_configuration("gemma3", "sliding_window_pattern 6; rope_local_base_freq; rope_scaling on full layers"),
        layer_types=_pattern(every_kth("full_attention", "sliding_attention", "sliding_window_pattern", 6)),
        rope_parameters=legacy_nested(("full_attention",), "rope_theta", "rope_local_base_freq"),
        extras=_window,
    ),
)
_register(
    ["gemma4_text", "gemma4_unified_text"],
    Family(
        source=_configuration("gemma4", "5 sliding : 1 full, last layer full; global_head_dim 512 on full layers")
        + "; "
        + _modeling("gemma4", "Gemma4TextRotaryEmbedding: per_layer_config"),
        layer_types=_gemma4_types,
        head_dim=_gemma4_head_dim,
        extras=_window,
    ),
)
_register(
    ["olmo3"],
    Family(
        source=_configuration("olmo3", "convert_rope_params_to_dict: rope_scaling on the full-attention layers only"),
        layer_types=_pattern(every_kth("full_attention", "sliding_attention", None, 4)),
        rope_parameters=legacy_nested(("full_attention",), "rope_theta", None),
        extras=_window,
    ),
)
for _name in ("modernbert", "modernbert-decoder"):
    _register(
        [_name],
        Family(
            source=_configuration(
                _name.replace("-", "_"),
                "global_attn_every_n_layers 3 (layer i global when i % k == 0); "
                "global_rope_theta, local_rope_theta; rope_scaling on both",
            ),
            layer_types=_pattern(
                every_kth("full_attention", "sliding_attention", "global_attn_every_n_layers", 3, offset=0)
            ),
            rope_parameters=legacy_nested(
                ("full_attention", "sliding_attention"), "global_rope_theta", "local_rope_theta"
            ),
        ),
    )
_register(
    ["gpt_neox"],
    Family(
        source=_configuration("gpt_neox", "rotary_emb_base; rotary_pct, default 0.25"),
        rope_parameters=legacy_aliases("rotary_emb_base", "rotary_pct", 0.25),
    ),
)
_register(
    ["gpt_neox_japanese"],
    Family(
        source=_configuration("gpt_neox_japanese", "rotary_emb_base; rotary_pct, default 1.0"),
        rope_parameters=legacy_aliases("rotary_emb_base", "rotary_pct", 1.0),
    ),
)
for _name in ("deepseek_v3", "glm4_moe_lite", "youtu", "axk1"):
    _register(
        [_name],
        Family(
            source=_modeling(_name, "only qk_rope_head_dim rotates; rope_interleave; yarn_apply_mscale on the softmax"),
            head_dim=field_head_dim("qk_rope_head_dim"),
            extras=_deepseek_softmax,
            layout=_rope_interleave,
        ),
    )
for _name in ("deepseek_v32", "glm_moe_dsa", "longcat_flash", "axk2"):
    _register(
        [_name],
        Family(
            source=_modeling(_name, "only qk_rope_head_dim rotates; apply_rotary_pos_emb_interleave"),
            head_dim=field_head_dim("qk_rope_head_dim"),
            extras=_deepseek_softmax,
            layout=interleaved,
        ),
    )
_register(
    ["deepseek_v2"],
    Family(
        source=_modeling("deepseek_v2", "only qk_rope_head_dim rotates, as complex numbers (pairs 2i, 2i+1)"),
        head_dim=field_head_dim("qk_rope_head_dim"),
        extras=_deepseek_softmax,
        layout=interleaved,
    ),
)


def _mla_head_dim(config, layer_type=None):
    """Mistral 4: ``head_dim = qk_nope_head_dim + qk_rope_head_dim``; the partial factor leaves the rope part."""
    return int(config.get("qk_nope_head_dim") or 0) + int(config.get("qk_rope_head_dim") or 0) or generic_head_dim(
        config
    )


def _mla_partial(config, raw, layer_types, entry):
    """``rope_parameters.setdefault("partial_rotary_factor", qk_rope_head_dim / head_dim)``."""
    params, source = generic_rope_parameters(config, raw, layer_types, entry)
    if "partial_rotary_factor" not in params or params.get("_partial_field") == "the class default":
        params["partial_rotary_factor"] = int(config.get("qk_rope_head_dim") or 64) / _mla_head_dim(config)
        params["_partial_field"] = "qk_rope_head_dim / head_dim"
    return params, source


_register(
    ["mistral4"],
    Family(
        source=_modeling("mistral4", "only qk_rope_head_dim rotates; rope_interleave; llama_4_scaling_beta")
        + "; "
        + _configuration("mistral4", "head_dim = qk_nope + qk_rope, partial_rotary_factor = qk_rope / head_dim"),
        head_dim=_mla_head_dim,
        rope_parameters=_mla_partial,
        extras=_combine(_deepseek_softmax, _query_scale_llama_4_beta),
        layout=_rope_interleave,
    ),
)
_register(
    ["mistral_large4_text"],
    Family(
        source=_modeling("mistral_large4", "only qk_rope_head_dim rotates, interleaved; NoPE every 4th layer"),
        head_dim=field_head_dim("qk_rope_head_dim"),
        rotates=_rotates_unless_no_rope_every_4th,
        extras=_combine(_deepseek_softmax, _query_scale_llama_4_beta),
        layout=interleaved,
    ),
)
_register(
    ["ministral3"],
    Family(
        source=_modeling("ministral3", "Ministral3Attention: query * get_llama_4_attn_scale (llama_4_scaling_beta)"),
        extras=_query_scale_llama_4_beta,
    ),
)
for _name in ("ernie4_5", "ernie4_5_moe", "glm", "glm4", "helium", "openai_privacy_filter"):
    _register([_name], Family(source=_modeling(_name, "rotate_half pairs (2i, 2i+1)"), layout=interleaved))
_register(["nanochat"], Family(source=_modeling("nanochat", "rotate_half = cat(x2, -x1)"), extras=_direction_reversed))
_register(
    ["qwen3_next"],
    Family(
        source=_configuration("qwen3_next", "full_attention_interval 4: three linear-attention layers to one"),
        layer_types=_pattern(every_kth("full_attention", "linear_attention", "full_attention_interval", 4)),
    ),
)
for _name in ("qwen3_5_text", "qwen3_5_moe_text"):
    _register(
        [_name],
        Family(
            source=_configuration(_name.removesuffix("_text"), "full_attention_interval 4")
            + "; "
            + _modeling(_name.removesuffix("_text"), "interleaved M-RoPE, default mrope_section [11, 11, 10]"),
            layer_types=_pattern(every_kth("full_attention", "linear_attention", "full_attention_interval", 4)),
            mrope=((11, 11, 10), True, "half"),
        ),
    )
for _name, _section, _interleaved, _layout in (
    ("qwen2_vl_text", (16, 24, 24), False, "half"),
    ("qwen2_5_vl_text", (16, 24, 24), False, "half"),
    ("qwen3_vl_text", (24, 20, 20), True, "half"),
    ("qwen3_vl_moe_text", (24, 20, 20), True, "half"),
):
    _register(
        [_name],
        Family(
            source=_modeling(_name.removesuffix("_text"), "recomposition_frequencies"),
            mrope=(_section, _interleaved, _layout),
        ),
    )
for _name, _layout in (
    ("glm4v_text", "interleaved"),
    ("glm4v_moe_text", "half"),
    ("glm_image_text", "half"),
    ("glm_ocr_text", "interleaved"),
):
    _register(
        [_name],
        Family(
            source=_modeling(_name.removesuffix("_text"), "M-RoPE sections, default [8, 12, 12]"),
            mrope=((8, 12, 12), False, _layout),
            layout=(lambda c, _l=_layout: _l),
        ),
    )
_register(
    ["embedding_gemma2_text"],
    Family(
        source=_configuration("embedding_gemma2", "sliding_window_pattern 6, last layer full; global_head_dim 512"),
        layer_types=lambda c, given: _gemma4_types({**c, "_pattern": c.get("sliding_window_pattern", 6)}, given),
        head_dim=_gemma4_head_dim,
        extras=_window,
    ),
)
_register(
    ["neomme"],
    Family(
        source=_configuration("neomme", "layer i full when (i + 1) % 6 == 0 or it is the last"),
        layer_types=_pattern(
            lambda c: [
                "full_attention" if (i + 1) % 6 == 0 or i == n_layers(c) - 1 else "sliding_attention"
                for i in range(n_layers(c))
            ]
        ),
        extras=_window,
    ),
)
_register(
    ["ultrabert"],
    Family(
        source=_configuration("ultrabert", "layer i full when (i + 1) % 3 == 0"),
        layer_types=_pattern(every_kth("full_attention", "sliding_attention", None, 3)),
    ),
)
_register(
    ["minimax"],
    Family(
        source=_configuration("minimax", "layer i linear (lightning) attention when i is odd"),
        layer_types=_pattern(every_kth("linear_attention", "full_attention", None, 2)),
    ),
)
_register(
    ["bailing_hybrid"],
    Family(
        source=_configuration("bailing_hybrid", "layer_group_size 6: the last of each group is full attention")
        + "; "
        + _modeling("bailing_hybrid", "apply_rotary_pos_emb_interleave"),
        layer_types=_pattern(every_kth("full_attention", "linear_attention", "layer_group_size", 6)),
        head_dim=lambda c, t=None: int(c["qk_rope_head_dim"]) if c.get("qk_rope_head_dim") else generic_head_dim(c),
        layout=interleaved,
    ),
)
_register(
    ["olmo_hybrid"],
    Family(
        source=_configuration("olmo_hybrid", "layer i full attention when i % 4 == 3"), layer_types=_olmo_hybrid_types
    ),
)
_register(
    ["recurrent_gemma"],
    Family(
        source=_configuration("recurrent_gemma", "block_types (recurrent, recurrent, attention) repeated"),
        layer_types=_recurrent_gemma_types,
        mixer=lambda c, i, t: "recurrence" if t == "recurrent" else "attention",
    ),
)
for _name in ("muse_spark_text", "muse_glimmer_text"):
    _register(
        [_name],
        Family(
            source=_configuration(_name.removesuffix("_text"), "layer_rope_theta: 0 marks a NoPE layer"),
            rotates=_muse_rotates,
            extras=_window,
        ),
    )
_register(
    ["lfm2", "lfm2_moe"],
    Family(
        source=_configuration("lfm2", "full_attn_idxs: the other layers are short convolutions"),
        layer_types=_pattern(
            lambda c: [
                "full_attention" if i in (c.get("full_attn_idxs") or range(n_layers(c))) else "conv"
                for i in range(n_layers(c))
            ]
        ),
    ),
)
_register(
    ["lfm3"],
    Family(
        source=_configuration("lfm3", "layer i full when i % 4 == 2, sliding when i % 4 == 0 and i > 0, else conv"),
        layer_types=_pattern(
            lambda c: [
                "full_attention" if i % 4 == 2 else "sliding_attention" if i % 4 == 0 and i > 0 else "conv"
                for i in range(n_layers(c))
            ]
        ),
        extras=_window,
    ),
)
_register(
    ["mllama_text_model"],
    Family(source=_modeling("mllama", "cross_attention_layers attend to the image, without RoPE"), mixer=_mllama_mixer),
)
_register(
    ["kimi_linear"],
    Family(source=_modeling("kimi_linear", "MLA with NoPE: no layer rotates"), rotates=never_rotates),
)
_register(
    ["qwen"],
    Family(
        source="Qwen-1 remote code, modeling_qwen.py (QWenAttention: rotary_emb_base, rotary_pct of kv_channels, "
        "use_logn_attn), as stored in alibaba/MNN transformers/llm/export/llm_models/Qwen-1_8B/modeling_qwen.py",
        rope_parameters=legacy_aliases("rotary_emb_base", "rotary_pct", 1.0),
        head_dim=lambda c, t=None: _int_field(c, "kv_channels", 2) if c.get("kv_channels") else generic_head_dim(c),
        extras=_logn,
    ),
)


# --- the generic reading, and the legacy fields of unknown configs ------------------------------------------


def _theta_default(entry, kind: str | None = None) -> float | None:
    """The class's ``default_theta`` ("local" for sliding layers where it has two); None for an unknown family."""
    if not entry:
        return None
    theta = entry["default_theta"]
    if isinstance(theta, Mapping):
        theta = theta.get("local" if kind == "sliding_attention" else "global")
    return 10000.0 if theta is None else theta


def generic_rope_parameters(config: Mapping, raw: Mapping, layer_types, entry) -> tuple[dict, str]:
    """``convert_rope_params_to_dict``: ``rope_scaling or rope_parameters`` (else the class default), then defaults."""
    for key in ("rope_scaling", "rope_parameters"):
        value = raw.get(key)
        if value is not None and not isinstance(value, Mapping):
            raise TypeError(f"config['{key}'] must be a mapping or null, got {show_value(value)}")
    if raw.get("rope_scaling"):
        source = "rope_scaling"
    elif raw.get("rope_parameters") is not None:
        source = "rope_parameters"
    else:
        source = None
    if source is None:
        params = copy.deepcopy(entry["rope_parameters"]) if entry else {}
        source = "rope_parameters"
    else:
        params = copy.deepcopy(dict(raw[source]))
    theta = raw.get("rope_theta")
    partial = raw.get("partial_rotary_factor")
    partial_field = "config['partial_rotary_factor']" if partial is not None else None
    if partial is None and entry:
        partial = entry["partial_default"]
    nested = _nested_keys(params, layer_types)
    for kind, sub in [(k, params[k]) for k in nested] if nested else [(None, params)]:
        if sub is None:
            continue
        if not isinstance(sub, Mapping):
            raise TypeError(f"config['{source}'] entries must be mappings or null, got {show_value(sub)}")
        if "rope_theta" not in sub and (theta is not None or entry):
            sub["rope_theta"] = _theta_default(entry, kind) if theta is None else theta
            sub["_theta_field"] = "config['rope_theta']" if theta is not None else "the class default_theta"
        if partial is not None and "partial_rotary_factor" not in sub:
            sub["partial_rotary_factor"] = partial
            sub["_partial_field"] = partial_field or "the class default"
    return params, source


def _legacy_layer_types(config, given):
    if given is not None:
        return given
    if config.get("sliding_window_pattern") is not None:  # Gemma 3's legacy field
        return every_kth("full_attention", "sliding_attention", "sliding_window_pattern", 6)(config)
    if config.get("global_attn_every_n_layers") is not None:  # ModernBERT: layer i global when i % k == 0
        return every_kth("full_attention", "sliding_attention", "global_attn_every_n_layers", 3, offset=0)(config)
    return ["full_attention"] * n_layers(config)


def _legacy_rope_parameters(config, raw, layer_types, entry):
    if raw.get("rope_local_base_freq") is not None:  # Gemma 3's legacy fields
        return legacy_nested(("full_attention",), "rope_theta", "rope_local_base_freq")(config, raw, layer_types, None)
    if raw.get("global_rope_theta") is not None or raw.get("local_rope_theta") is not None:  # ModernBERT's
        return legacy_nested(("full_attention", "sliding_attention"), "global_rope_theta", "local_rope_theta")(
            config, raw, layer_types, None
        )
    if raw.get("rope_theta") is None and raw.get("rotary_emb_base") is not None:
        params, source = legacy_aliases("rotary_emb_base", None, None)(config, raw, layer_types, entry)
    else:
        params, source = generic_rope_parameters(config, raw, layer_types, entry)
    if not _nested_keys(params, layer_types) and "partial_rotary_factor" not in params:
        if raw.get("rotary_pct") is not None:
            params["partial_rotary_factor"] = raw["rotary_pct"]
            params["_partial_field"] = "config['rotary_pct']"
        elif raw.get("rotary_dim") is not None:  # GPT-J and Phi-1/2 give the rotated dimensions directly
            params["_rotary_dim"] = raw["rotary_dim"]
    return params, source


def _legacy_extras(config, i, layer_type, params):
    extras = {**_window(config, i, layer_type, params), **_logn(config, i, layer_type, params)}
    if config.get("attn_temperature_tuning"):
        flags = no_rope_flags(config)
        if flags is not None and not flags[i]:
            extras["temperature_tuning"] = (
                float(config.get("floor_scale", 8192.0)),
                float(config.get("attn_scale", 0.1)),
            )
    return extras


#: What a config whose model_type is unknown (or missing) is read with.
def _legacy_head_dim(config, layer_type=None):
    if config.get("qk_rope_head_dim") is not None:  # DeepSeek's MLA: only this part rotates
        return _int_field(config, "qk_rope_head_dim", minimum=2)
    return generic_head_dim(config, layer_type)


LEGACY = Family(
    source="the generic reading plus the legacy fields of earlier configs",
    layer_types=_legacy_layer_types,
    head_dim=_legacy_head_dim,
    rope_parameters=_legacy_rope_parameters,
    rotates=rotates_unless_no_rope,
    extras=_legacy_extras,
)
_GENERIC = Family(source="the generic reading (transformers' base classes)", extras=_window)


def _standardize(params: dict, config: Mapping, entry) -> dict:
    """``standardize_rope_params`` for one flat dict: the rope type, the family's default type, the original length."""
    params = dict(params)
    params.setdefault("rope_type", params.get("type", "default"))
    default_type = entry["default_rope_type"] if entry else "default"
    if default_type != "default" and params["rope_type"] == "default":
        params["rope_type"] = default_type
    if params["rope_type"] in ("llama3", "yarn", "longrope") and config.get("original_max_position_embeddings"):
        params["original_max_position_embeddings"] = config["original_max_position_embeddings"]
        params["_original_field"] = "config['original_max_position_embeddings']"
    return params


def text_model_type(model_type: str | None) -> str | None:
    """The family that reads a flat config: a composite type (Qwen2.5-VL's "qwen2_5_vl") means its text model's.

    Older multimodal configs keep the language model's fields at the top level; the reference library
    moves them into its ``text_config`` class (``posenc._family_defaults.TEXT_MODEL_TYPES``).
    """
    if model_type not in TABLE and model_type not in FAMILIES and model_type in TEXT_MODEL_TYPES:
        return TEXT_MODEL_TYPES[model_type]
    return model_type


#: Families whose per-layer reading posenc knows to be incomplete: their configs are read, but the reading
#: carries this note (the family tests in tests/test_config_families.py show each difference).
KNOWN_GAPS: dict[str, str] = {
    "bailing_hybrid": "the full-attention layers' rotation differs from the reference library's",
    "neomme": "the full-attention layers' partial rotation differs from the reference library's",
    "beam": "its full-attention layers run without rotation but with a position-dependent attention scaling",
    "dbrx": "its attention settings live in a nested attn_config that posenc does not read",
    "deepseek_v4": "its compressed-attention layer types are not read",
    "dots3_note_text": "its per-layer configs are not read",
    "diffusion_gemma_text": "its per-layer configs are not read",
}


def read_family(raw: Mapping) -> FamilyReading:
    """The per-layer plan of one (not nested) config, read with its family's rules (see the module docstring)."""
    model_type = raw.get("model_type")
    if model_type is not None and not isinstance(model_type, str):
        raise TypeError(f"config['model_type'] must be a string, got {show_value(model_type)}")
    model_type = text_model_type(model_type)
    entry = TABLE.get(model_type)
    family = FAMILIES.get(model_type)
    note = None
    if family is None and entry is None:
        family, name = LEGACY, "generic"
        what = (
            f"model_type {model_type!r} is not a family posenc knows" if model_type else "the config has no model_type"
        )
        note = f"{what}: read generically (every attention layer rotates; class defaults unknown)"
    elif family is None:
        family, name = _GENERIC, "generic"
    else:
        name = model_type
    if model_type in KNOWN_GAPS:
        note = f"model_type {model_type!r}: {KNOWN_GAPS[model_type]}; this reading may differ from the model's"
    config = {**(entry["fields"] if entry else {}), **dict(raw)}
    n = n_layers(config)
    given = config.get("layer_types")
    if given is not None:
        if not isinstance(given, list | tuple) or not all(isinstance(t, str) for t in given):
            raise TypeError(f"config['layer_types'] must be a list of strings, got {show_value(given)}")
        if len(given) != n:
            raise ValueError(f"config['layer_types'] must have one entry per layer ({n}), got {len(given)}")
        given = list(given)
    layer_types = family.layer_types(config, given) if family.layer_types else given or ["full_attention"] * n

    converted = family.rope_parameters(config, raw, layer_types, entry) if family.rope_parameters else None
    params, source = converted if converted is not None else generic_rope_parameters(config, raw, layer_types, entry)
    nested = _nested_keys(params, layer_types)
    rope: dict = {}
    if nested:
        for key in nested:
            if params[key] is not None:
                rope[key] = {**_standardize(params[key], config, entry), "_field": f"{source}['{key}']"}
    else:
        rope["all"] = {**_standardize(params, config, entry), "_field": source}

    head_dim = family.head_dim or generic_head_dim
    layers = []
    for i, layer_type in enumerate(layer_types):
        mixer = family.mixer(config, i, layer_type) if family.mixer else MIXERS.get(layer_type, "attention")
        key = None
        if mixer == "attention" and (family.rotates(config, i, layer_type) if family.rotates else True):
            if not nested:
                key = "all"
            elif layer_type not in params:
                raise ValueError(
                    f"config['{source}'] is nested by layer type but has no entry for {layer_type!r} "
                    f"(it has {sorted(params)})"
                )
            elif params[layer_type] is not None:
                key = layer_type
        extras = dict(family.extras(config, i, layer_type, rope.get(key)) if family.extras else {})
        if key is not None and family.layout is not None:
            extras["layout"] = family.layout(config)
        size = head_dim(config, layer_type) if mixer == "attention" else 0
        layers.append(LayerPlan(layer_type, mixer, key, size, extras))
    return FamilyReading(model_type, name, layers, rope, config, note)
