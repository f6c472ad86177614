"""The reference library's configuration classes as data: what posenc's family table must hold.

``python tests/transformers_families.py`` rewrites ``src/posenc/_family_defaults.py`` from the installed
``transformers`` (5.23): for every configuration class whose default instance has ``rope_parameters``, the
class defaults of the fields :func:`posenc.from_config` reads, ``default_theta``, ``default_rope_type``,
the standardized default ``rope_parameters`` and the ``partial_rotary_factor`` the class fills in when a
config gives none. ``tests/test_config_families.py`` recomputes the table and compares (so a newer
``transformers`` that changes a default fails a test instead of silently disagreeing).
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import pprint
import sys
import warnings
from pathlib import Path

#: The config fields whose class defaults posenc reads (positions, head size, layer pattern).
FIELDS = (
    "num_hidden_layers",
    "hidden_size",
    "num_attention_heads",
    "head_dim",
    "max_position_embeddings",
    "partial_rotary_factor",
    "sliding_window",
    "qk_rope_head_dim",
    "qk_nope_head_dim",
    "rotary_dim",
    "global_head_dim",
    "no_rope_layer_interval",
    "attention_chunk_size",
    "attn_temperature_tuning",
    "floor_scale",
    "attn_scale",
    "full_attention_interval",
    "use_sliding_window",
    "max_window_layers",
    "sliding_window_pattern",
    "global_attn_every_n_layers",
    "kv_channels",
    "layer_group_size",
)

OUTPUT = Path(__file__).resolve().parents[1] / "src" / "posenc" / "_family_defaults.py"


def _plain(value):
    """JSON-like values only (the table is a Python literal)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"not a plain value: {value!r}")


PROBE_THETA = 1234.5


def _strip(rope: dict, partial) -> dict:
    """The default rope parameters without what the config's own rope_theta / the class's partial default supply."""
    rope = copy.deepcopy(rope)
    nested = (
        [v for v in rope.values() if isinstance(v, dict)]
        if all(isinstance(v, dict) or v is None for v in rope.values())
        else [rope]
    )
    for params in nested:
        if params.get("rope_theta") == PROBE_THETA:
            del params["rope_theta"]
        if partial is not None and params.get("partial_rotary_factor") == partial:
            del params["partial_rotary_factor"]
    return rope


def family_defaults() -> dict[str, dict]:
    """model_type -> {"fields", "default_theta", "default_rope_type", "rope_parameters", "partial_default"}.

    ``rope_parameters`` is what a config without rope fields gets, less the ``rope_theta`` that comes from the
    config's own ``rope_theta`` (else ``default_theta``) and the class's ``partial_rotary_factor`` default.
    """
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING, CONFIG_MAPPING_NAMES

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    table = {}
    for model_type in sorted(CONFIG_MAPPING_NAMES):
        cls = CONFIG_MAPPING[model_type]
        try:
            default = cls()
        except Exception:  # a few composite classes need arguments; they have no rope defaults of their own
            continue
        rope = getattr(default, "rope_parameters", None)
        if not rope:
            continue
        declared = getattr(cls, "__dataclass_fields__", {})
        fields = {}
        for name in FIELDS:
            spec = declared.get(name)
            if spec is None or spec.default is dataclasses.MISSING or spec.default is None:
                continue
            fields[name] = _plain(spec.default)
        try:
            probe = cls(rope_parameters={"rope_type": "default", "rope_theta": 1.5}).rope_parameters
            partial = probe.get("partial_rotary_factor") if isinstance(probe, dict) else None
        except Exception:
            partial = None
        try:  # the default a config without rope fields gets; a theta that came from rope_theta is left out
            rope = _strip(cls(rope_theta=PROBE_THETA).rope_parameters, partial)
        except Exception:
            rope = _strip(rope, partial)
        theta = getattr(cls, "default_theta", None)
        table[model_type] = {
            "fields": fields,
            "default_theta": _plain(dict(theta) if isinstance(theta, dict) else theta),
            "default_rope_type": getattr(cls, "default_rope_type", "default"),
            "rope_parameters": _plain(rope),
            "partial_default": partial,
        }
    return table


def text_model_types() -> dict[str, str]:
    """Composite model_type -> its language model's model_type (the class of its default ``text_config``)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING, CONFIG_MAPPING_NAMES

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    out = {}
    for model_type in sorted(CONFIG_MAPPING_NAMES):
        try:
            default = CONFIG_MAPPING[model_type]()
            sub = getattr(default, "text_config", None)
        except Exception:
            continue
        sub_type = getattr(sub, "model_type", None)
        if isinstance(sub_type, str) and sub_type != model_type:
            out[model_type] = sub_type
    return out


#: The keys under which a composite config keeps its language model (posenc.config.NESTED_TEXT_CONFIGS and the
#: reference's get_text_config names).
TEXT_KEYS = ("text_config", "llm_config", "language_config", "thinker_config", "decoder", "generator", "text_encoder")


def _module_strings(cls) -> set[str]:
    """String constants of ``cls.__post_init__`` that look like model types (candidates for a rename)."""
    import ast
    import inspect
    import textwrap

    try:
        source = textwrap.dedent(inspect.getsource(cls.__post_init__))
    except (TypeError, OSError):
        return set()
    return {
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier()
    }


def sub_configs() -> dict[str, dict]:
    """Composite model_type -> {key: how the reference types the nested language-model config under ``key``}.

    ``{"type": T}``: the key's class is fixed (the nested dict's own ``model_type`` is ignored); ``{"default": T}``:
    the nested ``model_type`` picks the class (``T`` when it has none), after the composite class's own renames
    (``"renames": {written: read as}``, found by building the class with each candidate string of its
    ``__post_init__``: EXAONE 4.5's "exaone4_5_text" is read as "exaone4", Kimi K2.5's "kimi_k2" as "deepseek_v3").
    """
    from transformers import AutoConfig, PreTrainedConfig
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING, CONFIG_MAPPING_NAMES

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    out = {}
    for model_type in sorted(CONFIG_MAPPING_NAMES):
        cls = CONFIG_MAPPING[model_type]
        specs = {k: v for k, v in (getattr(cls, "sub_configs_defaults", None) or {}).items() if k in TEXT_KEYS}
        entry = {}
        for key, spec in specs.items():
            config_class = spec.config_class
            fixed = isinstance(config_class, type) and issubclass(config_class, PreTrainedConfig)
            if config_class is not AutoConfig and fixed:
                entry[key] = {"type": spec.model_type}
                continue
            renames = {}
            for written in sorted(_module_strings(cls)):
                try:
                    built = getattr(cls(**{key: {"model_type": written}}), key, None)
                except Exception:
                    continue
                read_as = getattr(built, "model_type", None)
                if isinstance(read_as, str) and read_as != written:
                    renames[written] = read_as
            entry[key] = {"default": spec.model_type, **({"renames": renames} if renames else {})}
        if entry:
            out[model_type] = entry
    return out


#: Fields whose value may set the period of a class's default layer pattern.
PERIOD_FIELDS = (
    "sliding_window_pattern",
    "full_attention_interval",
    "global_attn_every_n_layers",
    "no_rope_layer_interval",
    "layer_group_size",
)
#: Fields a class's default layer pattern may depend on (each is perturbed to see whether it does).
PATTERN_FIELDS = (*PERIOD_FIELDS, "sliding_window", "use_sliding_window", "max_window_layers", "attention_chunk_size")


def _layer_types(cls, n: int, **fields):
    try:
        types = cls(num_hidden_layers=n, **fields).layer_types
    except Exception:
        return None
    return list(types) if types is not None else None


def _fit_pattern(cls, **fields):
    """``{"pattern", "anchor", "last"}`` reproducing the class's ``layer_types`` for 1 to 30 layers, or None.

    Layer ``i`` of ``n`` gets ``pattern[i % p]`` (anchor "start") or ``pattern[(n - 1 - i) % p]`` (anchor "end");
    ``last``, when set, is the type the class forces on the last layer.
    """
    seen = {n: _layer_types(cls, n, **fields) for n in range(1, 31)}
    if any(types is None for types in seen.values()):
        return None
    longest = seen[30]
    for anchor in ("start", "end"):
        for last in (None, longest[-1]):
            for period in range(1, 13):
                pattern = longest[:period] if anchor == "start" else [longest[29 - k] for k in range(period)]
                ok = True
                for n, types in seen.items():
                    want = [pattern[(i if anchor == "start" else n - 1 - i) % period] for i in range(n)]
                    if last is not None:
                        want[-1] = last
                    if want != types:
                        ok = False
                        break
                if ok:
                    return {"pattern": pattern, "anchor": anchor, "last": last}
    return None


def _shape(fit: dict) -> tuple:
    """What a period field keeps: the anchor, whether the last layer is forced, the pattern's odd one out."""
    return fit["anchor"], fit["last"] is not None, fit["pattern"][-1] if fit["anchor"] == "start" else fit["pattern"][0]


def layer_patterns() -> dict[str, dict]:
    """model_type -> the ``layer_types`` its class fills in when a config gives none, as a rule posenc can replay.

    ``{"pattern", "anchor", "last"}`` (see :func:`_fit_pattern`), ``"depends_on"``: the fields of PATTERN_FIELDS
    whose value changes the result, ``"period_field"``: the one among them that sets the period (the pattern keeps
    its shape: the other type, then the pattern's odd one out at the end), or ``{"rule": None}`` where no such
    rule reproduces the class.
    """
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING, CONFIG_MAPPING_NAMES

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    out = {}
    for model_type in sorted(CONFIG_MAPPING_NAMES):
        cls = CONFIG_MAPPING[model_type]
        declared = getattr(cls, "__dataclass_fields__", {})
        if "layer_types" not in declared or "num_hidden_layers" not in declared:
            continue
        base = _layer_types(cls, 24)
        if base is None:
            continue
        fitted = _fit_pattern(cls)
        if fitted is None:
            out[model_type] = {"rule": None}
            continue
        depends, period_field = [], None
        for name in PATTERN_FIELDS:
            if name not in declared:
                continue
            try:
                default = getattr(cls(num_hidden_layers=24), name, None)
            except Exception:  # a per-layer attribute (heterogeneous configs) has no global value
                continue
            trials = [None, 7, 3, 5] if name == "sliding_window" or name == "attention_chunk_size" else [3, 5, 1]
            if isinstance(default, bool) or name == "use_sliding_window":
                trials = [not default]
            if any(_layer_types(cls, 24, **{name: value}) not in (base,) for value in trials if value != default):
                depends.append(name)
                if name in PERIOD_FIELDS and len(set(fitted["pattern"])) == 2:
                    three, five = _fit_pattern(cls, **{name: 3}), _fit_pattern(cls, **{name: 5})
                    if three and five and [len(three["pattern"]), len(five["pattern"])] == [3, 5]:
                        if _shape(three) == _shape(five) == _shape(fitted):
                            period_field = name
        out[model_type] = {**fitted, "depends_on": depends, "period_field": period_field}
    return out


#: The line of a model's forward pass that windows every layer when ``config.sliding_window`` is set (Mistral's).
EVERY_LAYER_WINDOW = "create_causal_mask if self.config.sliding_window is None else create_sliding_window_causal_mask"


def window_every_layer() -> dict[str, str | None]:
    """model_type -> None, or the field the class needs set: the models that window every attention layer by
    ``config.sliding_window`` (no layer types).

    Read from the modeling file next to each configuration class: the model builds one mask for all layers,
    ``create_sliding_window_causal_mask`` whenever ``config.sliding_window`` is set (Mistral, Mixtral, StarCoder2,
    Phi-3, ...). Elsewhere the window follows the layer types (``"sliding_attention"`` layers only).
    """
    import importlib.util

    from transformers.models.auto.configuration_auto import CONFIG_MAPPING, CONFIG_MAPPING_NAMES

    out = {}
    for model_type in sorted(CONFIG_MAPPING_NAMES):
        cls = CONFIG_MAPPING[model_type]
        if "sliding_window" not in getattr(cls, "__dataclass_fields__", {}):
            continue
        package, _, module = cls.__module__.rpartition(".")
        spec = importlib.util.find_spec(f"{package}.{module.replace('configuration_', 'modeling_', 1)}")
        if spec is None or spec.origin is None:
            continue
        if EVERY_LAYER_WINDOW in Path(spec.origin).read_text(encoding="utf-8"):
            out[model_type] = _window_gate(cls)
    return out


def _window_gate(cls) -> str | None:
    """The boolean field without which the class drops ``sliding_window`` (Qwen3-MoE: ``use_sliding_window``)."""
    try:
        if cls(sliding_window=7).sliding_window == 7:
            return None
    except Exception:
        return None
    for name, spec in getattr(cls, "__dataclass_fields__", {}).items():
        if isinstance(spec.default, bool):
            try:
                if cls(sliding_window=7, **{name: not spec.default}).sliding_window == 7:
                    return name
            except Exception:
                continue
    return None


def write(path: Path = OUTPUT) -> None:
    import transformers

    header = (
        '"""Class defaults of the reference library\'s configuration classes, per model_type (generated data).\n\n'
        f"Written by ``python tests/transformers_families.py`` from transformers {transformers.__version__}: for each\n"
        "``configuration_*.py`` class with rotary positions, the defaults of the fields posenc reads,\n"
        "``default_theta``, ``default_rope_type``, the standardized default ``rope_parameters`` and the\n"
        "``partial_rotary_factor`` the\n"
        "class fills in. ``tests/test_config_families.py`` checks it against the installed library.\n"
        '"""\n\n'
        f"TRANSFORMERS_VERSION = {transformers.__version__!r}\n\n"
    )
    body = "TABLE = " + pprint.pformat(family_defaults(), width=116, sort_dicts=True) + "\n"
    body += (
        "\n#: A composite model_type -> its language model's model_type (read for a flat, legacy config).\n"
        "TEXT_MODEL_TYPES = " + pprint.pformat(text_model_types(), width=116, sort_dicts=True) + "\n"
    )
    body += (
        "\n#: A composite model_type -> {key: how the reference types its nested text config} (sub_configs).\n"
        "SUB_CONFIGS = " + pprint.pformat(sub_configs(), width=116, sort_dicts=True) + "\n"
        "\n#: model_type -> the layer_types its class fills in when a config gives none (layer_patterns).\n"
        "LAYER_PATTERNS = " + pprint.pformat(layer_patterns(), width=116, sort_dicts=True) + "\n"
        "\n#: model_types whose models window every attention layer by config.sliding_window (window_every_layer).\n"
        "WINDOW_EVERY_LAYER = " + pprint.pformat(window_every_layer(), width=116, sort_dicts=True) + "\n"
    )
    path.write_text(header + body)


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else OUTPUT)
    print(f"wrote {OUTPUT}")
