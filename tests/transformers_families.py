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
    path.write_text(header + body)


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else OUTPUT)
    print(f"wrote {OUTPUT}")
