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


def test_positions_may_be_torch_tensors_lists_or_arrays():
    x = rng_vectors((3, 4), 6)
    inv = posenc.rope_inv_freq(4)
    ref = posenc.apply_rope(x, np.array([0, 1, 2]), inv)
    np.testing.assert_allclose(posenc.apply_rope(x, [0, 1, 2], inv), ref)
    np.testing.assert_allclose(posenc.apply_rope(x, torch.arange(3), inv), ref)
