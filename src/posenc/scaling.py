"""Context-window extension for RoPE: new rotation speeds for a model trained at length ``L``.

Every method is one function ``(head_dim, base, factor, original_max_position_embeddings,
**params) -> (inv_freq, attention_factor)`` and one entry in :data:`posenc.scaling.SCALING_METHODS`,
the shape of ``ROPE_INIT_FUNCTIONS`` in the ``transformers`` library
(``modeling_rope_utils.py``), whose results these functions reproduce for the same
inputs (they compute in float64 where ``transformers`` uses float32). Call them
through :func:`posenc.scaled_inv_freq`, which checks the arguments.

Symbols: ``d`` = head_dim, ``b`` = base, ``s`` = factor, ``L`` =
original_max_position_embeddings (the length the model was trained at), pair index
``i = 0 .. d/2 - 1`` with original speed ``theta_i = b ** (-2i/d)``.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable

import numpy as np

from ._validation import check_base, check_choice, check_even_int, check_greater, check_int, check_real
from .rope import rope_inv_freq

__all__ = [
    "SCALING_METHODS",
    "default_scaling",
    "dynamic_ntk_scaling",
    "linear_scaling",
    "llama3_scaling",
    "ntk_scaled_base",
    "ntk_scaling",
    "scaled_inv_freq",
    "scaling_method",
    "yarn_attention_factor",
    "yarn_correction_dim",
    "yarn_correction_range",
    "yarn_ramp",
    "yarn_scaling",
]

ScalingFunction = Callable[..., "tuple[np.ndarray, float]"]


def scaling_method(method: str) -> Callable[[Callable], ScalingFunction]:
    """Decorator: give a method function the common signature, argument checks and return types.

    The wrapped function is called as ``f(head_dim, base=10000.0, factor=1.0,
    original_max_position_embeddings=2048, **params)``; the checks of the common
    arguments and of ``params`` (against the function's keyword-only parameters) are
    done here once, so each method body holds only its formula. ``method`` is the
    registry name used in error messages.
    """

    def decorate(function: Callable) -> ScalingFunction:
        return _checked(method, function)

    return decorate


def _checked(method: str, function: Callable) -> ScalingFunction:
    allowed = {
        name: p
        for name, p in inspect.signature(function).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }

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


@scaling_method("default")
def default_scaling(head_dim, base, factor, original_max_position_embeddings):
    """No scaling: ``theta_i = b ** (-2i/d)`` (RoFormer, Su et al. 2021, eq. 15); ``factor`` is ignored."""
    return rope_inv_freq(head_dim, base), 1.0


@scaling_method("linear")
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


@scaling_method("ntk")
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


@scaling_method("dynamic")
def dynamic_ntk_scaling(head_dim, base, factor, original_max_position_embeddings, *, seq_len):
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


def yarn_attention_factor(factor: float, mscale: float | None = None, mscale_all_dim: float | None = None) -> float:
    """YaRN's temperature ``sqrt(1/t) = 0.1 ln(s) + 1`` (Peng et al. 2023, section 3.4).

    It multiplies both cos and sin, hence both the rotated query and key, so the
    attention logits scale by its square. With ``mscale`` and ``mscale_all_dim`` (the
    DeepSeek variant) it is ``(0.1 mscale ln s + 1) / (0.1 mscale_all_dim ln s + 1)``.
    Equal to 1 when ``s <= 1``. At ``s = 8``: 1.2079.
    """
    factor = check_real("factor", factor, positive=True)

    def get_mscale(scale: float, m: float = 1.0) -> float:
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    if (mscale is None) != (mscale_all_dim is None):
        raise ValueError(
            f"mscale and mscale_all_dim must be given together, got mscale={mscale!r}, "
            f"mscale_all_dim={mscale_all_dim!r}"
        )
    if mscale is not None:
        mscale = check_real("mscale", mscale)
        mscale_all_dim = check_real("mscale_all_dim", mscale_all_dim)
        if mscale and mscale_all_dim:
            return get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
    return get_mscale(factor)


def yarn_correction_dim(
    num_rotations: float, head_dim: int, base: float, original_max_position_embeddings: int
) -> float:
    """The (fractional) pair index that completes ``num_rotations`` turns within ``L`` tokens.

    Pair ``i`` has wavelength ``2 pi b ** (2i/d)``, so it turns ``L / wavelength`` times;
    solving for ``i`` gives ``d ln(L / (2 pi r)) / (2 ln b)`` (YaRN paper, section 3.2).
    """
    num_rotations = check_real("num_rotations", num_rotations, positive=True)
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
    low = yarn_correction_dim(beta_fast, head_dim, base, original_max_position_embeddings)
    high = yarn_correction_dim(beta_slow, head_dim, base, original_max_position_embeddings)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, head_dim - 1)


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

    Returns a float64 array of shape ``(head_dim // 2,)``.
    """
    head_dim = check_even_int("head_dim", head_dim)
    base = check_base(base)
    beta_fast = check_real("beta_fast", beta_fast, positive=True)
    beta_slow = check_real("beta_slow", beta_slow, positive=True)
    check_greater("beta_fast", beta_fast, "beta_slow", beta_slow, "turns within the original context")
    if not isinstance(truncate, bool):
        raise TypeError(f"truncate must be True or False, got {truncate!r}")
    low, high = yarn_correction_range(beta_fast, beta_slow, head_dim, base, original_max_position_embeddings, truncate)
    if low == high:
        high += 0.001  # as transformers does, to avoid dividing by zero
    return np.clip((np.arange(head_dim // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)


@scaling_method("yarn")
def yarn_scaling(
    head_dim,
    base,
    factor,
    original_max_position_embeddings,
    *,
    beta_fast=32.0,
    beta_slow=1.0,
    attention_factor=None,
    mscale=None,
    mscale_all_dim=None,
    truncate=True,
):
    """YaRN: "NTK-by-parts" interpolation plus an attention temperature (Peng et al. 2023, sections 3.2 and 3.4).

    ``inv_freq_i = (1 - ramp_i) * theta_i + ramp_i * theta_i / s`` with ramp from
    :func:`posenc.yarn_ramp`, and ``attention_factor`` from :func:`posenc.yarn_attention_factor`
    unless given.
    """
    ramp = yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast, beta_slow, truncate)
    theta = rope_inv_freq(head_dim, base)
    inv_freq = (1.0 - ramp) * theta + ramp * (theta / factor)
    if attention_factor is None:
        attention_factor = yarn_attention_factor(factor, mscale, mscale_all_dim)
    else:
        attention_factor = check_real("attention_factor", attention_factor, positive=True)
    return inv_freq, attention_factor


@scaling_method("llama3")
def llama3_scaling(
    head_dim, base, factor, original_max_position_embeddings, *, low_freq_factor=1.0, high_freq_factor=4.0
):
    """Llama 3.1 scaling: keep short wavelengths, divide long ones by ``s``, blend in between.

    Meta's ``apply_scaling`` in the Llama 3.1 reference code (The Llama 3 Herd of
    Models, Dubey et al. 2024). Wavelengths shorter than ``L / high_freq_factor`` are
    kept; longer than ``L / low_freq_factor`` are divided by ``s``; in between,
    ``inv_freq = (1 - g) theta / s + g theta`` with ``g = (L / wavelength - low) / (high - low)``.
    """
    low_freq_factor = check_real("low_freq_factor", low_freq_factor, positive=True)
    high_freq_factor = check_real("high_freq_factor", high_freq_factor, positive=True)
    check_greater("high_freq_factor", high_freq_factor, "low_freq_factor", low_freq_factor)
    theta = rope_inv_freq(head_dim, base)
    length = original_max_position_embeddings
    wavelength = 2 * math.pi / theta
    low_freq_wavelength = length / low_freq_factor
    high_freq_wavelength = length / high_freq_factor
    smooth = (length / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = (1 - smooth) * theta / factor + smooth * theta
    inv_freq = np.where(wavelength > low_freq_wavelength, theta / factor, theta)
    medium = (wavelength >= high_freq_wavelength) & (wavelength <= low_freq_wavelength)
    return np.where(medium, blended, inv_freq), 1.0


#: Method name -> function returning ``(inv_freq, attention_factor)``. A new method is
#: one function plus one entry here.
SCALING_METHODS: dict[str, ScalingFunction] = {
    "default": default_scaling,
    "linear": linear_scaling,
    "ntk": ntk_scaling,
    "dynamic": dynamic_ntk_scaling,
    "yarn": yarn_scaling,
    "llama3": llama3_scaling,
}


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
    method : {"default", "linear", "ntk", "dynamic", "yarn", "llama3"}
        See the function of the same family for each formula and its source.
    head_dim : int
        Even; at least 4 for "ntk" and "dynamic" (their exponent is ``d / (d - 2)``).
    base : float
        The model's RoPE base (``rope_theta``), > 1.
    factor : float
        The extension factor ``s`` >= 1 (ignored by "default").
    original_max_position_embeddings : int
        The context length ``L`` the model was trained at.
    **params
        Method parameters: ``seq_len`` (required by "dynamic"); ``beta_fast``,
        ``beta_slow``, ``attention_factor``, ``mscale``, ``mscale_all_dim``,
        ``truncate`` ("yarn"); ``low_freq_factor``, ``high_freq_factor`` ("llama3").

    Returns
    -------
    (inv_freq, attention_factor) : (numpy.ndarray of shape (head_dim // 2,), float)
        Pass both to :func:`posenc.apply_rope`.
    """
    check_choice("method", method, SCALING_METHODS)
    return SCALING_METHODS[method](head_dim, base, factor, original_max_position_embeddings, **params)
