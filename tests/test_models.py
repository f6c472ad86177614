"""posenc.MODELS: every entry sourced, every RoPE entry read by from_config as the reference library runs it."""

import copy
import math

import numpy as np
import pytest
from family_trace import compare, rotary_reference, shrink
from stored_configs import FOLDERS, SOURCES

import posenc
from posenc.models import SCHEMES

ROPE = sorted(name for name, entry in posenc.MODELS.items() if entry.scheme == "rope")
FAMILIES = [
    "GPT-2",
    "bert",
    "t5",
    "BLOOM",
    "mpt",
    "gpt-neox",
    "Llama-2",
    "CodeLlama",
    "Llama-3.1",
    "Llama-4",
    "Mistral",
    "Qwen2.5",
    "Qwen3",
    "Qwen2-VL",
    "gemma-3",
    "Phi-3",
    "Phi-4-mini",
    "DeepSeek-V3",
    "gpt-oss",
    "OLMo",
    "ModernBERT",
    "gemma-4",
    "Qwen3-Next",
    "Qwen3.5",
    "Qwen3-VL",
    "Ministral-3",
]
#: Zoo entries that read their fields from a config stored in the package (src/posenc/zoo_configs).
STORED = sorted(p.stem for p in FOLDERS[0].glob("*.json") if p.stem != "SOURCES")
#: Families the reference library does not have (remote code): compared by hand below instead.
REMOTE_CODE = {"qwen"}


def test_at_least_thirty_models_across_the_families():
    assert len(posenc.MODELS) >= 30
    for family in FAMILIES:
        assert any(name.startswith(family) for name in posenc.MODELS), family


@pytest.mark.parametrize("name", sorted(posenc.MODELS))
def test_every_value_names_its_source(name):
    entry = posenc.MODELS[name]
    assert entry.name == name and entry.scheme in SCHEMES
    assert set(entry.sources) == set(entry.config) | {"scheme"}
    for source in entry.sources.values():
        assert isinstance(source, str) and len(source) > 20


@pytest.mark.parametrize("name", STORED)
def test_a_stored_config_is_the_source_of_every_field_read_from_it(name):
    origin, entry = SOURCES[name], posenc.MODELS[name]
    assert entry.config  # the fields are the stored file's own (posenc.models reads them from it)
    for key in entry.config:
        source = entry.sources[key]
        assert origin["repository"] in source and origin["path"] in source and origin["commit"][:12] in source, key
        assert f"zoo_configs/{name}.json" in source, key


@pytest.mark.parametrize("name", ROPE)
def test_every_rope_entry_is_typed_and_read_by_its_family(name):
    config = posenc.MODELS[name].config
    layers = posenc.from_config(posenc.MODELS[name])
    assert config.get("model_type") and layers.note is None and layers.model_type == config["model_type"]
    assert len(layers) == config["num_hidden_layers"]
    assert any(layer.rope for layer in layers)
    for layer in layers:
        assert (layer.inv_freq.size == layer.rotary_dim // 2) and (layer.rope == (layer.rotary_dim > 0))
        assert layer.attention_factor >= 1.0


def other_form(config: dict) -> dict | None:
    """The same settings in the other form: legacy rope_theta + rope_scaling <-> a flat rope_parameters."""
    config = copy.deepcopy(dict(config))
    if isinstance(config.get("rope_parameters"), dict):
        params = config.pop("rope_parameters")
        if any(isinstance(v, dict) for v in params.values()):
            return None  # nested by layer type: there is no legacy form
        config["rope_theta"] = params.pop("rope_theta")
        if "partial_rotary_factor" in params:
            config["partial_rotary_factor"] = params.pop("partial_rotary_factor")
        config["rope_scaling"] = params or None
        return config
    if "rope_theta" in config and config.get("model_type") not in ("gpt_neox", "qwen", "gemma3_text", "modernbert"):
        params = {"rope_theta": config.pop("rope_theta"), **(config.pop("rope_scaling", None) or {})}
        if "partial_rotary_factor" in config:
            params["partial_rotary_factor"] = config.pop("partial_rotary_factor")
        config["rope_parameters"] = params
        return config
    return None


ZOO_WITH_REFERENCE = [n for n in ROPE if posenc.MODELS[n].config["model_type"] not in REMOTE_CODE]


def both_forms(name):
    config = dict(posenc.MODELS[name].config)
    return config, [config] + ([other] if (other := other_form(config)) is not None else [])


@pytest.mark.parametrize("name", ZOO_WITH_REFERENCE)
def test_zoo_agrees_with_the_reference_library_in_both_forms(name):
    config, forms = both_forms(name)
    want = posenc.from_config(config)
    for form in forms:
        layers = posenc.from_config(form)
        reference = rotary_reference(form)
        for layer, first in zip(layers, want, strict=True):
            assert layer.rope == first.rope and layer.mixer == first.mixer
            if layer.rope:
                inv, factor = reference[layer.layer_type if layer.layer_type in reference else None]
                np.testing.assert_allclose(layer.inv_freq, inv, rtol=2e-6, atol=1e-30)
                assert layer.attention_factor == pytest.approx(factor, rel=1e-6)


@pytest.mark.parametrize("name", ZOO_WITH_REFERENCE)
def test_zoo_layer_by_layer_against_the_reference_model_in_both_forms(name):
    # the reference library's tiny model of the same config, traced layer by layer (slow: `make test` only)
    for form in both_forms(name)[1]:
        problems = compare(shrink(form))
        assert not problems, "\n".join(problems)


def test_qwen1_logn_and_bases_by_hand():
    # Qwen-1 is remote code: its modeling_qwen.py (QWenAttention) read by hand
    layers = posenc.from_config(posenc.MODELS["Qwen (QWenLMHeadModel, 2048 hidden, 24 layers)"])
    for layer in layers:
        np.testing.assert_allclose(layer.inv_freq, 10000.0 ** (-np.arange(0, 128, 2) / 128), rtol=1e-15)
        np.testing.assert_allclose(
            layer.query_scale([8191, 8192, 16383]), [1.0, math.log(8193, 8192), math.log(16384, 8192)]
        )


def test_layer_patterns_of_the_zoo():
    scout = posenc.from_config(posenc.MODELS["Llama-4-Scout-17B-16E-Instruct"])
    assert [layer.layer for layer in scout if not layer.rope] == list(range(3, 48, 4))
    for layer in scout:
        if layer.rope:  # chunked local attention with RoPE, pairs (2i, 2i+1) as Meta's complex form
            assert (layer.layer_type, layer.attention_chunk_size, layer.layout) == (
                "chunked_attention",
                8192,
                "interleaved",
            )
            assert layer.temperature_tuning is None
        else:  # global attention without positions, queries scaled
            assert (layer.layer_type, layer.attention_chunk_size) == ("full_attention", None)
            assert layer.temperature_tuning == (8192.0, 0.1)
    smol = posenc.from_config(posenc.MODELS["SmolLM3-3B"])
    assert sum(not layer.rope for layer in smol) == 9
    gemma = posenc.from_config(posenc.MODELS["gemma-3-1b-it"])
    assert [layer.layer for layer in gemma if layer.layer_type == "full_attention"] == [5, 11, 17, 23]
    assert {layer.base for layer in gemma} == {10000.0, 1000000.0}
    phi = posenc.from_config(posenc.MODELS["Phi-4-mini-instruct"])
    assert phi[0].head_dim == 128 and phi[0].rotary_dim == 96


def test_the_2026_models_layer_by_layer():
    gemma4 = posenc.from_config(posenc.MODELS["gemma-4-31B-it"])
    full = [layer for layer in gemma4 if layer.layer_type == "full_attention"]
    assert [layer.layer for layer in full] == list(range(5, 60, 6))
    assert {(layer.head_dim, layer.rope_type, layer.base) for layer in full} == {(512, "proportional", 1e6)}
    assert np.count_nonzero(full[0].inv_freq) == 64  # 25 % of 256 pairs turn, the rest are still
    assert {layer.head_dim for layer in gemma4 if layer.layer_type == "sliding_attention"} == {256}
    gemma3 = posenc.from_config(posenc.MODELS["gemma-3-4b-it"])  # class defaults: pattern, bases, heads
    assert [layer.layer for layer in gemma3 if layer.rope_type == "linear"] == [5, 11, 17, 23, 29]
    assert {layer.base for layer in gemma3 if layer.rope_type == "default"} == {10000.0}
    for name in ("Qwen3-Next-80B-A3B", "Qwen3.5-9B"):
        layers = posenc.from_config(posenc.MODELS[name])
        assert [layer.layer for layer in layers if layer.rope] == list(range(3, len(layers), 4))
        assert {layer.mixer for layer in layers if not layer.rope} == {"linear attention"}
        assert {layer.rotary_dim for layer in layers if layer.rope} == {64}
    qwen35 = posenc.from_config(posenc.MODELS["Qwen3.5-9B"])
    assert qwen35[3].mrope_section == (11, 11, 10) and qwen35[3].mrope_interleaved
    vl = posenc.from_config(posenc.MODELS["Qwen3-VL-4B"])
    assert vl[0].mrope_section == (24, 20, 20) and vl[0].mrope_interleaved
    ministral = posenc.from_config(posenc.MODELS["Ministral-3-3B-2512"])
    p = np.array([0, 16383, 16384, 32768, 100000])
    want = 1 + 0.1 * np.log(1 + np.floor(p / 16384))  # get_llama_4_attn_scale, by hand
    for layer in ministral:
        np.testing.assert_allclose(layer.query_scale(p), want, rtol=1e-15)
