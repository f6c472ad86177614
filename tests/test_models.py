"""posenc.MODELS: every entry sourced, every RoPE entry readable by from_config with the right pair count."""

import pytest

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
]


def test_at_least_twenty_models_across_the_families():
    assert len(posenc.MODELS) >= 20
    for family in FAMILIES:
        assert any(name.startswith(family) for name in posenc.MODELS), family


@pytest.mark.parametrize("name", sorted(posenc.MODELS))
def test_every_value_names_its_source(name):
    entry = posenc.MODELS[name]
    assert entry.name == name and entry.scheme in SCHEMES
    assert set(entry.sources) == set(entry.config) | {"scheme"}
    for source in entry.sources.values():
        assert isinstance(source, str) and len(source) > 20


def expected_pairs(config):
    if "qk_rope_head_dim" in config:
        head = config["qk_rope_head_dim"]
    else:
        head = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    fraction = config.get("partial_rotary_factor", config.get("rotary_pct", 1.0))
    return int(head * fraction) // 2


@pytest.mark.parametrize("name", ROPE)
def test_from_config_reads_every_rope_entry(name):
    config = posenc.MODELS[name].config
    layers = posenc.from_config(posenc.MODELS[name])
    assert len(layers) == config["num_hidden_layers"]
    pairs = expected_pairs(config)
    for layer in layers:
        if layer.rope:
            assert layer.inv_freq.shape == (pairs,) and layer.rotary_dim == 2 * pairs
            assert (layer.inv_freq > 0).all() and layer.attention_factor >= 1.0
        else:
            assert layer.inv_freq.size == 0


def test_layer_patterns_of_the_zoo():
    scout = posenc.from_config(posenc.MODELS["Llama-4-Scout-17B-16E-Instruct"])
    assert [layer.layer for layer in scout if not layer.rope] == list(range(3, 48, 4))
    assert all(layer.temperature_tuning == (8192.0, 0.1) for layer in scout if not layer.rope)
    smol = posenc.from_config(posenc.MODELS["SmolLM3-3B"])
    assert sum(not layer.rope for layer in smol) == 9
    gemma = posenc.from_config(posenc.MODELS["gemma-3-1b-it"])
    assert [layer.layer for layer in gemma if layer.layer_type == "full_attention"] == [5, 11, 17, 23]
    assert {layer.base for layer in gemma} == {10000.0, 1000000.0}
    phi = posenc.from_config(posenc.MODELS["Phi-4-mini-instruct"])
    assert phi[0].head_dim == 128 and phi[0].rotary_dim == 96
