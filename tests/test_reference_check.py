"""posenc.reference_check: posenc's reading of a config checked against the reference library's tiny model.

A config that agrees gets one line saying so; a reading made wrong on purpose (posenc.from_config patched to
change one layer's window, rotation or softmax scale) is reported naming that layer and field; a nested
(multimodal) config is checked through the library's own text sub-config; without transformers the check
says so and raises nothing. The stored configs and every family are checked in tests/test_config_real.py and
tests/test_config_families.py.
"""

import dataclasses
import math
import subprocess
import sys

import numpy as np
import pytest
import transformers

import posenc
import posenc.config
from posenc.reference_check import FIELDS, ReferenceCheck, check_against_reference, record, small_config

VERSION = transformers.__version__

LLAMA = {
    "model_type": "llama",
    "num_hidden_layers": 4,
    "hidden_size": 128,
    "num_attention_heads": 2,
    "intermediate_size": 32,
    "vocab_size": 160,
    "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0},
}

#: Gemma 3's text model, small: 8 layers, sliding windows on 0-4 and 6-7, full attention on 5.
GEMMA3 = small_config("gemma3_text", sliding_window=512)


def patch_reading(monkeypatch, change):
    """posenc.from_config, with ``change(layers)`` applied to what it returns."""
    real = posenc.config.from_config

    def from_config(config, seq_len=None):
        layers = real(config, seq_len=seq_len)
        change(layers)
        return layers

    monkeypatch.setattr(posenc.config, "from_config", from_config)


def test_a_config_that_agrees_says_so_in_one_line():
    result = check_against_reference(LLAMA)
    assert result.available and result.version == VERSION and result.reason is None
    assert (result.n_layers, result.n_agree, result.differences) == (4, 4, [])
    assert result.agrees and result.model_type == result.posenc_model_type == "llama"
    assert result.line() == f"checked against transformers {VERSION}: 4 of 4 layers agree"
    assert 0 < result.seconds < 60


def test_windows_are_read_from_the_masks_the_layers_get():
    layers = posenc.from_config(GEMMA3)
    assert [layer.sliding_window for layer in layers] == [512] * 5 + [None] + [512] * 2
    result = check_against_reference(GEMMA3)
    assert result.agrees, result.differences
    # the library's attention calls: each layer's mask, as made by create_sliding_window_causal_mask or
    # create_causal_mask with the config's window
    trace = record(posenc.reference_check.build_config(posenc.reference_check.shrink(GEMMA3)))
    assert [call["mask"] for call in trace.attention] == [("sliding", 512)] * 5 + [("full", None)] + [
        ("sliding", 512)
    ] * 2


def test_a_wrong_window_is_reported_naming_the_layer_and_the_field(monkeypatch):
    def change(layers):
        layers[3] = dataclasses.replace(layers[3], sliding_window=4096)
        layers[5] = dataclasses.replace(layers[5], sliding_window=512)
        layers[6] = dataclasses.replace(layers[6], sliding_window=None)

    patch_reading(monkeypatch, change)
    result = check_against_reference(GEMMA3)
    assert result.differences == [
        "layer 3 (sliding_attention): sliding window: transformers 512, posenc 4096",
        "layer 5 (full_attention): sliding window: transformers None, posenc 512",
        "layer 6 (sliding_attention): sliding window: transformers 512, posenc None",
    ]
    assert (result.n_layers, result.n_agree) == (8, 5) and not result.agrees
    assert result.line().startswith(f"checked against transformers {VERSION}: 5 of 8 layers agree; differs: layer 3 ")


def test_a_wrong_base_or_chunk_size_is_reported_naming_the_layer_and_the_field(monkeypatch):
    def change(layers):
        layer = layers[2]
        wrong = posenc.rope_inv_freq(layer.rotary_dim, 10000.0)
        layers[2] = dataclasses.replace(layer, base=10000.0, inv_freq=wrong, attention_chunk_size=8192)

    patch_reading(monkeypatch, change)
    result = check_against_reference(LLAMA)
    assert len(result.differences) == 2 and result.n_agree == 3
    rotation, chunk = result.differences
    assert rotation.startswith("layer 2 (full_attention): rotation: differs by ") and "base 10000" in rotation
    assert chunk == "layer 2 (full_attention): attention chunk size: transformers None, posenc 8192"


def test_a_layer_that_should_not_rotate_is_reported(monkeypatch):
    def change(layers):
        layers[1] = dataclasses.replace(layers[1], rope=False, rotary_dim=0, inv_freq=np.zeros(0))

    patch_reading(monkeypatch, change)
    result = check_against_reference(LLAMA)
    assert result.differences == ["layer 1 (full_attention): rotation: transformers rotates, posenc does not"]


@pytest.mark.parametrize("model_type", ["deepseek_v3", "llama"])
def test_the_softmax_scale_multiplier_is_compared(model_type, monkeypatch):
    # a YaRN config with mscale_all_dim: DeepSeek's attention multiplies 1/sqrt(qk_head_dim) by mscale**2, Llama's
    # does not (its YaRN temperature is on cos and sin: the attention factor)
    rope = {
        "rope_type": "yarn",
        "rope_theta": 10000.0,
        "factor": 40.0,
        "original_max_position_embeddings": 4096,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
    }
    raw = small_config(model_type, max_position_embeddings=163840, rope_parameters=rope)
    want = (0.1 * math.log(40.0) + 1.0) ** 2 if model_type == "deepseek_v3" else 1.0
    layers = posenc.from_config(raw)
    assert [layer.softmax_scale for layer in layers] == pytest.approx([want] * len(layers), rel=1e-12)
    assert check_against_reference(raw).agrees
    if model_type == "deepseek_v3":  # the module's own scaling, read directly: 1/sqrt(qk_head_dim) times it
        config = posenc.reference_check.build_config(posenc.reference_check.shrink(raw))
        for call in record(config).attention:
            assert call["self"].scaling * math.sqrt(config.qk_head_dim) == pytest.approx(want, rel=1e-12)

    patch_reading(monkeypatch, lambda layers: layers.__setitem__(0, dataclasses.replace(layers[0], softmax_scale=1.5)))
    result = check_against_reference(raw)
    assert result.differences == [f"layer 0 (full_attention): softmax scale: transformers {want:.6g}, posenc 1.5"]


def test_seq_len_reaches_the_reference(monkeypatch):
    # dynamic NTK: the library scales when the traced positions pass the trained length, as posenc does for seq_len
    raw = {**LLAMA, "max_position_embeddings": 2048, "rope_parameters": {"rope_type": "dynamic", "factor": 4.0}}
    raw["rope_parameters"]["rope_theta"] = 10000.0
    assert check_against_reference(raw).agrees
    assert check_against_reference(raw, seq_len=6000).agrees
    real = posenc.config.from_config
    monkeypatch.setattr(posenc.config, "from_config", lambda config, seq_len=None: real(config))  # seq_len lost
    result = check_against_reference(raw, seq_len=6000)
    assert result.n_agree == 0 and all(": rotation: differs by " in line for line in result.differences)


def test_a_nested_config_is_checked_through_the_librarys_text_config():
    raw = {
        "model_type": "gemma3",
        "text_config": {**{k: v for k, v in GEMMA3.items() if k != "model_type"}, "model_type": "gemma3_text"},
        "vision_config": {"model_type": "siglip_vision_model", "num_hidden_layers": 1, "hidden_size": 16},
    }
    result = check_against_reference(raw)
    assert result.model_type == "gemma3_text" and result.agrees, result.differences


def test_what_it_cannot_check_it_says_why():
    unknown = {"model_type": "not_a_family", "num_hidden_layers": 2, "head_dim": 8, "rope_theta": 100.0}
    result = check_against_reference(unknown)
    assert result.available and result.n_layers is None and not result.agrees
    assert result.reason == f"transformers {VERSION} has no model_type 'not_a_family'"
    assert result.line() == f"not checked against transformers {VERSION}: {result.reason}"
    remote = check_against_reference({**unknown, "auto_map": {"AutoConfig": "configuration_x.XConfig"}})
    assert "remote code" in remote.reason
    with pytest.raises(ValueError, match="fields"):
        check_against_reference(LLAMA, fields=("windows",))
    assert FIELDS == ("rotation", "window", "softmax_scale")


def test_without_transformers_it_says_so_and_raises_nothing(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # `import transformers` raises ImportError
    result = check_against_reference(LLAMA)
    assert result == ReferenceCheck(
        available=False,
        version=None,
        reason="transformers is not installed",
        posenc_model_type="llama",
        seconds=result.seconds,
    )
    assert result.line() == "not checked against transformers: transformers is not installed"


def test_posenc_imports_without_transformers_or_torch():
    code = (
        "import sys; sys.modules['transformers'] = sys.modules['torch'] = None\n"
        "import posenc.reference_check as rc\n"
        "print(rc.check_against_reference({'model_type': 'llama', 'num_hidden_layers': 2, 'head_dim': 8,"
        " 'rope_theta': 100.0}).line())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "not checked against transformers: transformers is not installed"


def test_the_line_groups_the_same_difference_on_several_layers():
    result = ReferenceCheck(
        available=True,
        version="9.9",
        n_layers=8,
        n_agree=3,
        differences=[
            "layer count: transformers 8, posenc 8",
            *(f"layer {i} (sliding_attention): sliding window: transformers 4096, posenc None" for i in (0, 1, 2, 4)),
            "layer 7 (full_attention): softmax scale: transformers 1.37, posenc 1",
        ],
    )
    assert result.line() == (
        "checked against transformers 9.9: 3 of 8 layers agree; differs: layer count: transformers 8, posenc 8; "
        "layers 0-2, 4 (sliding_attention): sliding window: transformers 4096, posenc None; "
        "layer 7 (full_attention): softmax scale: transformers 1.37, posenc 1"
    )
    assert result.line(max_differences=1).endswith("posenc 8; and 2 more")
