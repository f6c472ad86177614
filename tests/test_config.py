"""posenc.from_config against transformers' rope init functions and layer patterns; the query scales by hand."""

import math

import numpy as np
import pytest
import torch
from transformers import (
    DeepseekV3Config,
    Gemma3TextConfig,
    GptOssConfig,
    Llama4TextConfig,
    LlamaConfig,
    ModernBertConfig,
    SmolLM3Config,
)
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
from transformers.models.modernbert.modeling_modernbert import ModernBertRotaryEmbedding

import posenc

HEAD, BASE, ORIGINAL = 64, 10000.0, 512


def reference(config, method, seq_len=None, layer_type=None):
    """transformers' (inv_freq, attention_factor) for ``config`` as float64 NumPy."""
    with torch.no_grad():
        if method == "default":
            inv, factor = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
        else:
            kwargs = {} if layer_type is None else {"layer_type": layer_type}
            inv, factor = ROPE_INIT_FUNCTIONS[method](config, "cpu", seq_len=seq_len, **kwargs)
    return inv.double().numpy(), float(factor)


def cases():
    """(method, rope parameters beyond type/theta, partial factor, seq_len) for every supported rope_type."""
    pairs = HEAD // 2
    rng = np.random.default_rng(0)
    short = [float(x) for x in 1.0 + rng.random(pairs)]
    long = [float(x) for x in 2.0 + 4 * rng.random(pairs)]
    half_short, half_long = short[: pairs // 2], long[: pairs // 2]
    all_cases = [
        ("default", {}, 1.0, None),
        ("linear", {"factor": 4.0}, 1.0, None),
        ("linear", {"factor": 2.5}, 0.5, None),
        ("dynamic", {"factor": 4.0}, 1.0, None),
        ("dynamic", {"factor": 2.0}, 1.0, 3000),
        ("dynamic", {"factor": 2.0}, 0.5, 5000),
        ("yarn", {"factor": 8.0, "original_max_position_embeddings": ORIGINAL}, 1.0, None),
        (
            "yarn",
            {
                "factor": 16.0,
                "original_max_position_embeddings": ORIGINAL,
                "beta_fast": 16.0,
                "beta_slow": 2.0,
                "truncate": False,
            },
            1.0,
            None,
        ),
        (
            "yarn",
            {"factor": 40.0, "original_max_position_embeddings": ORIGINAL, "mscale": 0.707, "mscale_all_dim": 0.707},
            0.5,
            None,
        ),
        ("yarn", {"factor": 4.0, "original_max_position_embeddings": ORIGINAL, "attention_factor": 1.5}, 1.0, None),
        (
            "llama3",
            {
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": ORIGINAL,
            },
            1.0,
            None,
        ),
        (
            "llama3",
            {
                "factor": 32.0,
                "low_freq_factor": 2.0,
                "high_freq_factor": 8.0,
                "original_max_position_embeddings": ORIGINAL,
            },
            0.5,
            None,
        ),
        (
            "longrope",
            {"short_factor": short, "long_factor": long, "original_max_position_embeddings": ORIGINAL},
            1.0,
            None,
        ),
        (
            "longrope",
            {"short_factor": short, "long_factor": long, "original_max_position_embeddings": ORIGINAL},
            1.0,
            4 * ORIGINAL,
        ),
        (
            "longrope",
            {
                "short_factor": half_short,
                "long_factor": half_long,
                "factor": 3.0,
                "original_max_position_embeddings": ORIGINAL,
            },
            0.5,
            2 * ORIGINAL,
        ),
        ("proportional", {"factor": 1.0}, 0.25, None),
        ("proportional", {"factor": 2.0}, 0.5, None),
    ]
    supported = set(posenc.SCALING_METHODS)
    return [c for c in all_cases if c[0] in supported and (c[0] == "default" or c[0] in ROPE_INIT_FUNCTIONS)]


CASES = cases()


def test_every_transformers_rope_type_that_posenc_supports_is_swept():
    swept = {c[0] for c in CASES}
    expected = (set(ROPE_INIT_FUNCTIONS) & set(posenc.SCALING_METHODS)) | {"default"}
    assert swept == expected


def transformers_config(method, params, partial):
    rope = {"rope_type": method, "rope_theta": BASE, **params}
    if partial != 1.0:
        rope["partial_rotary_factor"] = partial
    return LlamaConfig(
        hidden_size=2 * HEAD,
        num_attention_heads=2,
        head_dim=HEAD,
        num_hidden_layers=3,
        max_position_embeddings=4 * ORIGINAL,
        rope_parameters=rope,
    )


def legacy_config(method, params, partial):
    """The same settings as an old config.json: rope_theta beside rope_scaling with "type"."""
    config = {
        "hidden_size": 2 * HEAD,
        "num_attention_heads": 2,
        "num_hidden_layers": 3,
        "max_position_embeddings": 4 * ORIGINAL,
        "rope_theta": BASE,
        "rope_scaling": None if method == "default" else {"type": method, **params},
    }
    if partial != 1.0:
        config["partial_rotary_factor"] = partial
    return config


@pytest.mark.parametrize("method,params,partial,seq_len", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_agrees_with_transformers_in_both_config_forms(method, params, partial, seq_len):
    config = transformers_config(method, params, partial)
    want_inv, want_factor = reference(config, method, seq_len)
    for form in (config.to_dict(), legacy_config(method, params, partial), config):
        layers = posenc.from_config(form, seq_len=seq_len)
        assert len(layers) == 3
        for layer in layers:
            assert layer.rope and layer.inv_freq.dtype == np.float64 and layer.inv_freq.shape == want_inv.shape
            assert layer.rotary_dim == 2 * want_inv.size
            np.testing.assert_allclose(layer.inv_freq, want_inv, rtol=2e-6, atol=1e-12)
            assert layer.attention_factor == pytest.approx(want_factor, rel=1e-6)


def test_default_rope_is_the_roformer_formula_by_hand():
    layers = posenc.from_config({"num_hidden_layers": 1, "head_dim": 8, "rope_theta": 100.0})
    np.testing.assert_allclose(layers[0].inv_freq, [1.0, 100**-0.25, 0.1, 100**-0.75])
    assert layers[0].rotary_dim == 8 and layers[0].attention_factor == 1.0 and layers[0].layer_type == "full_attention"


def test_deepseek_rotates_only_the_rope_part_of_the_head():
    rope = {
        "rope_type": "yarn",
        "rope_theta": BASE,
        "factor": 40.0,
        "original_max_position_embeddings": 4096,
        "beta_fast": 32,
        "beta_slow": 1,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
    }
    config = DeepseekV3Config(
        hidden_size=256,
        num_attention_heads=4,
        num_hidden_layers=2,
        qk_rope_head_dim=32,
        qk_nope_head_dim=64,
        v_head_dim=64,
        max_position_embeddings=163840,
        rope_parameters=rope,
        n_routed_experts=4,
        num_experts_per_tok=2,
        n_group=1,
        topk_group=1,
    )
    want_inv, want_factor = reference(config, "yarn")
    layers = posenc.from_config(config.to_dict())
    assert layers[0].head_dim == 32 and layers[0].rotary_dim == 32
    np.testing.assert_allclose(layers[0].inv_freq, want_inv, rtol=2e-6)
    assert layers[0].attention_factor == pytest.approx(want_factor)


# --- layer patterns ---------------------------------------------------------------------------


def test_llama4_every_fourth_layer_is_nope_with_temperature_tuning():
    config = Llama4TextConfig(
        hidden_size=64,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=32,
        num_hidden_layers=8,
        intermediate_size=32,
        intermediate_size_mlp=64,
        num_local_experts=2,
        no_rope_layer_interval=4,
        attn_temperature_tuning=True,
        floor_scale=16,
        attn_scale=0.5,
    )
    layers = posenc.from_config(config.to_dict())
    assert [int(layer.rope) for layer in layers] == list(config.no_rope_layers) == [1, 1, 1, 0, 1, 1, 1, 0]
    want_inv, _ = reference(config, "default")
    positions = np.array([0, 14, 15, 47, 100])
    for layer in layers:
        if layer.rope:
            np.testing.assert_allclose(layer.inv_freq, want_inv, rtol=2e-6)
            assert layer.temperature_tuning is None
            np.testing.assert_array_equal(layer.query_scale(positions), 1.0)
        else:
            assert layer.rotary_dim == 0 and layer.inv_freq.size == 0 and layer.rope_type is None
            assert layer.temperature_tuning == (16.0, 0.5)
            # as Llama4TextAttention computes it, in float64
            p = torch.tensor(positions, dtype=torch.float64)
            want = torch.log1p(torch.floor((p + 1.0) / 16)) * 0.5 + 1.0
            np.testing.assert_allclose(layer.query_scale(positions), want.numpy(), rtol=1e-15)


def test_smollm3_nope_layers_from_the_list_and_from_the_interval():
    config = SmolLM3Config(
        hidden_size=64,
        num_attention_heads=2,
        num_key_value_heads=1,
        num_hidden_layers=12,
        intermediate_size=32,
        no_rope_layer_interval=3,
    )
    from_list = posenc.from_config(config.to_dict())
    assert [int(layer.rope) for layer in from_list] == list(config.no_rope_layers)
    legacy = {
        "hidden_size": 64,
        "num_attention_heads": 2,
        "num_hidden_layers": 12,
        "rope_theta": 2e6,
        "no_rope_layer_interval": 3,
    }
    assert [layer.rope for layer in posenc.from_config(legacy)] == [bool(f) for f in config.no_rope_layers]
    assert all(layer.temperature_tuning is None for layer in from_list)


def test_gemma3_local_and_global_bases_match_its_rotary_embedding():
    legacy = {
        "num_hidden_layers": 7,
        "head_dim": 32,
        "hidden_size": 64,
        "num_attention_heads": 2,
        "rope_theta": 50000.0,
        "rope_local_base_freq": 1000.0,
        "sliding_window_pattern": 3,
        "rope_scaling": {"rope_type": "linear", "factor": 8.0},
    }
    config = Gemma3TextConfig(
        num_hidden_layers=7,
        head_dim=32,
        hidden_size=64,
        num_attention_heads=2,
        num_key_value_heads=1,
        rope_theta=50000.0,
        rope_local_base_freq=1000.0,
        sliding_window_pattern=3,
        rope_scaling={"rope_type": "linear", "factor": 8.0},
    )
    rotary = Gemma3RotaryEmbedding(config)
    for form in (legacy, config.to_dict()):
        layers = posenc.from_config(form)
        assert [layer.layer_type for layer in layers] == config.layer_types
        for layer in layers:
            want = getattr(rotary, f"{layer.layer_type}_inv_freq").double().numpy()
            np.testing.assert_allclose(layer.inv_freq, want, rtol=2e-6)
            assert layer.base == (1000.0 if layer.layer_type == "sliding_attention" else 50000.0)
            assert layer.rope_type == ("default" if layer.layer_type == "sliding_attention" else "linear")


def test_modernbert_global_every_third_layer_matches_its_rotary_embedding():
    legacy = {
        "num_hidden_layers": 7,
        "hidden_size": 64,
        "num_attention_heads": 2,
        "global_rope_theta": 160000.0,
        "local_rope_theta": 10000.0,
        "global_attn_every_n_layers": 3,
    }
    config = ModernBertConfig(
        num_hidden_layers=7,
        hidden_size=64,
        num_attention_heads=2,
        intermediate_size=32,
        global_rope_theta=160000.0,
        local_rope_theta=10000.0,
        global_attn_every_n_layers=3,
    )
    rotary = ModernBertRotaryEmbedding(config)
    for form in (legacy, config.to_dict()):
        layers = posenc.from_config(form)
        assert [layer.layer_type for layer in layers] == config.layer_types
        assert [layer.layer for layer in layers if layer.layer_type == "full_attention"] == [0, 3, 6]
        for layer in layers:
            want = getattr(rotary, f"{layer.layer_type}_inv_freq").double().numpy()
            np.testing.assert_allclose(layer.inv_freq, want, rtol=2e-6)


def test_gpt_oss_layer_types_and_yarn_without_truncation():
    config = GptOssConfig(
        num_hidden_layers=4,
        hidden_size=64,
        head_dim=32,
        num_attention_heads=2,
        num_key_value_heads=1,
        intermediate_size=32,
        num_local_experts=2,
    )
    want_inv, want_factor = reference(config, "yarn")
    layers = posenc.from_config(config.to_dict())
    assert [layer.layer_type for layer in layers] == config.layer_types
    for layer in layers:
        np.testing.assert_allclose(layer.inv_freq, want_inv, rtol=2e-6)
        assert layer.attention_factor == pytest.approx(want_factor)


def test_nested_rope_parameters_with_a_nope_layer_type():
    config = {
        "num_hidden_layers": 3,
        "head_dim": 8,
        "layer_types": ["full_attention", "nope", "full_attention"],
        "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 100.0}, "nope": None},
    }
    assert [layer.rope for layer in posenc.from_config(config)] == [True, False, True]


def test_mrope_section_is_kept():
    config = {
        "num_hidden_layers": 1,
        "head_dim": 16,
        "rope_theta": 100.0,
        "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]},
    }
    (layer,) = posenc.from_config(config)
    assert layer.mrope_section == (2, 3, 3)
    np.testing.assert_allclose(layer.inv_freq, posenc.rope_inv_freq(16, 100.0))


def test_results_are_read_only_and_zero_layers_is_empty():
    (layer,) = posenc.from_config({"num_hidden_layers": 1, "head_dim": 8, "rope_theta": 100.0})
    with pytest.raises(ValueError):
        layer.inv_freq[0] = 0.0
    assert posenc.from_config({"num_hidden_layers": 0, "head_dim": 8, "rope_theta": 100.0}) == []


# --- the query scales, by hand ----------------------------------------------------------------


def test_logn_attention_scale_by_hand():
    # Qwen's logn_list: log(i, L) for i = p + 1 > L, else 1
    got = posenc.logn_attention_scale([0, 8190, 8191, 8192, 16383], 8192)
    np.testing.assert_allclose(got, [1.0, 1.0, 1.0, math.log(8193, 8192), 14 / 13], rtol=1e-14)


def test_attention_temperature_scale_by_hand():
    got = posenc.attention_temperature_scale([0, 8190, 8191, 16383, 81919], floor_scale=8192, attn_scale=0.1)
    np.testing.assert_allclose(got, [1.0, 1.0, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(3), 1 + 0.1 * math.log(11)])


def test_qwen_logn_applies_to_every_layer():
    config = {
        "num_hidden_layers": 2,
        "hidden_size": 32,
        "num_attention_heads": 2,
        "rotary_emb_base": 10000,
        "use_logn_attn": True,
        "seq_length": 64,
    }
    for layer in posenc.from_config(config):
        np.testing.assert_allclose(layer.query_scale([10, 127]), [1.0, 7 / 6], rtol=1e-14)


# --- errors name the field -------------------------------------------------------------------

GOOD = {"num_hidden_layers": 2, "head_dim": 16, "max_position_embeddings": 1024, "rope_theta": 100.0}


@pytest.mark.parametrize(
    "change,error,field",
    [
        ({"rope_scaling": {"type": "bogus", "factor": 2.0}}, ValueError, "rope_type"),
        ({"rope_scaling": {"type": "linear"}}, ValueError, "factor"),
        ({"rope_scaling": {"type": "linear", "factor": "2"}}, TypeError, "factor"),
        ({"rope_scaling": {"type": "mrope", "mrope_section": [2, 2, 2]}}, ValueError, "mrope_section"),
        ({"rope_scaling": {"type": "mrope"}}, ValueError, "mrope_section"),
        ({"partial_rotary_factor": 0.0}, ValueError, "partial_rotary_factor"),
        ({"partial_rotary_factor": 1.5}, ValueError, "partial_rotary_factor"),
        ({"partial_rotary_factor": 0.2}, ValueError, "partial_rotary_factor"),
        ({"rope_theta": "1e4"}, TypeError, "rope_theta"),
        ({"rope_theta": None}, ValueError, "rope_theta"),
        ({"num_hidden_layers": None}, ValueError, "num_hidden_layers"),
        ({"num_hidden_layers": 2.5}, TypeError, "num_hidden_layers"),
        ({"head_dim": None}, ValueError, "hidden_size"),
        ({"layer_types": ["full_attention"]}, ValueError, "layer_types"),
        ({"no_rope_layers": [1, "0"]}, TypeError, "no_rope_layers"),
        ({"rope_scaling": {"type": "yarn", "factor": 4.0, "truncate": "no"}}, TypeError, "truncate"),
        (
            {"rope_scaling": {"type": "dynamic", "factor": 2.0}, "max_position_embeddings": None},
            ValueError,
            "max_position_embeddings",
        ),
        ({"use_logn_attn": True}, ValueError, "seq_length"),
        (
            {
                "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 10.0}},
                "layer_types": ["full_attention", "sliding_attention"],
            },
            ValueError,
            "sliding_attention",
        ),
    ],
)
def test_bad_values_get_errors_naming_the_field(change, error, field):
    with pytest.raises(error, match=field):
        posenc.from_config({**GOOD, **change})


def test_a_config_that_is_not_a_mapping_and_a_non_rope_zoo_model():
    with pytest.raises(TypeError, match="config"):
        posenc.from_config("config.json")
    # the zoo's GPT-2 is read as its model runs: a learned table of n_positions rows, added at the input
    layers = posenc.from_config(posenc.MODELS["GPT-2"])
    assert {layer.scheme for layer in layers} == {"learned"} and not any(layer.rope for layer in layers)
    assert layers[0].position_params["table_size"] == posenc.MODELS["GPT-2"].config["n_positions"]
    # its position fields alone (no model_type, no rope field) are not a RoPE config: one clear error
    with pytest.raises(ValueError, match="rope_theta"):
        posenc.from_config(posenc.MODELS["GPT-2"].config)


@pytest.mark.parametrize(
    "scaling, length, factor",
    [
        ({"factor": 4.0, "original_max_position_embeddings": ORIGINAL}, ORIGINAL, 4.0),
        ({"factor": 4.0}, 8 * ORIGINAL, 4.0),  # no original length: max_position_embeddings is taken as L
        ({"original_max_position_embeddings": ORIGINAL}, ORIGINAL, 8.0),  # no factor: posenc takes max / L
    ],
)
def test_yarn_reads_max_position_embeddings_only_where_a_field_is_missing(scaling, length, factor):
    """transformers 5.23 takes YaRN's L from original_max_position_embeddings, else from max_position_embeddings
    (``standardize_rope_params``), and posenc.from_config does the same (chapter 11's deployment box). Without a
    ``factor`` transformers refuses the config (its validation names the key); posenc takes max / L, the rule of
    ``_compute_yarn_parameters`` for a factor of None."""
    config = {
        "hidden_size": 2 * HEAD,
        "num_attention_heads": 2,
        "num_hidden_layers": 1,
        "max_position_embeddings": 8 * ORIGINAL,
        "rope_theta": BASE,
        "rope_scaling": {"rope_type": "yarn", **scaling},
    }
    expected = posenc.scaled_inv_freq("yarn", HEAD, BASE, factor, length)
    layer = posenc.from_config(config)[0]
    np.testing.assert_allclose(layer.inv_freq, expected[0], rtol=1e-12)
    assert layer.attention_factor == pytest.approx(expected[1], rel=1e-12)
    if "factor" not in scaling:
        with pytest.raises(KeyError, match="factor"):
            LlamaConfig(**config)
        return
    inv, attention_factor = reference(LlamaConfig(**config), "yarn")
    np.testing.assert_allclose(inv, expected[0], rtol=1e-6)
    assert attention_factor == pytest.approx(expected[1], rel=1e-6)


# --- the family rules the issue named, each against the reference library ----------------------------


def stored(name):
    from stored_configs import text_config

    return text_config(name)


def test_olmo3_legacy_scaling_reaches_the_full_attention_layers_only():
    layers = posenc.from_config(stored("Olmo-3.1-32B-Instruct"))
    assert {x.rope_type for x in layers if x.layer_type == "full_attention"} == {"yarn"}
    assert {x.rope_type for x in layers if x.layer_type == "sliding_attention"} == {"default"}
    config = __import__("transformers").Olmo3Config(**{k: v for k, v in stored("Olmo-3.1-32B-Instruct").items()})
    assert config.rope_parameters["sliding_attention"]["rope_type"] == "default"  # the reference agrees


def test_exaone4_and_cohere2_leave_the_global_layers_of_a_windowed_model_without_rope():
    layers = posenc.from_config(stored("EXAONE-4.0-32B"))
    assert [x.layer for x in layers if not x.rope] == list(range(3, 64, 4))
    assert all(x.layer_type == "full_attention" for x in layers if not x.rope)
    windowless = {**stored("EXAONE-4.0-32B"), "sliding_window": None}
    assert all(x.rope for x in posenc.from_config(windowless))  # no window: every layer rotates
    cohere = {"model_type": "cohere2", "num_hidden_layers": 8, "head_dim": 64, "sliding_window": 4096}
    assert [x.rope for x in posenc.from_config(cohere)] == [True, True, True, False] * 2
    assert not any(x.rope for x in posenc.from_config({**cohere, "sliding_window": None}))


def test_layers_that_are_not_attention_carry_no_rotation():
    for name, mixer, count in (
        ("Qwen3.5-9B", "linear attention", 24),
        ("LFM2.5-VL-1.6B", "convolution", 10),
        ("Llama-3.2-90B-Vision-Instruct", "cross-attention", 20),
    ):
        layers = posenc.from_config(stored(name))
        others = [x for x in layers if x.mixer != "attention"]
        assert len(others) == count and {x.mixer for x in others} == {mixer}
        assert all(not x.rope and x.rotary_dim == 0 and x.inv_freq.size == 0 for x in others)


def test_gemma3_class_defaults_fill_what_the_config_leaves_out():
    layers = posenc.from_config(stored("gemma-3-27b-it"))  # no pattern, no bases in the config
    assert [x.layer for x in layers if x.layer_type == "full_attention"] == list(range(5, 62, 6))
    assert {(x.layer_type, x.base, x.rope_type) for x in layers} == {
        ("full_attention", 1e6, "linear"),
        ("sliding_attention", 1e4, "default"),
    }
    small = posenc.from_config(stored("gemma-3-4b-it"))  # no head counts either: the class's 8 heads of 256
    assert {x.head_dim for x in small} == {256}


def test_llama4_empty_no_rope_layers_falls_back_to_the_interval():
    config = {"model_type": "llama4_text", "num_hidden_layers": 8, "head_dim": 16, "no_rope_layers": []}
    layers = posenc.from_config(config)
    reference = Llama4TextConfig(num_hidden_layers=8, head_dim=16, no_rope_layers=[])
    assert [int(x.rope) for x in layers] == reference.no_rope_layers == [1, 1, 1, 0] * 2
    assert [x.layer_type for x in layers] == reference.layer_types
    assert {x.attention_chunk_size for x in layers if x.rope} == {reference.attention_chunk_size}


def test_rope_scaling_wins_over_rope_parameters_as_in_the_reference():
    config = {
        "model_type": "llama",
        "num_hidden_layers": 1,
        "head_dim": 64,
        "rope_theta": 1e4,
        "rope_scaling": {"rope_type": "linear", "factor": 4.0},
        "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e4},
    }
    reference = LlamaConfig(**{k: v for k, v in config.items() if k != "model_type"})
    assert reference.rope_parameters["factor"] == 4.0
    np.testing.assert_allclose(posenc.from_config(config)[0].inv_freq, posenc.rope_inv_freq(64, 1e4) / 4.0)


@pytest.mark.parametrize("path", [("llm_config",), ("language_config",), ("thinker_config", "text_config")])
def test_nested_language_model_configs(path):
    inner = {"model_type": "qwen2", "num_hidden_layers": 2, "head_dim": 64, "rope_theta": 1e6}
    config = inner
    for key in reversed(path):
        config = {"model_type": "some_multimodal_model", key: config}
    layers = posenc.from_config(config)
    assert layers.nested == ".".join(path) and layers.model_type == "qwen2" and layers.note is None
    np.testing.assert_allclose(layers[0].inv_freq, posenc.rope_inv_freq(64, 1e6))


def test_a_config_without_layers_anywhere_names_the_nestings():
    with pytest.raises(ValueError, match="text_config"):
        posenc.from_config({"model_type": "x", "vision_config": {"depth": 2}})


def test_interleaved_mrope_flag_and_deepseek_softmax_multiplier_per_layer():
    (layer,) = posenc.from_config({**stored("Qwen3-VL-4B"), "num_hidden_layers": 1})
    assert layer.mrope_section == (24, 20, 20) and layer.mrope_interleaved
    (layer,) = posenc.from_config({**stored("Qwen2.5-VL-7B-Instruct"), "num_hidden_layers": 1})
    assert layer.mrope_section == (16, 24, 24) and not layer.mrope_interleaved
    v3 = posenc.from_config(posenc.MODELS["DeepSeek-V3"])
    # yarn_get_mscale(40, 1.0) ** 2, as DeepseekV3Attention scales its softmax
    assert v3[0].softmax_scale == pytest.approx((0.1 * math.log(40) + 1) ** 2, rel=1e-15)


def test_logn_scale_stops_where_qwens_table_stops():
    assert posenc.logn_attention_scale([32766], 8192)[0] == pytest.approx(math.log(32767, 8192))
    with pytest.raises(ValueError, match="32766"):
        posenc.logn_attention_scale([32767], 8192)
