"""Checkpoints and results files of the lab, and the seed-to-seed summary."""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from .._files import atomic_path
from .._validation import check_bool, check_choice, check_int, show_value
from .model import ModelConfig, TinyTransformer

__all__ = [
    "save_checkpoint",
    "load_checkpoint",
    "load_results",
    "summarise",
    "seed_values",
    "seeds_agreeing",
    "seeds_phrase",
    "t_quantile",
    "mean_interval",
]

RESULTS_SCHEMA = 1


def save_checkpoint(model: TinyTransformer, path: str | Path, half: bool = True) -> Path:
    """Write the model's configuration and weights (float16 by default: half the size, ample for these models)."""
    path = Path(path)
    weights = {k: (v.half() if half and v.is_floating_point() else v).cpu() for k, v in model.state_dict().items()}
    with atomic_path(path) as temporary:  # a crash never leaves half a checkpoint
        torch.save({"model_config": model.config.to_dict(), "state_dict": weights}, temporary)
    return path


def load_checkpoint(path: str | Path) -> TinyTransformer:
    """A model rebuilt from :func:`save_checkpoint`'s file, in float32."""
    saved = torch.load(Path(path), map_location="cpu", weights_only=True)
    model = TinyTransformer(ModelConfig(**saved["model_config"]))
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in saved["state_dict"].items()})
    return model.eval()


def load_results(path: str | Path) -> dict:
    """A results file written by ``python -m posenc.lab sweep``; checks its schema version."""
    data = json.loads(Path(path).read_text())
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise ValueError(f"{path} is not a results file: expected a JSON object with a list of 'runs'")
    if data.get("schema") != RESULTS_SCHEMA:
        raise ValueError(f"{path} has results schema {data.get('schema')!r}, expected {RESULTS_SCHEMA}")
    return data


def _configuration(config: dict, evaluation: dict) -> tuple:
    """The key that identifies one measured configuration: (task, scheme, extension, finetuned, test_factor)."""
    return (
        config["task"],
        config["scheme"],
        evaluation["extension"],
        evaluation["finetuned"],
        evaluation["test_factor"],
    )


def summarise(runs: list[dict], value: str = "all") -> list[dict]:
    """Mean, minimum and maximum over seeds of each (task, scheme, extension, finetuned, test factor).

    ``value`` is "all" (every scored position), "inside" (within the training length) or
    "beyond" (past it). Missing values (None) are skipped.
    """
    groups = defaultdict(list)
    metrics = {}
    for record in runs:
        config = record["config"]
        for evaluation in record["evaluations"]:
            key = _configuration(config, evaluation)
            if evaluation.get(value) is not None:
                groups[key].append(evaluation[value])
            metrics[key] = evaluation["metric"]
    rows = []
    for key, values in sorted(groups.items()):
        task, scheme, extension, finetuned, factor = key
        rows.append(
            {
                "task": task,
                "scheme": scheme,
                "extension": extension,
                "finetuned": finetuned,
                "test_factor": factor,
                "metric": metrics[key],
                "value": value,
                "n": len(values),
                "mean": statistics.fmean(values),
                "min": min(values),
                "max": max(values),
                "std": statistics.pstdev(values) if len(values) > 1 else 0.0,
            }
        )
    return rows


def _per_seed(runs) -> dict[int, dict[tuple, dict]]:
    """seed -> {(task, scheme, extension, finetuned, test_factor): evaluation}; checks the records' shape."""
    if not isinstance(runs, list | tuple) or not runs:
        raise TypeError(f"runs must be a non-empty list of run records (results['runs']), got {show_value(runs)}")
    seeds: dict[int, dict[tuple, dict]] = defaultdict(dict)
    for n, record in enumerate(runs):
        if not isinstance(record, dict) or "config" not in record or "evaluations" not in record:
            raise TypeError(f"runs[{n}] must be a run record with 'config' and 'evaluations', got {show_value(record)}")
        config = record["config"]
        for evaluation in record["evaluations"]:
            key = _configuration(config, evaluation)
            seeds[config["seed"]][key] = evaluation
    return dict(sorted(seeds.items()))


def _at(results: dict, seed: int, task, scheme, test_factor, extension="none", finetuned=False, value="all") -> float:
    """One seed's metric for one configuration; ValueError when the seed lacks it."""
    value = check_choice("value", value, ("all", "inside", "beyond"))
    key = (task, scheme, extension, finetuned, test_factor)
    if key not in results or results[key].get(value) is None:
        raise ValueError(
            f"seed {seed} has no {value!r} value for task={task!r}, scheme={scheme!r}, "
            f"test_factor={test_factor!r}, extension={extension!r}, finetuned={finetuned!r}"
        )
    return results[key][value]


def seed_values(runs, task, scheme, test_factor, extension="none", finetuned=False, value="all") -> np.ndarray:
    """One configuration's metric in every seed of ``runs``, in increasing seed order (float64 array).

    ``value`` is "all", "inside" or "beyond" (see :func:`summarise`). A seed without that
    value raises ``ValueError``. Differences of two such arrays are per-seed differences.
    """
    seeds = _per_seed(runs)
    return np.array(
        [_at(results, seed, task, scheme, test_factor, extension, finetuned, value) for seed, results in seeds.items()],
        dtype=np.float64,
    )


def seeds_agreeing(runs, condition) -> tuple[int, int]:
    """``(k, n)``: of the ``n`` seeds in ``runs``, the number ``k`` whose results satisfy ``condition``.

    A comparison between schemes or methods is decided seed by seed, not on the means:
    ``condition(at)`` is called once per seed with a function
    ``at(task, scheme, test_factor, extension="none", finetuned=False, value="all")``
    that returns that seed's metric ("all" positions, "inside" or "beyond" the training
    length), and must return True or False. For example, "YaRN beats NTK-aware scaling on
    text at 4L, zero-shot" (bits per character: lower is better)::

        seeds_agreeing(runs, lambda at: at("text", "rope", 4, "yarn") < at("text", "rope", 4, "ntk"))

    A value the seed lacks (no such run or evaluation, or "beyond" at the training
    length) raises ``ValueError``: a claim is never decided on missing data.
    """
    seeds = _per_seed(runs)
    if not callable(condition):
        raise TypeError(f"condition must be a function of at(...), got {show_value(condition)}")
    agreeing = 0
    for seed, results in seeds.items():

        def at(task, scheme, test_factor, extension="none", finetuned=False, value="all", results=results, seed=seed):
            return _at(results, seed, task, scheme, test_factor, extension, finetuned, value)

        holds = condition(at)
        agreeing += check_bool(f"condition(at) for seed {seed}", holds)
    return agreeing, len(seeds)


def seeds_phrase(k: int, n: int) -> str:
    """How many seeds agree, in words: "in all 3 seeds", "in 2 of 3 seeds", "in none of the 3 seeds".

    With a single seed: "in the one seed" or "not in the one seed"."""
    n = check_int("n", n, minimum=1)
    k = check_int("k", k, minimum=0, maximum=n)
    if n == 1:
        return "in the one seed" if k == 1 else "not in the one seed"
    if k == n:
        return f"in all {n} seeds"
    if k == 0:
        return f"in none of the {n} seeds"
    return f"in {k} of {n} seeds"


def t_quantile(probability: float, df: int) -> float:
    """The ``probability`` quantile of Student's t distribution with ``df`` degrees of freedom.

    Found by bisection on the CDF, integrated from the density
    ``Gamma((df+1)/2) / (sqrt(df pi) Gamma(df/2)) (1 + t^2/df)^(-(df+1)/2)`` with Simpson's
    rule over the substitution ``t = tan(u)`` (accurate to about 1e-9; no SciPy needed).
    """
    df = check_int("df", df, minimum=1)
    if not isinstance(probability, float | int) or not 0.5 <= probability < 1:
        raise ValueError(f"probability must be in [0.5, 1), got {show_value(probability)}")
    scale = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def mass(t: float) -> float:  # P(0 < T < t) = integral of the density over u = atan(t')
        top = math.atan(t)
        u = np.linspace(0.0, top, 2001)
        f = scale * (1 + np.tan(u) ** 2 / df) ** (-(df + 1) / 2) / np.cos(u) ** 2
        return float((top / 6000) * (f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum()))

    low, high = 0.0, 1.0
    while mass(high) < probability - 0.5:
        high *= 2
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if mass(middle) < probability - 0.5 else (low, middle)
    return (low + high) / 2


def mean_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of ``values`` (one per seed) and its ``level`` confidence interval,
    ``mean -+ t * s / sqrt(n)`` with the sample standard deviation ``s`` and Student's ``t`` for
    ``n - 1`` degrees of freedom. With one value the interval is that value."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)):
        raise ValueError(f"values must be a non-empty 1-D list of finite numbers, got {show_value(values)}")
    mean = float(values.mean())
    if values.size == 1:
        return mean, mean, mean
    half = t_quantile(0.5 + level / 2, values.size - 1) * float(values.std(ddof=1)) / math.sqrt(values.size)
    return mean, mean - half, mean + half
