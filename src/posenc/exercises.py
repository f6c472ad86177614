"""Auto-checkers for the book's implementation exercises.

Each exercise is data: the reference (a posenc function), the inputs to try (random
ones and edge cases), and the typical mistakes, each written as the wrong function a
student might write, with the hint that names it. A checker calls the student's
function on every input and compares with the reference; on a mismatch it says which
input, what was expected and what came back, and, if the answer matches one of the
known mistakes, which one. It never raises: a stub that still raises
``NotImplementedError`` gets "not attempted yet", so a student notebook runs top to
bottom at any stage.

In a notebook::

    from posenc import exercises
    exercises.check("sinusoidal", my_sinusoidal)      # shows the feedback

For an autograder, ``exercises.check(...).passed`` is a bool (and the result is truthy
only when it passed).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import absolute, analysis, attention, biases, rope, scaling

__all__ = ["CheckResult", "Exercise", "EXERCISES", "check"]


@dataclass
class CheckResult:
    """The outcome of a check: ``status`` is "passed", "failed", "not attempted" or "error"."""

    exercise: str
    status: str
    message: str
    hint: str | None = None
    checked: int = 0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        head = {
            "passed": "Correct",
            "failed": "Not yet",
            "not attempted": "Not attempted yet",
            "error": "Your function raised an error",
        }[self.status]
        text = f"[{self.exercise}] {head}: {self.message}"
        return text + (f"\nHint: {self.hint}" if self.hint else "")

    __repr__ = __str__

    def _repr_html_(self) -> str:
        colour = {"passed": "#009E73", "failed": "#D55E00", "not attempted": "#0072B2", "error": "#D55E00"}
        lines = html.escape(str(self)).replace("\n", "<br>")
        return (
            f'<div style="border-left:4px solid {colour[self.status]};padding:.3em .8em;margin:.3em 0">'
            f"<code style='white-space:pre-wrap'>{lines}</code></div>"
        )


@dataclass
class Exercise:
    """An implementation exercise: what to compare, on which inputs, and the mistakes to recognise."""

    name: str
    signature: str
    reference: Callable
    cases: list[dict]
    mistakes: dict[str, Callable] = field(default_factory=dict)
    rtol: float = 1e-7
    atol: float = 1e-9
    hint: str = "compare your formula with the one in the chapter, term by term"


def _as_array(value):
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=float)


def _show(kwargs: dict) -> str:
    parts = []
    for key, value in kwargs.items():
        array = np.asarray(value)
        parts.append(f"{key}={value!r}" if array.ndim == 0 else f"{key}=<array of shape {array.shape}>")
    return ", ".join(parts)


def _close(got, expected, rtol, atol) -> bool:
    return got.shape == expected.shape and bool(np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True))


def _first_difference(got: np.ndarray, expected: np.ndarray, rtol, atol) -> str:
    wrong = ~np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    index = tuple(int(i) for i in np.argwhere(wrong)[0])
    where = f"at index {index}" if index else "the value"
    count = f"{int(wrong.sum())} of {wrong.size} entries differ"
    return f"{where}: expected {expected[index]:.8g}, got {got[index]:.8g} ({count})"


_PRECISION_HINT = (
    "your numbers agree only to about float32 precision: compute in float64 (NumPy's default; "
    "torch.float64 in torch), and form angles as position * frequency in float64"
)


def _diagnose(exercise: Exercise, kwargs: dict, got: np.ndarray, expected: np.ndarray, case_hint: str | None) -> str:
    """The most specific hint for a wrong answer: a known mistake, a precision problem, the case's own hint."""
    for hint, mistake in exercise.mistakes.items():
        wrong = _as_array(mistake(**kwargs))
        # looser than grading: a mistake written in float32 still matches its model
        if wrong.shape == got.shape and np.allclose(got, wrong, rtol=1e-5, atol=1e-6, equal_nan=True):
            return hint
    if got.shape == expected.shape and np.allclose(got, expected, rtol=1e-4, atol=1e-5):
        return _PRECISION_HINT
    return case_hint or exercise.hint


def check(name: str, function) -> CheckResult:
    """Check a student's ``function`` for exercise ``name`` (see :data:`EXERCISES`); never raises."""
    if name not in EXERCISES:
        return CheckResult(name, "error", f"there is no exercise called {name!r}; known: {sorted(EXERCISES)}")
    exercise = EXERCISES[name]
    if function is None or not callable(function):
        return CheckResult(name, "not attempted", f"pass your function, {exercise.signature}, to the checker")
    total = len(exercise.cases)
    for number, case in enumerate(exercise.cases, start=1):
        kwargs = {k: v for k, v in case.items() if k != "_hint"}
        try:
            got_raw = function(**{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()})
        except NotImplementedError:
            return CheckResult(
                name, "not attempted", f"replace the `raise NotImplementedError` in {exercise.signature}"
            )
        except Exception as error:  # the student's bug, reported, never re-raised
            return CheckResult(
                name,
                "error",
                f"on input {_show(kwargs)} it raised {type(error).__name__}: {error}",
                hint="run it on that input in a cell of its own and read the traceback",
            )
        expected = _as_array(exercise.reference(**kwargs))
        try:
            got = _as_array(got_raw)
        except (TypeError, ValueError):
            return CheckResult(
                name,
                "failed",
                f"on input {_show(kwargs)} it returned {type(got_raw).__name__}, not an array of numbers",
                hint="return a NumPy array (or a torch tensor)",
                checked=number - 1,
            )
        if _close(got, expected, exercise.rtol, exercise.atol):
            continue
        if got.shape != expected.shape:
            detail = f"expected shape {expected.shape}, got {got.shape}"
        else:
            detail = _first_difference(got, expected, exercise.rtol, exercise.atol)
        hint = _diagnose(exercise, kwargs, got, expected, case.get("_hint"))
        message = f"check {number} of {total}, input {_show(kwargs)}: {detail}"
        return CheckResult(name, "failed", message, hint=hint, checked=number - 1)
    return CheckResult(name, "passed", f"all {total} checks agree with posenc", checked=total)


# --- the exercises ---------------------------------------------------------------------------------
_rng = np.random.default_rng(20231)


def _random(*shape):
    return _rng.normal(size=shape)


# Chapter 1: attention without positions ----------------------------------------------------------
def _attention_case(n, d):
    w = attention.random_projections(d, seed=n)
    return {"x": _random(n, d), "w_q": w[0], "w_k": w[1], "w_v": w[2]}


def _attention_no_scale(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return attention.softmax(q @ k.T) @ v


def _attention_scale_by_d(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return attention.softmax(q @ k.T / q.shape[-1]) @ v


def _attention_wrong_axis(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return attention.softmax(q @ k.T / np.sqrt(q.shape[-1]), axis=0) @ v


def _attention_no_softmax(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return (q @ k.T / np.sqrt(q.shape[-1])) @ v


# Chapter 2: the sinusoidal table --------------------------------------------------------------------
def _sin_table(n_positions, d_model, base, angle):
    """Interleaved sin/cos columns from an ``angle(p, i)`` rule (p and i broadcast)."""
    p = np.arange(n_positions, dtype=np.float64)[:, None]
    i = np.arange((d_model + 1) // 2, dtype=np.float64)[None, :]
    a = angle(p, i)
    table = np.empty((n_positions, d_model))
    table[:, 0::2] = np.sin(a)
    table[:, 1::2] = np.cos(a[:, : d_model // 2])
    return table


def _sinusoidal_swapped(n_positions, d_model, base=10000.0):
    a = _sin_table(n_positions, d_model, base, lambda p, i: p / base ** (2 * i / d_model))
    out = a.copy()
    even = d_model // 2 * 2
    out[:, 0:even:2], out[:, 1:even:2] = a[:, 1:even:2], a[:, 0:even:2]
    return out


def _sinusoidal_i_is_position(n_positions, d_model, base=10000.0):
    return _sin_table(n_positions, d_model, base, lambda p, i: p / base ** (2 * p / d_model) + 0 * i)


def _sinusoidal_multiplied(n_positions, d_model, base=10000.0):
    return _sin_table(n_positions, d_model, base, lambda p, i: p * base ** (2 * i / d_model))


def _sinusoidal_column_exponent(n_positions, d_model, base=10000.0):
    """The exponent uses the column index (2i for sines, 2i+1 for cosines) instead of 2i for both."""
    p = np.arange(n_positions, dtype=np.float64)[:, None]
    col = np.arange(d_model, dtype=np.float64)[None, :]
    a = p / base ** (col / d_model)
    return np.where(col % 2 == 0, np.sin(a), np.cos(a))


def _sinusoidal_concatenated(n_positions, d_model, base=10000.0):
    """All sines first, then all cosines (tensor2tensor's layout), instead of interleaved pairs."""
    table = absolute.sinusoidal(n_positions, d_model, base)
    return np.concatenate((table[:, 0::2], table[:, 1::2]), axis=1)


def _sinusoidal_float32(n_positions, d_model, base=10000.0):
    p = np.arange(n_positions, dtype=np.float32)[:, None]
    i = np.arange((d_model + 1) // 2, dtype=np.float32)[None, :]
    a = (p / np.float32(base) ** (np.float32(2) * i / np.float32(d_model))).astype(np.float32)
    table = np.empty((n_positions, d_model))
    table[:, 0::2] = np.sin(a.astype(np.float64))
    table[:, 1::2] = np.cos(a[:, : d_model // 2].astype(np.float64))
    return table


# Chapter 3: the binary counter -----------------------------------------------------------------------
def _binary_msb_first(n_positions, n_bits):
    return absolute.binary(n_positions, n_bits)[:, ::-1]


def _binary_off_by_one(n_positions, n_bits):
    p = np.arange(1, n_positions + 1)
    return (p[:, None] >> np.arange(n_bits)[None, :]) & 1


# Chapter 4: offsets as rotations ---------------------------------------------------------------------
def _offset_transposed(k, d_model, base=10000.0):
    return analysis.offset_matrix(k, d_model, base).T


def _offset_no_frequency(k, d_model, base=10000.0):
    return _blocks(np.full(d_model // 2, float(k)))


def _blocks(angles):
    d = 2 * angles.size
    m = np.zeros((d, d))
    e = np.arange(0, d, 2)
    m[e, e] = m[e + 1, e + 1] = np.cos(angles)
    m[e, e + 1] = np.sin(angles)
    m[e + 1, e] = -np.sin(angles)
    return m


# Chapter 5: similarity against offset -----------------------------------------------------------------
def _similarity_by_offset_sin(offsets, d_model, base=10000.0):
    a = np.asarray(offsets, dtype=float)[:, None] * absolute.sinusoidal_frequencies(d_model, base)[None, :]
    return np.sin(a).sum(axis=1)


def _similarity_by_offset_doubled(offsets, d_model, base=10000.0):
    return 2 * analysis.similarity_by_offset(offsets, d_model, base)


# Chapter 6: scaling embeddings before adding positions --------------------------------------------------
def _scaled_reference(token_embeddings, position_table):
    d = token_embeddings.shape[-1]
    return token_embeddings * math.sqrt(d) + position_table[: token_embeddings.shape[-2]]


def _scaled_none(token_embeddings, position_table):
    return token_embeddings + position_table[: token_embeddings.shape[-2]]


def _scaled_positions(token_embeddings, position_table):
    d = token_embeddings.shape[-1]
    return token_embeddings + math.sqrt(d) * position_table[: token_embeddings.shape[-2]]


def _scaled_divided(token_embeddings, position_table):
    d = token_embeddings.shape[-1]
    return token_embeddings / math.sqrt(d) + position_table[: token_embeddings.shape[-2]]


# Chapter 7: ALiBi slopes -----------------------------------------------------------------------------------
def _alibi_power_formula_everywhere(n_heads):
    return np.array([2 ** (-8 * (h + 1) / n_heads) for h in range(n_heads)])


def _alibi_from_zero(n_heads):
    return np.array([2 ** (-8 * h / n_heads) for h in range(n_heads)])


def _alibi_truncated_next_power(n_heads):
    m = 2 ** math.ceil(math.log2(n_heads))
    return np.array([2 ** (-8 * (h + 1) / m) for h in range(m)])[:n_heads]


# Chapter 8: RoPE (the paper's interleaved layout) ----------------------------------------------------------
def _rope_reference(x, positions, base=10000.0):
    return rope.apply_rope(x, positions, rope.rope_inv_freq(x.shape[-1], base), layout="interleaved")


def _rope_clockwise(x, positions, base=10000.0):
    return rope.apply_rope(x, -np.asarray(positions, dtype=float), rope.rope_inv_freq(x.shape[-1], base), "interleaved")


def _rope_half_layout(x, positions, base=10000.0):
    return rope.apply_rope(x, positions, rope.rope_inv_freq(x.shape[-1], base), layout="half")


def _rope_multiplied(x, positions, base=10000.0):
    return rope.apply_rope(x, positions, 1 / rope.rope_inv_freq(x.shape[-1], base), layout="interleaved")


def _rope_float32(x, positions, base=10000.0):
    inv = rope.rope_inv_freq(x.shape[-1], base).astype(np.float32)
    angles = np.asarray(positions, dtype=np.float32)[:, None] * inv[None, :]
    a, b = x[..., 0::2], x[..., 1::2]
    c, s = np.cos(angles.astype(np.float64)), np.sin(angles.astype(np.float64))
    out = np.empty_like(x, dtype=np.float64)
    out[..., 0::2] = a * c - b * s
    out[..., 1::2] = a * s + b * c
    return out


# Chapter 9: turns within the trained context ---------------------------------------------------------------
def _turns_reference(head_dim, base, context_length):
    return analysis.rotations_within_context(rope.rope_inv_freq(head_dim, base), context_length)


def _turns_radians(head_dim, base, context_length):
    return context_length * rope.rope_inv_freq(head_dim, base)


def _turns_wavelength(head_dim, base, context_length):
    return analysis.wavelengths(rope.rope_inv_freq(head_dim, base))


def _turns_inverted(head_dim, base, context_length):
    return context_length / (2 * np.pi * rope.rope_inv_freq(head_dim, base))


# Chapter 10: the NTK-aware base ----------------------------------------------------------------------------
def _ntk_reference(base, factor, head_dim):
    return scaling.ntk_scaled_base(base, factor, head_dim)


def _ntk_inverted_exponent(base, factor, head_dim):
    return base * factor ** ((head_dim - 2) / head_dim)


def _ntk_no_exponent(base, factor, head_dim):
    return base * factor


def _ntk_divided(base, factor, head_dim):
    return base / factor ** (head_dim / (head_dim - 2))


# Chapter 11: YaRN ------------------------------------------------------------------------------------------
def _ramp_reference(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0):
    return scaling.yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast, beta_slow, truncate=False)


def _ramp_reversed(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0):
    return 1 - _ramp_reference(head_dim, base, original_max_position_embeddings, beta_fast, beta_slow)


def _ramp_unclipped(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0):
    low = scaling.yarn_correction_dim(beta_fast, head_dim, base, original_max_position_embeddings)
    high = scaling.yarn_correction_dim(beta_slow, head_dim, base, original_max_position_embeddings)
    return (np.arange(head_dim // 2) - low) / (high - low)


def _ramp_wavelength_multiples(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0):
    """Boundaries where the wavelength is beta * L (instead of L / beta): turns and wavelengths confused."""
    pair = np.arange(head_dim // 2)

    def index(beta):  # wavelength 2 pi b^(2i/d) = beta * L
        return head_dim * math.log(beta * original_max_position_embeddings / (2 * math.pi)) / (2 * math.log(base))

    low, high = index(beta_slow), index(beta_fast)
    return np.clip((pair - low) / (high - low), 0, 1)


def _temperature_reference(factor):
    return scaling.yarn_attention_factor(factor)


def _temperature_log10(factor):
    return 0.1 * math.log10(factor) + 1 if factor > 1 else 1.0


def _temperature_squared(factor):
    return scaling.yarn_attention_factor(factor) ** 2


def _temperature_sqrt(factor):
    return math.sqrt(scaling.yarn_attention_factor(factor))


#: Exercise name -> its :class:`Exercise` (reference, inputs, recognised mistakes).
EXERCISES: dict[str, Exercise] = {
    "self_attention": Exercise(
        "self_attention",
        "my_self_attention(x, w_q, w_k, w_v)",
        attention.self_attention,
        [_attention_case(3, 4), _attention_case(5, 8), _attention_case(1, 2), _attention_case(7, 16)],
        {
            "scale the scores by 1/sqrt(d), where d is the width of the queries and keys": _attention_no_scale,
            "divide the scores by sqrt(d), not by d": _attention_scale_by_d,
            "the softmax runs over the keys (each row of weights must sum to 1): use axis=-1": _attention_wrong_axis,
            "turn the scores into weights with a softmax before mixing the values": _attention_no_softmax,
        },
    ),
    "sinusoidal": Exercise(
        "sinusoidal",
        "my_sinusoidal(n_positions, d_model, base=10000.0)",
        absolute.sinusoidal,
        [
            {"n_positions": 4, "d_model": 4},
            {"n_positions": 50, "d_model": 16},
            {"n_positions": 7, "d_model": 6, "base": 100.0},
            {"n_positions": 1, "d_model": 2},
            {
                "n_positions": 300_000,
                "d_model": 4,
                "_hint": "form the angles in float64: at position 300000 float32 angles are off by about 0.02 radians",
            },
        ],
        {
            "sin and cos are swapped: even columns (0, 2, ...) hold the sines, odd columns the cosines": _sinusoidal_swapped,
            "i is the index of a (sin, cos) pair of dimensions, not the position: the exponent is 2i/d_model": _sinusoidal_i_is_position,
            "divide the position by base**(2i/d_model); you multiplied": _sinusoidal_multiplied,
            "both columns of pair i use the exponent 2i/d_model; the cosine column must not use its own index 2i+1": _sinusoidal_column_exponent,
            "the paper interleaves the pairs (sin, cos, sin, cos, ...); you put all sines first": _sinusoidal_concatenated,
            "form the angles in float64: float32 angles lose accuracy as positions grow (about 0.02 radians at position 300000)": _sinusoidal_float32,
        },
        atol=1e-9,
    ),
    "binary": Exercise(
        "binary",
        "my_binary(n_positions, n_bits)",
        absolute.binary,
        [{"n_positions": 16, "n_bits": 4}, {"n_positions": 5, "n_bits": 3}, {"n_positions": 1, "n_bits": 1}],
        {
            "column j is bit j, least significant first (period 2**(j+1)); yours is most significant first": _binary_msb_first,
            "row p holds the bits of p itself, starting from p = 0": _binary_off_by_one,
        },
    ),
    "offset_matrix": Exercise(
        "offset_matrix",
        "my_offset_matrix(k, d_model, base=10000.0)",
        analysis.offset_matrix,
        [
            {"k": 1, "d_model": 4},
            {"k": 5, "d_model": 8},
            {"k": -3, "d_model": 6, "base": 100.0},
            {"k": 0, "d_model": 2},
        ],
        {
            "the blocks are transposed (that matrix shifts by -k): the sine in the first row is +sin(k w_i)": _offset_transposed,
            "each block turns by k times its pair's frequency w_i = base**(-2i/d_model), not by k": _offset_no_frequency,
        },
    ),
    "similarity_by_offset": Exercise(
        "similarity_by_offset",
        "my_similarity_by_offset(offsets, d_model, base=10000.0)",
        analysis.similarity_by_offset,
        [
            {"offsets": np.array([0, 1, 2, 10]), "d_model": 8},
            {"offsets": np.arange(-5, 6), "d_model": 16, "base": 100.0},
            {"offsets": np.array([0]), "d_model": 2},
        ],
        {
            "sin(a)sin(b) + cos(a)cos(b) = cos(a - b): the sum is of cosines of k w_i": _similarity_by_offset_sin,
            "there are d_model/2 pairs, each contributing one cosine; you counted each twice": _similarity_by_offset_doubled,
        },
    ),
    "scaled_embedding": Exercise(
        "scaled_embedding",
        "my_add_positions(token_embeddings, position_table)",
        _scaled_reference,
        [
            {"token_embeddings": _random(5, 16) * 0.02, "position_table": absolute.sinusoidal(8, 16)},
            {"token_embeddings": _random(2, 3, 4), "position_table": absolute.sinusoidal(3, 4)},
        ],
        {
            "multiply the token embeddings by sqrt(d_model) before adding the positions": _scaled_none,
            "scale the token embeddings, not the position table": _scaled_positions,
            "multiply by sqrt(d_model); you divided": _scaled_divided,
        },
    ),
    "alibi_slopes": Exercise(
        "alibi_slopes",
        "my_alibi_slopes(n_heads)",
        biases.alibi_slopes,
        [{"n_heads": 8}, {"n_heads": 1}, {"n_heads": 16}, {"n_heads": 12}, {"n_heads": 6}],
        {
            "for a head count that is not a power of two, take the slopes of the nearest lower power of two, "
            "then every other slope of twice as many heads": _alibi_power_formula_everywhere,
            "the first slope is 2**(-8/n), not 1: count heads from 1": _alibi_from_zero,
            "truncating the next power of two's slopes is a shortcut some code takes; the paper interleaves "
            "the extra slopes instead": _alibi_truncated_next_power,
        },
    ),
    "rope": Exercise(
        "rope",
        "my_rope(x, positions, base=10000.0)",
        _rope_reference,
        [
            {"x": _random(4, 8), "positions": np.arange(4)},
            {"x": _random(2, 3, 16), "positions": np.array([0, 7, 100])},
            {"x": _random(1, 2), "positions": np.array([5])},
            {
                "x": _random(2, 4),
                "positions": np.array([2**20, 2**20 + 1]),
                "_hint": "form the angles in float64: at position 2**20 float32 angles are off by up to 0.06 radians",
            },
        ],
        {
            "the rotation goes the wrong way: a' = a cos - b sin, b' = a sin + b cos": _rope_clockwise,
            "the paper pairs dimensions (2j, 2j+1); you paired j with j + head_dim/2 (the 'half' layout)": _rope_half_layout,
            "pair j turns by position * base**(-2j/head_dim); you multiplied by base**(2j/head_dim)": _rope_multiplied,
            "form the angles in float64: float32 angles lose accuracy as positions grow (up to 0.06 radians at position 2**20)": _rope_float32,
        },
        atol=1e-8,
    ),
    "turns_within_context": Exercise(
        "turns_within_context",
        "my_turns(head_dim, base, context_length)",
        _turns_reference,
        [
            {"head_dim": 8, "base": 10000.0, "context_length": 2048},
            {"head_dim": 128, "base": 500000.0, "context_length": 8192},
            {"head_dim": 2, "base": 10.0, "context_length": 1},
        ],
        {
            "that is the angle in radians; a full turn is 2 pi radians": _turns_radians,
            "that is each pair's wavelength (tokens per turn); turns = context length / wavelength": _turns_wavelength,
            "turns = context_length * theta_j / (2 pi); you divided by theta_j": _turns_inverted,
        },
    ),
    "ntk_base": Exercise(
        "ntk_base",
        "my_ntk_base(base, factor, head_dim)",
        _ntk_reference,
        [
            {"base": 10000.0, "factor": 2.0, "head_dim": 128},
            {"base": 10000.0, "factor": 8.0, "head_dim": 128},
            {"base": 500000.0, "factor": 4.0, "head_dim": 64},
            {"base": 10000.0, "factor": 1.0, "head_dim": 4},
        ],
        {
            "the exponent is d/(d-2), so that the slowest pair slows down by exactly the factor; you used (d-2)/d": _ntk_inverted_exponent,
            "raise the factor to the power d/(d-2) before multiplying the base": _ntk_no_exponent,
            "a larger base means slower rotations: multiply the base, do not divide it": _ntk_divided,
        },
        rtol=1e-10,
    ),
    "yarn_ramp": Exercise(
        "yarn_ramp",
        "my_yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast=32, beta_slow=1)",
        _ramp_reference,
        [
            {"head_dim": 128, "base": 10000.0, "original_max_position_embeddings": 4096},
            {"head_dim": 64, "base": 10000.0, "original_max_position_embeddings": 2048, "beta_fast": 16.0},
            {"head_dim": 128, "base": 500000.0, "original_max_position_embeddings": 8192, "beta_slow": 2.0},
        ],
        {
            "the ramp is the fraction interpolated: 0 for fast pairs (many turns within L), 1 for slow ones": _ramp_reversed,
            "clip the ramp to [0, 1]": _ramp_unclipped,
            "beta counts turns within L, so its boundary is where the wavelength is L / beta, not beta * L": _ramp_wavelength_multiples,
        },
    ),
    "yarn_temperature": Exercise(
        "yarn_temperature",
        "my_yarn_attention_factor(factor)",
        _temperature_reference,
        [{"factor": 8.0}, {"factor": 2.0}, {"factor": 1.0}, {"factor": 32.0}],
        {
            "ln is the natural logarithm (math.log), not log10": _temperature_log10,
            "that is the factor by which the logits grow (the square); cos and sin are each multiplied by "
            "0.1 ln(s) + 1 itself": _temperature_squared,
            "0.1 ln(s) + 1 is already sqrt(1/t): do not take another square root": _temperature_sqrt,
        },
    ),
}
