"""Train, extend and evaluate the tiny transformers; everything the lab chapter and the command line run.

A *run* trains one model (task, scheme, seed) at the training length ``L`` and evaluates it at
``L``, ``2L`` and ``4L``. A RoPE model is also evaluated with each context-extension method,
configured once for the target length ``4L`` (factor 4) and then run at every test length,
as a model extended for a longer context is used in practice: zero-shot, and optionally
after a short fine-tune at ``4L``. Dynamic NTK needs no target: it scales with the current
length. Results are plain dicts, ready for JSON.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import platform
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from .._validation import check_choice, check_int
from .data import char_corpus, lookup_batch
from .model import SCHEMES, ModelConfig, TinyTransformer

__all__ = [
    "TASKS",
    "EXTENSIONS",
    "RunConfig",
    "build_model",
    "train",
    "evaluate",
    "per_position",
    "extension_settings",
    "learned_position_table",
    "run",
    "strip_model",
    "versions",
]

TASKS = ("lookup", "text")

#: Context-extension settings for RoPE models at evaluation: name -> (method, params), the
#: factor being the target length over the training length. YaRN's betas count turns within
#: L; the defaults (32, 1) were chosen for L = 4096, where they put the ramp over pairs
#: 21-45 of Llama 2's 64. At L = 32 or 64 even the fastest pair turns only 5 or 10 times.
#: "yarn_short" uses betas (2, 0.05), which put the ramp over a similar share of this
#: model's 8 pairs (pairs 1.4-4.6 at L = 64).
EXTENSIONS: dict[str, tuple[str, dict]] = {
    "none": ("default", {}),
    "linear": ("linear", {}),
    "ntk": ("ntk", {}),
    "dynamic": ("dynamic", {}),
    "yarn": ("yarn", {}),
    "yarn_short": ("yarn", {"beta_fast": 2.0, "beta_slow": 0.05}),
}


@dataclass
class RunConfig:
    """One experiment. Defaults reproduce the book's lab; ``steps`` etc. can be shrunk for tests."""

    task: str = "lookup"
    scheme: str = "rope"
    seed: int = 0
    steps: int = 500
    batch_size: int = 64
    learning_rate: float = 3e-3
    train_len: int = 32
    min_train_len: int = 16  # the lookup task trains on lengths from min_train_len to train_len
    lookup_vocab: int = 32
    lookup_k: int = 3
    test_factors: tuple = (1, 2, 4)
    eval_batches: int = 8
    eval_batch_size: int = 64
    finetune_steps: int = 100
    extensions: tuple = tuple(EXTENSIONS)
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    threads: int = 2
    device: str = "cpu"
    notes: dict = field(default_factory=dict)

    def __post_init__(self):
        check_choice("task", self.task, TASKS)
        check_choice("scheme", self.scheme, SCHEMES)
        for name in self.extensions:
            check_choice("extensions", name, EXTENSIONS)
        check_int("steps", self.steps, minimum=0)
        check_int("train_len", self.train_len, minimum=4)
        self.test_factors = tuple(self.test_factors)
        self.extensions = tuple(self.extensions)

    @classmethod
    def for_task(cls, task: str, **overrides) -> RunConfig:
        """The book's settings for a task: lookup trains at 16-32 tokens; text at 64 characters."""
        base = {"lookup": {}, "text": {"train_len": 64, "min_train_len": 64, "steps": 600, "batch_size": 32}}
        check_choice("task", task, TASKS)
        return cls(task=task, **{**base[task], **overrides})


def versions() -> dict:
    from .. import __version__

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "posenc": __version__,
        "platform": platform.platform(),
    }


def resolve_device(name: str) -> torch.device:
    """``"auto"`` picks CUDA when present, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def build_model(config: RunConfig) -> TinyTransformer:
    vocab = config.lookup_vocab if config.task == "lookup" else char_corpus().vocab
    model_config = ModelConfig(
        vocab=vocab,
        scheme=config.scheme,
        d_model=config.d_model,
        n_layers=config.n_layers,
        n_heads=config.n_heads,
        max_len=config.train_len * max(config.test_factors),
        train_len=config.train_len,
    )
    torch.manual_seed(config.seed)
    return TinyTransformer(model_config)


def _batch(config: RunConfig, split: str, length: int, batch_size: int, generator: torch.Generator):
    if config.task == "lookup":
        return lookup_batch(batch_size, length, config.lookup_vocab, config.lookup_k, generator)
    return char_corpus().batch(split, batch_size, length, generator)


def _loss(model, tokens, targets):
    logits = model(tokens)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)


def train(
    model, config: RunConfig, steps: int | None = None, length: int | None = None, seed_offset: int = 0, progress=None
) -> dict:
    """Train ``model`` in place with AdamW (cosine learning-rate decay); return losses and timing.

    Lookup batches take a random length in ``[min_train_len, train_len]`` unless ``length`` is given.
    ``progress(step, steps, loss)`` is called every few steps when given.
    """
    steps = config.steps if steps is None else steps
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(10_000 * config.seed + 17 + seed_offset)
    optimiser = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(s, steps) / max(steps, 1)))
    )
    model.train()
    losses = []
    start = time.perf_counter()
    for step in range(steps):
        if length is not None:
            current = length
        else:
            current = int(torch.randint(config.min_train_len, config.train_len + 1, (1,), generator=generator))
        tokens, targets = _batch(config, "train", current, config.batch_size, generator)
        loss = _loss(model, tokens.to(device), targets.to(device))
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        losses.append(loss.item())
        if progress is not None and (step % 10 == 0 or step == steps - 1):
            progress(step + 1, steps, losses[-1])
    seconds = time.perf_counter() - start
    return {"losses": losses, "seconds": seconds, "steps_per_second": steps / seconds if seconds else float("nan")}


@torch.no_grad()
def _position_sums(model, config: RunConfig, length: int):
    """Per position: scored targets, correct predictions, and summed cross-entropy (nats)."""
    model.eval()
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(999_983 + config.seed)
    correct = np.zeros(length)
    counted = np.zeros(length)
    nats = np.zeros(length)
    for _ in range(config.eval_batches):
        tokens, targets = _batch(config, "valid", length, config.eval_batch_size, generator)
        logits = model(tokens.to(device)).float().cpu()
        scored = targets != -100
        counted += scored.sum(0).numpy()
        correct += ((logits.argmax(-1) == targets) & scored).sum(0).numpy()
        per_token = F.cross_entropy(logits.transpose(1, 2), targets.clamp(min=0), reduction="none")
        nats += (per_token * scored).sum(0).numpy()
    return counted, correct, nats


def evaluate(model, config: RunConfig, length: int) -> dict:
    """Metrics at ``length`` on held-out data (fixed seed): lookup accuracy or text bits per character,
    over all scored positions and over the positions past the training length separately."""
    counted, correct, nats = _position_sums(model, config, length)
    inside, beyond = slice(0, min(length, config.train_len)), slice(config.train_len, length)
    values = correct if config.task == "lookup" else nats / math.log(2)

    def ratio(where):
        total = counted[where].sum()
        return float(values[where].sum() / total) if total else None

    metric = "accuracy" if config.task == "lookup" else "bits_per_char"
    return {"metric": metric, "all": ratio(slice(None)), "inside": ratio(inside), "beyond": ratio(beyond)}


def per_position(model, config: RunConfig, length: int) -> np.ndarray:
    """The metric at each position (NaN where nothing is scored): where, along a long sequence, it fails."""
    counted, correct, nats = _position_sums(model, config, length)
    values = correct if config.task == "lookup" else nats / math.log(2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counted > 0, values / np.maximum(counted, 1), np.nan)


def extension_settings(name: str, factor: float) -> tuple[str, float, dict]:
    """``(method, factor, params)`` for an extension to ``factor`` = target length / training length.

    The dynamic method uses the transformers rule with factor 1, so its NTK factor is the
    current length over the training length (1 within it), whatever the target."""
    method, params = EXTENSIONS[check_choice("extension", name, EXTENSIONS)]
    if method == "default" or factor <= 1:
        return "default", 1.0, {}
    if method == "dynamic":
        return method, 1.0, dict(params)
    return method, float(factor), dict(params)


def run(config: RunConfig, progress=None) -> dict:
    """Train one model and evaluate it at every test length (and every extension, for RoPE)."""
    torch.set_num_threads(config.threads)
    device = resolve_device(config.device)
    model = build_model(config).to(device)
    training = train(model, config, progress=progress)
    record = {
        "config": asdict(config),
        "versions": versions(),
        "training": {k: training[k] for k in ("seconds", "steps_per_second")}
        | {"final_loss": float(np.mean(training["losses"][-20:])) if training["losses"] else None},
        "evaluations": [],
    }
    extensions = config.extensions if config.scheme == "rope" else ("none",)
    target = max(config.test_factors)
    for extension in extensions:
        if config.scheme == "rope":
            method, scale, params = extension_settings(extension, target)
            model.set_rope_scaling(method, scale, **params)
        for factor in config.test_factors:
            length = config.train_len * factor
            result = evaluate(model, config, length)
            record["evaluations"].append(
                {
                    "extension": extension,
                    "finetuned": False,
                    "target_factor": target,
                    "test_factor": factor,
                    "test_length": length,
                    **result,
                }
            )
        if config.scheme == "rope" and config.finetune_steps > 0 and extension != "none":
            record["evaluations"] += _finetuned(model, config, extension, target)
    if config.scheme == "rope":
        model.set_rope_scaling("default")
    record["model"] = model
    return record


def _finetuned(model, config: RunConfig, extension: str, target: int) -> list[dict]:
    """Fine-tune a copy at the target length with that extension, then evaluate it at every length.

    Each fine-tuning step sees as many tokens as a training step: sequences ``target`` times
    longer, ``target`` times fewer of them."""
    tuned = copy.deepcopy(model)
    method, scale, params = extension_settings(extension, target)
    tuned.set_rope_scaling(method, scale, **params)
    same_tokens = dataclasses.replace(config, batch_size=max(1, config.batch_size // target))
    train(
        tuned,
        same_tokens,
        steps=config.finetune_steps,
        length=config.train_len * target,
        seed_offset=1 + len(extension),
    )
    results = []
    for factor in config.test_factors:
        length = config.train_len * factor
        results.append(
            {
                "extension": extension,
                "finetuned": True,
                "target_factor": target,
                "test_factor": factor,
                "test_length": length,
                **evaluate(tuned, config, length),
            }
        )
    return results


def learned_position_table(config: RunConfig, progress=None) -> dict:
    """Train one model with a learned position table (scheme ``"learned"``); return the table before and after.

    Only rows ``0 .. train_len - 1`` are returned: the rows past the training length are never
    looked up in training, so they keep their random start (and weight decay only shrinks them).
    Returns ``{"initial", "trained"}`` (float32 arrays of shape ``(train_len, d_model)``) plus
    ``"final_loss"`` (mean of the last 20 steps), ``"seconds"`` and ``"config"``.
    ``python -m posenc.lab table`` writes it to a file for chapter 6.
    """
    if config.scheme != "learned":
        raise ValueError(f"learned_position_table needs scheme 'learned', got {config.scheme!r}")
    torch.set_num_threads(config.threads)
    model = build_model(config).to(resolve_device(config.device))

    def rows() -> np.ndarray:
        return model.absolute.embedding.weight.detach()[: config.train_len].float().cpu().numpy().copy()

    initial = rows()
    training = train(model, config, progress=progress)
    return {
        "initial": initial,
        "trained": rows(),
        "final_loss": float(np.mean(training["losses"][-20:])) if training["losses"] else None,
        "seconds": training["seconds"],
        "config": asdict(config),
    }


def strip_model(record: dict) -> dict:
    """The JSON-serialisable part of a run record."""
    return {k: v for k, v in record.items() if k != "model"}
