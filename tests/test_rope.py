"""RoPE: hand values, the identities that define it, both layouts, and the transformers reference."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import posenc

LAYOUTS = ["half", "interleaved"]


def rng_vectors(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def test_inv_freq_matches_formula():
    inv = posenc.rope_inv_freq(8, 10000.0)
    np.testing.assert_allclose(inv, [1.0, 0.1, 0.01, 0.001])  # 10000 ** (-2j/8) = 10 ** -j
    inv = posenc.rope_inv_freq(128, 500000.0)
    assert inv[0] == 1.0 and inv[-1] == pytest.approx(500000.0 ** (-126 / 128))
    assert np.all(np.diff(inv) < 0)  # pair 0 is the fastest


def test_angles_are_float64_outer_products():
    angles = posenc.rope_angles(np.array([0, 3], dtype=np.int32), np.array([1.0, 0.5], dtype=np.float32))
    assert angles.dtype == np.float64
    np.testing.assert_array_equal(angles, [[0, 0], [3, 1.5]])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_single_pair_rotates_counterclockwise(layout):
    # head_dim 2: the unit vector (1, 0) at position p becomes (cos p, sin p)
    for p in [0, 1, 2.5, 100]:
        out = posenc.apply_rope(np.array([[1.0, 0.0]]), [p], [1.0], layout=layout)
        np.testing.assert_allclose(out[0], [math.cos(p), math.sin(p)], atol=1e-15)


def test_half_and_interleaved_pair_different_dimensions():
    # pair 0 of head_dim 4 is (0, 2) in "half" and (0, 1) in "interleaved"; pair 1 is frozen by inv_freq 0
    x = np.array([[1.0, 0.0, 0.0, 0.0]])
    half = posenc.apply_rope(x, [math.pi / 2], [1.0, 0.0], layout="half")
    inter = posenc.apply_rope(x, [math.pi / 2], [1.0, 0.0], layout="interleaved")
    np.testing.assert_allclose(half, [[0, 0, 1, 0]], atol=1e-15)
    np.testing.assert_allclose(inter, [[0, 1, 0, 0]], atol=1e-15)


@given(
    m=st.integers(-5000, 5000),
    n=st.integers(-5000, 5000),
    shift=st.integers(-100000, 100000),
    half_dim=st.integers(1, 16),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_relative_property_scores_depend_on_offset_only(m, n, shift, half_dim, layout, seed):
    q, k = rng_vectors((2, 2 * half_dim), seed)
    inv = posenc.rope_inv_freq(2 * half_dim)

    def score(a, b):
        return posenc.apply_rope(q[None], [a], inv, layout)[0] @ posenc.apply_rope(k[None], [b], inv, layout)[0]

    assert score(m, n) == pytest.approx(score(m + shift, n + shift), abs=1e-8 * (1 + abs(shift) / 1000))
    # and equals g(q, k, m - n): rotating only the query by m - n
    assert score(m, n) == pytest.approx(score(m - n, 0), abs=1e-8)


@given(a=st.floats(-1e4, 1e4), b=st.floats(-1e4, 1e4), layout=st.sampled_from(LAYOUTS))
def test_rotations_compose_and_preserve_norm(a, b, layout):
    x = rng_vectors((1, 16), 1)
    inv = posenc.rope_inv_freq(16)
    twice = posenc.apply_rope(posenc.apply_rope(x, [a], inv, layout), [b], inv, layout)
    once = posenc.apply_rope(x, [a + b], inv, layout)
    np.testing.assert_allclose(twice, once, atol=1e-9)
    assert np.linalg.norm(once) == pytest.approx(np.linalg.norm(x))
    np.testing.assert_allclose(posenc.apply_rope(x, [0], inv, layout), x)


@given(half_dim=st.integers(1, 32), seq=st.integers(1, 12), seed=st.integers(0, 1000))
def test_layout_permutation_maps_interleaved_onto_half(half_dim, seq, seed):
    d = 2 * half_dim
    x = rng_vectors((3, seq, d), seed)
    inv = posenc.rope_inv_freq(d)
    pos = np.arange(seq) * 7
    perm = posenc.interleaved_to_half_permutation(d)
    np.testing.assert_allclose(
        posenc.apply_rope(x[..., perm], pos, inv, "half"),
        posenc.apply_rope(x, pos, inv, "interleaved")[..., perm],
        atol=1e-12,
    )
    np.testing.assert_array_equal(np.sort(perm), np.arange(d))


def test_permutation_for_head_dim_8():
    np.testing.assert_array_equal(posenc.interleaved_to_half_permutation(8), [0, 2, 4, 6, 1, 3, 5, 7])


@given(half_dim=st.integers(1, 32), factor=st.floats(0.1, 3.0), seed=st.integers(0, 1000))
def test_complex_form_equals_interleaved_layout(half_dim, factor, seed):
    x = rng_vectors((2, 9, 2 * half_dim), seed)
    inv = posenc.rope_inv_freq(2 * half_dim, 500.0)
    pos = np.arange(9) ** 2
    np.testing.assert_allclose(
        posenc.apply_rope_complex(x, pos, inv, attention_factor=factor),
        posenc.apply_rope(x, pos, inv, "interleaved", attention_factor=factor),
        atol=1e-12,
    )


def test_attention_factor_scales_vectors_and_squares_into_logits():
    q, k = rng_vectors((2, 1, 8), 3)
    inv = posenc.rope_inv_freq(8)
    plain = posenc.apply_rope(q, [5], inv)[0] @ posenc.apply_rope(k, [2], inv)[0]
    scaled = (
        posenc.apply_rope(q, [5], inv, attention_factor=1.2)[0]
        @ posenc.apply_rope(k, [2], inv, attention_factor=1.2)[0]
    )
    assert scaled == pytest.approx(1.44 * plain)


def test_float32_output_is_accurate_at_position_two_to_the_twenty():
    x = rng_vectors((4, 128), 4)
    pos = np.arange(2**20, 2**20 + 4)
    inv = posenc.rope_inv_freq(128)
    exact = posenc.apply_rope(x, pos, inv)
    for out in (
        posenc.apply_rope(x.astype(np.float32), pos, inv),
        posenc.apply_rope(torch.tensor(x, dtype=torch.float32), pos, inv).numpy(),
    ):
        assert out.dtype == np.float32
        assert np.max(np.abs(out - exact)) < 1e-5  # float32 rounding of O(1) values


# --- torch ------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_torch_and_numpy_agree(layout, dtype):
    x = rng_vectors((2, 3, 10, 16), 5)
    inv = posenc.rope_inv_freq(16)
    pos = np.arange(10) + 1000
    out = posenc.apply_rope(torch.tensor(x, dtype=dtype), pos, inv, layout, attention_factor=1.1)
    assert isinstance(out, torch.Tensor) and out.dtype == dtype and out.shape == (2, 3, 10, 16)
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    np.testing.assert_allclose(out.numpy(), posenc.apply_rope(x, pos, inv, layout, attention_factor=1.1), atol=tol)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_fast_and_differentiable_paths_agree_and_gradients_flow(layout):
    x = torch.randn(2, 4, 12, 8, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    inv = posenc.rope_inv_freq(8)
    pos = torch.arange(12)
    with torch.no_grad():
        fast = posenc.apply_rope(x, pos, inv, layout)
    xg = x.clone().requires_grad_(True)
    slow = posenc.apply_rope(xg, pos, inv, layout)
    torch.testing.assert_close(fast, slow.detach(), atol=1e-12, rtol=0)
    slow.pow(2).sum().backward()
    # a rotation preserves norms, so d/dx |R x|^2 = 2 x
    torch.testing.assert_close(xg.grad, 2 * x, atol=1e-12, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_half_precision_inputs_keep_their_dtype(dtype, layout):
    x = torch.randn(1, 6, 8, generator=torch.Generator().manual_seed(1))
    inv = posenc.rope_inv_freq(8)
    out = posenc.apply_rope(x.to(dtype), np.arange(6), inv, layout)
    assert out.dtype == dtype
    ref = posenc.apply_rope(x.to(dtype).float(), np.arange(6), inv, layout)
    torch.testing.assert_close(out.float(), ref, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_non_contiguous_input(layout):
    x = torch.randn(2, 10, 4, 8, generator=torch.Generator().manual_seed(2)).transpose(1, 2)  # (b, h, s, d)
    assert not x.is_contiguous()
    inv = posenc.rope_inv_freq(8)
    out = posenc.apply_rope(x, torch.arange(10), inv, layout)
    torch.testing.assert_close(out, posenc.apply_rope(x.contiguous(), torch.arange(10), inv, layout))


@pytest.mark.parametrize("head_dim,base", [(64, 10000.0), (128, 500000.0), (32, 1000.0)])
def test_half_layout_matches_transformers_apply_rotary_pos_emb(head_dim, base):
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    from reference import llama_rope_config

    config = llama_rope_config("default", head_dim, base, 1.0, 4096)
    generator = torch.Generator().manual_seed(3)
    q = torch.randn(2, 2, 50, head_dim, generator=generator)
    k = torch.randn(2, 2, 50, head_dim, generator=generator)
    position_ids = torch.arange(1000, 1050)[None].expand(2, -1)
    cos, sin = LlamaRotaryEmbedding(config)(q, position_ids)
    q_ref, k_ref = apply_rotary_pos_emb(q, k, cos, sin)
    inv = posenc.rope_inv_freq(head_dim, base)
    # transformers forms the angles in float32: at position ~1000 they are off by up to ~1000 * 2**-24 rad,
    # which bounds the agreement; posenc's float64 angles are the more accurate of the two.
    torch.testing.assert_close(posenc.apply_rope(q, position_ids[0], inv), q_ref, atol=2e-4, rtol=1e-4)
    torch.testing.assert_close(posenc.apply_rope(k, position_ids[0], inv), k_ref, atol=2e-4, rtol=1e-4)


def test_transformers_llama_rope_after_model_to_bfloat16_uses_bfloat16_speeds():
    # Chapter 13's claim about transformers 5.23: model.to(torch.bfloat16) casts the inv_freq buffer, forward's
    # .float() cannot restore it, so the cosines are those of the bfloat16-rounded speeds (posenc.rope_cos_sin of
    # them); a model created with dtype=torch.bfloat16 keeps inv_freq in float32.
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=16,
        hidden_size=256,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=8192,
    )  # head_dim 128, base 10000
    model = LlamaForCausalLM(config)
    rotary = model.model.rotary_emb
    x, position_ids = torch.zeros(1, 8192, 4), torch.arange(8192)[None]
    cos_float32, _ = rotary(x, position_ids)
    model.to(torch.bfloat16)
    assert rotary.inv_freq.dtype == torch.bfloat16 and rotary.original_inv_freq.dtype == torch.bfloat16
    cos_cast, _ = rotary(x, position_ids)
    theta = posenc.rope_inv_freq(128)
    rounded = torch.from_numpy(theta).bfloat16().double().numpy()
    expected_cast, _ = posenc.rope_cos_sin(np.arange(8192), rounded)
    expected_right, _ = posenc.rope_cos_sin(np.arange(8192), theta)
    half = cos_cast[0, :, :64].double().numpy()  # transformers' table is [angles, angles]
    np.testing.assert_allclose(half, expected_cast, atol=2e-3, rtol=0)  # float32 angles up to 8191: ~5e-4 rad
    np.testing.assert_allclose(cos_float32[0, :, :64].double().numpy(), expected_right, atol=2e-3, rtol=0)
    assert np.abs(half - expected_right).max() > 1.9  # the chapter's "up to 2.0"
    loaded = LlamaForCausalLM._from_config(config, dtype=torch.bfloat16)
    assert loaded.model.rotary_emb.inv_freq.dtype == torch.float32


def test_positions_may_be_torch_tensors_lists_or_arrays():
    x = rng_vectors((3, 4), 6)
    inv = posenc.rope_inv_freq(4)
    ref = posenc.apply_rope(x, np.array([0, 1, 2]), inv)
    np.testing.assert_allclose(posenc.apply_rope(x, [0, 1, 2], inv), ref)
    np.testing.assert_allclose(posenc.apply_rope(x, torch.arange(3), inv), ref)


# --- p-RoPE ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("head_dim", [8, 64, 96, 256])
@pytest.mark.parametrize("p", [0.0, 0.25, 0.3, 0.5, 0.75, 1.0])
def test_p_rope_keeps_the_fastest_pairs_as_transformers_proportional_rope_does(head_dim, p):
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    base = 10000.0
    ours = posenc.p_rope_inv_freq(head_dim, base, p)
    # by hand: floor(p * head_dim / 2) pairs keep base**(-2j/head_dim) (the exponent keeps head_dim), the rest are 0
    kept = math.floor(p * head_dim / 2)
    expected = [base ** (-2 * j / head_dim) if j < kept else 0.0 for j in range(head_dim // 2)]
    np.testing.assert_allclose(ours, expected, rtol=1e-15, atol=0)
    config = LlamaConfig(
        hidden_size=2 * head_dim,
        num_attention_heads=2,
        head_dim=head_dim,
        rope_parameters={"rope_type": "proportional", "rope_theta": base, "partial_rotary_factor": p},
    )
    reference, attention_factor = ROPE_INIT_FUNCTIONS["proportional"](config, "cpu")
    np.testing.assert_allclose(ours, reference.double().numpy(), rtol=1e-6, atol=0)  # transformers: float32
    assert attention_factor == 1.0


@pytest.mark.parametrize("layout", LAYOUTS)
def test_p_rope_leaves_the_slow_pairs_unturned_and_keeps_the_relative_property(layout):
    head_dim = 16
    inv = posenc.p_rope_inv_freq(head_dim, 10000.0, 0.5)  # pairs 0..3 turn, 4..7 do not
    q, k = rng_vectors((2, 1, head_dim), 11)
    frozen = np.arange(4, 8) if layout == "half" else np.arange(8, 16)
    frozen = np.concatenate((frozen, frozen + 8)) if layout == "half" else frozen
    rotated = posenc.apply_rope(q, [12345], inv, layout)
    np.testing.assert_array_equal(rotated[0, frozen], q[0, frozen])
    assert not np.allclose(rotated, q)

    def score(m, n):
        return posenc.apply_rope(q, [m], inv, layout)[0] @ posenc.apply_rope(k, [n], inv, layout)[0]

    assert score(70, 30) == pytest.approx(score(1070, 1030), abs=1e-10)
    assert score(70, 30) == pytest.approx(score(40, 0), abs=1e-10)


# --- partial RoPE ---------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_partial_rope_rotates_the_first_rotary_dim_and_passes_the_rest(layout, backend):
    head_dim, rotary_dim = 20, 8
    x = rng_vectors((2, 3, 7, head_dim), 12)
    inv = posenc.rope_inv_freq(rotary_dim, 500.0)
    pos = np.arange(7) * 13
    xin = torch.tensor(x) if backend == "torch" else x
    out = posenc.apply_rope(xin, pos, inv, layout, attention_factor=1.1, rotary_dim=rotary_dim)
    out = out.numpy() if backend == "torch" else out
    assert out.shape == x.shape
    np.testing.assert_array_equal(out[..., rotary_dim:], x[..., rotary_dim:])
    # the rotated part against an independent form: the complex form (interleaved) or the permuted one (half)
    head = x[..., :rotary_dim]
    if layout == "interleaved":
        expected = posenc.apply_rope_complex(head, pos, inv, attention_factor=1.1)
    else:
        perm = posenc.interleaved_to_half_permutation(rotary_dim)
        inverse = np.argsort(perm)
        expected = posenc.apply_rope_complex(head[..., inverse], pos, inv, attention_factor=1.1)[..., perm]
    np.testing.assert_allclose(out[..., :rotary_dim], expected, atol=1e-12)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_partial_rope_relative_property(layout, backend):
    head_dim, rotary_dim = 24, 6
    q, k = rng_vectors((2, 1, head_dim), 13)
    inv = posenc.rope_inv_freq(rotary_dim)

    def rot(v, p):
        v = torch.tensor(v) if backend == "torch" else v
        out = posenc.apply_rope(v, [p], inv, layout, rotary_dim=rotary_dim)
        return np.asarray(out)[0]

    reference = rot(q, 9) @ rot(k, 2)
    for shift in (1, 77, 10**6):
        assert rot(q, 9 + shift) @ rot(k, 2 + shift) == pytest.approx(reference, abs=1e-8)
    assert rot(q, 7) @ rot(k, 0) == pytest.approx(reference, abs=1e-10)
    assert np.linalg.norm(rot(q, 123)) == pytest.approx(np.linalg.norm(q))


@pytest.mark.parametrize("model", ["gpt_neox", "phi"])
def test_partial_rope_matches_transformers_gpt_neox_and_phi(model):
    from transformers import GPTNeoXConfig, PhiConfig
    from transformers.models.gpt_neox import modeling_gpt_neox
    from transformers.models.phi import modeling_phi

    # GPT-NeoX-20B's head: 96 dimensions, rotary_pct 0.25 -> 24; Phi-2's: 80 dimensions, factor 0.4 -> 32
    head_dim, factor, base = (96, 0.25, 10000.0) if model == "gpt_neox" else (80, 0.4, 10000.0)
    rope = {"rope_type": "default", "rope_theta": base, "partial_rotary_factor": factor}
    if model == "gpt_neox":
        config = GPTNeoXConfig(hidden_size=2 * head_dim, num_attention_heads=2, rope_parameters=rope)
        rotary = modeling_gpt_neox.GPTNeoXRotaryEmbedding(config)
    else:
        config = PhiConfig(hidden_size=2 * head_dim, num_attention_heads=2, rope_parameters=rope)
        rotary = modeling_phi.PhiRotaryEmbedding(config)
    generator = torch.Generator().manual_seed(14)
    q = torch.randn(2, 2, 40, head_dim, generator=generator)
    k = torch.randn(2, 2, 40, head_dim, generator=generator)
    position_ids = torch.stack((torch.arange(300, 340), torch.arange(0, 80, 2)))
    cos, sin = rotary(q, position_ids)
    rotary_dim = cos.shape[-1]
    assert rotary_dim == int(head_dim * factor)
    if model == "gpt_neox":  # its apply_rotary_pos_emb slices q[..., :rotary_dim] itself
        q_ref, k_ref = modeling_gpt_neox.apply_rotary_pos_emb(q, k, cos, sin)
    else:  # PhiAttention slices, rotates, and concatenates the pass-through part
        q_rot, k_rot = modeling_phi.apply_rotary_pos_emb(q[..., :rotary_dim], k[..., :rotary_dim], cos, sin)
        q_ref = torch.cat((q_rot, q[..., rotary_dim:]), dim=-1)
        k_ref = torch.cat((k_rot, k[..., rotary_dim:]), dim=-1)
    inv = posenc.rope_inv_freq(rotary_dim, base)
    np.testing.assert_allclose(inv, rotary.inv_freq.double().numpy(), rtol=1e-6)
    # float32 angles in transformers: error up to ~340 * 2**-24 rad
    for ours, ref in (
        (posenc.apply_rope(q, position_ids, inv, rotary_dim=rotary_dim), q_ref),
        (posenc.apply_rope(k, position_ids, inv, rotary_dim=rotary_dim), k_ref),
    ):
        torch.testing.assert_close(ours, ref, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(ours[..., rotary_dim:], ref[..., rotary_dim:], atol=0, rtol=0)


def test_partial_rope_errors_name_rotary_dim():
    x = np.zeros((3, 16))
    inv = posenc.rope_inv_freq(8)
    with pytest.raises(ValueError, match=r"head_dim=16.*4 frequencies.*rotary_dim=8"):
        posenc.apply_rope(x, np.arange(3), inv)  # a genuine mismatch stays an error unless partial is asked for
    with pytest.raises(ValueError, match=r"rotary_dim must be 2 \* len\(inv_freq\) = 8.*rotary_dim=6"):
        posenc.apply_rope(x, np.arange(3), inv, rotary_dim=6)
    with pytest.raises(ValueError, match=r"rotary_dim=8 must be <= head_dim.*\(3, 4\)"):
        posenc.apply_rope(np.zeros((3, 4)), np.arange(3), inv, rotary_dim=8)
    with pytest.raises(ValueError, match="rotary_dim must be even"):
        posenc.apply_rope(x, np.arange(3), inv, rotary_dim=7)
    np.testing.assert_array_equal(posenc.apply_rope(x, np.arange(3), inv, rotary_dim=8), x)


# --- positions of shape (batch, seq) --------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("backend", ["numpy", "torch", "torch-grad"])
@pytest.mark.parametrize("shape", [(3, 2, 6, 8), (3, 6, 8)])
def test_batch_positions_rotate_each_sequence_by_its_own_positions(layout, backend, shape):
    x = rng_vectors(shape, 15)
    inv = posenc.rope_inv_freq(8)
    position_ids = np.array([[0, 1, 2, 3, 4, 5], [0, 0, 0, 0, 1, 2], [0, 1, 2, 0, 1, 2]])  # plain, left-padded, packed
    xin = torch.tensor(x, requires_grad=backend == "torch-grad") if backend != "numpy" else x
    out = posenc.apply_rope(xin, position_ids, inv, layout)
    out = out.detach().numpy() if backend != "numpy" else out
    for b in range(3):  # each sequence alone, with 1-D positions
        np.testing.assert_allclose(out[b], posenc.apply_rope(x[b], position_ids[b], inv, layout), atol=1e-12)
    # batch 1 applies to every sequence
    xin = torch.tensor(x) if backend != "numpy" else x
    one = np.asarray(posenc.apply_rope(xin, position_ids[1:2], inv, layout))
    np.testing.assert_allclose(one, posenc.apply_rope(x, position_ids[1], inv, layout), atol=1e-12)


def test_batch_positions_match_transformers_with_left_padding():
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    from reference import llama_rope_config

    head_dim = 64
    config = llama_rope_config("default", head_dim, 10000.0, 1.0, 4096)
    attention_mask = torch.tensor([[1] * 12, [0] * 5 + [1] * 7])
    position_ids = (attention_mask.cumsum(-1) - 1).masked_fill(attention_mask == 0, 1)  # as generate() builds them
    generator = torch.Generator().manual_seed(16)
    q = torch.randn(2, 4, 12, head_dim, generator=generator)
    k = torch.randn(2, 4, 12, head_dim, generator=generator)
    cos, sin = LlamaRotaryEmbedding(config)(q, position_ids)
    q_ref, k_ref = apply_rotary_pos_emb(q, k, cos, sin)
    inv = posenc.rope_inv_freq(head_dim)
    torch.testing.assert_close(posenc.apply_rope(q, position_ids, inv), q_ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(posenc.apply_rope(k, position_ids, inv), k_ref, atol=1e-5, rtol=1e-5)


def test_batch_positions_errors():
    x = np.zeros((2, 3, 5, 8))
    inv = posenc.rope_inv_freq(8)
    with pytest.raises(ValueError, match=r"positions has batch 3.*x has batch 2"):
        posenc.apply_rope(x, np.zeros((3, 5)), inv)
    with pytest.raises(ValueError, match=r"seq=5.*positions has 4"):
        posenc.apply_rope(x, np.zeros((2, 4)), inv)
    with pytest.raises(ValueError, match=r"positions of shape \(batch, seq\).*\(5, 8\)"):
        posenc.apply_rope(np.zeros((5, 8)), np.zeros((1, 5)), inv)
    with pytest.raises(ValueError, match=r"positions must be 1-dimensional \(seq,\) or 2-dimensional"):
        posenc.apply_rope(x, np.zeros((2, 3, 5)), inv)


def test_the_tables_of_the_last_call_are_reused_only_for_equal_arguments(monkeypatch):
    """apply_rope keeps its last cos/sin tables (a key follows its query): reused when every argument
    is equal, value by value, and formed anew when anything differs, an array changed in place included."""
    from posenc import _rope_torch

    formed = []
    real = _rope_torch.cos_sin_tables
    monkeypatch.setattr(_rope_torch, "cos_sin_tables", lambda *a: formed.append(a) or real(*a))
    monkeypatch.setattr(_rope_torch, "_last_tables", None)
    rng = np.random.default_rng(7)
    q, k = torch.from_numpy(rng.normal(size=(2, 3, 5, 8))), torch.from_numpy(rng.normal(size=(2, 3, 5, 8)))
    pos, inv = np.array([0, 3, 4, 9, 12]), posenc.rope_inv_freq(8, 500.0)

    def expected(x, p, f=inv, factor=1.0):  # the NumPy path, which keeps nothing between calls
        return torch.from_numpy(posenc.apply_rope(x.detach().numpy(), p, f, attention_factor=factor))

    calls = [
        (q, pos, inv, {}),  # formed
        (k, pos, inv, {}),  # reused
        (q.float(), pos, inv, {}),  # another dtype
        (q, pos, inv, {"attention_factor": 1.5}),
        (q, pos, posenc.rope_inv_freq(8, 600.0), {}),
    ]
    for x, p, f, kwargs in calls:
        out = posenc.apply_rope(x, p, f, **kwargs)
        want = expected(x.double(), p, f, kwargs.get("attention_factor", 1.0))
        torch.testing.assert_close(out.double(), want, atol=1e-6 if x.dtype == torch.float32 else 1e-12, rtol=0)
    assert len(formed) == 4  # all but the key's call
    moved = np.array([0, 3, 4, 9, 12])
    posenc.apply_rope(q, moved, inv)
    moved[2] = 40  # the same array, changed in place
    torch.testing.assert_close(posenc.apply_rope(q, moved, inv), expected(q, moved), atol=1e-12, rtol=0)
    with torch.inference_mode():
        posenc.apply_rope(q, pos, inv)
    x = q.clone().requires_grad_(True)  # tables made under inference_mode must not join this graph
    posenc.apply_rope(x, pos, inv).sum().backward()
    assert x.grad is not None


def test_a_traced_call_leaves_no_tables_for_a_real_one(monkeypatch):
    """Under fake tensors (torch.export's tracing) the tables are fake: they must not be kept."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from posenc import _rope_torch

    monkeypatch.setattr(_rope_torch, "_last_tables", None)
    pos, inv = np.arange(6), posenc.rope_inv_freq(8)
    x = torch.randn(2, 6, 8)
    with FakeTensorMode() as mode:
        out = posenc.apply_rope(mode.from_tensor(x), pos, inv)
        assert tuple(out.shape) == (2, 6, 8)
    assert _rope_torch._last_tables is None
    real = posenc.apply_rope(x, pos, inv)
    expected = torch.from_numpy(posenc.apply_rope(x.numpy(), pos, inv))
    torch.testing.assert_close(real, expected, atol=1e-6, rtol=0)
