"""ALiBi, T5 buckets and Shaw's clipped offsets: the papers' numbers and transformers' implementations."""

import numpy as np
import pytest
import torch

import posenc


def test_alibi_slopes_for_eight_heads_are_one_half_to_one_256th():
    np.testing.assert_array_equal(posenc.alibi_slopes(8), [1 / 2**k for k in range(1, 9)])


def test_alibi_slopes_for_sixteen_heads_start_at_one_over_sqrt_two():
    slopes = posenc.alibi_slopes(16)
    np.testing.assert_allclose(slopes, [2 ** (-0.5 * k) for k in range(1, 17)])


def test_alibi_slopes_for_twelve_heads_interleave_the_sixteen_head_sequence():
    # the 8-head slopes, then every other slope of 16 heads: 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
    expected = [2.0**-k for k in range(1, 9)] + [2 ** (-0.5 - k) for k in range(4)]
    np.testing.assert_allclose(posenc.alibi_slopes(12), expected)


@pytest.mark.parametrize("n_heads", list(range(1, 70)))
def test_alibi_slopes_match_transformers_bloom(n_heads):
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    # bloom's alibi for positions [0, 1] holds slope * 1 in the second column
    alibi = build_alibi_tensor(torch.ones(1, 2), n_heads, torch.float32)  # (heads, 1, 2)
    np.testing.assert_allclose(posenc.alibi_slopes(n_heads), alibi[:, 0, 1].double().numpy(), rtol=1e-6)


@pytest.mark.parametrize("n_heads", list(range(1, 129)))
def test_alibi_slopes_match_transformers_bloom_and_mpt_slope_functions(n_heads):
    # chapter 13: BLOOM follows the authors' get_slopes, MPT reorders the next power of two; both agree with posenc
    from transformers.models.bloom.modeling_bloom import _get_alibi_slopes
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    bloom = _get_alibi_slopes(n_heads, torch.device("cpu")).double().numpy()
    mpt = -build_mpt_alibi_tensor(n_heads, 2)[:, 0, 0].double().numpy()  # (heads, 1, 2): -slope at offset -1
    np.testing.assert_allclose(bloom, posenc.alibi_slopes(n_heads), rtol=1e-6)
    np.testing.assert_allclose(mpt, posenc.alibi_slopes(n_heads), rtol=1e-6)


def test_alibi_bias_entries():
    bias = posenc.alibi_bias(5, 8)
    assert bias.shape == (8, 5, 5)
    slopes = posenc.alibi_slopes(8)
    for h in range(8):
        for i in range(5):
            for j in range(5):
                expected = -slopes[h] * (i - j) if j <= i else 0.0
                assert bias[h, i, j] == expected
    assert np.all(np.diagonal(bias, axis1=1, axis2=2) == 0)


def test_alibi_softmax_row_is_shift_invariant_in_position():
    # adding the same bias row to logits makes attention decay with distance, identically at every query
    bias = posenc.alibi_bias(50, 4)
    row_10 = posenc.softmax(bias[0, 10, :11])
    row_40 = posenc.softmax(bias[0, 40, 30:41])
    np.testing.assert_allclose(row_10, row_40)
    assert np.all(np.diff(row_10) > 0)  # the nearest key gets the most weight


def test_default_alibi_bias_is_unchanged_by_the_bidirectional_option():
    np.testing.assert_array_equal(posenc.alibi_bias(9, 12, bidirectional=False), posenc.alibi_bias(9, 12))


def test_bidirectional_alibi_entries_by_hand():
    bias = posenc.alibi_bias(5, 8, bidirectional=True)
    assert bias.shape == (8, 5, 5) and bias.dtype == np.float64
    for h in range(8):
        slope = 2.0 ** -(h + 1)  # the paper's slopes for 8 heads: 1/2 ... 1/256
        for i in range(5):
            for j in range(5):
                assert bias[h, i, j] == -slope * abs(i - j)
    np.testing.assert_array_equal(bias, bias.transpose(0, 2, 1))  # symmetric: k before and k after cost the same
    causal = posenc.alibi_bias(5, 8)
    lower = np.tril(np.ones((5, 5), dtype=bool))
    np.testing.assert_array_equal(bias[:, lower], causal[:, lower])  # the two forms agree for past keys


def test_bidirectional_alibi_matches_llm_foundry_full_bias():
    # MosaicML llm-foundry, llmfoundry/models/layers/attention.py, build_alibi_bias(..., full=True), its steps:
    # arange(1 - n, 1) as a row minus the same as a column, abs, times -1, times the slopes (gen_slopes,
    # 1 / 2**(k * 8 / n_heads) for a power-of-two head count)
    n, heads = 11, 8
    bias = torch.arange(1 - n, 1, dtype=torch.int32).view(1, 1, 1, n)
    bias = bias - torch.arange(1 - n, 1, dtype=torch.int32).view(1, 1, n, 1)
    bias = bias.abs().mul(-1)
    slopes = 1.0 / torch.pow(2, torch.arange(1, heads + 1, dtype=torch.float64) * (8 / heads))
    reference = (bias * slopes.view(1, heads, 1, 1))[0]
    np.testing.assert_allclose(posenc.alibi_bias(n, heads, bidirectional=True), reference.numpy(), rtol=1e-15)


@pytest.mark.parametrize("n_heads", [5, 12, 16])
def test_bidirectional_alibi_matches_the_alibi_authors_encoder_recipe(n_heads):
    # ofirpress/attention_with_linear_biases issue 5 (encoder attention): relative_position =
    # abs(memory_position - context_position), times -slopes; slopes here from transformers' BLOOM
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    n = 9
    slopes = build_alibi_tensor(torch.ones(1, 2), n_heads, torch.float32)[:, 0, 1].double()
    context_position = torch.arange(n)[:, None]
    memory_position = torch.arange(n)[None, :]
    relative_position = torch.abs(memory_position - context_position).unsqueeze(0).expand(n_heads, -1, -1)
    reference = -slopes[:, None, None] * relative_position
    np.testing.assert_allclose(posenc.alibi_bias(n, n_heads, bidirectional=True), reference.numpy(), rtol=1e-6)


def test_bidirectional_alibi_attention_is_symmetric_around_the_query():
    bias = posenc.alibi_bias(21, 4, bidirectional=True)
    weights = posenc.softmax(bias[1, 10])  # the middle query, equal logits otherwise
    np.testing.assert_allclose(weights[:10], weights[11:][::-1])  # k before and k after weigh the same
    assert weights.argmax() == 10 and np.all(np.diff(weights[10:]) < 0)


def test_bidirectional_must_be_a_bool():
    with pytest.raises(TypeError, match="bidirectional must be True or False, got 'yes'"):
        posenc.alibi_bias(4, 2, bidirectional="yes")


def t5_reference(relative, bidirectional, num_buckets, max_distance):
    from transformers.models.t5.modeling_t5 import T5Attention

    return T5Attention._relative_position_bucket(
        torch.as_tensor(relative), bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    ).numpy()


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets,max_distance", [(32, 128), (16, 64), (64, 256), (8, 20)])
def test_t5_buckets_match_transformers(bidirectional, num_buckets, max_distance):
    relative = np.arange(-3000, 3001)
    ours = posenc.t5_relative_bucket(relative, bidirectional, num_buckets, max_distance)
    np.testing.assert_array_equal(ours, t5_reference(relative, bidirectional, num_buckets, max_distance))


def test_t5_buckets_by_hand():
    # bidirectional, 32 buckets: 16 per direction, offsets 0..7 exact, then log-spaced up to 128
    b = posenc.t5_relative_bucket(np.array([0, -1, -7, -8, -127, -128, -10_000, 1, 7, 200]))
    np.testing.assert_array_equal(b[:3], [0, 1, 7])  # the past: exact buckets 0..7
    assert b[3] == 8 and b[4] == 15 and b[5] == 15 and b[6] == 15
    assert b[7] == 17 and b[8] == 23 and b[9] == 31  # the future: buckets 16..31
    causal = posenc.t5_relative_bucket(np.array([5, 0, -1]), bidirectional=False)
    np.testing.assert_array_equal(causal, [0, 0, 1])  # every future offset shares bucket 0


def test_t5_bucket_matrix_is_toeplitz():
    m = posenc.t5_bucket_matrix(40)
    np.testing.assert_array_equal(m[1:, 1:], m[:-1, :-1])
    assert m[10, 3] == posenc.t5_relative_bucket(np.array(-7))


def test_shaw_indices_clip_at_k():
    idx = posenc.shaw_relative_indices(6, 2)
    expected = np.clip(np.arange(6)[None, :] - np.arange(6)[:, None], -2, 2) + 2
    np.testing.assert_array_equal(idx, expected)
    assert idx.min() == 0 and idx.max() == 4
    assert idx[0, 5] == 4 and idx[5, 0] == 0 and idx[3, 3] == 2


def test_relative_positions_key_minus_query():
    rel = posenc.relative_positions(3)
    np.testing.assert_array_equal(rel, [[0, 1, 2], [-1, 0, 1], [-2, -1, 0]])
