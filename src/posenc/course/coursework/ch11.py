"""Chapter 11: YaRN's ramp (``yarn_ramp``) and temperature (``yarn_temperature``)."""

import math

import numpy as np

from ... import scaling
from ..activities import implementation, investigation, prediction
from ..engine import Exercise
from ..inputs import Real, Whole


def yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0):
    """The reference: :func:`posenc.yarn_ramp` with ``truncate=False``."""
    return scaling.yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast, beta_slow, truncate=False)


def _pair_with_turns(turns, head_dim, base, length):
    return head_dim * math.log(length / (2 * math.pi * turns)) / (2 * math.log(base))


def _reversed(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0):
    return 1 - yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast, beta_slow)


def _unclipped(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0):
    low = _pair_with_turns(beta_fast, head_dim, base, original_max_position_embeddings)
    high = _pair_with_turns(beta_slow, head_dim, base, original_max_position_embeddings)
    return (np.arange(head_dim // 2) - low) / (high - low)


def _unclamped(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0):
    return np.clip(_unclipped(head_dim, base, original_max_position_embeddings, beta_fast, beta_slow), 0, 1)


def _wavelength_multiples(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0):
    """Boundaries where the wavelength is beta * L (instead of L / beta): turns and wavelengths confused."""
    pair = np.arange(head_dim // 2)

    def index(beta):  # wavelength 2 pi b^(2i/d) = beta * L
        return head_dim * math.log(beta * original_max_position_embeddings / (2 * math.pi)) / (2 * math.log(base))

    low, high = index(beta_slow), index(beta_fast)
    return np.clip((pair - low) / (high - low), 0, 1)


def _ramp_hidden(rng):
    cases = []
    for _ in range(4):
        beta_slow = float(rng.uniform(0.05, 4.0))
        cases.append(
            {
                "head_dim": 2 * int(rng.integers(2, 129)),
                "base": float(np.exp(rng.uniform(np.log(10.0), np.log(1e6)))),
                "original_max_position_embeddings": int(np.exp(rng.uniform(np.log(16), np.log(200_000)))),
                "beta_fast": beta_slow + float(rng.uniform(1.0, 64.0)),
                "beta_slow": beta_slow,
            }
        )
    return cases


def _clamped(kwargs) -> tuple[float, float]:
    low, high = scaling.yarn_correction_range(
        kwargs.get("beta_fast", 32.0), kwargs.get("beta_slow", 1.0), kwargs["head_dim"], kwargs["base"],
        kwargs["original_max_position_embeddings"], truncate=False,
    )
    return low, high


def _ramp_domain(kwargs) -> bool:
    """The text's rule holds: beta_fast > beta_slow, and the clamped boundaries do not meet or cross.

    (Where they cross, transformers' formula gives 0 to pairs the text says are 1: a quirk the
    task does not ask for.)
    """
    if not kwargs.get("beta_fast", 32.0) > kwargs.get("beta_slow", 1.0):
        return False
    low, high = _clamped(kwargs)
    return low < high



RAMP = Exercise(
    "yarn_ramp",
    "my_yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast=32, beta_slow=1)",
    yarn_ramp,
    [
        {"head_dim": 128, "base": 10000.0, "original_max_position_embeddings": 4096},
        {"head_dim": 64, "base": 10000.0, "original_max_position_embeddings": 2048, "beta_fast": 16.0},
        {"head_dim": 128, "base": 500000.0, "original_max_position_embeddings": 8192, "beta_slow": 2.0},
        # clamps that bind: the beta_fast boundary below pair 0, the beta_slow one past head_dim - 1
        {"head_dim": 16, "base": 10000.0, "original_max_position_embeddings": 32},
        {"head_dim": 8, "base": 10.0, "original_max_position_embeddings": 1000},
    ],
    {
        "the ramp is the fraction interpolated: 0 for fast pairs (many turns within L), 1 for slow ones": _reversed,
        "clip the ramp to [0, 1]": _unclipped,
        "clamp the boundaries before the line is drawn, as transformers does: low = max(low, 0), "
        "high = min(high, head_dim - 1); here a boundary lies outside that range": _unclamped,
        "beta counts turns within L, so its boundary is where the wavelength is L / beta, not beta * L": _wavelength_multiples,
    },
    hidden=_ramp_hidden,
    label="ex-ch11-ramp",
    args={
        "head_dim": Whole(),
        "base": Real(),
        "original_max_position_embeddings": Whole(),
        "beta_fast": Real(),
        "beta_slow": Real(),
    },
    boundaries=[
        # fractional betas; two pairs only (both boundaries clamped); beta_fast a whole number
        {"head_dim": 64, "base": 10000.0, "original_max_position_embeddings": 2048, "beta_fast": 2.5, "beta_slow": 0.5},
        {"head_dim": 4, "base": 10000.0, "original_max_position_embeddings": 4096},  # two pairs, both clamps
        {"head_dim": 128, "base": 10000.0, "original_max_position_embeddings": 4096, "beta_fast": 33.0},
    ],
    domain=_ramp_domain,
)


def yarn_temperature(factor):
    """The reference: :func:`posenc.yarn_attention_factor`."""
    return scaling.yarn_attention_factor(factor)


def _log10(factor):
    return 0.1 * math.log10(factor) + 1 if factor > 1 else 1.0


def _squared(factor):
    return scaling.yarn_attention_factor(factor) ** 2


def _sqrt(factor):
    return math.sqrt(scaling.yarn_attention_factor(factor))


def _no_branch(factor):
    return 0.1 * math.log(factor) + 1



TEMPERATURE = Exercise(
    "yarn_temperature",
    "my_yarn_attention_factor(factor)",
    yarn_temperature,
    [{"factor": 8.0}, {"factor": 2.0}, {"factor": 1.0}, {"factor": 32.0}, {"factor": 0.5}],
    {
        "ln is the natural logarithm (math.log), not log10": _log10,
        "that is the factor by which the logits grow (the square); cos and sin are each multiplied by "
        "0.1 ln(s) + 1 itself": _squared,
        "0.1 ln(s) + 1 is already sqrt(1/t): do not take another square root": _sqrt,
        "for s <= 1 (no extension, or a shorter context) the factor is 1: 0.1 ln(s) + 1 would fall below 1": _no_branch,
    },
    returns="float",
    hidden=lambda rng: [{"factor": float(f)} for f in np.exp(rng.uniform(np.log(0.2), np.log(64.0), size=4))],
    label="ex-ch11-temperature",
    args={"factor": Real()},
    boundaries=[{"factor": 1.0 + 1e-6}, {"factor": 1.0 - 1e-6}, {"factor": 2.5}, {"factor": 1.25}],
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    implementation(RAMP, minutes=25),
    implementation(TEMPERATURE, minutes=10),
    prediction("ex-ch11-double-l", 15),
    investigation("ex-ch11-llama31", 25),
)
