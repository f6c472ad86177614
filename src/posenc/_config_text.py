"""Where a config keeps its language model, and which family the reference library reads it as.

:func:`text_config` finds the language model's config inside a multimodal one; :func:`nested_model_type` names
the ``model_type`` ``transformers`` builds for it (re-exported by :mod:`posenc.config`). Kept apart from the
reading so that the guard on hostile files (:mod:`posenc._config_guard`) and the readers of other schemes
(:mod:`posenc.config_schemes`) use it without importing the RoPE reading.
"""

from __future__ import annotations

from collections.abc import Mapping

from ._family_defaults import SUB_CONFIGS
from ._validation import show_value
from .config_families import STACKED

# --- reading the config ------------------------------------------------------------------------

#: Where a multimodal config keeps its language model's config, in the order they are tried.
NESTED_TEXT_CONFIGS = (
    "text_config",
    "llm_config",
    "language_config",
    "thinker_config",
    "decoder",
    "generator",
    "vlm_config",
)


def _as_dict(config, name: str = "config") -> dict:
    if hasattr(config, "to_dict") and callable(config.to_dict) and not isinstance(config, Mapping):
        config = config.to_dict()
    if not isinstance(config, Mapping):
        raise TypeError(
            f"{name} must be a mapping (a config.json read as a dict) or a transformers config object, "
            f"got {show_value(config)} of type {type(config).__name__}"
        )
    return dict(config)


def _has_layers(config: Mapping) -> bool:
    return any(config.get(k) is not None for k in ("num_hidden_layers", "n_layer", "n_layers", "num_layers"))


def text_config(config) -> tuple[dict, str]:
    """The language model's config inside ``config`` and its path ("" when ``config`` is one).

    A config without its own layer count is searched for ``text_config``, ``llm_config`` (InternVL),
    ``language_config`` (DeepSeek-VL), ``thinker_config`` (Qwen-Omni, whose ``text_config`` is inside)
    ``decoder``, ``generator`` (RAG) and ``vlm_config`` (ColPali, ColQwen2), in that order, one level inside another
    if needed. The nested config's ``model_type`` is
    the one the reference library reads it as (:func:`nested_model_type`).
    """
    return _text_config(config)[:2]


def nested_model_type(parent_type, key: str, written):
    """The ``model_type`` the reference library reads a config nested under ``key`` of a ``parent_type`` config as.

    ``transformers``' composite configuration classes build each sub-config from their ``sub_configs_defaults``
    (``PreTrainedConfig.__post_init__``): a fixed class ignores the nested ``model_type``; ``AutoConfig`` takes it
    (the spec's default when it has none), after the composite class's own renames (EXAONE 4.5 reads its
    "exaone4_5_text" as "exaone4"; Kimi K2.5 its "kimi_k2" as "deepseek_v3"). The mapping is generated data
    (``posenc._family_defaults.SUB_CONFIGS``, written by ``tests/transformers_families.py``). A parent type the
    reference does not have keeps ``written``.
    """
    rule = SUB_CONFIGS.get(parent_type, {}).get(key) if isinstance(parent_type, str) else None
    if rule is None:
        return written
    if "type" in rule:
        return rule["type"]
    written = written if isinstance(written, str) else rule["default"]
    return rule.get("renames", {}).get(written, written)


def _text_config(config) -> tuple[dict, str, tuple | None]:
    """``text_config``'s result and, where the reference reads the nested type as another, (written, read as)."""
    config = _as_dict(config)
    path = []
    renamed = None
    for _ in range(3):
        if _has_layers(config) or config.get("model_type") in _LAYERLESS_FAMILIES:
            break
        for key in NESTED_TEXT_CONFIGS:
            if isinstance(config.get(key), Mapping):
                parent_type, config = config.get("model_type"), dict(config[key])
                written = config.get("model_type")
                read_as = nested_model_type(parent_type, key, written)
                if read_as != written:
                    config["model_type"] = read_as
                    renamed = (written, read_as)
                path.append(key)
                break
        else:
            break
    if not _has_layers(config) and config.get("model_type") not in _LAYERLESS_FAMILIES:
        nested = [k for k in NESTED_TEXT_CONFIGS if isinstance(config.get(k), Mapping)]
        where = f" (nor in {', '.join(path)})" if path else ""
        raise ValueError(
            "config needs 'num_hidden_layers' (the number of layers), which is missing"
            + where
            + ("" if nested or path else f"; a multimodal config keeps it in one of {list(NESTED_TEXT_CONFIGS)}")
        )
    return config, ".".join(path), renamed


#: Families read as several stacks (``Family.stacks``: Dia, Moonshine, BLT), whose config has no layer count of its own.
_LAYERLESS_FAMILIES: frozenset = STACKED
