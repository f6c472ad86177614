"""Checks on a model config before posenc reads it: limits that keep the reading bounded, and the reference's refusals.

A ``config.json`` can be hostile or broken: nested a hundred thousand levels deep, a 400-digit
``rope_theta``, a billion layers, ``NaN``, a string where a number belongs. posenc's readers
(:func:`posenc.from_config` and the family rules) assume sizes a real model has; these checks run
first, on the raw config, and raise a ``TypeError`` (wrong kind of value) or ``ValueError`` (right
kind, wrong value) whose message names the field, shows the value and says what is allowed, in
time and memory proportional to the config's size.

* :func:`read_config_file`: a path to the config's dict (the command line): a regular file of at
  most :data:`MAX_FILE_BYTES`, UTF-8, JSON of at most :data:`MAX_CONTAINERS` objects and lists nested at
  most :data:`MAX_DEPTH` levels (counted in the text, before it is parsed), an object; a folder is read
  through its ``config.json``.
* :func:`check_config_limits`: what any reading needs (:func:`posenc.from_config` can call it first):
  the same nesting and count of objects and lists; at most :data:`MAX_LAYERS` layers and
  :data:`MAX_LAYER_TYPES` kinds of layer; head sizes at most :data:`MAX_HEAD_DIM` (given, or
  ``hidden_size / num_attention_heads``), hidden sizes and head counts at most :data:`MAX_SIZE`; every
  number posenc reads a number (not a string or a boolean), finite and at most :data:`MAX_NUMBER` in size
  (so that no arithmetic on it overflows float64); the lists the family rules index one entry per layer,
  and no list longer than a real model could use (its checks then stay fast).
* :func:`check_explainable`: what ``python -m posenc explain`` adds, following the reference library
  (``transformers`` 5.23), which refuses these configs when it builds the config or the model: at least
  one layer; ``layer_types`` entries from ``configuration_utils.ALLOWED_ATTN_LAYER_TYPES`` (after its
  legacy renames; three families narrow the list), ``mlp_layer_types`` from ``ALLOWED_MLP_LAYER_TYPES``;
  the keys ``modeling_rope_utils``' ``_validate_<rope_type>_rope_parameters`` require.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ._validation import show_value

__all__ = [
    "ALLOWED_ATTN_LAYER_TYPES",
    "ALLOWED_MLP_LAYER_TYPES",
    "MAX_CONTAINERS",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_HEAD_DIM",
    "MAX_LAYERS",
    "MAX_LAYER_TYPES",
    "MAX_NUMBER",
    "MAX_SIZE",
    "ConfigError",
    "check_config_limits",
    "check_explainable",
    "read_config_file",
]

#: The largest config file read: real ``config.json`` files are a few kB (the largest, with per-pair
#: LongRoPE factors or thousands of labels, under 1 MB). Python holds a JSON file of this size in at most
#: about 100 MB (short strings or floats, one per few bytes).
MAX_FILE_BYTES = 8 * 2**20
#: Objects and lists inside each other: a real config nests a few levels (multimodal, per-layer-type rope).
MAX_DEPTH = 32
#: Objects and lists in all: a real config holds a few hundred (each a Python object to build and to walk).
MAX_CONTAINERS = 100_000
#: Kinds of layer in ``layer_types`` (each may have rope parameters, and speeds, of its own): real models use a few.
MAX_LAYER_TYPES = 64
#: Layers: real models have at most a few hundred.
MAX_LAYERS = 10_000
#: Head sizes (the dimensions a rotation sees): real models' are at most a few hundred.
MAX_HEAD_DIM = 2**16
#: Hidden sizes and head counts: real models' are at most tens of thousands.
MAX_SIZE = 2**20
#: Any other number posenc reads (lengths, bases, factors): 2^53, the largest integer float64 holds exactly;
#: real configs' numbers are far smaller, and arithmetic on numbers this size stays finite.
MAX_NUMBER = 2**53

#: ``transformers`` 5.23, ``configuration_utils.ALLOWED_ATTN_LAYER_TYPES``: what ``validate_layer_type``
#: accepts in ``layer_types`` (tests/test_explain_hostile.py checks the copy against the installed library).
ALLOWED_ATTN_LAYER_TYPES = (
    "full_attention",
    "sliding_attention",
    "chunked_attention",
    "window_attention",
    "indexed_attention",
    "compressed_sparse_attention",
    "heavily_compressed_attention",
    "minimax_m3_sparse",
    "conv",
    "moe",
    "hybrid",
    "hybrid_sliding",
    "reference_sliding_attention",
    "linear_attention",
)
#: ``configuration_utils.ALLOWED_MLP_LAYER_TYPES``: what it accepts in ``mlp_layer_types``.
ALLOWED_MLP_LAYER_TYPES = ("sparse", "dense")
#: ``configuration_utils._LEGACY_LAYER_TYPE_REMAP``: names renamed before the check.
LEGACY_LAYER_TYPES = {
    "mamba": "linear_attention",
    "attention": "full_attention",
    "deepseek_sparse_attention": "indexed_attention",
    "qwen_sparse_attention": "indexed_attention",
}
#: Families whose configuration class overrides ``validate_layer_type``: (layer_types, mlp_layer_types or None).
FAMILY_LAYER_TYPES = {
    # configuration_nemotron_h.py: {"full_attention", "linear_attention", "moe", "mlp"}; mlp_layer_types unchecked
    "nemotron_h": (("full_attention", "linear_attention", "moe", "mlp"), None),
    # configuration_neomme.py: NEOMME_LAYER_TYPES
    "neomme": (("full_attention", "sliding_attention"), None),
    # configuration_deepseek_v4.py: DEEPSEEK_V4_LAYER_TYPES, DEEPSEEK_V4_MLP_LAYER_TYPES
    "deepseek_v4": (
        ("sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"),
        ("hash_moe", "moe"),
    ),
}
#: ``_validate_<rope_type>_rope_parameters``: the keys each requires besides rope_type, rope_theta and
#: original_max_position_embeddings (``standardize_rope_params`` fills those in); a missing one is a KeyError.
REQUIRED_ROPE_KEYS = {
    "linear": ("factor",),
    "dynamic": ("factor",),
    "yarn": ("factor",),
    "llama3": ("factor", "low_freq_factor", "high_freq_factor"),
    "longrope": ("short_factor", "long_factor"),
}

_LAYER_KEYS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers")  # the first one set is the count
_HEAD_DIMS = ("head_dim", "global_head_dim", "qk_rope_head_dim", "qk_nope_head_dim", "kv_channels", "rotary_dim")
_HIDDEN = ("hidden_size", "n_embd", "d_model")
_HEADS = ("num_attention_heads", "n_head", "n_heads", "num_heads")
_SIZES = _HIDDEN + _HEADS
_LAYER_PERIODS = (  # layer counts and layer periods of the family rules
    "first_k_dense_replace",
    "prefix_dense_sliding_window_pattern",
    "no_rope_layer_interval",
    "global_attn_every_n_layers",
    "full_attention_interval",
    "layer_group_size",
)
_LENGTHS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "original_max_position_embeddings",
    "sliding_window",
    "attention_chunk_size",
    "seq_length",
)
_REALS = (
    "rope_theta",
    "rotary_emb_base",
    "rope_local_base_freq",
    "global_rope_theta",
    "local_rope_theta",
    "partial_rotary_factor",
    "rotary_pct",
)
#: Query-scale numbers the family rules read as they are: (lower bound, strictly above) as their functions check.
_QUERY_SCALES = {
    "floor_scale": (None, 0.0),  # posenc.attention_temperature_scale: floor_scale > 0 (it divides by it)
    "attn_scale": (0.0, None),  # attn_scale >= 0
}
_STRING_LISTS = ("layer_types", "mlp_layer_types", "block_types")
_INTEGER_LISTS = ("cross_attention_layers", "full_attn_idxs", "no_rope_layers")
#: Numbers inside rope_scaling / rope_parameters (flat, or one level down per layer type).
_ROPE_REALS = (
    "rope_theta",
    "factor",
    "partial_rotary_factor",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "attention_factor",
    "low_freq_factor",
    "high_freq_factor",
    "llama_4_scaling_beta",
    "extrapolation_factor",
)
_ROPE_INTEGERS = ("original_max_position_embeddings",)
_ROPE_NUMBER_LISTS = ("short_factor", "long_factor", "mrope_section")


class ConfigError(ValueError):
    """A path or file that is not a model config (the command line prints it as one line)."""


# --- showing values -----------------------------------------------------------------------------------


def _show(value) -> str:
    """A number short enough for a one-line message (a 400-digit integer as its size)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and abs(value) >= 10**15:
        digits = int(int(value).bit_length() * 0.30103) + 1
        return f"an integer of about {digits} digits"
    if isinstance(value, float) and abs(value) >= 1e15:
        return f"{value:.3g}"
    return show_value(value)


def _key_path(keys) -> str:
    return "config" + "".join(f"[{k!r}]" if isinstance(k, str) else f"[{k}]" for k in keys)


# --- one value ------------------------------------------------------------------------------------------


def _integer(name: str, value, maximum: int, why: str, minimum: int | None = None) -> int:
    """An integer (4096.0 too: JSON writers store some) from ``minimum`` to ``maximum``.

    Without ``minimum`` the lower bound is left to the reader, whose message says what the field allows.
    """
    given = value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {show_value(value)} of type {type(value).__name__}")
    if value > maximum:
        raise ValueError(f"{name} = {_show(given)} is more than posenc reads: at most {maximum:,} ({why})")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {_show(given)}")
    return int(value)


def _real(name: str, value, minimum: float | None = None, strictly_above: float | None = None) -> float:
    """A real number, not a boolean or a string, finite and at most MAX_NUMBER in size (and above a bound)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {show_value(value)} of type {type(value).__name__}")
    beyond = "is beyond what posenc reads: at most 2^53 (about 9.0e15) in size"
    if isinstance(value, numbers.Integral) and abs(value) > MAX_NUMBER:
        raise ValueError(f"{name} = {_show(value)} {beyond}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value} (JSON has no NaN or Infinity; 1e999 reads as inf)")
    if abs(value) > MAX_NUMBER:
        raise ValueError(f"{name} = {_show(value)} {beyond}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum:g}, got {value:g}")
    if strictly_above is not None and value <= strictly_above:
        raise ValueError(f"{name} must be > {strictly_above:g}, got {value:g}")
    return value


def _list(name: str, value, what: str, maximum: int, why: str) -> list:
    """A list (or tuple) of at most ``maximum`` entries."""
    if not isinstance(value, list | tuple):
        raise TypeError(f"{name} must be a list of {what}, got {show_value(value)}")
    if len(value) > maximum:
        raise ValueError(f"{name} has {len(value):,} entries; posenc reads at most {maximum:,} ({why})")
    return list(value)


# --- the whole config --------------------------------------------------------------------------------------


def _as_mapping(config):
    from .models import ModelEntry

    if isinstance(config, ModelEntry):  # a posenc.MODELS entry: its config
        config = config.config
    if hasattr(config, "to_dict") and callable(config.to_dict) and not isinstance(config, Mapping):
        config = config.to_dict()  # a transformers config object, as posenc.from_config reads it
    return config


_SCALARS = frozenset((str, int, float, bool, type(None)))  # most of a config: skipped by type, at C speed


def _check_depth(config: Mapping) -> None:
    """At most MAX_DEPTH levels of objects and lists (the top object is level 1), MAX_CONTAINERS in all; iterative."""
    stack = [(config, 1, ())]
    containers = 0
    while stack:
        value, depth, keys = stack.pop()
        containers += 1
        if containers > MAX_CONTAINERS:
            raise ValueError(
                f"the config holds more than {MAX_CONTAINERS:,} objects and lists; posenc reads at most "
                f"{MAX_CONTAINERS:,} (a model config holds a few hundred)"
            )
        if depth > MAX_DEPTH:
            shown = _key_path(keys) + ("..." if depth - 1 > len(keys) else "")
            raise ValueError(
                f"{shown}: the config nests objects and lists more than {MAX_DEPTH} levels deep; posenc reads at "
                f"most {MAX_DEPTH} (a model config nests a few)"
            )
        entries = value.values() if isinstance(value, Mapping) else value
        if set(map(type, entries)) <= _SCALARS:  # a list of 8 million numbers: a quarter of a second
            continue
        items = value.items() if isinstance(value, Mapping) else enumerate(value)
        for key, child in items:
            if isinstance(child, Mapping | list | tuple):
                stack.append((child, depth + 1, (*keys, key) if depth <= 3 else keys))


def _text(config) -> tuple[dict | None, str]:
    """The language model's config and the prefix that names its fields ("config['text_config']").

    ``(None, "config")`` where :func:`posenc.config.text_config` finds none (no layer count): the reader
    says so itself, or reads the config another way (an encoder-decoder model's two stacks).
    """
    from ._config_text import text_config

    try:
        text, path = text_config(config)
    except (TypeError, ValueError):
        return None, "config"
    return text, _key_path(path.split(".")) if path else "config"


def _layer_count(text: Mapping, where: str) -> tuple[str, object]:
    key = next((k for k in _LAYER_KEYS if text.get(k) is not None), _LAYER_KEYS[0])
    return f"{where}[{key!r}]", text.get(key)


def _check_rope_dict(name: str, params: Mapping, nested: bool = True) -> None:
    for key, value in params.items():
        if value is None:
            continue
        field = f"{name}[{key!r}]"
        if isinstance(value, Mapping):
            if nested:  # rope parameters per layer type
                _check_rope_dict(field, value, nested=False)
        elif key == "llama_4_scaling_beta":  # posenc.llama_4_scaling_query_scale: beta >= 0
            _real(field, value, minimum=0.0)
        elif key in _ROPE_REALS:
            _real(field, value)
        elif key in _ROPE_INTEGERS:
            _integer(field, value, MAX_NUMBER, "a length in tokens")
        elif key in _ROPE_NUMBER_LISTS and isinstance(value, list | tuple):
            _list(field, value, "numbers", MAX_HEAD_DIM, "at most one per rotated pair")
            for i, entry in enumerate(value):
                if isinstance(entry, numbers.Real) and not isinstance(entry, bool):
                    _real(f"{field}[{i}]", entry)


def check_config_limits(config, seq_len=None) -> None:
    """Refuse, naming the field, a config whose reading would not be bounded or would fail inside posenc.

    ``config``: what :func:`posenc.from_config` takes: a config dict (a multimodal one too: its language
    model's fields are checked), a ``transformers`` config object or a :data:`posenc.MODELS` entry;
    anything else, and a config without a layer count, is left to the reader (only the nesting is
    checked). ``seq_len``: the current length, if given. Raises ``TypeError`` / ``ValueError`` (see the
    module docstring); returns None. Accepts 0 layers (:func:`posenc.from_config` returns an empty list).
    """
    config = _as_mapping(config)
    if not isinstance(config, Mapping):
        return
    if seq_len is not None:
        if isinstance(seq_len, bool) or not isinstance(seq_len, numbers.Integral):
            raise TypeError(f"seq_len must be an integer, got {show_value(seq_len)} of type {type(seq_len).__name__}")
        if seq_len > MAX_NUMBER:
            raise ValueError(f"seq_len = {_show(seq_len)} is more than posenc reads: at most 2^53 = {MAX_NUMBER:,}")
    _check_depth(config)
    text, where = _text(config)
    if text is None:
        return

    name, count = _layer_count(text, where)
    if count is not None:
        count = _integer(name, count, MAX_LAYERS, "real models have at most a few hundred layers")
    head_why = "real models' heads have at most a few hundred dimensions"
    for key in _HEAD_DIMS:
        if text.get(key) is not None:
            _integer(f"{where}[{key!r}]", text[key], MAX_HEAD_DIM, head_why)
    for key in _SIZES:
        if text.get(key) is not None:
            _integer(f"{where}[{key!r}]", text[key], MAX_SIZE, "real models' are at most tens of thousands")
    hidden = next((k for k in _HIDDEN if text.get(k) is not None), None)
    heads = next((k for k in _HEADS if text.get(k) is not None), None)
    if not text.get("head_dim") and hidden and heads and int(text[heads]) >= 1:  # the head size hidden / heads
        if int(text[hidden]) // int(text[heads]) > MAX_HEAD_DIM:
            raise ValueError(
                f"{where}[{hidden!r}] / {where}[{heads!r}] = {int(text[hidden])} / {int(text[heads])} is a head of "
                f"more dimensions than posenc reads: at most {MAX_HEAD_DIM:,} ({head_why})"
            )
    for key in _LAYER_PERIODS:
        if text.get(key) is not None:
            _integer(f"{where}[{key!r}]", text[key], MAX_LAYERS, "a count or period of layers", minimum=0)
    for key in _LENGTHS:
        if text.get(key) is not None:
            _integer(f"{where}[{key!r}]", text[key], MAX_NUMBER, "a length in tokens; 2^53")
    for key in _REALS:
        if text.get(key) is not None:
            _real(f"{where}[{key!r}]", text[key])
    for key, (minimum, above) in _QUERY_SCALES.items():
        if text.get(key) is not None:
            _real(f"{where}[{key!r}]", text[key], minimum=minimum, strictly_above=above)
    pattern = text.get("sliding_window_pattern")
    if isinstance(pattern, str):  # EXAONE 4's "LLLG": one letter per layer of the period
        if not pattern or set(pattern) - {"L", "G"}:
            raise ValueError(
                f"{where}['sliding_window_pattern'] must be an integer or letters L (local) and G (global), "
                f"got {show_value(pattern)}"
            )
    elif pattern is not None:
        _integer(f"{where}['sliding_window_pattern']", pattern, MAX_LAYERS, "a period of layers")

    for key in _STRING_LISTS:
        if text.get(key) is not None:
            entries = _list(f"{where}[{key!r}]", text[key], "strings", MAX_LAYERS, "one per layer")
            if not set(map(type, entries)) <= {str}:
                bad = next(i for i, t in enumerate(entries) if not isinstance(t, str))
                raise TypeError(
                    f"{where}[{key!r}] must be a list of strings, got {show_value(entries[bad])} at index {bad}"
                )
            if key == "mlp_layer_types" and count is not None and len(entries) != count:
                raise ValueError(f"{where}[{key!r}] must have one entry per layer ({count}), got {len(entries)}")
            if key == "layer_types" and len(set(entries)) > MAX_LAYER_TYPES:  # each may have its own rotation
                raise ValueError(
                    f"{where}['layer_types'] names {len(set(entries)):,} kinds of layer; posenc reads at most "
                    f"{MAX_LAYER_TYPES} (real models have at most a few)"
                )
    for key in _INTEGER_LISTS:
        if text.get(key) is not None:
            entries = _list(f"{where}[{key!r}]", text[key], "integers", MAX_LAYERS, "at most one per layer")
            for i, entry in enumerate(entries):
                _integer(f"{where}[{key!r}][{i}]", entry, MAX_NUMBER, "a layer index")
    if text.get("layer_rope_theta") is not None:
        entries = _list(
            f"{where}['layer_rope_theta']", text["layer_rope_theta"], "numbers", MAX_LAYERS, "one per layer"
        )
        if count is not None and len(entries) != count:
            raise ValueError(f"{where}['layer_rope_theta'] must have one entry per layer ({count}), got {len(entries)}")
        for i, entry in enumerate(entries):
            _real(f"{where}['layer_rope_theta'][{i}]", entry)

    for source in ("rope_scaling", "rope_parameters"):
        params = text.get(source)
        if params is None:
            continue
        if not isinstance(params, Mapping):
            raise TypeError(f"{where}[{source!r}] must be a mapping or null, got {show_value(params)}")
        _check_rope_dict(f"{where}[{source!r}]", params)


def check_explainable(config) -> None:
    """What ``python -m posenc explain`` refuses besides :func:`check_config_limits`, as ``transformers`` 5.23 does.

    At least one layer; ``layer_types`` and ``mlp_layer_types`` entries that ``validate_layer_type``
    accepts; the rope parameters' keys that ``_validate_<rope_type>_rope_parameters`` require (YaRN
    without ``factor``: the library raises a KeyError; posenc's reader would take max / L).
    """
    from .config_families import text_model_type

    config = _as_mapping(config)
    if not isinstance(config, Mapping):
        return
    text, where = _text(config)
    if text is None:
        return
    name, count = _layer_count(text, where)
    if isinstance(count, float) and count.is_integer():
        count = int(count)
    if isinstance(count, numbers.Integral) and not isinstance(count, bool) and count < 1:
        raise ValueError(f"{name} must be an integer >= 1 (explain needs at least one layer), got {count}")

    model_type = text.get("model_type")
    model_type = text_model_type(model_type) if isinstance(model_type, str) else None
    attention, mlp = FAMILY_LAYER_TYPES.get(model_type, (ALLOWED_ATTN_LAYER_TYPES, ALLOWED_MLP_LAYER_TYPES))
    if text.get("layer_types") is not None:  # transformers checks mlp_layer_types only then
        for key, allowed in (("layer_types", attention), ("mlp_layer_types", mlp)):
            entries = text.get(key)
            if allowed is None or not isinstance(entries, list | tuple):
                continue
            for i, entry in enumerate(entries):
                if not isinstance(entry, str) or LEGACY_LAYER_TYPES.get(entry, entry) not in allowed:
                    whose = "transformers"
                    if model_type in FAMILY_LAYER_TYPES:
                        whose = f"{model_type}'s configuration class"
                    raise ValueError(
                        f"{where}[{key!r}][{i}] = {show_value(entry)} is not a layer type {whose} accepts: one of "
                        f"{', '.join(allowed)}"
                    )

    source = "rope_scaling" if text.get("rope_scaling") else "rope_parameters"  # convert_rope_params_to_dict
    params = text.get(source)
    if not isinstance(params, Mapping):
        return
    dicts = [(f"{where}[{source!r}]", params)]
    dicts += [(f"{where}[{source!r}][{key!r}]", sub) for key, sub in params.items() if isinstance(sub, Mapping)]
    for field, sub in dicts:
        rope_type = sub.get("rope_type", sub.get("type"))
        missing = [key for key in REQUIRED_ROPE_KEYS.get(rope_type, ()) if sub.get(key) is None]
        if missing:
            raise ValueError(
                f"{field} has rope_type {rope_type!r} without {', '.join(repr(k) for k in missing)}: transformers "
                f"5.23 refuses it (its _validate_{rope_type}_rope_parameters requires "
                f"{', '.join(REQUIRED_ROPE_KEYS[rope_type])})"
            )


# --- the file -------------------------------------------------------------------------------------------------

_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _json_shape(text: str) -> tuple[int, int | None]:
    """(objects and lists, deepest nesting) of JSON text, its strings left out, before it is parsed.

    Regular expressions and ``str.count`` do the work (C speed, linear); the nesting is counted only when
    the number of objects and lists is within :data:`MAX_CONTAINERS` (else None).
    """
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    containers = brackets.count("[") + brackets.count("{")
    if containers > MAX_CONTAINERS or len(brackets) > 2 * MAX_CONTAINERS + 2:
        return containers, None  # too many, or more closing than opening brackets (not JSON)
    codes = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1).astype(np.int32)
    return containers, int(np.cumsum(steps).max()) if steps.size else 0


def read_config_file(path) -> dict:
    """The JSON object in ``path`` (a folder: its ``config.json``); a one-line :class:`ConfigError` otherwise.

    Refuses, before reading, anything but a regular file of at most :data:`MAX_FILE_BYTES`; before parsing,
    text that is not UTF-8 or holds more than :data:`MAX_CONTAINERS` objects and lists or nests them deeper
    than :data:`MAX_DEPTH`; then text that is not JSON or not an object.
    """
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, ValueError) as error:  # a name too long, a NUL in it, a loop of links
        raise ConfigError(f"{path}: cannot be read ({getattr(error, 'strerror', None) or error})") from None
    if stat.S_ISDIR(info.st_mode):
        candidate = path / "config.json"
        if not candidate.is_file():
            raise ConfigError(f"{path}: a folder without config.json")
        path, info = candidate, candidate.stat()
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path}: not a regular file (a model config is a JSON file)")
    limit = f"posenc reads config files of at most {MAX_FILE_BYTES // 2**20} MiB (a config.json is a few kB)"
    if info.st_size > MAX_FILE_BYTES:
        raise ConfigError(f"{path}: {info.st_size:,} bytes; {limit}")
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)  # the file may have grown since stat
    except PermissionError:
        raise ConfigError(f"{path}: not readable (permission denied)") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read ({error.strerror or error})") from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(f"{path}: more than {MAX_FILE_BYTES:,} bytes; {limit}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte {error.start} cannot be decoded); a model config is JSON in UTF-8"
        ) from None
    containers, depth = _json_shape(text)
    if containers > MAX_CONTAINERS:
        raise ConfigError(
            f"{path}: {containers:,} JSON objects and lists; posenc reads configs of at most {MAX_CONTAINERS:,} "
            "(a model config holds a few hundred)"
        )
    if depth is not None and depth > MAX_DEPTH:
        raise ConfigError(
            f"{path}: JSON nested {depth:,} levels deep; posenc reads configs nested at most {MAX_DEPTH} levels "
            "(a model config nests a few)"
        )
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path}: not valid JSON ({error.msg} at line {error.lineno})") from None
    except RecursionError:  # not counted above (brackets the scan could not pair): Python's reader gave up
        raise ConfigError(
            f"{path}: JSON nested hundreds of levels deep; posenc reads configs nested at most {MAX_DEPTH} levels "
            "(a model config nests a few)"
        ) from None
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        digits = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 4300
        raise ConfigError(
            f"{path}: a number with more than {digits} digits; posenc reads numbers up to 2^53 (about 9.0e15)"
        ) from None
    if not isinstance(value, dict):
        kind = {type(None): "null", str: "string", bool: "boolean", int: "number", float: "number"}
        raise ConfigError(f"{path}: a JSON {kind.get(type(value), 'list')}, not an object; a model config is an object")
    return value


def writable_folder(path: Path) -> str | None:
    """Why a file cannot be written at ``path`` (its folder missing, not a folder, not writable), or None."""
    folder = path.parent
    if path.is_dir():
        return f"{path} is a folder; name a file in it"
    if not folder.exists():
        return f"the folder {folder} does not exist"
    if not folder.is_dir():
        return f"{folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"{path if path.exists() else folder} is not writable"
    return None
