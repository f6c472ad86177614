"""Run a tiny model of a family in the reference library and record, layer by layer, what its attention does.

For one ``model_type``: build the library's configuration class from a small config dict, the model on the
meta device (no weight init), materialise it on the CPU with constant weights and fresh rotary modules,
and run one forward pass at chosen positions while every ``apply_*rotary*`` / ``apply_*rope*`` function of
the model's modules is wrapped. Each call records the calling layer, the function and its arguments.
:func:`rotation_of` then replays a recorded call on probe vectors: the function's own output is what a
layer does to a query, which the tests compare with :func:`posenc.apply_rope` on posenc's reading
(frequencies, attention factor, layout and rotated dimensions at once).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import logging
import math
import sys
import warnings

import numpy as np
import torch
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

#: Small sizes for any family: fields a configuration class does not have are left out.
SMALL = {
    "vocab_size": 160,
    "intermediate_size": 32,
    "moe_intermediate_size": 16,
    "num_experts": 4,
    "num_local_experts": 4,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "shared_expert_intermediate_size": 16,
    "intermediate_size_mlp": 32,
    "expert_intermediate_size": 16,
    "moe_num_experts": 4,
    "top_k_experts": 2,
    "n_group": 1,
    "topk_group": 1,
    "vocab_size_per_layer_input": 160,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 2,
    "linear_key_head_dim": 16,
    "linear_value_head_dim": 16,
    "num_global_key_value_heads": 1,
    "q_lora_rank": 16,
    "kv_lora_rank": 16,
    "pad_token_id": 0,
    "bos_token_id": 1,
    "eos_token_id": 2,
}

#: MoE routing fields set even where the class leaves them None (a None top-k cannot run).
ROUTING = ("num_experts_per_tok", "n_group", "topk_group")

#: The most numbers a traced model may hold (a guard against a config that did not shrink).
MAX_ELEMENTS = 60_000_000

#: Positions of the traced tokens: several octaves, so that slow and fast pairs both move.
POSITIONS = [0, 1, 2, 5, 11, 100, 997]


def small_config(model_type: str, heads: int = 2, **extra) -> dict:
    """A config dict a tiny model of ``model_type`` can run: the class's head size, 2 heads, small everything else."""
    cls = CONFIG_MAPPING[model_type]
    fields = getattr(cls, "__dataclass_fields__", {})
    with _quiet():
        default = cls()
    raw = {"model_type": model_type}
    for key, value in SMALL.items():
        current = _attribute(default, key)
        if key in fields and ((isinstance(current, int) and not isinstance(current, bool)) or key in ROUTING):
            raw[key] = value
    if _attribute(default, "num_attention_heads"):
        head_dim = _attribute(default, "head_dim") or default.hidden_size // default.num_attention_heads
        raw["num_attention_heads"] = heads
        if _attribute(default, "num_key_value_heads") is not None:
            raw["num_key_value_heads"] = heads
        raw["hidden_size"] = heads * head_dim
        if "head_dim" in fields and _global(default, "head_dim"):
            raw["head_dim"] = head_dim
    n = getattr(default, "num_hidden_layers", None)
    if isinstance(n, int):
        raw["num_hidden_layers"] = min(n, 8)
    raw.update(extra)
    return raw


def _attribute(config, key):
    """``getattr(config, key)``, or None where the class has no such global value (per-layer configs raise)."""
    try:
        return getattr(config, key, None)
    except Exception:
        return None


def _global(config, key) -> bool:
    """Whether the class has one global value of ``key`` (per-layer configs raise on reading it)."""
    try:
        getattr(config, key, None)
    except Exception:
        return False
    return True


def shrink(text: dict, heads: int = 1) -> dict:
    """A real (language-model) config made tiny for a forward pass: same head size, rope fields and layer pattern.

    Keeps ``model_type``, the layer count and pattern, every rope field and the head size (``head_dim``, or
    ``hidden_size / num_attention_heads``); shrinks the width (``heads`` heads, ``hidden_size = heads *
    head_dim``), the MLP, the vocabulary and the experts (:data:`SMALL`, for the fields the config has).
    """
    text = dict(text)
    cls = CONFIG_MAPPING[text["model_type"]]
    fields = getattr(cls, "__dataclass_fields__", {})
    with _quiet():
        default = cls()
    n_heads = text.get("num_attention_heads", getattr(default, "num_attention_heads", None))
    hidden = text.get("hidden_size", getattr(default, "hidden_size", None))
    head_dim = text.get("head_dim") or getattr(default, "head_dim", None) or hidden // n_heads
    for key, value in SMALL.items():
        if text.get(key) is not None or (key in fields and (_attribute(default, key) is not None or key in ROUTING)):
            text[key] = value
    text["num_attention_heads"] = heads
    if "num_key_value_heads" in fields:
        text["num_key_value_heads"] = heads
    text["hidden_size"] = heads * head_dim
    if "head_dim" in fields and "head_dim" in text:
        text["head_dim"] = head_dim
    for key in ("quantization_config", "torch_dtype", "dtype"):  # run in the test's dtype, unquantized
        text.pop(key, None)
    return text


@contextlib.contextmanager
def _quiet():
    level = logging.root.manager.disable
    logging.disable(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            yield
        finally:
            logging.disable(level)


def build_config(raw: dict):
    """The library's configuration object for ``raw`` (as ``AutoConfig.for_model`` does)."""
    with _quiet():
        return CONFIG_MAPPING[raw["model_type"]](**{k: v for k, v in raw.items() if k != "model_type"})


def _rotary_modules(model):
    return [(n, m) for n, m in model.named_modules() if type(m).__name__.endswith("RotaryEmbedding")]


def _model_class(config):
    """The base model class of ``config``: AutoModel's, else the modeling module's ``*Model`` for this config class."""
    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    if type(config) in MODEL_MAPPING:
        return MODEL_MAPPING[type(config)]
    package = type(config).__module__.rsplit(".", 1)[0]
    name = type(config).__module__.rsplit(".", 1)[1].replace("configuration_", "modeling_")
    module = importlib.import_module(f"{package}.{name}")
    candidates = [
        cls
        for cls in vars(module).values()
        if isinstance(cls, type)
        and getattr(cls, "config_class", None) is type(config)
        and cls.__name__.endswith("Model")
        and "PreTrained" not in cls.__name__
    ]
    if not candidates:
        raise LookupError(f"no base model class for {type(config).__name__}")
    candidates.sort(key=lambda cls: ("Text" not in cls.__name__, len(cls.__name__)))
    return candidates[0]


def build_model(config):
    """The model for ``config`` without weight init: constant weights, rotary modules built on the CPU."""
    with _quiet():
        with torch.device("meta"):
            model = _model_class(config)._from_config(config, dtype=torch.get_default_dtype())
        size = sum(p.numel() for p in model.parameters()) + sum(b.numel() for b in model.buffers())
        if size > MAX_ELEMENTS:
            raise MemoryError(
                f"the tiny model of {type(config).__name__} would hold {size:,} numbers; shrink its config"
            )
        model.to_empty(device="cpu")
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.fill_(0.02)
            for name, module in _rotary_modules(model):
                parent = model.get_submodule(name.rpartition(".")[0]) if "." in name else model
                setattr(parent, name.rpartition(".")[2], type(module)(module.config))
    return model.eval()


def _layer_index(model, n_layers: int) -> dict[int, int]:
    """id(module) -> the index of the decoder layer that holds it (the longest ModuleList of n_layers modules)."""
    lists = [m for m in model.modules() if isinstance(m, torch.nn.ModuleList) and len(m) == n_layers]
    owner = {}
    if lists:
        for i, layer in enumerate(lists[0]):
            for sub in layer.modules():
                owner[id(sub)] = i
    return owner


def trace(config, positions=POSITIONS) -> list[dict]:
    """One forward pass at ``positions``; each rotary call: {"layer", "function", "self", "args"}.

    Calls made by a DSA indexer (a module whose class name has "Indexer": it rotates its own
    scoring heads, not the attention's queries and keys) are left out.
    """
    model = build_model(config)
    owner = _layer_index(model, getattr(config, "num_hidden_layers", -1))
    modules = {sys.modules[type(m).__module__] for m in model.modules()}
    calls, patched = [], []
    for module in modules:
        for name, function in list(vars(module).items()):
            if not inspect.isfunction(function) or not name.startswith("apply"):
                continue
            if "rotary" not in name and "rope" not in name:
                continue
            signature = inspect.signature(function)

            def wrapper(*args, _function=function, _name=name, _signature=signature, **kwargs):
                caller = inspect.currentframe().f_back.f_locals.get("self")
                bound = _signature.bind(*args, **kwargs)
                if "Indexer" not in type(caller).__name__:
                    layer = owner.get(id(caller), getattr(caller, "layer_idx", None))
                    call = {"layer": layer, "function": _function, "name": _name, "self": caller}
                    calls.append({**call, "args": dict(bound.arguments)})
                return _function(*args, **kwargs)

            setattr(module, name, wrapper)
            patched.append((module, name, function))
    try:
        ids = (torch.arange(len(positions)) % 50 + 3)[None]
        with torch.no_grad(), _quiet():
            model(input_ids=ids, position_ids=torch.tensor(positions)[None], use_cache=False)
    finally:
        for module, name, function in patched:
            setattr(module, name, function)
    return calls


def rotation_of(call: dict, n_positions: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Replay a recorded call on a random query: (probe, output), both as float64 (seq, heads, head_dim).

    The probe replaces the call's first tensor argument (the queries) and has its shape; the sequence
    axis is the one whose size is the number of positions.
    """
    args = dict(call["args"])
    first = next(k for k, v in args.items() if torch.is_tensor(v))
    query = args[first]
    rng = np.random.default_rng(seed)
    probe = torch.tensor(rng.standard_normal(tuple(query.shape)), dtype=query.dtype)
    args[first] = probe
    with torch.no_grad():
        out = call["function"](**args)
    out = out[0] if isinstance(out, tuple) else out
    axis = [i for i, size in enumerate(query.shape) if size == n_positions]
    if not axis:
        raise AssertionError(f"no axis of size {n_positions} in the query's shape {tuple(query.shape)}")
    seq_axis = axis[-1] if query.shape[1] != n_positions else 1
    probe = np.moveaxis(probe[0].double().numpy(), seq_axis - 1, 0)
    out = np.moveaxis(out[0].double().numpy(), seq_axis - 1, 0)
    return probe, out


def expected_rotation(layer, probe: np.ndarray, positions) -> dict[str, np.ndarray]:
    """What posenc's reading of ``layer`` does to ``probe`` (seq, heads, head_dim), in the orders a model may return.

    "plain": :func:`posenc.apply_rope` on the first ``rotary_dim`` dims with the layer's layout (the rest
    untouched); "deinterleaved": the interleaved rotation returned in the half order, as DeepSeek's
    ``apply_rotary_pos_emb_interleave`` does (the same attention scores, since keys get the same order).
    """
    import posenc

    r = layer.rotary_dim
    positions = np.asarray(positions) * layer.direction
    x = np.moveaxis(probe[..., :r], 0, -2)
    rotated = posenc.apply_rope(
        x, positions, layer.inv_freq, layout=layer.layout, attention_factor=layer.attention_factor
    )
    plain = np.array(probe)
    plain[..., :r] = np.moveaxis(rotated, -2, 0)
    out = {"plain": plain}
    if layer.layout == "interleaved":
        deinterleaved = np.array(plain)
        deinterleaved[..., :r] = plain[..., posenc.interleaved_to_half_permutation(r)]
        out["deinterleaved"] = deinterleaved
    return out


def compare(raw: dict, positions=POSITIONS) -> list[str]:
    """Every difference between posenc's reading of ``raw`` and what the library's tiny model does, layer by layer."""
    import posenc

    config = build_config(raw)
    for dtype in (torch.float64, torch.float32):  # some kernels (grouped MoE matmuls) have no float64
        previous = torch.get_default_dtype()
        torch.set_default_dtype(dtype)
        try:
            calls = trace(config, positions)
            break
        except RuntimeError:
            if dtype == torch.float32:
                raise
        finally:
            torch.set_default_dtype(previous)
    layers = posenc.from_config(raw)
    problems = []
    rotating = sorted({c["layer"] for c in calls})
    want = [layer.layer for layer in layers if layer.rope]
    if rotating != want:
        problems.append(f"layers that rotate: transformers {rotating}, posenc {want}")
    pos = np.asarray(positions, dtype=np.float64)
    for call in calls:
        if call["layer"] is None or call["layer"] >= len(layers) or not layers[call["layer"]].rope:
            continue
        layer = layers[call["layer"]]
        probe, out = rotation_of(call, len(positions))
        if layer.rotary_dim > probe.shape[-1]:
            problems.append(f"layer {layer.layer}: posenc rotates {layer.rotary_dim} dims of {probe.shape[-1]}")
            continue
        # the reference computes in float32: base ** (2i/d) carries a relative error of about 1e-7 ln(base), and
        # the angle p * theta_i that times p; so the tolerance grows with the position and the base
        base = layer.base or 10000.0
        tolerance = (2e-6 + 3e-7 * (1 + math.log(base)) * pos[:, None, None]) * (1.0 + np.abs(probe).max())
        fits = {
            name: bool(np.all(np.abs(out - want) <= tolerance))
            for name, want in expected_rotation(layer, probe, pos).items()
        }
        if not any(fits.values()):
            error = min(np.abs(out - want).max() for want in expected_rotation(layer, probe, pos).values())
            problems.append(
                f"layer {layer.layer} ({layer.layer_type}): rotation differs by {error:.2g} "
                f"(rotary_dim {layer.rotary_dim} of {probe.shape[-1]}, layout {layer.layout})"
            )
    return problems


def rotary_reference(raw: dict) -> dict:
    """The library's own rotary class for ``raw`` (full size, no model): layer type (or None) -> (inv_freq, factor).

    float64 NumPy copies of what the class computed (in float32) at construction.
    """
    config = build_config(raw)
    with _quiet():
        with torch.device("meta"):
            model = _model_class(config)._from_config(config)
        classes = [type(m) for _, m in _rotary_modules(model) if "Vision" not in type(m).__name__]
        if not classes:
            raise LookupError(f"no rotary class in the model of {raw['model_type']}")
        rotary = classes[0](config)
    out = {}
    if isinstance(getattr(rotary, "inv_freq", None), torch.Tensor):
        out[None] = (rotary.inv_freq.double().numpy(), float(rotary.attention_scaling))
    for layer_type in set(getattr(config, "layer_types", None) or []):
        if isinstance(getattr(rotary, f"{layer_type}_inv_freq", None), torch.Tensor):
            out[layer_type] = (
                getattr(rotary, f"{layer_type}_inv_freq").double().numpy(),
                float(getattr(rotary, f"{layer_type}_attention_scaling")),
            )
    return out
