"""What a model does with positions, from its config: grouped layers, wavelengths, bands, traps.

:func:`explain` reads a config with :func:`posenc.from_config` and returns an :class:`Explanation`:
the layers grouped by what they do (one line per group), for each kind of rotating layer the
wavelengths of its fastest and slowest pair against the trained and the extended length and which
pairs the scaling method keeps, interpolates or blends, and warnings for the known traps. It computes
only; :func:`format_text` writes it as text, :meth:`Explanation.as_dict` as data (``--json``) and
:func:`plot_wavelengths_by_pair` draws the per-pair picture. ``python -m posenc explain CONFIG`` is the
command line (:mod:`posenc.__main__`).

It names no scaling method itself: what it says about one (its title, parameters and note, its
bands, its warnings) is what the method declares in :func:`posenc.scaling.scaling_method`, and the
bands are read from the method's own speeds (:func:`posenc.scaling.scaling_bands`).
"""

from __future__ import annotations

import itertools
import json
import math
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ._config_guard import ConfigError, check_config_limits, check_explainable, read_config_file, writable_folder
from ._family_defaults import TABLE, TRANSFORMERS_VERSION
from .config import QWEN_LOGN_POSITIONS, from_config, text_config
from .scaling import MethodSpec, scaling_bands, scaling_spec

__all__ = [
    "PLOT_FORMATS",
    "ConfigError",
    "Explanation",
    "LayerGroup",
    "RotationSummary",
    "explain",
    "format_text",
    "load_config",
    "plot_path",
    "plot_wavelengths_by_pair",
]


def load_config(path) -> dict:
    """The JSON object in ``path`` (a folder: its ``config.json``); a one-line :class:`ConfigError` otherwise.

    Refused before reading: a path that is missing, not a regular file or larger than 8 MiB; before parsing:
    text that is not UTF-8, or holds more than 100,000 objects and lists or nests them more than 32 levels
    deep; then text that is not JSON or not an object (:func:`posenc._config_guard.read_config_file`).
    """
    return read_config_file(path)


@dataclass(frozen=True)
class RotationSummary:
    """One kind of rotation (a set of layers with the same speeds): wavelengths and what the method does per pair."""

    key: str
    rope_type: str
    base: float
    head_dim: int
    rotary_dim: int
    attention_factor: float
    layout: str
    factor: float
    original_length: int | None
    extended_length: int | None
    wavelengths: np.ndarray = field(repr=False)  # tokens per turn, one per pair (inf: a pair that never turns)
    original_wavelengths: np.ndarray = field(repr=False)  # the same pairs before scaling
    bands: dict = field(default_factory=dict)  # "keep", "blend", "interpolate" -> pair indices (banded methods)
    mrope_section: tuple | None = None
    mrope_interleaved: bool = False
    scaled: bool = True  # the method stretches the positions (a factor other than 1, or speeds that follow the length)
    max_position_embeddings: int | None = None  # the config's; extended_length is it only for a scaled rotation
    scaling: dict = field(default_factory=dict)  # the method's arguments (factor, L, beta_fast, short_factor, ...)

    def as_dict(self) -> dict:
        finite = np.isfinite(self.wavelengths)
        return {
            "rope_type": self.rope_type,
            "base": self.base,
            "head_dim": self.head_dim,
            "rotary_dim": self.rotary_dim,
            "attention_factor": self.attention_factor,
            "layout": self.layout,
            "factor": self.factor,
            "original_length": self.original_length,
            "extended_length": self.extended_length,
            "fastest_wavelength": float(self.wavelengths[0]),
            "slowest_wavelength": float(self.wavelengths[finite].max()) if finite.any() else None,
            "still_pairs": int((~finite).sum()),
            "wavelengths": [None if not math.isfinite(w) else float(w) for w in self.wavelengths],
            "bands": {name: [int(i) for i in indices] for name, indices in self.bands.items()},
            "mrope_section": None if self.mrope_section is None else list(self.mrope_section),
            "mrope_interleaved": self.mrope_interleaved,
            "scaled": self.scaled,
            "max_position_embeddings": self.max_position_embeddings,
            "scaling": _plain(self.scaling),
        }


def _plain(value):
    """``value`` as JSON data: mappings to dicts, tuples to lists, NumPy numbers to Python numbers."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True)
class LayerGroup:
    """Layers that do the same with positions: their indices, one line saying what, and every setting as a number.

    ``settings`` (the same for every layer of the group, :func:`_settings`): ``layer_types``, ``mixer``, ``scheme``,
    ``rope``, ``rope_type``, ``head_dim``, ``rotary_dim``, ``layout``, ``direction``, ``mrope_section``,
    ``mrope_interleaved``, ``sliding_window``, ``attention_chunk_size``, ``softmax_scale``, the query scales
    ``temperature_tuning`` (``floor_scale``, ``attn_scale``), ``llama_4_scaling`` (``beta``,
    ``original_max_position_embeddings``) and ``logn_length``, and for a model without RoPE ``position_params``.
    """

    layers: tuple[int, ...]
    description: str
    rotation: str | None  # key into Explanation.rotations; None for layers that do not rotate
    settings: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "layers": list(self.layers),
            "description": self.description,
            "rotation": self.rotation,
            **_plain(self.settings),
        }


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain` found."""

    model_type: str | None
    family: str
    nested: str
    n_layers: int
    groups: list[LayerGroup]
    rotations: dict[str, RotationSummary]
    warnings: list[str]
    notes: list[str]
    reading: str = ""  # how it was read: posenc's family rules or generic rules, and whose class defaults
    reference_check: object = None  # posenc.reference_check.ReferenceCheck, when explain(check=True)

    def as_dict(self) -> dict:
        check = self.reference_check
        return {
            "model_type": self.model_type,
            "family": self.family,
            "reading": self.reading,
            "reference_check": None
            if check is None
            else {
                "line": check.line(),
                "available": check.available,
                "version": check.version,
                "n_layers": check.n_layers,
                "n_agree": check.n_agree,
                "differences": list(check.differences),
                "reason": check.reason,
                "transformers_model_type": check.model_type,
            },
            "nested": self.nested,
            "n_layers": self.n_layers,
            "groups": [g.as_dict() for g in self.groups],
            "rotations": {k: r.as_dict() for k, r in self.rotations.items()},
            "warnings": list(self.warnings),
            "notes": list(self.notes),
        }


# --- describing one layer ----------------------------------------------------------------------------------


def _g(x: float) -> str:
    """A number as a reader writes it: 1e6, 500000, 0.25, 1.139."""
    if x == 0:
        return "0"
    if abs(x) >= 1e6 and float(x).is_integer():
        mantissa, exponent = f"{x:.3e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exponent)}"
    if float(x).is_integer():
        return f"{int(x)}"
    return f"{x:.4g}"


def _method(layer, spec: MethodSpec, titled: bool = True) -> str:
    """The scaling method as its declaration describes it: title, s, L, the numbers the config gave, note.

    "YaRN s = 4 from L = 4096 (beta_fast 32, beta_slow 1)"; ``s`` only for a method that uses a factor
    (an optional one only when it is not 1), ``L`` only for one that uses a trained length.
    """
    s = layer.scaling
    factor, length = s.get("factor", 1.0), s.get("original_max_position_embeddings")
    words = [spec.title] if titled else []
    if spec.factor is not None and not (spec.factor == "optional" and factor == 1.0):
        words.append(f"s = {_g(factor)}")
    if spec.length is not None and length is not None:
        words.append(f"from L = {_g(length)}")
    details = []
    for parameter in spec.parameters:
        if parameter.kind == "numbers" or (parameter.name not in s and parameter.name not in spec.shown):
            continue
        value = s.get(parameter.name, parameter.default)
        if isinstance(value, bool):
            details.append(f"{parameter.name} {'true' if value else 'false'}")
        elif value is not None:
            details.append(f"{parameter.name} {_g(value)}")
    if details or spec.note:
        words.append(f"({'; '.join(filter(None, [', '.join(details), spec.note]))})")
    return " ".join(words)


def _settings(layer) -> dict:
    """Every setting of a layer that :func:`_describe` writes in words, as data (None where it does not apply)."""
    rope = bool(layer.rope)
    temperature, beta = layer.temperature_tuning, layer.llama_4_scaling
    settings = {
        "mixer": layer.mixer,
        "scheme": getattr(layer, "scheme", "rope" if rope else "none"),
        "rope": rope,
        "rope_type": layer.rope_type,
        "head_dim": layer.head_dim,
        "rotary_dim": layer.rotary_dim,
        "layout": layer.layout if rope else None,
        "direction": layer.direction if rope else None,
        "mrope_section": None if layer.mrope_section is None else list(layer.mrope_section),
        "mrope_interleaved": layer.mrope_interleaved if layer.mrope_section is not None else None,
        "sliding_window": layer.sliding_window,
        "attention_chunk_size": layer.attention_chunk_size,
        "softmax_scale": layer.softmax_scale,
        "temperature_tuning": None
        if temperature is None
        else {"floor_scale": float(temperature[0]), "attn_scale": float(temperature[1])},
        "llama_4_scaling": None
        if beta is None
        else {"beta": float(beta[0]), "original_max_position_embeddings": int(beta[1])},
        "logn_length": layer.logn_length,
    }
    if rope and hasattr(layer, "rotated_part"):
        settings["rotated_part"] = layer.rotated_part
    if getattr(layer, "stack", ""):
        settings["stack"] = layer.stack
    if getattr(layer, "position_params", None):
        settings["position_params"] = _plain(layer.position_params)
    return settings


def _rotation_key(layer) -> str:
    return f"{layer.rope_type}|{layer.base}|{layer.head_dim}|{layer.rotary_dim}|{hash(layer.inv_freq.tobytes())}"


def _scheme_text(layer) -> str:
    """A layer of a model without RoPE: its scheme as :mod:`posenc.config_schemes` describes it."""
    try:
        from .config_schemes import describe_scheme
    except ImportError:  # pragma: no cover - a posenc without the non-RoPE reading
        return f"{layer.scheme} positions"
    return describe_scheme(layer)


def _describe(layer) -> str:
    parts = []
    if getattr(layer, "scheme", None) not in (None, "rope", "none"):
        parts.append(_scheme_text(layer))
    elif layer.mixer != "attention":
        what = {"cross-attention": "cross-attention (to the image)"}.get(layer.mixer, layer.mixer)
        return f"{what}: no positions"
    elif not layer.rope:
        parts.append("attention without rotation (NoPE)")
    else:
        spec = scaling_spec(layer.rope_type)
        if spec.partial_rotary:  # it stops the slow pairs of the whole head itself (p-RoPE)
            turning = int(np.count_nonzero(layer.inv_freq))
            dims = f"{2 * turning} of {layer.head_dim} dims ({spec.title}: the other pairs keep speed 0)"
        elif layer.rotary_dim == layer.head_dim:
            dims = f"all {layer.rotary_dim} dims"
        else:
            dims = f"{layer.rotary_dim} of {layer.head_dim} dims"
        method = _method(layer, spec, titled=not spec.partial_rotary)
        line = f"RoPE on {dims}, base {_g(layer.base)}" + (f", {method}" if method else "")
        if layer.attention_factor != 1.0:
            line += f", attention factor {layer.attention_factor:.4g}"
        if layer.layout != "half":
            line += f", {layer.layout} pairs"
        if layer.mrope_section is not None:
            how = "interleaved t, h, w" if layer.mrope_interleaved else "blocks t | h | w"
            line += f", M-RoPE {list(layer.mrope_section)} ({how})"
        parts.append(line)
    if layer.sliding_window is not None:
        parts.append(f"sliding window {layer.sliding_window}")
    if layer.attention_chunk_size is not None:
        parts.append(f"chunked attention, chunks of {layer.attention_chunk_size}")
    if layer.softmax_scale != 1.0:
        parts.append(f"softmax scale x {layer.softmax_scale:.4g}")
    if layer.temperature_tuning is not None:
        floor, scale = layer.temperature_tuning
        parts.append(f"query x (1 + {_g(scale)} ln(floor((p+1)/{_g(floor)}) + 1))")
    if layer.llama_4_scaling is not None:
        beta, length = layer.llama_4_scaling
        parts.append(f"query x (1 + {_g(beta)} ln(1 + floor(p/{_g(length)})))")
    if layer.logn_length is not None:
        parts.append(f"query x log_{layer.logn_length}(p+1) past p + 1 = {layer.logn_length}")
    return "; ".join(parts)


# --- grouping ----------------------------------------------------------------------------------------


def _indices_text(indices: list[int], n: int) -> str:
    """ "0-35" / "3, 7, ..., 47 (every 4th)" / "0, 2, 5"."""
    if len(indices) == 1:
        return f"layer {indices[0]}"
    steps = {b - a for a, b in itertools.pairwise(indices)}
    if steps == {1}:
        return f"layers {indices[0]}-{indices[-1]}"
    if len(steps) == 1 and len(indices) > 3:
        step = steps.pop()
        return f"layers {indices[0]}, {indices[1]}, ..., {indices[-1]} (every {_ordinal(step)})"
    return "layers " + ", ".join(str(i) for i in indices)


def _group_text(group: LayerGroup, e: Explanation) -> str:
    """The layers of a group; "the other N layers" when listing them would be long and the rest is regular."""
    indices = list(group.layers)
    text = _indices_text(indices, e.n_layers)
    if len(indices) > 8 and "every" not in text and "-" not in text.split()[-1]:
        others = [g for g in e.groups if g is not group]
        if all("every" in _indices_text(list(g.layers), e.n_layers) or len(g.layers) == 1 for g in others):
            return f"the other {len(indices)} layers"
    return text


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


# --- per-pair summaries --------------------------------------------------------------------------------


def _summary(key: str, layer, extended: int | None) -> RotationSummary:
    with np.errstate(divide="ignore"):
        wavelengths = np.where(
            layer.inv_freq > 0, 2 * np.pi / np.where(layer.inv_freq > 0, layer.inv_freq, 1.0), np.inf
        )
    # the method got rotary_dim as its head (a p-RoPE method the whole head: rotary_dim == head_dim)
    original = 2 * np.pi * layer.base ** (2 * np.arange(layer.rotary_dim // 2) / layer.rotary_dim)
    s = layer.scaling
    length = s.get("original_max_position_embeddings")
    spec = scaling_spec(layer.rope_type)
    bands: dict = {}
    if spec.bands:  # read from the method's own speeds, the same arguments from_config gave it
        params = {k: v for k, v in s.items() if k not in ("factor", "original_max_position_embeddings")}
        lengths = {} if length is None else {"original_max_position_embeddings": length}
        bands = scaling_bands(spec.name, layer.rotary_dim, layer.base, s.get("factor", 1.0), **lengths, **params)
    scaled = spec.factor is not None and (float(s.get("factor", 1.0)) != 1.0 or spec.reads_seq_len)
    return RotationSummary(
        key=key,
        rope_type=layer.rope_type,
        base=layer.base,
        head_dim=layer.head_dim,
        rotary_dim=layer.rotary_dim,
        attention_factor=layer.attention_factor,
        layout=layer.layout,
        factor=float(s.get("factor", 1.0)),
        original_length=length,
        extended_length=extended if scaled else None,
        wavelengths=wavelengths,
        original_wavelengths=original,
        bands={k: v for k, v in bands.items()},
        mrope_section=layer.mrope_section,
        mrope_interleaved=layer.mrope_interleaved,
        scaled=scaled,
        max_position_embeddings=extended,
        scaling=dict(s),
    )


def _pairs_text(indices) -> str:
    indices = list(indices)
    if not indices:
        return "none"
    if indices == list(range(indices[0], indices[-1] + 1)):
        return f"{len(indices)} (pairs {indices[0]}-{indices[-1]})" if len(indices) > 1 else f"1 (pair {indices[0]})"
    return f"{len(indices)}"


# --- traps ----------------------------------------------------------------------------------------------


def _traps(raw: Mapping, layers, rotations) -> list[str]:
    warnings = []
    if raw.get("rope_scaling") and raw.get("rope_parameters"):
        warnings.append(
            "both rope_scaling and rope_parameters are set: transformers reads rope_scaling (as posenc does) "
            "and ignores rope_parameters"
        )
    max_pos = raw.get("max_position_embeddings")
    seen = set()
    for layer in layers:
        if not layer.rope or layer.rope_type in seen:
            continue
        seen.add(layer.rope_type)
        spec = scaling_spec(layer.rope_type)
        s = layer.scaling
        length = s.get("original_max_position_embeddings")
        factor = s.get("factor", 1.0)
        if spec.length == "original":  # L is original_max_position_embeddings, else max_position_embeddings
            given = _rope_field(raw, "original_max_position_embeddings")
            if given is None and raw.get("original_max_position_embeddings") is None:
                warnings.append(
                    f"{layer.rope_type}: no original_max_position_embeddings, so the trained length L is taken to be "
                    f"max_position_embeddings ({_g(length)}); the factor then counts from there"
                )
            elif (
                # a factor transformers would derive as max / L when absent (YaRN, LongRoPE) should equal it;
                # it warns for YaRN too. Llama 3's is not max / L by design (Llama 3.1: 8, 131072 / 8192)
                spec.factor == "derived"
                and max_pos
                and length
                and factor != 1
                and not math.isclose(factor * length, max_pos, rel_tol=1e-9)
            ):
                warnings.append(
                    f"{layer.rope_type}: factor s = {_g(factor)} but max_position_embeddings / L = "
                    f"{_g(max_pos)} / {_g(length)} = {_g(max_pos / length)}: the speeds are set for "
                    f"{_g(factor * length)} tokens"
                )
        if spec.cache_warning:  # the speeds follow the current length
            warnings.append(f"{layer.rope_type}: {spec.cache_warning.format(L=_g(length) if length else 'L')}")
    for rotation in rotations.values():
        product = None
        partial = _partial_of(raw)
        spec = scaling_spec(rotation.rope_type)
        if spec.partial_rotary and partial is not None:
            product = partial * rotation.head_dim / 2
            if not float(product).is_integer():
                warnings.append(
                    f"{spec.title} keeps int({_g(partial)} x {rotation.head_dim} / 2) = {int(product)} pairs: the "
                    f"product {product:g} is not a whole number of pairs"
                )
        elif partial is not None and partial != 1.0:
            product = partial * rotation.head_dim
            if not float(product).is_integer():
                warnings.append(
                    f"partial_rotary_factor {_g(partial)} x head_dim {rotation.head_dim} = {product:g} is cut to "
                    f"{int(product)} rotated dims"
                )
    if any(layer.logn_length is not None for layer in layers):
        warnings.append(
            f"use_logn_attn: Qwen's logn_list ends at position {QWEN_LOGN_POSITIONS - 1}; past it the model's code "
            "has no scale (it fails), and the scale applies only at inference"
        )
    if raw.get("use_dynamic_ntk"):
        warnings.append(
            "use_dynamic_ntk: Qwen-1's own dynamic NTK (remote code) is not computed here; the speeds shown are "
            "unscaled"
        )
    return warnings


def _rope_field(raw: Mapping, key: str):
    for source in ("rope_scaling", "rope_parameters"):
        params = raw.get(source)
        if isinstance(params, Mapping):
            if params.get(key) is not None:
                return params[key]
            for sub in params.values():
                if isinstance(sub, Mapping) and sub.get(key) is not None:
                    return sub[key]
    return None


def _partial_of(raw: Mapping):
    value = _rope_field(raw, "partial_rotary_factor")
    if value is None:
        value = raw.get("partial_rotary_factor")
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


# --- the public entry ------------------------------------------------------------------------------------


def _reading(layers) -> str:
    """How the config was read, in words that stay true: posenc's family rules or its generic ones, and whose
    class defaults filled in what the config leaves out."""
    model_type = layers.model_type
    defaults = (
        f" and transformers {TRANSFORMERS_VERSION}'s class defaults for {model_type}" if model_type in TABLE else ""
    )
    if layers.family != "generic":
        return f"posenc's rules for {layers.family}{defaults}"
    if defaults:
        return f"posenc's generic rules (it has none of its own for {model_type}){defaults}"
    return "posenc's generic rules and the legacy fields of earlier configs; no class defaults"


def explain(config, seq_len: int | None = None, check: bool = False) -> Explanation:
    """What a model does with positions, layer by layer, read from its config (see the module docstring).

    With ``check=True`` the reading is also checked against the reference library where it is installed
    (:func:`posenc.reference_check.check_against_reference`: the library's own tiny model of the same config,
    layer by layer: rotation, sliding window and chunk size, softmax scale); the result is in
    ``reference_check`` and its line heads :func:`format_text`'s output. The command line checks by default.

    Before reading, the config is checked against posenc's limits (at most 10,000 layers, nesting, sizes,
    numbers that are finite and not strings or booleans: ``posenc._config_guard.check_config_limits``)
    and against what the reference library refuses (no layers, unknown ``layer_types`` entries, rope
    parameters without the keys their rope type requires: ``posenc._config_guard.check_explainable``);
    each refusal is a ``ValueError`` or ``TypeError`` naming the field.
    """
    given = config.config if hasattr(config, "scheme") and hasattr(config, "config") else config  # a zoo entry
    check_config_limits(given, seq_len=seq_len)
    check_explainable(given)
    layers = from_config(config, seq_len=seq_len)
    try:
        raw, _ = text_config(given)
    except (TypeError, ValueError):  # a reading without one language model (an encoder-decoder of two stacks)
        raw = dict(layers.config)
    extended = layers.config.get("max_position_embeddings")
    signatures: dict[tuple, list[int]] = {}
    first_of: dict[str, object] = {}
    types_of: dict[str, list[str]] = {}
    group_of: dict[tuple, tuple] = {}  # signature -> (description, rotation key, settings, layer types)
    rotation_keys: dict[int, str] = {}  # id of a speeds array -> its key: layers share their rotation's array
    for layer in layers:
        description = _describe(layer)
        settings = _settings(layer)
        key = None
        if layer.rope:
            key = rotation_keys.get(id(layer.inv_freq))
            if key is None:
                key = rotation_keys[id(layer.inv_freq)] = _rotation_key(layer)
        signature = (description, key, json.dumps(settings, sort_keys=True, default=str))
        signatures.setdefault(signature, []).append(layer.layer)
        if signature not in group_of:
            group_of[signature] = (description, key, settings, [])
        if layer.layer_type not in group_of[signature][3]:
            group_of[signature][3].append(layer.layer_type)
        if key is not None:
            first_of.setdefault(key, layer)
            if layer.layer_type not in types_of.setdefault(key, []):
                types_of[key].append(layer.layer_type)
    rotations: dict[str, RotationSummary] = {}
    for key, layer in first_of.items():
        name = "rotating" if len(first_of) == 1 else " and ".join(types_of[key])
        rotations[key] = _summary(name, layer, extended)
    groups = []
    for signature, indices in sorted(signatures.items(), key=lambda item: item[1][0]):
        description, key, settings, layer_types = group_of[signature]
        groups.append(
            LayerGroup(
                tuple(indices),
                description,
                None if key is None else rotations[key].key,
                {"layer_types": layer_types, **settings},
            )
        )
    by_name = {r.key: r for r in rotations.values()}
    notes = [layers.note] if layers.note else []
    if layers.nested:
        notes.append(f"read from {layers.nested} (the language model of a multimodal config)")
    if not isinstance(check, bool):
        raise TypeError(f"check must be True or False, got {check!r} of type {type(check).__name__}")
    reference = None
    if check:
        from .reference_check import check_against_reference

        reference = check_against_reference(config, seq_len=seq_len)  # a zoo entry stays one
    return Explanation(
        reference_check=reference,
        model_type=layers.model_type,
        family=layers.family,
        nested=layers.nested,
        n_layers=len(layers),
        groups=groups,
        rotations=by_name,
        warnings=_traps({**layers.config, **raw}, layers, by_name),
        notes=notes,
        reading=_reading(layers),
    )


def format_text(explanation: Explanation) -> str:
    """The explanation as lines a reader can scan: groups, then per rotation its wavelengths and bands, then traps."""
    e = explanation
    lines = []
    what = e.model_type or "a config without model_type"
    lines.append(f"{what}: {e.n_layers} layers, read with {e.reading or 'posenc.from_config'}")
    if e.reference_check is not None:
        lines.append(e.reference_check.line())
    for note in e.notes:
        lines.append(f"note: {note}")
    lines.append("")
    lines.append("Layers")
    for group in e.groups:
        lines.append(f"  {_group_text(group, e)}: {group.description}")
    for name, r in e.rotations.items():
        lines.append("")
        whose = "every rotating layer" if name == "rotating" else f"the {name} layers"
        lines.append(f"Rotation of {whose}: {r.rotary_dim // 2} pairs, base {_g(r.base)}")
        finite = np.isfinite(r.wavelengths)
        fastest = r.wavelengths[0]
        lines.append(f"  fastest pair: wavelength {fastest:.4g} tokens")
        if finite.any():
            slowest = r.wavelengths[finite].max()
            lines.append(f"  slowest turning pair: wavelength {slowest:.4g} tokens")
            for label, length in (("trained length L", r.original_length), ("extended length", r.extended_length)):
                if length:
                    turns = length / slowest
                    lines.append(f"    against the {label} {_g(length)}: {turns:.3g} turns")
            if not r.scaled and r.max_position_embeddings:
                turns = r.max_position_embeddings / slowest
                lines.append(
                    f"    against max_position_embeddings {_g(r.max_position_embeddings)}: {turns:.3g} turns "
                    "(the rotation is not scaled: no extended length)"
                )
        if (~finite).any():
            lines.append(f"  {int((~finite).sum())} pairs never turn (speed 0)")
        if r.bands:
            parts = [f"{name} {_pairs_text(indices)}" for name, indices in r.bands.items()]
            lines.append("  pairs: " + "; ".join(parts))
    if e.warnings:
        lines.append("")
        lines.append("Warnings")
        for warning in e.warnings:
            lines.append(f"  - {warning}")
    return "\n".join(lines)


#: The file formats ``--plot`` writes, by the file's suffix (matplotlib's); a name without a suffix gets PNG.
PLOT_FORMATS = ("png", "pdf", "svg", "jpg", "jpeg", "webp", "tif", "tiff")


def plot_path(path) -> tuple[Path, str]:
    """``(path, format)`` for :func:`plot_wavelengths_by_pair`, checked before anything is drawn or printed.

    The format comes from the suffix (one of :data:`PLOT_FORMATS`, any case; none: PNG), and the file is
    written at exactly ``path``. A ``ValueError`` starting with the path when the suffix is another, or the
    folder is missing, not a folder or not writable, or ``path`` is a folder.
    """
    path = Path(path)
    suffix = path.suffix.lower().lstrip(".")
    if suffix and suffix not in PLOT_FORMATS:
        raise ValueError(
            f"{path}: cannot write a {path.suffix!r} file; name a file ending in "
            f"{', '.join('.' + f for f in PLOT_FORMATS)} (or with no suffix, for PNG)"
        )
    problem = writable_folder(path)
    if problem is not None:
        raise ValueError(f"{path}: {problem}")
    return path, suffix or "png"


def plot_wavelengths_by_pair(explanation: Explanation, path) -> Path:
    """Draw each rotation's wavelength per pair (log scale), before and after scaling, lengths marked.

    Writes exactly ``path``, in the format its suffix names (:func:`plot_path`; no suffix: PNG), and returns it.
    """
    path, file_format = plot_path(path)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rotations = list(explanation.rotations.values())
    fig, axes = plt.subplots(1, max(1, len(rotations)), figsize=(6 * max(1, len(rotations)), 4), squeeze=False)
    for ax, r in zip(axes[0], rotations, strict=False):
        pairs = np.arange(r.wavelengths.size)
        finite = np.isfinite(r.wavelengths)
        ax.plot(pairs, r.original_wavelengths, color="#0072B2", ls="--", lw=2, label="unscaled")
        ax.plot(pairs[finite], r.wavelengths[finite], color="#D55E00", lw=2, label=f"{r.rope_type}")
        for label, length, style in (("L", r.original_length, ":"), ("max", r.max_position_embeddings, "-.")):
            if length:
                ax.axhline(length, color="0.3", ls=style, lw=1.2, label=f"{label} = {_g(length)}")
        ax.set_yscale("log")
        ax.set_xlabel("pair index i (0 = fastest)")
        ax.set_ylabel("wavelength (tokens per full turn)")
        title = f"{explanation.model_type or 'config'}: {r.key} layers"
        ax.set_title(textwrap.fill(title.replace("_", "_\u200b"), 48).replace("\u200b", ""))  # long type names wrap
        ax.legend()
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=100, format=file_format)
    finally:
        plt.close(fig)
    return path
