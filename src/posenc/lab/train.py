"""Train, extend and evaluate the tiny transformers; everything the lab chapter and the command line run.

A *run* trains one model (task, scheme, seed) at the training length ``L`` and evaluates it at
every test length (``L``, ``2L``, ``4L``; passkey also ``8L``). A RoPE model is also evaluated
with each context-extension method, configured once for the largest test length (the
target) and then run at every test length, as a model extended for a longer context is used
in practice: zero-shot, and optionally after a short fine-tune at the target length.
Results are plain dicts, ready for JSON.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import platform
import re
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from .._validation import check_choice, check_int
from ..scaling import scaled_inv_freq, yarn_matched_betas
from .data import char_corpus, corpus_hash, lookup_batch, passkey_batch, passkey_vocab
from .model import SCHEMES, ModelConfig, TinyTransformer
from .provenance import code_version

__all__ = [
    "TASKS",
    "EXTENSIONS",
    "RunConfig",
    "build_model",
    "train",
    "evaluate",
    "per_position",
    "extension_settings",
    "search_longrope_factors",
    "PASSKEY_DEPTHS",
    "learned_position_table",
    "run",
    "strip_model",
    "versions",
    "provenance",
    "code_version",
]

TASKS = ("lookup", "text", "passkey")

#: Where the passkey task hides the key at evaluation: fractions of the sequence (0: first token).
PASSKEY_DEPTHS = (0.0, 1 / 7, 2 / 7, 3 / 7, 4 / 7, 5 / 7, 6 / 7, 1.0)

#: Context-extension settings for RoPE models at evaluation: name -> scaling method. Each is
#: configured for the target length (the factor s = target / training length) as it is
#: deployed: "dynamic" with factor s, as a config for an s-times extension sets it
#: (transformers' rule: the base grows with the current length past L); "ntk_at_dynamic",
#: the control for it: static NTK with the factor dynamic NTK reaches at the target length
#: (s^2 - s + 1: 13 for s = 4, 57 for s = 8), so the two have the same speeds there; "yarn" with the
#: paper's betas (32, 1), as configs copied from Llama models carry them; "yarn_matched" with
#: betas derived from this model's own rotation counts (:func:`posenc.yarn_matched_betas`:
#: the same fraction of pairs kept, blended and interpolated as (32, 1) gives Llama 2);
#: "longrope" with per-pair factors searched for this model (:func:`search_longrope_factors`).
EXTENSIONS: dict[str, str] = {
    "none": "default",
    "linear": "linear",
    "ntk": "ntk",
    "ntk_at_dynamic": "ntk",
    "dynamic": "dynamic",
    "yarn": "yarn",
    "yarn_matched": "yarn",
    "longrope": "longrope",
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
    passkey_keys: int = 16
    test_factors: tuple = (1, 2, 4)
    eval_batches: int = 8
    eval_batch_size: int = 64
    finetune_steps: int = 100
    finetune_learning_rate: float = 3e-4  # a fresh AdamW at a tenth of the training peak
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
        check_int("finetune_steps", self.finetune_steps, minimum=0)
        for name in ("learning_rate", "finetune_learning_rate"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
                raise ValueError(f"{name} must be a number between 0 and 1, got {value!r}")
        check_int("train_len", self.train_len, minimum=4)
        self.test_factors = tuple(self.test_factors)
        self.extensions = tuple(self.extensions)

    @classmethod
    def for_task(cls, task: str, **overrides) -> RunConfig:
        """The book's settings for a task: lookup and passkey train at 16-32 tokens (passkey tested
        to 8L, 512 sequences per depth); text at 64 characters."""
        base = {
            "lookup": {},
            "text": {"train_len": 64, "min_train_len": 64, "steps": 600, "batch_size": 32},
            "passkey": {"test_factors": (1, 2, 4, 8), "eval_batches": 8},
        }
        check_choice("task", task, TASKS)
        return cls(task=task, **{**base[task], **overrides})


def versions() -> dict:
    """The software a run used: Python, torch, NumPy, posenc's version and the platform."""
    from .. import __version__

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "posenc": __version__,
        "platform": platform.platform(),
    }


def provenance(config: RunConfig) -> dict:
    """What produced a run's numbers besides its config: the code (:func:`code_version`: a hash of the
    sources the run executes, and the git commit) and, for the text task, the corpus's hash
    (:func:`posenc.lab.data.corpus_hash`: the standard library's docstrings differ between Pythons)."""
    code = code_version()
    return {
        "source_hash": code["source_hash"],
        "git_commit": code["git_commit"],
        "git_dirty": code["git_dirty"],
        "corpus_hash": corpus_hash() if config.task == "text" else None,
    }


def resolve_device(name: str) -> torch.device:
    """``"auto"`` picks CUDA when present, else the CPU; ``"cpu"``, ``"cuda"`` or ``"cuda:N"`` as given.

    Raises ``ValueError`` for another name, or for CUDA when torch sees no CUDA device."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not isinstance(name, str) or not re.fullmatch(r"cpu|cuda(:\d+)?", name):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {name!r}")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {name!r}: this torch sees no CUDA device; use 'auto' or 'cpu'")
    return torch.device(name)


def build_model(config: RunConfig) -> TinyTransformer:
    vocab = {
        "lookup": lambda: config.lookup_vocab,
        "passkey": lambda: passkey_vocab(config.passkey_keys),
        "text": lambda: char_corpus().vocab,
    }[config.task]()
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


def _batch(config: RunConfig, split: str, length: int, batch_size: int, generator: torch.Generator, depth=None):
    if config.task == "lookup":
        return lookup_batch(batch_size, length, config.lookup_vocab, config.lookup_k, generator)
    if config.task == "passkey":
        return passkey_batch(batch_size, length, config.passkey_keys, generator, depth)[:2]
    return char_corpus().batch(split, batch_size, length, generator)


def _loss(model, tokens, targets):
    logits = model(tokens)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)


def train(
    model,
    config: RunConfig,
    steps: int | None = None,
    length: int | None = None,
    seed_offset: int = 0,
    progress=None,
    learning_rate: float | None = None,
) -> dict:
    """Train ``model`` in place with a fresh AdamW (cosine decay from ``learning_rate`` to a tenth of
    it; default ``config.learning_rate``); return losses and timing.

    Lookup batches take a random length in ``[min_train_len, train_len]`` unless ``length`` is given.
    The batches depend only on the seed and ``seed_offset``: two calls with the same pair see the
    same data. ``progress(step, steps, loss)`` is called every few steps when given.
    """
    steps = config.steps if steps is None else steps
    learning_rate = config.learning_rate if learning_rate is None else learning_rate
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(10_000 * config.seed + 17 + seed_offset)
    optimiser = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)
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


@torch.no_grad()
def _passkey_by_depth(model, config: RunConfig, length: int) -> list[float]:
    """Passkey accuracy at each of :data:`PASSKEY_DEPTHS` (fixed seed, the same keys for every model)."""
    model.eval()
    device = next(model.parameters()).device
    accuracy = []
    for n, depth in enumerate(PASSKEY_DEPTHS):
        generator = torch.Generator().manual_seed(999_983 + 1000 * config.seed + n)
        correct = counted = 0
        for _ in range(config.eval_batches):
            tokens, targets = _batch(config, "valid", length, config.eval_batch_size, generator, depth)
            logits = model(tokens.to(device))[:, -1].float().cpu()
            correct += int((logits.argmax(-1) == targets[:, -1]).sum())
            counted += targets.shape[0]
        accuracy.append(correct / counted)
    return accuracy


def evaluate(model, config: RunConfig, length: int) -> dict:
    """Metrics at ``length`` on held-out data (fixed seed): lookup accuracy or text bits per character,
    over all scored positions ("all"), the positions within the training length ("inside") and
    those past it ("beyond", None at ``length <= train_len``).

    Passkey: the accuracy at each depth of :data:`PASSKEY_DEPTHS` ("by_depth", over
    ``eval_batches * eval_batch_size`` sequences each, "sequences") and their mean ("all"). Its
    one scored position is the last, so the whole result is "inside" at the training length and
    "beyond" past it."""
    if config.task == "passkey":
        by_depth = _passkey_by_depth(model, config, length)
        accuracy = float(np.mean(by_depth))
        past = length > config.train_len
        return {
            "metric": "accuracy",
            "all": accuracy,
            "inside": None if past else accuracy,
            "beyond": accuracy if past else None,
            "by_depth": by_depth,
            "sequences": config.eval_batches * config.eval_batch_size,
        }
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
    if config.task == "passkey":
        raise ValueError("per_position needs task 'lookup' or 'text'; passkey scores one position (see evaluate)")
    counted, correct, nats = _position_sums(model, config, length)
    values = correct if config.task == "lookup" else nats / math.log(2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counted > 0, values / np.maximum(counted, 1), np.nan)


def extension_settings(name: str, factor: float, config: RunConfig | None = None, longrope_factors=None):
    """``(method, factor, params)`` for extension ``name`` to ``factor`` = target length / training length.

    "yarn_matched" needs ``config`` (its betas come from the training length and the base);
    "longrope" needs its per-pair ``longrope_factors`` (see :func:`search_longrope_factors`);
    "ntk_at_dynamic" is static NTK with the factor dynamic NTK reaches at the target length,
    ``posenc.dynamic_ntk_factor(s, s L, L) = s^2 - s + 1``.
    A factor of 1 or less means no extension: plain RoPE."""
    method = EXTENSIONS[check_choice("extension", name, EXTENSIONS)]
    if method == "default" or factor <= 1:
        return "default", 1.0, {}
    if name == "ntk_at_dynamic":  # dynamic_ntk_factor(s, s L, L) = s * s L / L - (s - 1), whatever L
        return method, float(factor * factor - (factor - 1)), {}
    if name == "yarn_matched":
        if config is None:
            raise ValueError("extension 'yarn_matched' needs the run's config (its betas depend on train_len)")
        beta_fast, beta_slow = yarn_matched_betas(ModelConfig.rope_base, config.train_len)
        return method, float(factor), {"beta_fast": beta_fast, "beta_slow": beta_slow}
    if name == "longrope":
        if longrope_factors is None:
            raise ValueError("extension 'longrope' needs longrope_factors (search_longrope_factors finds them)")
        return method, float(factor), {"long_factor": [float(f) for f in longrope_factors]}
    return method, float(factor), {}


@torch.no_grad()
def _search_loss(model, config: RunConfig, length: int, batches: int = 2) -> float:
    """Mean cross-entropy at ``length`` on search data: training text, or a generator no evaluation uses."""
    model.eval()
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(555_557 + config.seed)
    total = 0.0
    for _ in range(batches):
        tokens, targets = _batch(config, "train", length, config.eval_batch_size, generator)
        total += float(_loss(model, tokens.to(device), targets.to(device)))
    return total / batches


def search_longrope_factors(model, config: RunConfig, factor: float, rounds: int = 3, population: int = 8) -> dict:
    """A LongRoPE-style search for per-pair rescale factors of a trained RoPE model, in miniature.

    Ding et al. 2024 (LongRoPE) search each pair's factor ``lambda_i`` with an evolutionary
    search scored by perplexity at the target length; the authors' code
    (``microsoft/LongRoPE``, ``evolution/algorithms/dim_mono.py``) mutates and crosses over
    candidates and keeps only those whose factors are non-decreasing from fast to slow pairs
    (``np.all(np.diff(factors) >= 0)``). Here: starting points from position interpolation,
    NTK-aware scaling and YaRN with both sets of betas, as per-pair factors
    ``theta_i / theta'_i``; ``rounds`` rounds of mutation (each factor times ``exp(0.3 z)``,
    then made non-decreasing and kept in ``[1, 2 s]``), keeping the best ``population / 2``;
    each candidate scored by the loss at the target length on data no evaluation uses
    (training text; fresh random sequences). The paper's other search dimension, a number of
    first tokens left unscaled, is left out.

    Returns ``{"long_factor": list, "loss": float, "start_losses": {name: loss}, "candidates": int}``
    (the number of factor sets scored).
    """
    if not isinstance(factor, int | float) or not factor > 1:
        raise ValueError(f"factor must be a number > 1 (target length / training length), got {factor!r}")
    check_int("rounds", rounds, minimum=0)
    check_int("population", population, minimum=2)
    head_dim = config.d_model // config.n_heads
    rotary_dim = model.rotary.rotary_dim if model.rotary is not None else head_dim
    theta = scaled_inv_freq("default", rotary_dim, ModelConfig.rope_base)[0]
    target = round(config.train_len * factor)
    generator = np.random.default_rng(7919 + config.seed)

    scored_count = 0

    def score(long_factor) -> float:
        nonlocal scored_count
        scored_count += 1
        method, scale, params = extension_settings("longrope", factor, config, long_factor)
        model.set_rope_scaling(method, scale, **params)
        return _search_loss(model, config, target)

    starts = {}
    for name in ("linear", "ntk", "yarn", "yarn_matched"):
        method, scale, params = extension_settings(name, factor, config)
        scaled = scaled_inv_freq(method, rotary_dim, ModelConfig.rope_base, scale, config.train_len, **params)[0]
        starts[name] = np.maximum.accumulate(np.clip(theta / scaled, 1.0, 2 * factor))
    scored = [(score(f), name, f) for name, f in starts.items()]
    start_losses = {name: loss for loss, name, _ in scored}
    for _ in range(rounds):
        scored.sort(key=lambda item: item[0])
        parents = scored[: max(2, population // 2)]
        children = []
        for n in range(population - len(parents)):
            parent = parents[n % len(parents)][2]
            child = np.clip(parent * np.exp(0.3 * generator.standard_normal(parent.size)), 1.0, 2 * factor)
            child = np.maximum.accumulate(child)
            children.append((score(child), "mutant", child))
        scored = parents + children
    scored.sort(key=lambda item: item[0])
    model.set_rope_scaling("default")
    best_loss, _, best = scored[0]
    return {
        "long_factor": [round(float(f), 4) for f in best],
        "loss": best_loss,
        "start_losses": start_losses,
        "candidates": scored_count,
    }


def run(config: RunConfig, progress=None) -> dict:
    """Train one model and evaluate it at every test length (and every extension, for RoPE)."""
    torch.set_num_threads(config.threads)
    device = resolve_device(config.device)
    model = build_model(config).to(device)
    training = train(model, config, progress=progress)
    record = {
        "config": asdict(config),
        "versions": versions(),
        "provenance": provenance(config),
        "training": {k: training[k] for k in ("seconds", "steps_per_second")}
        | {"final_loss": float(np.mean(training["losses"][-20:])) if training["losses"] else None},
        "evaluations": [],
    }
    extensions = config.extensions if config.scheme == "rope" else ("none",)
    target = max(config.test_factors)
    longrope = None
    if "longrope" in extensions and config.scheme == "rope":
        longrope = search_longrope_factors(model, config, target)
        record["longrope"] = longrope
    for extension in extensions:
        settings = extension_settings(extension, target, config, longrope and longrope["long_factor"])
        if config.scheme == "rope":
            model.set_rope_scaling(*settings[:2], **settings[2])
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
        if config.scheme == "rope" and config.finetune_steps > 0:
            record["evaluations"] += _finetuned(model, config, extension, target, settings)
    if config.scheme == "rope":
        model.set_rope_scaling("default")
    record["model"] = model
    return record


def _finetuned(model, config: RunConfig, extension: str, target: int, settings: tuple) -> list[dict]:
    """Fine-tune a copy at the target length with that extension (``"none"``: plain RoPE, the
    control), then evaluate it at every length.

    Every extension is fine-tuned on the same batches (one ``seed_offset``), with a fresh AdamW
    at ``config.finetune_learning_rate`` (cosine decay to a tenth of it). Each step sees as many
    tokens as a training step: sequences ``target`` times longer, ``target`` times fewer of them."""
    tuned = copy.deepcopy(model)
    method, scale, params = settings
    tuned.set_rope_scaling(method, scale, **params)
    same_tokens = dataclasses.replace(config, batch_size=max(1, config.batch_size // target))
    train(
        tuned,
        same_tokens,
        steps=config.finetune_steps,
        length=config.train_len * target,
        seed_offset=1,
        learning_rate=config.finetune_learning_rate,
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
