"""Chapter 14: the rotation speeds of a legacy config (``config_inv_freq``)."""

import numpy as np

from ... import config as config_module
from ..activities import implementation, investigation, prediction
from ..engine import Exercise
from ..inputs import Mapping


def config_inv_freq(config):
    """The reference: layer 0's ``inv_freq`` as :func:`posenc.from_config` reads the config."""
    return config_module.from_config(config)[0].inv_freq


def _head_dim(config):
    return config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]


def _factor(config):
    scaling = config.get("rope_scaling") or {}
    if scaling.get("type", scaling.get("rope_type")) == "linear":
        return float(scaling["factor"])
    return 1.0


def _speeds(base, rotary_dim, exponent_dim):
    return base ** (-np.arange(0, rotary_dim, 2, dtype=np.float64) / exponent_dim)


def _rotary_dim(config):
    return int(_head_dim(config) * config.get("partial_rotary_factor", 1.0))


def _exponent_over_head_dim(config):
    """p-RoPE's speeds: the exponent over the whole head instead of the rotated part."""
    return _speeds(config["rope_theta"], _rotary_dim(config), _head_dim(config)) / _factor(config)


def _times_factor(config):
    return _speeds(config["rope_theta"], _rotary_dim(config), _rotary_dim(config)) * _factor(config)


def _ignores_scaling(config):
    return _speeds(config["rope_theta"], _rotary_dim(config), _rotary_dim(config))


def _hidden_over_heads(kwargs, got, expected):
    """hidden_size // num_attention_heads used where the config gives another head_dim."""
    config = kwargs["config"]
    if not config.get("head_dim"):
        return False
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    return got.shape[-1] == int(head_dim * config.get("partial_rotary_factor", 1.0)) // 2 != expected.shape[-1]


def _every_pair(kwargs, got, expected):
    """The full head's pairs returned where only part of the head rotates."""
    return got.shape[-1] == _head_dim(kwargs["config"]) // 2 != expected.shape[-1]


def _rounded_width(kwargs, got, expected):
    """round(head_dim * partial_rotary_factor) where the text says int(): one pair too many."""
    config = kwargs["config"]
    width = _head_dim(config) * config.get("partial_rotary_factor", 1.0)
    return round(width) != int(width) and got.shape[-1] == len(range(0, round(width), 2)) != expected.shape[-1]


def _legacy(hidden, heads, base, layers=2, **fields):
    return {
        "config": {
            "hidden_size": hidden,
            "num_attention_heads": heads,
            "num_hidden_layers": layers,
            "rope_theta": base,
            "rope_scaling": None,
            **fields,
        }
    }


def _rotated(config) -> int:
    return int(_head_dim(config) * config.get("partial_rotary_factor", 1.0))


def _hidden(rng):
    cases = []
    for _ in range(5):
        heads = int(rng.integers(2, 33))
        head_dim = 2 * int(rng.integers(4, 129))
        fields = {}
        if rng.random() < 0.5:  # head_dim given, and unlike hidden_size // heads
            fields["head_dim"] = head_dim
            hidden = heads * 2 * int(rng.integers(4, 129))
        else:
            hidden = heads * head_dim
        if rng.random() < 0.6:  # any fraction: int(head_dim * p) truncates, often where round() would not
            fields["partial_rotary_factor"] = float(rng.choice([0.25, 0.4, 0.5, 0.75, round(rng.uniform(0.2, 1), 2)]))
        if rng.random() < 0.6:
            key = "type" if rng.random() < 0.5 else "rope_type"
            fields["rope_scaling"] = {key: "linear", "factor": float(rng.choice([2.0, 4.0, rng.uniform(1.5, 16.0)]))}
        case = _legacy(hidden, heads, float(np.exp(rng.uniform(np.log(100.0), np.log(1e7)))), **fields)
        if not _domain(case):
            case["config"].pop("partial_rotary_factor", None)  # keep an even rotated width
        cases.append(case)
    return cases


def _domain(kwargs) -> bool:
    """Configs the text describes: an even rotated width of at least 2, linear scaling or none."""
    config = kwargs["config"]
    rotated = _rotated(config)
    scaling = config.get("rope_scaling") or {}
    return rotated >= 2 and rotated % 2 == 0 and scaling.get("type", scaling.get("rope_type", "linear")) == "linear"


def _vary(config, rng):
    """The same config with one field changed (a cache keyed on the other fields returns a stale answer)."""
    yield {**config, "rope_theta": config["rope_theta"] * 1.5}
    scaling = config.get("rope_scaling")
    if scaling:
        yield {**config, "rope_scaling": {**scaling, "factor": scaling["factor"] + 1.5}}
    yield {**config, "partial_rotary_factor": 0.5}
    yield {**config, "head_dim": _head_dim(config) // 2}



EXERCISE = Exercise(
    "config_inv_freq",
    "my_config_inv_freq(config)",
    config_inv_freq,
    [
        _legacy(4096, 32, 10000.0),  # Llama 2's head: d = 128
        _legacy(1024, 16, 1000000.0, head_dim=128),  # Qwen3-0.6B: head_dim is not 1024 / 16
        _legacy(3072, 24, 10000.0, partial_rotary_factor=0.75),  # Phi-4-mini: 96 of 128 rotate
        _legacy(4096, 32, 10000.0, rope_scaling={"type": "linear", "factor": 4.0}),
        _legacy(2560, 32, 10000.0, partial_rotary_factor=0.4, rope_scaling={"rope_type": "linear", "factor": 2.0}),
    ],
    {
        "partial rotary: the rotated pairs have the speeds of a head as wide as the rotated part, "
        "theta_i = rope_theta ** (-2i / rotary_dim); rope_theta ** (-2i / head_dim) keeps only the fastest "
        "pairs of the full head (that is p-RoPE)": _exponent_over_head_dim,
        "linear scaling (position interpolation) divides every speed by the factor: each pair turns s times "
        "slower": _times_factor,
        "read rope_scaling: with type (or rope_type) 'linear', divide every speed by its 'factor'": _ignores_scaling,
    },
    detectors={
        "when the config gives head_dim, use it: it need not equal hidden_size // num_attention_heads": (
            _hidden_over_heads
        ),
        "only the first int(head_dim * partial_rotary_factor) dimensions rotate: return one speed per "
        "rotated pair, rotary_dim // 2 of them": _every_pair,
        "int() truncates: the rotated width is int(head_dim * partial_rotary_factor), so 64 * 0.45 = 28.8 gives "
        "28 dimensions (14 pairs); round() gives 29": _rounded_width,
    },
    hidden=_hidden,
    label="ex-ch14-config-inv-freq",
    args={
        "config": Mapping(
            about="a dict with the fields above, numbers as floats or ints, `head_dim` absent or `None` when the "
            "config gives none, `rope_scaling` absent or `None` when there is no scaling",
            vary=_vary,
        )
    },
    boundaries=[
        _legacy(640, 10, 10000.0, partial_rotary_factor=0.45),  # 64 * 0.45 = 28.8: int gives 28, round 29
        _legacy(1024, 8, 10000.0, head_dim=64, partial_rotary_factor=0.42),  # 26.88 -> 26, and head_dim given
        _legacy(2048, 16, 10000.0, head_dim=None),  # head_dim present but None: hidden_size // heads
        _legacy(64, 8, 10000.0, partial_rotary_factor=0.25),  # 2 of 8 dimensions rotate: one pair
        _legacy(2048, 16, 500000.0, rope_scaling={"type": "linear", "factor": 2.5}),  # a fractional factor
        _legacy(2048, 16, 10000.0, partial_rotary_factor=1.0),
        {"config": {"hidden_size": 2048, "num_attention_heads": 16, "num_hidden_layers": 2, "rope_theta": 5e5}},
    ],
    allowed=("posenc.rope_inv_freq",),
    domain=_domain,
)


#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    implementation(EXERCISE, minutes=25),
    prediction("ex-ch14-predict-partial", 10),
    investigation("ex-ch14-gpt-oss", 20),
)
