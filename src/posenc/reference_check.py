"""posenc's reading of a config checked against the reference library (``transformers``), layer by layer.

:func:`check_against_reference` takes a config as given (a ``config.json`` as a dict, nested or not), lets
``transformers`` build its own configuration class from the whole dict and take its language model's
sub-config (``get_text_config()``: the library's own renaming of nested model types is part of what is
checked), makes it narrow (``shrink``: the same layer count, layer pattern, head size, windows and rope
fields; one head, a small MLP, vocabulary and expert set) and runs one forward pass of that tiny model on the
CPU while recording, layer by layer, what its attention does:

1. which layers rotate their queries and keys, and how: every ``apply_*rotary*`` / ``apply_*rope*`` call is
   recorded and replayed on a random probe (:func:`rotation_of`), and the output must be what
   :func:`posenc.apply_rope` does with posenc's reading of that layer (frequencies, attention factor, layout
   and rotated dimensions at once; :func:`expected_rotation`);
2. the sliding window / chunk size of each attention layer: the mask the layer's attention gets (which of
   ``create_sliding_window_causal_mask``, ``create_chunked_causal_mask``, ``create_causal_mask``, ... made it,
   with the ``sliding_window`` / ``attention_chunk_size`` of the config it was made from), else the
   ``sliding_window`` the attention module passes to its attention function, else its ``sliding_window``
   attribute; against :attr:`posenc.config.LayerPositions.sliding_window` / ``attention_chunk_size``;
3. the softmax scale multiplier: the attention module's ``scaling`` divided by the ``scaling`` the same
   module has when the config's rope scaling is reset to "default" (what is left is what the position
   scaling does to the softmax, e.g. DeepSeek's ``mscale**2``; a scaling that does not depend on positions,
   as Granite's ``attention_multiplier`` or Gemma's ``query_pre_attn_scalar``, divides out); against
   :attr:`posenc.config.LayerPositions.softmax_scale`.

The result is a :class:`ReferenceCheck`; ``.line()`` is one line for ``posenc explain``. Without
``transformers`` (or ``torch``) it says so and checks nothing: both are imported only inside the functions,
so posenc imports without them. One check builds a model of a few thousand to a few million numbers
(``MAX_ELEMENTS`` is the guard) and takes 0.1 to 4 seconds on a CPU, plus about 2 seconds for the first
one in a process (importing torch, transformers and the family's modeling module). While it runs it wraps
functions of the library's modeling modules and its attention-function registry (restored afterwards), and
sets torch's default dtype to float64: run it from one thread.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import logging
import math
import sys
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "FIELDS",
    "MAX_ELEMENTS",
    "POSITIONS",
    "ReferenceCheck",
    "Trace",
    "check_against_reference",
    "expected_rotation",
    "record",
    "reference_text_config",
    "rotary_reference",
    "rotation_of",
    "shrink",
    "small_config",
    "trace",
]

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
    "o_lora_rank": 16,
    "index_n_heads": 2,
    "moe_shared_expert_intermediate_size": 16,
    "pad_token_id": 0,
    "bos_token_id": 1,
    "eos_token_id": 2,
}

#: MoE routing fields set even where the class leaves them None (a None top-k cannot run).
ROUTING = ("num_experts_per_tok", "n_group", "topk_group")

#: The most numbers a traced model may hold (a guard against a config that did not shrink).
MAX_ELEMENTS = 60_000_000

#: Positions of the traced tokens: several octaves, so that slow and fast pairs both move.
POSITIONS = (0, 1, 2, 5, 11, 100, 997)

#: What :func:`check_against_reference` compares: the rotation of each layer, its window / chunk size, its
#: softmax scale multiplier.
FIELDS = ("rotation", "window", "softmax_scale")

#: Where a config keeps its trained length (the positions traced without a seq_len stay below it).
_LENGTHS = ("max_position_embeddings", "n_positions", "n_ctx")

#: Rope parameters that scale positions; reset (with ``rope_type`` "default") for the softmax scale's baseline.
_SCALING_KEYS = (
    "factor",
    "mscale",
    "mscale_all_dim",
    "attention_factor",
    "beta_fast",
    "beta_slow",
    "short_factor",
    "long_factor",
    "low_freq_factor",
    "high_freq_factor",
)


# --- the result ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReferenceCheck:
    """What :func:`check_against_reference` found.

    Attributes
    ----------
    available : bool
        True when ``transformers`` (and ``torch``) can be imported.
    version : str or None
        ``transformers.__version__``; None when it is not installed.
    n_layers : int or None
        The layers compared (the larger of the two layer counts); None when nothing was checked.
    n_agree : int or None
        How many of them agree in every compared field.
    differences : list of str
        One line per difference, naming the layer, its layer type (posenc's) and the field, e.g.
        ``"layer 3 (sliding_attention): sliding window: transformers 4096, posenc None"``; a difference that
        is not one layer's (the layer count) names no layer.
    reason : str or None
        Why nothing was checked ("transformers is not installed", "transformers 5.23.0 has no model_type
        'foo'", ...); None when the check ran.
    model_type : str or None
        The model type of the language model as ``transformers`` reads the config (its text sub-config's).
    posenc_model_type : str or None
        The model type whose rules posenc read it with.
    seconds : float
        How long the check took (building and running the tiny model, reading the config with posenc).
    """

    available: bool
    version: str | None
    n_layers: int | None = None
    n_agree: int | None = None
    differences: list[str] = field(default_factory=list)
    reason: str | None = None
    model_type: str | None = None
    posenc_model_type: str | None = None
    seconds: float = 0.0

    @property
    def checked(self) -> bool:
        """True when the check ran (``reason`` is None)."""
        return self.reason is None

    @property
    def agrees(self) -> bool:
        """True when the check ran and found no difference."""
        return self.checked and not self.differences

    def line(self, max_differences: int = 3) -> str:
        """One line: "checked against transformers 5.23.0: 32 of 32 layers agree" (then "; differs: ...").

        Differences with the same field and values on several layers are written once, with the layers
        ("layers 0-2, 5 (sliding_attention): sliding window: transformers 4096, posenc None"); at most
        ``max_differences`` of those, then how many more.
        """
        if not self.available:
            return f"not checked against transformers: {self.reason}"
        if self.reason is not None:
            return f"not checked against transformers {self.version}: {self.reason}"
        out = f"checked against transformers {self.version}: {self.n_agree} of {self.n_layers} layers agree"
        if self.differences:
            grouped = _group(self.differences)
            shown = grouped[:max_differences]
            more = len(grouped) - len(shown)
            out += "; differs: " + "; ".join(shown) + (f"; and {more} more" if more else "")
        return out


def _group(differences: list[str]) -> list[str]:
    """Differences with the same text after "layer i" joined into one, naming the layers as ranges."""
    order: dict[str, list[int]] = {}
    plain: list[str] = []
    for line in differences:
        head, _, rest = line.partition(" ")
        index, _, text = rest.partition(" ")
        if head == "layer" and index.isdigit() and text:
            order.setdefault(text, []).append(int(index))
        else:
            plain.append(line)
            order.setdefault(line, [])
    out = []
    for text, indices in order.items():
        if not indices:
            out.append(text)
            continue
        ranges, start = [], indices[0]
        for previous, current in zip(indices, [*indices[1:], None], strict=True):
            if current != previous + 1:
                ranges.append(str(start) if start == previous else f"{start}-{previous}")
                start = current
        out.append(("layer " if len(indices) == 1 else "layers ") + ", ".join(ranges) + " " + text)
    return out


# --- configs ------------------------------------------------------------------------------------


@contextlib.contextmanager
def _quiet():
    """No warnings and no log records below ERROR (the library warns about every default it fills in)."""
    level = logging.root.manager.disable
    logging.disable(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            yield
        finally:
            logging.disable(level)


def _config_mapping():
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    return CONFIG_MAPPING


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


def small_config(model_type: str, heads: int = 2, **extra) -> dict:
    """A config dict a tiny model of ``model_type`` can run: the class's head size, 2 heads, small everything else."""
    cls = _config_mapping()[model_type]
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


def shrink(text: dict, heads: int = 1) -> dict:
    """A real (language-model) config made tiny for a forward pass: same head size, rope fields and layer pattern.

    Keeps ``model_type``, the layer count and pattern (``layer_types`` and the fields a class derives it
    from), every rope field, the windows (``sliding_window``, ``attention_chunk_size``, ...) and the head
    size (``head_dim``, or ``hidden_size / num_attention_heads``); shrinks the width (``heads`` heads,
    ``hidden_size = heads * head_dim``), the MLP, the vocabulary and the experts (:data:`SMALL`, for the
    fields the config has). A config with 2 heads or fewer (:func:`small_config`'s) keeps its head counts
    (some classes need an even number of key-value heads). Shrinking a shrunk config changes nothing.
    """
    text = dict(text)
    cls = _config_mapping()[text["model_type"]]
    fields = getattr(cls, "__dataclass_fields__", {})
    with _quiet():
        default = cls()
    n_heads = text.get("num_attention_heads") or getattr(default, "num_attention_heads", None)
    hidden = text.get("hidden_size") or getattr(default, "hidden_size", None)
    head_dim = text.get("head_dim") or getattr(default, "head_dim", None) or hidden // n_heads
    for key, value in SMALL.items():
        if text.get(key) is not None or (key in fields and (_attribute(default, key) is not None or key in ROUTING)):
            text[key] = value
    kv_heads = text.get("num_key_value_heads")
    if isinstance(n_heads, int) and n_heads <= 2 and (not isinstance(kv_heads, int) or kv_heads <= n_heads):
        heads = n_heads  # already narrow: the head counts stay
    else:
        text["num_attention_heads"] = heads
        if "num_key_value_heads" in fields:
            text["num_key_value_heads"] = heads
    text["hidden_size"] = heads * head_dim
    if "head_dim" in fields and "head_dim" in text:
        text["head_dim"] = head_dim
    for key in ("quantization_config", "torch_dtype", "dtype"):  # run in the check's dtype, unquantized
        text.pop(key, None)
    for key, overrides in list(text.items()):  # per-layer overrides (Gemma 4's full layers): the same sizes
        if key.endswith("per_layer_config") and isinstance(overrides, Mapping):
            text[key] = {
                layer: _shrink_overrides(values, heads) if isinstance(values, Mapping) else values
                for layer, values in overrides.items()
            }
    return text


def _shrink_overrides(values: Mapping, heads: int) -> dict:
    """One layer's overrides made as narrow as ``shrink`` makes the config (head size and windows kept)."""
    out = dict(values)
    for key in out:
        if key in ("num_attention_heads", "num_key_value_heads"):
            out[key] = heads
        elif key in SMALL and out[key] is not None:
            out[key] = SMALL[key]
    return out


def build_config(raw: dict):
    """The library's configuration object for ``raw`` (as ``AutoConfig.for_model`` does)."""
    with _quiet():
        return _config_mapping()[raw["model_type"]](**{k: v for k, v in raw.items() if k != "model_type"})


def reference_text_config(raw: Mapping):
    """The reference library's reading of a whole config: ``AutoConfig.for_model(**raw).get_text_config()``.

    A multimodal config gives its language model's configuration object, with the model type the library
    gives it (e.g. "qwen2_5_vl_text" for a flat Qwen2.5-VL config, "gemma3_text" for Gemma 3's text_config).
    """
    from transformers import AutoConfig

    with _quiet():
        whole = AutoConfig.for_model(**dict(raw))
        try:
            return whole.get_text_config(decoder=True)
        except TypeError:  # an older signature
            return whole.get_text_config()


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


def _rotary_modules(model):
    return [(n, m) for n, m in model.named_modules() if type(m).__name__.endswith("RotaryEmbedding")]


def _meta_model(config):
    """The model for ``config`` on the meta device (no memory, no weight init), eager attention."""
    import torch

    with _quiet(), torch.device("meta"):
        try:
            return _model_class(config)._from_config(
                config, dtype=torch.get_default_dtype(), attn_implementation="eager"
            )
        except (ValueError, TypeError) as error:
            if "attn_implementation" not in str(error) and "eager" not in str(error):
                raise
            return _model_class(config)._from_config(config, dtype=torch.get_default_dtype())


def build_model(config):
    """The model for ``config`` on the CPU: constant weights, buffers as its own init sets them, fresh rotary modules.

    Eager attention, so that every mask is a tensor made by one of the library's mask functions.
    """
    import torch

    model = _meta_model(config)
    size = sum(p.numel() for p in model.parameters()) + sum(b.numel() for b in model.buffers())
    if size > MAX_ELEMENTS:
        raise MemoryError(f"the tiny model of {type(config).__name__} would hold {size:,} numbers; shrink its config")
    with _quiet():
        model.to_empty(device="cpu")
        with torch.no_grad():
            for module in model.modules():  # buffers (position ids, token type ids) as the model's own init sets them
                if next(module.buffers(recurse=False), None) is not None:
                    with contextlib.suppress(Exception):
                        model._init_weights(module)
            for parameter in model.parameters():
                parameter.fill_(0.02)
            for name, module in _rotary_modules(model):
                parent = model.get_submodule(name.rpartition(".")[0]) if "." in name else model
                setattr(parent, name.rpartition(".")[2], type(module)(module.config))
    return model.eval()


def _layer_index(model, n_layers: int) -> dict[int, int]:
    """id(module) -> the index of the decoder layer that holds it (the first ModuleList of n_layers modules)."""
    import torch

    lists = [m for m in model.modules() if isinstance(m, torch.nn.ModuleList) and len(m) == n_layers]
    owner = {}
    if lists:
        for i, layer in enumerate(lists[0]):
            for sub in layer.modules():
                owner[id(sub)] = i
    return owner


# --- one traced forward pass --------------------------------------------------------------------


@dataclass
class Trace:
    """What one forward pass of a tiny model did: its rotary calls and its attention calls, by layer.

    ``rotary``: one dict per ``apply_*rotary*`` call: ``layer``, ``function``, ``name``, ``self`` (the
    calling module) and ``args`` (the bound arguments, for :func:`rotation_of`). ``attention``: one dict
    per attention-function call: ``layer``, ``module`` (its name in the model), ``self``, ``scaling`` (as
    passed; None when not), ``sliding_window`` (as passed, or the module's attribute; None when neither),
    ``mask`` (the kind of mask the call got: ("sliding", window), ("chunked", size), ("full", None), or None
    where no known mask function made it). ``n_layers``: the config's ``num_hidden_layers``.
    """

    rotary: list = field(default_factory=list)
    attention: list = field(default_factory=list)
    n_layers: int = 0
    model: object = None


#: Mask functions of the library and the kind of mask each makes (their names in the modeling modules).
_MASKS = {
    "create_causal_mask": "full",
    "create_bidirectional_mask": "full",
    "create_sliding_window_causal_mask": "sliding",
    "create_bidirectional_sliding_window_mask": "sliding",
    "create_chunked_causal_mask": "chunked",
}


def record(config, positions=POSITIONS) -> Trace:
    """One forward pass of the tiny model of ``config`` at ``positions``, recording rotary and attention calls.

    Calls made by a DSA indexer (a module whose class name has "Indexer": it rotates its own scoring heads,
    not the attention's queries and keys) are left out.
    """
    import torch
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    model = build_model(config)
    n_layers = getattr(config, "num_hidden_layers", -1)
    owner = _layer_index(model, n_layers)
    names = {id(m): n for n, m in model.named_modules()}
    modules = {sys.modules[type(m).__module__] for m in model.modules()}
    out = Trace(n_layers=n_layers, model=model)
    masks: dict[int, tuple] = {}
    kept = []  # the masks themselves, so that no id is reused while the pass runs
    patched = []
    for module in modules:
        for name, function in list(vars(module).items()):
            if not inspect.isfunction(function):
                continue
            if name.startswith("apply") and ("rotary" in name or "rope" in name):
                setattr(module, name, _rotary_wrapper(function, name, owner, out.rotary))
                patched.append((module, name, function))
            elif name in _MASKS:
                setattr(module, name, _mask_wrapper(function, _MASKS[name], masks, kept))
                patched.append((module, name, function))
    original = ALL_ATTENTION_FUNCTIONS.__dict__.get("get_interface")

    def get_interface(implementation, default, _get=ALL_ATTENTION_FUNCTIONS.get_interface):
        return _attention_wrapper(_get(implementation, default), owner, names, masks, out.attention)

    ALL_ATTENTION_FUNCTIONS.get_interface = get_interface
    try:
        ids = (torch.arange(len(positions)) % 50 + 3)[None]
        with torch.no_grad(), _quiet():
            model(input_ids=ids, position_ids=torch.tensor(list(positions))[None], use_cache=False)
    finally:
        for module, name, function in patched:
            setattr(module, name, function)
        if original is None:
            del ALL_ATTENTION_FUNCTIONS.get_interface
        else:
            ALL_ATTENTION_FUNCTIONS.get_interface = original
    return out


def _rotary_wrapper(function, name, owner, calls):
    signature = inspect.signature(function)

    def wrapper(*args, **kwargs):
        caller = inspect.currentframe().f_back.f_locals.get("self")
        bound = signature.bind(*args, **kwargs)
        if "Indexer" not in type(caller).__name__:
            layer = owner.get(id(caller), getattr(caller, "layer_idx", None))
            calls.append(
                {"layer": layer, "function": function, "name": name, "self": caller, "args": dict(bound.arguments)}
            )
        return function(*args, **kwargs)

    return wrapper


def _mask_wrapper(function, kind, masks, kept):
    signature = inspect.signature(function)
    # a mask the attention could skip (a window longer than the traced tokens) is made all the same, so that
    # the attention call gets a tensor this wrapper has seen
    skips = [name for name in ("allow_is_causal_skip", "allow_is_bidirectional_skip") if name in signature.parameters]

    def wrapper(*args, **kwargs):
        bound = signature.bind_partial(*args, **kwargs)
        for name in skips:
            bound.arguments[name] = False
        result = function(*bound.args, **bound.kwargs)
        config = bound.arguments.get("config")
        value = None
        if kind == "sliding":
            value = getattr(config, "sliding_window", None)
        elif kind == "chunked":
            value = getattr(config, "attention_chunk_size", None)
        if result is not None and not isinstance(result, Mapping):
            masks[id(result)] = (kind, value)
            kept.append(result)
        return result

    return wrapper


def _attention_wrapper(function, owner, names, masks, calls):
    def attention(*args, **kwargs):
        module = args[0] if args else kwargs.get("module")
        mask = args[4] if len(args) > 4 else kwargs.get("attention_mask")
        if module is not None and "Indexer" not in type(module).__name__:
            window = kwargs.get("sliding_window", getattr(module, "sliding_window", None))
            calls.append(
                {
                    "layer": owner.get(id(module), getattr(module, "layer_idx", None)),
                    "module": names.get(id(module)),
                    "self": module,
                    "scaling": kwargs.get("scaling"),
                    "sliding_window": window if isinstance(window, int) and not isinstance(window, bool) else None,
                    "mask": masks.get(id(mask)) if mask is not None else None,
                }
            )
        return function(*args, **kwargs)

    return attention


def trace(config, positions=POSITIONS) -> list[dict]:
    """One forward pass at ``positions``; each rotary call: {"layer", "function", "name", "self", "args"}."""
    return record(config, positions).rotary


def _record_in_float64(config, positions) -> Trace:
    """:func:`record` in float64 where the model's kernels allow, else in float32 (grouped MoE matmuls)."""
    import torch

    previous = torch.get_default_dtype()
    for dtype in (torch.float64, torch.float32):
        torch.set_default_dtype(dtype)
        try:
            return record(config, positions)
        except RuntimeError:
            if dtype == torch.float32:
                raise
        finally:
            torch.set_default_dtype(previous)
    raise AssertionError("unreachable")


# --- rotations ----------------------------------------------------------------------------------


def rotation_of(call: dict, n_positions: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Replay a recorded call on a random query: (probe, output), both as float64 (seq, heads, head_dim).

    The probe replaces the call's first tensor argument (the queries) and has its shape; the sequence
    axis is the one whose size is the number of positions.
    """
    import torch

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
    from .rope import apply_rope, interleaved_to_half_permutation

    r = layer.rotary_dim
    positions = np.asarray(positions) * layer.direction
    x = np.moveaxis(probe[..., :r], 0, -2)
    rotated = apply_rope(x, positions, layer.inv_freq, layout=layer.layout, attention_factor=layer.attention_factor)
    plain = np.array(probe)
    plain[..., :r] = np.moveaxis(rotated, -2, 0)
    out = {"plain": plain}
    if layer.layout == "interleaved":
        deinterleaved = np.array(plain)
        deinterleaved[..., :r] = plain[..., interleaved_to_half_permutation(r)]
        out["deinterleaved"] = deinterleaved
    return out


def _rotation_problem(layer, call, positions) -> str | None:
    """Why posenc's rotation of ``layer`` is not what the recorded ``call`` does (None when it is)."""
    pos = np.asarray(positions, dtype=np.float64)
    probe, out = rotation_of(call, len(pos))
    if layer.rotary_dim > probe.shape[-1]:
        return f"rotation: posenc rotates {layer.rotary_dim} dims, transformers' heads have {probe.shape[-1]}"
    # the reference computes in float32: base ** (2i/d) carries a relative error of about 1e-7 ln(base), and
    # the angle p * theta_i that times p; so the tolerance grows with the position and the base
    base = layer.base or 10000.0
    tolerance = (2e-6 + 3e-7 * (1 + math.log(base)) * pos[:, None, None]) * (1.0 + np.abs(probe).max())
    wanted = expected_rotation(layer, probe, pos)
    if any(np.all(np.abs(out - want) <= tolerance) for want in wanted.values()):
        return None
    error = min(np.abs(out - want).max() for want in wanted.values())
    return (
        f"rotation: differs by {error:.2g} (posenc: {layer.rope_type}, base {base:g}, rotary_dim "
        f"{layer.rotary_dim} of {probe.shape[-1]}, layout {layer.layout}, attention factor {layer.attention_factor:g})"
    )


# --- windows and softmax scale ------------------------------------------------------------------


def _reference_window(calls: list) -> tuple[int | None, int | None]:
    """(sliding window, chunk size) of a layer from its attention calls: the mask's, else as passed or held."""
    if not calls:
        return None, None
    call = calls[0]
    if call["mask"] is not None:
        kind, value = call["mask"]
        return (value if kind == "sliding" else None), (value if kind == "chunked" else None)
    chunk = getattr(call["self"], "attention_chunk_size", None)
    return call["sliding_window"], chunk if isinstance(chunk, int) else None


def _default_rope(raw: dict) -> dict | None:
    """``raw`` with every rope parameter set reset to rope_type "default" (None when all are default already)."""

    def reset(params):
        if not isinstance(params, Mapping):
            return params, False
        if any(isinstance(v, Mapping) for v in params.values()):  # nested by layer type
            pairs = {k: reset(v) for k, v in params.items()}
            return {k: v for k, (v, _) in pairs.items()}, any(changed for _, changed in pairs.values())
        kind = params.get("rope_type", params.get("type", "default"))
        if kind in (None, "default"):
            return params, False
        kept = {k: v for k, v in params.items() if k not in _SCALING_KEYS}
        kept["rope_type"] = "default"
        kept.pop("type", None)
        return kept, True

    out, changed = dict(raw), False
    for key in ("rope_parameters", "rope_scaling"):
        if key in out:
            out[key], was = reset(out[key])
            changed = changed or was
    return out if changed else None


def _baseline_scalings(small: dict, rec: Trace) -> dict:
    """Attention module name -> its ``scaling`` with the rope scaling reset to "default" (the softmax's own)."""
    default = _default_rope(small)
    if default is None:
        return {c["module"]: getattr(c["self"], "scaling", None) for c in rec.attention}
    model = _meta_model(build_config(default))
    out = {}
    for call in rec.attention:
        with contextlib.suppress(AttributeError):
            out[call["module"]] = getattr(model.get_submodule(call["module"]), "scaling", None)
    return out


def _reference_softmax_scale(calls: list, baseline: dict) -> float | None:
    """The multiplier of the softmax scale of a layer: the module's ``scaling`` over the default-rope module's.

    None where the module holds no number as its ``scaling`` (a learnt or per-dimension one, or none).
    """
    if not calls:
        return None
    call = calls[0]
    used, base = getattr(call["self"], "scaling", None), baseline.get(call["module"])
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (used, base))
    if not numbers or not base:
        return None
    return float(used) / float(base)


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


# --- the check ----------------------------------------------------------------------------------


def _differences(layers, rec: Trace, positions, fields, baseline) -> tuple[list[str], int, int]:
    """The differences between posenc's ``layers`` and the trace, layer by layer; (differences, n_agree, n)."""
    n_ref, n_posenc = rec.n_layers, len(layers)
    n = max(n_ref, n_posenc)
    general, by_layer = [], {i: [] for i in range(n)}
    if n_ref != n_posenc:  # the layers only one of them has do not agree
        general.append(f"layer count: transformers {n_ref}, posenc {n_posenc}")
    rotary: dict[int, list] = {}
    attention: dict[int, list] = {}
    for call in rec.rotary:
        if call["layer"] is not None:
            rotary.setdefault(call["layer"], []).append(call)
    for call in rec.attention:
        if call["layer"] is not None:
            attention.setdefault(call["layer"], []).append(call)
    for i in range(min(n_ref, n_posenc)):
        layer = layers[i]

        def say(text: str, i=i, layer=layer) -> str:
            return f"layer {i} ({layer.layer_type}): {text}"

        if "rotation" in fields:
            if bool(rotary.get(i)) != layer.rope:
                by_layer[i].append(
                    say("rotation: transformers rotates, posenc does not")
                    if rotary.get(i)
                    else say(
                        f"rotation: transformers does not rotate, posenc does ({layer.rope_type}, base {layer.base:g})"
                    )
                )
            elif layer.rope:
                problems = {_rotation_problem(layer, call, positions) for call in rotary[i]} - {None}
                by_layer[i].extend(say(p) for p in sorted(problems))
        if "window" in fields:
            window, chunk = _reference_window(attention.get(i, []))
            if window != layer.sliding_window:
                by_layer[i].append(say(f"sliding window: transformers {window}, posenc {layer.sliding_window}"))
            if chunk != layer.attention_chunk_size:
                by_layer[i].append(
                    say(f"attention chunk size: transformers {chunk}, posenc {layer.attention_chunk_size}")
                )
        if "softmax_scale" in fields:
            scale = _reference_softmax_scale(attention.get(i, []), baseline)
            if scale is not None and not math.isclose(scale, layer.softmax_scale, rel_tol=1e-6):
                by_layer[i].append(
                    say(f"softmax scale: transformers {_fmt(scale)}, posenc {_fmt(float(layer.softmax_scale))}")
                )
    differences = general + [line for i in range(n) for line in by_layer[i]]
    return differences, sum(1 for i in range(min(n_ref, n_posenc)) if not by_layer[i]), n


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def check_against_reference(
    config, seq_len: int | None = None, *, fields=FIELDS, positions=POSITIONS, strict: bool = False
) -> ReferenceCheck:
    """posenc's reading of ``config`` against the reference library's tiny model of the same config, layer by layer.

    Parameters
    ----------
    config : dict
        A ``config.json`` as a dict, as given (nested or flat; a :data:`posenc.MODELS` entry or a
        ``transformers`` config object is read as its dict). ``transformers`` builds its configuration
        class from the whole dict (``AutoConfig.for_model``) and the check runs its language model's
        sub-config (``get_text_config()``), made narrow by ``shrink``.
    seq_len : int, optional
        The current sequence length, as for :func:`posenc.from_config`: the last traced position is
        ``seq_len - 1``, so that the library's dynamic methods (dynamic NTK, LongRoPE) see that length.
    fields : tuple of str
        What to compare (``FIELDS``): "rotation", "window" (sliding window and chunk size),
        "softmax_scale".
    positions : list of int
        The positions of the traced tokens (``POSITIONS``).
    strict : bool
        Raise the error when the library fails to build or run the tiny model (for tests), instead of
        returning it as the ``reason``.

    Returns
    -------
    ReferenceCheck
        ``available`` False (and ``reason``) without ``transformers``; ``reason`` set when the library has
        no such model type, cannot read the config or cannot run its tiny model; else the layers compared,
        how many agree and every difference. A config posenc cannot read raises as
        :func:`posenc.from_config` does.
    """
    from .config import _as_dict, from_config
    from .models import ModelEntry

    started = time.perf_counter()
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise ValueError(f"fields must be among {list(FIELDS)}, got {unknown}")
    entry = config if isinstance(config, ModelEntry) else None  # read by its scheme; checked by its fields
    config = _as_dict(entry.config if entry is not None else config)
    layers = from_config(entry if entry is not None else config, seq_len=seq_len)

    def result(**kwargs) -> ReferenceCheck:
        kwargs.setdefault("available", True)
        kwargs.setdefault("version", version)
        return ReferenceCheck(posenc_model_type=layers.model_type, seconds=time.perf_counter() - started, **kwargs)

    version = None
    try:
        import transformers
    except ImportError:
        return result(available=False, reason="transformers is not installed")
    version = getattr(transformers, "__version__", "?")
    try:
        import torch  # noqa: F401
    except ImportError:
        return result(available=False, reason=f"torch is not installed (transformers {version} needs it to run)")
    model_type = config.get("model_type")
    if not isinstance(model_type, str):
        return result(reason="the config has no model_type, so transformers cannot tell its class")
    if model_type not in _config_mapping():
        remote = " (the family needs remote code: its config names auto_map)" if "auto_map" in config else ""
        return result(reason=f"transformers {version} has no model_type {model_type!r}{remote}")
    try:
        text = reference_text_config(config)
    except Exception as error:
        if strict:
            raise
        return result(reason=f"transformers {version} cannot read the config: {_first_line(error)}")
    if not hasattr(text, "to_dict"):
        return result(
            reason=f"transformers {version} reads model_type {model_type!r} as "
            f"{_config_mapping()[model_type].__name__}, "
            f"which has no language-model sub-config (its text_config stays a plain {type(text).__name__})"
        )
    text_type = getattr(text, "model_type", None)
    if seq_len is not None:
        positions = [p for p in positions if p < seq_len - 1] + [seq_len - 1]
    else:  # within the trained length: a learned position table ends there, and dynamic methods start after it
        limit = next((v for v in map(functools.partial(_attribute, text), _LENGTHS) if isinstance(v, int)), None)
        if limit is not None and limit > 2:
            positions = [p for p in positions if p < limit]
    try:
        with _quiet():
            small = shrink({**text.to_dict(), "model_type": text_type})
        rec = _record_in_float64(build_config(small), positions)
        baseline = _baseline_scalings(small, rec) if "softmax_scale" in fields else {}
        differences, n_agree, n = _differences(layers, rec, positions, fields, baseline)
    except Exception as error:
        if strict:
            raise
        return result(
            reason=f"transformers {version} could not run a tiny model of {text_type!r}: {_first_line(error)}",
            model_type=text_type,
        )
    return result(n_layers=n, n_agree=n_agree, differences=differences, model_type=text_type)


def rotary_reference(raw: dict) -> dict:
    """The library's own rotary class for ``raw`` (full size, no model): layer type (or None) -> (inv_freq, factor).

    ``raw`` is read as :func:`check_against_reference` reads it (the library's text sub-config of the whole
    config); float64 NumPy copies of what the class computed (in float32) at construction.
    """
    import torch

    config = reference_text_config(raw)
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
