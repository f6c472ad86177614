"""Real configs of released models (stored_configs: the zoo's in src/posenc/zoo_configs, the others in
tests/data/configs, each with its source in its folder's SOURCES.json), read layer by layer.

For each stored config, taken whole as stored (nested or flat: the reference library builds its own
configuration class from it and takes its language model's sub-config, so its renaming of nested model types
is part of what is compared): posenc's reading agrees with the reference library's own rotary class built
from the full config (every layer type's speeds and attention factor) and with the library's tiny model of the
same config made narrow (:func:`posenc.reference_check.check_against_reference`: same layer count and
pattern, head size, windows and rope fields), layer by layer: rotation, sliding window and chunk size,
softmax scale; ``python -m posenc explain`` reads it without error and reports what from_config reads.
"""

import json

import numpy as np
import pytest
from family_trace import check, problems, rotary_reference
from stored_configs import CONFIGS, FOLDERS, SOURCES, load
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

import posenc
from posenc.explain import explain

#: Stored configs of families the reference library does not have (remote code: a model_type transformers does
#: not know); posenc reads them with their own family rules or generically, with a note.
REMOTE_CODE = {n for n in CONFIGS if load(n).get("model_type") not in CONFIG_MAPPING}


def test_every_stored_config_names_its_source():
    names = [p.stem for folder in FOLDERS for p in folder.glob("*.json") if p.stem != "SOURCES"]
    assert len(names) == len(set(names)), "a config stored in both folders"
    assert set(CONFIGS) == set(names)
    zoo, tests = (set(json.loads((folder / "SOURCES.json").read_text())) for folder in FOLDERS)
    assert zoo == {p.stem for p in FOLDERS[0].glob("*.json")} - {"SOURCES"} and not zoo & tests
    assert zoo <= set(posenc.MODELS), "a config in the package that no zoo entry reads"
    for name, source in SOURCES.items():
        assert set(source) == {"model", "repository", "path", "commit", "where"}, name
        assert len(source["commit"]) == 40 and source["repository"].count("/") == 1


def test_at_least_fifteen_outside_the_zoo_across_the_kinds():
    zoo_types = {entry.config.get("model_type") for entry in posenc.MODELS.values()}
    outside = [n for n in CONFIGS if n not in posenc.MODELS and n not in REMOTE_CODE]
    assert len(outside) >= 15
    kinds = set()
    for name in outside:
        layers = posenc.from_config(load(name))
        kinds |= {layer.rope_type for layer in layers if layer.rope}
        if any(layer.rotary_dim not in (0, layer.head_dim) for layer in layers):
            kinds.add("partial")
        if any(layer.mixer != "attention" for layer in layers) or any(
            layer.mixer == "attention" and not layer.rope for layer in layers
        ):
            kinds.add("hybrid")
        if layers.nested or any(layer.mrope_section for layer in layers):
            kinds.add("multimodal")
    assert {"yarn", "longrope", "llama3", "partial", "hybrid", "multimodal"} <= kinds, kinds
    assert zoo_types  # the zoo is typed too (every RoPE entry names its model_type)


#: Stored configs that do not agree with the reference library today, and why: each an expected failure of the
#: two tests below, checked strictly. Empty it as posenc's reading (or the stored file) is fixed.
REFERENCE_DISAGREES_TODAY = {
    "Ministral-3-3B-2512": "the stored copy (mlc-llm's preset) names model_type 'ministral3', a text class, at the "
    "top of a multimodal config (architectures Mistral3ForConditionalGeneration): transformers reads the top level "
    "as that text class and leaves text_config a dict, so its check cannot run",
    "DeepSeek-V4-Flash": "posenc's reading carries a note (compressed entries not modelled); the rotary module keys "
    "its speeds by 'main' and 'compress', not by layer type, and the tiny model is over MAX_ELEMENTS: "
    "tests/test_config_nested.py compares each layer's rotation with the module directly",
}


def with_reference(names) -> list:
    return [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=REFERENCE_DISAGREES_TODAY[n]))
        if n in REFERENCE_DISAGREES_TODAY
        else n
        for n in names
        if n not in REMOTE_CODE
    ]


@pytest.mark.parametrize("name", with_reference(CONFIGS))
def test_speeds_agree_with_the_reference_rotary_class(name):
    raw = load(name)
    layers = posenc.from_config(raw)
    if not any(layer.rope for layer in layers):  # no layer rotates: the library's model has no rotary class either
        with pytest.raises(LookupError, match="no rotary class"):
            rotary_reference(raw)
        return
    assert layers.note is None, layers.note
    reference = rotary_reference(raw)
    checked = 0
    for layer in layers:
        if not layer.rope:
            continue
        key = layer.layer_type if layer.layer_type in reference else None
        want, factor = reference[key]
        if layer.rope_type == "proportional":  # speed 0 for the pairs that stay still, in both
            assert layer.inv_freq.shape == want.shape
        np.testing.assert_allclose(layer.inv_freq, want, rtol=2e-6, atol=1e-30)
        assert layer.attention_factor == pytest.approx(factor, rel=1e-6)
        checked += 1
    assert checked


@pytest.mark.parametrize("name", with_reference(CONFIGS))
def test_layer_by_layer_against_the_reference_model(name):
    # rotation, sliding window and chunk size, softmax scale: one tiny model per config
    result = check(load(name))
    assert not problems(result), "\n".join(problems(result))
    assert result.n_agree == result.n_layers == len(posenc.from_config(load(name)))


def test_a_remote_code_config_is_read_generically_with_a_note():
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    raw = load("internlm2_5-7b")
    layers = posenc.from_config(raw)
    assert layers.family == "generic" and "internlm2" in layers.note
    result = check(raw)  # the reference library cannot check it: it says why
    assert result.available and result.n_layers is None and "no model_type 'internlm2'" in result.reason
    # InternLM2's dynamic NTK is the library's "dynamic" rope for the same parameters
    reference = LlamaConfig(
        hidden_size=raw["hidden_size"],
        num_attention_heads=raw["num_attention_heads"],
        max_position_embeddings=raw["max_position_embeddings"],
        rope_parameters={"rope_type": "dynamic", "factor": 2.0, "rope_theta": raw["rope_theta"]},
    )
    for seq_len in (None, 3 * raw["max_position_embeddings"]):
        want, _ = ROPE_INIT_FUNCTIONS["dynamic"](reference, "cpu", seq_len=seq_len)
        got = posenc.from_config(raw, seq_len=seq_len)[0].inv_freq
        np.testing.assert_allclose(got, want.double().numpy(), rtol=2e-6)


@pytest.mark.parametrize("name", CONFIGS)
def test_explain_reads_every_stored_config_and_agrees_with_from_config(name):
    config = load(name)
    explanation = explain(config)
    layers = posenc.from_config(config)
    assert explanation.n_layers == len(layers)
    assert sorted(i for group in explanation.groups for i in group.layers) == list(range(len(layers)))
    for group in explanation.groups:
        first = layers[group.layers[0]]
        if group.rotation is None:
            assert not first.rope
            continue
        rotation = explanation.rotations[group.rotation]
        np.testing.assert_allclose(
            rotation.wavelengths[first.inv_freq > 0], 2 * np.pi / first.inv_freq[first.inv_freq > 0]
        )
        assert rotation.rotary_dim == first.rotary_dim and rotation.attention_factor == first.attention_factor
