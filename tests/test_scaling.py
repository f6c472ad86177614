"""Context-extension methods: published numbers, limiting cases, and the transformers reference."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import posenc
from posenc.scaling import SCALING_METHODS

transformers = pytest.importorskip("transformers")
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding  # noqa: E402

from reference import llama_rope_config  # noqa: E402


def reference(method, head_dim, base, factor, original, seq_len=None, **params):
    """transformers' (inv_freq, attention_factor) for the same inputs."""
    config = llama_rope_config(method, head_dim, base, factor, original, **params)
    if method == "default":
        inv, af = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    else:
        inv, af = ROPE_INIT_FUNCTIONS[method](config, seq_len=seq_len)
    return inv.double().numpy(), float(af)


def assert_matches_reference(ours, ref, factor):
    inv, af = ours
    ref_inv, ref_af = ref
    # transformers computes in float32: relative error ~1e-7, a few times more for large factors
    np.testing.assert_allclose(inv, ref_inv, rtol=1e-6 * max(1.0, factor), atol=0)
    assert af == pytest.approx(ref_af, rel=1e-12)


HEAD_DIMS = [16, 64, 96, 128]
BASES = [10000.0, 500000.0, 1e6]
FACTORS = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("factor", FACTORS)
@pytest.mark.parametrize("method", ["default", "linear", "yarn", "llama3"])
def test_static_methods_match_transformers(method, head_dim, base, factor):
    original = 8192 if method == "llama3" else 2048
    ours = posenc.scaled_inv_freq(method, head_dim, base, factor, original)
    # posenc's documented defaults, spelled out for transformers (which requires them for llama3)
    params = {"low_freq_factor": 1.0, "high_freq_factor": 4.0} if method == "llama3" else {}
    assert_matches_reference(ours, reference(method, head_dim, base, factor, original, **params), factor)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("factor", [1.0, 2.0, 8.0])
@pytest.mark.parametrize("seq_len", [1, 1024, 2048, 3000, 8192, 100000])
def test_dynamic_matches_transformers(head_dim, base, factor, seq_len):
    ours = posenc.scaled_inv_freq("dynamic", head_dim, base, factor, 2048, seq_len=seq_len)
    ref = reference("dynamic", head_dim, base, factor, 2048, seq_len=seq_len)
    assert_matches_reference(ours, ref, factor * seq_len / 2048)


@pytest.mark.parametrize(
    "params",
    [
        {"beta_fast": 16, "beta_slow": 2},
        {"beta_fast": 64.0, "beta_slow": 0.5},
        {"truncate": False},
        {"attention_factor": 1.5},
        {"mscale": 0.707, "mscale_all_dim": 0.707},
        {"mscale": 1.0, "mscale_all_dim": 0.0},
    ],
)
@pytest.mark.parametrize("original", [64, 2048, 4096, 32768])
def test_yarn_parameters_match_transformers(params, original):
    ours = posenc.scaled_inv_freq("yarn", 128, 10000.0, 16.0, original, **params)
    assert_matches_reference(ours, reference("yarn", 128, 10000.0, 16.0, original, **params), 16.0)


@pytest.mark.parametrize("params", [{"low_freq_factor": 2.0, "high_freq_factor": 8.0}, {"low_freq_factor": 0.5}])
def test_llama3_parameters_match_transformers(params):
    full = {"low_freq_factor": 1.0, "high_freq_factor": 4.0, **params}
    ours = posenc.scaled_inv_freq("llama3", 128, 500000.0, 8.0, 8192, **params)
    assert_matches_reference(ours, reference("llama3", 128, 500000.0, 8.0, 8192, **full), 8.0)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("factor", FACTORS)
def test_ntk_equals_transformers_dynamic_at_unit_factor(head_dim, factor):
    # transformers has no static NTK; its dynamic method with factor 1 at length s * L is exactly it
    ours = posenc.scaled_inv_freq("ntk", head_dim, 10000.0, factor)
    ref = reference("dynamic", head_dim, 10000.0, 1.0, 2048, seq_len=int(2048 * factor))
    assert_matches_reference(ours, ref, factor)


# --- published numbers and limiting cases --------------------------------------------------------


def test_ntk_base_published_values():
    # 10000 * 2 ** (128/126) and 10000 * 8 ** (128/126)
    assert posenc.ntk_scaled_base(10000.0, 2.0, 128) == pytest.approx(20221.26, abs=0.01)
    assert posenc.ntk_scaled_base(10000.0, 8.0, 128) == pytest.approx(82684.62, abs=0.01)


def test_ntk_leaves_the_fastest_pair_and_interpolates_the_slowest_exactly():
    theta = posenc.rope_inv_freq(128)
    inv, _ = posenc.scaled_inv_freq("ntk", 128, 10000.0, 8.0)
    assert inv[0] == theta[0]
    assert inv[-1] == pytest.approx(theta[-1] / 8.0, rel=1e-12)
    assert np.all(np.diff(theta / inv) > 0)  # the scale grows from 1 to s across pairs


def test_yarn_attention_factor_published_value():
    assert posenc.yarn_attention_factor(8.0) == pytest.approx(1.2079, abs=1e-4)
    assert posenc.yarn_attention_factor(8.0) == pytest.approx(0.1 * math.log(8) + 1)
    assert posenc.yarn_attention_factor(1.0) == 1.0
    _, af = posenc.scaled_inv_freq("yarn", 64, factor=8.0)
    assert af == pytest.approx(1.2079, abs=1e-4)


def test_linear_divides_every_speed_by_the_factor():
    inv, af = posenc.scaled_inv_freq("linear", 64, factor=4.0)
    np.testing.assert_allclose(inv, posenc.rope_inv_freq(64) / 4.0)
    assert af == 1.0


@pytest.mark.parametrize("method", list(SCALING_METHODS))
def test_factor_one_changes_nothing(method):
    params = {"seq_len": 100} if method == "dynamic" else {}
    inv, af = posenc.scaled_inv_freq(method, 64, 10000.0, 1.0, 2048, **params)
    np.testing.assert_allclose(inv, posenc.rope_inv_freq(64), rtol=1e-12)
    assert af == 1.0


def test_dynamic_is_unscaled_within_the_trained_length_and_static_ntk_at_unit_factor():
    theta = posenc.rope_inv_freq(64)
    for seq_len in (1, 2048):
        np.testing.assert_allclose(posenc.scaled_inv_freq("dynamic", 64, factor=4.0, seq_len=seq_len)[0], theta)
    # factor 1 at length 3L: static NTK with factor 3
    np.testing.assert_allclose(
        posenc.scaled_inv_freq("dynamic", 64, factor=1.0, seq_len=3 * 2048)[0],
        posenc.scaled_inv_freq("ntk", 64, factor=3.0)[0],
    )
    # transformers' rule: effective factor s * n / L - (s - 1), i.e. s + 1 at n = 2L
    np.testing.assert_allclose(
        posenc.scaled_inv_freq("dynamic", 64, factor=4.0, seq_len=4096)[0],
        posenc.scaled_inv_freq("ntk", 64, factor=5.0)[0],
    )


def test_yarn_keeps_fast_pairs_interpolates_slow_pairs_and_blends_between():
    d, base, original, factor = 128, 10000.0, 4096, 16.0
    theta = posenc.rope_inv_freq(d, base)
    inv, _ = posenc.scaled_inv_freq("yarn", d, base, factor, original)
    turns = posenc.rotations_within_context(theta, original)
    fast, slow = turns > 32 + 1e-9, turns < 1 - 1e-9
    # allow one pair of slack on each side for the floor/ceil of the correction range
    assert np.allclose(inv[fast][:-1], theta[fast][:-1])
    assert np.allclose(inv[slow][1:], theta[slow][1:] / factor)
    scale = theta / inv
    assert np.all(np.diff(scale) >= -1e-12) and scale[0] == 1.0 and scale[-1] == pytest.approx(factor)


def test_yarn_ramp_is_zero_then_linear_then_one():
    ramp = posenc.yarn_ramp(128, 10000.0, 4096, 32, 1, truncate=False)
    low = posenc.yarn_correction_dim(32, 128, 10000.0, 4096)
    high = posenc.yarn_correction_dim(1, 128, 10000.0, 4096)
    i = np.arange(64)
    np.testing.assert_allclose(ramp, np.clip((i - low) / (high - low), 0, 1))
    # the correction dim is where a pair completes exactly that many turns within L
    wavelength_at_low = 2 * math.pi * 10000.0 ** (2 * low / 128)
    assert 4096 / wavelength_at_low == pytest.approx(32)


def test_yarn_short_context_interpolates_everything_with_default_betas():
    # at L = 64 even pair 0 turns only 64 / 2pi ~ 10 times, fewer than beta_fast = 32
    ramp = posenc.yarn_ramp(16, 10000.0, 64)
    assert ramp[0] < 1 and posenc.yarn_correction_dim(32, 16, 10000.0, 64) < 0


def test_llama3_three_bands():
    d, base, length, factor = 128, 500000.0, 8192, 8.0
    theta = posenc.rope_inv_freq(d, base)
    inv, _ = posenc.scaled_inv_freq("llama3", d, base, factor, length)
    wavelength = posenc.wavelengths(theta)
    short, long = wavelength < length / 4, wavelength > length / 1
    np.testing.assert_array_equal(inv[short], theta[short])
    np.testing.assert_allclose(inv[long], theta[long] / factor)
    medium = ~short & ~long
    assert medium.any()
    assert np.all((inv[medium] <= theta[medium]) & (inv[medium] >= theta[medium] / factor))


@given(
    method=st.sampled_from(["linear", "ntk", "yarn", "llama3"]),
    half_dim=st.integers(2, 80),
    base=st.floats(100.0, 1e7),
    factor=st.floats(1.0, 64.0),
)
def test_scaling_never_speeds_up_a_pair_and_never_slows_it_more_than_the_factor(method, half_dim, base, factor):
    theta = posenc.rope_inv_freq(2 * half_dim, base)
    inv, af = posenc.scaled_inv_freq(method, 2 * half_dim, base, factor, 4096)
    scale = theta / inv
    assert np.all(scale >= 1 - 1e-12) and np.all(scale <= factor * (1 + 1e-12))
    assert af >= 1.0


def test_registry_holds_the_contract_methods_and_returns_float64():
    assert set(SCALING_METHODS) == {"default", "linear", "ntk", "dynamic", "yarn", "llama3"}
    inv, af = posenc.scaled_inv_freq("yarn", 64, factor=4.0)
    assert inv.dtype == np.float64 and inv.shape == (32,) and isinstance(af, float)


def test_a_new_method_is_one_function_and_one_entry():
    from posenc.scaling import scaling_method

    @scaling_method("half_speed")
    def half_speed(head_dim, base, factor, original_max_position_embeddings):
        return posenc.rope_inv_freq(head_dim, base) / 2, 1.0

    SCALING_METHODS["half_speed"] = half_speed
    try:
        inv, _ = posenc.scaled_inv_freq("half_speed", 8)
        np.testing.assert_allclose(inv, posenc.rope_inv_freq(8) / 2)
    finally:
        del SCALING_METHODS["half_speed"]


def test_dynamic_ntk_factor_follows_the_transformers_rule():
    assert posenc.dynamic_ntk_factor(8.0, 100, 2048) == 1.0
    assert posenc.dynamic_ntk_factor(8.0, 4096, 2048) == 9.0  # s + 1 at n = 2L
    assert posenc.dynamic_ntk_factor(1.0, 3 * 2048, 2048) == 3.0  # n / L only when s = 1
    inv, _ = posenc.scaled_inv_freq("dynamic", 64, factor=8.0, seq_len=4096)
    np.testing.assert_allclose(inv, posenc.scaled_inv_freq("ntk", 64, factor=9.0)[0])
