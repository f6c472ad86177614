"""Every text model of the reference library is read by posenc.from_config, and the families added for it read as
the reference runs them.

The walker (:func:`test_every_text_model_type_is_read_from_its_class_defaults`) builds the class-default config of
every ``model_type`` of ``transformers``' ``CONFIG_MAPPING`` (no model is built) and reads it: a RoPE model through
:mod:`posenc.config_families`, any other scheme through :mod:`posenc.config_schemes`. Which model types are text
models is computed from the reference library, never listed by name: a model type of one of its text auto-classes
(causal LM, masked LM, sequence-to-sequence LM, speech-to-text, sequence classification, text encoding:
``tests/transformers_schemes.py``'s ``TEXT_MAPPINGS``, the list the scheme table is generated from), or a model type
that holds one (its ``get_text_config(decoder=True)`` is a sub-config of such a type: LLaVA's Llama, RAG's BART,
ColPali's Gemma). A composite is read through the language model it holds (Gemma 3, Llama 4, LLaVA) or, where the
model runs several stacks, through all of them (Dia, Moonshine, BLT).

The family tests check each family added for the walker against the reference: :func:`family_trace.compare` (a
tiny model traced layer by layer) where it can build the family's model, else the family's own rotary module (or
sinusoid table) built from the config, its speeds compared with posenc's and its apply function replayed on a random
probe against :func:`posenc.reference_check.expected_rotation` (speeds, rotated width and pair layout at once).
"""

import importlib
import logging
import math
import sys
import warnings

import numpy as np
import pytest
import torch
from family_trace import POSITIONS, build_config, check, compare, expected_rotation, problems, record, rotation_of

import posenc
from posenc.config_schemes import SCHEMES


def _quiet():
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)


def _default(model_type: str, **fields) -> dict:
    from transformers import CONFIG_MAPPING

    _quiet()
    return CONFIG_MAPPING[model_type](**fields).to_dict()


def _tolerance(base: float, positions, probe: np.ndarray) -> np.ndarray:
    """The reference computes its angles in float32: an error of about 1e-7 ln(base) per unit of position."""
    pos = np.asarray(positions, dtype=np.float64)
    return (2e-6 + 3e-7 * (1 + math.log(base)) * pos[:, None, None]) * (1.0 + np.abs(probe).max())


def _replay_problem(layer, rotary, apply, positions=POSITIONS, seed=0) -> str | None:
    """Why posenc's ``layer`` is not what the reference's ``rotary`` module and ``apply`` function do (None if it is).

    ``rotary(x, position_ids) -> (cos, sin)``, ``apply(q, k, cos, sin) -> (q, k)``: the probe (seq, 1 head,
    head_dim) goes in as the query, in the (batch, heads, seq, head_dim) order of the modeling code.
    """
    rng = np.random.default_rng(seed)
    probe = rng.standard_normal((len(positions), 1, layer.head_dim))
    x = torch.zeros(1, len(positions), layer.head_dim, dtype=torch.float64)
    with torch.no_grad():
        cos, sin = rotary(x, torch.tensor([list(positions)]))
        query = torch.tensor(probe).permute(1, 0, 2)[None]
        out = apply(query, query.clone(), cos, sin)[0][0].permute(1, 0, 2).double().numpy()
    tolerance = _tolerance(layer.base, positions, probe)
    wanted = expected_rotation(layer, probe, np.asarray(positions))
    if any(np.all(np.abs(out - want) <= tolerance) for want in wanted.values()):
        return None
    error = min(np.abs(out - want).max() for want in wanted.values())
    return f"layer {layer.layer} ({layer.stack}): differs by {error:.2g}"


def _traced_problems(raw: dict, positions=POSITIONS) -> list[str]:
    """:func:`family_trace.compare` without its narrowing (for families whose tiny model needs its own head count)."""
    torch.manual_seed(0)
    layers = posenc.from_config(raw)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        rec = record(build_config(raw), positions)
    finally:
        torch.set_default_dtype(previous)
    calls: dict[int, list] = {}
    for call in rec.rotary:
        calls.setdefault(call["layer"], []).append(call)
    out = [f"layer count: transformers {rec.n_layers}, posenc {len(layers)}"] if rec.n_layers != len(layers) else []
    for layer in layers:
        if bool(calls.get(layer.layer)) != layer.rope:
            out.append(f"layer {layer.layer}: transformers rotates {bool(calls.get(layer.layer))}, posenc {layer.rope}")
            continue
        for call in calls.get(layer.layer, []):
            probe, rotated = rotation_of(call, len(positions))
            tolerance = _tolerance(layer.base, positions, probe)
            wanted = expected_rotation(layer, probe, np.asarray(positions, dtype=np.float64))
            if not any(np.all(np.abs(rotated - want) <= tolerance) for want in wanted.values()):
                out.append(f"layer {layer.layer}: rotation differs")
    return out


def _stacks(layers) -> dict[str, list]:
    out: dict[str, list] = {}
    for layer in layers:
        out.setdefault(layer.stack, []).append(layer)
    return out


# --- GPT-J and CodeGen: base 10000 hard-coded, rotary_dim dims in interleaved pairs -----------------------------


def test_gptj_class_defaults_read_the_hard_coded_sinusoids():
    from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions

    layers = posenc.from_config(_default("gptj"))
    assert len(layers) == 28 and layers.family == "gptj"
    assert {(la.head_dim, la.rotary_dim, la.base, la.layout) for la in layers} == {(256, 64, 10000.0, "interleaved")}
    # the table the attention gathers its sin and cos from: [sin(p * theta_i) | cos(p * theta_i)]
    table = create_sinusoidal_positions(1000, 64).double().numpy()
    angles = np.arange(1000)[:, None] * layers[0].inv_freq[None, :]
    np.testing.assert_allclose(table, np.concatenate([np.sin(angles), np.cos(angles)], axis=1), atol=2e-4)


def test_gptj_layer_by_layer_and_its_rope_fields_are_not_read():
    raw = {"model_type": "gptj", "n_embd": 64, "n_head": 2, "n_layer": 3, "rotary_dim": 16, "vocab_size": 100}
    assert compare(raw) == []
    # the model reads no rope field: a rope_theta in the config changes neither the model nor the reading
    assert compare({**raw, "rope_theta": 500000.0}) == []
    assert posenc.from_config({**raw, "rope_theta": 500000.0})[0].base == 10000.0


def test_gptj_without_rotary_dim_rotates_the_whole_head_only_with_one_head():
    raw = {"model_type": "gptj", "n_embd": 64, "n_head": 1, "n_layer": 2, "rotary_dim": None}
    assert posenc.from_config(raw)[0].rotary_dim == 64
    with pytest.raises(ValueError, match="rotary_dim"):
        posenc.from_config({**raw, "n_head": 2})


def test_codegen_layer_by_layer():
    # CodeGen's attention splits its fused qkv in mp_num = 4 blocks: the head count must be a multiple of 4, which
    # compare's one-head narrowing is not; traced here as given
    raw = {"model_type": "codegen", "n_embd": 128, "n_head": 4, "n_layer": 2, "rotary_dim": 16, "vocab_size": 100}
    layers = posenc.from_config(raw)
    assert [(la.head_dim, la.rotary_dim, la.layout) for la in layers] == [(32, 16, "interleaved")] * 2
    assert _traced_problems(raw) == []
    assert posenc.from_config(_default("codegen"))[0].rotary_dim == 64


# --- RoFormer: its own sinusoid table, every layer ---------------------------------------------------------------


def test_roformer_reads_its_sinusoid_table_and_rotation():
    from transformers.models.roformer.modeling_roformer import (
        RoFormerSelfAttention,
        RoFormerSinusoidalPositionalEmbedding,
    )

    raw = {"model_type": "roformer", "hidden_size": 64, "num_attention_heads": 2, "num_hidden_layers": 3}
    layers = posenc.from_config(raw)
    assert [(la.rope, la.head_dim, la.rotary_dim, la.base, la.layout) for la in layers] == [
        (True, 32, 32, 10000.0, "interleaved")
    ] * 3
    table = RoFormerSinusoidalPositionalEmbedding(1000, 32)
    with torch.no_grad():
        table.weight.copy_(table.create_weight())

    def rotary(x, position_ids):  # the encoder's sinusoidal_pos, as the attention gets it: [sin | cos]
        both = table(position_ids.shape, position_ids=position_ids[0])[None, None]
        return both, None

    def apply(q, k, both, _):
        return RoFormerSelfAttention.apply_rotary_position_embeddings(both.double(), q, k)

    assert _replay_problem(layers[0], rotary, apply) is None
    class_default = posenc.from_config(_default("roformer"))
    assert len(class_default) == 12 and class_default[0].rotary_dim == 64


# --- GLM-4.5 (glm4_moe): head size hidden // heads without head_dim, an odd width as the model rotates it ------


def test_glm4_moe_class_defaults_read_as_the_rotary_module_computes_them():
    from transformers import CONFIG_MAPPING
    from transformers.models.glm4_moe.modeling_glm4_moe import Glm4MoeRotaryEmbedding

    _quiet()
    config = CONFIG_MAPPING["glm4_moe"]()
    layers = posenc.from_config(config.to_dict())
    assert len(layers) == 46
    reference = Glm4MoeRotaryEmbedding(config).inv_freq.double().numpy()
    # head_dim 4096 // 96 = 42 (the class has no head_dim), 21 = int(42 * 0.5) speeds' width, 22 dims rotated
    assert (layers[0].head_dim, layers[0].rotary_dim) == (42, 2 * len(reference)) == (42, 22)
    np.testing.assert_allclose(layers[0].inv_freq, reference, rtol=1e-6)


@pytest.mark.parametrize(
    "sizes",
    [{"hidden_size": 84}, {"hidden_size": 64, "head_dim": 64}, {"hidden_size": 64, "head_dim": 50}],
    ids=["class-head-odd-width", "head_dim", "head_dim-odd-width"],
)
def test_glm4_moe_layer_by_layer(sizes):
    raw = {
        "model_type": "glm4_moe",
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "num_hidden_layers": 2,
        "vocab_size": 100,
        "intermediate_size": 32,
        "moe_intermediate_size": 16,
        "n_routed_experts": 4,
        "num_experts_per_tok": 2,
        **sizes,
    }
    assert compare(raw) == []


def test_glm4_moe_odd_width_with_a_scaled_rope_is_refused_by_name():
    raw = {"model_type": "glm4_moe", "hidden_size": 84, "num_attention_heads": 2, "num_hidden_layers": 1}
    rope = {"rope_type": "yarn", "factor": 4.0, "rope_theta": 10000.0, "original_max_position_embeddings": 4096}
    with pytest.raises(ValueError, match="odd rotated width 21"):
        posenc.from_config({**raw, "rope_parameters": rope})


# --- Cohere Compass: rope parameters per layer type (null: NoPE), M-RoPE recomposition ------------------------------


COMPASS = {
    "model_type": "cohere_compass_text",
    "hidden_size": 256,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "num_hidden_layers": 4,
    "intermediate_size": 32,
    "vocab_size": 100,
    "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
    "sliding_window": 4,
    "rope_parameters": {
        "sliding_attention": {"rope_type": "default", "rope_theta": 50000.0, "mrope_section": [24, 20, 20]},
        "full_attention": None,
        "rope_theta": 50000.0,  # a dangling entry of the released configs: the class drops it
    },
}


def test_cohere_compass_layer_by_layer():
    torch.manual_seed(0)
    result = check(COMPASS)  # rotation, sliding window, softmax scale
    assert problems(result) == [] and result.n_agree == 4
    layers = posenc.from_config(COMPASS)
    assert [la.rope for la in layers] == [True, True, True, False]
    assert layers[0].mrope_section == (24, 20, 20) and layers[0].mrope_interleaved
    assert [la.sliding_window for la in layers] == [4, 4, 4, None]
    nested = posenc.from_config({"model_type": "cohere_compass", "text_config": COMPASS})
    assert nested.nested == "text_config" and [la.rope for la in nested] == [True, True, True, False]


def test_cohere_compass_class_default_is_refused_as_the_reference_refuses_it():
    # the class default rope_parameters is {}: CohereCompassRotaryEmbedding reads rope_parameters[layer_type]
    from transformers import CONFIG_MAPPING
    from transformers.models.cohere_compass.modeling_cohere_compass import CohereCompassRotaryEmbedding

    _quiet()
    config = CONFIG_MAPPING["cohere_compass_text"]()
    with pytest.raises(KeyError):
        CohereCompassRotaryEmbedding(config)
    for raw in (config.to_dict(), {**COMPASS, "rope_parameters": {"rope_type": "default", "rope_theta": 1e4}}):
        with pytest.raises(ValueError, match=r"rope_parameters.*each layer type"):
            posenc.from_config(raw)


# --- Dia, Moonshine, BLT: several stacks ---------------------------------------------------------------------------


def _module(model_type: str):
    return importlib.import_module(f"transformers.models.{model_type}.modeling_{model_type}")


def test_dia_reads_its_encoder_and_decoder_with_their_own_rotary_modules():
    from transformers import CONFIG_MAPPING

    _quiet()
    dia = _module("dia")
    config = CONFIG_MAPPING["dia"](
        encoder_config={"num_hidden_layers": 2, "hidden_size": 64, "head_dim": 32, "num_attention_heads": 2},
        decoder_config={
            "num_hidden_layers": 3,
            "hidden_size": 64,
            "head_dim": 16,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "rope_parameters": {"rope_type": "default", "rope_theta": 20000.0},
        },
    )
    layers = posenc.from_config(config.to_dict())
    stacks = _stacks(layers)
    assert list(stacks) == ["encoder", "decoder"] and [la.layer for la in layers] == list(range(5))
    assert len(stacks["encoder"]) == 2 and len(stacks["decoder"]) == 3 and all(la.rope for la in layers)
    for stack, sub in (("encoder", config.encoder_config), ("decoder", config.decoder_config)):
        rotary = dia.DiaRotaryEmbedding(sub)
        np.testing.assert_allclose(stacks[stack][0].inv_freq, rotary.inv_freq.double().numpy(), rtol=1e-6)
        assert _replay_problem(stacks[stack][-1], rotary, dia.apply_rotary_pos_emb) is None
    # the class defaults: 12 encoder layers and 18 decoder layers of head size 128
    default = posenc.from_config(_default("dia"))
    assert [(s, len(ls), ls[0].head_dim) for s, ls in _stacks(default).items()] == [
        ("encoder", 12, 128),
        ("decoder", 18, 128),
    ]


@pytest.mark.parametrize("heads", [(4, 4), (2, 4), (8, 8)], ids=["same-heads", "encoder-heads-win", "odd-width"])
def test_moonshine_reads_both_stacks_as_its_model_builds_them(heads):
    from transformers import CONFIG_MAPPING

    _quiet()
    moonshine = _module("moonshine")
    config = CONFIG_MAPPING["moonshine"](
        hidden_size=64,
        intermediate_size=32,
        vocab_size=100,
        encoder_num_hidden_layers=2,
        decoder_num_hidden_layers=3,
        encoder_num_attention_heads=heads[0],
        decoder_num_attention_heads=heads[1],
    )
    layers = posenc.from_config(config.to_dict())  # read before the model writes into the config
    with torch.device("cpu"):
        model = moonshine.MoonshineModel(config)
    stacks = _stacks(layers)
    assert list(stacks) == ["encoder", "decoder"]
    for stack, part in (("encoder", model.encoder), ("decoder", model.decoder)):
        assert len(stacks[stack]) == len(part.layers)
        # MoonshineAttention writes the encoder's head count into the shared config: every stack runs with it
        assert stacks[stack][0].head_dim == part.layers[0].self_attn.head_dim == 64 // heads[0]
        np.testing.assert_allclose(stacks[stack][0].inv_freq, part.rotary_emb.inv_freq.double().numpy(), rtol=1e-6)
        assert _replay_problem(stacks[stack][-1], part.rotary_emb, moonshine.apply_rotary_pos_emb) is None
    default = posenc.from_config(_default("moonshine"))
    assert [(s, len(ls), ls[0].head_dim, ls[0].rotary_dim) for s, ls in _stacks(default).items()] == [
        ("encoder", 6, 36, 32),
        ("decoder", 6, 36, 32),
    ]


def test_moonshine_class_defaults_are_the_families():
    from transformers import CONFIG_MAPPING

    _quiet()
    default = CONFIG_MAPPING["moonshine"]()
    assert (default.encoder_num_attention_heads, default.encoder_num_hidden_layers) == (8, 6)
    assert default.decoder_num_hidden_layers == 6


BLT_SMALL = {
    "patcher_config": {"hidden_size": 32, "num_attention_heads": 2, "num_hidden_layers": 2},
    "encoder_config": {"hidden_size": 32, "num_attention_heads": 2, "num_hidden_layers": 1},
    "global_config": {"hidden_size": 64, "num_attention_heads": 2, "num_hidden_layers": 3},
    "decoder_config": {"hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 2},
}


def test_blt_reads_its_four_stacks_with_their_rotary_modules_and_masks():
    from transformers import CONFIG_MAPPING

    _quiet()
    blt = _module("blt")
    config = CONFIG_MAPPING["blt"](**BLT_SMALL)
    layers = posenc.from_config(config.to_dict())
    stacks = _stacks(layers)
    parts = {
        "patcher": config.patcher_config,
        "local_encoder": config.encoder_config,
        "global_transformer": config.global_config,
        "local_decoder": config.decoder_config,
    }
    assert list(stacks) == list(parts)  # BltModel.forward: patcher, local encoder, global transformer, local decoder
    for stack, sub in parts.items():
        assert len(stacks[stack]) == sub.num_hidden_layers
        rotary = blt.BltRotaryEmbedding(sub)
        np.testing.assert_allclose(stacks[stack][0].inv_freq, rotary.inv_freq.double().numpy(), rtol=1e-6)
        assert stacks[stack][0].layout == "interleaved"
        assert _replay_problem(stacks[stack][-1], rotary, blt.apply_rotary_pos_emb) is None
    # the masks: the patcher's own window; the local encoder's and decoder's mask is made from encoder_config, whose
    # window BltConfig sets to local_attention_window_len; the global transformer's is causal
    assert {la.sliding_window for la in stacks["patcher"]} == {config.patcher_config.sliding_window}
    for stack in ("local_encoder", "local_decoder"):
        assert {la.sliding_window for la in stacks[stack]} == {config.encoder_config.sliding_window} == {512}
    assert {la.sliding_window for la in stacks["global_transformer"]} == {None}


def test_blt_without_patcher_or_window():
    from transformers import CONFIG_MAPPING

    _quiet()
    default = CONFIG_MAPPING["blt"]()
    assert (default.patch_in_forward, default.local_attention_window_len) == (True, 512)  # the family's defaults
    raw = _default("blt", patch_in_forward=False, local_attention_window_len=None, **BLT_SMALL)
    layers = posenc.from_config(raw)
    assert list(_stacks(layers)) == ["local_encoder", "global_transformer", "local_decoder"]
    assert {la.sliding_window for la in layers} == {None}
    assert [len(ls) for ls in _stacks(posenc.from_config(_default("blt"))).values()] == [14, 1, 25, 9]


# --- the walker ---------------------------------------------------------------------------------------------------


def _text_model_types() -> set[str]:
    """The model types of the reference library's text auto-classes (``transformers_schemes.TEXT_MAPPINGS``)."""
    from transformers.models.auto import modeling_auto
    from transformers_schemes import TEXT_MAPPINGS

    return set().union(*(getattr(modeling_auto, name) for name in TEXT_MAPPINGS))


def _reference_refuses(config) -> str | None:
    """Why the reference's own rotary module cannot be built from ``config``'s language model (None: it can)."""
    import torch

    text = config.get_text_config(decoder=True)
    module = importlib.import_module(type(text).__module__.replace(".configuration_", ".modeling_"))
    for name, cls in vars(module).items():
        if isinstance(cls, type) and name.endswith("RotaryEmbedding") and "Vision" not in name and "Audio" not in name:
            try:
                with torch.device("meta"):
                    cls(text)
            except Exception as error:
                return f"{name}: {type(error).__name__}: {error}"
    return None


def walk() -> dict:
    """Every model type of CONFIG_MAPPING, sorted by what happened: read, refused, excluded (and by which rule).

    "read": posenc.from_config read the class default; "refused_by_both": posenc refused it and the reference's own
    rotary module cannot be built from it either; "refused": posenc refused a config the reference builds;
    "no_class_default": the class cannot be built from its defaults; "no_text": the class and its text sub-config
    have no vocabulary (vision, audio and time-series models, codecs, detectors); "not_text_auto_class": a vocabulary,
    but neither the model type nor the language model it holds (``get_text_config(decoder=True)``, a sub-config) is
    of a text auto-class (speech CTC encoders, the text towers of CLIP-like models, the sub-configs of composites,
    multimodal models whose language model has a type of its own).
    """
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    _quiet()
    text_types = _text_model_types()
    out: dict[str, dict] = {
        k: {} for k in ("read", "refused", "refused_by_both", "no_class_default", "no_text", "not_text_auto_class")
    }
    for model_type in sorted(CONFIG_MAPPING.keys()):
        try:
            config = CONFIG_MAPPING[model_type]()
        except Exception as error:
            out["no_class_default"][model_type] = f"{type(error).__name__}: {str(error).splitlines()[0][:100]}"
            continue
        try:
            text = config.get_text_config(decoder=True)
        except Exception:
            text = config
        holds_one = text is not config and getattr(text, "model_type", None) in text_types
        if model_type not in text_types and not holds_one:
            vocabulary = any(isinstance(getattr(c, "vocab_size", None), int) for c in (config, text))
            out["not_text_auto_class" if vocabulary else "no_text"][model_type] = type(text).__name__
            continue
        try:
            layers = posenc.from_config(config.to_dict())
        except (ValueError, TypeError) as error:
            why = _reference_refuses(config)
            key = "refused_by_both" if why else "refused"
            out[key][model_type] = f"posenc: {error}" + (f"; transformers: {why}" if why else "")
            continue
        assert len(layers) > 0 and all(layer.scheme in SCHEMES for layer in layers), model_type
        out["read"][model_type] = sorted({layer.scheme for layer in layers})
    return out


def test_every_text_model_type_is_read_from_its_class_defaults():
    result = walk()
    counts = {key: len(value) for key, value in result.items()}
    print(f"\nwalked {counts['read'] + counts['refused'] + counts['refused_by_both']} text model types: {counts}")
    for key in ("refused_by_both", "no_class_default", "not_text_auto_class", "no_text"):
        print(f"{key}: {', '.join(sorted(result[key]))}", file=sys.stdout)
    assert result["refused"] == {}, "\n".join(f"{k}: {v}" for k, v in result["refused"].items())
    # every position scheme turns up: rotations, absolute tables, biases, relative buckets, no positions at all
    schemes = {scheme for read in result["read"].values() for scheme in read}
    assert schemes >= {"rope", "learned", "sinusoidal", "alibi", "relative_buckets", "none"}
    assert counts["read"] >= 260  # the walk reached the library's text models
