"""Multimodal RoPE (M-RoPE, interleaved M-RoPE, 2-D axial RoPE) against transformers' Qwen2-VL, Qwen3-VL and GLM-4V."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from transformers.models.glm4v import modeling_glm4v as glm4v
from transformers.models.qwen2_5_vl import modeling_qwen2_5_vl as qwen2_5_vl
from transformers.models.qwen2_vl import modeling_qwen2_vl as qwen2_vl
from transformers.models.qwen3_vl import modeling_qwen3_vl as qwen3_vl

import posenc

RNG_SEED = 15

# the reference's own recomposition (which position id each pair reads), called with only mrope_section set
SECTIONED = {
    "qwen2_vl": qwen2_vl.Qwen2VLRotaryEmbedding.recomposition_frequencies,
    "qwen2_5_vl": qwen2_5_vl.Qwen2_5_VLRotaryEmbedding.recomposition_frequencies,
}
SECTIONED_SECTIONS = [(16, 24, 24), (8, 12, 12), (2, 3, 3), (5, 0, 3)]
INTERLEAVED_SECTIONS = [(24, 20, 20), (4, 2, 2), (6, 3, 3), (10, 3, 3)]


def random_position_ids(rng, shape, high=300):
    return rng.integers(0, high, size=(3, *shape))


def reference_freqs(position_ids, inv_freq):
    """``position_ids[..., None] * inv_freq`` in float64, the ``freqs`` the reference recomposes."""
    return torch.from_numpy(np.asarray(position_ids, dtype=np.float64))[..., None] * torch.from_numpy(inv_freq)


def rotate_pair(vector, angle):
    a, b = vector
    return np.array([a * np.cos(angle) - b * np.sin(angle), a * np.sin(angle) + b * np.cos(angle)])


# --- which position id turns which pair ------------------------------------------------------------


@pytest.mark.parametrize("model", sorted(SECTIONED))
@pytest.mark.parametrize("section", SECTIONED_SECTIONS)
def test_mrope_angles_match_the_qwen2_vl_recomposition(model, section):
    rng = np.random.default_rng(RNG_SEED)
    inv_freq = posenc.rope_inv_freq(2 * sum(section), 10000.0)
    position_ids = random_position_ids(rng, (2, 7))
    ref = SECTIONED[model](SimpleNamespace(mrope_section=list(section)), reference_freqs(position_ids, inv_freq))
    ours = posenc.mrope_angles(position_ids, inv_freq, section)
    assert ours.dtype == np.float64 and ours.shape == (2, 7, sum(section))
    np.testing.assert_array_equal(np.concatenate((ours, ours), axis=-1), ref.numpy())  # the same products, picked alike


@pytest.mark.parametrize("section", INTERLEAVED_SECTIONS)
def test_interleaved_mrope_angles_match_the_qwen3_vl_recomposition(section):
    rng = np.random.default_rng(RNG_SEED)
    inv_freq = posenc.rope_inv_freq(2 * sum(section), 5_000_000.0)
    position_ids = random_position_ids(rng, (3, 6))
    recompose = qwen3_vl.Qwen3VLTextRotaryEmbedding.recomposition_frequencies
    ref = recompose(SimpleNamespace(mrope_section=list(section)), reference_freqs(position_ids, inv_freq))
    ours = posenc.mrope_angles(position_ids, inv_freq, section, mrope_interleaved=True)
    np.testing.assert_array_equal(np.concatenate((ours, ours), axis=-1), ref.numpy())


def test_pair_axes_by_hand():
    np.testing.assert_array_equal(posenc.mrope_pair_axes([2, 3, 3]), [0, 0, 1, 1, 1, 2, 2, 2])
    np.testing.assert_array_equal(posenc.mrope_pair_axes([4, 2, 2], True), [0, 1, 2, 0, 1, 2, 0, 0])
    axes = posenc.mrope_pair_axes([24, 20, 20], mrope_interleaved=True)  # Qwen3-VL's default
    np.testing.assert_array_equal(axes[:60], np.tile([0, 1, 2], 20))
    np.testing.assert_array_equal(axes[60:], [0, 0, 0, 0])
    assert np.bincount(axes).tolist() == [24, 20, 20]


def test_interleaving_refuses_sections_the_pattern_cannot_honour():
    # Qwen2-VL's [16, 24, 24] interleaved: transformers silently gives h only 21 pairs, not 24
    recompose = qwen3_vl.Qwen3VLTextRotaryEmbedding.recomposition_frequencies
    freqs = torch.arange(3, dtype=torch.float64).view(3, 1, 1, 1).expand(3, 1, 1, 64).clone()  # axis index
    picked = recompose(SimpleNamespace(mrope_section=[16, 24, 24]), freqs)[0, 0, :64]
    assert torch.bincount(picked.long()).tolist() == [22, 21, 21]
    with pytest.raises(ValueError, match=r"mrope_section=\[16, 24, 24\].*\[22, 21, 21\]"):
        posenc.mrope_pair_axes([16, 24, 24], mrope_interleaved=True)


@pytest.mark.parametrize(
    "section,pattern",
    [
        ((16, 24, 20), r"sum to head_dim/2 = len\(inv_freq\) = 64.*sum 60"),
        ((32, 32), "three integers"),
        ((70, -3, -3), ">= 0"),
        ("16,24,24", "three integers"),
        ((16.5, 24, 23.5), "whole numbers"),
    ],
)
def test_mrope_section_is_checked_against_the_pairs(section, pattern):
    with pytest.raises((TypeError, ValueError), match="mrope_section") as error:
        posenc.mrope_angles(np.zeros((3, 4)), posenc.rope_inv_freq(128), section)
    assert error.match(pattern)


@pytest.mark.parametrize("shape", [(4, 5), (2, 5), (3,), (3, 1, 2, 5)])
def test_position_ids_need_one_row_per_axis(shape):
    with pytest.raises(ValueError, match=r"position_ids must have shape \(3, seq\) or \(3, batch, seq\)"):
        posenc.mrope_angles(np.zeros(shape), posenc.rope_inv_freq(8), (2, 1, 1))


def test_no_tokens_give_empty_results():
    inv_freq = posenc.rope_inv_freq(16)
    assert posenc.mrope_angles(np.zeros((3, 0)), inv_freq, (4, 2, 2)).shape == (0, 8)
    assert posenc.mrope_angles(np.zeros((3, 2, 0)), inv_freq, (4, 2, 2)).shape == (2, 0, 8)
    assert posenc.apply_mrope(np.zeros((2, 0, 16)), np.zeros((3, 0)), inv_freq, (4, 2, 2)).shape == (2, 0, 16)
    assert posenc.axial_rope_angles([], [], inv_freq[:4]).shape == (0, 8)
    assert posenc.mrope_position_ids([]).shape == (3, 0)


# --- the rotation, in both layouts -----------------------------------------------------------------


def test_full_qwen2_vl_rotary_embedding_agrees_to_float32_rounding():
    config = qwen2_vl.Qwen2VLTextConfig(
        hidden_size=64,
        num_attention_heads=2,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [4, 6, 6]},
    )
    rotary = qwen2_vl.Qwen2VLRotaryEmbedding(config)
    position_ids = random_position_ids(np.random.default_rng(RNG_SEED), (2, 9), high=100)
    cos, sin = rotary(torch.zeros(1, dtype=torch.float64), torch.from_numpy(position_ids))
    angles = posenc.mrope_angles(position_ids, posenc.rope_inv_freq(32, 10000.0), [4, 6, 6])
    np.testing.assert_allclose(cos.numpy(), np.cos(np.concatenate((angles, angles), -1)), atol=3e-5)
    np.testing.assert_allclose(sin.numpy(), np.sin(np.concatenate((angles, angles), -1)), atol=3e-5)


def test_full_qwen3_vl_rotary_embedding_agrees_to_float32_rounding():
    config = qwen3_vl.Qwen3VLTextConfig(
        hidden_size=64,
        num_attention_heads=2,
        head_dim=16,
        rope_parameters={"rope_type": "default", "rope_theta": 500.0, "mrope_section": [4, 2, 2]},
    )
    rotary = qwen3_vl.Qwen3VLTextRotaryEmbedding(config)
    position_ids = random_position_ids(np.random.default_rng(RNG_SEED), (1, 9), high=100)
    cos, _ = rotary(torch.zeros(1, dtype=torch.float64), torch.from_numpy(position_ids))
    angles = posenc.mrope_angles(position_ids, posenc.rope_inv_freq(16, 500.0), [4, 2, 2], mrope_interleaved=True)
    np.testing.assert_allclose(cos.numpy(), np.cos(np.concatenate((angles, angles), -1)), atol=3e-5)


@pytest.mark.parametrize(
    "name,section,interleaved,layout",
    [
        ("qwen2_vl", (4, 6, 6), False, "half"),
        ("qwen3_vl", (6, 5, 5), True, "half"),
        ("glm4v", (4, 6, 6), False, "interleaved"),
    ],
)
def test_apply_mrope_matches_the_references_rotation(name, section, interleaved, layout):
    rng = np.random.default_rng(RNG_SEED)
    batch, heads, seq, head_dim = 2, 3, 7, 2 * sum(section)
    inv_freq = posenc.rope_inv_freq(head_dim, 1000.0)
    position_ids = random_position_ids(rng, (batch, seq))
    q, k = rng.normal(size=(2, batch, heads, seq, head_dim))
    freqs = reference_freqs(position_ids, inv_freq)
    module, rotary = {
        "qwen2_vl": (qwen2_vl, qwen2_vl.Qwen2VLRotaryEmbedding),
        "qwen3_vl": (qwen3_vl, qwen3_vl.Qwen3VLTextRotaryEmbedding),
        "glm4v": (glm4v, glm4v.Glm4vTextRotaryEmbedding),
    }[name]
    fake = SimpleNamespace(mrope_section=list(section))
    cos = rotary.recomposition_frequencies(fake, freqs.cos())
    sin = rotary.recomposition_frequencies(fake, freqs.sin())
    q_ref, k_ref = module.apply_rotary_pos_emb(torch.from_numpy(q), torch.from_numpy(k), cos, sin)
    for x, ref in ((q, q_ref), (k, k_ref)):
        ours = posenc.apply_mrope(x, position_ids, inv_freq, section, mrope_interleaved=interleaved, layout=layout)
        np.testing.assert_allclose(ours, ref.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("interleaved,section", [(False, (2, 3, 3)), (True, (4, 2, 2))])
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_text_tokens_with_t_equal_h_equal_w_get_ordinary_rope(interleaved, section, layout):
    rng = np.random.default_rng(RNG_SEED)
    positions = rng.integers(0, 10_000, size=11)
    inv_freq = posenc.rope_inv_freq(16, 10000.0)
    position_ids = np.stack([positions] * 3)
    np.testing.assert_array_equal(
        posenc.mrope_angles(position_ids, inv_freq, section, interleaved), posenc.rope_angles(positions, inv_freq)
    )
    x = rng.normal(size=(3, 11, 16))
    np.testing.assert_allclose(
        posenc.apply_mrope(x, position_ids, inv_freq, section, interleaved, layout=layout),
        posenc.apply_rope(x, positions, inv_freq, layout=layout),
        rtol=1e-13,
        atol=1e-13,
    )


def test_each_pair_turns_by_its_axis_position_by_hand():
    # head_dim 8, sections (1, 2, 1): pair 0 by t, pairs 1-2 by h, pair 3 by w; "half" layout pairs (j, j + 4)
    inv_freq = np.array([1.0, 0.5, 0.25, 0.125])
    x = np.arange(1.0, 9.0)[None, :]
    t, h, w = 3, 5, 7
    out = posenc.apply_mrope(x, [[t], [h], [w]], inv_freq, (1, 2, 1))[0]
    for j, position in enumerate((t, h, h, w)):
        np.testing.assert_allclose(out[[j, j + 4]], rotate_pair(x[0, [j, j + 4]], position * inv_freq[j]))


def test_batched_position_ids_rotate_each_sequence_by_its_own_ids():
    rng = np.random.default_rng(RNG_SEED)
    inv_freq = posenc.rope_inv_freq(16)
    position_ids = random_position_ids(rng, (3, 5))
    x = rng.normal(size=(3, 2, 5, 16))  # (batch, heads, seq, head_dim)
    batched = posenc.apply_mrope(x, position_ids, inv_freq, (2, 3, 3))
    for b in range(3):
        np.testing.assert_array_equal(batched[b], posenc.apply_mrope(x[b], position_ids[:, b], inv_freq, (2, 3, 3)))
    with pytest.raises(ValueError, match=r"x has batch=2 .* position_ids has batch=3"):
        posenc.apply_mrope(x[:2], position_ids, inv_freq, (2, 3, 3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_torch_tensors_keep_their_type_and_dtype(dtype):
    rng = np.random.default_rng(RNG_SEED)
    x = rng.normal(size=(2, 6, 16))
    position_ids = random_position_ids(rng, (6,))
    inv_freq = posenc.rope_inv_freq(16)
    out = posenc.apply_mrope(torch.tensor(x, dtype=dtype), position_ids, inv_freq, (4, 2, 2), True, "interleaved")
    assert isinstance(out, torch.Tensor) and out.dtype == dtype and out.shape == (2, 6, 16)
    ref = posenc.apply_mrope(x, position_ids, inv_freq, (4, 2, 2), True, "interleaved")
    tolerance = {torch.float32: 1e-5, torch.float64: 1e-12, torch.bfloat16: 3e-2}[dtype]
    np.testing.assert_allclose(out.double().numpy(), ref, rtol=tolerance, atol=tolerance)


# --- the relative property, axis by axis -----------------------------------------------------------


def mrope_score(q, k, pq, pk, inv_freq, section, interleaved):
    q_rot = posenc.apply_mrope(q[None], np.reshape(pq, (3, 1)), inv_freq, section, interleaved)
    k_rot = posenc.apply_mrope(k[None], np.reshape(pk, (3, 1)), inv_freq, section, interleaved)
    return float(q_rot[0] @ k_rot[0])


@pytest.mark.parametrize("interleaved,section", [(False, (2, 3, 3)), (True, (4, 2, 2))])
def test_scores_depend_on_the_offset_along_each_axis_only(interleaved, section):
    rng = np.random.default_rng(RNG_SEED)
    inv_freq = posenc.rope_inv_freq(16, 100.0)
    q, k = rng.normal(size=(2, 16))
    pq, pk = rng.integers(0, 50, size=(2, 3))
    score = mrope_score(q, k, pq, pk, inv_freq, section, interleaved)
    for axis in range(3):
        shift = np.zeros(3, dtype=np.int64)
        shift[axis] = rng.integers(1, 1000)
        # the same shift of the query and the key along one axis: the score stays
        assert mrope_score(q, k, pq + shift, pk + shift, inv_freq, section, interleaved) == pytest.approx(
            score, abs=1e-9
        )
        # a change of the offset along that axis alone: the score moves
        assert abs(mrope_score(q, k, pq, pk + shift, inv_freq, section, interleaved) - score) > 1e-6
    shift = rng.integers(-500, 500, size=3)  # all three at once
    assert mrope_score(q, k, pq + shift, pk + shift, inv_freq, section, interleaved) == pytest.approx(score, abs=1e-9)


# --- 2-D axial RoPE (Qwen2-VL's vision encoder) ----------------------------------------------------


def test_axial_inv_freq_and_angles_match_qwen2_vl_vision():
    config = qwen2_vl.Qwen2VLVisionConfig(embed_dim=64, num_heads=4)  # head_dim 16, rope_theta 10000
    rotary = qwen2_vl.Qwen2VLVisionRotaryEmbedding(config)
    inv_freq = posenc.rope_inv_freq(16 // 2, 10000.0)
    np.testing.assert_allclose(rotary.inv_freq.double().numpy(), inv_freq, rtol=1e-6)
    rows, cols = (g.ravel() for g in np.meshgrid(np.arange(5), np.arange(7), indexing="ij"))
    freqs = reference_freqs(np.stack([rows, cols], axis=-1), inv_freq)  # (patches, 2, head_dim/4)
    ref = rotary.recomposition_frequencies(freqs)
    ours = posenc.axial_rope_angles(rows, cols, inv_freq)
    assert ours.shape == (35, 8)
    np.testing.assert_array_equal(np.concatenate((ours, ours), axis=-1), ref.numpy())


def test_apply_axial_rope_matches_qwen2_vl_vision_rotation():
    rng = np.random.default_rng(RNG_SEED)
    inv_freq = posenc.rope_inv_freq(16, 10000.0)  # head_dim 32
    rows, cols = rng.integers(0, 40, size=(2, 9))
    q, k = rng.normal(size=(2, 9, 4, 32)).astype(np.float32)  # (patches, heads, head_dim), as the encoder has them
    angles = torch.from_numpy(posenc.axial_rope_angles(rows, cols, inv_freq))
    emb = torch.cat((angles, angles), dim=-1)
    q_ref, k_ref = qwen2_vl.apply_rotary_pos_emb_vision(torch.from_numpy(q), torch.from_numpy(k), emb.cos(), emb.sin())
    for x, ref in ((q, q_ref), (k, k_ref)):
        ours = posenc.apply_axial_rope(x.transpose(1, 0, 2), rows, cols, inv_freq).transpose(1, 0, 2)
        assert ours.dtype == np.float32
        np.testing.assert_allclose(ours, ref.numpy(), rtol=1e-5, atol=1e-5)


def axial_score(q, k, rq, cq, rk, ck, inv_freq, layout):
    q_rot = posenc.apply_axial_rope(q[None], [rq], [cq], inv_freq, layout=layout)
    k_rot = posenc.apply_axial_rope(k[None], [rk], [ck], inv_freq, layout=layout)
    return float(q_rot[0] @ k_rot[0])


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_axial_scores_depend_on_the_row_and_column_offsets_only(layout):
    rng = np.random.default_rng(RNG_SEED)
    inv_freq = posenc.rope_inv_freq(8, 100.0)
    q, k = rng.normal(size=(2, 16))
    rq, cq, rk, ck = rng.integers(0, 30, size=4)
    score = axial_score(q, k, rq, cq, rk, ck, inv_freq, layout)
    dr, dc = rng.integers(1, 500, size=2)
    assert axial_score(q, k, rq + dr, cq, rk + dr, ck, inv_freq, layout) == pytest.approx(score, abs=1e-9)  # rows
    assert axial_score(q, k, rq, cq + dc, rk, ck + dc, inv_freq, layout) == pytest.approx(score, abs=1e-9)  # cols
    assert axial_score(q, k, rq + dr, cq + dc, rk + dr, ck + dc, inv_freq, layout) == pytest.approx(score, abs=1e-9)
    # moving the key along one axis alone changes the score, and a row offset is not a column offset
    assert abs(axial_score(q, k, rq, cq, rk + dr, ck, inv_freq, layout) - score) > 1e-6
    assert abs(axial_score(q, k, rq, cq, rk, ck + dc, inv_freq, layout) - score) > 1e-6
    one_down = axial_score(q, k, 0, 0, 1, 0, inv_freq, layout)
    one_right = axial_score(q, k, 0, 0, 0, 1, inv_freq, layout)
    assert abs(one_down - one_right) > 1e-6


def test_axial_rows_and_cols_must_pair_up():
    with pytest.raises(ValueError, match="rows and cols must have the same length"):
        posenc.axial_rope_angles([0, 1, 2], [0, 1], posenc.rope_inv_freq(8))


# --- position ids of a text-and-image sequence (get_rope_index) ------------------------------------


def reference_position_ids(segments, spatial_merge_size):
    """transformers' ``Qwen2VLModel.get_rope_index`` on a one-sequence batch built from ``segments``."""
    types, images, videos = [], [], []
    for segment in segments:
        if isinstance(segment, int):
            types += [0] * segment
        else:
            t, h, w = segment
            kind = 1 if t == 1 else 2
            (images if kind == 1 else videos).append(segment)
            types += [kind] * (t * h * w // spatial_merge_size**2)
    fake = SimpleNamespace(config=SimpleNamespace(vision_config=SimpleNamespace(spatial_merge_size=spatial_merge_size)))
    fake.get_vision_position_ids = lambda *args, **kwargs: qwen2_vl.Qwen2VLModel.get_vision_position_ids(
        fake, *args, **kwargs
    )
    position_ids, _ = qwen2_vl.Qwen2VLModel.get_rope_index(
        fake,
        torch.zeros(1, len(types), dtype=torch.long),
        torch.tensor([types]),
        image_grid_thw=torch.tensor(images) if images else None,
        video_grid_thw=torch.tensor(videos) if videos else None,
    )
    return position_ids[:, 0].numpy()


@pytest.mark.parametrize(
    "segments,merge",
    [
        ([3, (1, 4, 6), 2], 2),
        ([(1, 2, 2), 5, (2, 4, 4), 1, (1, 6, 2), 4], 2),
        ([1, (1, 3, 5), (3, 2, 2), 2], 1),
        ([7], 1),
    ],
)
def test_position_ids_match_qwen2_vl_get_rope_index(segments, merge):
    np.testing.assert_array_equal(posenc.mrope_position_ids(segments, merge), reference_position_ids(segments, merge))


def test_position_ids_by_hand():
    # two text tokens, a 2 x 3 image, one text token: the image starts at 2, the text after it at 2 + max(2, 3)
    expected = [
        [0, 1, 2, 2, 2, 2, 2, 2, 5],
        [0, 1, 2, 2, 2, 3, 3, 3, 5],
        [0, 1, 2, 3, 4, 2, 3, 4, 5],
    ]
    np.testing.assert_array_equal(posenc.mrope_position_ids([2, (1, 2, 3), 1]), expected)


@pytest.mark.parametrize(
    "segments,merge,error,pattern",
    [
        ([2, (1, 3, 4)], 2, ValueError, r"segments\[1\].*multiples of spatial_merge_size=2"),
        ([2, (1, 0, 4)], 1, ValueError, r"segments\[1\] must be an integer >= 1"),
        ([2, (1, 4)], 1, TypeError, r"segments\[1\] must be an integer .* or a \(t, h, w\) grid"),
        ([-1], 1, ValueError, r"segments\[0\] must be an integer >= 0"),
        ("abc", 1, TypeError, "segments must be a list"),
    ],
)
def test_bad_segments_are_named(segments, merge, error, pattern):
    with pytest.raises(error, match=pattern):
        posenc.mrope_position_ids(segments, merge)


def _fake_vl_model(model_class, spatial_merge_size, **vision):
    """The attributes ``get_rope_index`` reads from its model: the vision config and the method it calls."""
    fake = SimpleNamespace(
        config=SimpleNamespace(vision_config=SimpleNamespace(spatial_merge_size=spatial_merge_size, **vision))
    )
    fake.get_vision_position_ids = lambda *args, **kwargs: model_class.get_vision_position_ids(fake, *args, **kwargs)
    return fake


def _types(segments, merge, video_kind=2):
    """mm_token_type_ids of ``segments``: 0 for text, 1 for an image, ``video_kind`` for a video's tokens."""
    types = []
    for segment in segments:
        if isinstance(segment, int):
            types += [0] * segment
        else:
            t, h, w = segment
            types += [1 if t == 1 else video_kind] * (t * h * w // merge**2)
    return types


@pytest.mark.parametrize("tokens_per_second, second_per_grid", [(2, 1.0), (4, 0.5), (2, 2.0), (25, 0.08)])
def test_qwen2_5_vl_spaces_a_videos_frames_by_its_seconds(tokens_per_second, second_per_grid):
    segments = [4, (1, 4, 4), 3, (5, 4, 6), 2]
    fake = _fake_vl_model(qwen2_5_vl.Qwen2_5_VLModel, 2, tokens_per_second=tokens_per_second)
    types = _types(segments, 2)
    reference, _ = qwen2_5_vl.Qwen2_5_VLModel.get_rope_index(
        fake,
        torch.zeros(1, len(types), dtype=torch.long),
        torch.tensor([types]),
        image_grid_thw=torch.tensor([[1, 4, 4]]),
        video_grid_thw=torch.tensor([[5, 4, 6]]),
        second_per_grid_ts=torch.tensor([second_per_grid]),
    )
    interval = tokens_per_second * second_per_grid
    ours = posenc.mrope_position_ids(segments, 2, time_interval=interval)
    np.testing.assert_array_equal(ours, reference[:, 0].numpy())
    start, per_frame = len(_types(segments[:3], 2)), (4 // 2) * (6 // 2)
    frame_t = ours[0, start : start + 5 * per_frame : per_frame]  # each frame's first token
    assert (frame_t - frame_t[0]).tolist() == [int(np.floor(f * interval)) for f in range(5)]


def test_qwen3_vl_splits_a_video_into_frames_with_timestamps_between():
    """Qwen3-VL's ``get_rope_index`` splits a ``(t, h, w)`` video into ``t`` one-frame grids, each after the
    timestamp's text tokens: posenc's ids for the frames given as ``(1, h, w)`` segments with those runs."""
    merge, frames, h, w, timestamp = 2, 3, 4, 6, 5  # a timestamp "<1.5 seconds>" as 5 text tokens, say
    segments = [3]
    for _ in range(frames):
        segments += [timestamp + 1, (1, h, w), 1]  # timestamp, vision start; the frame; vision end
    segments += [2]
    types = []
    for segment in segments:
        types += [0] * segment if isinstance(segment, int) else [2] * (h * w // merge**2)
    fake = _fake_vl_model(qwen3_vl.Qwen3VLModel, merge)
    reference, _ = qwen3_vl.Qwen3VLModel.get_rope_index(
        fake,
        torch.zeros(1, len(types), dtype=torch.long),
        torch.tensor([types]),
        video_grid_thw=torch.tensor([[frames, h, w]]),
    )
    np.testing.assert_array_equal(posenc.mrope_position_ids(segments, merge), reference[:, 0].numpy())


def test_position_ids_from_a_real_image_processors_grids():
    """The grids that transformers' Qwen2-VL image processor gives two small synthetic images (resized to
    multiples of 28 pixels: 14-pixel patches, merged 2 x 2), then the ids against ``get_rope_index``."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    processor = Qwen2VLImageProcessorPil()
    images = [np.zeros((60, 90, 3), np.uint8), np.full((120, 40, 3), 255, np.uint8)]
    grids = processor(images=images, return_tensors="pt")["image_grid_thw"]
    assert grids.tolist() == [[1, 4, 6], [1, 8, 2]] and processor.merge_size == 2
    segments = [5, tuple(grids[0].tolist()), 7, tuple(grids[1].tolist()), 3]
    np.testing.assert_array_equal(posenc.mrope_position_ids(segments, 2), reference_position_ids(segments, 2))


def test_a_video_longer_than_its_grid_is_wide_shares_t_ids_with_the_text_after_it():
    """transformers 5.x (``current_pos += max(grid_thw[1], grid_thw[2]) // spatial_merge_size``): the frames
    do not advance the next free position, so with 6 frames on a 2 x 2 grid the text after the video starts
    at t = p + 2, the third of the video's six t ids."""
    ids = posenc.mrope_position_ids([1, (6, 2, 2), 1], 1)
    video_t, after = ids[0, 1:-1], ids[:, -1]
    assert sorted(set(video_t.tolist())) == [1, 2, 3, 4, 5, 6] and after.tolist() == [3, 3, 3]
    np.testing.assert_array_equal(ids, reference_position_ids([1, (6, 2, 2), 1], 1))
