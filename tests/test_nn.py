"""torch modules agree with the NumPy kernels and, for RoPE, with transformers' Llama rotary embedding."""

import math

import numpy as np
import pytest
import torch

import posenc
from posenc.nn import ALiBiBias, LearnedPositionalEmbedding, RotaryEmbedding, SinusoidalPositionalEncoding


def randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


# --- sinusoidal ---------------------------------------------------------------------------------


def test_sinusoidal_module_adds_the_kernel_table():
    module = SinusoidalPositionalEncoding(16, max_len=32)
    x = randn(2, 10, 16)
    expected = x + torch.from_numpy(posenc.sinusoidal(10, 16)).float()
    torch.testing.assert_close(module(x), expected)
    torch.testing.assert_close(module(x, offset=5), x + torch.from_numpy(posenc.sinusoidal(15, 16)[5:]).float())


def test_sinusoidal_module_scales_embeddings_by_sqrt_d_model():
    module = SinusoidalPositionalEncoding(64, scale_embeddings=True)
    x = randn(1, 4, 64)
    torch.testing.assert_close(module(x), x * 8.0 + torch.from_numpy(posenc.sinusoidal(4, 64)).float())


def test_sinusoidal_module_is_a_buffer_not_a_parameter_and_not_saved():
    module = SinusoidalPositionalEncoding(8, max_len=16)
    assert list(module.parameters()) == []
    assert "pe" in dict(module.named_buffers())
    assert "pe" not in module.state_dict()  # deterministic: recomputed, never stored
    assert module.to(torch.float64).pe.dtype == torch.float64


def test_sinusoidal_module_extends_its_table_for_longer_inputs():
    module = SinusoidalPositionalEncoding(8, max_len=16)
    x = torch.zeros(1, 100, 8)
    out = module(x)
    assert module.pe.shape[0] == 128
    torch.testing.assert_close(out[0], torch.from_numpy(posenc.sinusoidal(100, 8)).float())


def test_sinusoidal_module_dropout_only_in_training():
    module = SinusoidalPositionalEncoding(8, dropout=0.5)
    x = torch.ones(1, 50, 8)
    module.eval()
    torch.testing.assert_close(module(x), module(x))
    module.train()
    torch.manual_seed(0)
    assert (module(x) == 0).any()


# --- learned --------------------------------------------------------------------------------------


def test_learned_embedding_adds_rows_and_learns():
    module = LearnedPositionalEmbedding(max_len=12, d_model=6)
    assert sum(p.numel() for p in module.parameters()) == 72
    x = randn(3, 12, 6)
    out = module(x)
    torch.testing.assert_close(out, x + module.embedding.weight[None])
    out.sum().backward()
    assert module.embedding.weight.grad is not None
    assert module.embedding.weight.std().item() == pytest.approx(0.02, rel=0.5)


def test_learned_embedding_refuses_positions_past_max_len_with_a_clear_error():
    module = LearnedPositionalEmbedding(max_len=8, d_model=4)
    with pytest.raises(ValueError, match=r"positions up to 8.*positions 0\.\.7 \(max_len=8\).*cannot extrapolate"):
        module(torch.zeros(1, 9, 4))
    with pytest.raises(ValueError, match="starting at offset 5"):
        module(torch.zeros(1, 4, 4), offset=5)


# --- rotary ---------------------------------------------------------------------------------------

SCALINGS = [
    ("default", 1.0, {}),
    ("linear", 4.0, {}),
    ("ntk", 4.0, {}),
    ("yarn", 8.0, {"beta_fast": 32, "beta_slow": 1}),
    ("llama3", 8.0, {"low_freq_factor": 1.0, "high_freq_factor": 4.0}),
]


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("method,factor,params", SCALINGS)
def test_rotary_module_equals_apply_rope_with_scaled_frequencies(layout, method, factor, params):
    module = RotaryEmbedding(32, 10000.0, layout, method, factor, 512, max_len=64, **params)
    q, k = randn(2, 3, 100, 32, seed=1), randn(2, 3, 100, 32, seed=2)
    q_rot, k_rot = module(q, k, offset=7)  # past max_len: the cache regrows
    inv, af = posenc.scaled_inv_freq(method, 32, 10000.0, factor, 512, **params)
    pos = np.arange(7, 107)
    torch.testing.assert_close(q_rot, posenc.apply_rope(q, pos, inv, layout, af))
    torch.testing.assert_close(k_rot, posenc.apply_rope(k, pos, inv, layout, af))
    assert module.cos_cached.shape[0] >= 107 and list(module.parameters()) == []


@pytest.mark.parametrize("method,factor,params", [*SCALINGS[:2], *SCALINGS[3:], ("dynamic", 4.0, {})])
def test_rotary_module_matches_transformers_llama(method, factor, params):
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    from reference import llama_rope_config

    head_dim, original, seq = 64, 256, 700
    config = llama_rope_config(method, head_dim, 10000.0, factor, original, **params)
    q, k = randn(1, 4, seq, head_dim, seed=3), randn(1, 4, seq, head_dim, seed=4)
    position_ids = torch.arange(seq)[None]
    cos, sin = LlamaRotaryEmbedding(config)(q, position_ids)
    q_ref, k_ref = apply_rotary_pos_emb(q, k, cos, sin)
    ours = RotaryEmbedding(head_dim, 10000.0, "half", method, factor, original, **params)
    q_rot, k_rot = ours(q, k)
    # transformers forms angles in float32 (error ~ position * 2**-24 rad); posenc in float64
    torch.testing.assert_close(q_rot, q_ref, atol=3e-4, rtol=1e-4)
    torch.testing.assert_close(k_rot, k_ref, atol=3e-4, rtol=1e-4)


def test_dynamic_rotary_follows_the_current_length():
    module = RotaryEmbedding(16, scaling="dynamic", factor=2.0, original_max_position_embeddings=32)
    q = randn(1, 20, 16)
    short, _ = module(q, q)
    torch.testing.assert_close(short, posenc.apply_rope(q, np.arange(20), posenc.rope_inv_freq(16)))
    q_long = randn(1, 80, 16)
    long, _ = module(q_long, q_long)
    inv, _ = posenc.scaled_inv_freq("dynamic", 16, factor=2.0, original_max_position_embeddings=32, seq_len=80)
    torch.testing.assert_close(long, posenc.apply_rope(q_long, np.arange(80), inv))
    again, _ = module(q, q)  # back below L: unscaled again
    torch.testing.assert_close(again, short)


def test_rotary_module_explicit_positions_and_relative_property():
    module = RotaryEmbedding(8)
    q, k = randn(1, 1, 8, seed=5), randn(1, 1, 8, seed=6)
    scores = []
    for shift in (0, 13, 900):
        q_rot, k_rot = module(q, k, positions=[10 + shift])
        k_rot = module(k, k, positions=[4 + shift])[0]
        scores.append((q_rot[0, 0] @ k_rot[0, 0]).item())
    assert scores[1] == pytest.approx(scores[0], abs=1e-5) and scores[2] == pytest.approx(scores[0], abs=1e-5)


def test_rotary_module_backpropagates():
    module = RotaryEmbedding(8, layout="interleaved")
    q = randn(2, 5, 8).requires_grad_(True)
    q_rot, _ = module(q, q.detach())
    q_rot.pow(2).sum().backward()
    torch.testing.assert_close(q.grad, 2 * q.detach())


# --- alibi ----------------------------------------------------------------------------------------


def test_alibi_module_equals_kernel_plus_causal_mask():
    module = ALiBiBias(6)
    bias = module(7)
    ref = torch.from_numpy(posenc.alibi_bias(7, 6)).float()
    future = torch.triu(torch.ones(7, 7, dtype=torch.bool), 1)
    torch.testing.assert_close(bias.masked_fill(future, 0.0), ref)
    assert torch.isinf(bias[:, future]).all() and (bias[:, future] < 0).all()
    torch.testing.assert_close(ALiBiBias(6, causal=False)(7), ref)


def test_alibi_module_queries_are_the_last_positions():
    module = ALiBiBias(4)
    torch.testing.assert_close(module(3, 10), module(10)[:, -3:, :])


def test_alibi_module_in_attention_prefers_near_keys():
    bias = ALiBiBias(2)(6)
    weights = torch.softmax(torch.zeros(2, 6, 6) + bias, dim=-1)
    assert torch.all(weights[:, 5, 1:] > weights[:, 5, :-1])
    # two heads: slopes 2**-4 and 2**-8; the query at 5 weighs the key d back by exp(-slope * d)
    for head, slope in enumerate((2**-4, 2**-8)):
        total = sum(math.exp(-slope * d) for d in range(6))
        assert weights[head, 5, 5].item() == pytest.approx(1 / total, rel=1e-6)
        assert weights[head, 5, 0].item() == pytest.approx(math.exp(-slope * 5) / total, rel=1e-6)
