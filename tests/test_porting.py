"""port_check: a port that drops the config's scaling agrees at position 0 and drifts with the position.

The reference is transformers 5.23's ``LlamaRotaryEmbedding`` + ``apply_rotary_pos_emb`` for the
Llama-3.1-8B config of posenc.MODELS (no weights: only the rotary module is built).
"""

import json

import numpy as np
import pytest
import torch
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

import posenc

POSITIONS = np.r_[0:16, 100, 1000, 4096, 8191, 20000, 65536, 131071]
HEAD_DIM = 128
KEY = np.random.default_rng(0).normal(size=HEAD_DIM)


def transformers_rotation(config):
    """positions -> the key rotated by transformers' Llama rotary embedding (float32 angles), as float64."""
    rotary = LlamaRotaryEmbedding(config)

    def rotate(positions):
        x = torch.from_numpy(np.broadcast_to(KEY, (positions.size, HEAD_DIM)).copy()).float()[None, None]
        cos, sin = rotary(x, torch.from_numpy(positions)[None])
        return apply_rotary_pos_emb(x, x, cos, sin)[1][0, 0].double().numpy()

    return rotate


def port(inv_freq, attention_factor=1.0):
    return lambda positions: posenc.apply_rope(
        np.broadcast_to(KEY, (positions.size, HEAD_DIM)), positions, inv_freq, attention_factor=attention_factor
    )


def errors_by_start(candidate, reference):
    starts, stops, max_error = posenc.port_check(candidate, reference, POSITIONS)
    assert np.all(stops > starts)
    return dict(zip(starts.tolist(), max_error.tolist(), strict=True))


@pytest.fixture(scope="module")
def llama31():
    config = LlamaConfig(**posenc.MODELS["Llama-3.1-8B"].config)
    return config, transformers_rotation(config)


def test_default_edges_are_position_zero_then_powers_of_two():
    starts, stops, max_error = posenc.port_check(np.zeros((5, 2)), np.ones((5, 2)), [0, 1, 3, 4, 9])
    assert starts.tolist() == [0, 1, 2, 4, 8] and stops.tolist() == [1, 2, 4, 8, 16]
    np.testing.assert_array_equal(max_error, 1.0)
    starts, stops, max_error = posenc.port_check(
        lambda p: p[:, None] * 1.0, lambda p: p[:, None] * 1.5, [0, 2, 10, 11], edges=[0, 5, 12]
    )
    assert starts.tolist() == [0, 5] and stops.tolist() == [5, 12]
    np.testing.assert_allclose(max_error, [1.0, 5.5])


def test_the_right_port_agrees_at_every_position(llama31):
    _, reference = llama31
    layer = posenc.from_config(posenc.MODELS["Llama-3.1-8B"])[0]
    starts, stops, max_error = posenc.port_check(port(layer.inv_freq, layer.attention_factor), reference, POSITIONS)
    # only the reference's float32 angles: below (largest position) * 2**-24 radians, times the key's size
    bound = 2 * stops * 2.0**-24 * np.abs(KEY).max() + 1e-5
    assert np.all(max_error < bound), list(zip(starts, max_error, bound, strict=True))


def test_a_port_that_drops_llama3_scaling_passes_at_short_positions_and_fails_at_long_ones(llama31):
    _, reference = llama31
    errors = errors_by_start(port(posenc.rope_inv_freq(HEAD_DIM, 500000.0)), reference)
    assert errors[0] < 1e-6  # at position 0 every angle is 0: nothing to see
    assert max(errors[s] for s in (1, 2, 4, 8)) < 0.02  # below 1% of the key's largest entry up to 15
    assert min(errors[s] for s in (4096, 16384, 65536)) > 1.0  # of the order of the key itself


def test_reading_rope_theta_as_an_attribute_falls_back_to_the_default_in_transformers_5(llama31):
    """transformers 5 moves ``rope_theta`` into ``config.rope_parameters``: the old attribute is gone, so
    ``getattr(config, "rope_theta", 10000.0)`` gives the default, and the port is wrong from position 1."""
    config, reference = llama31
    assert not hasattr(config, "rope_theta") and config.rope_parameters["rope_theta"] == 500000.0
    base = getattr(config, "rope_theta", 10000.0)
    errors = errors_by_start(port(posenc.rope_inv_freq(HEAD_DIM, base)), reference)
    assert errors[0] < 1e-6 and errors[1] > 0.1


def test_a_port_that_drops_yarn_shows_its_missing_temperature_at_position_0():
    """YaRN's attention factor multiplies cos and sin: at position 0 the dropped port is off by (a - 1) |k|."""
    inv, factor = posenc.scaled_inv_freq("yarn", HEAD_DIM, 10000.0, 8.0, 4096)
    errors = errors_by_start(port(posenc.rope_inv_freq(HEAD_DIM)), port(inv, factor))
    assert errors[0] == pytest.approx((factor - 1.0) * np.abs(KEY).max(), rel=1e-12)
    # with the temperature put back, only the angles differ: 0 at position 0, growing with the position
    errors = errors_by_start(port(posenc.rope_inv_freq(HEAD_DIM), factor), port(inv, factor))
    assert errors[0] == 0.0 and errors[1] < 0.02 and min(errors[s] for s in (4096, 16384, 65536)) > 1.0


def test_a_port_that_drops_linear_scaling_fails_from_position_1():
    errors = errors_by_start(port(posenc.rope_inv_freq(HEAD_DIM)), port(posenc.rope_inv_freq(HEAD_DIM) / 4.0))
    assert errors[0] == 0.0 and errors[1] > 0.1  # pair 0 turns 1 radian instead of 1/4


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(candidate=np.zeros((3, 2)), reference=np.zeros((2, 2)), positions=[0, 1, 2]), "reference must have one"),
        (dict(candidate=np.zeros((3, 2)), reference=np.zeros((3, 3)), positions=[0, 1, 2]), "the same shape"),
        (dict(candidate="abc", reference=np.zeros((3, 2)), positions=[0, 1, 2]), "candidate must be an array"),
        (dict(candidate=np.zeros((2, 2)), reference=np.zeros((2, 2)), positions=[-1, 2]), "positions must be >= 0"),
        (dict(candidate=np.zeros((2, 2)), reference=np.zeros((2, 2)), positions=[0, 9], edges=[0, 5]), "edges must"),
        (dict(candidate=np.zeros((2, 2)), reference=np.zeros((2, 2)), positions=[0, 1], edges=[3, 1]), "increasing"),
        (dict(candidate=lambda p: p * np.nan, reference=np.zeros(2), positions=[0, 1]), "candidate must be finite"),
    ],
)
def test_bad_input_is_named(kwargs, message):
    with pytest.raises((TypeError, ValueError), match=message):
        posenc.port_check(**kwargs)


def test_a_config_saved_by_transformers_5_has_only_rope_parameters(llama31):
    """``to_json_string()`` (what ``save_pretrained`` writes to config.json) holds the base in ``rope_parameters``: a
    port that reads ``config.get("rope_theta", 10000.0)`` from the file gets the default too. posenc.from_config
    reads both forms."""
    config, _ = llama31
    saved = json.loads(config.to_json_string())
    assert "rope_theta" not in saved and "rope_scaling" not in saved
    assert saved["rope_parameters"]["rope_theta"] == 500000.0 and saved.get("rope_theta", 10000.0) == 10000.0
    legacy = posenc.from_config(posenc.MODELS["Llama-3.1-8B"])[0]
    np.testing.assert_array_equal(posenc.from_config(saved)[0].inv_freq, legacy.inv_freq)
