"""``python -m posenc explain`` on hostile and broken input: one line on stderr, exit status 1, bounded work.

Every input below runs through ``posenc.__main__.main`` in this process. Each must end with exit status 1,
nothing on stdout, exactly one line on stderr that starts with "error: ", names the field (or argument) and
the value or what is allowed, no traceback, and not the last-resort line that reports a bug in posenc (so
each is refused by a check made for it). The inputs that would run without bound (a billion layers, a
billion-layer dense prefix) are shown to be refused before any per-layer work: the reading function is
replaced by one that fails, and the refusal names posenc's cap. Nothing here is timed; the times measured
by hand are in the change's report.
"""

import json
import os
import sys

import pytest

import posenc
import posenc.explain
from posenc import _config_guard as guard
from posenc.__main__ import main

BASE = {"model_type": "llama", "num_hidden_layers": 2, "head_dim": 64, "rope_theta": 10000.0}
NO_TYPE = {"num_hidden_layers": 2, "head_dim": 64, "rope_theta": 10000.0}  # read generically: no class defaults


def refused(capsys, argv) -> str:
    """Run the command; check the shape of a refusal; return its one line."""
    code = main(argv)
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert code == 1, (code, out[:200], err)
    assert out == "", out[:200]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and "bug in posenc" not in err, err
    return lines[0]


def nested(depth: int, inner=None) -> dict:
    config = dict(inner or NO_TYPE)
    for _ in range(depth):
        config = {"text_config": config}
    return config


# (id, config written as JSON (a str is written as it is), pieces the line must contain)
CONFIGS = [
    # not a model config at all
    ("empty object", {}, ["needs 'num_hidden_layers'"]),
    ("JSON array", [1, 2, 3], ["a JSON list, not an object"]),
    ("JSON null", None, ["a JSON null, not an object"]),
    ("JSON string", '"a config"', ["a JSON string, not an object"]),
    ("not JSON", "{bad json", ["not valid JSON (Expecting property name"]),
    ("empty file", "", ["not valid JSON (Expecting value at line 1)"]),
    ("two objects", "{}{}", ["not valid JSON (Extra data"]),
    ("arrays 100,000 deep", "[" * 100_000 + "]" * 100_000, ["JSON nested 100,000 levels deep", "at most 32 levels"]),
    (
        "objects 50,000 deep in a field",
        '{"num_hidden_layers": 2, "x": ' + '{"a": ' * 50_000 + "1" + "}" * 50_000 + "}",
        ["JSON nested 50,001 levels deep", "at most 32 levels"],
    ),
    ("text_config 50 deep", nested(50), ["JSON nested 51 levels deep", "at most 32 levels"]),
    (
        "a million empty lists (and one more, its list and the object)",
        '{"num_hidden_layers": 2, "x": [' + "[], " * 1_000_000 + "[]]}",
        ["1,000,003 JSON objects and lists; posenc reads configs of at most 100,000"],
    ),
    ("300,000 brackets never closed", "[" * 300_000, ["300,000 JSON objects and lists"]),
    ("an integer of 5,000 digits", '{"num_hidden_layers": 2, "vocab_size": ' + "7" * 5000 + "}", ["4300 digits"]),
    ("model_type not a string", {**BASE, "model_type": 3}, ["config['model_type'] must be a string, got 3"]),
    # the layer count
    (
        "a billion layers",
        {**BASE, "num_hidden_layers": 10**9},
        ["config['num_hidden_layers'] = 1000000000", "at most 10,000"],
    ),
    (
        "a billion layers as 1e9",
        '{"model_type": "llama", "num_hidden_layers": 1e9, "head_dim": 64}',
        ["config['num_hidden_layers'] = 1000000000.0", "at most 10,000"],
    ),
    (
        "a billion layers in text_config",
        {"model_type": "some_vlm", "text_config": {**BASE, "num_hidden_layers": 10**9}},
        ["config['text_config']['num_hidden_layers'] = 1000000000", "at most 10,000"],
    ),
    ("0 layers", {**BASE, "num_hidden_layers": 0}, ["config['num_hidden_layers'] must be an integer >= 1", "got 0"]),
    ("-3 layers", {**BASE, "num_hidden_layers": -3}, ["config['num_hidden_layers'] must be an integer >= 1", "-3"]),
    ("layers as a string", {**BASE, "num_hidden_layers": "32"}, ["num_hidden_layers'] must be an integer, got '32'"]),
    ("layers as a boolean", {**BASE, "num_hidden_layers": True}, ["num_hidden_layers'] must be an integer, got True"]),
    ("2.5 layers", {**BASE, "num_hidden_layers": 2.5}, ["num_hidden_layers'] must be an integer, got 2.5"]),
    # the base
    (
        "rope_theta of 400 digits",
        '{"model_type": "llama", "num_hidden_layers": 2, "head_dim": 64, "rope_theta": 1' + "0" * 400 + "}",
        ["config['rope_theta'] = an integer of about 401 digits", "at most 2^53"],
    ),
    (
        "rope_theta 1e999",
        '{"num_hidden_layers": 2, "head_dim": 64, "rope_theta": 1e999}',
        ["rope_theta'] must be finite, got inf"],
    ),
    (
        "rope_theta NaN",
        '{"num_hidden_layers": 2, "head_dim": 64, "rope_theta": NaN}',
        ["rope_theta'] must be finite, got nan"],
    ),
    (
        "rope_theta -Infinity",
        '{"num_hidden_layers": 2, "head_dim": 64, "rope_theta": -Infinity}',
        ["rope_theta'] must be finite, got -inf"],
    ),
    ("rope_theta 1e300", {**BASE, "rope_theta": 1e300}, ["config['rope_theta'] = 1e+300", "at most 2^53"]),
    ("rope_theta a string", {**BASE, "rope_theta": "10000"}, ["rope_theta'] must be a real number, got '10000'"]),
    ("rope_theta a boolean", {**BASE, "rope_theta": True}, ["rope_theta'] must be a real number, got True"]),
    ("rope_theta a list", {**BASE, "rope_theta": [10000]}, ["rope_theta'] must be a real number, got [10000]"]),
    ("rope_theta 0", {**BASE, "rope_theta": 0}, ["config['rope_theta'] must be > 1.0, got 0.0"]),
    ("rope_theta 1", {**BASE, "rope_theta": 1}, ["config['rope_theta'] must be > 1.0, got 1.0"]),
    ("rope_theta negative", {**BASE, "rope_theta": -5}, ["config['rope_theta'] must be > 1.0, got -5.0"]),
    ("rope_theta missing", NO_TYPE | {"rope_theta": None}, ["no RoPE base", "rope_theta"]),
    # the rope parameters
    ("rope_scaling a list", {**BASE, "rope_scaling": [1, 2]}, ["config['rope_scaling'] must be a mapping or null"]),
    ("rope_type a number", {**BASE, "rope_scaling": {"rope_type": 3}}, ["rope_scaling['rope_type'] must be a string"]),
    ("rope_type unknown", {**BASE, "rope_scaling": {"rope_type": "bogus", "factor": 2.0}}, ["rope_type", "'bogus'"]),
    (
        "YaRN without factor",
        {**BASE, "max_position_embeddings": 8192, "rope_scaling": {"rope_type": "yarn"}},
        ["config['rope_scaling'] has rope_type 'yarn' without 'factor'", "transformers 5.23 refuses it"],
    ),
    (
        "YaRN without factor, nested by layer type",
        {
            **BASE,
            "layer_types": ["full_attention", "sliding_attention"],
            "rope_parameters": {
                "full_attention": {"rope_type": "yarn", "rope_theta": 1e6},
                "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
            },
        },
        ["config['rope_parameters']['full_attention'] has rope_type 'yarn' without 'factor'"],
    ),
    (
        "Llama 3 without its frequency factors",
        {**BASE, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}},
        ["rope_type 'llama3' without 'low_freq_factor', 'high_freq_factor'"],
    ),
    (
        "factor a string",
        {**BASE, "rope_scaling": {"rope_type": "linear", "factor": "4"}},
        ["config['rope_scaling']['factor'] must be a real number, got '4'"],
    ),
    (
        "factor a string where DeepSeek compares it",
        {"model_type": "deepseek_v3", "num_hidden_layers": 2, "rope_scaling": {"type": "yarn", "factor": "40"}},
        ["config['rope_scaling']['factor'] must be a real number, got '40'"],
    ),
    (
        "factor 1e300",
        {**BASE, "rope_scaling": {"rope_type": "dynamic", "factor": 1e300}},
        ["config['rope_scaling']['factor'] = 1e+300", "at most 2^53"],
    ),
    ("factor 0", {**BASE, "rope_scaling": {"rope_type": "linear", "factor": 0}}, ["factor must be >= 1.0, got 0.0"]),
    (
        "a LongRoPE factor of 400 digits",
        '{"num_hidden_layers": 2, "head_dim": 4, "rope_theta": 100, "rope_scaling": {"rope_type": "longrope", '
        '"short_factor": [1, 1' + "0" * 400 + '], "long_factor": [1, 1], "original_max_position_embeddings": 8}}',
        ["config['rope_scaling']['short_factor'][1] = an integer of about 401 digits"],
    ),
    (
        "mrope_section not summing to the pairs",
        {**BASE, "rope_scaling": {"rope_type": "default", "mrope_section": [2, 2, 2]}},
        ["mrope_section'] must sum to the number of rotated pairs (32)"],
    ),
    ("partial_rotary_factor 0", {**BASE, "partial_rotary_factor": 0}, ["partial_rotary_factor'] must be in (0, 1]"]),
    ("partial_rotary_factor 2", {**BASE, "partial_rotary_factor": 2}, ["partial_rotary_factor'] must be in (0, 1]"]),
    (
        "dynamic NTK without max_position_embeddings",
        {**NO_TYPE, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}},
        ["rope_type 'dynamic' needs config['max_position_embeddings'], which is missing"],
    ),
    (
        "max_position_embeddings a string",
        {**BASE, "max_position_embeddings": "4096"},
        ["config['max_position_embeddings'] must be an integer, got '4096'"],
    ),
    (
        "max_position_embeddings of 301 digits",
        {**BASE, "max_position_embeddings": 10**300},
        ["config['max_position_embeddings'] = an integer of about 301 digits", "at most 9,007,199,254,740,992"],
    ),
    # the layer types
    (
        "layer_types of the wrong length",
        {**BASE, "layer_types": ["full_attention"]},
        ["config['layer_types'] must have one entry per layer (2), got 1"],
    ),
    (
        "layer_types with an unknown entry",
        {**BASE, "layer_types": ["full_attention", "bogus"]},
        ["config['layer_types'][1] = 'bogus' is not a layer type transformers accepts: one of full_attention"],
    ),
    ("layer_types a string", {**BASE, "layer_types": "full_attention"}, ["layer_types'] must be a list of strings"]),
    (
        "layer_types of 100 kinds",
        {**BASE, "num_hidden_layers": 100, "layer_types": [f"kind_{i}" for i in range(100)]},
        ["config['layer_types'] names 100 kinds of layer; posenc reads at most 64"],
    ),
    ("layer_types of numbers", {**BASE, "layer_types": [1, 2]}, ["layer_types'] must be a list of strings, got 1"]),
    # sizes
    ("head_dim 10^12", {**BASE, "head_dim": 10**12}, ["config['head_dim'] = 1000000000000", "at most 65,536"]),
    (
        "a head of a million dims from hidden_size / heads",
        {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 2**20, "num_attention_heads": 1},
        ["config['hidden_size'] / config['num_attention_heads'] = 1048576 / 1", "at most 65,536"],
    ),
    (
        "hidden_size 10^12",
        {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 10**12, "num_attention_heads": 8},
        ["config['hidden_size'] = 1000000000000", "at most 1,048,576"],
    ),
    ("head_dim negative", {**BASE, "head_dim": -64}, ["config['head_dim'] must be an integer >= 2, got -64"]),
    ("head_dim odd", {**BASE, "head_dim": 65}, ["rotary_dim = int(65 * 1.0) = 65; it must be even"]),
    ("head_dim a string", {**BASE, "head_dim": "64"}, ["config['head_dim'] must be an integer, got '64'"]),
    (
        "hidden_size not a multiple of the heads",
        {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 65, "num_attention_heads": 2},
        ["config['hidden_size'] (65) must be a multiple of config['num_attention_heads'] (2)"],
    ),
    (
        "no attention heads",
        {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 0},
        ["config['num_attention_heads'] must be an integer >= 1, got 0"],
    ),
    (
        "sliding_window a string",
        {**BASE, "layer_types": ["sliding_attention", "full_attention"], "sliding_window": "4096"},
        ["config['sliding_window'] must be an integer, got '4096'"],
    ),
    # fields of the family rules that are read as they are
    (
        "Llama 4's floor_scale 0",
        {"model_type": "llama4_text", "num_hidden_layers": 4, "attn_temperature_tuning": True, "floor_scale": 0},
        ["config['floor_scale'] must be > 0, got 0"],
    ),
    (
        "Llama 4's floor_scale a string",
        {"model_type": "llama4_text", "num_hidden_layers": 4, "attn_temperature_tuning": True, "floor_scale": "x"},
        ["config['floor_scale'] must be a real number, got 'x'"],
    ),
    (
        "EXAONE 4's empty layer pattern",
        {"model_type": "exaone4", "num_hidden_layers": 4, "sliding_window": 128, "sliding_window_pattern": ""},
        ["config['sliding_window_pattern'] must be an integer or letters L (local) and G (global), got ''"],
    ),
    (
        "a billion dense prefix layers",
        {"model_type": "cohere2_moe", "num_hidden_layers": 4, "first_k_dense_replace": 10**9},
        ["config['first_k_dense_replace'] = 1000000000", "at most 10,000"],
    ),
    (
        "mlp_layer_types shorter than the layers",
        {"model_type": "cohere2_moe", "num_hidden_layers": 4, "mlp_layer_types": ["dense"]},
        ["config['mlp_layer_types'] must have one entry per layer (4), got 1"],
    ),
    (
        "Mllama's cross_attention_layers a number",
        {"model_type": "mllama_text_model", "num_hidden_layers": 4, "cross_attention_layers": 3},
        ["config['cross_attention_layers'] must be a list of integers, got 3"],
    ),
    (
        "a million cross-attention layer indices",
        {"model_type": "mllama_text_model", "num_hidden_layers": 4, "cross_attention_layers": [3] * 1_000_000},
        ["config['cross_attention_layers'] has 1,000,000 entries; posenc reads at most 10,000"],
    ),
    (
        "LongRoPE factors for 100,000 pairs",
        {
            **BASE,
            "rope_scaling": {"rope_type": "longrope", "short_factor": [1.0] * 100_000, "long_factor": [1.0] * 32},
        },
        ["config['rope_scaling']['short_factor'] has 100,000 entries; posenc reads at most 65,536"],
    ),
    (
        "Gemma 4's global_head_dim 10^12",
        {"model_type": "gemma4_text", "num_hidden_layers": 6, "global_head_dim": 10**12},
        ["config['global_head_dim'] = 1000000000000", "at most 65,536"],
    ),
    (
        "Ministral 3's llama_4_scaling_beta a string",
        {
            **BASE,
            "model_type": "ministral3",
            "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "llama_4_scaling_beta": "x"},
        },
        ["config['rope_parameters']['llama_4_scaling_beta'] must be a real number, got 'x'"],
    ),
    (
        "DeepSeek's mscale_all_dim a string",
        {
            "model_type": "deepseek_v3",
            "num_hidden_layers": 2,
            "rope_scaling": {"type": "yarn", "factor": 40, "mscale_all_dim": "x"},
        },
        ["config['rope_scaling']['mscale_all_dim'] must be a real number, got 'x'"],
    ),
    (
        "Qwen-1's log-n scale without its length",
        {
            "num_hidden_layers": 2,
            "hidden_size": 32,
            "num_attention_heads": 2,
            "rotary_emb_base": 1e4,
            "use_logn_attn": 1,
        },
        ["config['use_logn_attn'] needs config['seq_length']"],
    ),
]


@pytest.mark.parametrize("config,pieces", [c[1:] for c in CONFIGS], ids=[c[0] for c in CONFIGS])
def test_a_hostile_config_gets_one_line_naming_the_field_and_status_1(tmp_path, capsys, config, pieces):
    path = tmp_path / "config.json"
    path.write_text(config if isinstance(config, str) else json.dumps(config))
    for extra in ([], ["--json"]):
        line = refused(capsys, ["explain", str(path), *extra])
        assert line.startswith(f"error: {path}: "), line
        for piece in pieces:
            assert piece in line, (piece, line)


def test_there_are_at_least_thirty_hostile_configs():
    assert len(CONFIGS) >= 30 and len({c[0] for c in CONFIGS}) == len(CONFIGS)


@pytest.mark.parametrize(
    "config,field",
    [
        ({**BASE, "num_hidden_layers": 10**9}, "config['num_hidden_layers'] = 1000000000"),
        (
            {"model_type": "cohere2_moe", "num_hidden_layers": 4, "first_k_dense_replace": 10**9},
            "config['first_k_dense_replace'] = 1000000000",
        ),
    ],
)
def test_a_config_that_would_run_without_bound_is_refused_before_any_per_layer_work(
    tmp_path, capsys, monkeypatch, config, field
):
    # the structural bound: the refusal comes from the limits, before the config is read layer by layer
    def reading_must_not_start(*args, **kwargs):
        raise AssertionError("from_config was called")

    monkeypatch.setattr(posenc.explain, "from_config", reading_must_not_start)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    line = refused(capsys, ["explain", str(path)])
    assert field in line and f"at most {guard.MAX_LAYERS:,}" in line, line


# --- files that are not config files ----------------------------------------------------------------------


def test_a_missing_path_a_folder_without_config_json_and_a_binary_file(tmp_path, capsys):
    assert (
        refused(capsys, ["explain", str(tmp_path / "missing.json")])
        == f"error: {tmp_path / 'missing.json'}: no such file"
    )
    assert refused(capsys, ["explain", str(tmp_path)]) == f"error: {tmp_path}: a folder without config.json"
    binary = tmp_path / "model.safetensors"
    binary.write_bytes(bytes(range(256)) * 64)
    line = refused(capsys, ["explain", str(binary)])
    assert line.startswith(f"error: {binary}: not UTF-8 text (byte 128 cannot be decoded)"), line


def test_a_200_mb_file_is_refused_by_its_size_without_being_read(tmp_path, capsys):
    path = tmp_path / "config.json"
    with open(path, "wb") as file:  # sparse: 200 MB on paper, nothing on disk
        file.truncate(200_000_000)
    line = refused(capsys, ["explain", str(path)])
    # the size from stat ("200,000,000 bytes"); a file read to its end would say "more than ... bytes"
    assert line == (
        f"error: {path}: 200,000,000 bytes; posenc reads config files of at most 8 MiB (a config.json is a few kB)"
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_pipe_and_a_device_are_not_read(tmp_path, capsys):
    pipe = tmp_path / "config.json"
    os.mkfifo(pipe)  # reading it would wait for a writer forever
    assert (
        refused(capsys, ["explain", str(pipe)]) == f"error: {pipe}: not a regular file (a model config is a JSON file)"
    )
    if os.path.exists("/dev/zero"):  # endless
        assert "not a regular file" in refused(capsys, ["explain", "/dev/zero"])


def test_brackets_inside_strings_are_not_nesting(tmp_path, capsys):
    # a chat template or a tokenizer pattern full of brackets is text: the config is read
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**BASE, "chat_template": "[{" * 100_000 + '\\"]' + "}]" * 100_000}))
    assert main(["explain", str(path)]) == 0
    assert capsys.readouterr().out.startswith("llama: 2 layers")


def test_a_loop_of_links_and_an_unreadable_file(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.symlink_to(b)
    b.symlink_to(a)
    assert refused(capsys, ["explain", str(a)]).startswith(f"error: {a}: cannot be read (")
    if os.geteuid() != 0:  # root reads every file
        locked = tmp_path / "locked.json"
        locked.write_text(json.dumps(BASE))
        locked.chmod(0)
        assert refused(capsys, ["explain", str(locked)]) == f"error: {locked}: not readable (permission denied)"


# --- the arguments -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "-5", "abc", "1e5", "2.5", "", str(2**53 + 1), "9" * 5000])
def test_a_bad_seq_len_is_refused_before_the_config_is_read(tmp_path, capsys, value):
    # the config path does not exist: the argument is checked first
    line = refused(capsys, ["explain", str(tmp_path / "missing.json"), "--seq-len", value])
    assert line.startswith("error: --seq-len must be a whole number of tokens from 1 to 2^53, got '"), line
    assert len(line) < 200


def test_the_largest_seq_len_is_read(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({**BASE, "max_position_embeddings": 4096, "rope_scaling": {"type": "dynamic", "factor": 2}})
    )
    assert main(["explain", str(path), "--seq-len", str(2**53)]) == 0
    assert "dynamic NTK" in capsys.readouterr().out


@pytest.fixture
def config_path(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**BASE, "max_position_embeddings": 4096}))
    return path


def test_plot_into_a_missing_folder_is_refused_before_anything_is_printed_or_read(tmp_path, capsys, config_path):
    target = tmp_path / "no" / "such" / "fig.png"
    line = refused(capsys, ["explain", str(config_path), "--plot", str(target)])
    assert line == f"error: --plot {target}: the folder {target.parent} does not exist"
    assert not (tmp_path / "no").exists()
    # checked before the config: a bad config behind a bad --plot still gets the --plot line
    line = refused(capsys, ["explain", str(tmp_path / "missing.json"), "--plot", str(target)])
    assert line.startswith("error: --plot ")


def test_plot_with_an_unsupported_suffix_a_folder_or_a_file_for_a_folder(tmp_path, capsys, config_path):
    line = refused(capsys, ["explain", str(config_path), "--plot", str(tmp_path / "fig.gif")])
    assert line == (
        f"error: --plot {tmp_path / 'fig.gif'}: cannot write a '.gif' file; name a file ending in .png, .pdf, .svg, "
        ".jpg, .jpeg, .webp, .tif, .tiff (or with no suffix, for PNG)"
    )
    assert refused(capsys, ["explain", str(config_path), "--plot", str(tmp_path)]) == (
        f"error: --plot {tmp_path}: {tmp_path} is a folder; name a file in it"
    )
    line = refused(capsys, ["explain", str(config_path), "--plot", str(config_path / "fig.png")])
    assert line == f"error: --plot {config_path / 'fig.png'}: {config_path} is not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]


# --- the guard's own contract ---------------------------------------------------------------------------------


def test_the_copied_layer_types_and_rope_requirements_are_the_reference_librarys():
    configuration_utils = pytest.importorskip("transformers.configuration_utils")
    from transformers.models.deepseek_v4 import configuration_deepseek_v4 as deepseek_v4
    from transformers.models.neomme import configuration_neomme as neomme

    assert guard.ALLOWED_ATTN_LAYER_TYPES == configuration_utils.ALLOWED_ATTN_LAYER_TYPES
    assert guard.ALLOWED_MLP_LAYER_TYPES == configuration_utils.ALLOWED_MLP_LAYER_TYPES
    assert guard.LEGACY_LAYER_TYPES == configuration_utils._LEGACY_LAYER_TYPE_REMAP
    assert guard.FAMILY_LAYER_TYPES["neomme"][0] == neomme.NEOMME_LAYER_TYPES
    assert guard.FAMILY_LAYER_TYPES["deepseek_v4"] == (
        deepseek_v4.DEEPSEEK_V4_LAYER_TYPES,
        deepseek_v4.DEEPSEEK_V4_MLP_LAYER_TYPES,
    )


@pytest.mark.parametrize("rope_type", sorted(guard.REQUIRED_ROPE_KEYS))
def test_the_reference_refuses_each_rope_type_without_its_required_keys(rope_type):
    transformers = pytest.importorskip("transformers")
    full = {
        "rope_type": rope_type,
        "rope_theta": 10000.0,
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 1024,
        "short_factor": [1.0] * 2,
        "long_factor": [1.0] * 2,
    }
    small = dict(num_hidden_layers=1, hidden_size=4, num_attention_heads=1, max_position_embeddings=4096)
    for key in guard.REQUIRED_ROPE_KEYS[rope_type]:
        params = {k: v for k, v in full.items() if k != key}
        with pytest.raises(KeyError, match="Missing required keys"):
            transformers.LlamaConfig(**small, rope_parameters=params)
        config = {"model_type": "llama", **small, "rope_parameters": params}
        with pytest.raises(ValueError, match=f"rope_type '{rope_type}' without '{key}'"):
            guard.check_explainable(config)


def test_the_limits_accept_every_stored_config_and_zero_layers():
    # check_config_limits can run first in posenc.from_config: it refuses no real config, and from_config's
    # empty reading of 0 layers stays (explain alone needs a layer)
    for entry in posenc.MODELS.values():
        guard.check_config_limits(entry.config)
        if entry.scheme == "rope":
            guard.check_explainable(entry.config)
    zero = {**BASE, "num_hidden_layers": 0}
    guard.check_config_limits(zero)
    assert posenc.from_config(zero) == []
    with pytest.raises(ValueError, match="explain needs at least one layer"):
        guard.check_explainable(zero)


def test_the_limits_refuse_deep_python_objects_without_recursing():
    config = dict(NO_TYPE)
    deep = config
    for _ in range(sys.getrecursionlimit() * 2):  # deeper than any recursion could go
        deep["x"] = {}
        deep = deep["x"]
    with pytest.raises(ValueError, match=r"config\['x'\]\['x'\]\['x'\]\.\.\.: the config nests .* more than 32"):
        guard.check_config_limits(config)
    with pytest.raises(TypeError, match="seq_len must be an integer, got '5'"):
        guard.check_config_limits(BASE, seq_len="5")
