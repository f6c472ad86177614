"""Configs read the way the reference library normalises them: nested types, class layer patterns, windows.

The three tables of ``posenc._family_defaults`` that carry this (``SUB_CONFIGS``, ``LAYER_PATTERNS``,
``WINDOW_EVERY_LAYER``) are generated from the installed ``transformers`` by ``tests/transformers_families.py``;
the first test regenerates them and fails when the pinned library's mappings change. The others compare posenc's
reading with the library's own configuration classes built from the same dict.
"""

import logging
import warnings

import pytest
import transformers_families
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

import posenc
from posenc._family_defaults import LAYER_PATTERNS, SUB_CONFIGS, WINDOW_EVERY_LAYER
from posenc.config import nested_model_type
from posenc.config_families import FAMILIES, class_layer_types


def test_the_normalisation_tables_are_the_reference_librarys():
    assert SUB_CONFIGS == transformers_families.sub_configs()
    assert LAYER_PATTERNS == transformers_families.layer_patterns()
    assert WINDOW_EVERY_LAYER == transformers_families.window_every_layer()


def _reference_sub_type(parent: str, key: str, written):
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    nested = {"num_hidden_layers": 2} if written is None else {"model_type": written, "num_hidden_layers": 2}
    try:
        built = CONFIG_MAPPING[parent](**{key: nested})
    except Exception:
        return None
    finally:
        logging.disable(logging.NOTSET)
    return getattr(getattr(built, key, None), "model_type", None)


CASES = [
    (parent, key, written)
    for parent, keys in sorted(SUB_CONFIGS.items())
    for key, rule in keys.items()
    for written in [None, rule.get("default") or rule.get("type"), *rule.get("renames", {})]
]


def test_every_composite_family_is_covered_and_the_renames_found():
    assert len(CASES) > 150
    assert SUB_CONFIGS["exaone4_5"]["text_config"]["renames"] == {"exaone4_5_text": "exaone4"}
    assert SUB_CONFIGS["kimi_k25"]["text_config"]["renames"] == {"kimi_k2": "deepseek_v3"}


def test_nested_types_are_read_as_the_reference_builds_them():
    wrong = []
    for parent, key, written in CASES:
        want = _reference_sub_type(parent, key, written)
        if want is not None and nested_model_type(parent, key, written) != want:
            wrong.append((parent, key, written, want, nested_model_type(parent, key, written)))
    assert not wrong, wrong[:5]


def test_a_renamed_text_model_reads_as_its_family():
    # EXAONE 4.5 writes "exaone4_5_text"; the reference reads EXAONE 4 (a sliding/full pattern with NoPE full layers)
    text = {"model_type": "exaone4_5_text", "num_hidden_layers": 8, "sliding_window": 4096, "sliding_window_pattern": 4}
    layers = posenc.from_config({"model_type": "exaone4_5", "text_config": text})
    same = posenc.from_config({**text, "model_type": "exaone4"})
    assert layers.model_type == "exaone4" and layers.family == "exaone4" and layers.note is None
    assert layers.nested == "text_config" and layers.renamed == ("exaone4_5_text", "exaone4")
    assert [(x.layer_type, x.rope, x.sliding_window) for x in layers] == [
        (x.layer_type, x.rope, x.sliding_window) for x in same
    ]
    assert not all(x.rope for x in layers)  # the full layers are NoPE, not Llama-3 RoPE as a generic reading had it
    # Kimi K2.5: "kimi_k2" is DeepSeek V3: interleaved pairs and the YaRN softmax multiplier
    kimi = {
        "model_type": "kimi_k2",
        "num_hidden_layers": 2,
        "qk_rope_head_dim": 64,
        "rope_theta": 50000.0,
        "rope_scaling": {"type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096,
                         "mscale": 1.0, "mscale_all_dim": 1.0, "beta_fast": 1.0, "beta_slow": 1.0},
        "max_position_embeddings": 131072,
    }  # fmt: skip
    layers = posenc.from_config({"model_type": "kimi_k25", "text_config": kimi})
    assert layers.model_type == "deepseek_v3" and layers.renamed == ("kimi_k2", "deepseek_v3")
    reference = CONFIG_MAPPING["kimi_k25"](text_config=dict(kimi)).text_config
    mscale = 0.1 * reference.rope_parameters["mscale_all_dim"] * __import__("math").log(32.0) + 1.0
    assert layers[0].softmax_scale == pytest.approx(mscale**2)  # DeepseekV3Attention: scaling *= mscale**2
    assert layers[0].layout == ("interleaved" if reference.rope_interleave else "half")


@pytest.mark.parametrize(
    "model_type", sorted(m for m, r in LAYER_PATTERNS.items() if "pattern" in r and m in CONFIG_MAPPING)
)
def test_class_layer_patterns_replay_the_class(model_type):
    cls = CONFIG_MAPPING[model_type]
    rule = LAYER_PATTERNS[model_type]
    warnings.filterwarnings("ignore")
    for n in (1, 5, 13, 40):
        for fields in [{}] + [{rule["period_field"]: 3}] * (rule["period_field"] is not None):
            want = cls(num_hidden_layers=n, **fields).layer_types
            got, note = class_layer_types(model_type, {"num_hidden_layers": n, **fields})
            assert note is None and got == list(want), (n, fields)


def test_families_without_a_rule_of_their_own_take_the_class_pattern():
    # Gemma 2: sliding and full layers in turn (Gemma2Config.__post_init__), the window on the sliding ones
    layers = posenc.from_config({"model_type": "gemma2", "num_hidden_layers": 6})
    want = CONFIG_MAPPING["gemma2"](num_hidden_layers=6)
    assert [x.layer_type for x in layers] == want.layer_types
    assert [x.sliding_window for x in layers] == [
        want.sliding_window if t == "sliding_attention" else None for t in want.layer_types
    ]
    assert "gemma2" not in FAMILIES or FAMILIES["gemma2"].layer_types is None


@pytest.mark.parametrize("model_type", ["mistral", "starcoder2", "mixtral", "phi3"])
def test_models_with_one_sliding_mask_window_every_layer(model_type):
    assert model_type in WINDOW_EVERY_LAYER
    default = CONFIG_MAPPING[model_type]().sliding_window
    layers = posenc.from_config({"model_type": model_type, "num_hidden_layers": 3, "sliding_window": 512})
    assert [x.sliding_window for x in layers] == [512] * 3
    layers = posenc.from_config({"model_type": model_type, "num_hidden_layers": 3})  # the class default
    assert [x.sliding_window for x in layers] == [default] * 3
    layers = posenc.from_config({"model_type": model_type, "num_hidden_layers": 3, "sliding_window": None})
    assert [x.sliding_window for x in layers] == [None] * 3


def test_a_pattern_posenc_cannot_replay_says_so():
    odd = next(m for m, r in LAYER_PATTERNS.items() if r.get("rule", "pattern") is None and m not in FAMILIES)
    types, note = class_layer_types(odd, {"num_hidden_layers": 4})
    assert types is None and odd in note and "layer_types" in note


def test_deepseek_v4_rotates_the_trailing_slice_as_the_reference_does():
    # the layer-by-layer harness cannot trace V4's compressor, so each layer's rotation is compared with the
    # reference's own rotary module and apply_rotary_pos_emb on the stored DeepSeek-V4-Flash config
    import numpy as np
    import torch
    from stored_configs import load
    from transformers.models.deepseek_v4 import modeling_deepseek_v4 as v4

    raw = load("DeepSeek-V4-Flash")
    warnings.filterwarnings("ignore")
    config = CONFIG_MAPPING["deepseek_v4"](**{k: v for k, v in raw.items() if k != "model_type"})
    rotary = v4.DeepseekV4RotaryEmbedding(config)
    layers = posenc.from_config(raw)
    assert [x.layer_type for x in layers] == config.layer_types
    positions = np.array([0, 1, 5, 100, 4097, 70000])
    x = np.random.default_rng(0).standard_normal((1, 1, len(positions), config.head_dim))
    for layer in layers:
        assert layer.rotated_part == "trailing" and layer.sliding_window == config.sliding_window
        kind = "main" if layer.layer_type == "sliding_attention" else "compress"
        cos, sin = rotary(torch.zeros(1, dtype=torch.float64), torch.tensor([positions]), layer_type=kind)
        want = v4.apply_rotary_pos_emb(torch.tensor(x), cos.double(), sin.double()).numpy()
        got = x.copy()
        got[..., -layer.rotary_dim :] = posenc.apply_rope(
            x[..., -layer.rotary_dim :], positions, layer.inv_freq, layout=layer.layout,
            attention_factor=layer.attention_factor,
        )  # fmt: skip
        np.testing.assert_allclose(got, want, atol=1e-4 * (1 + positions.max() * 1e-3))
