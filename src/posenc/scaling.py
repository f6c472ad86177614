"""Context-window extension for RoPE: new rotation speeds for a model trained at length ``L``.

Every method is one function ``(head_dim, base, factor, original_max_position_embeddings,
**params) -> (inv_freq, attention_factor)`` under the :func:`posenc.scaling.scaling_method` decorator, which
enters it in :data:`posenc.scaling.SCALING_METHODS` and declares what a config must give for it
(read by :func:`posenc.from_config`); the shape of ``ROPE_INIT_FUNCTIONS`` in the ``transformers`` library
(``modeling_rope_utils.py``), whose results these functions reproduce for the same
inputs (they compute in float64 where ``transformers`` uses float32). Call them
through :func:`posenc.scaled_inv_freq`, which checks the arguments.

Symbols: ``d`` = head_dim, ``b`` = base, ``s`` = factor, ``L`` =
original_max_position_embeddings (the length the model was trained at), pair index
``i = 0 .. d/2 - 1`` with original speed ``theta_i = b ** (-2i/d)``.
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import math
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ._validation import (
    as_real_array,
    check_base,
    check_choice,
    check_even_int,
    check_int,
    check_real,
)
from .rope import LAYOUTS, keep_fastest_pairs, rope_inv_freq, rotate_pairs

__all__ = [  # the registered methods' functions are added below, where they are defined
    "SCALING_METHODS",
    "ConfigParameter",
    "MethodSpec",
    "dynamic_ntk_cached_keys",
    "dynamic_ntk_factor",
    "longrope_attention_factor",
    "ntk_scaled_base",
    "scaled_inv_freq",
    "scaling_bands",
    "scaling_method",
    "scaling_spec",
    "yarn_attention_factor",
    "yarn_correction_dim",
    "yarn_correction_range",
    "yarn_matched_betas",
    "yarn_ramp",
    "yarn_softmax_scale_multiplier",
]

ScalingFunction = Callable[..., "tuple[np.ndarray, float]"]

#: Method name -> function returning ``(inv_freq, attention_factor)``, in the order of definition.
#: The :func:`posenc.scaling.scaling_method` decorator fills it: a new method is one decorated function.
SCALING_METHODS: dict[str, ScalingFunction] = {}

_LENGTHS = ("original", "max", None)
_FACTORS = ("required", "optional", "derived", None)

#: The warning of a method whose speeds follow the current length, unless it declares its own ``cache_warning``.
_CACHE_WARNING = (
    "the speeds depend on the current length; a cache of rotated keys keeps the speeds each key was rotated "
    "with, so keys cached before RoPE (or re-rotated) are needed for exact results"
)


@dataclass(frozen=True)
class ConfigParameter:
    """A keyword-only parameter of a method as a config gives it: ``kind`` is "number", "bool" or "numbers"."""

    name: str
    kind: str
    required: bool  # the config must give it (transformers reads it without a default)
    default: object = None  # the function's default (None when it has none)


@dataclass(frozen=True)
class MethodSpec:
    """What a scaling method declares about itself, once, where it is defined (:func:`posenc.scaling.scaling_method`).

    :func:`posenc.from_config` reads a config's rope parameters through it, :class:`posenc.nn.RotaryEmbedding`
    asks it whether the speeds follow the current length, :func:`posenc.explain.explain` describes the
    method with it (title, note, bands, warnings) and the API page prints it as a table.
    """

    name: str
    length: str | None  # which config length is L: "original", "max" or None (the method does not use L)
    factor: str | None  # "required", "optional" (1.0), "derived" (max_position_embeddings / L) or None (unused)
    parameters: tuple[ConfigParameter, ...]  # keyword-only parameters read from the config, same names
    reads_seq_len: bool  # takes the current sequence length ``seq_len``
    seq_len_required: bool
    partial_rotary: bool  # takes ``partial_rotary_factor`` itself, over the whole head (p-RoPE)
    config_aliases: tuple[str, ...]  # other ``rope_type`` names a config may use for it
    # what posenc.explain says about it:
    title: str  # how a reader names it ("YaRN"); the name when not declared
    note: str | None  # one line on what it does, after its parameters
    bands: bool  # it keeps, blends and interpolates pairs (scaling_bands): explain lists them
    shown: tuple[str, ...]  # parameters named even when a config leaves them out (with their defaults)
    cache_warning: str | None  # for speeds that follow the length: why cached keys go stale ("{L}": L)

    @property
    def config_names(self) -> tuple[str, ...]:
        """Every ``rope_type`` a config may name this method by."""
        return (self.name, *self.config_aliases)


def scaling_method(
    name: str,
    *,
    length: str | None = "original",
    factor: str | None = "required",
    config_required: tuple[str, ...] = (),
    not_in_config: tuple[str, ...] = (),
    partial_rotary: bool = False,
    config_aliases: tuple[str, ...] = (),
    title: str | None = None,
    note: str | None = None,
    bands: bool = False,
    shown: tuple[str, ...] = (),
    cache_warning: str | None = None,
) -> Callable[[Callable], ScalingFunction]:
    """Register a scaling method: the decorator is the registration and its whole description.

    The function is called as ``f(head_dim, base, factor, original_max_position_embeddings,
    **params)`` and returns ``(inv_freq, attention_factor)``; the decorator checks the common
    arguments and ``params`` (against the function's keyword-only parameters) once, so the body
    holds only the formula, and enters it in :data:`posenc.scaling.SCALING_METHODS` under ``name``. A method
    that takes only the standard arguments needs nothing more. What a config must give
    (read by :func:`posenc.from_config`), when it differs from the defaults:

    * ``length``: which config length is the trained length ``L``: "original"
      (``original_max_position_embeddings``, else ``max_position_embeddings``), "max"
      (``max_position_embeddings``, as transformers' dynamic NTK) or None (not used);
    * ``factor``: "required", "optional" (1.0 when absent), "derived" (``max_position_embeddings / L``
      when absent, as transformers does for YaRN and LongRoPE) or None (not used);
    * ``config_required``: keyword-only parameters a config must give (transformers reads them
      without a default); the others are read when present, by their own names, as numbers,
      booleans or lists of numbers after their annotations;
    * ``not_in_config``: keyword-only parameters never read from a config;
    * ``partial_rotary``: the method takes ``partial_rotary_factor`` itself and keeps the whole head;
    * ``config_aliases``: other ``rope_type`` names configs use for it.

    A keyword-only ``seq_len`` is the current sequence length, given by the caller (never a
    config field); a method that takes it has speeds that change with the length.

    What :func:`posenc.explain.explain` says about it (it names no method itself):

    * ``title``: how a reader names the method ("YaRN"; default: ``name``), followed by ``s`` when
      it uses a factor, ``L`` when it uses a trained length, the numbers and booleans the config
      gave and ``note``;
    * ``note``: one line on what it does (default for a method with ``seq_len``: "speeds change
      with the length");
    * ``bands``: it keeps some pairs, interpolates others and blends between; explain lists which,
      from :func:`posenc.scaling.scaling_bands`;
    * ``shown``: keyword-only parameters named even when a config leaves them out, with their defaults;
    * ``cache_warning``: only with ``seq_len``: why keys cached with other speeds go stale (``{L}`` is
      replaced by the trained length); a method with ``seq_len`` that declares none gets a general one.

    With ``factor="derived"`` explain warns when a config's factor is not ``max_position_embeddings / L``.
    """
    for argument, value, allowed in (("length", length, _LENGTHS), ("factor", factor, _FACTORS)):
        if value not in allowed:
            raise ValueError(f"{argument} must be one of {list(allowed)}, got {value!r}")
    for argument, value in (("title", title), ("note", note), ("cache_warning", cache_warning)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"{argument} must be a non-empty string or None, got {value!r}")
    if not isinstance(bands, bool):
        raise TypeError(f"bands must be True or False, got {bands!r}")
    if cache_warning is not None:
        try:
            cache_warning.format(L=0)
        except (KeyError, IndexError, ValueError) as error:
            raise ValueError(
                f"cache_warning may hold only the field {{L}} (the trained length), got {cache_warning!r}"
            ) from error

    def decorate(function: Callable) -> ScalingFunction:
        taken = {alias: method for method, f in SCALING_METHODS.items() for alias in f.spec.config_names}
        for config_name in (name, *config_aliases):
            if config_name in taken:
                raise ValueError(
                    f"a scaling method called {config_name!r} is already registered"
                    + ("" if taken[config_name] == config_name else f" (an alias of {taken[config_name]!r})")
                )
        checked = _checked(name, function)
        described = {
            "title": title,
            "note": note,
            "bands": bands,
            "shown": tuple(shown),
            "cache_warning": cache_warning,
        }
        checked.spec = _spec(
            name, function, length, factor, config_required, not_in_config, partial_rotary, config_aliases, described
        )
        SCALING_METHODS[name] = checked
        return checked

    return decorate


def _described(name, parameters, reads_seq_len, title, note, bands, shown, cache_warning) -> dict:
    """What explain says about a method, checked against its parameters, with the defaults filled in."""
    readable = {p.name for p in parameters if p.kind in ("number", "bool")}
    for listed in shown:
        if listed not in readable:
            raise ValueError(
                f"method {name!r} shows {listed!r}, which is not one of the numbers or booleans it reads "
                f"from a config: {sorted(readable) or 'none'}"
            )
    if cache_warning is not None and not reads_seq_len:
        raise ValueError(
            f"method {name!r} declares a cache_warning, but its speeds do not follow the length "
            "(it takes no keyword-only seq_len)"
        )
    if reads_seq_len:
        cache_warning = cache_warning or _CACHE_WARNING
        note = note or "speeds change with the length"
    return {"title": title or name, "note": note, "bands": bands, "shown": shown, "cache_warning": cache_warning}


def scaling_spec(rope_type: str, name: str = "rope_type") -> MethodSpec:
    """The :class:`MethodSpec` of the method a config calls ``rope_type``: its name or one of its aliases.

    ``name`` is how an error names the value (e.g. ``"rope_scaling['rope_type']"``); the error lists
    every name and alias of :data:`posenc.scaling.SCALING_METHODS`.
    """
    specs = {alias: f.spec for f in SCALING_METHODS.values() for alias in f.spec.config_names}
    return specs[check_choice(name, rope_type, specs)]


def _keyword_only(function: Callable) -> dict[str, inspect.Parameter]:
    return {
        name: p
        for name, p in inspect.signature(function).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }


def _kind(annotation, default) -> str:
    """ "bool", "numbers" or "number", after a parameter's annotation (else its default)."""
    if annotation is inspect.Parameter.empty:
        return "bool" if isinstance(default, bool) else "number"
    kinds = set(typing.get_args(annotation)) or {annotation}
    if bool in kinds:
        return "bool"
    if any(typing.get_origin(k) in (list, tuple, collections.abc.Sequence) for k in kinds):
        return "numbers"
    return "number"


def _spec(name, function, length, factor, config_required, not_in_config, partial_rotary, config_aliases, described):
    keyword_only = _keyword_only(function)
    hints = typing.get_type_hints(function)
    for listed in (*config_required, *not_in_config, *(["partial_rotary_factor"] if partial_rotary else [])):
        if listed not in keyword_only:
            raise ValueError(f"method {name!r} declares {listed!r}, which is not one of its keyword-only parameters")
    skipped = {"seq_len", *not_in_config, *(["partial_rotary_factor"] if partial_rotary else [])}
    parameters = tuple(
        ConfigParameter(
            key,
            _kind(hints.get(key, inspect.Parameter.empty), p.default),
            key in config_required or p.default is inspect.Parameter.empty,
            None if p.default is inspect.Parameter.empty else p.default,
        )
        for key, p in keyword_only.items()
        if key not in skipped
    )
    seq_len = keyword_only.get("seq_len")
    return MethodSpec(
        name=name,
        length=length,
        factor=factor,
        parameters=parameters,
        reads_seq_len=seq_len is not None,
        seq_len_required=seq_len is not None and seq_len.default is inspect.Parameter.empty,
        partial_rotary=partial_rotary,
        config_aliases=tuple(config_aliases),
        **_described(name, parameters, seq_len is not None, **described),
    )


def _checked(method: str, function: Callable) -> ScalingFunction:
    allowed = _keyword_only(function)

    @functools.wraps(function)
    def checked(head_dim, base=10000.0, factor=1.0, original_max_position_embeddings=2048, **params):
        head_dim = check_even_int("head_dim", head_dim)
        base = check_base(base)
        factor = check_real("factor", factor, minimum=1.0)
        length = check_int("original_max_position_embeddings", original_max_position_embeddings, minimum=1)
        unknown = sorted(set(params) - set(allowed))
        if unknown:
            names = ", ".join(sorted(allowed)) or "none"
            raise TypeError(f"method {method!r} got unknown parameter(s) {unknown}; its parameters are: {names}")
        missing = sorted(n for n, p in allowed.items() if p.default is inspect.Parameter.empty and n not in params)
        if missing:
            hint = " (the current sequence length)" if missing == ["seq_len"] else ""
            raise TypeError(f"method {method!r} needs the parameter(s) {missing}{hint}")
        inv_freq, attention_factor = function(head_dim, base, factor, length, **params)
        return np.asarray(inv_freq, dtype=np.float64), float(attention_factor)

    return checked


@scaling_method("default", length=None, factor=None, config_aliases=("mrope",), title="no scaling")
def default_scaling(head_dim, base, factor, original_max_position_embeddings):
    """No scaling: ``theta_i = b ** (-2i/d)`` (RoFormer, Su et al. 2021, eq. 15); ``factor`` is ignored."""
    return rope_inv_freq(head_dim, base), 1.0


@scaling_method("linear", length=None, title="linear interpolation", bands=True)
def linear_scaling(head_dim, base, factor, original_max_position_embeddings):
    """Position interpolation: every speed divided by ``s``, i.e. position ``m`` read as ``m / s``.

    Chen et al. 2023, "Extending Context Window of Large Language Models via
    Positional Interpolation", section 2.3. Every pair, fast or slow, is slowed by the
    same factor, so neighbouring tokens become ``s`` times harder to tell apart.
    """
    return rope_inv_freq(head_dim, base) / factor, 1.0


def ntk_scaled_base(base: float, factor: float, head_dim: int) -> float:
    """The NTK-aware base ``b * s ** (d / (d - 2))`` (bloc97, 2023; YaRN paper, section 3.1).

    The exponent makes the slowest pair (``i = d/2 - 1``) slow down by exactly ``s``,
    as position interpolation would, while pair 0 keeps its speed. For ``d = 128``:
    20221 at ``s = 2`` and 82685 at ``s = 8`` (from ``b = 10000``).
    """
    head_dim = check_even_int("head_dim", head_dim, minimum=4)
    base = check_base(base)
    factor = check_real("factor", factor, minimum=1.0)
    return base * factor ** (head_dim / (head_dim - 2))


@scaling_method("ntk", length=None, title="NTK-aware base change")
def ntk_scaling(head_dim, base, factor, original_max_position_embeddings):
    """NTK-aware scaling: RoPE with the base raised to :func:`posenc.ntk_scaled_base`.

    bloc97, "NTK-Aware Scaled RoPE allows LLaMA models to have extended (8k+) context
    size without any fine-tuning and minimal perplexity degradation", Reddit, 2023;
    YaRN paper (Peng et al. 2023), section 3.1. High frequencies are barely touched;
    the lowest is interpolated by ``s``.
    """
    return rope_inv_freq(head_dim, ntk_scaled_base(base, factor, head_dim)), 1.0


def dynamic_ntk_factor(factor: float, seq_len: int, original_max_position_embeddings: int) -> float:
    """The NTK factor that dynamic NTK uses at the current length: ``s * max(n, L) / L - (s - 1)``.

    As in emozilla's code and ``transformers`` (``_compute_dynamic_ntk_parameters``): 1 up to
    ``L``, then growing with slope ``s / L``. Only with ``s = 1`` does it equal ``n / L``.
    """
    factor = check_real("factor", factor, minimum=1.0)
    seq_len = check_int("seq_len", seq_len, minimum=1)
    length = check_int("original_max_position_embeddings", original_max_position_embeddings, minimum=1)
    return factor * max(seq_len, length) / length - (factor - 1)


@scaling_method(
    "dynamic", length="max", title="dynamic NTK", note="unscaled up to L; past it the speeds change with the length"
)
def dynamic_ntk_scaling(head_dim, base, factor, original_max_position_embeddings, *, seq_len: int):
    """Dynamic NTK: NTK-aware scaling whose factor grows with the current length ``seq_len``.

    emozilla, "Dynamically Scaled RoPE further increases performance of long context
    LLaMA with zero fine-tuning", Reddit, 2023; YaRN paper, section 3.3. As in
    ``transformers``: with ``n = max(seq_len, L)``, the base becomes
    ``b * (s * n / L - (s - 1)) ** (d / (d - 2))``: nothing changes up to ``L``, then the
    effective NTK factor ``s * n / L - (s - 1)`` grows linearly with slope ``s / L``
    (it is ``s + 1`` at ``n = 2 L``, not ``n / L``). With ``s = 1`` it is exactly
    ``n / L``, i.e. static NTK with factor ``n / L``.
    """
    head_dim = check_even_int("head_dim", head_dim, minimum=4)
    effective = dynamic_ntk_factor(factor, seq_len, original_max_position_embeddings)
    scaled_base = base * effective ** (head_dim / (head_dim - 2))
    return rope_inv_freq(head_dim, scaled_base), 1.0


def dynamic_ntk_cached_keys(
    keys, base=10000.0, factor=1.0, original_max_position_embeddings=2048, prefill_len=1, layout="half"
) -> tuple[np.ndarray, np.ndarray]:
    """Keys as a KV cache holds them under dynamic NTK, and their angle error against the current speeds.

    ``keys`` (shape ``(..., N, d)``) are the unrotated keys at positions ``n = 0 .. N-1``.
    A cache that stores *rotated* keys, as ``transformers`` does (its Llama attention
    applies RoPE, then calls ``past_key_values.update``), rotates each key once: a
    prompt of ``prefill_len`` tokens is rotated in one pass at length ``prefill_len``;
    every later key ``n`` at its decoding step, when the sequence has ``n + 1`` tokens.
    So key ``n`` keeps the dynamic NTK speeds ``theta_i(c_n)`` of the length
    ``c_n = max(n + 1, prefill_len)`` (``dynamic_ntk_scaling``), while the query at
    position ``N - 1`` is rotated with ``theta_i(N)``. The YaRN paper (Peng et al. 2023,
    section 3.3) notes that the keys should be cached *before* RoPE for this reason.

    Returns ``(cached, error)``:

    * ``cached``: the keys rotated by ``n * theta_i(c_n)``, same shape and dtype as ``keys``;
    * ``error``: float64, shape ``(N, d/2)``: ``n * (theta_i(c_n) - theta_i(N))`` wrapped
      to ``(-pi, pi]``, the angle by which the cached pair ``i`` of key ``n`` is ahead of
      the same key rotated with the current speeds. ``cached`` equals that fresh key
      turned by ``error``; it is 0 wherever ``c_n = N`` and everywhere while ``N <= L``.
    """
    if not isinstance(keys, np.ndarray):
        raise TypeError(f"keys must be a numpy.ndarray of shape (..., N, head_dim), got {type(keys).__name__}")
    if not np.issubdtype(keys.dtype, np.floating):
        raise TypeError(f"keys must have a floating dtype, got {keys.dtype}")
    if keys.ndim < 2:
        raise ValueError(f"keys must have shape (..., N, head_dim), got shape {keys.shape}")
    head_dim = check_even_int("head_dim (the last axis of keys)", keys.shape[-1], minimum=4)
    n_keys = keys.shape[-2]
    if n_keys < 1:
        raise ValueError(f"keys must hold at least one position (axis -2), got shape {keys.shape}")
    base = check_base(base)
    factor = check_real("factor", factor, minimum=1.0)
    length = check_int("original_max_position_embeddings", original_max_position_embeddings, minimum=1)
    prefill_len = check_int("prefill_len", prefill_len, minimum=1, maximum=n_keys)
    layout = check_choice("layout", layout, LAYOUTS)
    positions = np.arange(n_keys, dtype=np.float64)
    cached_at = np.maximum(np.arange(1, n_keys + 1), prefill_len)  # c_n, the length when key n was rotated
    lengths = np.append(cached_at, n_keys).astype(np.float64)  # ... and the current length N
    # the rule of dynamic_ntk_scaling (and dynamic_ntk_factor), for every length at once
    effective = factor * np.maximum(lengths, length) / length - (factor - 1)
    scaled_base = base * effective ** (head_dim / (head_dim - 2))
    speeds = scaled_base[:, None] ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = positions[:, None] * speeds[:-1]
    error = positions[:, None] * (speeds[:-1] - speeds[-1])
    error = np.angle(np.exp(1j * error))  # wrapped to (-pi, pi]
    return rotate_pairs(keys, np.cos(angles), np.sin(angles), layout), error


def _yarn_mscale(factor: float, mscale: float = 1.0) -> float:
    """``0.1 mscale ln s + 1``, or 1 when ``s <= 1`` (``get_mscale`` in transformers' and the YaRN code)."""
    return 1.0 if factor <= 1 else 0.1 * mscale * math.log(factor) + 1.0


def yarn_attention_factor(factor: float, mscale: float | None = None, mscale_all_dim: float | None = None) -> float:
    """YaRN's temperature ``sqrt(1/t) = 0.1 ln(s) + 1`` (Peng et al. 2023, section 3.4).

    It multiplies both cos and sin, hence both the rotated query and key, so the
    attention logits scale by its square. Equal to 1 when ``s <= 1``. At ``s = 8``: 1.2079.

    The DeepSeek variant, with the rules of ``transformers`` (``_compute_yarn_parameters``
    in ``modeling_rope_utils.py``): only when ``mscale`` and ``mscale_all_dim`` are both
    given and both nonzero is it the ratio
    ``(0.1 mscale ln s + 1) / (0.1 mscale_all_dim ln s + 1)`` (1 when ``mscale ==
    mscale_all_dim``); otherwise (one of them None or 0, e.g. ``mscale_all_dim = 0``)
    both are ignored and it is ``0.1 ln s + 1``, as above. Both must be >= 0.
    DeepSeek-V2/V3 put the rest of the temperature on the softmax scale instead:
    see :func:`posenc.yarn_softmax_scale_multiplier`.
    """
    factor = check_real("factor", factor, positive=True)
    if mscale is not None:
        mscale = check_real("mscale", mscale, minimum=0.0)
    if mscale_all_dim is not None:
        mscale_all_dim = check_real("mscale_all_dim", mscale_all_dim, minimum=0.0)
    if mscale and mscale_all_dim:
        return _yarn_mscale(factor, mscale) / _yarn_mscale(factor, mscale_all_dim)
    return _yarn_mscale(factor)


def yarn_softmax_scale_multiplier(factor: float, mscale: float = 1.0) -> float:
    """What DeepSeek-V2/V3 multiply the softmax scale ``1/sqrt(d_qk)`` by: ``m ** 2``, ``m = 0.1 mscale ln s + 1``.

    DeepSeek-V3, ``inference/model.py``, ``MLA.__init__``: ``softmax_scale = qk_head_dim ** -0.5``,
    then, when ``max_seq_len > original_seq_len``, ``softmax_scale *= mscale * mscale`` with
    ``mscale = 0.1 * args.mscale * ln(rope_factor) + 1``. That condition reads the lengths the
    model is built with (by default 16,384 and 4,096), not the input's: that code applies the
    multiplier to every input of a model built for more than its original length, short ones
    included. ``m = 1`` when ``s <= 1``.

    How it relates to the attention factor ``a`` (:func:`posenc.yarn_attention_factor`):
    ``a`` multiplies cos and sin, so the rotated query and key are each ``a`` times longer
    and their logits scale by ``a ** 2``. DeepSeek's own code puts no factor on cos/sin
    (its ``precompute_freqs_cis`` returns unit complex numbers) and multiplies *all* logits,
    the rotated and the non-rotated dimensions of MLA alike, by ``m ** 2``: with
    ``mscale = 1`` that is YaRN's ``a ** 2``, moved from cos/sin to the softmax scale.
    ``transformers`` (``yarn_apply_mscale`` in ``modeling_deepseek_v3.py``) multiplies the
    softmax scale by this function of ``mscale_all_dim`` (when it is nonzero) and puts
    ``a = m(mscale) / m(mscale_all_dim)`` on cos/sin: rotated logits scale by
    ``m(mscale) ** 2``, the others by ``m(mscale_all_dim) ** 2``, which is DeepSeek's code
    when ``mscale == mscale_all_dim``.
    """
    factor = check_real("factor", factor, positive=True)
    mscale = check_real("mscale", mscale, minimum=0.0)
    return _yarn_mscale(factor, mscale) ** 2


def yarn_correction_dim(
    num_rotations: float, head_dim: int, base: float, original_max_position_embeddings: int
) -> float:
    """The (fractional) pair index that completes ``num_rotations`` turns within ``L`` tokens.

    Pair ``i`` has wavelength ``2 pi b ** (2i/d)``, so it turns ``L / wavelength`` times;
    solving for ``i`` gives ``d ln(L / (2 pi r)) / (2 ln b)`` (YaRN paper, section 3.2).
    """
    num_rotations = check_real("num_rotations", num_rotations, positive=True)
    head_dim = check_even_int("head_dim", head_dim)
    base = check_base(base)
    length = check_int("original_max_position_embeddings", original_max_position_embeddings, minimum=1)
    return head_dim * math.log(length / (num_rotations * 2 * math.pi)) / (2 * math.log(base))


def yarn_correction_range(
    beta_fast: float,
    beta_slow: float,
    head_dim: int,
    base: float,
    original_max_position_embeddings: int,
    truncate: bool = True,
) -> tuple[float, float]:
    """Pair indices ``(low, high)`` between which YaRN ramps from keeping to interpolating.

    ``low`` is where a pair completes ``beta_fast`` turns within ``L``, ``high`` where it
    completes ``beta_slow``. As in ``transformers``: floored/ceiled when ``truncate``,
    then clamped to ``[0, head_dim - 1]`` (``head_dim - 1``, not ``head_dim/2 - 1``:
    a quirk kept for agreement; it only matters when ``high`` passes the last pair).
    """
    beta_fast = check_real("beta_fast", beta_fast, positive=True)
    beta_slow = check_real("beta_slow", beta_slow, positive=True)
    low = yarn_correction_dim(beta_fast, head_dim, base, original_max_position_embeddings)
    high = yarn_correction_dim(beta_slow, head_dim, base, original_max_position_embeddings)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, head_dim - 1)


#: The model YaRN's default betas (32, 1) were chosen for: Llama 2 (base 10000, L = 4096).
YARN_REFERENCE = {"base": 10000.0, "original_max_position_embeddings": 4096}


def yarn_matched_betas(
    base: float,
    original_max_position_embeddings: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    reference_base: float = YARN_REFERENCE["base"],
    reference_length: int = YARN_REFERENCE["original_max_position_embeddings"],
) -> tuple[float, float]:
    """Betas that put YaRN's band on the same *fraction* of a model's pairs as ``(beta_fast, beta_slow)``
    put it for the reference model (default: Llama 2, base 10000, L = 4096, for which the YaRN
    paper's betas 32 and 1 were chosen).

    A pair completes ``r`` turns within ``L`` at the fractional index
    ``(d/2) ln(L / (2 pi r)) / ln b`` (:func:`posenc.yarn_correction_dim`), so the fraction of
    the pairs below it, ``f(r) = ln(L / (2 pi r)) / ln b``, does not depend on the head size.
    Keeping ``f`` fixed gives ``r' = (L' / (2 pi)) b'^(-f)``: with the reference's base,
    simply ``r * L' / L_ref``. This is this book's rule (chapters 11 and 12), not the
    paper's: the paper fixes the betas in turns. For the reference model it returns the
    betas unchanged.
    """
    beta_fast = check_real("beta_fast", beta_fast, positive=True)
    beta_slow = check_real("beta_slow", beta_slow, positive=True)
    base = check_base(base)
    length = check_int("original_max_position_embeddings", original_max_position_embeddings, minimum=1)
    reference_base = check_real("reference_base", reference_base, strictly_above=1.0)
    reference_length = check_int("reference_length", reference_length, minimum=1)
    matched = []
    for beta in (beta_fast, beta_slow):
        fraction = math.log(reference_length / (2 * math.pi * beta)) / math.log(reference_base)
        matched.append(length / (2 * math.pi) * base ** (-fraction))
    return matched[0], matched[1]


def yarn_ramp(
    head_dim: int,
    base: float = 10000.0,
    original_max_position_embeddings: int = 2048,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
) -> np.ndarray:
    """Fraction of position interpolation applied to each pair by YaRN: 0 keeps, 1 interpolates.

    ``ramp_i = clip((i - low) / (high - low), 0, 1)`` with ``(low, high)`` from
    :func:`posenc.yarn_correction_range`. The paper's ``gamma(r)`` (section 3.2) is
    ``1 - ramp``: fast pairs (many turns within ``L``) are kept, slow pairs (fewer
    than ``beta_slow`` turns) are interpolated, and the ones between are blended.

    ``beta_fast == beta_slow`` is allowed: then ``low == high`` before truncation, and
    where they are still equal after it, ``high`` is raised by 0.001 as ``transformers`` and
    the YaRN code (``linear_ramp_mask``) do to avoid dividing by zero: a step from keeping to
    interpolating at that pair index. ``beta_fast < beta_slow`` is refused.

    Returns a float64 array of shape ``(head_dim // 2,)``.
    """
    head_dim = check_even_int("head_dim", head_dim)
    base = check_base(base)
    beta_fast = check_real("beta_fast", beta_fast, positive=True)
    beta_slow = check_real("beta_slow", beta_slow, positive=True)
    if beta_fast < beta_slow:
        raise ValueError(
            f"beta_fast must be >= beta_slow (turns within the original context), "
            f"got beta_fast={beta_fast}, beta_slow={beta_slow}"
        )
    if not isinstance(truncate, bool):
        raise TypeError(f"truncate must be True or False, got {truncate!r}")
    low, high = yarn_correction_range(beta_fast, beta_slow, head_dim, base, original_max_position_embeddings, truncate)
    if low == high:
        high += 0.001  # as transformers does, to avoid dividing by zero
    return np.clip((np.arange(head_dim // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)


@scaling_method("yarn", factor="derived", title="YaRN", bands=True, shown=("beta_fast", "beta_slow"))
def yarn_scaling(
    head_dim,
    base,
    factor,
    original_max_position_embeddings,
    *,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    attention_factor: float | None = None,
    mscale: float | None = None,
    mscale_all_dim: float | None = None,
    truncate: bool = True,
    extrapolation_factor: float = 1.0,
):
    """YaRN: "NTK-by-parts" interpolation plus an attention temperature (Peng et al. 2023, sections 3.2 and 3.4).

    ``inv_freq_i = (1 - ramp_i) * theta_i + ramp_i * theta_i / s`` with ramp from
    :func:`posenc.yarn_ramp`. ``attention_factor``, when given, replaces the temperature
    (as in ``transformers``, where it wins over ``mscale``/``mscale_all_dim``; the YaRN code
    and vLLM instead multiply the temperature by their ``attn_factor``); otherwise it is
    :func:`posenc.yarn_attention_factor` of ``factor``, ``mscale``, ``mscale_all_dim``.

    ``extrapolation_factor`` ``e`` in [0, 1] (the YaRN code's, ``LlamaYaRNScaledRotaryEmbedding.yarn``
    in jquesnelle/yarn; ``transformers`` has none, which is ``e = 1``) scales the share of
    each pair that is kept: ``inv_freq_i = k_i theta_i + (1 - k_i) theta_i / s`` with
    ``k_i = e (1 - ramp_i)``. ``e = 0`` is position interpolation for every pair.
    """
    ramp = yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast, beta_slow, truncate)
    extrapolation_factor = check_real("extrapolation_factor", extrapolation_factor, minimum=0.0)
    if extrapolation_factor > 1.0:
        raise ValueError(
            f"extrapolation_factor must be <= 1.0 (the share of each pair kept), got {extrapolation_factor}"
        )
    if extrapolation_factor != 1.0:  # at 1, ramp as it is: bit for bit the result without the option
        ramp = 1.0 - (1.0 - ramp) * extrapolation_factor
    theta = rope_inv_freq(head_dim, base)
    inv_freq = (1.0 - ramp) * theta + ramp * (theta / factor)
    if attention_factor is None:
        attention_factor = yarn_attention_factor(factor, mscale, mscale_all_dim)
    else:
        attention_factor = check_real("attention_factor", attention_factor, positive=True)
    return inv_freq, attention_factor


@scaling_method("llama3", config_required=("low_freq_factor", "high_freq_factor"), title="Llama 3 scaling", bands=True)
def llama3_scaling(
    head_dim,
    base,
    factor,
    original_max_position_embeddings,
    *,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
):
    """Llama 3.1 scaling: keep short wavelengths, divide long ones by ``s``, blend in between.

    Meta's ``apply_scaling`` in the Llama 3.1 reference code (The Llama 3 Herd of
    Models, Dubey et al. 2024). Wavelengths shorter than ``L / high_freq_factor`` are
    kept; longer than ``L / low_freq_factor`` are divided by ``s``; in between,
    ``inv_freq = (1 - g) theta / s + g theta`` with ``g = (L / wavelength - low) / (high - low)``.

    ``low_freq_factor == high_freq_factor`` is allowed: the blended band shrinks to the one
    wavelength ``L / low_freq_factor``; shorter ones are kept, longer ones divided by ``s``.
    ``transformers`` (``_compute_llama3_parameters``) returns the same except at a wavelength
    exactly ``L / low_freq_factor``, where it divides 0 by 0 (NaN); there we return the
    limit of the blend as ``high_freq_factor`` comes down to ``low_freq_factor``: ``g = 0``,
    ``theta / s``. ``low_freq_factor > high_freq_factor`` is refused.
    """
    low_freq_factor = check_real("low_freq_factor", low_freq_factor, positive=True)
    high_freq_factor = check_real("high_freq_factor", high_freq_factor, positive=True)
    if high_freq_factor < low_freq_factor:
        raise ValueError(
            f"high_freq_factor must be >= low_freq_factor, "
            f"got high_freq_factor={high_freq_factor}, low_freq_factor={low_freq_factor}"
        )
    theta = rope_inv_freq(head_dim, base)
    length = original_max_position_embeddings
    wavelength = 2 * math.pi / theta
    low_freq_wavelength = length / low_freq_factor
    high_freq_wavelength = length / high_freq_factor
    if high_freq_factor > low_freq_factor:
        smooth = (length / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
        blended = (1 - smooth) * theta / factor + smooth * theta
    else:  # the band is the single wavelength L / low_freq_factor, where g = 0 for any high > low
        blended = theta / factor
    inv_freq = np.where(wavelength > low_freq_wavelength, theta / factor, theta)
    medium = (wavelength >= high_freq_wavelength) & (wavelength <= low_freq_wavelength)
    return np.where(medium, blended, inv_freq), 1.0


def longrope_attention_factor(factor: float, original_max_position_embeddings: int) -> float:
    """LongRoPE's attention factor ``sqrt(1 + ln(s) / ln(L))``, and 1 when ``s <= 1``.

    As ``transformers`` computes it for rope_type "longrope" when the config gives no
    ``attention_factor`` (``_compute_longrope_parameters`` in ``modeling_rope_utils.py``).
    Like YaRN's, it multiplies cos and sin, so logits scale by its square,
    ``1 + ln(s) / ln(L)``. Needs ``L >= 2`` when ``s > 1`` (``ln 1 = 0``).
    """
    factor = check_real("factor", factor, positive=True)
    minimum = 2 if factor > 1 else 1
    length = check_int("original_max_position_embeddings", original_max_position_embeddings, minimum=minimum)
    if factor <= 1.0:
        return 1.0
    return math.sqrt(1 + math.log(factor) / math.log(length))


def _pair_factors(name: str, value, n_pairs: int) -> np.ndarray:
    """A list of one rescaling factor per pair: finite, > 0, exactly ``n_pairs`` long."""
    if value is None:
        return np.ones(n_pairs)
    factors = as_real_array(name, value, ndim=1)
    if factors.shape != (n_pairs,):
        raise ValueError(f"{name} must hold head_dim // 2 = {n_pairs} numbers (one per pair), got {factors.shape[0]}")
    if np.any(factors <= 0):
        raise ValueError(f"{name} must hold numbers > 0 (each divides a rotation speed), got {factors.min()}")
    return factors


@scaling_method(
    "longrope",
    factor="derived",
    config_required=("short_factor", "long_factor"),
    not_in_config=("max_position_embeddings",),
    config_aliases=("su",),  # Phi-3's first configs; transformers reads it as longrope
    title="LongRoPE",
    note="short factors up to L, long factors past it",
    cache_warning=(
        "the short factors apply up to L = {L} tokens and the long ones past it; the switch changes every speed, "
        "so keys cached with the short factors no longer match"
    ),
)
def longrope_scaling(
    head_dim,
    base,
    factor,
    original_max_position_embeddings,
    *,
    short_factor: Sequence[float] | None = None,
    long_factor: Sequence[float] | None = None,
    seq_len: int | None = None,
    attention_factor: float | None = None,
    max_position_embeddings: int | None = None,
):
    """LongRoPE: each pair's speed divided by its own searched factor (Phi-3's rope_type).

    Ding et al. 2024, "LongRoPE: Extending LLM Context Window Beyond 2 Million Tokens"
    (ICML 2024); as ``transformers`` computes it (``_compute_longrope_parameters``):
    ``inv_freq_i = theta_i / f_i``, with ``f = long_factor`` when ``seq_len > L``
    and ``f = short_factor`` otherwise (``seq_len`` None or 0 included: transformers
    builds the short set first, and its ``longrope_frequency_update`` switches to the long
    set once ``max(position_ids) + 1 > L``). Each list holds ``head_dim // 2`` numbers > 0;
    a list left out is 1 for every pair.

    The attention factor is ``attention_factor`` when given, else
    :func:`posenc.longrope_attention_factor` of ``s`` and ``L`` (the same for both sets).
    ``s`` is ``factor``, or, as transformers derives it for a config without ``factor``
    (Phi-3's), ``max_position_embeddings / L`` when ``max_position_embeddings`` is given
    (then ``factor`` must stay at its default 1.0).
    """
    n_pairs = head_dim // 2
    short = _pair_factors("short_factor", short_factor, n_pairs)
    long = _pair_factors("long_factor", long_factor, n_pairs)
    if seq_len is not None:
        seq_len = check_int("seq_len", seq_len, minimum=0)
    if max_position_embeddings is not None:
        max_position_embeddings = check_int("max_position_embeddings", max_position_embeddings, minimum=1)
        if factor != 1.0:
            raise ValueError(
                f"give factor or max_position_embeddings, not both: factor={factor}, "
                f"max_position_embeddings={max_position_embeddings} (s = max_position_embeddings / "
                f"original_max_position_embeddings)"
            )
        factor = max_position_embeddings / original_max_position_embeddings
    if attention_factor is None:
        attention_factor = longrope_attention_factor(factor, original_max_position_embeddings)
    else:
        attention_factor = check_real("attention_factor", attention_factor, positive=True)
    chosen = long if seq_len and seq_len > original_max_position_embeddings else short
    return rope_inv_freq(head_dim, base) / chosen, attention_factor


@scaling_method("proportional", length=None, factor="optional", partial_rotary=True, title="p-RoPE")
def proportional_scaling(
    head_dim, base, factor, original_max_position_embeddings, *, partial_rotary_factor: float = 1.0
):
    """Proportional RoPE: the fastest pairs keep their speeds, the rest get speed 0, all divided by ``s``.

    As ``transformers`` computes it (``_compute_proportional_rope_parameters`` in
    ``modeling_rope_utils.py``): with ``p = partial_rotary_factor`` in [0, 1], the first
    ``n = int(p * head_dim // 2)`` pairs have ``theta_i = b ** (-2i/d)`` (the exponent over the
    whole ``head_dim``, so they are the fastest of the full set), the other ``d/2 - n`` pairs
    speed 0 (they never rotate), and every speed is divided by ``factor``, as in
    :func:`linear_scaling`. ``original_max_position_embeddings`` is not used. ``p = 1``
    is linear scaling; ``p = 0`` rotates nothing.
    """
    partial_rotary_factor = check_real("partial_rotary_factor", partial_rotary_factor, minimum=0.0)
    if partial_rotary_factor > 1.0:
        raise ValueError(f"partial_rotary_factor must be <= 1.0 (a fraction of head_dim), got {partial_rotary_factor}")
    return keep_fastest_pairs(rope_inv_freq(head_dim, base), partial_rotary_factor) / factor, 1.0


def scaled_inv_freq(
    method: str,
    head_dim: int,
    base: float = 10000.0,
    factor: float = 1.0,
    original_max_position_embeddings: int = 2048,
    **params,
) -> tuple[np.ndarray, float]:
    """RoPE rotation speeds after context extension, and the attention factor to apply.

    Parameters
    ----------
    method : str
        A key of :data:`posenc.scaling.SCALING_METHODS`; each method's function gives its formula and source,
        and the API page's table what it reads from a config.
    head_dim : int
        Even; at least 4 for "ntk" and "dynamic" (their exponent is ``d / (d - 2)``).
    base : float
        The model's RoPE base (``rope_theta``), > 1.
    factor : float
        The extension factor ``s`` >= 1 (ignored by "default").
    original_max_position_embeddings : int
        The context length ``L`` the model was trained at.
    **params
        The method's keyword-only parameters (its function lists them), e.g. ``seq_len`` for
        "dynamic", ``beta_fast`` and ``beta_slow`` for "yarn".

    Returns
    -------
    (inv_freq, attention_factor) : (numpy.ndarray of shape (head_dim // 2,), float)
        Pass both to :func:`posenc.apply_rope`.
    """
    check_choice("method", method, SCALING_METHODS)
    return SCALING_METHODS[method](head_dim, base, factor, original_max_position_embeddings, **params)


_BAND_RTOL = 1e-12  # a speed this close (relatively) to theta_i or theta_i / s counts as equal


def scaling_bands(
    method: str,
    head_dim: int,
    base: float = 10000.0,
    factor: float = 1.0,
    original_max_position_embeddings: int = 2048,
    **params,
) -> dict[str, np.ndarray]:
    """Which pairs a scaling method keeps, blends or interpolates, read from its own speeds.

    With the method's speeds ``inv_freq_i`` (:func:`posenc.scaled_inv_freq` of the same arguments)
    and the original ``theta_i = b ** (-2i/d)``, pair ``i`` is

    * "keep" where ``inv_freq_i = theta_i`` (extrapolated: the speed it was trained with),
    * "interpolate" where ``inv_freq_i = theta_i / s`` (position interpolation, Chen et al. 2023),
    * "blend" where ``theta_i / s < inv_freq_i < theta_i``,

    "equal" within a relative ``1e-12``. That is the three bands of YaRN's "NTK-by-parts" (Peng et al.
    2023, section 3.2: ramp 0, 1, between) and of Llama 3.1's ``apply_scaling`` (wavelength below
    ``L / high_freq_factor``, above ``L / low_freq_factor``, between); at ``s = 1`` every pair is kept.

    Returns ``{"keep": ..., "blend": ..., "interpolate": ...}``: ascending int arrays of pair
    indices that together hold ``0 .. head_dim/2 - 1`` once each.

    Raises ValueError when a pair's speed is outside ``[theta_i / s, theta_i]`` (faster than
    unscaled, slowed by more than ``s``, or stopped, as LongRoPE's searched factors and p-RoPE's
    still pairs can be): such a method does not work in bands.
    """
    inv_freq, _ = scaled_inv_freq(method, head_dim, base, factor, original_max_position_embeddings, **params)
    theta = rope_inv_freq(head_dim, base)
    factor = float(factor)
    keep = np.isclose(inv_freq, theta, rtol=_BAND_RTOL, atol=0.0)
    interpolate = np.isclose(inv_freq, theta / factor, rtol=_BAND_RTOL, atol=0.0) & ~keep
    blend = (inv_freq > theta / factor) & (inv_freq < theta) & ~keep & ~interpolate
    outside = np.flatnonzero(~(keep | interpolate | blend))
    if outside.size:
        i = int(outside[0])
        raise ValueError(
            f"method {method!r} does not work in bands: pair {i} has speed {inv_freq[i]:.6g}, outside "
            f"[theta_{i} / s, theta_{i}] = [{theta[i] / factor:.6g}, {theta[i]:.6g}] (s = {factor:g}); "
            f"{outside.size} of {theta.size} pairs are"
        )
    return {"keep": np.flatnonzero(keep), "blend": np.flatnonzero(blend), "interpolate": np.flatnonzero(interpolate)}


__all__ += [function.__name__ for function in SCALING_METHODS.values()]
