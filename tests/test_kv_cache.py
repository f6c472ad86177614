"""The rotary KV cache against full attention, posenc.dynamic_ntk_cached_keys, StreamingLLM's rule,
and transformers 5.23's caches (a tiny randomly initialised Llama with dynamic NTK, a tiny Phi-3 with
LongRoPE; no weights downloaded)."""

import numpy as np
import pytest
import torch
from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM, Phi3Config, Phi3ForCausalLM

import posenc

D = 16
RNG = np.random.default_rng(0)
KEYS, VALUES, QUERIES = (RNG.normal(size=(12, D)) for _ in range(3))


def fill(cache, keys=KEYS, values=VALUES, prefill=4):
    """A prompt of ``prefill`` tokens at once, then one token per step, as generation does."""
    cache.append(keys[..., :prefill, :], values[..., :prefill, :])
    for n in range(prefill, keys.shape[-2]):
        cache.append(keys[..., n : n + 1, :], values[..., n : n + 1, :])
    return cache


# --- static speeds: a cache is exact ---------------------------------------------------------------


@pytest.mark.parametrize("store", posenc.CACHE_STORES)
@pytest.mark.parametrize("method, params", [("default", {}), ("yarn", {"factor": 4.0}), ("linear", {"factor": 2.0})])
def test_static_speeds_cache_equals_full_causal_attention(store, method, params):
    """Decoding token by token from the cache gives the rows of one causal attention over the whole sequence."""
    inv, attention_factor = posenc.scaled_inv_freq(method, D, 10000.0, original_max_position_embeddings=4, **params)
    full = posenc.rope_attention(
        QUERIES, KEYS, VALUES, np.arange(12), inv, np.tril(np.ones((12, 12), bool)), attention_factor=attention_factor
    )
    factor = params.get("factor", 1.0)
    cache = posenc.RotaryKVCache(D, method, 10000.0, factor, 4, store=store)
    cache.append(KEYS[:4], VALUES[:4])
    for n in range(4, 12):
        cache.append(KEYS[n : n + 1], VALUES[n : n + 1])
        np.testing.assert_allclose(cache.attend(QUERIES[n]), full[n], atol=1e-12)
        np.testing.assert_allclose(posenc.cache_score_error(cache, QUERIES[n]), 0.0, atol=1e-12)
    assert np.all(cache.angle_error() == 0.0)


# --- dynamic NTK: rotated keys go stale ------------------------------------------------------------


@pytest.mark.parametrize("prefill", [1, 4, 9])
def test_dynamic_ntk_rotated_cache_is_dynamic_ntk_cached_keys(prefill):
    cache = fill(posenc.RotaryKVCache(D, "dynamic", 10000.0, 2.0, 4), prefill=prefill)
    keys, error = posenc.dynamic_ntk_cached_keys(KEYS, 10000.0, 2.0, 4, prefill_len=prefill)
    np.testing.assert_allclose(cache.keys_for_query(), keys, atol=1e-12)
    np.testing.assert_allclose(cache.angle_error(), error, atol=1e-12)
    np.testing.assert_array_equal(cache.rotation_lengths, np.maximum(np.arange(1, 13), prefill))
    fresh = posenc.apply_rope(KEYS, np.arange(12), posenc.scaled_inv_freq("dynamic", D, 10000.0, 2.0, 4, seq_len=12)[0])
    np.testing.assert_allclose(cache.fresh_keys(), fresh, atol=1e-12)
    score_error = posenc.cache_score_error(cache, QUERIES[-1])
    assert np.abs(score_error).max() > 1e-3
    assert score_error[-1] == pytest.approx(0.0, abs=1e-12)  # the newest key was rotated with today's speeds


def test_dynamic_ntk_unrotated_cache_is_exact():
    cache = fill(posenc.RotaryKVCache(D, "dynamic", 10000.0, 2.0, 4, store="unrotated"))
    np.testing.assert_allclose(posenc.cache_score_error(cache, QUERIES[-1]), 0.0, atol=1e-12)
    np.testing.assert_allclose(cache.keys_for_query(), cache.fresh_keys(), atol=0)
    assert np.all(cache.angle_error() == 0.0)


def tiny_config(config_class, rope_parameters, max_position_embeddings, layers=1, **extra):
    torch.manual_seed(0)
    config = config_class(
        vocab_size=40,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=layers,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=max_position_embeddings,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=None,
        initializer_range=0.3,
        rope_parameters=rope_parameters,
        **extra,
    )
    config._attn_implementation = "eager"
    return config


def step(model, ids, prefill):
    """Run a model over ``ids`` with a cache: the prompt at once, then one token per step (no generate)."""
    cache = DynamicCache(config=model.config)
    with torch.no_grad():
        model(ids[:, :prefill], past_key_values=cache, use_cache=True)
        for n in range(prefill, ids.shape[1]):
            model(ids[:, n : n + 1], past_key_values=cache, use_cache=True)
    return cache.layers[0].keys.numpy().astype(np.float64)


def test_dynamic_ntk_rotated_cache_matches_transformers_dynamic_cache():
    rope = {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0}
    config = tiny_config(LlamaConfig, rope, 8, head_dim=D)
    model = LlamaForCausalLM(config).eval()
    ids = torch.randint(2, 40, (1, 14), generator=torch.Generator().manual_seed(1))
    cached = step(model, ids, prefill=5)
    layer = model.model.layers[0]
    with torch.no_grad():  # layer 0's keys before RoPE: the projection of the normalised embeddings
        raw = layer.self_attn.k_proj(layer.input_layernorm(model.model.embed_tokens(ids)))
    raw = raw.view(1, 14, 2, D).transpose(1, 2).numpy().astype(np.float64)
    cache = fill(posenc.RotaryKVCache(D, "dynamic", 10000.0, 2.0, 8), raw, raw, prefill=5)
    np.testing.assert_allclose(cache.keys_for_query(), cached, atol=2e-5)  # transformers: float32
    assert np.abs(cache.fresh_keys() - cached).max() > 1e-2  # its cache is not a recompute


# --- LongRoPE: the switch from short to long factors -----------------------------------------------

SHORT = [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]
LONG = [1.0, 1.5, 2.5, 4.0, 6.0, 9.0, 12.0, 16.0]


def longrope_cache(store, **kwargs):
    return posenc.RotaryKVCache(
        D, "longrope", 10000.0, 4.0, 8, store=store, short_factor=SHORT, long_factor=LONG, **kwargs
    )


def test_longrope_rotated_cache_is_exact_until_the_switch_then_wrong_by_the_factor_change():
    cache = longrope_cache("rotated").append(KEYS[:8], VALUES[:8])
    np.testing.assert_allclose(posenc.cache_score_error(cache, QUERIES[7]), 0.0, atol=1e-12)
    cache.append(KEYS[8:9], VALUES[8:9])  # length 9 > 8: the long factors from now on
    theta = posenc.rope_inv_freq(D)
    by_hand = np.arange(9)[:, None] * (theta / np.array(SHORT) - theta / np.array(LONG))
    by_hand[8] = 0.0  # the newest key was rotated with the long factors already
    np.testing.assert_allclose(cache.angle_error(), np.angle(np.exp(1j * by_hand)), atol=1e-12)
    error = posenc.cache_score_error(cache, QUERIES[8])
    assert error[0] == pytest.approx(0.0, abs=1e-12)  # position 0: no angle to be wrong
    assert np.all(np.abs(error[2:8]) > 1e-6) and np.abs(error).max() > 0.1
    unrotated = longrope_cache("unrotated")
    unrotated.append(KEYS[:8], VALUES[:8]).append(KEYS[8:9], VALUES[8:9])
    np.testing.assert_allclose(posenc.cache_score_error(unrotated, QUERIES[8]), 0.0, atol=1e-12)
    np.testing.assert_allclose(unrotated.keys_for_query(), cache.fresh_keys(), atol=1e-12)


def test_longrope_matches_transformers_phi3_reuse_and_recompute():
    """transformers' Phi-3 drops its cache when the sequence first passes the original length and recomputes
    it (``prepare_inputs_for_generation``): after ``generate`` every cached key carries the long factors,
    the cache's ``fresh_keys``. Stepping the model by hand keeps the short-factor keys: ``keys_for_query``."""
    rope = {"rope_type": "longrope", "rope_theta": 10000.0, "short_factor": SHORT, "long_factor": LONG, "factor": 4.0}
    config = tiny_config(Phi3Config, rope, 32, original_max_position_embeddings=8, head_dim=D)
    model = Phi3ForCausalLM(config).eval()
    prompt = torch.randint(2, 40, (1, 5), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        out = model.generate(prompt, max_new_tokens=8, do_sample=False, return_dict_in_generate=True)
    ids = out.sequences[:, :-1]  # the last token was sampled, never fed back: 12 keys cached
    recomputed = out.past_key_values.layers[0].keys.numpy().astype(np.float64)
    reused = step(model, ids, prefill=5)
    layer, width = model.model.layers[0], 2 * D
    with torch.no_grad():
        qkv = layer.self_attn.qkv_proj(layer.input_layernorm(model.model.embed_tokens(ids)))
    raw = qkv[..., width : 2 * width].view(1, 12, 2, D).transpose(1, 2).numpy().astype(np.float64)
    cache = fill(longrope_cache("rotated"), raw, raw, prefill=5)
    np.testing.assert_allclose(cache.keys_for_query(), reused, atol=2e-5)
    np.testing.assert_allclose(cache.fresh_keys(), recomputed, atol=2e-5)
    assert np.abs(reused - recomputed).max() > 1e-2


def test_an_unrotated_store_is_stale_from_the_second_layer_on_only_a_recompute_matches():
    """Storing entries before rotation keeps one layer exact, not the model: from the second layer on, the
    cached keys and values were computed from hidden states that attended with the old speeds. A tiny 2-layer
    Phi-3 with LongRoPE, stepped past the switch: its value cache (values are never rotated, so it is an
    unrotated store) agrees with a full recompute (one forward over the whole sequence, what ``generate`` does
    at the switch) in layer 0 and differs in layer 1."""
    rope = {"rope_type": "longrope", "rope_theta": 10000.0, "short_factor": SHORT, "long_factor": LONG, "factor": 4.0}
    config = tiny_config(Phi3Config, rope, 32, layers=2, original_max_position_embeddings=8, head_dim=D)
    model = Phi3ForCausalLM(config).eval()
    ids = torch.randint(2, 40, (1, 12), generator=torch.Generator().manual_seed(3))
    stepped = DynamicCache(config=config)
    with torch.no_grad():
        model(ids[:, :5], past_key_values=stepped, use_cache=True)  # length 5 <= 8: short factors
        for n in range(5, 12):
            model(ids[:, n : n + 1], past_key_values=stepped, use_cache=True)
        recomputed = DynamicCache(config=config)
        model(ids, past_key_values=recomputed, use_cache=True)  # length 12 > 8: long factors for all
    gap = [(stepped.layers[j].values - recomputed.layers[j].values).abs().max().item() for j in (0, 1)]
    scale = recomputed.layers[1].values.abs().max().item()
    assert gap[0] < 1e-5  # layer 0: the projection of the embeddings, no position in it
    assert gap[1] > 1e-2 * scale  # layer 1: computed from hidden states of the short-factor run


# --- StreamingLLM: sinks, a window, positions inside the cache ---------------------------------------


def test_sink_window_reassigns_positions_as_streaming_llm_section_3_2():
    """Xiao et al. 2023, section 3.2: a cache holding tokens [0, 1, 2, 3, 6, 7, 8] while decoding token 9
    assigns positions [0, 1, 2, 3, 4, 5, 6, 7], not the text's [0, 1, 2, 3, 6, 7, 8, 9]."""
    cache = posenc.RotaryKVCache(D, store="unrotated", window=4, n_sink=4, position_rule="cache")
    fill(cache, KEYS[:10], VALUES[:10], prefill=1)
    np.testing.assert_array_equal(cache.positions, [0, 1, 2, 3, 6, 7, 8, 9])
    np.testing.assert_array_equal(cache.key_positions(), np.arange(8))
    assert cache.query_position() == 7
    original = fill(posenc.RotaryKVCache(D, window=4, n_sink=4), KEYS[:10], VALUES[:10], prefill=1)
    np.testing.assert_array_equal(original.key_positions(), [0, 1, 2, 3, 6, 7, 8, 9])
    assert original.query_position() == 9


@pytest.mark.parametrize("rule", posenc.POSITION_RULES)
def test_sink_window_attention_equals_attention_over_the_kept_tokens(rule):
    store = "unrotated" if rule == "cache" else "rotated"
    cache = posenc.RotaryKVCache(D, store=store, window=3, n_sink=2, position_rule=rule)
    inv = posenc.rope_inv_freq(D)
    cache.append(KEYS[:2], VALUES[:2])
    for n in range(2, 12):
        cache.append(KEYS[n : n + 1], VALUES[n : n + 1])
        kept = cache.positions
        assert kept.tolist() == sorted(set(range(min(2, n + 1))) | set(range(max(0, n - 2), n + 1)))
        at = np.arange(kept.size) if rule == "cache" else kept
        weights = posenc.attention_weights(
            posenc.apply_rope(QUERIES[n : n + 1], at[-1:], inv), posenc.apply_rope(KEYS[kept], at, inv)
        )
        np.testing.assert_allclose(cache.attend(QUERIES[n]), (weights @ VALUES[kept])[0], atol=1e-12)
        distance = cache.query_position() - cache.key_positions()[0]  # to the first sink
        assert distance == (min(n, 4) if rule == "cache" else n)


def test_positions_inside_the_cache_need_unrotated_keys():
    with pytest.raises(ValueError, match='store="unrotated"'):
        posenc.RotaryKVCache(D, window=4, n_sink=1, position_rule="cache")


def test_batched_heads_and_values_of_another_width():
    keys = RNG.normal(size=(2, 3, 6, D))
    values = RNG.normal(size=(2, 3, 6, 5))
    cache = posenc.RotaryKVCache(D).append(keys, values)
    assert cache.attend(RNG.normal(size=(2, 3, D))).shape == (2, 3, 5)
    assert posenc.cache_score_error(cache, RNG.normal(size=(2, 3, D))).shape == (2, 3, 6)
    assert len(cache) == 6 and cache.length == 6 and cache.inv_freq.shape == (D // 2,)


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: posenc.RotaryKVCache(7), "head_dim must be even"),
        (lambda: posenc.RotaryKVCache(D, "bogus"), "method must be one of"),
        (lambda: posenc.RotaryKVCache(D, store="both"), "store must be one of"),
        (lambda: posenc.RotaryKVCache(D, n_sink=2), "n_sink=2 needs a window"),
        (lambda: posenc.RotaryKVCache(D, "dynamic", seq_len=5), "seq_len"),
        (lambda: posenc.RotaryKVCache(D, "longrope", short_factor=[1.0]), "short_factor must hold"),
        (lambda: posenc.RotaryKVCache(D).append(KEYS[:2, :4], VALUES[:2]), "keys must have shape"),
        (lambda: posenc.RotaryKVCache(D).append(KEYS[:2], VALUES[:3]), "values must have shape"),
        (lambda: posenc.RotaryKVCache(D).append(KEYS[:2], VALUES[:2], positions=[3, 2]), "positions must increase"),
        (lambda: posenc.RotaryKVCache(D).append(KEYS[:2].tolist(), VALUES[:2]), "keys must be a numpy.ndarray"),
        (lambda: posenc.RotaryKVCache(D).keys_for_query(), "the cache is empty"),
        (lambda: posenc.RotaryKVCache(D).append(KEYS[:2], VALUES[:2]).attend(KEYS[0, :4]), "query must have shape"),
        (lambda: posenc.cache_score_error("cache", KEYS[0]), "cache must be a posenc.RotaryKVCache"),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()


def test_appending_before_the_last_position_is_refused():
    cache = posenc.RotaryKVCache(D).append(KEYS[:3], VALUES[:3], positions=[0, 4, 9])
    with pytest.raises(ValueError, match="after the last cached position 9"):
        cache.append(KEYS[3:4], VALUES[3:4], positions=[9])
    assert cache.append(KEYS[3:4], VALUES[3:4]).positions.tolist() == [0, 4, 9, 10]
