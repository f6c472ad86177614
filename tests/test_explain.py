"""``python -m posenc explain CONFIG``: from_config's numbers, bands and warnings by hand, bad input in one line."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import posenc
from posenc.__main__ import main
from posenc.explain import explain, format_text

ROPE = sorted(name for name, entry in posenc.MODELS.items() if entry.scheme == "rope")


def write(tmp_path, config, name="config.json"):
    path = tmp_path / name
    path.write_text(json.dumps(dict(config)))
    return path


@pytest.mark.parametrize("name", ROPE)
def test_explain_runs_on_every_zoo_model_and_agrees_with_from_config(name, tmp_path, capsys):
    config = dict(posenc.MODELS[name].config)
    assert main(["explain", str(write(tmp_path, config))]) == 0
    text = capsys.readouterr().out
    assert config["model_type"] in text and "Layers" in text
    assert main(["explain", str(write(tmp_path, config)), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    layers = posenc.from_config(config)
    assert data["n_layers"] == len(layers)
    assert sorted(i for g in data["groups"] for i in g["layers"]) == list(range(len(layers)))
    for group in data["groups"]:
        first = layers[group["layers"][0]]
        if group["rotation"] is None:
            assert not first.rope
            continue
        rotation = data["rotations"][group["rotation"]]
        turning = first.inv_freq[first.inv_freq > 0]
        assert rotation["fastest_wavelength"] == pytest.approx(2 * math.pi / turning[0], rel=1e-12)
        assert rotation["slowest_wavelength"] == pytest.approx(2 * math.pi / turning.min(), rel=1e-12)
        assert rotation["attention_factor"] == first.attention_factor and rotation["rotary_dim"] == first.rotary_dim


def test_groups_say_every_fourth_layer_is_nope_for_llama4():
    text = format_text(explain(posenc.MODELS["Llama-4-Scout-17B-16E-Instruct"]))
    assert "layers 3, 7, ..., 47 (every 4th): attention without rotation (NoPE)" in text
    assert "the other 36 layers: RoPE on all 128 dims" in text and "chunks of 8192" in text


def test_yarn_bands_by_hand_for_gpt_oss():
    e = explain(posenc.MODELS["gpt-oss-20b"])
    (rotation,) = e.rotations.values()  # sliding and full layers share one rotation
    # YaRN's ramp (Peng et al. 2023, section 3.2) with truncate=False: pair i is kept below
    # low = d ln(L / (2 pi beta_fast)) / (2 ln b), interpolated above high (beta_slow), blended between
    d, b, length = 64, 150000.0, 4096
    low = d * math.log(length / (2 * math.pi * 32)) / (2 * math.log(b))
    high = d * math.log(length / (2 * math.pi * 1)) / (2 * math.log(b))
    i = np.arange(d // 2)
    np.testing.assert_array_equal(rotation.bands["keep"], i[i <= low])
    np.testing.assert_array_equal(rotation.bands["interpolate"], i[i >= high])
    np.testing.assert_array_equal(rotation.bands["blend"], i[(i > low) & (i < high)])


def test_llama3_bands_by_hand():
    e = explain(posenc.MODELS["Llama-3.1-8B"])
    (rotation,) = e.rotations.values()
    wavelength = 2 * math.pi * 500000.0 ** (np.arange(0, 128, 2) / 128)
    np.testing.assert_array_equal(rotation.bands["keep"], np.flatnonzero(wavelength < 8192 / 4))
    np.testing.assert_array_equal(rotation.bands["interpolate"], np.flatnonzero(wavelength > 8192 / 1))


def test_p_rope_pairs_that_never_turn_for_gemma4():
    e = explain(posenc.MODELS["gemma-4-31B-it"])
    full = next(r for r in e.rotations.values() if r.rope_type == "proportional")
    assert int(np.isinf(full.wavelengths).sum()) == 256 - 64  # 25 % of 256 pairs turn


BASE = {"model_type": "llama", "num_hidden_layers": 2, "head_dim": 64, "rope_theta": 10000.0}


@pytest.mark.parametrize(
    "extra,warning",
    [
        ({"max_position_embeddings": 8192, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}}, "no original_max"),
        (
            {
                "max_position_embeddings": 32768,
                "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096},
            },
            "factor s = 4 but max_position_embeddings / L = 32768 / 4096 = 8",
        ),
        ({"max_position_embeddings": 4096, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}, "dynamic:"),
        (
            {
                "max_position_embeddings": 8192,
                "rope_scaling": {
                    "rope_type": "longrope",
                    "short_factor": [1.0] * 32,
                    "long_factor": [2.0] * 32,
                    "original_max_position_embeddings": 4096,
                },
            },
            "longrope: the short factors",
        ),
        (
            {"rope_scaling": {"rope_type": "linear", "factor": 2.0}, "rope_parameters": {"rope_type": "default"}},
            "both rope_scaling and rope_parameters",
        ),
        ({"partial_rotary_factor": 0.35}, "partial_rotary_factor 0.35 x head_dim 64 = 22.4 is cut to 22"),
    ],
)
def test_warnings_for_the_known_traps(extra, warning):
    config = {**BASE, **extra}
    assert any(warning in w for w in explain(config).warnings), explain(config).warnings


def test_an_odd_rotated_width_is_refused_with_the_arithmetic():
    with pytest.raises(ValueError, match=r"int\(64 \* 0.3\) = 19; it must be even"):
        explain({**BASE, "partial_rotary_factor": 0.3})


def test_no_warning_for_a_plain_config():
    assert explain({**BASE, "max_position_embeddings": 4096}).warnings == []


def test_plot_writes_a_png(tmp_path, capsys):
    path = write(tmp_path, posenc.MODELS["gpt-oss-20b"].config)
    png = tmp_path / "wavelengths.png"
    assert main(["explain", str(path), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "content,message",
    [
        (None, "no such file"),
        ("{bad json", "not valid JSON"),
        ("[1, 2, 3]", "a JSON list, not an object"),
        ('{"name": "a tokenizer config"}', "needs 'num_hidden_layers'"),
        ('{"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12}', "no RoPE base"),
        ('{"model_type": "llama", "num_hidden_layers": 2, "head_dim": 64, "rope_theta": "big"}', "rope_theta"),
    ],
)
def test_bad_input_gets_one_line_and_status_1(tmp_path, capsys, content, message):
    path = tmp_path / "config.json"
    if content is not None:
        path.write_text(content)
    assert main(["explain", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err
    assert "Traceback" not in err


def test_a_real_process_answers_bad_input_with_one_line_and_no_traceback(tmp_path):
    # the same as above through `python -m posenc`: exit status 1, nothing on stdout, one line on stderr
    path = tmp_path / "config.json"
    path.write_text("{bad json")
    result = subprocess.run(
        [sys.executable, "-m", "posenc", "explain", str(path)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 1 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "not valid JSON" in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_a_folder_is_read_through_its_config_json(tmp_path, capsys):
    write(tmp_path, posenc.MODELS["Qwen3-0.6B"].config)
    assert main(["explain", str(tmp_path)]) == 0
    assert main(["explain", str(tmp_path / "missing")]) == 1
