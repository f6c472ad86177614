"""Checkpoints and results files of the lab, and the seed-to-seed summary."""

from __future__ import annotations

import json
import math
import os
import statistics
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from .._files import atomic_path
from .._validation import check_bool, check_choice, check_int, show_value
from .model import ModelConfig, TinyTransformer

__all__ = [
    "device_kind",
    "older_protocol",
    "save_checkpoint",
    "load_checkpoint",
    "load_results",
    "write_file",
    "run_identity",
    "merge_runs",
    "mixing_problems",
    "bootstrap_interval",
    "wilson_interval",
    "paired_difference",
    "summarise",
    "seed_values",
    "seeds_agreeing",
    "seeds_phrase",
    "t_quantile",
    "mean_interval",
]

RESULTS_SCHEMA = 2

#: Settings that change how fast a run goes, not what it computes: a run is identified without them.
HOW_NOT_WHAT = ("threads",)
#: What may differ between the runs of one results file of one task: the scheme and the seed.
PER_RUN = ("scheme", "seed")


def _open_mode() -> int:
    """The permissions a new file gets here (0o666 less the umask: usually 0o644)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_file(path: str | Path, content: str | bytes | None = None, writer=None) -> Path:
    """Write ``content`` (or call ``writer(temporary_path)``) to ``path`` atomically, with normal permissions.

    The file goes to a temporary name beside ``path`` and is renamed into place, so a crash
    leaves the old file or the new one, never half of one; it gets the permissions of any new
    file (0o644 under the usual umask), not the temporary file's 0o600."""
    path = Path(path)
    with atomic_path(path) as temporary:
        if writer is not None:
            writer(temporary)
        elif isinstance(content, bytes):
            temporary.write_bytes(content)
        else:
            temporary.write_text(content, encoding="utf-8")
        os.chmod(temporary, _open_mode())
    return path


def save_checkpoint(model: TinyTransformer, path: str | Path, half: bool = True) -> Path:
    """Write the model's configuration and weights (float16 by default: half the size, ample for these models)."""
    weights = {k: (v.half() if half and v.is_floating_point() else v).cpu() for k, v in model.state_dict().items()}
    saved = {"model_config": model.config.to_dict(), "state_dict": weights}
    return write_file(path, writer=lambda temporary: torch.save(saved, temporary))  # never half a checkpoint


def load_checkpoint(path: str | Path) -> TinyTransformer:
    """A model rebuilt from :func:`save_checkpoint`'s file, in float32."""
    saved = torch.load(Path(path), map_location="cpu", weights_only=True)
    model = TinyTransformer(ModelConfig(**saved["model_config"]))
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in saved["state_dict"].items()})
    return model.eval()


def load_results(path: str | Path) -> dict:
    """A results file written by ``python -m posenc.lab run`` or ``sweep``; checks its shape and schema version."""
    try:
        data = json.loads(Path(path).read_text())
    except RecursionError:
        raise ValueError(f"{path} is not a results file: its JSON is nested too deeply") from None
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise ValueError(f"{path} is not a results file: expected a JSON object with a list of 'runs'")
    for n, record in enumerate(data["runs"]):
        if not isinstance(record, dict) or not isinstance(record.get("config"), dict) or "evaluations" not in record:
            raise ValueError(f"{path} is not a results file: runs[{n}] has no 'config' and 'evaluations'")
        _check_run(path, n, record)
    if data.get("schema") == 1:  # the first protocol's files: one command, versions per file, no provenance
        data = _from_schema_1(data)
    if data.get("schema") != RESULTS_SCHEMA:
        raise ValueError(f"{path} has results schema {data.get('schema')!r}, expected 1 or {RESULTS_SCHEMA}")
    if not isinstance(data.get("commands"), list) or not all(isinstance(c, dict) for c in data["commands"]):
        raise ValueError(f"{path} is not a results file: 'commands' must be a list of objects")
    seconds = data.get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not math.isfinite(seconds):
        raise ValueError(f"{path} is not a results file: 'seconds' must be a number, got {show_value(seconds)}")
    return data


def _check_run(path, n: int, record: dict) -> None:
    """A run's fields that the lab's commands read: task and scheme (text), seed (an integer), provenance."""
    config = record["config"]
    for name in ("task", "scheme"):
        if not isinstance(config.get(name), str):
            raise ValueError(f"{path} is not a results file: runs[{n}] config has no text {name!r}")
    seed = config.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"{path} is not a results file: runs[{n}] config's seed must be an integer, got {seed!r}")
    if not isinstance(record.get("provenance"), dict | None):
        raise ValueError(f"{path} is not a results file: runs[{n}] provenance must be an object")


def older_protocol(data: dict) -> int | None:
    """The schema of an older protocol that :func:`load_results` read ``data`` from (None for the current one).

    Such a file is read only: its runs carry no provenance, so no command adds runs to it or
    copies its runs into a file of the current schema."""
    if not isinstance(data, dict):
        raise TypeError(f"data must be what load_results returns (a dict), got {show_value(data)}")
    return data.get("read_from_schema")


def _from_schema_1(data: dict) -> dict:
    """A schema-1 file (one ``command``, ``versions`` for the whole file) in schema 2's shape, read only:
    its command becomes ``commands[0]`` and each run gets the file's versions and a provenance of
    ``None`` (that protocol recorded no code or corpus hash)."""
    runs = [
        {**r, "versions": r.get("versions", data.get("versions")), "provenance": r.get("provenance")}
        for r in data["runs"]
    ]
    command = {"command": data.get("command"), "runs": len(runs), "seconds": data.get("seconds")}
    return {**data, "schema": RESULTS_SCHEMA, "commands": [command], "runs": runs, "read_from_schema": 1}


def device_kind(device: str | None) -> str | None:
    """The kind of device a run's config names: ``"cuda:1"`` -> ``"cuda"``; ``"cpu"`` as is; None (a record
    without one) stays None."""
    if device is not None and not isinstance(device, str):
        raise TypeError(f"device must be a device name such as 'cpu' or 'cuda:0', or None, got {show_value(device)}")
    return device.split(":", 1)[0] if device is not None else None


def run_identity(record: dict) -> str:
    """What a run is (a JSON string): its config without the settings of :data:`HOW_NOT_WHAT`, the kind
    of device it ran on and the code that computed it (``provenance["source_hash"]``, see
    :func:`posenc.lab.provenance.code_version`).

    Two runs with one identity ran the same computation: the same settings, code and kind of
    device (floating-point sums on a GPU and a CPU round differently). A results file keeps
    one of them. ``record`` is a run record (``{"config", "provenance", ...}``)."""
    if not isinstance(record, dict) or not isinstance(record.get("config"), dict):
        raise TypeError(f"record must be a run record with a 'config' dict, got {show_value(record)}")
    config = {k: v for k, v in record["config"].items() if k not in HOW_NOT_WHAT}
    config["device"] = device_kind(config.get("device"))
    code = (record.get("provenance") or {}).get("source_hash")
    return json.dumps({"config": config, "code": code}, sort_keys=True)


def _order(record: dict) -> tuple:
    config, provenance = record["config"], record.get("provenance") or {}
    return (
        config["task"],
        config["scheme"],
        config["seed"],
        str(device_kind(config.get("device"))),
        str(provenance.get("source_hash")),
    )


def merge_runs(previous: list[dict], new: list[dict]) -> tuple[list[dict], list[dict]]:
    """``(merged, replaced)``: every run of ``previous`` and ``new``, one per :func:`run_identity`.

    A new run replaces a previous run only when both have one identity: the same settings run
    again by the same code on the same kind of device (``replaced`` lists the previous runs it
    replaced). A run from other code or another device is a run of its own: both are kept, and
    :func:`mixing_problems` says that the file now mixes them. Nothing else is dropped."""
    by_identity = {run_identity(r): r for r in previous}
    replaced = []
    for record in new:
        key = run_identity(record)
        if key in by_identity:
            replaced.append(by_identity[key])
        by_identity[key] = record
    return sorted(by_identity.values(), key=_order), replaced


def _settings(config: dict) -> dict:
    """The settings one task's runs share (the device is compared by its kind, with the software)."""
    return {k: v for k, v in config.items() if k not in (*HOW_NOT_WHAT, *PER_RUN, "device")}


def _software(record: dict) -> dict:
    provenance = record.get("provenance") or {}
    versions = record.get("versions") or {}
    return {
        "device": device_kind(record["config"].get("device")),
        "code (source hash)": provenance.get("source_hash"),
        "text corpus (hash)": provenance.get("corpus_hash") if record["config"].get("task") == "text" else None,
        **{k: versions.get(k) for k in ("python", "torch", "numpy")},
    }


def mixing_problems(runs: list[dict]) -> list[str]:
    """What differs between runs that one results file should hold alike, one line per difference.

    A results file is one experiment: for each task, every run has the same settings except
    its scheme and seed (and its threads, which change only the speed), and every run was
    computed by the same code (:func:`posenc.lab.provenance.code_version`) on the same kind of
    device, on the same text corpus and with the same Python, torch and NumPy. Empty when
    nothing differs."""
    problems = []
    by_task = defaultdict(list)
    for record in runs:
        by_task[record["config"]["task"]].append(_settings(record["config"]))
    for task, settings in sorted(by_task.items()):
        for name in sorted({k for one in settings for k in one}):
            seen = {json.dumps(one.get(name), sort_keys=True) for one in settings}
            if len(seen) > 1:
                problems.append(f"{task} runs differ in {name}: {', '.join(sorted(seen))}")
    software = [_software(r) for r in runs]
    for name in software[0] if software else ():
        seen = {str(one[name]) for one in software if one[name] is not None or name != "text corpus (hash)"}
        if len(seen) > 1:
            problems.append(f"runs differ in {name}: {', '.join(sorted(seen))}")
    return problems


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
    """Mean, minimum, maximum and sample standard deviation (``ddof = 1``, as :func:`mean_interval`
    uses) over seeds of each (task, scheme, extension, finetuned, test factor).

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
                "std": statistics.stdev(values) if len(values) > 1 else 0.0,
            }
        )
    return rows


def _per_seed(runs, seeds=None) -> dict[int, dict[tuple, dict]]:
    """seed -> {(task, scheme, extension, finetuned, test_factor): evaluation}, for ``seeds`` (default:
    every seed of ``runs``, in increasing order); checks the records' shape.

    Two runs of one (task, scheme, seed) with different settings (a file that mixes them)
    raise ``ValueError``: a seed's value must be one number."""
    if not isinstance(runs, list | tuple) or not runs:
        raise TypeError(f"runs must be a non-empty list of run records (results['runs']), got {show_value(runs)}")
    found: dict[int, dict[tuple, dict]] = defaultdict(dict)
    for n, record in enumerate(runs):
        if not isinstance(record, dict) or "config" not in record or "evaluations" not in record:
            raise TypeError(f"runs[{n}] must be a run record with 'config' and 'evaluations', got {show_value(record)}")
        config = record["config"]
        for evaluation in record["evaluations"]:
            key = _configuration(config, evaluation)
            if key in found[config["seed"]]:
                raise ValueError(
                    f"runs hold two runs of task={key[0]!r}, scheme={key[1]!r}, seed={config['seed']} "
                    "(different settings): choose one set of settings before comparing seeds"
                )
            found[config["seed"]][key] = evaluation
    if seeds is None:
        return dict(sorted(found.items()))
    if isinstance(seeds, str | bytes) or not hasattr(seeds, "__iter__"):
        raise TypeError(f"seeds must be a list of seed numbers or None, got {show_value(seeds)}")
    chosen = [check_int("seeds", seed, minimum=0) for seed in seeds]
    missing = [seed for seed in chosen if seed not in found]
    if not chosen or missing:
        raise ValueError(f"seeds {missing or chosen} are not in runs (its seeds: {sorted(found)})")
    return {seed: found[seed] for seed in sorted(set(chosen))}


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


def seed_values(
    runs, task, scheme, test_factor, extension="none", finetuned=False, value="all", seeds=None
) -> np.ndarray:
    """One configuration's metric in every seed of ``runs`` (or in ``seeds``), in increasing seed order
    (float64 array).

    ``value`` is "all", "inside" or "beyond" (see :func:`summarise`). A seed without that
    value raises ``ValueError``. Differences of two such arrays are per-seed differences.
    """
    seeds = _per_seed(runs, seeds)
    return np.array(
        [_at(results, seed, task, scheme, test_factor, extension, finetuned, value) for seed, results in seeds.items()],
        dtype=np.float64,
    )


def seeds_agreeing(runs, condition, seeds=None) -> tuple[int, int]:
    """``(k, n)``: of the ``n`` seeds in ``runs`` (or in ``seeds``), the number ``k`` whose results
    satisfy ``condition``.

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
    seeds = _per_seed(runs, seeds)
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
    values = _finite_values(values)
    _check_level(level)
    mean = float(values.mean())
    if values.size == 1:
        return mean, mean, mean
    half = t_quantile(0.5 + level / 2, values.size - 1) * float(values.std(ddof=1)) / math.sqrt(values.size)
    return mean, mean - half, mean + half


def bootstrap_interval(
    values, level: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of ``values`` (one per seed) and its percentile-bootstrap interval.

    ``resamples`` samples of ``n`` values drawn with replacement (a fixed NumPy generator,
    ``seed``); the interval runs from the ``(1 - level) / 2`` to the ``(1 + level) / 2`` quantile
    of their means (Efron and Tibshirani 1993, ch. 13). Every resampled mean lies between the
    smallest and the largest value, so an interval on accuracies never leaves [0, 1]."""
    values = _finite_values(values)
    check_int("resamples", resamples, minimum=100)
    _check_level(level)
    if values.size == 1:
        return float(values[0]), float(values[0]), float(values[0])
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, (resamples, values.size))].mean(axis=1)
    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(values.mean()), float(low), float(high)


def wilson_interval(successes: int, trials: int, level: float = 0.95) -> tuple[float, float, float]:
    """``(p, low, high)``: a proportion ``successes / trials`` and its Wilson score interval.

    Wilson (1927): ``(p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)`` with ``z`` the
    normal quantile for ``level``; unlike ``p -+ z sqrt(p(1-p)/n)`` it stays inside [0, 1], also
    at 0 or ``n`` successes. For one seed's accuracy over ``trials`` sequences."""
    trials = check_int("trials", trials, minimum=1)
    successes = check_int("successes", successes, minimum=0, maximum=trials)
    _check_level(level)
    z = statistics.NormalDist().inv_cdf(0.5 + level / 2)
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return p, max(0.0, centre - half), min(1.0, centre + half)


def paired_difference(first, second, level: float = 0.95) -> dict:
    """The per-seed difference ``first - second`` of two methods measured on the same seeds.

    Returns ``{"mean", "low", "high", "positive", "negative", "n"}``: the mean difference and its
    Student-t interval (:func:`mean_interval`, ``ddof = 1``), and the number of seeds in which the
    difference is above and below zero. Pairing removes what the two share (the seed's
    trained model and its test data), so the interval is narrower than the two means' intervals."""
    first, second = _finite_values(first), _finite_values(second)
    if first.shape != second.shape:
        raise ValueError(f"first and second must hold one value per seed each, got {first.size} and {second.size}")
    difference = first - second
    mean, low, high = mean_interval(difference, level)
    return {
        "mean": mean,
        "low": low,
        "high": high,
        "positive": int(np.sum(difference > 0)),
        "negative": int(np.sum(difference < 0)),
        "n": int(difference.size),
    }


def _finite_values(values) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)):
        raise ValueError(f"values must be a non-empty 1-D list of finite numbers, got {show_value(values)}")
    return array


def _check_level(level) -> None:
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
        raise ValueError(f"level must be a number between 0 and 1 (0.95 for 95%), got {show_value(level)}")
