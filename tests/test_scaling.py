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


def reference(method, head_dim, base, factor, original, seq_len=None, max_position_embeddings=None, **params):
    """transformers' (inv_freq, attention_factor) for the same inputs."""
    config = llama_rope_config(method, head_dim, base, factor, original, max_position_embeddings, **params)
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
        # DeepSeek-style: each of mscale / mscale_all_dim alone, zeros, unequal pairs, and an override
        {"mscale": 0.707},
        {"mscale_all_dim": 0.707},
        {"mscale": 0.0, "mscale_all_dim": 1.0},
        {"mscale": 1.0, "mscale_all_dim": 0.707},
        {"mscale": 0.5, "mscale_all_dim": 2.0},
        {"mscale": 1.0, "mscale_all_dim": 0.707, "attention_factor": 1.25},
        {"mscale": 1.0, "attention_factor": 0.8},
        # beta_fast == beta_slow (refused before), and nearly equal
        {"beta_fast": 4.0, "beta_slow": 4.0},
        {"beta_fast": 4.0, "beta_slow": 4.0, "truncate": False},
        {"beta_fast": 4.0 + 1e-9, "beta_slow": 4.0},
        {"beta_fast": 4.0 + 1e-9, "beta_slow": 4.0, "truncate": False},
        {"beta_fast": 1.0, "beta_slow": 1.0, "truncate": False},
    ],
)
@pytest.mark.parametrize("original", [64, 2048, 4096, 32768])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_yarn_parameters_match_transformers(params, original, head_dim):
    ours = posenc.scaled_inv_freq("yarn", head_dim, 10000.0, 16.0, original, **params)
    assert_matches_reference(ours, reference("yarn", head_dim, 10000.0, 16.0, original, **params), 16.0)


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


def _call_with_defaults(method, head_dim=64, factor=4.0):
    spec = SCALING_METHODS[method].spec
    params = {"seq_len": 4096} if spec.seq_len_required else {}
    return posenc.scaled_inv_freq(method, head_dim, 10000.0, factor, 2048, **params)


@pytest.mark.parametrize("method", list(SCALING_METHODS))
def test_every_registered_method_is_documented_declared_and_returns_float64(method):
    """What holds for each method in the registry, however many there are (no list of names to keep up)."""
    import pathlib

    from posenc.scaling import scaling_spec

    function = SCALING_METHODS[method]
    spec = function.spec
    assert spec.name == method and spec.title and function.__doc__ and function.__doc__.strip()
    api = (pathlib.Path(__file__).resolve().parents[1] / "api.md").read_text()
    assert f".. autofunction:: posenc.scaling.{function.__name__}\n" in api, f"api.md does not document {method}"
    for name in spec.config_names:  # a config's rope_type finds it by its name and by each alias
        assert scaling_spec(name) is spec
    inv, af = _call_with_defaults(method)
    assert inv.dtype == np.float64 and inv.shape == (32,) and isinstance(af, float)


def test_every_config_name_belongs_to_one_method():
    names = [name for function in SCALING_METHODS.values() for name in function.spec.config_names]
    assert len(names) == len(set(names))
    with pytest.raises(ValueError, match=r"rope_scaling\['rope_type'\] must be one of \[.*'su'.*\], got 'nope'"):
        from posenc.scaling import scaling_spec

        scaling_spec("nope", "rope_scaling['rope_type']")


# --- bands: which pairs a method keeps, blends or interpolates ---------------------------------------


def test_llama3_bands_of_a_small_head_by_hand():
    # d = 8, b = 100: theta_i = 100 ** (-i/4) = 1, 0.316, 0.1, 0.0316; wavelengths 2 pi / theta =
    # 6.28, 19.9, 62.8, 199. With L = 64, high_freq_factor 4, low_freq_factor 1: kept below
    # 64 / 4 = 16 (pair 0), divided by s above 64 / 1 (pair 3), blended between (pairs 1 and 2)
    bands = posenc.scaling.scaling_bands("llama3", 8, 100.0, 8.0, 64, low_freq_factor=1.0, high_freq_factor=4.0)
    assert {k: v.tolist() for k, v in bands.items()} == {"keep": [0], "blend": [1, 2], "interpolate": [3]}


@pytest.mark.parametrize("truncate", [True, False])
@pytest.mark.parametrize("head_dim,base,original", [(64, 150000.0, 4096), (128, 10000.0, 4096), (128, 1e6, 32768)])
def test_yarn_bands_are_where_the_ramp_is_zero_one_and_between(head_dim, base, original, truncate):
    # YaRN paper, section 3.2: low = d ln(L / (2 pi beta_fast)) / (2 ln b), high likewise with beta_slow;
    # truncate floors low and ceils high. Kept up to low, interpolated from high, blended between
    low = head_dim * math.log(original / (2 * math.pi * 32)) / (2 * math.log(base))
    high = head_dim * math.log(original / (2 * math.pi * 1)) / (2 * math.log(base))
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    i = np.arange(head_dim // 2)
    bands = posenc.scaling.scaling_bands("yarn", head_dim, base, 16.0, original, truncate=truncate)
    np.testing.assert_array_equal(bands["keep"], i[i <= low])
    np.testing.assert_array_equal(bands["blend"], i[(i > low) & (i < high)])
    np.testing.assert_array_equal(bands["interpolate"], i[i >= high])


def test_linear_interpolates_every_pair_ntk_keeps_only_the_fastest_and_factor_one_keeps_all():
    from posenc.scaling import scaling_bands

    every = list(range(32))
    assert scaling_bands("linear", 64, factor=4.0)["interpolate"].tolist() == every
    # NTK-aware: b' = b s ** (d / (d - 2)) leaves pair 0 (b' ** 0 = 1) and slows the last by exactly s
    ntk = scaling_bands("ntk", 64, factor=4.0)
    assert ntk["keep"].tolist() == [0] and ntk["interpolate"].tolist() == [31] and ntk["blend"].tolist() == every[1:31]
    for method in ("linear", "yarn", "llama3"):
        bands = scaling_bands(method, 64, 10000.0, 1.0, 2048)
        assert bands["keep"].tolist() == every and bands["blend"].size == bands["interpolate"].size == 0


@pytest.mark.parametrize("method", [m for m, f in SCALING_METHODS.items() if f.spec.bands])
@pytest.mark.parametrize("factor", [1.0, 2.0, 40.0])
def test_the_bands_of_a_banded_method_hold_every_pair_once(method, factor):
    from posenc.scaling import scaling_bands

    bands = scaling_bands(method, 96, 500000.0, factor, 8192)
    assert list(bands) == ["keep", "blend", "interpolate"]
    assert sorted(np.concatenate(list(bands.values())).tolist()) == list(range(48))


def test_a_method_whose_speeds_leave_the_band_range_has_no_bands():
    from posenc.scaling import scaling_bands

    # LongRoPE divides pair 1 by 0.5 (faster than unscaled); p-RoPE stops pairs (speed 0)
    with pytest.raises(ValueError, match=r"'longrope' does not work in bands: pair 1 has speed"):
        scaling_bands("longrope", 8, 100.0, 4.0, 64, short_factor=[1.0, 0.5, 2.0, 4.0])
    with pytest.raises(ValueError, match=r"pair 2 has speed 0, outside \[theta_2 / s, theta_2\]"):
        scaling_bands("proportional", 8, 100.0, 1.0, partial_rotary_factor=0.5)


@pytest.fixture
def registered():
    """Methods registered by a test are removed from the registry afterwards."""
    before = dict(SCALING_METHODS)
    yield
    for name in set(SCALING_METHODS) - set(before):
        del SCALING_METHODS[name]


def test_a_new_method_is_one_function_used_everywhere(registered):
    """The decorator is the registration: scaled_inv_freq, from_config (both forms) and posenc.nn use it."""
    import torch

    import posenc.nn
    from posenc.scaling import scaling_method

    @scaling_method("half_then_more")
    def half_then_more(head_dim, base, factor, original_max_position_embeddings, *, extra: float = 1.0):
        # slower by factor * extra, and by L / 1000 (so the test sees which L arrived)
        slowdown = factor * extra * original_max_position_embeddings / 1000
        return posenc.rope_inv_freq(head_dim, base) / slowdown, 1.5

    expected = posenc.rope_inv_freq(16, 500.0) / (4.0 * 3.0 * 8192 / 1000)
    inv, af = posenc.scaled_inv_freq("half_then_more", 16, 500.0, 4.0, 8192, extra=3.0)
    np.testing.assert_allclose(inv, expected, rtol=1e-15)
    assert af == 1.5

    common = {"num_hidden_layers": 2, "head_dim": 16, "max_position_embeddings": 32768}
    legacy = {
        **common,
        "rope_theta": 500.0,
        "original_max_position_embeddings": 8192,
        "rope_scaling": {"rope_type": "half_then_more", "factor": 4.0, "extra": 3.0},
    }
    newer = {
        **common,
        "rope_parameters": {
            "rope_type": "half_then_more",
            "rope_theta": 500.0,
            "factor": 4.0,
            "extra": 3.0,
            "original_max_position_embeddings": 8192,
        },
    }
    for config in (legacy, newer):
        layers = posenc.from_config(config)
        assert [layer.rope_type for layer in layers] == ["half_then_more"] * 2
        for layer in layers:
            np.testing.assert_allclose(layer.inv_freq, expected, rtol=1e-15)
            assert layer.attention_factor == 1.5
    # a factor the method requires is asked for by name
    with pytest.raises(ValueError, match=r"half_then_more.*\['factor'\]"):
        posenc.from_config({**newer, "rope_parameters": {"rope_type": "half_then_more", "rope_theta": 500.0}})
    with pytest.raises(TypeError, match=r"\['extra'\]"):
        posenc.from_config({**legacy, "rope_scaling": {"rope_type": "half_then_more", "factor": 4.0, "extra": "3"}})

    rotary = posenc.nn.RotaryEmbedding(
        16, 500.0, scaling="half_then_more", factor=4.0, original_max_position_embeddings=8192, extra=3.0
    )
    q = torch.randn(5, 16, dtype=torch.float64)
    q_rot, _ = rotary(q, q)
    np.testing.assert_allclose(
        q_rot.numpy(), posenc.apply_rope(q.numpy(), np.arange(5), expected, attention_factor=1.5), atol=1e-14
    )
    assert "half_then_more" in [row[0] for row in _methods_table_rows()]


def _methods_table_rows():
    from posenc.book.methods_table import scaling_method_rows

    return scaling_method_rows()


def test_a_method_that_reads_the_current_length_declares_it_by_its_signature(registered):
    import posenc.nn
    from posenc.scaling import scaling_method

    @scaling_method("by_length", length="max")
    def by_length(head_dim, base, factor, original_max_position_embeddings, *, seq_len: int):
        return posenc.rope_inv_freq(head_dim, base) * original_max_position_embeddings / max(
            seq_len, original_max_position_embeddings
        ), 1.0

    spec = SCALING_METHODS["by_length"].spec
    assert spec.reads_seq_len and spec.seq_len_required and spec.length == "max"
    config = {
        "num_hidden_layers": 1,
        "head_dim": 8,
        "max_position_embeddings": 100,
        "rope_parameters": {"rope_type": "by_length", "rope_theta": 10.0, "factor": 1.0},
    }
    (at_l,) = posenc.from_config(config)  # seq_len defaults to L, as transformers starts
    np.testing.assert_allclose(at_l.inv_freq, posenc.rope_inv_freq(8, 10.0), rtol=1e-15)
    (longer,) = posenc.from_config(config, seq_len=400)
    np.testing.assert_allclose(longer.inv_freq, posenc.rope_inv_freq(8, 10.0) / 4, rtol=1e-15)
    rotary = posenc.nn.RotaryEmbedding(8, 10.0, scaling="by_length", original_max_position_embeddings=100)
    assert rotary._dynamic


def test_registration_refuses_a_second_method_of_the_same_name_and_bad_declarations(registered):
    from posenc.scaling import scaling_method

    def plain(head_dim, base, factor, original_max_position_embeddings):
        return posenc.rope_inv_freq(head_dim, base), 1.0

    with pytest.raises(ValueError, match="'yarn' is already registered"):
        scaling_method("yarn")(plain)
    with pytest.raises(ValueError, match="length must be one of"):
        scaling_method("x", length="min")
    with pytest.raises(ValueError, match="factor must be one of"):
        scaling_method("x", factor="sometimes")
    with pytest.raises(ValueError, match="declares 'beta'"):
        scaling_method("x", config_required=("beta",))(plain)
    with pytest.raises(ValueError, match=r"'su' is already registered \(an alias of 'longrope'\)"):
        scaling_method("x", config_aliases=("su",))(plain)
    with pytest.raises(ValueError, match=r"shows 'beta_fast', which is not one of .* it reads from a config: none"):
        scaling_method("x", shown=("beta_fast",))(plain)
    with pytest.raises(ValueError, match="declares a cache_warning, but its speeds do not follow the length"):
        scaling_method("x", cache_warning="stale")(plain)
    with pytest.raises(ValueError, match=r"cache_warning may hold only the field \{L\}"):
        scaling_method("x", cache_warning="up to {length}")
    with pytest.raises(ValueError, match="title must be a non-empty string or None, got ''"):
        scaling_method("x", title="")
    assert "x" not in SCALING_METHODS


def test_what_explain_says_defaults_to_the_name_and_the_length_rule(registered):
    from posenc.scaling import scaling_method

    @scaling_method("plain_method")
    def plain(head_dim, base, factor, original_max_position_embeddings):
        return posenc.rope_inv_freq(head_dim, base), 1.0

    @scaling_method("follows_length", length="max")
    def follows(head_dim, base, factor, original_max_position_embeddings, *, seq_len: int):
        return posenc.rope_inv_freq(head_dim, base), 1.0

    spec = plain.spec
    assert (spec.title, spec.note, spec.bands, spec.shown, spec.cache_warning) == (
        "plain_method",
        None,
        False,
        (),
        None,
    )
    # speeds that follow the length get a note and a cache warning without declaring them
    assert (
        follows.spec.note == "speeds change with the length" and "cache of rotated keys" in follows.spec.cache_warning
    )


# a full set of rope parameters per transformers rope type, for probing what its config validation requires
_FULL_PARAMETERS = {
    "linear": {"factor": 2.0},
    "dynamic": {"factor": 2.0},
    "yarn": {"factor": 4.0, "original_max_position_embeddings": 64, "beta_fast": 32.0, "beta_slow": 1.0},
    "llama3": {"factor": 4.0, "original_max_position_embeddings": 64, "low_freq_factor": 1.0, "high_freq_factor": 4.0},
    "longrope": {
        "factor": 4.0,
        "original_max_position_embeddings": 64,
        "short_factor": [1.0] * 4,
        "long_factor": [2.0] * 4,
    },
    "proportional": {"factor": 1.0, "partial_rotary_factor": 0.5},
}


def _transformers_requires(method: str, key: str) -> bool:
    """Does transformers refuse a config of ``method`` whose rope parameters lack ``key``?"""
    from transformers import LlamaConfig

    rope = {"rope_type": method, "rope_theta": 100.0, **_FULL_PARAMETERS[method]}
    del rope[key]
    try:
        shape = {"hidden_size": 16, "num_attention_heads": 2, "head_dim": 8, "max_position_embeddings": 256}
        LlamaConfig(**shape, rope_parameters=rope)
    except KeyError:
        return True
    return False


@pytest.mark.parametrize("method", sorted(_FULL_PARAMETERS))
def test_the_declared_config_fields_are_those_transformers_requires(method):
    """A parameter posenc's declaration requires is one transformers' config refuses to do without, and back."""
    assert set(_FULL_PARAMETERS) == set(ROPE_INIT_FUNCTIONS)
    spec = SCALING_METHODS[method].spec
    for key in _FULL_PARAMETERS[method]:
        if key == "factor":
            declared = spec.factor == "required"
            if spec.factor == "derived":  # posenc derives it from the lengths, as transformers' init function can
                continue
        elif key == "original_max_position_embeddings":  # posenc falls back to max_position_embeddings
            continue
        elif key == "partial_rotary_factor":
            declared = False
            assert spec.partial_rotary
        else:
            declared = any(p.name == key and p.required for p in spec.parameters)
            assert any(p.name == key for p in spec.parameters), f"{method}: posenc does not read {key}"
        assert declared == _transformers_requires(method, key), (method, key)


@pytest.mark.parametrize("method", sorted(_FULL_PARAMETERS))
def test_a_derived_factor_is_where_transformers_derives_it_from_the_lengths(method):
    """factor="derived" (explain then warns when s != max_position_embeddings / L) exactly where transformers'
    init function, given no factor, computes with max_position_embeddings / original_max_position_embeddings."""
    params = {
        k: v for k, v in _FULL_PARAMETERS[method].items() if k not in ("factor", "original_max_position_embeddings")
    }
    config = llama_rope_config(method, 8, 100.0, 4.0, 64, max_position_embeddings=256, **params)
    config.rope_parameters["factor"] = None  # past the config's validation, which asks for it even for YaRN
    try:
        ref, _ = ROPE_INIT_FUNCTIONS[method](config)
    except TypeError:  # the init function computes with the factor itself
        derived = False
    else:
        ours, _ = posenc.scaled_inv_freq(method, 8, 100.0, 256 / 64, 64, **params)
        derived = bool(np.allclose(ours, ref.double().numpy(), rtol=1e-6, atol=0))
    assert derived == (SCALING_METHODS[method].spec.factor == "derived")


def test_dynamic_ntk_factor_follows_the_transformers_rule():
    assert posenc.dynamic_ntk_factor(8.0, 100, 2048) == 1.0
    assert posenc.dynamic_ntk_factor(8.0, 4096, 2048) == 9.0  # s + 1 at n = 2L
    assert posenc.dynamic_ntk_factor(1.0, 3 * 2048, 2048) == 3.0  # n / L only when s = 1
    inv, _ = posenc.scaled_inv_freq("dynamic", 64, factor=8.0, seq_len=4096)
    np.testing.assert_allclose(inv, posenc.scaled_inv_freq("ntk", 64, factor=9.0)[0])


# --- dynamic NTK with a KV cache --------------------------------------------------------------------


def test_dynamic_ntk_cached_keys_by_hand():
    # d = 4, b = 100, L = 2, s = 2: key 3 is rotated at length 4, where the effective factor is
    # 2 * 4 / 2 - 1 = 3 and the base 100 * 3 ** (4 / 2) = 900, so pair 1 turns 900 ** -0.5 = 1/30 per
    # token: angle 3/30 = 0.1 (pair 0 always 3). The current length is N = 5: factor 4, base 1600,
    # pair 1 speed 1/40; key 3 is ahead by 3 * (1/30 - 1/40) = 0.025 rad, key 2 (cached at length 3,
    # factor 2, base 400, speed 1/20) by 2 * (1/20 - 1/40) = 0.05, key 1 (cached at length 2 = L, the
    # original speed 1/10) by 1/10 - 1/40 = 0.075, key 0 (position 0) and key 4 (cached now) by 0.
    keys = np.zeros((5, 4))
    keys[:, 1] = 1.0  # "half" layout: pair 1 is dimensions (1, 3); the point (1, 0) at angle 0
    cached, error = posenc.dynamic_ntk_cached_keys(keys, base=100.0, factor=2.0, original_max_position_embeddings=2)
    assert cached[3, 1] == pytest.approx(math.cos(0.1)) and cached[3, 3] == pytest.approx(math.sin(0.1))
    np.testing.assert_allclose(error[:, 1], [0.0, 0.075, 0.05, 0.025, 0.0], atol=1e-15)
    np.testing.assert_array_equal(error[:, 0], 0.0)  # pair 0 turns 1 rad per token at every base


def test_dynamic_ntk_cached_keys_match_a_transformers_decode_loop():
    # transformers' LlamaRotaryEmbedding with rope_type "dynamic", called as generate() does: one pass
    # over a prompt, then one position per step; keys rotated with that step's cos/sin, then cached.
    import torch
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    head_dim, base, factor, trained, prompt, total = 8, 10000.0, 4.0, 16, 12, 48
    rotary = LlamaRotaryEmbedding(llama_rope_config("dynamic", head_dim, base, factor, trained))
    keys = np.random.default_rng(0).normal(size=(total, head_dim))
    steps = [list(range(prompt))] + [[p] for p in range(prompt, total)]
    cache = []
    for positions in steps:
        k = torch.tensor(keys[positions], dtype=torch.float32)[None, None]  # (batch, heads, seq, d)
        cos, sin = rotary(k, torch.tensor([positions]))
        _, k_rot = apply_rotary_pos_emb(k, k, cos, sin)
        cache.append(k_rot[0, 0].double().numpy())
    ours, _ = posenc.dynamic_ntk_cached_keys(keys, base, factor, trained, prefill_len=prompt)
    np.testing.assert_allclose(ours, np.concatenate(cache), atol=2e-5)  # transformers: float32


@given(
    half_dim=st.integers(2, 16),
    factor=st.floats(1.0, 16.0),
    trained=st.integers(1, 64),
    extra=st.integers(0, 64),
    layout=st.sampled_from(["half", "interleaved"]),
)
def test_dynamic_ntk_cached_keys_are_fresh_keys_turned_by_the_error(half_dim, factor, trained, extra, layout):
    head_dim, n_keys = 2 * half_dim, trained + extra
    keys = np.random.default_rng(half_dim + n_keys).normal(size=(2, n_keys, head_dim))
    cached, error = posenc.dynamic_ntk_cached_keys(keys, 500.0, factor, trained, layout=layout)
    now, _ = posenc.scaled_inv_freq("dynamic", head_dim, 500.0, factor, trained, seq_len=n_keys)
    fresh = posenc.apply_rope(keys, np.arange(n_keys), now, layout)
    # the error is the angle from the fresh pair to the cached pair, in (-pi, pi]
    assert np.all(np.abs(error) <= math.pi)
    if layout == "half":
        pairs = (np.arange(half_dim), np.arange(half_dim) + half_dim)
    else:
        pairs = (np.arange(0, head_dim, 2), np.arange(1, head_dim, 2))
    z_fresh = fresh[..., pairs[0]] + 1j * fresh[..., pairs[1]]
    z_cached = cached[..., pairs[0]] + 1j * cached[..., pairs[1]]
    np.testing.assert_allclose(z_cached, z_fresh * np.exp(1j * error), atol=1e-9)
    # the last key is rotated at the current length, so it is always exact
    np.testing.assert_array_equal(error[-1], 0.0)


def test_dynamic_ntk_cached_keys_agree_within_the_trained_length():
    keys = np.random.default_rng(1).normal(size=(64, 16))
    cached, error = posenc.dynamic_ntk_cached_keys(keys, 10000.0, 8.0, 64)
    np.testing.assert_array_equal(error, 0.0)
    np.testing.assert_allclose(cached, posenc.apply_rope(keys, np.arange(64), posenc.rope_inv_freq(16)))
    # a prompt rotated in one pass at its own length: every prompt key has the same speeds
    _, error = posenc.dynamic_ntk_cached_keys(keys, 10000.0, 8.0, 16, prefill_len=64)
    np.testing.assert_array_equal(error, 0.0)


# --- every rope_type of transformers ------------------------------------------------------------


def test_every_transformers_rope_type_is_a_posenc_method():
    assert set(ROPE_INIT_FUNCTIONS) <= set(SCALING_METHODS)


# --- LongRoPE (Phi-3) ------------------------------------------------------------------------------


def random_pair_factors(head_dim, seed):
    """Seeded factor lists shaped like Phi-3's: short near 1, long growing from 1 to ~factor across pairs."""
    rng = np.random.default_rng(seed)
    short = 1.0 + 0.1 * rng.random(head_dim // 2)
    long = np.sort(1.0 + 40.0 * rng.random(head_dim // 2))
    return [float(v) for v in short], [float(v) for v in long]


@pytest.mark.parametrize("head_dim", [16, 64, 96, 128])
@pytest.mark.parametrize("seq_len", [None, 1, 4095, 4096, 4097, 131072])
@pytest.mark.parametrize(
    "how",
    ["factor", "derived", "attention_factor", "base"],
)
def test_longrope_matches_transformers(head_dim, seq_len, how):
    short, long = random_pair_factors(head_dim, seed=head_dim)
    original, base = 4096, 10000.0
    factors = {"short_factor": short, "long_factor": long}
    if how == "factor":  # factor given in the config
        ours = posenc.scaled_inv_freq("longrope", head_dim, base, 32.0, original, seq_len=seq_len, **factors)
        ref = reference("longrope", head_dim, base, 32.0, original, seq_len=seq_len, **factors)
    elif how == "derived":  # no factor: transformers derives it from max_position_embeddings (Phi-3's configs)
        ours = posenc.scaled_inv_freq(
            "longrope", head_dim, base, 1.0, original, seq_len=seq_len, max_position_embeddings=131072, **factors
        )
        ref = reference("longrope", head_dim, base, None, original, seq_len, max_position_embeddings=131072, **factors)
    elif how == "attention_factor":
        ours = posenc.scaled_inv_freq(
            "longrope", head_dim, base, 8.0, original, seq_len=seq_len, attention_factor=1.3, **factors
        )
        ref = reference("longrope", head_dim, base, 8.0, original, seq_len=seq_len, attention_factor=1.3, **factors)
    else:  # another base and trained length
        ours = posenc.scaled_inv_freq("longrope", head_dim, 1e6, 16.0, 8192, seq_len=seq_len, **factors)
        ref = reference("longrope", head_dim, 1e6, 16.0, 8192, seq_len=seq_len, **factors)
    assert_matches_reference(ours, ref, 1.0)


def test_longrope_picks_short_up_to_the_trained_length_and_long_past_it():
    short, long = random_pair_factors(32, seed=3)
    theta = posenc.rope_inv_freq(32)
    for seq_len, chosen in [(None, short), (0, short), (4096, short), (4097, long), (10**6, long)]:
        inv, _ = posenc.scaled_inv_freq(
            "longrope", 32, 10000.0, 32.0, 4096, short_factor=short, long_factor=long, seq_len=seq_len
        )
        np.testing.assert_allclose(inv, theta / np.array(chosen), rtol=1e-15)


def test_longrope_attention_factor_by_hand():
    # ln 32 / ln 4096 = 5 ln 2 / (12 ln 2) = 5/12
    assert posenc.longrope_attention_factor(32.0, 4096) == pytest.approx(math.sqrt(17 / 12), rel=1e-15)
    assert posenc.longrope_attention_factor(1.0, 4096) == 1.0
    assert posenc.longrope_attention_factor(0.5, 4096) == 1.0  # max_position_embeddings < L
    _, af = posenc.scaled_inv_freq("longrope", 8, 10000.0, 1.0, 4096, max_position_embeddings=131072)
    assert af == pytest.approx(math.sqrt(17 / 12), rel=1e-15)  # s = 131072 / 4096 = 32


def test_longrope_switches_where_transformers_rotary_module_switches():
    # LlamaRotaryEmbedding with rope_type "longrope" uses the long set once max(position_ids) + 1 > L
    import torch

    head_dim, original = 16, 64
    short, long = random_pair_factors(head_dim, seed=7)
    config = llama_rope_config("longrope", head_dim, 10000.0, 8.0, original, short_factor=short, long_factor=long)
    rotary = LlamaRotaryEmbedding(config)
    x = torch.zeros(1, 1, 1, head_dim)
    for last in (original - 1, original, 3 * original):
        positions = np.arange(last + 1)
        cos, _ = rotary(x, torch.tensor(positions)[None])
        inv, af = posenc.scaled_inv_freq(
            "longrope", head_dim, 10000.0, 8.0, original, short_factor=short, long_factor=long, seq_len=last + 1
        )
        ours = np.cos(np.outer(positions, inv)) * af
        np.testing.assert_allclose(cos[0, :, : head_dim // 2].double().numpy(), ours, atol=2e-5 * (last + 1))


# --- proportional -----------------------------------------------------------------------------------


@pytest.mark.parametrize("head_dim", [16, 64, 96, 128])
@pytest.mark.parametrize("partial", [0.0, 0.25, 0.3, 0.5, 1.0])
@pytest.mark.parametrize("factor", [1.0, 8.0])
def test_proportional_matches_transformers(head_dim, partial, factor):
    ours = posenc.scaled_inv_freq("proportional", head_dim, 1e6, factor, partial_rotary_factor=partial)
    ref = reference("proportional", head_dim, 1e6, factor, 2048, partial_rotary_factor=partial)
    assert_matches_reference(ours, ref, factor)
    # the rotated pairs are the fastest ones of the full head, the others never turn
    n = round(partial * head_dim) // 2
    np.testing.assert_allclose(ours[0][:n], posenc.rope_inv_freq(head_dim, 1e6)[:n] / factor, rtol=1e-15)
    np.testing.assert_array_equal(ours[0][n:], 0.0)


# --- DeepSeek-style YaRN -----------------------------------------------------------------------------


def test_yarn_attention_factor_follows_the_transformers_mscale_rules():
    s = 40.0
    m = lambda k: 0.1 * k * math.log(s) + 1  # noqa: E731  (get_mscale for s > 1)
    assert posenc.yarn_attention_factor(s, 0.707, 1.0) == pytest.approx(m(0.707) / m(1.0), rel=1e-15)
    assert posenc.yarn_attention_factor(s, 1.0, 1.0) == 1.0
    # one of them absent or zero: both ignored, plain YaRN (as the docstring says for mscale_all_dim = 0)
    for mscale, mscale_all_dim in [(1.0, 0.0), (0.0, 1.0), (0.707, None), (None, 0.707), (0.0, 0.0)]:
        assert posenc.yarn_attention_factor(s, mscale, mscale_all_dim) == pytest.approx(m(1.0), rel=1e-15)
    assert posenc.yarn_attention_factor(1.0, 0.5, 2.0) == 1.0


def test_yarn_softmax_scale_multiplier_matches_deepseek_and_transformers():
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import yarn_apply_mscale

    for factor in (1.0, 4.0, 40.0):
        for mscale in (0.707, 1.0):
            ours = posenc.yarn_softmax_scale_multiplier(factor, mscale)
            rope = {"rope_type": "yarn", "factor": factor, "mscale_all_dim": mscale}
            assert ours == pytest.approx(yarn_apply_mscale(rope, 1.0), rel=1e-15)
            if factor > 1:  # DeepSeek-V3 inference/model.py, MLA.__init__ (when max_seq_len > original_seq_len)
                assert ours == pytest.approx((0.1 * mscale * math.log(factor) + 1.0) ** 2, rel=1e-15)
    assert posenc.yarn_softmax_scale_multiplier(1.0, 0.707) == 1.0
    # with mscale = 1 it is YaRN's attention factor squared, moved from cos/sin to the softmax scale
    assert posenc.yarn_softmax_scale_multiplier(40.0) == pytest.approx(posenc.yarn_attention_factor(40.0) ** 2)


@pytest.mark.parametrize("mscale,mscale_all_dim", [(1.0, 1.0), (0.707, 0.707), (1.0, 0.707), (0.5, 2.0)])
def test_deepseek_logit_scales_of_rotated_and_other_dimensions(mscale, mscale_all_dim):
    # transformers' DeepSeek: cos/sin carry a = m(mscale) / m(mscale_all_dim), the softmax scale m(mscale_all_dim)^2
    s = 40.0
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 1, 16))
    inv, a = posenc.scaled_inv_freq("yarn", 16, 10000.0, s, 4096, mscale=mscale, mscale_all_dim=mscale_all_dim)
    positions = np.array([5])
    plain = posenc.apply_rope(q, positions, inv)[0] @ posenc.apply_rope(k, positions + 7, inv)[0]
    scaled = (
        posenc.apply_rope(q, positions, inv, attention_factor=a)[0]
        @ posenc.apply_rope(k, positions + 7, inv, attention_factor=a)[0]
    )
    assert scaled == pytest.approx(a**2 * plain, rel=1e-12)  # a on cos and sin: logits times a^2
    rotated = a**2 * posenc.yarn_softmax_scale_multiplier(s, mscale_all_dim)
    assert rotated == pytest.approx(posenc.yarn_softmax_scale_multiplier(s, mscale), rel=1e-12)


@pytest.mark.parametrize("head_dim", [16, 64, 128])
@pytest.mark.parametrize("original", [64, 4096])
def test_yarn_extrapolation_factor_as_the_yarn_code_computes_it(head_dim, original):
    base, factor = 10000.0, 16.0
    theta = posenc.rope_inv_freq(head_dim, base)
    default = posenc.scaled_inv_freq("yarn", head_dim, base, factor, original)
    np.testing.assert_array_equal(
        posenc.scaled_inv_freq("yarn", head_dim, base, factor, original, extrapolation_factor=1.0)[0], default[0]
    )
    ramp = posenc.yarn_ramp(head_dim, base, original)
    for e in (0.0, 0.3, 0.9):
        inv, af = posenc.scaled_inv_freq("yarn", head_dim, base, factor, original, extrapolation_factor=e)
        # jquesnelle/yarn, LlamaYaRNScaledRotaryEmbedding.yarn: mask = (1 - ramp) * e
        mask = (1 - ramp) * e
        np.testing.assert_allclose(inv, theta / factor * (1 - mask) + theta * mask, rtol=1e-14)
        assert af == default[1]
    np.testing.assert_allclose(
        posenc.scaled_inv_freq("yarn", head_dim, base, factor, original, extrapolation_factor=0.0)[0],
        posenc.scaled_inv_freq("linear", head_dim, base, factor)[0],
        rtol=1e-15,
    )


# --- equal band edges: beta_fast == beta_slow, low_freq_factor == high_freq_factor ------------------


@pytest.mark.parametrize("head_dim", [16, 64, 128])
@pytest.mark.parametrize("low", [0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("original", [2048, 8192])
def test_llama3_equal_freq_factors_match_transformers_and_the_nearly_equal_limit(head_dim, low, original):
    ours = posenc.scaled_inv_freq(
        "llama3", head_dim, 500000.0, 8.0, original, low_freq_factor=low, high_freq_factor=low
    )
    params = {"low_freq_factor": low, "high_freq_factor": low}
    ref_inv, ref_af = reference("llama3", head_dim, 500000.0, 8.0, original, **params)
    assert np.all(np.isfinite(ref_inv))  # no pair sits exactly on the wavelength L / low here
    assert_matches_reference(ours, (ref_inv, ref_af), 8.0)
    near = {"low_freq_factor": low, "high_freq_factor": low * (1 + 1e-9)}
    assert_matches_reference(ours, reference("llama3", head_dim, 500000.0, 8.0, original, **near), 8.0)
    theta = posenc.rope_inv_freq(head_dim, 500000.0)
    short = posenc.wavelengths(theta) < original / low
    np.testing.assert_array_equal(ours[0][short], theta[short])
    np.testing.assert_allclose(ours[0][~short], theta[~short] / 8.0, rtol=1e-15)


def test_llama3_equal_freq_factors_at_exactly_the_band_wavelength_take_the_limit():
    # choose low so that L / low is exactly pair 5's wavelength; transformers divides 0 by 0 there
    theta = posenc.rope_inv_freq(32, 10000.0)
    wavelength = 2 * math.pi / theta
    length = 8192
    pair = next(i for i in range(16) if length / (length / wavelength[i]) == wavelength[i])
    low = length / wavelength[pair]
    equal, _ = posenc.scaled_inv_freq("llama3", 32, 10000.0, 8.0, length, low_freq_factor=low, high_freq_factor=low)
    assert np.all(np.isfinite(equal))
    assert equal[pair] == pytest.approx(theta[pair] / 8.0, rel=1e-15)
    for gap in (1e-3, 1e-6, 1e-9):  # the blend at that wavelength is theta / s for any high > low
        near, _ = posenc.scaled_inv_freq(
            "llama3", 32, 10000.0, 8.0, length, low_freq_factor=low, high_freq_factor=low * (1 + gap)
        )
        assert near[pair] == pytest.approx(equal[pair], rel=1e-12)


def test_yarn_equal_betas_is_a_step_at_the_correction_dimension():
    ramp = posenc.yarn_ramp(128, 10000.0, 4096, 4.0, 4.0, truncate=False)
    x = posenc.yarn_correction_dim(4.0, 128, 10000.0, 4096)
    i = np.arange(64)
    np.testing.assert_array_equal(ramp, np.clip((i - x) / 0.001, 0, 1))  # transformers' guard: high = low + 0.001
    assert set(np.unique(ramp)) == {0.0, 1.0}
    truncated = posenc.yarn_ramp(128, 10000.0, 4096, 4.0, 4.0)
    low, high = math.floor(x), math.ceil(x)
    np.testing.assert_allclose(truncated, np.clip((i - low) / (high - low), 0, 1))


def test_matched_yarn_betas_keep_the_band_on_the_same_fraction_of_pairs():
    # for the reference (Llama 2: base 10000, L = 4096) the paper's betas come back unchanged
    assert posenc.yarn_matched_betas(10000.0, 4096) == pytest.approx((32.0, 1.0), rel=1e-12)
    # same base: the betas scale with L (turns are proportional to L); by hand, 32 * 32 / 4096
    assert posenc.yarn_matched_betas(10000.0, 32) == pytest.approx((0.25, 1 / 128), rel=1e-12)
    # another base and head size: the band's edges sit at the same fraction of the pairs
    for base, length, head_dim in ((500000.0, 8192, 128), (1e6, 32768, 64), (10000.0, 64, 16)):
        fast, slow = posenc.yarn_matched_betas(base, length)
        for beta, matched in ((32.0, fast), (1.0, slow)):
            reference = posenc.yarn_correction_dim(beta, 128, 10000.0, 4096) / 64
            assert posenc.yarn_correction_dim(matched, head_dim, base, length) / (head_dim / 2) == pytest.approx(
                reference, rel=1e-12
            )
    with pytest.raises(ValueError, match="reference_base"):
        posenc.yarn_matched_betas(10000.0, 64, reference_base=1.0)
