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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .config import QWEN_LOGN_POSITIONS, from_config, text_config
from .scaling import MethodSpec, scaling_bands, scaling_spec

__all__ = [
    "Explanation",
    "LayerGroup",
    "RotationSummary",
    "explain",
    "format_text",
    "load_config",
    "plot_wavelengths_by_pair",
]


class ConfigError(ValueError):
    """A path or file that is not a model config (the command line prints it as one line)."""


def load_config(path) -> dict:
    """The JSON object in ``path``; a clear :class:`ConfigError` when it is missing or not a config."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: no such file")
    if path.is_dir():
        candidate = path / "config.json"
        if not candidate.is_file():
            raise ConfigError(f"{path}: a folder without config.json")
        path = candidate
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a text file (a model config is JSON)") from None
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path}: not valid JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a JSON {type(data).__name__}, not an object; a model config is an object")
    return data


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
        }


@dataclass(frozen=True)
class LayerGroup:
    """Layers that do the same with positions: their indices and one line saying what."""

    layers: tuple[int, ...]
    description: str
    rotation: str | None  # key into Explanation.rotations; None for layers that do not rotate

    def as_dict(self) -> dict:
        return {"layers": list(self.layers), "description": self.description, "rotation": self.rotation}


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

    def as_dict(self) -> dict:
        return {
            "model_type": self.model_type,
            "family": self.family,
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


def _rotation_key(layer) -> str:
    return f"{layer.rope_type}|{layer.base}|{layer.head_dim}|{layer.rotary_dim}|{hash(layer.inv_freq.tobytes())}"


def _describe(layer) -> str:
    parts = []
    if layer.mixer != "attention":
        what = {"cross-attention": "cross-attention (to the image)"}.get(layer.mixer, layer.mixer)
        return f"{what}: no positions"
    if not layer.rope:
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
        extended_length=extended,
        wavelengths=wavelengths,
        original_wavelengths=original,
        bands={k: v for k, v in bands.items()},
        mrope_section=layer.mrope_section,
        mrope_interleaved=layer.mrope_interleaved,
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


def explain(config, seq_len: int | None = None) -> Explanation:
    """What a model does with positions, layer by layer, read from its config (see the module docstring)."""
    layers = from_config(config, seq_len=seq_len)
    raw, _ = text_config(config.config if hasattr(config, "scheme") else config)
    extended = layers.config.get("max_position_embeddings")
    signatures: dict[str, list[int]] = {}
    rotation_of: dict[str, str] = {}
    first_of: dict[str, object] = {}
    types_of: dict[str, list[str]] = {}
    for layer in layers:
        description = _describe(layer)
        signatures.setdefault(description, []).append(layer.layer)
        if layer.rope:
            key = _rotation_key(layer)
            first_of.setdefault(key, layer)
            if layer.layer_type not in types_of.setdefault(key, []):
                types_of[key].append(layer.layer_type)
            rotation_of[description] = key
    rotations: dict[str, RotationSummary] = {}
    for key, layer in first_of.items():
        name = "rotating" if len(first_of) == 1 else " and ".join(types_of[key])
        rotations[key] = _summary(name, layer, extended)
    groups = []
    for description, indices in sorted(signatures.items(), key=lambda item: item[1][0]):
        key = rotation_of.get(description)
        groups.append(LayerGroup(tuple(indices), description, None if key is None else rotations[key].key))
    by_name = {r.key: r for r in rotations.values()}
    notes = [layers.note] if layers.note else []
    if layers.nested:
        notes.append(f"read from {layers.nested} (the language model of a multimodal config)")
    return Explanation(
        model_type=layers.model_type,
        family=layers.family,
        nested=layers.nested,
        n_layers=len(layers),
        groups=groups,
        rotations=by_name,
        warnings=_traps({**layers.config, **raw}, layers, by_name),
        notes=notes,
    )


def format_text(explanation: Explanation) -> str:
    """The explanation as lines a reader can scan: groups, then per rotation its wavelengths and bands, then traps."""
    e = explanation
    lines = []
    what = e.model_type or "a config without model_type"
    if e.family != "generic":
        rules = "its family's rules"
    elif e.notes and "generically" in e.notes[0]:
        rules = "the generic reading"
    else:
        rules = "the generic reading (the family needs no rules of its own)"
    lines.append(f"{what}: {e.n_layers} layers, read with {rules}")
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


def plot_wavelengths_by_pair(explanation: Explanation, path) -> None:
    """Write a PNG: each rotation's wavelength per pair (log scale), before and after scaling, lengths marked."""
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
        for label, length, style in (("L", r.original_length, ":"), ("max", r.extended_length, "-.")):
            if length:
                ax.axhline(length, color="0.3", ls=style, lw=1.2, label=f"{label} = {_g(length)}")
        ax.set_yscale("log")
        ax.set_xlabel("pair index i (0 = fastest)")
        ax.set_ylabel("wavelength (tokens per full turn)")
        ax.set_title(f"{explanation.model_type or 'config'}: {r.key} layers")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
