"""Absolute encodings against hand-evaluated values, the paper's formula and identities."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import posenc


def test_worked_d_model_4_table():
    # Evaluated by hand: 10000 ** (2 * 1 / 4) = 100, so pair 0 turns at p rad and pair 1 at p / 100 rad;
    # position 1 is [sin 1, cos 1, sin 0.01, cos 0.01].
    table = posenc.sinusoidal(4, 4)
    expected = np.array(
        [
            [0.0, 1.0, 0.0, 1.0],
            [0.84147098, 0.54030231, 0.00999983, 0.99995],
            [0.90929743, -0.41614684, 0.01999867, 0.99980001],
            [0.14112001, -0.9899925, 0.0299955, 0.99955003],
        ]
    )
    np.testing.assert_allclose(table, expected, atol=5e-9)


def test_pair_one_of_d4_turns_at_one_hundredth_radian_per_position():
    # 10000 ** (2 * 1 / 4) = 100: the second pair's angle at position p is p / 100.
    table = posenc.sinusoidal(500, 4)
    p = np.arange(500)
    np.testing.assert_allclose(table[:, 2], np.sin(p / 100), atol=1e-12)
    np.testing.assert_allclose(table[:, 3], np.cos(p / 100), atol=1e-12)


@given(
    n=st.integers(1, 40),
    d=st.integers(1, 33),
    base=st.floats(1.5, 1e6),
)
def test_sinusoidal_matches_formula_entry_by_entry(n, d, base):
    table = posenc.sinusoidal(n, d, base)
    assert table.shape == (n, d)
    for p in (0, n - 1, n // 2):
        for col in range(d):
            i = col // 2
            angle = p / base ** (2 * i / d)
            expected = math.sin(angle) if col % 2 == 0 else math.cos(angle)
            assert table[p, col] == pytest.approx(expected, abs=1e-12)


def test_odd_d_model_last_column_is_the_final_sine():
    table = posenc.sinusoidal(50, 5, 10000.0)
    p = np.arange(50)
    np.testing.assert_allclose(table[:, 4], np.sin(p / 10000.0 ** (4 / 5)), atol=1e-13)
    np.testing.assert_allclose(table[:, :4:2], posenc.sinusoidal_at(p, 5)[:, :4:2])


def test_rows_have_norm_sqrt_d_over_2_for_even_d():
    # sin^2 + cos^2 = 1 per pair
    table = posenc.sinusoidal(100, 16)
    np.testing.assert_allclose(np.linalg.norm(table, axis=1), math.sqrt(8), rtol=1e-12)


def test_wavelengths_are_a_geometric_progression_from_2pi_to_2pi_base_pow_d_minus_2_over_d():
    d, base = 64, 10000.0
    lam = posenc.wavelengths(posenc.sinusoidal_frequencies(d, base))
    assert lam[0] == pytest.approx(2 * math.pi)
    assert lam[-1] == pytest.approx(2 * math.pi * base ** ((d - 2) / d))
    assert lam[-1] < 2 * math.pi * base  # not "10000 * 2 pi"
    ratios = lam[1:] / lam[:-1]
    np.testing.assert_allclose(ratios, base ** (2 / d))


def test_sinusoidal_frequencies_equal_rope_inv_freq_for_even_width():
    np.testing.assert_allclose(posenc.sinusoidal_frequencies(128, 500000.0), posenc.rope_inv_freq(128, 500000.0))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_dtype_is_respected(dtype):
    assert posenc.sinusoidal(10, 6, dtype=dtype).dtype == dtype


def test_float32_table_is_accurate_at_position_two_to_the_twenty():
    p = 2**20
    table32 = posenc.sinusoidal_at([p, p + 1], 128, dtype=np.float32)
    exact = posenc.sinusoidal_at([p, p + 1], 128)
    # accurate to float32 rounding of values in [-1, 1]
    assert np.max(np.abs(table32.astype(np.float64) - exact)) <= 2**-24
    # whereas forming the angle in float32 is off by up to p * 2**-24 ~ 0.06 rad
    angle32 = np.float32(p) * posenc.sinusoidal_frequencies(128).astype(np.float32)
    naive = np.sin(angle32.astype(np.float64))
    assert np.max(np.abs(naive - exact[0, 0::2])) > 1e-3


def test_sinusoidal_at_fractional_positions_interpolates_the_waves():
    table = posenc.sinusoidal_at([0.5, 2.25], 4)
    np.testing.assert_allclose(table[0], [math.sin(0.5), math.cos(0.5), math.sin(0.005), math.cos(0.005)])


def test_integer_encoding_rows_are_constant_and_norm_grows_linearly():
    table = posenc.integer_encoding(6, 3)
    np.testing.assert_array_equal(table, np.repeat(np.arange(6.0)[:, None], 3, axis=1))
    np.testing.assert_allclose(np.linalg.norm(posenc.integer_encoding(100, 16), axis=1), np.arange(100) * 4.0)


def test_normalized_encoding_depends_on_sequence_length():
    short, long = posenc.normalized_encoding(5, 2), posenc.normalized_encoding(9, 2)
    assert short[2, 0] == 0.5 and long[2, 0] == 0.25  # same position, different code
    assert short[-1, 0] == long[-1, 0] == 1.0
    np.testing.assert_allclose(np.diff(long[:, 0]), 1 / 8)
    np.testing.assert_array_equal(posenc.normalized_encoding(1, 3), np.zeros((1, 3)))


def test_binary_counter_bits_least_significant_first():
    bits = posenc.binary(16, 4)
    for p in range(16):
        assert int("".join(str(b) for b in bits[p][::-1]), 2) == p
    # column j repeats with period 2 ** (j + 1): half zeros then half ones
    bits = posenc.binary(64, 6)  # long enough to see the first four columns repeat
    for j in range(4):
        period = 2 ** (j + 1)
        np.testing.assert_array_equal(bits[:period, j], [0] * (period // 2) + [1] * (period // 2))
        np.testing.assert_array_equal(bits[period : 2 * period, j], bits[:period, j])


def test_binary_rows_are_unique_and_refuse_wrapping():
    bits = posenc.binary(32, 5)
    assert len({tuple(r) for r in bits}) == 32
    with pytest.raises(ValueError, match="n_positions=33 needs at least 6 bits"):
        posenc.binary(33, 5)


def test_empty_tables_are_allowed():
    assert posenc.sinusoidal(0, 8).shape == (0, 8)
    assert posenc.binary(0, 3).shape == (0, 3)


def _float16_code_exact(value: Fraction) -> Fraction:
    """Round a value in [0, 1] to the nearest float16 number, ties to even, in exact arithmetic."""
    if value == 0:
        return Fraction(0)
    exponent = max(math.floor(math.log2(value)), -14)  # binade; below 2**-14 the spacing stays 2**-24
    while Fraction(2) ** exponent > value:  # guard against log2 rounding
        exponent -= 1
    while exponent < 0 and Fraction(2) ** (exponent + 1) <= value:
        exponent += 1
    spacing = Fraction(2) ** (exponent - 10)  # 10 fraction bits
    steps = value / spacing
    low = math.floor(steps)
    remainder = steps - low
    if remainder > Fraction(1, 2) or (remainder == Fraction(1, 2) and low % 2 == 1):
        low += 1
    return low * spacing


@pytest.mark.parametrize("n", [1, 2, 3, 100, 2049, 2050, 2051, 2052, 2053, 3000, 4096, 4097])
def test_normalized_code_collisions_match_exact_float16_rounding(n):
    codes = [_float16_code_exact(Fraction(p, max(n - 1, 1))) for p in range(n)]
    expected = [p for p in range(n - 1) if codes[p] == codes[p + 1]]
    np.testing.assert_array_equal(posenc.normalized_code_collisions(n), expected)


def test_normalized_code_collisions_first_at_2051_and_a_quarter_at_4097():
    # Step 1/(n-1) against the float16 spacing 2**-11 of [1/2, 1): no neighbours merge up to n = 2050.
    assert all(posenc.normalized_code_collisions(n).size == 0 for n in range(2, 2051))
    assert posenc.normalized_code_collisions(2051).size == 1
    # n = 4097: step 2**-12 is half the spacing of [1/2, 1), so p/4096 for odd p >= 2049 is a tie,
    # and the 2049 positions of that binade share 1025 codes: 1024 merged pairs of 4096.
    merged = posenc.normalized_code_collisions(4097)
    assert merged.size == 1024 and merged.min() >= 2048
    assert np.float16(4095 / 4096) == np.float16(1.0)  # the tie rounds to the even neighbour, 1.0


def test_normalized_code_collisions_count_distinct_codes():
    # Monotone rounding: merged neighbour pairs = n - distinct codes, at every length.
    for n in (5, 2100, 5000, 9000):
        codes = np.arange(n, dtype=np.float64) / (n - 1)
        distinct = len({float(np.float16(c)) for c in codes})
        assert posenc.normalized_code_collisions(n).size == n - distinct
    assert posenc.normalized_code_collisions(5000, dtype=np.float32).size == 0
    assert posenc.normalized_code_collisions(0).size == 0


def _tensor2tensor_timing_signal(length, channels, max_timescale):
    """get_timing_signal_1d of tensor2tensor (layers/common_attention.py), min_timescale = 1, in plain math."""
    num_timescales = channels // 2
    increment = math.log(max_timescale / 1.0) / max(num_timescales - 1, 1)
    inv_timescales = [math.exp(-i * increment) for i in range(num_timescales)]
    return np.array(
        [[math.sin(p * t) for t in inv_timescales] + [math.cos(p * t) for t in inv_timescales] for p in range(length)]
    )


@pytest.mark.parametrize(("d", "base"), [(2, 10000.0), (8, 10000.0), (64, 10000.0), (16, 500.0)])
def test_sinusoidal_variant_reproduces_tensor2tensor(d, base):
    table = posenc.sinusoidal_variant(300, d, base, layout="concatenated", timescales="tensor2tensor")
    np.testing.assert_allclose(table, _tensor2tensor_timing_signal(300, d, base), atol=1e-12)


def test_tensor2tensor_timescales_end_exactly_at_the_base():
    theta = posenc.sinusoidal_frequencies(512, 10000.0, timescales="tensor2tensor")
    lam = posenc.wavelengths(theta)
    assert lam[0] == pytest.approx(2 * math.pi) and lam[-1] == pytest.approx(2 * math.pi * 10000.0)
    np.testing.assert_allclose(lam[1:] / lam[:-1], 10000.0 ** (1 / 255))


def test_sinusoidal_variant_layouts_are_a_column_permutation_and_defaults_are_sinusoidal():
    for timescales in ("paper", "tensor2tensor"):
        interleaved = posenc.sinusoidal_variant(100, 12, timescales=timescales)
        concatenated = posenc.sinusoidal_variant(100, 12, layout="concatenated", timescales=timescales)
        perm = np.r_[0:12:2, 1:12:2]  # sines (even columns) first, then cosines
        np.testing.assert_array_equal(concatenated, interleaved[:, perm])
    np.testing.assert_array_equal(posenc.sinusoidal_variant(30, 7), posenc.sinusoidal(30, 7))
    assert posenc.sinusoidal_variant(3, 4, dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize(
    ("kwargs", "error", "fragments"),
    [
        ({"layout": "concatenated"}, ValueError, ["d_model", "even", "7"]),
        ({"timescales": "tensor2tensor"}, ValueError, ["d_model", "even", "7"]),
        ({"layout": "sin-cos"}, ValueError, ["layout", "'sin-cos'", "concatenated"]),
        ({"timescales": "t2t"}, ValueError, ["timescales", "'t2t'", "tensor2tensor"]),
    ],
)
def test_sinusoidal_variant_rejects_bad_options(kwargs, error, fragments):
    with pytest.raises(error) as info:
        posenc.sinusoidal_variant(5, 7, **kwargs)
    for fragment in fragments:
        assert fragment in str(info.value)
