"""``python -m posenc explain CONFIG``: from_config's numbers, bands and warnings by hand, bad input in one line."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import transformers

import posenc
from posenc.__main__ import main
from posenc.explain import explain, format_text
from posenc.scaling import SCALING_METHODS, scaling_method

ROPE = sorted(name for name, entry in posenc.MODELS.items() if entry.scheme == "rope")


def write(tmp_path, config, name="config.json"):
    path = tmp_path / name
    path.write_text(json.dumps(dict(config)))
    return path


@pytest.mark.parametrize("name", ROPE)
def test_explain_runs_on_every_zoo_model_and_agrees_with_from_config_checked_layer_by_layer(name, tmp_path, capsys):
    config = dict(posenc.MODELS[name].config)
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    known = config["model_type"] in CONFIG_MAPPING  # else remote code (Qwen-1): the library cannot build it
    assert main(["explain", str(write(tmp_path, config)), *(["--strict"] if known else [])]) == 0
    text = capsys.readouterr().out
    assert config["model_type"] in text and "Layers" in text
    # the second line: the reference library's own tiny model of the config agrees, layer by layer
    n = len(posenc.from_config(config))
    version = transformers.__version__
    if known:
        assert text.splitlines()[1] == f"checked against transformers {version}: {n} of {n} layers agree"
    else:
        assert text.splitlines()[1].startswith(f"not checked against transformers {version}: ")
        assert repr(config["model_type"]) in text.splitlines()[1]
    assert main(["explain", str(write(tmp_path, config)), "--json", "--no-check"]) == 0
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
    assert main(["explain", "--no-check", str(path), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert capsys.readouterr().out.endswith(f"\nwrote {png}\n")


def test_plot_writes_exactly_the_path_named_in_the_format_of_its_suffix(tmp_path, capsys):
    # matplotlib appends ".png" to a name without a suffix unless told the format: explain tells it, so "fig"
    # is the file written (PNG) and the one named in "wrote"; ".pdf" and ".SVG" (any case) name their formats
    path = write(tmp_path, posenc.MODELS["gpt-oss-20b"].config)
    for name, magic in (("fig", b"\x89PNG"), ("fig.pdf", b"%PDF"), ("fig.SVG", b"<?xml")):
        assert main(["explain", "--no-check", str(path), "--plot", str(tmp_path / name)]) == 0
        assert (tmp_path / name).read_bytes().startswith(magic), name
        assert capsys.readouterr().out.endswith(f"\nwrote {tmp_path / name}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "fig", "fig.SVG", "fig.pdf"]
    # with --json the output stays JSON: the file is written, no "wrote" line
    assert main(["explain", "--no-check", str(path), "--json", "--plot", str(tmp_path / "j.png")]) == 0
    assert json.loads(capsys.readouterr().out)["model_type"] == "gpt_oss" and (tmp_path / "j.png").is_file()


# --- the header says how the config was read; the lengths; every number in --json ----------------------


def test_the_header_says_which_rules_and_whose_class_defaults_read_the_config():
    from posenc._family_defaults import TABLE, TRANSFORMERS_VERSION
    from posenc.config_families import FAMILIES

    # gpt_oss: a class posenc has defaults for but no rules of its own (the generic reading); llama4_text: rules
    assert "gpt_oss" in TABLE and "gpt_oss" not in FAMILIES and "llama4_text" in FAMILIES
    header = format_text(explain(posenc.MODELS["gpt-oss-20b"])).splitlines()[0]
    assert header == (
        "gpt_oss: 24 layers, read with posenc's generic rules (it has none of its own for gpt_oss) "
        f"and transformers {TRANSFORMERS_VERSION}'s class defaults for gpt_oss"
    )
    assert "needs no rules" not in header
    header = format_text(explain(posenc.MODELS["Llama-4-Scout-17B-16E-Instruct"])).splitlines()[0]
    assert header.endswith(
        f"read with posenc's rules for llama4_text and transformers {TRANSFORMERS_VERSION}'s "
        "class defaults for llama4_text"
    )
    e = explain({**BASE, "model_type": "not_a_family"})
    assert (
        format_text(e)
        .splitlines()[0]
        .endswith("read with posenc's generic rules and the legacy fields of earlier configs; no class defaults")
    )
    assert e.as_dict()["reading"] == e.reading


def test_an_unscaled_rotation_has_no_extended_length():
    # no scaling: max_position_embeddings is not an extension of anything; it is shown as what it is
    e = explain({**BASE, "max_position_embeddings": 4096})
    (rotation,) = e.rotations.values()
    assert not rotation.scaled and rotation.extended_length is None and rotation.max_position_embeddings == 4096
    text = format_text(e)
    slowest = 2 * math.pi * 10000.0 ** (62 / 64)  # pair 31 of a 64-dim head: 2 pi b^(2 * 31 / 64)
    assert "against the extended length" not in text
    assert (
        f"against max_position_embeddings 4096: {4096 / slowest:.3g} turns (the rotation is not scaled: no extended "
        "length)" in text
    )
    # YaRN stretches: the extended length is max_position_embeddings, as before
    scaled = explain(
        {
            **BASE,
            "max_position_embeddings": 16384,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096},
        }
    )
    (rotation,) = scaled.rotations.values()
    assert rotation.scaled and rotation.extended_length == 16384 and rotation.original_length == 4096
    assert "against the extended length 16384" in format_text(scaled) and "not scaled" not in format_text(scaled)
    assert rotation.as_dict()["scaling"] == {
        "factor": 4.0,
        "original_max_position_embeddings": 4096,
    }


def test_json_has_every_setting_of_each_group_as_a_number():
    groups = {
        tuple(g["layers"][:2]): g for g in explain(posenc.MODELS["Llama-4-Scout-17B-16E-Instruct"]).as_dict()["groups"]
    }
    rope, nope = groups[(0, 1)], groups[(3, 7)]
    assert rope["attention_chunk_size"] == 8192 and rope["rope"] and rope["layout"] == "interleaved"
    assert rope["direction"] == 1 and rope["temperature_tuning"] is None and rope["softmax_scale"] == 1.0
    assert nope["temperature_tuning"] == {"floor_scale": 8192.0, "attn_scale": 0.1} and nope["rope"] is False
    assert nope["layout"] is None and nope["layer_types"] == ["full_attention"]
    # gpt-oss: the sliding layers' window as a number; DeepSeek-V3's softmax scale; Qwen3-VL's M-RoPE sections
    windows = {g["sliding_window"] for g in explain(posenc.MODELS["gpt-oss-20b"]).as_dict()["groups"]}
    assert windows == {128, None}
    (group,) = explain(posenc.MODELS["DeepSeek-V3"]).as_dict()["groups"]
    mscale = 0.1 * 1.0 * math.log(40) + 1  # yarn_get_mscale(40, mscale_all_dim = 1)
    assert group["softmax_scale"] == pytest.approx(mscale**2, rel=1e-12)
    (group,) = explain(posenc.MODELS["Qwen3-VL-4B"]).as_dict()["groups"]
    assert group["mrope_section"] == [24, 20, 20] and group["mrope_interleaved"] is True
    # Ministral 3's query scale and Qwen-1's log-n length
    config = {
        **BASE,
        "model_type": "ministral3",
        "max_position_embeddings": 262144,
        "rope_parameters": {
            "rope_type": "yarn",
            "rope_theta": 1e6,
            "factor": 16.0,
            "original_max_position_embeddings": 16384,
            "llama_4_scaling_beta": 0.1,
        },
    }
    (group,) = explain(config).as_dict()["groups"]
    assert group["llama_4_scaling"] == {"beta": 0.1, "original_max_position_embeddings": 16384}
    qwen = {"num_hidden_layers": 2, "hidden_size": 32, "num_attention_heads": 2, "rotary_emb_base": 10000}
    (group,) = explain({**qwen, "use_logn_attn": True, "seq_length": 64}).as_dict()["groups"]
    assert group["logn_length"] == 64


@pytest.mark.parametrize(
    "content,message",
    [
        (None, "no such file"),
        ("{bad json", "not valid JSON"),
        ("[1, 2, 3]", "a JSON list, not an object"),
        ('{"name": "a tokenizer config"}', "needs 'num_hidden_layers'"),
        ('{"num_hidden_layers": 2, "head_dim": 64}', "no RoPE base"),
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
    assert main(["explain", "--no-check", str(tmp_path)]) == 0
    assert main(["explain", str(tmp_path / "missing")]) == 1


# --- a scaling method is one declaration, for explain too ------------------------------------------------


@pytest.fixture
def toy_method():
    """A method registered for one test: explain knows it only from its declaration. Removed afterwards."""
    before = set(SCALING_METHODS)

    @scaling_method(
        "toy_turns", factor="derived", title="toy turn-count scaling", bands=True, shown=("fast_turns",), note="a toy"
    )
    def toy_turns_scaling(head_dim, base, factor, original_max_position_embeddings, *, fast_turns: float = 8.0):
        """Keep pairs that turn more than ``fast_turns`` times within L, divide by s those under one turn,
        the geometric mean ``theta / sqrt(s)`` between."""
        theta = posenc.rope_inv_freq(head_dim, base)
        turns = original_max_position_embeddings * theta / (2 * math.pi)
        return np.where(turns > fast_turns, theta, np.where(turns < 1, theta / factor, theta / factor**0.5)), 1.0

    @scaling_method("toy_growing", length="max", factor="optional")
    def toy_growing_scaling(head_dim, base, factor, original_max_position_embeddings, *, seq_len: int):
        """Every speed divided by ``max(1, seq_len / L)``."""
        return posenc.rope_inv_freq(head_dim, base) / max(1.0, seq_len / original_max_position_embeddings), 1.0

    yield
    for name in set(SCALING_METHODS) - before:
        del SCALING_METHODS[name]


def test_explain_says_what_a_new_method_declares_title_factor_and_bands(toy_method, tmp_path, capsys):
    config = {
        **BASE,
        "head_dim": 16,
        "max_position_embeddings": 4096,
        "rope_parameters": {
            "rope_type": "toy_turns",
            "rope_theta": 10000.0,
            "factor": 4.0,
            "original_max_position_embeddings": 1024,
        },
    }
    assert main(["explain", "--no-check", str(write(tmp_path, config))]) == 0
    text = capsys.readouterr().out
    # title, s, L, the parameter it shows with its default, its note
    assert "RoPE on all 16 dims, base 10000, toy turn-count scaling s = 4 from L = 1024 (fast_turns 8; a toy)" in text
    # by hand: wavelength of pair i is 2 pi 10000 ** (i / 8) = 2 pi 10 ** (i / 2): 6.3, 19.9, 62.8, 199, 628,
    # 1987, ...; turns within L = 1024: 163, 51.5, 16.3, 5.15, 1.63, 0.515, ...: more than 8 for pairs 0-2,
    # fewer than 1 from pair 5
    turns = 1024 / (2 * math.pi * 10 ** (np.arange(8) / 2))
    assert np.flatnonzero(turns > 8).tolist() == [0, 1, 2] and np.flatnonzero(turns < 1).tolist() == [5, 6, 7]
    assert "pairs: keep 3 (pairs 0-2); blend 2 (pairs 3-4); interpolate 3 (pairs 5-7)" in text
    (rotation,) = explain(config).rotations.values()
    assert {k: v.tolist() for k, v in rotation.bands.items()} == {
        "keep": [0, 1, 2],
        "blend": [3, 4],
        "interpolate": [5, 6, 7],
    }
    assert "Warnings" not in text  # s * L = 4 * 1024 = max_position_embeddings
    # declared factor="derived": a factor that is not max_position_embeddings / L is a trap, as for YaRN
    warnings = explain({**config, "max_position_embeddings": 8192}).warnings
    assert warnings == [
        "toy_turns: factor s = 4 but max_position_embeddings / L = 8192 / 1024 = 8: the speeds are set for 4096 tokens"
    ]


def test_a_method_whose_speeds_follow_the_length_gets_the_note_and_the_cache_warning(toy_method):
    config = {**BASE, "max_position_embeddings": 512, "rope_scaling": {"rope_type": "toy_growing"}}
    e = explain(config, seq_len=1024)
    assert "base 10000, toy_growing from L = 512 (speeds change with the length)" in e.groups[0].description
    (rotation,) = e.rotations.values()
    np.testing.assert_allclose(2 * math.pi / rotation.wavelengths, posenc.rope_inv_freq(64) / 2, rtol=1e-12)
    assert rotation.bands == {}  # it declares no bands
    assert e.warnings == ["toy_growing: " + SCALING_METHODS["toy_growing"].spec.cache_warning]


def test_an_alias_is_read_as_its_method():
    config = {
        **BASE,
        "max_position_embeddings": 8192,
        "rope_scaling": {
            "type": "su",
            "short_factor": [1.0] * 32,
            "long_factor": [2.0] * 32,
            "original_max_position_embeddings": 4096,
        },
    }
    e = explain(config)
    assert "LongRoPE s = 2 from L = 4096 (short factors up to L, long factors past it)" in e.groups[0].description
    assert any(w.startswith("su: the short factors apply up to L = 4096 tokens") for w in e.warnings), e.warnings


def test_the_check_names_a_layer_that_differs_and_strict_fails(tmp_path, capsys, monkeypatch):
    import posenc.reference_check as reference_check

    path = write(tmp_path, dict(posenc.MODELS["gpt-oss-20b"].config))
    real = reference_check.check_against_reference

    def wrong_window(config, seq_len=None, **kwargs):  # posenc's reading with layer 1 given a window it lacks
        from posenc import config as config_module

        original = config_module.from_config

        def shifted(*args, **kw):
            layers = original(*args, **kw)
            layers[1] = __import__("dataclasses").replace(layers[1], sliding_window=77)
            return layers

        monkeypatch.setattr(config_module, "from_config", shifted)
        try:
            return real(config, seq_len=seq_len, **kwargs)
        finally:
            monkeypatch.setattr(config_module, "from_config", original)

    monkeypatch.setattr(reference_check, "check_against_reference", wrong_window)
    assert main(["explain", str(path)]) == 0  # without --strict the reading is printed with what differs
    line = capsys.readouterr().out.splitlines()[1]
    assert line.startswith(f"checked against transformers {transformers.__version__}: 23 of 24 layers agree")
    assert "layer 1 (full_attention): sliding window: transformers None, posenc 77" in line
    assert main(["explain", str(path), "--strict"]) == 3
    captured = capsys.readouterr()
    assert "sliding window" in captured.err and captured.err.count("\n") == 1


def test_the_check_says_why_it_could_not_run_and_json_carries_it(capsys):
    from stored_configs import FILES

    path = FILES["internlm2_5-7b"]  # remote code: transformers has no such model_type
    assert main(["explain", str(path), "--json"]) == 0
    check = json.loads(capsys.readouterr().out)["reference_check"]
    assert check["n_layers"] is None and "internlm2" in check["reason"] and check["line"].startswith("not checked")
    assert main(["explain", str(path), "--strict"]) == 3
    assert "not checked against transformers" in capsys.readouterr().err
    assert main(["explain", str(path), "--no-check"]) == 0
    assert "checked against" not in capsys.readouterr().out


def test_the_readmes_example_is_what_the_command_prints(capsys):
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    command = "$ .venv/bin/python -m posenc explain src/posenc/zoo_configs/Qwen3-Next-80B-A3B.json\n"
    shown = readme.split(command, 1)[1].split("```", 1)[0].rstrip("\n").splitlines()
    path = Path(posenc.__file__).parent / "zoo_configs" / "Qwen3-Next-80B-A3B.json"
    assert main(["explain", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[: len(shown)] == shown


@pytest.mark.parametrize("name", sorted(n for n, e in posenc.MODELS.items() if e.scheme != "rope"))
def test_explain_reads_every_other_zoo_model_and_says_why_it_is_not_checked(name):
    # the zoo keeps position fields only; without a model_type the library cannot pick a class: the line says so
    text = format_text(explain(posenc.MODELS[name], check=True)).splitlines()
    assert text[1] == (
        f"not checked against transformers {transformers.__version__}: "
        "the config has no model_type, so transformers cannot tell its class"
    )


def test_explain_names_a_check_that_is_not_a_bool():
    with pytest.raises(TypeError, match="check must be True or False, got 'yes'"):
        explain(posenc.MODELS["gpt-oss-20b"], check="yes")
