"""Bad input gets a clear TypeError/ValueError naming the parameter and the value, never an IndexError."""

import numpy as np
import pytest
import torch

import posenc
from posenc.nn import ALiBiBias, LearnedPositionalEmbedding, RotaryEmbedding, SinusoidalPositionalEncoding

X = np.zeros((5, 8))
INV4 = posenc.rope_inv_freq(8)
NAN, INF = float("nan"), float("inf")

# (call, expected exception, fragments that must all appear in the message)
CASES = [
    (lambda: posenc.integer_encoding(-1, 4), ValueError, ["n_positions", ">= 0", "-1"]),
    (lambda: posenc.integer_encoding(3.0, 4), TypeError, ["n_positions", "integer", "3.0"]),
    (lambda: posenc.integer_encoding(3, 0), ValueError, ["d_model", ">= 1", "0"]),
    (lambda: posenc.normalized_encoding("5", 2), TypeError, ["n_positions", "'5'"]),
    (lambda: posenc.sinusoidal(True, 4), TypeError, ["n_positions", "True"]),
    (lambda: posenc.sinusoidal(10, 0), ValueError, ["d_model", "0"]),
    (lambda: posenc.sinusoidal(10, 4, base=NAN), ValueError, ["base", "finite", "nan"]),
    (lambda: posenc.sinusoidal(10, 4, base=1.0), ValueError, ["base", "> 1.0", "1.0"]),
    (lambda: posenc.sinusoidal(10, 4, base=-5), ValueError, ["base", "-5"]),
    (lambda: posenc.sinusoidal(10, 4, base="big"), TypeError, ["base", "'big'"]),
    (lambda: posenc.sinusoidal(10, 4, dtype=np.int32), ValueError, ["dtype", "floating", "int32"]),
    (lambda: posenc.sinusoidal(10, 4, dtype="nonsense"), TypeError, ["dtype", "nonsense"]),
    (lambda: posenc.sinusoidal_at([[1, 2]], 4), ValueError, ["positions", "1-dimensional", "(1, 2)"]),
    (lambda: posenc.sinusoidal_at([INF], 4), ValueError, ["positions", "finite"]),
    (lambda: posenc.sinusoidal_variant(10, 5, layout="concatenated"), ValueError, ["d_model", "even", "5"]),
    (lambda: posenc.sinusoidal_variant(10, 4, layout="split"), ValueError, ["layout", "'split'", "interleaved"]),
    (lambda: posenc.sinusoidal_frequencies(8, timescales="t2t"), ValueError, ["timescales", "'t2t'", "paper"]),
    (lambda: posenc.normalized_code_collisions(-3), ValueError, ["n_positions", ">= 0", "-3"]),
    (lambda: posenc.normalized_code_collisions(10, dtype=int), ValueError, ["dtype", "floating"]),
    (lambda: posenc.binary(4, 0), ValueError, ["n_bits", ">= 1", "0"]),
    (lambda: posenc.binary(300, 8), ValueError, ["n_positions=300", "9 bits", "n_bits=8"]),
    (lambda: posenc.rope_inv_freq(7), ValueError, ["head_dim", "even", "7"]),
    (lambda: posenc.rope_inv_freq(0), ValueError, ["head_dim", ">= 2", "0"]),
    (lambda: posenc.rope_inv_freq(64, base=0), ValueError, ["base", "0.0"]),
    (lambda: posenc.rope_angles([[0, 1]], INV4), ValueError, ["positions", "1-dimensional"]),
    (lambda: posenc.rope_angles([0, 1], []), ValueError, ["inv_freq", "empty"]),
    (lambda: posenc.rope_angles([0, 1], [-1.0]), ValueError, ["inv_freq", ">= 0", "-1.0"]),
    (lambda: posenc.rope_angles(["a"], INV4), TypeError, ["positions", "real numbers"]),
    (lambda: posenc.apply_rope(X, np.arange(4), INV4), ValueError, ["seq=5", "positions has", "4"]),
    (lambda: posenc.apply_rope(np.zeros((5, 6)), np.arange(5), INV4), ValueError, ["head_dim=6", "8"]),
    (lambda: posenc.apply_rope(X, np.arange(5), INV4, layout="neox"), ValueError, ["layout", "'neox'", "half"]),
    (lambda: posenc.apply_rope(X, np.arange(5), INV4, attention_factor=0), ValueError, ["attention_factor", "> 0"]),
    (lambda: posenc.apply_rope([[1.0, 2.0]], [0], [1.0]), TypeError, ["x", "list"]),
    (lambda: posenc.apply_rope(np.ones((5, 8), dtype=int), np.arange(5), INV4), TypeError, ["x", "floating"]),
    (lambda: posenc.apply_rope(np.ones(8), [0], INV4), ValueError, ["x", "(..., seq, head_dim)", "(8,)"]),
    (lambda: posenc.apply_rope(torch.zeros(5, 6), np.arange(5), INV4), ValueError, ["head_dim=6"]),
    (lambda: posenc.apply_rope(torch.zeros(5, 8, dtype=torch.int64), np.arange(5), INV4), TypeError, ["floating"]),
    (lambda: posenc.apply_rope_complex(X, np.arange(5), INV4, attention_factor=-1), ValueError, ["attention_factor"]),
    (lambda: posenc.interleaved_to_half_permutation(5), ValueError, ["head_dim", "even", "5"]),
    (lambda: posenc.scaled_inv_freq("ntk-aware", 64), ValueError, ["method", "'ntk-aware'", "yarn"]),
    (lambda: posenc.scaled_inv_freq(3, 64), TypeError, ["method", "3"]),
    (lambda: posenc.scaled_inv_freq("linear", 64, factor=0.5), ValueError, ["factor", ">= 1.0", "0.5"]),
    (lambda: posenc.scaled_inv_freq("linear", 64, factor=INF), ValueError, ["factor", "finite", "inf"]),
    (lambda: posenc.scaled_inv_freq("linear", 63), ValueError, ["head_dim", "even", "63"]),
    (lambda: posenc.scaled_inv_freq("ntk", 2, factor=2.0), ValueError, ["head_dim", ">= 4", "2"]),
    (lambda: posenc.scaled_inv_freq("dynamic", 64), TypeError, ["'dynamic'", "seq_len"]),
    (lambda: posenc.scaled_inv_freq("dynamic", 64, seq_len=0), ValueError, ["seq_len", ">= 1", "0"]),
    (lambda: posenc.scaled_inv_freq("dynamic", 64, seq_len=10.5), TypeError, ["seq_len", "10.5"]),
    (lambda: posenc.dynamic_ntk_cached_keys([[0.0] * 8]), TypeError, ["keys", "numpy.ndarray", "list"]),
    (lambda: posenc.dynamic_ntk_cached_keys(np.zeros(8)), ValueError, ["keys", "(..., N, head_dim)", "(8,)"]),
    (lambda: posenc.dynamic_ntk_cached_keys(np.zeros((5, 6), dtype=int)), TypeError, ["keys", "floating"]),
    (lambda: posenc.dynamic_ntk_cached_keys(np.zeros((5, 2))), ValueError, ["head_dim", ">= 4", "2"]),
    (lambda: posenc.dynamic_ntk_cached_keys(np.zeros((5, 8)), prefill_len=6), ValueError, ["prefill_len", "<= 5", "6"]),
    (lambda: posenc.dynamic_ntk_cached_keys(np.zeros((5, 8)), factor=0.5), ValueError, ["factor", ">= 1.0", "0.5"]),
    (lambda: posenc.dynamic_ntk_cached_keys(np.zeros((5, 8)), layout="neox"), ValueError, ["layout", "'neox'"]),
    (
        lambda: posenc.scaled_inv_freq("linear", 64, original_max_position_embeddings=0),
        ValueError,
        ["original_max_position_embeddings", "0"],
    ),
    (
        lambda: posenc.scaled_inv_freq("yarn", 64, factor=4.0, beta_fast=1, beta_slow=32),
        ValueError,
        ["beta_fast", "beta_slow", "32"],
    ),
    (lambda: posenc.scaled_inv_freq("yarn", 64, factor=4.0, beta_fast=-1), ValueError, ["beta_fast", "-1"]),
    (lambda: posenc.scaled_inv_freq("yarn", 64, bogus=1), TypeError, ["'yarn'", "bogus", "beta_fast"]),
    (lambda: posenc.scaled_inv_freq("linear", 64, seq_len=10), TypeError, ["'linear'", "seq_len", "none"]),
    (lambda: posenc.scaled_inv_freq("yarn", 64, factor=4.0, mscale=-1.0), ValueError, ["mscale", ">= 0", "-1.0"]),
    (lambda: posenc.yarn_attention_factor(4.0, 1.0, -0.5), ValueError, ["mscale_all_dim", ">= 0", "-0.5"]),
    (lambda: posenc.yarn_softmax_scale_multiplier(4.0, -1.0), ValueError, ["mscale", ">= 0", "-1.0"]),
    (
        lambda: posenc.scaled_inv_freq("yarn", 64, factor=4.0, extrapolation_factor=1.5),
        ValueError,
        ["extrapolation_factor", "<= 1.0", "1.5"],
    ),
    (
        lambda: posenc.scaled_inv_freq("longrope", 8, factor=4.0, short_factor=[1.0, 2.0]),
        ValueError,
        ["short_factor", "4", "2"],
    ),
    (
        lambda: posenc.scaled_inv_freq("longrope", 4, factor=4.0, long_factor=[1.0, 0.0]),
        ValueError,
        ["long_factor", "> 0", "0.0"],
    ),
    (
        lambda: posenc.scaled_inv_freq("longrope", 4, factor=4.0, long_factor=["a", "b"]),
        TypeError,
        ["long_factor"],
    ),
    (lambda: posenc.scaled_inv_freq("longrope", 4, seq_len=-1), ValueError, ["seq_len", ">= 0", "-1"]),
    (
        lambda: posenc.scaled_inv_freq("longrope", 4, factor=4.0, max_position_embeddings=8192),
        ValueError,
        ["factor", "max_position_embeddings", "not both"],
    ),
    (
        lambda: posenc.longrope_attention_factor(4.0, 1),
        ValueError,
        ["original_max_position_embeddings", ">= 2", "1"],
    ),
    (
        lambda: posenc.scaled_inv_freq("proportional", 8, partial_rotary_factor=1.5),
        ValueError,
        ["partial_rotary_factor", "<= 1.0", "1.5"],
    ),
    (lambda: posenc.scaled_inv_freq("yarn", 64, factor=4.0, truncate="yes"), TypeError, ["truncate", "'yes'"]),
    (lambda: posenc.scaled_inv_freq("yarn", 64, factor=4.0, attention_factor=0.0), ValueError, ["attention_factor"]),
    (
        lambda: posenc.scaled_inv_freq("llama3", 64, factor=4.0, low_freq_factor=4, high_freq_factor=1),
        ValueError,
        ["high_freq_factor", "low_freq_factor", "4.0"],
    ),
    (lambda: posenc.ntk_scaled_base(10000.0, 0.5, 64), ValueError, ["factor", "0.5"]),
    (lambda: posenc.yarn_ramp(64, beta_fast=1, beta_slow=2), ValueError, ["beta_fast", ">= beta_slow", "2.0"]),
    (
        lambda: posenc.scaled_inv_freq("llama3", 64, factor=4.0, low_freq_factor=2, high_freq_factor=1.5),
        ValueError,
        ["high_freq_factor", ">= low_freq_factor", "1.5"],
    ),
    (lambda: posenc.yarn_correction_dim(0, 64, 10000.0, 2048), ValueError, ["num_rotations", "0"]),
    (lambda: posenc.alibi_slopes(0), ValueError, ["n_heads", ">= 1", "0"]),
    (lambda: posenc.alibi_slopes(2.5), TypeError, ["n_heads", "2.5"]),
    (lambda: posenc.alibi_bias(-1, 8), ValueError, ["n_positions", "-1"]),
    (lambda: posenc.t5_relative_bucket([0.5]), ValueError, ["relative_position", "whole numbers", "0.5"]),
    (lambda: posenc.t5_relative_bucket([1], num_buckets=1), ValueError, ["num_buckets", "1"]),
    (lambda: posenc.t5_relative_bucket([1], max_distance=4), ValueError, ["max_distance", ">= 9", "4"]),
    (lambda: posenc.t5_relative_bucket([1], bidirectional=1), TypeError, ["bidirectional", "1"]),
    (lambda: posenc.shaw_relative_indices(5, 0), ValueError, ["max_relative_position", "0"]),
    (lambda: posenc.similarity(np.ones(5)), ValueError, ["table", "2-dimensional", "(5,)"]),
    (lambda: posenc.similarity(np.zeros((2, 3)), normalize=True), ValueError, ["row 0", "zeros"]),
    (lambda: posenc.offset_matrix(1, 5), ValueError, ["d_model", "even", "5"]),
    (lambda: posenc.offset_matrix(NAN, 4), ValueError, ["k", "finite"]),
    (lambda: posenc.wavelengths([0.0, 1.0]), ValueError, ["inv_freq", "> 0"]),
    (lambda: posenc.rotations_within_context(INV4, -5), ValueError, ["context_length", "-5"]),
    (lambda: posenc.critical_dimension(127, 10000.0, 4096), ValueError, ["head_dim", "even", "127"]),
    (lambda: posenc.critical_dimension(128, 10000.0, 0), ValueError, ["context_length", "0"]),
    (lambda: posenc.effective_scale(INV4, INV4[:-1]), ValueError, ["scaled_inv_freq", "(4,)", "(3,)"]),
    (lambda: posenc.rope_scores(np.ones(8), np.ones(6), [0], INV4), ValueError, ["q and k", "(8,)", "(6,)"]),
    (lambda: posenc.angle_rounding_error([1], INV4, "int8"), ValueError, ["dtype", "'int8'", "bfloat16"]),
    (
        lambda: posenc.rope_score_matrix(np.ones((3, 8)), np.ones((4, 8)), INV4),
        ValueError,
        ["queries and keys", "(3, 8)"],
    ),
    (lambda: posenc.linear_shift_fit(np.ones((3, 2)), 3), ValueError, ["k must be smaller", "3"]),
    (lambda: posenc.linear_shift_fit(np.ones((3, 2)), 0), ValueError, ["k", ">= 1", "0"]),
    (lambda: posenc.score_terms(np.ones((3, 2)), np.ones((3, 2)), np.eye(3)), ValueError, ["a", "(2, 2)", "(3, 3)"]),
    (lambda: posenc.score_terms(np.ones((3, 2)), np.ones((3, 2)), np.eye(2), "sum"), ValueError, ["combine", "'sum'"]),
    (lambda: posenc.principal_components(np.eye(3), 5), ValueError, ["n_components", "<= 3", "5"]),
    (
        lambda: posenc.permutation_equivariance_gap(np.ones((3, 4)), [0, 0, 1], *posenc.random_projections(4)),
        ValueError,
        ["permutation", "[0, 0, 1]"],
    ),
    (
        lambda: posenc.permutation_equivariance_gap(
            np.ones((3, 4)), [0, 1, 2], *posenc.random_projections(4), positions=np.ones((2, 4))
        ),
        ValueError,
        ["positions", "(2, 4)"],
    ),
    (lambda: posenc.softmax([[NAN, 1.0]]), ValueError, ["logits", "NaN"]),
    (lambda: posenc.softmax([[-INF, -INF]]), ValueError, ["masked"]),
    (lambda: posenc.attention_weights(np.ones((2, 3)), np.ones((2, 4))), ValueError, ["q and k", "(2, 3)", "(2, 4)"]),
    (lambda: posenc.softmax("abc"), TypeError, ["logits", "real numbers", "'abc'"]),
    (lambda: posenc.softmax(np.zeros((2, 3)), axis=5), ValueError, ["axis", "<= 1", "5"]),
    (lambda: posenc.softmax(np.zeros((2, 3)), axis=1.5), TypeError, ["axis", "1.5"]),
    (lambda: posenc.attention_weights(np.ones((2, 4)), np.ones((2, 4)), causal="yes"), TypeError, ["causal", "'yes'"]),
    (
        lambda: posenc.attention_weights(np.ones((3, 4)), np.ones((3, 4)), bias=np.zeros((2, 2))),
        ValueError,
        ["bias", "(3, 3)", "(2, 2)"],
    ),
    (lambda: posenc.attention_weights(np.ones(4), np.ones((2, 4))), ValueError, ["q", "(..., n, d)", "(4,)"]),
    (
        lambda: posenc.scaled_dot_product_attention(np.ones((3, 4)), np.ones((3, 4)), np.ones(3)),
        ValueError,
        ["v", "(3,)"],
    ),
    (
        lambda: posenc.self_attention(np.ones((3, 4)), np.ones((5, 4)), np.ones((4, 4)), np.ones((4, 4))),
        ValueError,
        ["w_q", "(4, ...)", "(5, 4)"],
    ),
    (
        lambda: posenc.self_attention(np.ones((3, 4)), np.ones((4, 4)), np.ones((4, 3)), np.ones((4, 4))),
        ValueError,
        ["w_q and w_k", "(4, 4)", "(4, 3)"],
    ),
    (
        lambda: posenc.self_attention(np.ones((3, 4)), np.ones((4, 4)), np.ones((4, 4)), np.ones(4)),
        ValueError,
        ["w_v", "(4,)"],
    ),
    (
        lambda: posenc.permutation_equivariance_gap(np.ones((3, 4)), [0, 2, 1], *posenc.random_projections(3)),
        ValueError,
        ["w_q", "tokens", "(3, 3)"],
    ),
    (lambda: posenc.random_projections(4, seed="a"), TypeError, ["seed", "'a'"]),
    (lambda: SinusoidalPositionalEncoding(0), ValueError, ["d_model", "0"]),
    (lambda: SinusoidalPositionalEncoding(8, dropout=1.5), ValueError, ["dropout", "1.5"]),
    (lambda: SinusoidalPositionalEncoding(8)(torch.zeros(2, 3, 6)), ValueError, ["d_model=8", "(2, 3, 6)"]),
    (lambda: SinusoidalPositionalEncoding(8)(np.zeros((2, 3, 8))), TypeError, ["torch.Tensor", "ndarray"]),
    (lambda: SinusoidalPositionalEncoding(8)(torch.zeros(1, 3, 8), offset=-1), ValueError, ["offset", "-1"]),
    (lambda: LearnedPositionalEmbedding(0, 8), ValueError, ["max_len", "0"]),
    (lambda: RotaryEmbedding(7), ValueError, ["head_dim", "even", "7"]),
    (lambda: RotaryEmbedding(8, layout="x"), ValueError, ["layout", "'x'"]),
    (lambda: RotaryEmbedding(8, scaling="su"), ValueError, ["scaling", "'su'", "'longrope'"]),
    (lambda: RotaryEmbedding(8, scaling="dynamic", factor=2.0, seq_len=5), TypeError, ["seq_len", "from its input"]),
    (lambda: RotaryEmbedding(8, scaling="yarn", factor=2.0, beta=3), TypeError, ["beta", "beta_fast"]),
    (lambda: RotaryEmbedding(8)(torch.zeros(1, 4, 8), torch.zeros(1, 5, 8)), ValueError, ["4 positions", "5"]),
    (lambda: RotaryEmbedding(8)(torch.zeros(1, 4, 6), torch.zeros(1, 4, 6)), ValueError, ["head_dim=8", "(1, 4, 6)"]),
    (
        lambda: RotaryEmbedding(8)(torch.zeros(1, 2, 8), torch.zeros(1, 2, 8), positions=[-1, 0]),
        ValueError,
        ["positions", ">= 0", "-1"],
    ),
    (
        lambda: RotaryEmbedding(8)(torch.zeros(1, 2, 8), torch.zeros(1, 2, 8), positions=[0.5, 1]),
        ValueError,
        ["positions", "whole numbers", "0.5"],
    ),
    (lambda: ALiBiBias(0), ValueError, ["n_heads", "0"]),
    (lambda: ALiBiBias(4)(5, 3), ValueError, ["n_keys", ">= 5", "3"]),
]


@pytest.mark.parametrize("call,error,fragments", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_bad_input_gets_a_clear_error(call, error, fragments):
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error  # not a subclass such as IndexError dressed up
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} missing from: {message}"
