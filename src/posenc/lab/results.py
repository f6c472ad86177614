"""Checkpoints and results files of the lab, and the seed-to-seed summary."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path

import torch

from .model import ModelConfig, TinyTransformer

__all__ = ["save_checkpoint", "load_checkpoint", "load_results", "summarise"]

RESULTS_SCHEMA = 1


def save_checkpoint(model: TinyTransformer, path: str | Path, half: bool = True) -> Path:
    """Write the model's configuration and weights (float16 by default: half the size, ample for these models)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    weights = {k: (v.half() if half and v.is_floating_point() else v).cpu() for k, v in model.state_dict().items()}
    torch.save({"model_config": model.config.to_dict(), "state_dict": weights}, path)
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
    if data.get("schema") != RESULTS_SCHEMA:
        raise ValueError(f"{path} has results schema {data.get('schema')!r}, expected {RESULTS_SCHEMA}")
    return data


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
            key = (
                config["task"],
                config["scheme"],
                evaluation["extension"],
                evaluation["finetuned"],
                evaluation["test_factor"],
            )
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
