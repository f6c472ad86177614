"""The reference library's text models without rotary positions, classified from their own modules (generated data).

``python tests/transformers_schemes.py`` rewrites ``src/posenc/_scheme_families.py`` from the installed
``transformers`` (5.23). For every ``model_type`` of the library's text auto-classes (causal LM, masked LM,
sequence-to-sequence, speech-to-text, sequence classification, text encoding) that posenc's RoPE reading does
not own (:mod:`posenc.config_families`: not in ``posenc._family_defaults``, not a composite read through its
language model, no rotary module), plus the families whose config switches between RoPE and another scheme
(Falcon's ``alibi``, ESM's ``position_embedding_type``), it builds the base model of the class defaults on the
meta device (no memory, no weights) and records what the model itself holds:

* ``stacks``: each stack of blocks (``encoder.layer``, ``decoder.layers``, ``h``, ...) and its length;
* ``positions``: each position module (absolute tables, sinusoidal modules, relative-bias tables, fixed
  buffers), its class, rows and width, whether it trains, and its ``offset`` attribute where it has one;
* ``alibi``: whether the model class builds an ALiBi tensor (``build_alibi_tensor`` / ``build_mpt_alibi_tensor``);
* ``scheme``: per stack, what the modules say ("learned", "sinusoidal", "relative_buckets", "alibi", "none"),
  except where :data:`OVERRIDES` names the reason the modules cannot tell;
* ``fields``: the class defaults of the config fields :mod:`posenc.config_schemes` reads.

``tests/test_config_schemes.py`` recomputes the table and compares, so a newer ``transformers`` that adds a
family or changes one fails a test instead of silently disagreeing.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import pprint
import re
import sys
import warnings
from pathlib import Path

OUTPUT = Path(__file__).resolve().parents[1] / "src" / "posenc" / "_scheme_families.py"

#: The auto-classes whose model types are text models (a model type is listed once, whatever its tasks).
TEXT_MAPPINGS = (
    "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
    "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
    "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
    "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES",
    "MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES",
    "MODEL_FOR_TEXT_ENCODING_MAPPING_NAMES",
)

#: Families the RoPE reading owns by default whose config can switch the rotation off for another scheme.
SWITCHING = {
    "falcon": "alibi: true replaces the rotation with ALiBi (FalconModel.use_alibi)",
    "esm": "position_embedding_type 'absolute' (the class default) is a learned table, 'rotary' is RoPE",
}

#: RoPE models whose rotation has no ``*RotaryEmbedding`` module: left to the RoPE reading (model_type -> where).
ROPE_WITHOUT_MODULE = {
    "roformer": "RoFormerSelfAttention.apply_rotary_position_embeddings rotates q and k by the sinusoidal table",
}

#: Config arguments without which the class default cannot build a model (model_type -> arguments).
BUILD_ARGUMENTS = {
    "esm": {"vocab_size": 33},  # EsmConfig leaves vocab_size None
}

#: Language-model parts of composite configs that are not text auto-classes of their own: read through
#: ``config["decoder"]`` (model_type -> why it is listed).
SUB_MODELS = {
    "musicgen_decoder": "the decoder of musicgen (config['decoder'])",
    "musicgen_melody_decoder": "the decoder of musicgen_melody (config['decoder'])",
}

#: The config fields whose class defaults posenc.config_schemes reads.
FIELDS = (
    "num_hidden_layers",
    "n_layer",
    "n_layers",
    "num_layers",
    "num_decoder_layers",
    "encoder_layers",
    "decoder_layers",
    "num_attention_heads",
    "n_head",
    "n_heads",
    "num_heads",
    "encoder_attention_heads",
    "decoder_attention_heads",
    "hidden_size",
    "n_embd",
    "d_model",
    "dim",
    "emb_dim",
    "d_kv",
    "head_dim",
    "max_position_embeddings",
    "n_positions",
    "n_ctx",
    "max_seq_len",
    "max_source_positions",
    "max_target_positions",
    "max_encoder_position_embeddings",
    "max_decoder_position_embeddings",
    "max_text_positions",
    "pad_token_id",
    "relative_attention_num_buckets",
    "relative_attention_max_distance",
    "position_bias_num_buckets",
    "position_bias_max_distance",
    "num_buckets",
    "relative_max_distance",
    "position_embedding_type",
    "relative_attention",
    "max_relative_positions",
    "position_buckets",
    "position_biased_input",
    "sinusoidal_embeddings",
    "sinusoidal_pos_embds",
    "use_learned_position_embeddings",
    "alibi",
    "window_size",
    "local_radius",
    "global_block_size",
    "encoder_attention_type",
    "attn_layer_period",
    "attn_layer_offset",
    "max_2d_position_embeddings",
    "axial_pos_shape",
    "attn_type",
    "clamp_len",
    "scale_embedding",
    "d_rel",
    "rel_extent",
    "sliding_window_size",
    "encoder_max_relative_position",
    "rel_pos_bins",
    "max_rel_pos",
    "has_relative_attention_bias",
    "segment_types",
    "num_hash_buckets",
    "axial_pos_embds",
    "attention_head_dim",
)

#: Where the modules alone cannot tell the scheme: model_type -> (scheme per stack, the reason, read in the code).
OVERRIDES = {
    "ctrl": (
        {"": "sinusoidal"},
        "CTRLModel keeps its table in the buffer pos_encoding = positional_encoding(n_positions, d_model)",
    ),
    "xlnet": (
        {"": "relative_sinusoidal"},
        "XLNetModel.relative_positional_encoding: sinusoids of the relative distance, projected per layer (r_r_bias,"
        " r_w_bias)",
    ),
    "perceiver": (
        {"": "learned"},
        "the text input's positions are in PerceiverTextPreprocessor (PerceiverForMaskedLM), not in the base model",
    ),
    "deberta": (
        {"": "learned"},
        "the class default relative_attention=False: only the absolute table of position_biased_input",
    ),
    "deberta-v2": (
        {"": "learned"},
        "the class default relative_attention=False: only the absolute table of position_biased_input",
    ),
    "layoutlmv2": (
        {"": "relative_buckets"},
        "LayoutLMv2Model needs detectron2 to be built; LayoutLMv2SelfAttention adds rel_pos_bias (relative buckets,"
        " has_relative_attention_bias) to a learned absolute table (LayoutLMv2Embeddings.position_embeddings)",
    ),
    "funnel": (
        {"encoder": "relative_sinusoidal", "decoder": "relative_sinusoidal"},
        "FunnelRelMultiheadAttention: sinusoidal relative position embeddings (FunnelAttentionStructure)",
    ),
    "speecht5": (
        {"encoder": "relative_learned", "decoder": "sinusoidal"},
        "SpeechT5RelativePositionalEncoding (pe_k, clipped at encoder_max_relative_position) in the encoder,"
        " scaled sinusoidal positions in the text decoder prenet",
    ),
}

#: Module paths that are not the text model's positions (vision towers, speech front ends, layout boxes).
NOT_TEXT = re.compile(
    r"(vision|image|speech_encoder|t2u_model|vocoder|subsampling|conv|xpath|layout_embeddings|entity_embeddings|"
    r"x_position|y_position|h_position|w_position|box_position)"
)

#: Names of stacks of blocks (the last part of a ModuleList's path).
STACK_NAMES = ("layer", "layers", "h", "block", "blocks", "self_attends", "attentions")


def _quiet():
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"not a plain value: {value!r}")


def text_model_types() -> list[str]:
    """Every model_type of the reference library's text auto-classes."""
    from transformers.models.auto import modeling_auto

    types: set[str] = set()
    for name in TEXT_MAPPINGS:
        types |= set(getattr(modeling_auto, name))
    return sorted(types)


def _rope_owned(model_type: str) -> bool:
    from posenc._family_defaults import TABLE, TEXT_MODEL_TYPES
    from posenc.config_families import FAMILIES

    return model_type in TABLE or model_type in TEXT_MODEL_TYPES or model_type in FAMILIES


def _model_class(config):
    """The base model class of ``config`` (AutoModel's), else the modeling module's shortest-named model class."""
    from transformers import PreTrainedModel
    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    if type(config) in MODEL_MAPPING:
        found = MODEL_MAPPING[type(config)]
        return found[0] if isinstance(found, tuple) else found
    package, name = type(config).__module__.rsplit(".", 1)
    module = importlib.import_module(f"{package}.{name.replace('configuration_', 'modeling_')}")
    candidates = [
        cls
        for cls in vars(module).values()
        if isinstance(cls, type)
        and issubclass(cls, PreTrainedModel)
        and getattr(cls, "config_class", None) is type(config)
        and "PreTrained" not in cls.__name__
    ]
    if not candidates:
        raise LookupError(f"no model class for {type(config).__name__}")
    return min(
        candidates, key=lambda cls: (not cls.__name__.endswith("Model"), "For" not in cls.__name__, len(cls.__name__))
    )


def _meta_model(config):
    import torch

    with torch.device("meta"):
        return _model_class(config)._from_config(config)


def _stacks(model) -> dict[str, dict]:
    """Stack name ("" for one stack, else "encoder" / "decoder") -> its longest block list: path and length."""
    import torch

    lists = {}
    for name, module in model.named_modules():
        if not isinstance(module, torch.nn.ModuleList) or not len(module) or NOT_TEXT.search(name):
            continue
        if name.rsplit(".", 1)[-1] not in STACK_NAMES or re.search(r"\.\d+(\.|$)", name):
            continue
        lists[name] = sum(len(item) if isinstance(item, torch.nn.ModuleList) else 1 for item in module)
    two = any("decoder" in path for path in lists) and any("decoder" not in path for path in lists)
    stacks: dict[str, dict] = {}
    for path, n in lists.items():
        name = ("decoder" if "decoder" in path else "encoder") if two else ""
        if name not in stacks or n > stacks[name]["layers"]:
            stacks[name] = {"path": path, "layers": n}
    return stacks or {"": {"path": None, "layers": None}}


#: Linear maps that are relative-position tables (a one-hot bucket times the weight).
RELATIVE_LINEAR = re.compile(r"^(rel_pos_bias|relative_pos_embeddings)$")


def _is_position(name: str, module) -> bool:
    import torch

    last = name.rsplit(".", 1)[-1]
    kind = type(module).__name__
    if isinstance(module, torch.nn.Linear):
        return bool(RELATIVE_LINEAR.match(last))
    if isinstance(module, torch.nn.LayerNorm | torch.nn.Dropout | torch.nn.ModuleList | torch.nn.ParameterList):
        return False
    return bool(
        re.search(r"(position|^wpe$|positions_embed|pos_emb|relative_attention_bias|pe_k|rel_logits)", last)
        or re.search(r"(Positional|PositionEmbedding|Sinusoidal|RelativeLogits)", kind)
    )


def _positions(model) -> dict[str, dict]:
    """Position modules and fixed position buffers, layer indices folded into ``N`` (with a count)."""
    out: dict[str, dict] = {}
    seen_inside: list[str] = []
    for name, module in model.named_modules():
        if not name or NOT_TEXT.search(name) or any(name.startswith(p + ".") for p in seen_inside):
            continue
        if not _is_position(name, module):
            continue
        seen_inside.append(name)
        weight = getattr(module, "weight", None)
        if weight is None and getattr(module, "relative_attention_bias", None) is not None:
            weight = module.relative_attention_bias
        info = {"class": type(module).__name__}
        if weight is not None and getattr(weight, "ndim", 0) == 2:
            info.update(rows=int(weight.shape[0]), width=int(weight.shape[1]), trainable=bool(weight.requires_grad))
            if type(module).__name__ == "Linear":  # (buckets -> heads): rows are the buckets
                info.update(rows=int(weight.shape[1]), width=int(weight.shape[0]))
        else:
            info["trainable"] = any(p.requires_grad for p in module.parameters())
        for attribute in ("offset", "padding_idx"):
            value = getattr(module, attribute, None)
            if isinstance(value, int) and not isinstance(value, bool):
                info[attribute] = value
        key = re.sub(r"\.\d+\.", ".N.", name)
        if key in out:
            out[key]["count"] += 1
        else:
            out[key] = {**info, "count": 1}
    for name, buffer in model.named_buffers():
        last = name.rsplit(".", 1)[-1]
        if "pos" in last and "ids" not in last and buffer.ndim == 2 and buffer.is_floating_point():
            if not NOT_TEXT.search(name) and not any(name.startswith(p + ".") for p in seen_inside):
                out[name] = {"class": "buffer", "rows": int(buffer.shape[0]), "width": int(buffer.shape[1]), "count": 1}
    return out


def _has_rotary(model) -> bool:
    return any(
        type(m).__name__.endswith("RotaryEmbedding") or n.endswith("rotary_emb") for n, m in model.named_modules()
    )


def _stack_scheme(name: str, positions: dict[str, dict], alibi: bool, single: bool) -> str:
    """What one stack's modules say (``name``: "" for a model of one stack, else "encoder" or "decoder")."""
    if alibi:
        return "alibi"
    mine = {path: info for path, info in positions.items() if single or (("decoder" in path) == (name == "decoder"))}
    classes = [info["class"] for info in mine.values()]
    if any("relative_attention_bias" in path or RELATIVE_LINEAR.match(path.rsplit(".", 1)[-1]) for path in mine) or any(
        c.endswith("SegmentPositionEmbedding") for c in classes
    ):
        return "relative_buckets"
    if any(c.endswith("RelativeLogits") for c in classes):
        return "relative_learned"
    if any(c.endswith("RelPositionalEncoding") for c in classes):
        return "relative_sinusoidal"
    for info in mine.values():
        if "Sinusoidal" in info["class"] or info["class"] == "buffer" or info.get("trainable") is False:
            return "sinusoidal"
    if any(info.get("trainable") or "Learned" in info["class"] for info in mine.values()):
        return "learned"
    return "none"


def classify(model_type: str) -> dict | None:
    """The facts of one model_type (None where the RoPE reading owns it or no base model can be built)."""
    from transformers import PreTrainedConfig
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    _quiet()
    if model_type not in CONFIG_MAPPING:
        return None
    cls = CONFIG_MAPPING[model_type]
    arguments = dict(BUILD_ARGUMENTS.get(model_type, {}))
    if model_type == "falcon":  # the non-RoPE side of the switch
        arguments["alibi"] = True
    try:
        config = cls(**arguments)
    except Exception:
        return None
    if model_type not in SWITCHING and (
        _rope_owned(model_type)
        or model_type in ROPE_WITHOUT_MODULE
        or getattr(config, "rotary_dim", None)  # GPT-J, CodeGen
        or any(key in config.to_dict() for key in ("rope_theta", "rope_parameters"))
    ):
        return None
    subs = {key: value.model_type for key, value in vars(config).items() if isinstance(value, PreTrainedConfig)}
    try:
        model = _meta_model(config)
    except Exception as error:  # a model the library cannot build here (an optional library missing)
        entry = {"error": f"{type(error).__name__}", "fields": _fields(cls), **({"parts": subs} if subs else {})}
        if model_type in OVERRIDES:
            entry.update(scheme=dict(OVERRIDES[model_type][0]), override=OVERRIDES[model_type][1])
        return entry
    if _has_rotary(model) and model_type not in SWITCHING:
        return None
    stacks = _stacks(model)
    positions = _positions(model)
    alibi = bool(getattr(config, "alibi", False)) or any(
        hasattr(type(model), name) for name in ("build_alibi_tensor", "build_mpt_alibi_tensor")
    )
    schemes = {name: _stack_scheme(name, positions, alibi, len(stacks) == 1) for name in stacks}
    note = None
    if model_type in OVERRIDES:
        schemes, note = dict(OVERRIDES[model_type][0]), OVERRIDES[model_type][1]
    entry = {
        "model_class": type(model).__name__,
        "stacks": stacks,
        "positions": positions,
        "alibi": alibi,
        "scheme": schemes,
        "fields": _fields(cls),
    }
    if subs:
        entry["parts"] = subs
    if note:
        entry["override"] = note
    if model_type in SWITCHING:
        entry["switch"] = SWITCHING[model_type]
    return entry


def _fields(cls) -> dict:
    declared = getattr(cls, "__dataclass_fields__", {})
    out = {}
    for name in FIELDS:
        spec = declared.get(name)
        if spec is None:
            continue
        if spec.default is not dataclasses.MISSING:
            value = spec.default
        elif spec.default_factory is not dataclasses.MISSING:
            value = spec.default_factory()
        else:
            continue
        if value is not None:
            out[name] = _plain(value)
    return out


def scheme_families() -> dict[str, dict]:
    """model_type -> its facts (see the module docstring), for every text model the RoPE reading does not own."""
    _quiet()
    table = {}
    for model_type in sorted(set(text_model_types()) | set(SWITCHING) | set(SUB_MODELS)):
        entry = classify(model_type)
        if entry is not None:
            table[model_type] = entry
    return table


def write(path: Path = OUTPUT) -> None:
    import transformers

    header = (
        '"""Text models of the reference library without rotary positions, per model_type (generated data).\n\n'
        f"Written by ``python tests/transformers_schemes.py`` from transformers {transformers.__version__}: for each\n"
        "text model_type the RoPE reading does not own, the stacks and position modules of its base model (built\n"
        "from the class defaults on the meta device), whether it builds ALiBi, the scheme of each stack and the\n"
        "class defaults of the fields posenc.config_schemes reads. ``tests/test_config_schemes.py`` checks it\n"
        "against the installed library.\n"
        '"""\n\n'
        "# ruff: noqa: E501  (generated: pprint keeps each string whole)\n\n"
        f"TRANSFORMERS_VERSION = {transformers.__version__!r}\n\n"
    )
    body = "TABLE = " + pprint.pformat(scheme_families(), width=116, sort_dicts=True) + "\n"
    path.write_text(header + body)


if __name__ == "__main__":
    importlib.import_module("posenc")
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else OUTPUT)
    print(f"wrote {OUTPUT}")
