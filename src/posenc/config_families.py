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
* **class layer patterns**: where a config gives no ``layer_types`` and the family has no rule of its own,
  the pattern the configuration class fills in (``posenc._family_defaults.LAYER_PATTERNS``, generated from the
  classes: Gemma 2 alternates sliding and full layers), and the window on every layer for the models that build
  one sliding mask for all layers (``WINDOW_EVERY_LAYER``: Mistral, Mixtral, StarCoder2, Phi-3, ...);
* **family rules** (``FAMILIES``): what a family's ``modeling_*.py`` / ``configuration_*.py`` do
  differently, each naming its file: the layer pattern a config without ``layer_types`` gets, attention
  layers that skip the rotation (NoPE), layers that are linear attention, convolution, state space or
  cross-attention (no positions), legacy fields, the head size that rotates, M-RoPE, query scales, a base the
  modeling code hard-codes (GPT-J, CodeGen, RoFormer), the stacks of a model that runs several (Dia's and
  Moonshine's encoder and decoder; BLT's patcher, local encoder, global transformer and local decoder).

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

from ._family_defaults import LAYER_PATTERNS, TABLE, TEXT_MODEL_TYPES, WINDOW_EVERY_LAYER
from ._validation import check_int, show_value

__all__ = ["FAMILIES", "MIXERS", "Family", "FamilyReading", "LayerPlan", "read_family", "text_model_type"]

#: Layer types whose attention masks by ``config.sliding_window`` (the reference library's mask functions).
SLIDING_TYPES = ("sliding_attention", "reference_sliding_attention")

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
      ``(2i, 2i + 1)``: ``rotate_every_two``, the complex form, or a de-interleaving ``apply_rotary_pos_emb``);
    * ``stacks(config) -> [(stack, sub_config), ...]``: a model of several stacks of layers (an encoder and a
      decoder, BLT's patcher, local encoder, global transformer and local decoder), in the order the model runs
      them; each ``sub_config`` (with its ``model_type``) is read as a config of its own and its layers carry
      ``stack`` (:attr:`posenc.config.LayerPositions.stack`). A sub-config of the family's own ``model_type`` is
      read with the family's other rules.
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
    stacks: Callable | None = None


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


def _half_local_attention(config, i, layer_type, params):
    """ModernBERT: a local layer sees ``local_attention // 2`` tokens each way (the class's ``sliding_window``)."""
    if layer_type != "sliding_attention" or config.get("local_attention", 128) is None:
        return {}
    return {"sliding_window": _int_field({"local_attention": 128, **config}, "local_attention") // 2}


def _window_on_every_layer(config, i, layer_type, params):
    """Every attention layer masks by ``config.sliding_window`` (one sliding mask for the whole model)."""
    return {"sliding_window": _int_field(config, "sliding_window")} if config.get("sliding_window") else {}


def _attention_window(config, i, layer_type, params):
    """RecurrentGemma: its attention blocks are local, ``attention_window_size`` tokens (the class's sliding_window)."""
    if layer_type == "recurrent":
        return {}
    return {"sliding_window": _int_field({"attention_window_size": 2048, **config}, "attention_window_size")}


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
            extras=_half_local_attention,
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


#: DeepSeek V4's legacy ``compress_ratios`` per layer -> layer type (``configuration_deepseek_v4.py``).
_V4_RATIO_TYPES = {0: "sliding_attention", 4: "compressed_sparse_attention", 128: "heavily_compressed_attention"}
_V4_COMPRESSED = ("compressed_sparse_attention", "heavily_compressed_attention")


def _v4_types(config, given):
    """``layer_types``, else the legacy ``compress_ratios`` (0, 4, 128), else 2 HCA layers, then CSA and HCA in turn."""
    n = n_layers(config)
    if given is None and config.get("compress_ratios") is not None:
        ratios = config["compress_ratios"]
        if not isinstance(ratios, list | tuple) or any(r not in _V4_RATIO_TYPES for r in ratios):
            raise ValueError(
                f"config['compress_ratios'] must be a list of 0, 4 or 128 (one per layer), got {show_value(ratios)}"
            )
        given = [_V4_RATIO_TYPES[r] for r in ratios]
    if given is None:
        interleave = [_V4_COMPRESSED[0] if i % 2 else _V4_COMPRESSED[1] for i in range(max(n - 2, 0))]
        given = [_V4_COMPRESSED[1]] * min(n, 2) + interleave
    if len(given) < n:
        raise ValueError(f"config's layer types must cover every layer ({n}), got {len(given)}")
    return list(given[:n])


def _v4_partial(config) -> tuple[float, str]:
    if config.get("partial_rotary_factor") is not None:
        return config["partial_rotary_factor"], "config['partial_rotary_factor']"
    if config.get("qk_rope_head_dim") is not None:  # the legacy field: qk_rope_head_dim / head_dim
        return _int_field(config, "qk_rope_head_dim", minimum=2) / _int_field(config, "head_dim"), (
            "config['qk_rope_head_dim'] / head_dim"
        )
    return 64 / 512, "the class default (64 / 512)"


def _v4_rope_parameters(config, raw, layer_types, entry):
    """``DeepseekV4Config.__post_init__``: "main" rope for the sliding layers, "compress" for CSA and HCA.

    main: the default rope with ``rope_theta``; compress: the rope parameters given (YaRN in the released
    configs) with ``compress_rope_theta`` (default 160000), ``attention_factor`` 1.0 for YaRN (V4 does not
    multiply cos and sin by YaRN's temperature). Both rotate ``partial_rotary_factor`` of ``head_dim``.
    """
    scaling, source = generic_rope_parameters(config, raw, layer_types, entry)
    partial, partial_field = _v4_partial(config)
    if isinstance(scaling.get("main"), Mapping) and isinstance(scaling.get("compress"), Mapping):
        main, compress = dict(scaling["main"]), dict(scaling["compress"])
    else:
        flat = {k: v for k, v in scaling.items() if k not in ("main", "compress") and not k.startswith("_")}
        if "type" in flat and "rope_type" not in flat:  # standardize_rope_params: the legacy "type" key
            flat["rope_type"] = flat["type"]
        theta = raw.get("rope_theta", entry["default_theta"] if entry else 10000.0)
        main = {"rope_type": "default", "rope_theta": theta, "partial_rotary_factor": partial}
        compress = {**flat, "rope_theta": config.get("compress_rope_theta", 160000.0), "partial_rotary_factor": partial}
        compress.setdefault("rope_type", "default")
        if compress["rope_type"] == "yarn":
            compress.setdefault("attention_factor", 1.0)
        compress["_theta_field"] = (
            "config['compress_rope_theta']" if raw.get("compress_rope_theta") is not None else "the class default"
        )
    for params in (main, compress):
        params.setdefault("partial_rotary_factor", partial)
        params.setdefault("_partial_field", partial_field)
    nested = {"sliding_attention": main, **{kind: compress for kind in _V4_COMPRESSED}}
    return {k: v for k, v in nested.items() if k in layer_types}, source


def _v4_extras(config, i, layer_type, params):
    """Every layer attends through one sliding mask (``sliding_window``); the rope slice is the head's last part."""
    return {"sliding_window": _int_field(config, "sliding_window"), "rotated_part": "trailing"}


_register(
    ["deepseek_v4"],
    Family(
        source=_modeling(
            "deepseek_v4",
            "main rope on sliding layers, compress rope (compress_rope_theta, YaRN) on CSA/HCA; the last "
            "partial_rotary_factor * head_dim dims rotate, in interleaved pairs; one sliding-window mask",
        ),
        layer_types=_v4_types,
        rope_parameters=_v4_rope_parameters,
        extras=_v4_extras,
        layout=interleaved,
    ),
)


def _kimi_linear_types(config, given):
    """``layer_types``, else ``linear_attn_config``'s 1-based ``full_attn_layers`` and ``kda_layers``, else 4th full."""
    if given is not None:
        return given
    n = n_layers(config)
    linear = config.get("linear_attn_config") or {}
    if not isinstance(linear, Mapping):
        raise TypeError(f"config['linear_attn_config'] must be a mapping, got {show_value(linear)}")
    if "full_attn_layers" in linear and "kda_layers" in linear:
        types: list = [None] * n
        for kind, key in (("full_attention", "full_attn_layers"), ("linear_attention", "kda_layers")):
            for layer in linear[key]:
                if not isinstance(layer, int) or not 1 <= layer <= n:
                    raise ValueError(
                        f"config['linear_attn_config']['{key}'] must hold layer numbers 1 .. {n} (1-based), "
                        f"got {show_value(layer)}"
                    )
                types[layer - 1] = kind
        missing = [i + 1 for i, t in enumerate(types) if t is None]
        if missing:
            raise ValueError(
                f"config['linear_attn_config'] names no type for layers {missing[:5]} (1-based): "
                "each layer must be in full_attn_layers or kda_layers"
            )
        return types
    return ["full_attention" if i and i % 4 == 0 else "linear_attention" for i in range(n)]


def _kimi_linear_head_dim(config, layer_type=None):
    """MLA's query-key width, ``qk_nope_head_dim + qk_rope_head_dim`` (class defaults 128 and 64)."""
    widths = {"qk_nope_head_dim": 128, "qk_rope_head_dim": 64}  # KimiLinearConfig's defaults
    return sum(_int_field({**widths, **config}, key) for key in widths)


_register(
    ["kimi_linear"],
    Family(
        source=_modeling(
            "kimi_linear", "KDA (linear attention) layers and MLA full-attention layers; no rotary embedding at all"
        ),
        layer_types=_kimi_linear_types,
        rotates=never_rotates,
        head_dim=_kimi_linear_head_dim,
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
for _name in ("ernie4_5", "ernie4_5_moe", "glm", "glm4", "helium"):
    _register([_name], Family(source=_modeling(_name, "rotate_half pairs (2i, 2i+1)"), layout=interleaved))
_register(
    ["openai_privacy_filter"],
    Family(
        source=_modeling("openai_privacy_filter", "rotate_half pairs (2i, 2i+1); one bidirectional sliding mask"),
        layout=interleaved,
        extras=_window_on_every_layer,
    ),
)
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
        extras=_attention_window,
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
    ["qwen"],
    Family(
        source="Qwen-1 remote code, modeling_qwen.py (QWenAttention: rotary_emb_base, rotary_pct of kv_channels, "
        "use_logn_attn), as stored in alibaba/MNN transformers/llm/export/llm_models/Qwen-1_8B/modeling_qwen.py",
        rope_parameters=legacy_aliases("rotary_emb_base", "rotary_pct", 1.0),
        head_dim=lambda c, t=None: _int_field(c, "kv_channels", 2) if c.get("kv_channels") else generic_head_dim(c),
        extras=_logn,
    ),
)


# --- models whose rotation the modeling code hard-codes, or that run several stacks ------------------------------


def _hidden_over_heads(config: Mapping, layer_type=None) -> int:
    """``hidden_size // num_attention_heads`` (the modeling code's head size; a ``head_dim`` field is not read)."""
    return generic_head_dim({k: v for k, v in config.items() if k != "head_dim"})


def _hard_coded_rope(base: float, where: str, rotary_dim: str | None) -> Callable:
    """A rotation that reads no rope field of the config: ``base`` hard-coded in the modeling code (``where``), the
    first ``config[rotary_dim]`` dimensions of each head rotating (the whole head where ``rotary_dim`` is None).

    GPT-J and CodeGen build ``create_sinusoidal_positions(max_positions, rotary_dim or n_embd)``: a null
    ``rotary_dim`` rotates a table as wide as the whole embedding, which fits the heads only when ``n_head`` is 1
    (the library fails on any other config, and so does this reading).
    """

    def convert(config, raw, layer_types, entry):
        params = {"rope_type": "default", "rope_theta": base, "_theta_field": f"the base hard-coded in {where}"}
        if rotary_dim is None:
            return params, "rope_parameters"
        if config.get(rotary_dim) is None:
            heads_key = _first(config, ("num_attention_heads", "n_head"))
            if heads_key is not None and _int_field(config, heads_key) != 1:
                raise ValueError(
                    f"config['{rotary_dim}'] is null: {where} then rotates a table as wide as the whole embedding "
                    f"(n_embd), which fits a head only when config['{heads_key}'] is 1 (transformers fails on this "
                    "config too); give rotary_dim"
                )
            return params, "rope_parameters"
        params["_rotary_dim"] = config[rotary_dim]
        return params, "rope_parameters"

    return convert


for _name in ("gptj", "codegen"):
    _register(
        [_name],
        Family(
            source=_modeling(
                _name,
                "create_sinusoidal_positions: inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, "
                "dtype=torch.int64) / dim)) with dim = rotary_dim; rotate_every_two pairs (2i, 2i+1) on the first "
                "rotary_dim dims of each head; no rope field of the config is read",
            ),
            rope_parameters=_hard_coded_rope(10000.0, _modeling(_name, "create_sinusoidal_positions"), "rotary_dim"),
            head_dim=_hidden_over_heads,
            layout=interleaved,
        ),
    )
_register(
    ["roformer"],
    Family(
        source=_modeling(
            "roformer",
            "RoFormerSinusoidalPositionalEmbedding.create_weight: pos / np.power(10000, 2 * (j // 2) / dim) with "
            "dim = hidden_size // num_attention_heads; apply_rotary_position_embeddings pairs (2i, 2i+1); "
            "rotary_value also rotates the values, which posenc does not model",
        ),
        rope_parameters=_hard_coded_rope(10000.0, _modeling("roformer", "RoFormerSinusoidalPositionalEmbedding"), None),
        head_dim=_hidden_over_heads,
        layout=interleaved,
    ),
)


def _rope_per_layer_type(family: str) -> Callable:
    """``rope_parameters`` nested by layer type, an entry for every layer type of the config (null: no rotation).

    Cohere Compass's rotary class reads ``config.rope_parameters[layer_type]`` for each layer type and nothing
    else (no ``rope_theta`` default, no legacy ``rope_scaling``); a flat dict or the class default ``{}`` fails
    there with a KeyError, and is refused here.
    """

    def convert(config, raw, layer_types, entry):
        params = raw.get("rope_parameters")
        kinds = list(dict.fromkeys(layer_types))
        if not isinstance(params, Mapping) or any(kind not in params for kind in kinds):
            raise ValueError(
                f"config['rope_parameters'] must hold an entry for each layer type of the config ({kinds}; null: "
                f"those layers do not rotate), got {show_value(params)}: {family} reads "
                "rope_parameters[layer_type], and transformers fails on this config too"
            )
        out = {}
        for kind in kinds:
            if params[kind] is not None and not isinstance(params[kind], Mapping):
                raise TypeError(
                    f"config['rope_parameters']['{kind}'] must be a mapping or null, got {show_value(params[kind])}"
                )
            out[kind] = None if params[kind] is None else copy.deepcopy(dict(params[kind]))
        return out, "rope_parameters"

    return convert


_register(
    ["cohere_compass_text"],
    Family(
        source=_modeling(
            "cohere_compass",
            "CohereCompassRotaryEmbedding: rope_parameters[layer_type] per layer type (null: no rotation), "
            "recomposition_frequencies as Qwen3-VL's interleaved M-RoPE, mrope_section default [24, 20, 20]; "
            "rotate_half; sliding_window on the sliding layers",
        ),
        rope_parameters=_rope_per_layer_type("CohereCompassRotaryEmbedding"),
        extras=_window,
        mrope=((24, 20, 20), True, "half"),
    ),
)


def _glm4_moe_head_dim(config, layer_type=None) -> int:
    """``getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)``: Glm4MoeConfig has no
    ``head_dim`` field, so a config without one rotates ``hidden_size // num_attention_heads`` (floor division:
    42 for the class defaults 4096 and 96)."""
    if config.get("head_dim"):
        return _int_field(config, "head_dim", minimum=2)
    return _int_field(config, "hidden_size") // _int_field(config, "num_attention_heads")


def _odd_width_rope(head_dim: Callable) -> Callable:
    """The generic reading; an odd rotated width ``d = int(head_dim * partial_rotary_factor)`` read as the model runs.

    The rotary modules of GLM-4.5 and Moonshine (as the library's default rope) compute ``d // 2 + 1`` speeds
    ``base ** (-2i / d)``, and ``apply_rotary_pos_emb`` rotates ``cos.shape[-1] = d + 1`` dimensions: the rotation of
    the even width ``d + 1`` at the base ``base ** ((d + 1) / d)``, which has the same speeds. Only for the default
    rope type (the other methods depend on the width otherwise than through ``base ** (-2i / d)``).
    """

    def convert(config, raw, layer_types, entry):
        params, source = generic_rope_parameters(config, raw, layer_types, entry)
        if _nested_keys(params, layer_types) or params.get("rope_theta") is None:
            return params, source
        head = head_dim(config)
        partial = params.get("partial_rotary_factor", 1.0)
        if not isinstance(partial, int | float) or isinstance(partial, bool):
            return params, source
        width = int(head * partial)
        if width % 2 == 0 or width + 1 > head:
            return params, source
        kind = params.get("rope_type", params.get("type", "default"))
        if kind != "default":
            raise ValueError(
                f"head_dim {head} and partial_rotary_factor {partial} give an odd rotated width {width}: transformers "
                f"then rotates {width + 1} dimensions at the speeds of a {width}-wide rotation, which posenc reads "
                f"for rope_type 'default' only (got {kind!r})"
            )
        params["rope_theta"] = float(params["rope_theta"]) ** ((width + 1) / width)
        params["partial_rotary_factor"] = min(1.0, (width + 1.5) / head)  # int(head * factor) = width + 1
        params["_partial_field"] = f"the odd width int({head} * {partial}) = {width}, rotated as {width + 1}"
        return params, source

    return convert


_register(
    ["glm4_moe"],
    Family(
        source=_modeling(
            "glm4_moe",
            'Glm4MoeAttention: self.head_dim = getattr(config, "head_dim", config.hidden_size // '
            "config.num_attention_heads); an odd int(head_dim * partial_rotary_factor) rotates one dimension more "
            "at the same speeds (read with the base raised to (d + 1) / d)",
        )
        + "; "
        + _configuration("glm4_moe", "partial_rotary_factor 0.5, no head_dim field"),
        rope_parameters=_odd_width_rope(_glm4_moe_head_dim),
        head_dim=_glm4_moe_head_dim,
    ),
)


def _sub_config(config: Mapping, key: str, model_type: str) -> dict:
    """``config[key]`` (a composite's sub-config; the class default where absent), read as ``model_type``."""
    sub = config.get(key)
    if sub is None:
        sub = {}
    if not isinstance(sub, Mapping):
        raise TypeError(f"config['{key}'] must be a mapping (the {model_type} config), got {show_value(sub)}")
    return {**dict(sub), "model_type": model_type}


def _dia_stacks(config):
    """Dia's text encoder (bidirectional) and audio decoder: ``encoder_config`` and ``decoder_config``."""
    return [
        ("encoder", _sub_config(config, "encoder_config", "dia_encoder")),
        ("decoder", _sub_config(config, "decoder_config", "dia_decoder")),
    ]


_register(
    ["dia"],
    Family(
        source=_modeling("dia", "DiaEncoder and DiaDecoder, each with its DiaRotaryEmbedding from its own sub-config"),
        stacks=_dia_stacks,
    ),
)


def _moonshine_stacks(config):
    """Moonshine's audio encoder and text decoder, both read from the one flat config.

    ``MoonshineAttention.__init__`` writes its head count into the shared config
    (``config.update({"num_attention_heads": num_attention_heads, ...})``, and ``num_attention_heads`` is
    ``decoder_num_attention_heads`` through the attribute map); the encoder is built first, so every layer and
    both rotary modules run with ``hidden_size // encoder_num_attention_heads``.
    """
    heads = config.get("encoder_num_attention_heads", 8)  # MoonshineConfig's default
    parts = []
    for stack in ("encoder", "decoder"):
        layers_key = f"{stack}_num_hidden_layers"
        sub = {k: v for k, v in config.items() if k not in ("num_hidden_layers", "num_attention_heads")}
        sub["num_hidden_layers"] = config.get(layers_key, 6)  # MoonshineConfig's default
        sub["num_attention_heads"] = heads
        parts.append((stack, sub))
    return parts


_register(
    ["moonshine"],
    Family(
        source=_modeling(
            "moonshine",
            "MoonshineEncoder and MoonshineDecoder: one MoonshineRotaryEmbedding each, partial_rotary_factor 0.9, "
            "rotate_half pairs (2i, 2i+1); MoonshineAttention writes its head count into the shared config; an odd "
            "int(head_dim * 0.9) rotates one dimension more at the same speeds",
        ),
        rope_parameters=_odd_width_rope(generic_head_dim),
        layout=interleaved,
        stacks=_moonshine_stacks,
    ),
)


def _blt_types(config, given):
    """BLT's masks: ``create_sliding_window_causal_mask`` where the part's ``sliding_window`` is set (the patcher's own;
    the local encoder's and decoder's: ``local_attention_window_len``, set by ``_blt_stacks``), else causal."""
    if given is not None:
        return given
    kind = "sliding_attention" if config.get("sliding_window") is not None else "full_attention"
    return [kind] * n_layers(config)


#: BltConfig's class defaults of the fields that decide its stacks (``configuration_blt.py``).
_BLT_DEFAULTS = {"patch_in_forward": True, "local_attention_window_len": 512}


def _blt_stacks(config):
    """BLT's stacks, in the order ``BltModel.forward`` runs them.

    The patcher (an entropy model over the bytes, when ``patch_in_forward``), the local encoder (over the bytes),
    the global transformer (over the patches: its positions count patches, ``global_position_ids``) and the local
    decoder (over the bytes, with the local encoder's mask). The local encoder's and decoder's mask is sliding with
    ``local_attention_window_len`` (``BltConfig.__post_init__`` sets ``encoder_config.sliding_window`` to it), causal
    where it is null; the global transformer's is causal.
    """
    config = {**_BLT_DEFAULTS, **config}
    window = config["local_attention_window_len"]
    parts = []
    if config["patch_in_forward"]:
        parts.append(("patcher", _sub_config(config, "patcher_config", "blt_patcher")))
    for stack, key, model_type in (
        ("local_encoder", "encoder_config", "blt_local_encoder"),
        ("global_transformer", "global_config", "blt_global_transformer"),
        ("local_decoder", "decoder_config", "blt_local_decoder"),
    ):
        sub = _sub_config(config, key, model_type)
        if stack == "global_transformer":
            sub.pop("sliding_window", None)
        else:
            sub["sliding_window"] = window
        sub.pop("layer_types", None)
        parts.append((stack, sub))
    return parts


_BLT_SOURCE = "BltRotaryEmbedding: emb = torch.repeat_interleave(freqs, 2, dim=-1); rotate_half pairs (2i, 2i+1)"
for _name in ("blt_patcher", "blt_local_encoder", "blt_global_transformer", "blt_local_decoder"):
    _register(
        [_name],
        Family(
            source=_modeling("blt", _BLT_SOURCE + "; the mask is sliding where sliding_window is set"),
            layer_types=_blt_types,
            extras=_window,
            layout=interleaved,
        ),
    )
_register(
    ["blt"],
    Family(
        source=_modeling("blt", "BltModel: patcher, local encoder, global transformer (over patches), local decoder")
        + "; "
        + _configuration("blt", "local_attention_window_len 512 is the local encoder's and decoder's window"),
        stacks=_blt_stacks,
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
def _generic_rope_parameters(config, raw, layer_types, entry):
    """The generic reading, plus a ``rotary_dim`` field where the config (or its class) has one and no partial
    factor: MiniMax-M2's class turns it into ``partial_rotary_factor = rotary_dim / head_dim``, GPT-J's and
    CodeGen's models rotate ``rotary_dim`` dimensions (``configuration_minimax_m2.py``, ``modeling_gptj.py``)."""
    params, source = generic_rope_parameters(config, raw, layer_types, entry)
    if (
        config.get("rotary_dim") is not None
        and not _nested_keys(params, layer_types)
        and params.get("_partial_field") in (None, "the class default")
        and raw.get("partial_rotary_factor") is None
        and "partial_rotary_factor" not in (raw.get("rope_parameters") or {})
    ):
        params.pop("partial_rotary_factor", None)
        params.pop("_partial_field", None)
        params["_rotary_dim"] = config["rotary_dim"]
    return params, source


_GENERIC = Family(
    source="the generic reading (transformers' base classes)", rope_parameters=_generic_rope_parameters, extras=_window
)


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
    "hrm_text": (
        "the reference runs its two stacks in cycles (num_hidden_layers becomes layers per stack x H_cycles x "
        "(L_cycles + 1)), which posenc does not unroll"
    ),
    "minimax_m3_vl_text": "its rotation differs from the reference library's (not yet traced to its cause)",
    "dbrx": "its attention settings live in a nested attn_config that posenc does not read",
    "deepseek_v4": (
        "its compressed layers also attend to compressed entries of the whole history (one per 4 or 128 tokens, "
        "rotated at their block's position), which posenc does not model"
    ),
    "dots3_note_text": "its per-layer configs are not read",
    "diffusion_gemma_text": "its per-layer configs are not read",
}


def class_layer_types(model_type: str | None, config: Mapping) -> tuple[list[str] | None, str | None]:
    """(layer types, note) as the reference's configuration class fills them in for a config without ``layer_types``.

    Replays ``posenc._family_defaults.LAYER_PATTERNS[model_type]`` (generated from the class by
    ``tests/transformers_families.py``): layer ``i`` of ``n`` takes ``pattern[i % p]`` (or ``pattern[(n-1-i) % p]``),
    the last layer the class's forced type, the period from the class's period field when the config sets it. Where
    the class's pattern also depends on other fields the config sets to other values than the class's, or where no
    pattern reproduces the class, it returns ``(None, note)``: the note says the reading may differ.
    """
    rule = LAYER_PATTERNS.get(model_type)
    if rule is None:
        return None, None
    if rule.get("rule", "pattern") is None:
        return None, (
            f"transformers fills in the layer types of {model_type!r} by a rule posenc does not replay; "
            "give layer_types in the config, or check this reading with the reference library"
        )
    entry = TABLE.get(model_type, {}).get("fields", {})
    pattern, anchor, last = list(rule["pattern"]), rule["anchor"], rule["last"]
    period_field = rule.get("period_field")
    for name in rule.get("depends_on", []):
        if name == period_field or config.get(name) is None or config.get(name) == entry.get(name):
            continue
        return None, (
            f"transformers derives the layer types of {model_type!r} from config[{name!r}] = {config.get(name)!r} "
            "by a rule posenc does not replay; give layer_types in the config, or check this reading with the "
            "reference library"
        )
    if period_field is not None and config.get(period_field) is not None:
        period = _int_field(config, period_field)
        odd = pattern[-1] if anchor == "start" else pattern[0]
        other = next(t for t in pattern if t != odd)
        pattern = [other] * (period - 1) + [odd] if anchor == "start" else [odd] + [other] * (period - 1)
    n = n_layers(config)
    p = len(pattern)
    types = [pattern[i % p] if anchor == "start" else pattern[(n - 1 - i) % p] for i in range(n)]
    if last is not None and types:
        types[-1] = last
    return types, None


#: The families read as several stacks of layers (a config of one of them has no layer count of its own).
STACKED = frozenset(name for name, family in FAMILIES.items() if family.stacks is not None)


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
    if family.stacks is not None:
        return _read_stacks(model_type, family, raw, entry)
    return _read_one(model_type, family, name, raw, entry, note)


def _read_stacks(model_type: str, family: Family, raw: Mapping, entry) -> FamilyReading:
    """A model of several stacks (``Family.stacks``): each stack's config read on its own, the layers in run order.

    A layer's rope key is ``"<stack>"`` (or ``"<stack> <layer type>"`` where the stack's rope parameters are nested
    by layer type) and its extras carry ``stack``. The reading's config is the last stack's (the decoder's: the
    language model's) with the composite's own fields over it.
    """
    config = {**(entry["fields"] if entry else {}), **dict(raw)}
    own = Family(**{**family.__dict__, "stacks": None})
    layers: list[LayerPlan] = []
    rope: dict = {}
    notes = []
    last: Mapping = {}
    for stack, sub in family.stacks(config):
        if sub.get("model_type") == model_type:
            part = _read_one(model_type, own, model_type, sub, entry, None)
        else:
            part = read_family(sub)
        for key, params in part.rope.items():
            rope[stack if key == "all" else f"{stack} {key}"] = {**params, "_field": f"{stack} {params['_field']}"}
        for plan in part.layers:
            key = None if plan.rope_key is None else stack if plan.rope_key == "all" else f"{stack} {plan.rope_key}"
            layers.append(LayerPlan(plan.layer_type, plan.mixer, key, plan.head_dim, {**plan.extras, "stack": stack}))
        if part.note:
            notes.append(f"{stack}: {part.note}")
        last = part.config
    return FamilyReading(model_type, model_type, layers, rope, {**last, **config}, "; ".join(notes) or None)


def _read_one(model_type, family: Family, name: str, raw: Mapping, entry, note) -> FamilyReading:
    """:func:`read_family` for one stack of layers, with the family's rules."""
    config = {**(entry["fields"] if entry else {}), **dict(raw)}
    n = n_layers(config)
    given = config.get("layer_types")
    if given is not None:
        if not isinstance(given, list | tuple) or not all(isinstance(t, str) for t in given):
            raise TypeError(f"config['layer_types'] must be a list of strings, got {show_value(given)}")
        if len(given) != n:
            raise ValueError(f"config['layer_types'] must have one entry per layer ({n}), got {len(given)}")
        given = list(given)
    if family.layer_types:
        layer_types = family.layer_types(config, given)
    elif given is not None:
        layer_types = given
    else:
        layer_types, pattern_note = class_layer_types(model_type, config)
        if pattern_note is not None and note is None:
            note = pattern_note
        layer_types = layer_types or ["full_attention"] * n
    gate = WINDOW_EVERY_LAYER.get(model_type, False)  # the field the class needs set to keep the window, if any
    windowed_everywhere = (
        model_type in WINDOW_EVERY_LAYER
        and given is None
        and config.get("sliding_window") is not None
        and (gate is None or bool(config.get(gate)))
    )

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
        if (
            layer_type in SLIDING_TYPES
            and mixer == "attention"
            and "sliding_window" not in extras
            and config.get("sliding_window") is not None
        ):  # the generic rule: a sliding layer's window is config.sliding_window (the library's masks)
            extras["sliding_window"] = _int_field(config, "sliding_window")
        if windowed_everywhere and mixer == "attention" and "sliding_window" not in extras:
            # one sliding mask for every layer (Mistral's model: create_sliding_window_causal_mask)
            extras["sliding_window"] = _int_field(config, "sliding_window")
        if key is not None and family.layout is not None:
            extras["layout"] = family.layout(config)
        size = head_dim(config, layer_type) if mixer == "attention" else 0
        if windowed_everywhere and mixer == "attention" and layer_type == "full_attention":
            layer_type = "sliding_attention"  # the reference has no layer types here; the window is what it does
        layers.append(LayerPlan(layer_type, mixer, key, size, extras))
    return FamilyReading(model_type, name, layers, rope, config, note)
