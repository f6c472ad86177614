"""Models without RoPE, read layer by layer (posenc.config_schemes), checked against the reference library.

Every number is compared with ``transformers`` (5.23) itself, never with a copy of posenc's output: the
table of text models is regenerated from the library's classes; table sizes and the row of position 0
are read from tiny models built from the same config dict (and, for the offsets, from the rows a forward
pass looks up); ALiBi slopes and biases come from ``build_alibi_tensor`` / ``build_mpt_alibi_tensor`` and from
the attention probabilities of tiny BLOOM, MPT and Falcon models; T5 buckets from
``T5Attention._relative_position_bucket`` and its cousins; sinusoids from each family's own function.
"""

from __future__ import annotations

import json
import math

import matplotlib
import numpy as np
import pytest
import torch
from stored_configs import FILES, load
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

import posenc
from posenc import MODELS
from posenc._scheme_families import TABLE
from posenc.config_schemes import (
    PARAMETERS,
    SCHEMES,
    alibi_bias_of,
    buckets_of,
    describe_scheme,
    plot_position_scheme,
    read_scheme,
    scheme_slopes,
    sinusoidal_table,
)
from posenc.reference_check import _quiet

matplotlib.use("Agg")


quiet = _quiet  # the reference check's: no warnings, no log records below ERROR


def reference_config(raw: dict):
    """The reference library's configuration object for ``raw`` (as AutoConfig.for_model builds it)."""
    with quiet():
        return CONFIG_MAPPING[raw["model_type"]](**{k: v for k, v in raw.items() if k != "model_type"})


def default_config(model_type: str) -> dict:
    """The class defaults as a config dict (Falcon with its ALiBi switch on; ESM with a vocabulary)."""
    arguments = {"falcon": {"alibi": True}, "esm": {"vocab_size": 33}}.get(model_type, {})
    with quiet():
        return CONFIG_MAPPING[model_type](**arguments).to_dict()


def meta_model(config):
    """The reference model of ``config`` on the meta device (no memory, no weights), as the table was generated."""
    from transformers_schemes import _model_class

    with quiet(), torch.device("meta"):
        return _model_class(config)._from_config(config)


def stacks_of(layers) -> dict[str, list]:
    out: dict[str, list] = {}
    for layer in layers:
        out.setdefault(layer.stack, []).append(layer)
    return out


BUILDABLE = sorted(t for t, e in TABLE.items() if "error" not in e)


# --- the table is the reference library's -----------------------------------------------------------------


def test_the_scheme_table_is_the_reference_librarys_class_defaults():
    # slow (a meta-device model per family): `make check` leaves it out by its name
    from transformers_schemes import scheme_families

    assert scheme_families() == TABLE


def test_the_table_holds_the_families_the_brief_names_and_a_model_without_positions():
    for model_type in ("bert", "roberta", "gpt2", "opt", "whisper", "bart", "gpt_neo", "bloom", "mpt", "falcon"):
        assert model_type in TABLE, model_type
    for model_type in ("t5", "mt5", "umt5", "longt5"):
        assert set(TABLE[model_type]["scheme"].values()) == {"relative_buckets"}
    # models with no position information at all exist in the reference: recurrences and NoPE hybrids
    for model_type in ("mamba", "rwkv", "xlstm", "jamba", "nemotron_h", "zamba"):
        assert set(TABLE[model_type]["scheme"].values()) == {"none"}, model_type
    assert set(TABLE) >= {"esm", "falcon"}  # the switching families are listed too


# --- every family is read, with the stacks and schemes its modules have -------------------------------------


@pytest.mark.parametrize("model_type", sorted(TABLE))
def test_every_text_model_without_rope_is_read(model_type):
    entry = TABLE[model_type]
    try:
        raw = default_config(model_type)
    except Exception:  # a composite class that needs its parts
        pytest.skip("the class default cannot be built alone; its parts are read (test_composites_read_their_parts)")
    layers = posenc.from_config(raw)
    assert len(layers) > 0
    assert all(layer.scheme in SCHEMES and layer.scheme != "rope" for layer in layers)
    assert all(set(layer.position_params) <= set(PARAMETERS[layer.scheme]) for layer in layers)
    stacks = stacks_of(layers)
    if "parts" in entry and model_type in ("speech-encoder-decoder", "musicgen", "musicgen_melody"):
        assert set(stacks) <= {"decoder", ""}
        return
    assert {s: sorted({layer.scheme for layer in ls}) for s, ls in stacks.items()} == {
        s: [scheme] for s, scheme in entry["scheme"].items()
    }
    for stack, facts in entry.get("stacks", {}).items():
        if facts["layers"] is not None:
            assert len(stacks[stack]) == facts["layers"], stack
    assert [layer.layer for layer in layers] == list(range(len(layers)))


@pytest.mark.parametrize(
    "model_type", sorted(t for t in BUILDABLE if "learned" in TABLE[t]["scheme"].values() and TABLE[t]["positions"])
)
def test_learned_table_sizes_are_the_reference_models(model_type):
    """The table size the reading gives equals the reference model's, for the class defaults and a changed size."""
    raw = default_config(model_type)
    for change in (0, 24):
        changed = dict(raw)
        for key in (
            "max_position_embeddings",
            "n_positions",
            "max_target_positions",
            "max_decoder_position_embeddings",
            "max_encoder_position_embeddings",
            "max_source_positions",
        ):
            if isinstance(changed.get(key), int):
                changed[key] = changed[key] + change
        if model_type == "whisper":  # the encoder's table is fixed by the audio length: change the decoder's only
            changed["max_source_positions"] = raw["max_source_positions"]
        layers = posenc.from_config(changed)
        model = meta_model(reference_config(changed))
        modules = dict(model.named_modules())
        for stack, group in stacks_of(layers).items():
            params = group[0].position_params
            params = params.get("input", params) if group[0].scheme != "learned" else params
            if params.get("scheme", "learned") != "learned" or "table_size" not in params:
                continue
            paths = [
                p for p in TABLE[model_type]["positions"] if stack == "" or ("decoder" in p) == (stack == "decoder")
            ]
            rows = [modules[p].weight.shape[0] for p in paths if hasattr(modules.get(p), "weight") and "rel" not in p]
            if model_type == "reformer":  # AxialPositionEmbeddings: one weight per axis, the table is their outer sum
                axial = modules[paths[0]].weights
                rows = [math.prod(w.shape[i] for i, w in enumerate(axial))]
            assert rows and rows[0] == params["table_size"], (stack, rows, params["table_size"])
            assert params["max_positions"] <= params["table_size"] - params["offset"]


# --- the row of position 0, from a forward pass of a tiny model ----------------------------------------------

TINY = {
    "bert": dict(
        vocab_size=40,
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=8,
        max_position_embeddings=20,
    ),
    "roberta": dict(
        vocab_size=40,
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=8,
        max_position_embeddings=20,
        pad_token_id=1,
    ),
    "xlm-roberta": dict(
        vocab_size=40,
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=8,
        max_position_embeddings=20,
        pad_token_id=1,
    ),
    "camembert": dict(
        vocab_size=40,
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=8,
        max_position_embeddings=20,
        pad_token_id=3,
    ),
    "esm": dict(
        vocab_size=40,
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=8,
        max_position_embeddings=20,
        pad_token_id=1,
        position_embedding_type="absolute",
    ),
    "electra": dict(
        vocab_size=40,
        hidden_size=8,
        embedding_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=8,
        max_position_embeddings=20,
    ),
    "gpt2": dict(vocab_size=40, n_embd=8, n_layer=1, n_head=2, n_positions=20),
    "openai-gpt": dict(vocab_size=40, n_embd=8, n_layer=1, n_head=2, n_positions=20),
    "gpt_bigcode": dict(vocab_size=40, n_embd=8, n_layer=1, n_head=2, n_positions=20),
    "gpt_neo": dict(
        vocab_size=40,
        hidden_size=8,
        num_layers=2,
        num_heads=2,
        max_position_embeddings=20,
        attention_types=[[["global", "local"], 1]],
        window_size=4,
    ),
    "opt": dict(
        vocab_size=40,
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        ffn_dim=8,
        max_position_embeddings=20,
        word_embed_proj_dim=8,
    ),
    "biogpt": dict(
        vocab_size=40,
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=8,
        max_position_embeddings=20,
    ),
    "bart": dict(
        vocab_size=40,
        d_model=8,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=8,
        decoder_ffn_dim=8,
        max_position_embeddings=20,
    ),
    "mbart": dict(
        vocab_size=40,
        d_model=8,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=8,
        decoder_ffn_dim=8,
        max_position_embeddings=20,
    ),
    "blenderbot": dict(
        vocab_size=40,
        d_model=8,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=8,
        decoder_ffn_dim=8,
        max_position_embeddings=20,
    ),
    "whisper": dict(
        vocab_size=60,
        d_model=8,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=8,
        decoder_ffn_dim=8,
        num_mel_bins=4,
        max_source_positions=6,
        max_target_positions=20,
        pad_token_id=50,
        bos_token_id=50,
        eos_token_id=51,
        decoder_start_token_id=50,
        begin_suppress_tokens=None,
        suppress_tokens=None,
    ),
}


def _forward_rows(model_type: str, n: int = 7) -> dict[str, np.ndarray]:
    """Path -> the table rows a forward pass of the tiny model looks up for tokens 0 .. n-1 (weights = row index)."""
    raw = {"model_type": model_type, **TINY[model_type]}
    config = reference_config(raw)
    from transformers_schemes import _model_class

    with quiet():
        model = _model_class(config)._from_config(config).eval()
    paths = [p for p, info in TABLE[model_type]["positions"].items() if info.get("rows")]
    seen: dict[str, np.ndarray] = {}
    with torch.no_grad():
        for path in paths:
            module = model.get_submodule(path)
            module.weight.zero_()
            module.weight[:, 0] = torch.arange(module.weight.shape[0], dtype=module.weight.dtype)
            module.register_forward_hook(
                lambda mod, args, out, path=path: seen.__setitem__(path, out.reshape(-1, out.shape[-1])[:, 0].numpy())
            )
        ids = torch.arange(n)[None] + 5
        if model_type == "whisper":
            features = torch.zeros(1, raw["num_mel_bins"], 2 * raw["max_source_positions"])
            model(input_features=features, decoder_input_ids=ids)
        elif getattr(config, "is_encoder_decoder", False):
            model(input_ids=ids, decoder_input_ids=ids)
        else:
            model(input_ids=ids)
    return {path: np.rint(rows).astype(int) for path, rows in seen.items()}


@pytest.mark.parametrize("model_type", sorted(TINY))
def test_the_row_of_position_0_is_the_one_the_reference_looks_up(model_type):
    raw = {"model_type": model_type, **TINY[model_type]}
    layers = posenc.from_config(raw)
    rows = _forward_rows(model_type)
    for stack, group in stacks_of(layers).items():
        params = group[0].position_params
        if group[0].scheme != "learned":
            continue
        path = next(p for p in rows if stack == "" or ("decoder" in p) == (stack == "decoder"))
        looked_up = rows[path]
        assert list(looked_up) == list(params["offset"] + np.arange(looked_up.size)), (stack, looked_up)
    if model_type in ("opt", "bart", "mbart", "biogpt", "roberta", "xlm-roberta", "esm"):
        assert all(layer.position_params.get("offset", 2) == 2 for layer in layers if layer.scheme == "learned")
    if model_type == "camembert":  # the offset follows pad_token_id (3 here): row pad + 1 + p
        assert layers[0].position_params["offset"] == 4


def test_yoso_and_mra_count_positions_from_row_2():
    from transformers.models.mra.modeling_mra import MraEmbeddings
    from transformers.models.yoso.modeling_yoso import YosoEmbeddings

    for model_type, embeddings in (("yoso", YosoEmbeddings), ("mra", MraEmbeddings)):
        raw = {
            "model_type": model_type,
            "vocab_size": 40,
            "hidden_size": 8,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "intermediate_size": 8,
            "max_position_embeddings": 20,
        }
        module = embeddings(reference_config(raw))
        layer = posenc.from_config(raw)[0]
        assert layer.position_params["offset"] == int(module.position_ids[0, 0])
        assert layer.position_params["table_size"] == module.position_embeddings.num_embeddings


def test_whisper_reads_a_sinusoidal_encoder_and_a_learned_decoder():
    from transformers.models.whisper.modeling_whisper import sinusoids

    raw = {"model_type": "whisper", **TINY["whisper"]}
    layers = posenc.from_config(raw)
    encoder, decoder = stacks_of(layers)["encoder"], stacks_of(layers)["decoder"]
    assert {layer.scheme for layer in encoder} == {"sinusoidal"} and {layer.scheme for layer in decoder} == {"learned"}
    assert encoder[0].position_params["max_positions"] == raw["max_source_positions"]
    assert decoder[0].position_params["table_size"] == raw["max_target_positions"]
    d = encoder[0].position_params["d_model"]
    np.testing.assert_allclose(sinusoidal_table(encoder[0], np.arange(6)), sinusoids(6, d).numpy(), atol=1e-6)
    whisper_base = posenc.from_config(default_config("whisper"))
    enc = stacks_of(whisper_base)["encoder"][0]
    # the reference forms the angles in float32: up to 1500 * 2**-24 rad off at the last position
    np.testing.assert_allclose(sinusoidal_table(enc, np.arange(1500)), sinusoids(1500, 384).numpy(), atol=2e-4)
    assert not any(layer.position_params["trainable"] for layer in encoder)


def test_gpt_neo_local_layers_see_the_reference_window():
    raw = {"model_type": "gpt_neo", **default_config("gpt_neo")}
    reference = reference_config(raw)
    layers = posenc.from_config(raw)
    assert [("sliding" if layer.sliding_window else "full") for layer in layers] == [
        "sliding" if kind == "local" else "full" for kind in reference.attention_layers
    ]
    assert {layer.sliding_window for layer in layers if layer.sliding_window} == {reference.window_size}


# --- ALiBi -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_heads", [1, 2, 3, 5, 6, 8, 12, 16, 20, 32, 40, 71, 112])
def test_bloom_slopes_are_build_alibi_tensors(n_heads):
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    layer = posenc.from_config({"model_type": "bloom", "n_head": n_heads, "hidden_size": 4 * n_heads, "n_layer": 2})[0]
    alibi = build_alibi_tensor(torch.ones(1, 9), n_heads, torch.float32).reshape(n_heads, 9)
    np.testing.assert_allclose(np.asarray(layer.position_params["slopes"]), alibi[:, 1].numpy(), rtol=1e-6)
    # the reference adds slope * key position: per query row, the reading's -slope * (m - n) plus a constant
    bias = alibi_bias_of(layer, 9)
    for m in range(9):
        diff = alibi[:, : m + 1].numpy() - bias[:, m, : m + 1]
        np.testing.assert_allclose(diff - diff[:, :1], 0.0, atol=1e-5)
    np.testing.assert_allclose(layer.position_params["slopes"], posenc.alibi_slopes(n_heads))


@pytest.mark.parametrize("n_heads", [1, 3, 6, 8, 12, 16, 24, 32, 48])
@pytest.mark.parametrize("bias_max", [8, 4, 16, 6.5])
def test_mpt_slopes_are_build_mpt_alibi_tensors(n_heads, bias_max):
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    alibi = build_mpt_alibi_tensor(n_heads, 10, alibi_bias_max=bias_max)  # (heads, 1, 10): slope * (j - 9)
    np.testing.assert_allclose(scheme_slopes(n_heads, bias_max), -alibi[:, 0, 8].numpy(), rtol=1e-6)


def test_mpt_reads_alibi_bias_max_as_transformers_runs_it():
    attn = {"alibi": True, "alibi_bias_max": 16}
    layers = posenc.from_config(
        {"model_type": "mpt", "n_heads": 8, "d_model": 64, "n_layers": 2, "max_seq_len": 128, "attn_config": attn}
    )
    # MptModel.forward calls build_mpt_alibi_tensor(num_heads, max_seq_len) without alibi_bias_max: 8
    np.testing.assert_allclose(layers[0].position_params["slopes"], scheme_slopes(8, 8))
    assert "alibi_bias_max" in layers.note and "16" in layers.note
    assert layers[0].position_params["max_positions"] == 128


def _zero_attention_probabilities(model_type: str, raw: dict, implementation: str = "eager") -> np.ndarray:
    """Layer 0's attention probabilities of a tiny reference model whose query and key maps are zero.

    "eager": the probabilities the model returns; "sdpa": softmax of the additive mask the model hands to
    ``scaled_dot_product_attention`` (its logits q.k are 0), the default path.
    """
    raw = {"model_type": model_type, **raw}
    config = reference_config(raw)
    from transformers_schemes import _model_class

    with quiet():
        model = _model_class(config)._from_config(config, attn_implementation=implementation).eval()
    masks = []
    attention = next(m for n, m in model.named_modules() if n.endswith(("h.0.self_attention", "blocks.0.attn")))
    attention.register_forward_pre_hook(
        lambda mod, args, kwargs: masks.append(kwargs["attention_mask"]), with_kwargs=True
    )
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if any(k in name for k in ("query_key_value", "Wqkv", "q_proj", "k_proj")):
                parameter.zero_()
        out = model(input_ids=torch.arange(6)[None] + 3, output_attentions=implementation == "eager")
    if implementation == "eager":
        return out.attentions[0][0].float().numpy()
    return torch.softmax(masks[0][0].float(), dim=-1).numpy()


@pytest.mark.parametrize(
    "model_type, raw",
    [
        ("bloom", dict(vocab_size=40, hidden_size=16, n_layer=1, n_head=4)),
        ("mpt", dict(vocab_size=40, d_model=16, n_layers=1, n_heads=4, max_seq_len=6, expansion_ratio=1)),
        (
            "falcon",
            dict(
                vocab_size=40,
                hidden_size=32,
                num_hidden_layers=1,
                num_attention_heads=2,
                alibi=True,
                new_decoder_architecture=False,
                multi_query=False,
                parallel_attn=False,
                bias=True,
            ),
        ),
    ],
)
def test_alibi_as_the_reference_models_attention_applies_it(model_type, raw):
    """With zero queries and keys, a layer's attention is softmax(bias) over the past: compare with the reading."""
    layer = posenc.from_config({"model_type": model_type, **raw})[0]

    def softmax_over_the_past(bias):
        logits = np.where(np.tril(np.ones((6, 6), dtype=bool)), bias, -np.inf)
        expected = np.exp(logits - logits.max(-1, keepdims=True))
        return expected / expected.sum(-1, keepdims=True)

    expected = softmax_over_the_past(alibi_bias_of(layer, 6))
    if model_type != "falcon":
        np.testing.assert_allclose(_zero_attention_probabilities(model_type, raw), expected, atol=1e-5)
        return
    # Falcon divides ALiBi by sqrt(head_dim) (16 here: 1/4) and computes it in bfloat16. Its default path (SDPA)
    # adds that once, as the original Falcon-RW code does: the reading.
    assert layer.position_params["slope_scale"] == pytest.approx(1 / 4)
    np.testing.assert_allclose(_zero_attention_probabilities(model_type, raw, "sdpa"), expected, atol=2e-3)
    # transformers 5.23's eager FalconAttention adds it twice (in its logits and again in the causal mask that
    # FalconModel filled with it): a bug of that path, recorded here so that a fixed release shows up
    doubled = softmax_over_the_past(2 * alibi_bias_of(layer, 6))
    np.testing.assert_allclose(_zero_attention_probabilities(model_type, raw, "eager"), doubled, atol=2e-3)


def test_falcon_reads_rope_without_alibi_and_alibi_with_it():
    rope = posenc.from_config(default_config("falcon") | {"alibi": False})
    assert all(layer.scheme == "rope" and layer.rope for layer in rope)
    alibi = posenc.from_config(default_config("falcon"))
    assert all(layer.scheme == "alibi" and not layer.rope for layer in alibi)


# --- relative buckets --------------------------------------------------------------------------------------


@pytest.mark.parametrize("num_buckets, max_distance", [(32, 128), (16, 40), (64, 300)])
def test_t5_buckets_are_t5attentions(num_buckets, max_distance):
    from transformers.models.t5.modeling_t5 import T5Attention

    raw = {
        "model_type": "t5",
        "num_layers": 2,
        "num_decoder_layers": 3,
        "num_heads": 4,
        "d_model": 32,
        "d_kv": 8,
        "relative_attention_num_buckets": num_buckets,
        "relative_attention_max_distance": max_distance,
    }
    layers = posenc.from_config(raw)
    relative = torch.arange(60)[None, :] - torch.arange(60)[:, None]  # key minus query, as T5's compute_bias
    for layer in layers:
        bidirectional = layer.stack == "encoder"
        expected = T5Attention._relative_position_bucket(relative, bidirectional, num_buckets, max_distance)
        np.testing.assert_array_equal(buckets_of(layer, 60), expected.numpy())
        assert layer.position_params["bidirectional"] is bidirectional


@pytest.mark.parametrize("model_type", ["t5", "mt5", "umt5", "longt5", "switch_transformers", "pop2piano"])
def test_the_layers_that_own_a_bias_table_are_the_reference_models(model_type):
    raw = default_config(model_type)
    layers = posenc.from_config(raw)
    model = meta_model(reference_config(raw))
    owners = {}
    for name, module in model.named_modules():
        if hasattr(module, "has_relative_attention_bias") and hasattr(module, "is_decoder"):
            stack = "decoder" if name.startswith("decoder") else "encoder"
            block = int(name.split(".")[2]) if name.count(".") >= 2 and name.split(".")[2].isdigit() else None
            if block is not None and "EncDecAttention" not in name:
                owners[(stack, block)] = module.has_relative_attention_bias
    for stack, group in stacks_of(layers).items():
        for i, layer in enumerate(group):
            assert (layer.position_params["table"] == "own") == owners[(stack, i)], (stack, i)
            if layer.position_params["table"] == "shared":
                assert layers[layer.position_params["bias_layer"]].position_params["table"] == "own"


def test_mpnet_cpmant_layoutlmv3_and_prophetnet_buckets_are_their_functions():
    from transformers.models.cpmant.modeling_cpmant import CpmAntSegmentPositionEmbedding
    from transformers.models.layoutlmv3.modeling_layoutlmv3 import LayoutLMv3Encoder
    from transformers.models.mpnet.modeling_mpnet import MPNetEncoder
    from transformers.models.prophetnet.modeling_prophetnet import compute_relative_buckets

    relative = torch.arange(300)[None, :] - torch.arange(300)[:, None]  # key minus query
    mpnet = posenc.from_config(default_config("mpnet"))[0]
    np.testing.assert_array_equal(
        buckets_of(mpnet, 300), MPNetEncoder.relative_position_bucket(relative, 32, 128).numpy()
    )
    assert mpnet.position_params["input"]["scheme"] == "learned"
    cpmant_raw = default_config("cpmant")
    cpmant = posenc.from_config(cpmant_raw)[0]
    module = CpmAntSegmentPositionEmbedding(reference_config(cpmant_raw))
    expected = module._position_bucket(
        relative, cpmant_raw["position_bias_num_buckets"], cpmant_raw["position_bias_max_distance"]
    )
    np.testing.assert_array_equal(buckets_of(cpmant, 300), expected.numpy())
    layout_raw = default_config("layoutlmv3")
    layout = posenc.from_config(layout_raw)[0]
    encoder = LayoutLMv3Encoder(reference_config(layout_raw))
    expected = encoder.relative_position_bucket(
        relative, num_buckets=encoder.rel_pos_bins, max_distance=encoder.max_rel_pos
    )
    np.testing.assert_array_equal(buckets_of(layout, 300), expected.numpy())
    prophet = stacks_of(posenc.from_config(default_config("prophetnet")))["decoder"][0]
    expected = compute_relative_buckets(32, 128, relative, False)
    np.testing.assert_array_equal(buckets_of(prophet, 300), expected.numpy())


# --- sinusoids ---------------------------------------------------------------------------------------------


def _reference_sinusoids(model_type: str, n: int, d: int, pad: int) -> np.ndarray:
    """The codes the reference adds to tokens 0 .. n-1, from each family's own function."""
    from transformers.models import (
        canary,
        ctrl,
        distilbert,
        m2m_100,
        marian,
        musicgen,
        nllb_moe,
        pegasus,
        pegasus_x,
        seamless_m4t,
        speech_to_text,
        speecht5,
        tipsv2,
        xglm,
        xlm,
    )

    if model_type == "m2m_100":
        table = m2m_100.modeling_m2m_100.M2M100SinusoidalPositionalEmbedding.get_embedding(n + pad + 1, d, pad)
        return table[pad + 1 : pad + 1 + n].numpy()
    if model_type == "xglm":
        return xglm.modeling_xglm.XGLMSinusoidalPositionalEmbedding.get_embedding(n + 2, d, pad)[2:].numpy()
    if model_type == "marian":
        module = marian.modeling_marian.MarianSinusoidalPositionalEmbedding(n, d)
        return module.create_weight().numpy()
    if model_type == "pegasus":
        module = pegasus.modeling_pegasus.PegasusSinusoidalPositionalEmbedding(n, d)
        return module.create_weight().numpy()
    if model_type == "pegasus_x":
        module = pegasus_x.modeling_pegasus_x.PegasusXSinusoidalPositionalEmbedding(d)
        return module(torch.zeros(1, n, d))[0].numpy()
    if model_type == "ctrl":
        return ctrl.modeling_ctrl.positional_encoding(n, d, torch.float32).numpy()
    if model_type in ("distilbert", "xlm"):
        out = torch.zeros(n, d)
        module = distilbert.modeling_distilbert if model_type == "distilbert" else xlm.modeling_xlm
        module.create_sinusoidal_embeddings(n, d, out)
        return out.numpy()
    if model_type == "musicgen_decoder":
        return musicgen.modeling_musicgen.MusicgenSinusoidalPositionalEmbedding.get_embedding(n, d).numpy()
    fairseq = {  # copies of fairseq's table: position p is row pad + 1 + p
        "speech_to_text": speech_to_text.modeling_speech_to_text.Speech2TextSinusoidalPositionalEmbedding,
        "seamless_m4t": seamless_m4t.modeling_seamless_m4t.SeamlessM4TSinusoidalPositionalEmbedding,
        "nllb-moe": nllb_moe.modeling_nllb_moe.NllbMoeSinusoidalPositionalEmbedding,
        "speecht5": speecht5.modeling_speecht5.SpeechT5SinusoidalPositionalEmbedding,
    }
    if model_type in fairseq:
        return fairseq[model_type].get_embedding(n + pad + 1, d, pad)[pad + 1 :].numpy()
    if model_type == "tipsv2_text_model":
        return tipsv2.modeling_tipsv2.Tipsv2SinusoidalPositionalEmbedding.get_embedding(n, d).numpy()
    if model_type == "canary":
        return canary.modeling_canary.CanaryPositionalEmbedding(n, d)(torch.arange(n)).numpy()
    raise KeyError(model_type)


@pytest.mark.parametrize(
    "model_type, raw",
    [
        ("m2m_100", dict(d_model=16, pad_token_id=1)),
        ("xglm", dict(d_model=16, pad_token_id=1)),
        ("marian", dict(d_model=16, max_position_embeddings=40)),
        ("pegasus", dict(d_model=16, max_position_embeddings=40)),
        ("pegasus_x", dict(d_model=16)),
        ("ctrl", dict(n_embd=16, n_positions=40)),
        ("distilbert", dict(dim=16, sinusoidal_pos_embds=True, max_position_embeddings=40)),
        ("xlm", dict(emb_dim=16, sinusoidal_embeddings=True, max_position_embeddings=40)),
        ("musicgen_decoder", dict(hidden_size=16)),
        ("speech_to_text", dict(d_model=16, pad_token_id=1)),
        ("seamless_m4t", dict(hidden_size=16, pad_token_id=0)),
        ("nllb-moe", dict(d_model=16, pad_token_id=1)),
        ("speecht5", dict(hidden_size=16, pad_token_id=1)),
        ("tipsv2_text_model", dict(hidden_size=16, max_position_embeddings=40)),
    ],
)
def test_sinusoids_are_each_familys_own(model_type, raw):
    raw = {**default_config(model_type), **raw, "model_type": model_type}
    layer = next(layer for layer in posenc.from_config(raw) if layer.scheme == "sinusoidal")
    pad = raw.get("pad_token_id") or 0
    expected = _reference_sinusoids(model_type, 40, 16, pad)
    np.testing.assert_allclose(sinusoidal_table(layer, np.arange(40)), expected, atol=2e-5)


# --- configs as they are stored, zoo entries, composites, generic configs -----------------------------------


def _ours(raw) -> bool:
    return read_scheme(raw) is not None


STORED = sorted(name for name in FILES if _ours(load(name)))


def test_the_stored_configs_of_models_without_rope_are_here():
    assert {"gpt2", "snowflake-arctic-embed-m"} <= set(STORED)


@pytest.mark.parametrize("name", STORED)
def test_stored_configs_read_as_the_reference_builds_them(name):
    raw = load(name)
    layers = posenc.from_config(raw)
    config = reference_config(raw)
    model = meta_model(config)
    entry = TABLE[raw["model_type"]]
    for stack, facts in entry["stacks"].items():
        if facts["path"] is not None:
            assert len(stacks_of(layers)[stack]) == len(model.get_submodule(facts["path"])), stack
    modules = dict(model.named_modules())
    for path, info in entry["positions"].items():
        if info.get("rows") and path in modules and "rel" not in path:
            stack = "" if len(entry["stacks"]) == 1 else ("decoder" if "decoder" in path else "encoder")
            layer = stacks_of(layers)[stack][0]
            params = layer.position_params if layer.scheme == "learned" else layer.position_params.get("input", {})
            if params:
                assert params["table_size"] == modules[path].weight.shape[0], path


def test_nemotron_h_layers_are_the_reference_configs_layer_types():
    raw = (
        load("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
        if "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16" in FILES
        else {"model_type": "nemotron_h", "hybrid_override_pattern": "M-M*-ME", "num_hidden_layers": 7}
    )
    layers = posenc.from_config(raw)
    reference = reference_config(raw)
    kinds = {
        "mamba": "state space",
        "linear_attention": "state space",
        "attention": "attention",
        "full_attention": "attention",
        "mlp": "mlp",
        "moe": "mlp",
    }
    assert [layer.mixer for layer in layers] == [kinds[t] for t in reference.layers_block_type]
    assert {layer.scheme for layer in layers} == {"none"}


@pytest.mark.parametrize("model_type", ["jamba", "zamba"])
def test_hybrid_layer_patterns_are_the_reference_configs(model_type):
    raw = default_config(model_type) | {"attn_layer_period": 3, "attn_layer_offset": 1, "num_hidden_layers": 9}
    raw.pop("layers_block_type", None)
    raw.pop("layer_types", None)
    reference = reference_config(raw)
    layers = posenc.from_config(raw)
    attention = {"attention", "hybrid", "full_attention"}
    assert [layer.mixer == "attention" for layer in layers] == [t in attention for t in reference.layers_block_type]


@pytest.mark.parametrize("name", sorted(n for n, e in MODELS.items() if e.scheme != "rope"))
def test_zoo_entries_without_rope_are_read(name):
    entry = MODELS[name]
    layers = posenc.from_config(entry)
    assert {layer.scheme for layer in layers} == {entry.scheme}
    if name == "GPT-2":
        assert layers[0].position_params["table_size"] == 1024 and len(layers) == 12
    if name == "t5-small":
        assert [len(g) for g in stacks_of(layers).values()] == [6, 6]
        assert layers[0].position_params["num_buckets"] == 32 and layers[0].position_params["max_distance"] == 128
    if name in ("BLOOM", "mpt-7b"):  # their entries give no head count: the note says the class default was read
        assert "defaults" in layers.note


def test_composites_read_their_parts():
    bert = default_config("bert") | {"num_hidden_layers": 2}
    gpt2 = default_config("gpt2") | {"n_layer": 3}
    layers = posenc.from_config({"model_type": "encoder-decoder", "encoder": bert, "decoder": gpt2})
    assert [layer.stack for layer in layers] == ["encoder"] * 2 + ["decoder"] * 3
    assert [layer.layer for layer in layers] == list(range(5))
    music = {"model_type": "musicgen", "decoder": default_config("musicgen_decoder") | {"num_hidden_layers": 2}}
    layers = posenc.from_config(music)
    assert {layer.scheme for layer in layers} == {"sinusoidal"} and "decoder" in layers.note


def test_an_unknown_model_type_that_names_its_scheme_is_read_generically_with_a_note():
    layers = posenc.from_config(
        {
            "model_type": "my_alibi_lm",
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "hidden_size": 32,
            "alibi": True,
        }
    )
    assert layers.family == "generic" and "generically" in layers.note
    np.testing.assert_allclose(layers[0].position_params["slopes"], posenc.alibi_slopes(4))
    nope = posenc.from_config(
        {"num_hidden_layers": 3, "hidden_size": 8, "num_attention_heads": 2, "position_embedding_type": "none"}
    )
    assert [layer.scheme for layer in nope] == ["none"] * 3  # a synthetic model without positions
    with pytest.raises(ValueError, match="RoPE base"):  # nothing names a scheme: still the RoPE reading's refusal
        posenc.from_config({"model_type": "not_a_family", "num_hidden_layers": 2, "head_dim": 8})


def test_relative_key_configs_are_read_as_they_were_trained():
    raw = default_config("bert") | {"position_embedding_type": "relative_key_query", "num_hidden_layers": 2}
    layers = posenc.from_config(raw)
    assert [layer.scheme for layer in layers] == ["relative_learned"] * 2
    assert layers[0].position_params["table_size"] == 2 * 512 - 1
    assert "transformers 5 ignores" in layers.note


# --- the RoPE reading is unchanged; words and pictures ------------------------------------------------------


def test_rope_layers_keep_their_reading_with_scheme_rope_or_none():
    llama = posenc.from_config({"model_type": "llama", "num_hidden_layers": 2, "head_dim": 8, "rope_theta": 100.0})
    assert [layer.scheme for layer in llama] == ["rope", "rope"] and llama[0].position_params == {}
    assert llama[0].stack == ""
    llama4 = posenc.from_config(
        {"model_type": "llama4_text", "num_hidden_layers": 4, "head_dim": 8, "no_rope_layers": [1, 1, 1, 0]}
    )
    assert [layer.scheme for layer in llama4] == ["rope" if layer.rope else "none" for layer in llama4]
    assert read_scheme(MODELS["Llama-3.1-8B"]) is None


def test_describe_scheme_says_one_line_per_kind():
    readings = {
        "learned": posenc.from_config(default_config("opt")),
        "sinusoidal": posenc.from_config(default_config("marian")),
        "alibi": posenc.from_config(default_config("bloom")),
        "relative_buckets": posenc.from_config(default_config("t5")),
        "relative_learned": posenc.from_config(default_config("speecht5")),
        "relative_sinusoidal": posenc.from_config(default_config("xlnet")),
        "none": posenc.from_config(default_config("mamba")),
    }
    for scheme, layers in readings.items():
        layer = next(layer for layer in layers if layer.scheme == scheme)
        line = describe_scheme(layer)
        assert "\n" not in line and line
        # the reading: one line per stack and description, naming its layers, covering every layer's line
        lines = describe_scheme(layers).splitlines()
        assert len(lines) == len({(x.stack, describe_scheme(x)) for x in layers})
        assert {text.split(": ", 1)[1] for text in lines} == {describe_scheme(x) for x in layers}
    assert "row p + 2" in describe_scheme(readings["learned"][0])
    assert "its own bias table" in describe_scheme(readings["relative_buckets"][0])
    assert "layer 0" in describe_scheme(readings["relative_buckets"][1])
    assert "rotates" in describe_scheme(
        posenc.from_config({"model_type": "llama", "num_hidden_layers": 1, "head_dim": 8, "rope_theta": 100.0})[0]
    )


@pytest.mark.parametrize("model_type", ["opt", "marian", "bloom", "t5", "speecht5", "xlnet", "mamba"])
def test_plot_position_scheme_draws_on_the_axes_and_returns_it(model_type):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        layers = posenc.from_config(default_config(model_type))
        assert plot_position_scheme(layers, ax, n_positions=64) is ax
        assert ax.get_title()
    finally:
        plt.close(fig)


def test_position_params_are_read_only():
    layer = posenc.from_config(default_config("gpt2"))[0]
    with pytest.raises(TypeError):
        layer.position_params["offset"] = 3
    assert json.dumps({k: v for k, v in layer.position_params.items()})
    assert math.isfinite(layer.position_params["table_size"])


def test_canary_decoder_sinusoids_are_canarys():
    raw = default_config("canary")
    raw["decoder_config"] = {**raw["decoder_config"], "hidden_size": 16, "max_position_embeddings": 40}
    layer = next(layer for layer in posenc.from_config(raw) if layer.stack == "decoder")
    assert layer.scheme == "sinusoidal" and layer.position_params["max_positions"] == 40
    np.testing.assert_allclose(
        sinusoidal_table(layer, np.arange(40)), _reference_sinusoids("canary", 40, 16, 0), atol=2e-6
    )
