"""torch modules agree with the NumPy kernels and, for RoPE, with transformers' Llama rotary embedding."""

import math
import warnings

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
    expected = r"positions up to 8.*positions 0\.\.7 \(max_len=8\).*no row past max_len.*RoPE"
    with pytest.raises(ValueError, match=expected):
        module(torch.zeros(1, 9, 4))
    with pytest.raises(ValueError) as caught:
        module(torch.zeros(1, 9, 4))
    assert "sinusoidal" not in str(caught.value)  # the lab shows sinusoidal models fail past L too
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


def test_bidirectional_alibi_module_equals_the_kernel_and_has_no_mask():
    module = ALiBiBias(6, bidirectional=True)
    assert module.causal is False and module.bidirectional is True
    bias = module(7)
    torch.testing.assert_close(bias, torch.from_numpy(posenc.alibi_bias(7, 6, bidirectional=True)).float())
    assert torch.isfinite(bias).all()
    torch.testing.assert_close(module(3, 10), module(10)[:, -3:, :])  # the last queries, as in the causal form
    assert ALiBiBias(6).causal is True and ALiBiBias(6).bidirectional is False  # the default is unchanged
    assert "bidirectional=True" in repr(module)


def test_bidirectional_alibi_module_refuses_a_causal_mask():
    with pytest.raises(ValueError, match="causal=True and bidirectional=True"):
        ALiBiBias(4, causal=True, bidirectional=True)
    with pytest.raises(TypeError, match="bidirectional must be True or False"):
        ALiBiBias(4, bidirectional=1)


def test_alibi_module_in_attention_prefers_near_keys():
    bias = ALiBiBias(2)(6)
    weights = torch.softmax(torch.zeros(2, 6, 6) + bias, dim=-1)
    assert torch.all(weights[:, 5, 1:] > weights[:, 5, :-1])
    # two heads: slopes 2**-4 and 2**-8; the query at 5 weighs the key d back by exp(-slope * d)
    for head, slope in enumerate((2**-4, 2**-8)):
        total = sum(math.exp(-slope * d) for d in range(6))
        assert weights[head, 5, 5].item() == pytest.approx(1 / total, rel=1e-6)
        assert weights[head, 5, 0].item() == pytest.approx(math.exp(-slope * 5) / total, rel=1e-6)


def test_lab_exports_a_learned_position_table_before_and_after_training(tmp_path):
    # the table chapter 6 shows: python -m posenc.lab table (here with 2 training steps)
    import json

    from posenc import lab
    from posenc.lab.__main__ import main

    config = lab.RunConfig.for_task("lookup", scheme="learned", steps=2, d_model=16, n_heads=2)
    result = lab.learned_position_table(config)
    assert result["initial"].shape == result["trained"].shape == (config.train_len, 16)
    assert not np.array_equal(result["initial"], result["trained"])  # training moved the rows
    start = lab.build_model(config).absolute.embedding.weight.detach()[: config.train_len].numpy()
    np.testing.assert_array_equal(result["initial"], start)  # the seeded initial table
    with pytest.raises(ValueError, match="scheme 'learned'"):
        lab.learned_position_table(lab.RunConfig.for_task("lookup", scheme="rope", steps=1))
    out = tmp_path / "table.npz"
    assert main(["table", "--task", "lookup", "--steps", "2", "--quiet", "--out", str(out)]) == 0
    saved = np.load(out)
    assert saved["trained"].dtype == np.float16 and saved["trained"].shape == (32, 64)
    assert json.loads(str(saved["about"]))["command"].startswith("python -m posenc.lab table --task lookup")


# --- rotary: partial, batch positions, KV cache, memory, precision ---------------------------------


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_partial_rotary_module_equals_apply_rope_with_rotary_dim(layout):
    module = RotaryEmbedding(24, 500.0, layout, "yarn", 4.0, 64, max_len=32, partial_rotary_factor=0.5)
    assert module.rotary_dim == 12 and "rotary_dim=12" in repr(module)
    q, k = randn(2, 3, 40, 24, seed=20), randn(2, 3, 40, 24, seed=21)
    q_rot, k_rot = module(q, k, offset=3)
    inv, af = posenc.scaled_inv_freq("yarn", 12, 500.0, 4.0, 64)  # speeds spread over the rotated dimensions
    pos = np.arange(3, 43)
    torch.testing.assert_close(q_rot, posenc.apply_rope(q, pos, inv, layout, af, rotary_dim=12))
    torch.testing.assert_close(k_rot, posenc.apply_rope(k, pos, inv, layout, af, rotary_dim=12))
    torch.testing.assert_close(q_rot[..., 12:], q[..., 12:], atol=0, rtol=0)


def test_partial_rotary_module_matches_transformers_gpt_neox():
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding, apply_rotary_pos_emb

    head_dim, factor = 96, 0.25  # GPT-NeoX-20B's head and rotary_pct
    rope = {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": factor}
    config = GPTNeoXConfig(hidden_size=2 * head_dim, num_attention_heads=2, rope_parameters=rope)
    q, k = randn(1, 2, 30, head_dim, seed=22), randn(1, 2, 30, head_dim, seed=23)
    position_ids = torch.arange(100, 130)[None]
    q_ref, k_ref = apply_rotary_pos_emb(q, k, *GPTNeoXRotaryEmbedding(config)(q, position_ids))
    q_rot, k_rot = RotaryEmbedding(head_dim, partial_rotary_factor=factor)(q, k, offset=100)
    torch.testing.assert_close(q_rot, q_ref, atol=1e-4, rtol=1e-4)  # transformers: float32 angles
    torch.testing.assert_close(k_rot, k_ref, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("factor", [0.0, 1.5, 0.1, 0.375])
def test_partial_rotary_factor_is_validated(factor):
    with pytest.raises(ValueError, match="partial_rotary_factor"):
        RotaryEmbedding(8, partial_rotary_factor=factor)  # 0.1 -> rotary_dim 0, 0.375 -> 3 (odd)


@pytest.mark.parametrize("method,factor,params", [("default", 1.0, {}), ("yarn", 4.0, {}), ("dynamic", 2.0, {})])
def test_rotary_module_batch_position_ids_match_transformers(method, factor, params):
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    from reference import llama_rope_config

    head_dim, original = 32, 64
    config = llama_rope_config(method, head_dim, 10000.0, factor, original, **params)
    attention_mask = torch.tensor([[1] * 20, [0] * 7 + [1] * 13, [1] * 20])
    position_ids = (attention_mask.cumsum(-1) - 1).masked_fill(attention_mask == 0, 1)  # left padding
    position_ids[2] = torch.cat((torch.arange(8), torch.arange(12)))  # two packed sequences
    q, k = randn(3, 4, 20, head_dim, seed=24), randn(3, 2, 20, head_dim, seed=25)  # grouped-query: fewer k heads
    q_ref, k_ref = apply_rotary_pos_emb(q, k, *LlamaRotaryEmbedding(config)(q, position_ids))
    module = RotaryEmbedding(head_dim, 10000.0, "half", method, factor, original, **params)
    q_rot, k_rot = module(q, k, positions=position_ids)
    torch.testing.assert_close(q_rot, q_ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(k_rot, k_ref, atol=1e-5, rtol=1e-5)
    # (batch, seq, head_dim) works too, and each row equals the 1-D call
    q3 = q[:, 0]
    q3_rot, _ = module(q3, q3, positions=position_ids)
    for b in range(3):
        torch.testing.assert_close(q3_rot[b], module(q3[b], q3[b], positions=position_ids[b])[0])


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("batch_positions", [False, True])
def test_kv_cache_decoding_gives_the_full_sequence_scores(layout, batch_positions):
    seq, head_dim = 24, 16
    module = RotaryEmbedding(
        head_dim,
        layout=layout,
        scaling="yarn",
        factor=4.0,
        original_max_position_embeddings=8,
        max_len=4,
        partial_rotary_factor=0.5,
    )
    q, k = (
        randn(2, 3, seq, head_dim, seed=26, dtype=torch.float64),
        randn(2, 3, seq, head_dim, seed=27, dtype=torch.float64),
    )
    position_ids = torch.stack((torch.arange(seq), (torch.arange(seq) - 5).clamp(min=0)))  # second: left-padded by 5
    if batch_positions:
        q_full, k_full = module(q, k, positions=position_ids)
    else:
        q_full, k_full = module(q, k)
    full = q_full @ k_full.transpose(-1, -2)  # (batch, heads, seq, seq)
    cache = []
    for t in range(seq):  # one token at a time, keys kept rotated in the cache
        step = slice(t, t + 1)
        if batch_positions:
            q_t, k_t = module(q[..., step, :], k[..., step, :], positions=position_ids[:, step])
        else:
            q_t, k_t = module(q[..., step, :], k[..., step, :], offset=t)
        cache.append(k_t)
        scores = q_t @ torch.cat(cache, dim=-2).transpose(-1, -2)
        torch.testing.assert_close(scores[..., 0, :], full[..., t, : t + 1], atol=1e-12, rtol=0)


def test_rotary_module_memory_follows_the_positions_asked_for_not_the_largest():
    module = RotaryEmbedding(128, max_len=16)
    q, k = randn(1, 4, 1, 128, seed=28, dtype=torch.float64), randn(1, 4, 1, 128, seed=29, dtype=torch.float64)
    for position in (2**20, 2**26, 2**40):
        q_rot, k_rot = module(q, k, positions=[position])
        assert module.cos_cached.shape[0] <= module.cache_limit  # no table up to the position
        inv = posenc.rope_inv_freq(128)
        torch.testing.assert_close(q_rot, posenc.apply_rope(q, [position], inv), atol=1e-12, rtol=0)
        torch.testing.assert_close(k_rot, posenc.apply_rope(k, [position], inv), atol=1e-12, rtol=0)
    # the relative property survives at 2**26: only the offset 5 matters
    far = module(q, q, positions=[2**26 + 5])[0] @ module(k, k, positions=[2**26])[0].transpose(-1, -2)
    near = module(q, q, positions=[5])[0] @ module(k, k, positions=[0])[0].transpose(-1, -2)
    torch.testing.assert_close(far, near, atol=1e-7, rtol=0)  # float64 angles: 2**26 * 2**-53 = 7e-9 rad
    # offsets past the cache too; positions inside it use the cache, which grows in powers of two
    out = module(q, k, offset=10**7)[0]
    torch.testing.assert_close(out, posenc.apply_rope(q, [10**7], posenc.rope_inv_freq(128)), atol=1e-12, rtol=0)
    module(randn(1, 100, 128), randn(1, 100, 128))
    assert module.cos_cached.shape[0] == 128


def test_rotary_module_warns_when_float_positions_may_have_been_rounded():
    module = RotaryEmbedding(8)
    x = randn(1, 1, 8)
    exact = posenc.apply_rope(x, [2**25], posenc.rope_inv_freq(8))
    spacing = float(np.spacing(np.float32(2**25)))  # 4: float32 counts in steps of 4 there
    assert spacing == 4.0
    with pytest.warns(UserWarning, match=r"float32.*2\*\*24 = 16777216.*33554432.*4 apart.*up to 2 .*2 rad"):
        out, _ = module(x, x, positions=torch.tensor([2**25], dtype=torch.float32))
    torch.testing.assert_close(out, exact)  # 2**25 itself is exact: the warning is about what may have happened
    with pytest.warns(UserWarning, match=r"float16.*2\*\*11 = 2048"):
        module(x, x, positions=np.array([3000], dtype=np.float16))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module(x, x, positions=torch.tensor([2**26]))  # integers: exact, no warning
        module(x, x, positions=torch.tensor([2.0**24], dtype=torch.float32))  # still exact in float32
        module(x, x, positions=np.array([2.0**40]))  # float64 holds it


def test_rotary_module_position_errors():
    module = RotaryEmbedding(8)
    q = torch.zeros(2, 3, 5, 8)
    with pytest.raises(ValueError, match=r"positions of shape \(batch, seq\) = \(3, 5\).*\(2, 3, 5, 8\)"):
        module(q, q, positions=np.zeros((3, 5), dtype=int))
    with pytest.raises(ValueError, match=r"positions must have shape \(seq,\) or \(batch, seq\)"):
        module(q, q, positions=np.zeros((2, 1, 5), dtype=int))
    with pytest.raises(ValueError, match=r"positions must be >= 0.*-1"):
        module(q, q, positions=np.array([[0, 1, 2, 3, 4], [-1, 0, 1, 2, 3]]))


def test_p_rope_module_stops_the_slow_pairs_and_keeps_the_fast_speeds():
    module = RotaryEmbedding(16, p_rope=0.5)
    assert "p_rope=0.5" in repr(module)
    q, k = randn(2, 40, 16, seed=30), randn(2, 40, 16, seed=31)
    q_rot, k_rot = module(q, k)
    inv = posenc.p_rope_inv_freq(16, 10000.0, 0.5)
    np.testing.assert_array_equal(inv[:4], posenc.rope_inv_freq(16)[:4])  # the fastest four, unchanged
    assert np.all(inv[4:] == 0)
    torch.testing.assert_close(q_rot, posenc.apply_rope(q, np.arange(40), inv))
    torch.testing.assert_close(k_rot, posenc.apply_rope(k, np.arange(40), inv))
    # the stopped pairs never turn: dimensions 4-7 and 12-15 pass unchanged (half layout)
    for stopped in (slice(4, 8), slice(12, 16)):
        torch.testing.assert_close(q_rot[..., stopped], q[..., stopped], atol=0, rtol=0)
    # p-RoPE applies after a scaling method: YaRN's speeds, then the slow half stopped
    yarn = RotaryEmbedding(16, scaling="yarn", factor=4.0, original_max_position_embeddings=32, p_rope=0.5)
    inv_yarn, attention = posenc.scaled_inv_freq("yarn", 16, 10000.0, 4.0, 32)
    inv_yarn[4:] = 0
    torch.testing.assert_close(yarn(q, k)[0], posenc.apply_rope(q, np.arange(40), inv_yarn, "half", attention))
    with pytest.raises(ValueError, match="p_rope must be between 0 and 1"):
        RotaryEmbedding(16, p_rope=1.5)


def test_longrope_rotary_switches_to_the_long_factors_past_the_original_length():
    short, long = [1.0, 1.1, 1.2, 1.5], [1.0, 2.0, 4.0, 8.0]
    module = RotaryEmbedding(
        8, scaling="longrope", factor=4.0, original_max_position_embeddings=32, short_factor=short, long_factor=long
    )
    for length, factors in ((32, short), (33, long), (100, long), (20, short)):
        q = randn(1, length, 8, seed=length)
        inv, attention = posenc.scaled_inv_freq(
            "longrope", 8, 10000.0, 4.0, 32, short_factor=short, long_factor=long, seq_len=length
        )
        np.testing.assert_allclose(inv, posenc.rope_inv_freq(8) / np.array(factors))
        torch.testing.assert_close(module(q, q)[0], posenc.apply_rope(q, np.arange(length), inv, "half", attention))
    with pytest.raises(TypeError, match="sets seq_len for method 'longrope'"):
        RotaryEmbedding(8, scaling="longrope", seq_len=10)
