"""Plain attention: softmax, masking and the permutation-equivariance demonstration."""

import numpy as np
import pytest

import posenc


def test_softmax_rows_sum_to_one_and_masked_entries_get_zero():
    w = posenc.softmax(np.array([[1.0, 2.0, -np.inf], [1000.0, 1000.0, 1000.0]]))
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    assert w[0, 2] == 0.0 and w[1, 0] == pytest.approx(1 / 3)
    np.testing.assert_allclose(w[0, :2], np.exp([1, 2]) / np.exp([1, 2]).sum())


def test_attention_by_hand():
    q = np.array([[1.0, 0.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0]])
    v = np.array([[1.0], [3.0]])
    w1 = np.exp(1 / np.sqrt(2))
    expected = (w1 * 1 + 1 * 3) / (w1 + 1)
    assert posenc.scaled_dot_product_attention(q, k, v)[0, 0] == pytest.approx(expected)


def test_causal_mask_hides_the_future():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 4))
    w = posenc.attention_weights(x, x, causal=True)
    assert np.all(np.triu(w, 1) == 0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)


def test_attention_without_positions_is_permutation_equivariant_and_with_positions_is_not():
    rng = np.random.default_rng(42)
    x = rng.normal(size=(3, 16))  # "the", "cat", "sat"
    weights = posenc.random_projections(16, seed=1)
    perm = np.array([2, 1, 0])  # "sat cat the"
    assert posenc.permutation_equivariance_gap(x, perm, *weights) < 1e-12
    positions = posenc.sinusoidal(3, 16)  # one row per slot: it stays put while the words move
    assert posenc.permutation_equivariance_gap(x, perm, *weights, positions=positions) > 1e-2
    # a permutation that moves nothing changes nothing, positions or not
    assert posenc.permutation_equivariance_gap(x, [0, 1, 2], *weights, positions=positions) == 0.0


def test_random_projections_are_seeded():
    a = posenc.random_projections(8, 4, seed=3)
    b = posenc.random_projections(8, 4, seed=3)
    for m, n in zip(a, b, strict=True):
        np.testing.assert_array_equal(m, n)
        assert m.shape == (8, 4)


def test_a_causal_mask_breaks_permutation_equivariance_even_without_positions():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(4, 8))
    weights = posenc.random_projections(8, seed=2)
    assert posenc.permutation_equivariance_gap(x, [3, 2, 1, 0], *weights, causal=True) > 1e-2
    # the first token attends only to itself, so its output is its own value vector, whatever follows
    out = posenc.self_attention(x, *weights, causal=True)
    np.testing.assert_allclose(out[0], x[0] @ weights[2])
