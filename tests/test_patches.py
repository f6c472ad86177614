"""posenc.patches: 2-D RoPE over image patches, against transformers' vision rotary modules
(Pixtral, DINOv3), posenc's own 1-D and axial kernels, and RoPE's relative property."""

import math

import numpy as np
import pytest
import torch

import posenc
from posenc import patches
from posenc.rope import rotate_pairs


def _duplicated(angles: np.ndarray) -> np.ndarray:
    """cos of the angles as a "half" layout repeats them: (n, pairs) -> (n, 2 * pairs)."""
    return np.cos(np.concatenate((angles, angles), axis=-1))


def test_patch_coordinates_by_hand():
    coords = patches.patch_coordinates(2, 3)
    assert coords.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    centred = patches.patch_coordinates(2, 4, centred=True)
    assert centred[0].tolist() == [-0.5, -0.75] and centred[-1].tolist() == [0.5, 0.75]


def test_centred_coordinates_match_dinov3():
    from transformers.models.dinov3_vit.modeling_dinov3_vit import get_patches_center_coordinates

    for h, w in ((3, 5), (14, 14), (1, 7)):
        ref = get_patches_center_coordinates(h, w, dtype=torch.float64, device=torch.device("cpu"))
        np.testing.assert_allclose(patches.patch_coordinates(h, w, centred=True), ref.numpy(), rtol=0, atol=1e-15)


def test_augmentation_matches_dinov3_with_the_same_draws():
    from transformers.models.dinov3_vit.modeling_dinov3_vit import augment_patches_center_coordinates

    coords = torch.from_numpy(patches.patch_coordinates(4, 6, centred=True))
    shift, jitter, rescale = 0.1, 1.5, 2.0
    torch.manual_seed(7)
    ref = augment_patches_center_coordinates(coords, shift=shift, jitter=jitter, rescale=rescale)
    # the same draws, in the reference's order: a shift per axis, a log-stretch per axis, one log-rescale
    torch.manual_seed(7)
    d = torch.empty((1, 2), dtype=torch.float64).uniform_(-shift, shift)[0].numpy()
    j = torch.empty((1, 2), dtype=torch.float64).uniform_(-math.log(jitter), math.log(jitter)).exp()[0].numpy()
    r = float(torch.empty(1, dtype=torch.float64).uniform_(-math.log(rescale), math.log(rescale)).exp())
    ours = patches.augment_patch_coordinates(coords.numpy(), shift=d, jitter=j, rescale=r)
    np.testing.assert_allclose(ours, ref.numpy(), rtol=1e-15, atol=1e-15)
    assert not np.allclose(ours, coords.numpy())  # the draws moved the grid


def test_dinov3_cos_and_sin_are_axial_angles_on_centred_coordinates():
    from transformers import DINOv3ViTConfig
    from transformers.models.dinov3_vit.modeling_dinov3_vit import DINOv3ViTRopePositionEmbedding

    config = DINOv3ViTConfig(hidden_size=64, num_attention_heads=4, patch_size=4, image_size=32, rope_theta=100.0)
    module = DINOv3ViTRopePositionEmbedding(config).eval()
    pixels = torch.zeros(1, 3, 12, 20)  # 3 x 5 patches of 4 x 4
    cos, sin = module(pixels)
    head_dim = 16
    inv_freq = 100.0 ** (-4.0 * np.arange(head_dim // 4) / head_dim)  # head_dim / 4 speeds, 2 pi radians each
    angles = patches.grid_rope_angles(
        patches.patch_coordinates(3, 5, centred=True), 2 * np.pi * patches.axial_pair_frequencies(inv_freq)
    )
    np.testing.assert_allclose(cos.numpy(), _duplicated(angles), atol=2e-6)
    np.testing.assert_allclose(sin.numpy(), np.sin(np.concatenate((angles, angles), axis=-1)), atol=2e-6)


def test_pixtral_gives_rows_the_even_speeds_and_columns_the_odd_ones():
    from transformers import PixtralVisionConfig
    from transformers.models.pixtral.modeling_pixtral import PixtralVisionRotaryEmbedding

    config = PixtralVisionConfig(
        hidden_size=64,
        num_attention_heads=2,
        head_dim=32,
        rope_parameters={"rope_type": "axial", "rope_theta": 10000.0},
    )
    module = PixtralVisionRotaryEmbedding(config)
    coords = patches.patch_coordinates(4, 7)
    cos, sin = module(torch.zeros(1), torch.from_numpy(coords).long())
    pair_freqs = patches.axial_pair_frequencies(posenc.rope_inv_freq(32, 10000.0), split="alternate")
    angles = patches.grid_rope_angles(coords, pair_freqs)
    np.testing.assert_allclose(cos.numpy(), _duplicated(angles), atol=2e-6)
    np.testing.assert_allclose(sin.numpy(), np.sin(np.concatenate((angles, angles), axis=-1)), atol=2e-6)
    # and not Qwen2-VL's split, which repeats every speed on both axes
    repeated = patches.grid_rope_angles(coords, patches.axial_pair_frequencies(posenc.rope_inv_freq(16, 10000.0)))
    assert not np.allclose(cos.numpy(), _duplicated(repeated), atol=1e-3)


def test_repeat_split_is_posencs_axial_kernel_and_raster_is_1d_rope():
    inv_freq = posenc.rope_inv_freq(16, 10000.0)
    coords = patches.patch_coordinates(5, 6)
    axial = patches.grid_rope_angles(coords, patches.axial_pair_frequencies(inv_freq))
    np.testing.assert_array_equal(axial, posenc.axial_rope_angles(coords[:, 0], coords[:, 1], inv_freq))
    raster = patches.grid_rope_angles(coords, patches.raster_pair_frequencies(inv_freq, 6))
    np.testing.assert_allclose(raster, posenc.rope_angles(np.arange(30), inv_freq), rtol=1e-15, atol=0)


def test_mixed_frequencies_by_hand():
    f = patches.mixed_pair_frequencies(8, base=100.0, direction=np.pi / 6)
    m = np.array([1.0, 100.0**-0.5])
    np.testing.assert_allclose(f[:2], m[:, None] * [0.5, np.sqrt(3) / 2], rtol=1e-15)  # (sin, cos) of 30 degrees
    np.testing.assert_allclose(f[2:], m[:, None] * [np.sqrt(3) / 2, -0.5], rtol=1e-15, atol=1e-16)  # of 120 degrees
    np.testing.assert_allclose(np.hypot(*f.T), np.tile(m, 2), rtol=1e-15)


def test_mixed_at_direction_zero_is_axial_with_the_columns_first():
    mixed = patches.mixed_pair_frequencies(16, base=100.0, direction=0.0)
    axial = patches.axial_pair_frequencies(100.0 ** (-4.0 * np.arange(4) / 16))
    columns_first = np.concatenate((axial[4:], axial[:4]))
    np.testing.assert_allclose(mixed, columns_first, rtol=0, atol=1e-16)


@pytest.mark.parametrize(
    "pair_freqs",
    [
        patches.raster_pair_frequencies(posenc.rope_inv_freq(8, 100.0), 5),
        patches.axial_pair_frequencies(posenc.rope_inv_freq(8, 100.0), split="alternate"),
        patches.mixed_pair_frequencies(8, direction=0.7),
        np.random.default_rng(3).normal(size=(4, 2)),  # any learned vectors
    ],
)
def test_scores_depend_on_the_offset_only(pair_freqs):
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 2 * len(pair_freqs)))

    def score(p, p2):
        a = patches.grid_rope_angles([p], pair_freqs)
        b = patches.grid_rope_angles([p2], pair_freqs)
        rq = rotate_pairs(q[None], np.cos(a), np.sin(a), "half")
        rk = rotate_pairs(k[None], np.cos(b), np.sin(b), "half")
        return (rq @ rk.T).item()

    for p, offset in (((0, 0), (1, 2)), ((3, 1), (1, 2)), ((-2, 5.5), (1, 2)), ((4, 4), (-3, 0))):
        moved = (p[0] + 7, p[1] - 4)
        target, target_moved = np.add(p, offset), np.add(moved, offset)
        assert score(p, target) == pytest.approx(score(moved, target_moved), abs=1e-12)


def test_raster_puts_the_patch_below_a_row_away_and_2d_one_step():
    """Under the raster order the neighbour below is ``width`` positions away: its fastest pair has turned
    ``width`` radians more, where axial RoPE turns it by one (the chapter's measure starts here)."""
    inv_freq = posenc.rope_inv_freq(8, 100.0)
    here, below, beside = [2, 3], [3, 3], [2, 4]
    for freqs, step_below in (
        (patches.raster_pair_frequencies(inv_freq, 10), 10.0),
        (patches.axial_pair_frequencies(inv_freq), 1.0),
    ):
        a = patches.grid_rope_angles([here, below, beside], freqs)
        assert (a[1] - a[0]).max() == pytest.approx(step_below * inv_freq[0])
        assert (a[2] - a[0]).max() == pytest.approx(inv_freq[0])


@pytest.mark.parametrize(
    "call, error, pattern",
    [
        (lambda: patches.patch_coordinates(0, 3), ValueError, "height must be an integer >= 1, got 0"),
        (lambda: patches.patch_coordinates(2, 3.0), TypeError, "width must be an integer"),
        (lambda: patches.patch_coordinates(2, 3, centred="yes"), TypeError, "centred must be True or False"),
        (lambda: patches.grid_rope_angles([[0, 0, 0]], [[1, 0]]), ValueError, r"coords must have shape \(n, 2\)"),
        (lambda: patches.grid_rope_angles([[0, 0]], [1, 0]), ValueError, "pair_freqs"),
        (lambda: patches.axial_pair_frequencies([1, 0.5, 0.1], "alternate"), ValueError, "even length, got 3"),
        (lambda: patches.axial_pair_frequencies([1, 0.5], "mixed"), ValueError, "split"),
        (lambda: patches.mixed_pair_frequencies(10), ValueError, "multiple of 4 .*got 10"),
        (lambda: patches.augment_patch_coordinates([[0, 0]], jitter=(1, -2)), ValueError, "jitter must be > 0"),
        (lambda: patches.augment_patch_coordinates([[0, 0]], shift=(1, 2, 3)), ValueError, "shift must be one number"),
        (lambda: patches.augment_patch_coordinates([[0, 0]], rescale=0), ValueError, "rescale"),
        (lambda: patches.raster_pair_frequencies([1.0], 0), ValueError, "width must be an integer >= 1"),
        (lambda: patches.grid_similarity([[0, 0]], [[1, 0]], 1), ValueError, "centre must be an integer <= 0, got 1"),
    ],
)
def test_bad_input_is_named(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


def test_grid_similarity_is_the_normalised_score_of_a_query_with_itself():
    """mean_i cos(offset . f_i): the RoPE score of q = k with every pair (1, 0), over its value at no offset,
    computed here by rotating and taking dot products."""
    pair_freqs = patches.mixed_pair_frequencies(8, base=10.0, direction=0.4)
    coords = patches.patch_coordinates(3, 4)
    q = np.concatenate((np.ones(4), np.zeros(4)))  # "half" layout: every pair (i, i + 4) is (1, 0)
    angles = patches.grid_rope_angles(coords, pair_freqs)
    rotated = rotate_pairs(np.tile(q, (12, 1)), np.cos(angles), np.sin(angles), "half")
    scores = rotated @ rotated[5] / (q @ q)
    np.testing.assert_allclose(patches.grid_similarity(coords, pair_freqs, 5), scores, atol=1e-14)
    assert patches.grid_similarity(coords, pair_freqs, 5)[5] == 1.0


def test_under_the_raster_order_the_patch_above_is_less_alike_than_the_one_beside():
    """With RoPE's speeds over 8 pairs (base 100) on a grid 16 patches wide: under the raster order the
    patch above is 16 positions away and keeps less similarity than the one beside; axial RoPE keeps
    them equal."""
    inv_freq = posenc.rope_inv_freq(16, 100.0)
    coords = patches.patch_coordinates(16, 16)
    centre = 8 * 16 + 8
    for freqs, equal in (
        (patches.raster_pair_frequencies(inv_freq, 16), False),
        (patches.axial_pair_frequencies(inv_freq), True),
    ):
        sim = patches.grid_similarity(coords, freqs, centre)
        above, beside = sim[centre - 16], sim[centre + 1]
        by_hand = [np.cos(freqs @ [-1, 0]).mean(), np.cos(freqs @ [0, 1]).mean()]
        assert [above, beside] == pytest.approx(by_hand, abs=1e-15)
        assert (above == pytest.approx(beside, abs=1e-15)) == equal
        if not equal:
            assert above < beside
        # the CHANGELOG's numbers
        assert [round(above, 3), round(beside, 3)] == ([0.957, 0.957] if equal else [-0.007, 0.914])
