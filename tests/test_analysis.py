"""Analysis helpers: the offset identity, Toeplitz similarity, wavelengths, decay bound, precision."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import posenc


@given(k=st.integers(-500, 500), half_dim=st.integers(1, 32), base=st.floats(2.0, 1e5))
def test_offset_matrix_shifts_every_position_by_k(k, half_dim, base):
    d = 2 * half_dim
    table = posenc.sinusoidal(600, d, base)
    p = np.arange(max(0, -k), min(600, 600 - k))
    shifted = table[p] @ posenc.offset_matrix(k, d, base).T  # row form of PE(p + k) = M_k PE(p)
    np.testing.assert_allclose(shifted, table[p + k], atol=1e-9)


def test_offset_matrix_is_orthogonal_block_diagonal_and_independent_of_position():
    m = posenc.offset_matrix(3, 8)
    np.testing.assert_allclose(m @ m.T, np.eye(8), atol=1e-15)
    assert np.count_nonzero(m) == 16  # four 2x2 blocks
    # block 0 by hand: omega_0 = 1
    np.testing.assert_allclose(m[:2, :2], [[math.cos(3), math.sin(3)], [-math.sin(3), math.cos(3)]])
    np.testing.assert_allclose(posenc.offset_matrix(2, 8) @ posenc.offset_matrix(3, 8), posenc.offset_matrix(5, 8))
    np.testing.assert_allclose(posenc.offset_matrix(-3, 8), m.T)


def test_offset_matrix_refuses_odd_width():
    with pytest.raises(ValueError, match="d_model must be even"):
        posenc.offset_matrix(1, 5)


def test_sinusoidal_similarity_is_symmetric_toeplitz_with_cosine_sums():
    table = posenc.sinusoidal(64, 32)
    sim = posenc.similarity(table)
    np.testing.assert_allclose(sim, sim.T)
    np.testing.assert_allclose(sim[1:, 1:], sim[:-1, :-1], atol=1e-12)
    omega = posenc.sinusoidal_frequencies(32)
    np.testing.assert_allclose(sim[10, 3], np.sum(np.cos(7 * omega)))
    np.testing.assert_allclose(np.diag(sim), 16.0)


def test_cosine_similarity_has_unit_diagonal():
    rng = np.random.default_rng(0)
    sim = posenc.similarity(rng.normal(size=(10, 4)), normalize=True)
    np.testing.assert_allclose(np.diag(sim), 1.0)
    assert np.all(np.abs(sim) <= 1 + 1e-12)


def test_wavelengths_and_rotations():
    inv = posenc.rope_inv_freq(8)
    np.testing.assert_allclose(posenc.wavelengths(inv), 2 * np.pi * 10.0 ** np.arange(4))
    turns = posenc.rotations_within_context(inv, 2 * np.pi * 100)
    np.testing.assert_allclose(turns, [100, 10, 1, 0.1])


def test_critical_dimension_published_value_for_llama2():
    # Liu et al. 2023: 92 for LLaMA 2 (head_dim 128, base 10000, trained at 4096)
    assert posenc.critical_dimension(128, 10000.0, 4096) == 92
    # its meaning: pairs before it complete a full turn within L, pairs from it on do not
    turns = posenc.rotations_within_context(posenc.rope_inv_freq(128), 4096)
    assert turns[45] > 1 > turns[46]
    assert posenc.critical_dimension(128, 10000.0, 1) == 0
    assert posenc.critical_dimension(8, 10.0, 10**9) == 8


def test_effective_scale():
    theta = posenc.rope_inv_freq(16)
    np.testing.assert_allclose(posenc.effective_scale(theta, theta / 4), 4.0)


def test_decay_bound_brute_force_and_limits():
    inv = posenc.rope_inv_freq(16)
    offsets = np.array([0.0, 1.0, 17.0, 250.0])
    bound = posenc.rope_decay_bound(offsets, inv)
    for r, value in zip(offsets, bound, strict=True):
        partial = [abs(sum(np.exp(1j * r * inv[k]) for k in range(j))) for j in range(1, 9)]
        assert value == pytest.approx(np.mean(partial))
    assert bound[0] == pytest.approx(np.mean(np.arange(1, 9)))  # at r = 0, |S_j| = j
    long = posenc.rope_decay_bound(np.arange(0, 2000), posenc.rope_inv_freq(128))
    assert long[0] > 5 * long[1000:].mean()  # it decays (with ripples)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_rope_scores_equal_dot_products_of_rotated_vectors(layout):
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(2, 16))
    inv = posenc.rope_inv_freq(16)
    offsets = np.array([-5, 0, 3, 40])
    scores = posenc.rope_scores(q, k, offsets, inv, layout)
    for r, s in zip(offsets, scores, strict=True):
        m, n = 100 + r, 100
        expected = posenc.apply_rope(q[None], [m], inv, layout)[0] @ posenc.apply_rope(k[None], [n], inv, layout)[0]
        assert s == pytest.approx(expected)
    assert scores[1] == pytest.approx(q @ k)


def test_angle_rounding_error_by_dtype():
    inv = posenc.rope_inv_freq(64)
    positions = np.array([3, 1000, 2**20])
    assert np.all(posenc.angle_rounding_error(positions, inv, "float64") == 0)
    err32 = posenc.angle_rounding_error(positions, inv, "float32")
    assert err32[0].max() < 1e-6 and 1e-4 < err32[2].max() < 0.2
    # bfloat16 has 8 significant bits, so it cannot even hold the position: 257 rounds to 256
    errbf = posenc.angle_rounding_error(np.array([257]), inv, "bfloat16")
    assert errbf[0, 0] >= 1.0  # 257 rounds to 256: a full radian off in pair 0


def test_rope_score_matrix_entries_and_toeplitz_structure():
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(2, 8))
    inv = posenc.rope_inv_freq(8)
    scores = posenc.rope_score_matrix(np.tile(q, (12, 1)), np.tile(k, (12, 1)), inv)
    np.testing.assert_allclose(scores[1:, 1:], scores[:-1, :-1], atol=1e-12)  # depends on m - n only
    expected = posenc.apply_rope(q[None], [7], inv)[0] @ posenc.apply_rope(k[None], [2], inv)[0]
    assert scores[7, 2] == pytest.approx(expected)
    np.testing.assert_allclose(np.diag(scores), q @ k)


def test_linear_shift_fit_finds_the_offset_matrix_for_sinusoids_but_not_for_bits():
    table = posenc.sinusoidal(200, 8, 100.0)
    matrix, error = posenc.linear_shift_fit(table, 3)
    assert error < 1e-9
    np.testing.assert_allclose(matrix, posenc.offset_matrix(3, 8, 100.0), atol=1e-8)
    _, binary_error = posenc.linear_shift_fit(posenc.binary(64, 6), 1)
    assert binary_error > 0.25  # the carries cannot be written as a matrix


def test_similarity_by_offset_equals_table_dot_products_and_half_the_trace_of_m_k():
    table = posenc.sinusoidal(300, 16, 100.0)
    offsets = np.array([-7, 0, 1, 5, 40])
    expected = [table[100] @ table[100 + k] for k in offsets]
    np.testing.assert_allclose(posenc.similarity_by_offset(offsets, 16, 100.0), expected)
    np.testing.assert_allclose(
        posenc.similarity_by_offset([3], 16, 100.0), np.trace(posenc.offset_matrix(3, 16, 100.0)) / 2
    )
    assert posenc.similarity_by_offset([0], 64)[0] == 32.0


def test_unseen_angle_distance_small_for_fast_pairs_large_for_slow_ones():
    inv = posenc.rope_inv_freq(128)
    beyond = np.arange(4096, 8192)
    distance = posenc.unseen_angle_distance(inv, 4096, beyond)
    turns = posenc.rotations_within_context(inv, 4096)
    assert np.all(distance[turns > 1.01] < 0.01)  # every angle already seen, to within 0.01 rad
    # the slowest pair never turns far: its farthest new angle, 8191 theta, lies past the last seen, 4095 theta
    assert distance[-1] == pytest.approx((8191 - 4095) * inv[-1])
    # by hand: one pair at 0.1 rad/token seen for 10 tokens covers [0, 0.9]; position 20 is at 2.0 rad
    assert posenc.unseen_angle_distance([0.1], 10, [20])[0] == pytest.approx(1.1)
    assert posenc.unseen_angle_distance([0.1], 10, [5])[0] == 0.0


def test_score_terms_add_are_the_four_products_and_sum_to_the_score():
    rng = np.random.default_rng(3)
    x, pe, a = rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), rng.normal(size=(4, 4))
    terms = posenc.score_terms(x, pe, a)
    assert terms.shape == (4, 5, 5)
    # entry (m, n) = 1, 3 of each term, written out as a double sum
    by_hand = [
        sum(left[1, i] * a[i, j] * right[3, j] for i in range(4) for j in range(4))
        for left, right in ((x, x), (x, pe), (pe, x), (pe, pe))
    ]
    np.testing.assert_allclose(terms[:, 1, 3], by_hand)
    np.testing.assert_allclose(terms.sum(axis=0), (x + pe) @ a @ (x + pe).T)


def test_score_terms_concat_splits_the_blocks_of_a():
    rng = np.random.default_rng(4)
    x, pe = rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    a = rng.normal(size=(5, 5))
    u = np.hstack([x, pe])
    terms = posenc.score_terms(x, pe, a, combine="concat")
    np.testing.assert_allclose(terms.sum(axis=0), u @ a @ u.T)
    # projections that keep the token and position channels apart: no mixed terms at all
    apart = a.copy()
    apart[:3, 3:] = 0
    apart[3:, :3] = 0
    separate = posenc.score_terms(x, pe, apart, combine="concat")
    assert np.all(separate[1] == 0) and np.all(separate[2] == 0)
    np.testing.assert_allclose(separate[0], x @ a[:3, :3] @ x.T)
    np.testing.assert_allclose(separate[3], pe @ a[3:, 3:] @ pe.T)


def test_adding_is_concatenating_with_four_equal_blocks():
    # [x; p]^T [[A, A], [A, A]] [x'; p'] = (x + p)^T A (x' + p'): addition is a special case
    rng = np.random.default_rng(5)
    x, pe, a = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(3, 3))
    tied = np.block([[a, a], [a, a]])
    np.testing.assert_allclose(posenc.score_terms(x, pe, tied, combine="concat"), posenc.score_terms(x, pe, a))


def test_score_terms_refuses_mismatched_shapes():
    x, pe = np.ones((4, 3)), np.ones((4, 2))
    with pytest.raises(ValueError, match="same width"):
        posenc.score_terms(x, pe, np.eye(3))
    with pytest.raises(ValueError, match=r"a must have shape \(5, 5\)"):
        posenc.score_terms(x, pe, np.eye(4), combine="concat")
    with pytest.raises(ValueError, match="one row per position"):
        posenc.score_terms(x, np.ones((3, 2)), np.eye(5), combine="concat")
    with pytest.raises(ValueError, match="combine"):
        posenc.score_terms(x, x, np.eye(3), combine="stack")


def test_principal_components_of_a_line_and_against_the_covariance():
    # rows on a straight line through the origin: one component explains everything
    direction = np.array([3.0, 4.0]) / 5
    line = np.arange(10)[:, None] * direction[None, :]
    coords, explained, directions = posenc.principal_components(line)
    np.testing.assert_allclose(explained, [1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(np.abs(directions[0]), direction)
    np.testing.assert_allclose(coords[:, 0], np.arange(10) - 4.5)  # sign: first coordinate <= 0
    # in general: the variances are the eigenvalues of the covariance matrix, largest first
    rng = np.random.default_rng(6)
    table = rng.normal(size=(40, 6)) * np.array([5.0, 3.0, 2.0, 1.0, 0.5, 0.1])
    coords, explained, directions = posenc.principal_components(table)
    eigenvalues = np.sort(np.linalg.eigvalsh(np.cov(table, rowvar=False)))[::-1]
    np.testing.assert_allclose(explained, eigenvalues / eigenvalues.sum())
    np.testing.assert_allclose(coords @ directions, table - table.mean(axis=0), atol=1e-12)
    assert np.all(coords[0] <= 0)
    first_two = posenc.principal_components(table, n_components=2)
    assert first_two[0].shape == (40, 2) and first_two[1].shape == (2,) and first_two[2].shape == (2, 6)


def test_principal_components_refuses_tables_without_variance():
    with pytest.raises(ValueError, match="at least 2 rows"):
        posenc.principal_components(np.ones((1, 3)))
    with pytest.raises(ValueError, match="no variance"):
        posenc.principal_components(np.ones((4, 3)))
    with pytest.raises(ValueError, match="n_components"):
        posenc.principal_components(np.eye(3), n_components=4)
