"""Command line of the lab: ``python -m posenc.lab {run, sweep, summary, table} ...``.

Examples::

    python -m posenc.lab run --task lookup --scheme rope --seed 0
    python -m posenc.lab table --task text --seed 0 --steps 3000 --out chapters/data/learned_table_text_seed0.npz
    python -m posenc.lab sweep --seeds 0 1 2 3 4 --finetune-steps 100 --jobs 2 --threads 1 \
        --out chapters/data/lab_results.json
    python -m posenc.lab summary chapters/data/lab_results.json

A sweep is resumable: the results file is rewritten (atomically) after every finished run,
and a rerun with the same settings skips the runs the file already holds.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from .._files import atomic_path, write_atomic
from .model import SCHEMES
from .results import RESULTS_SCHEMA, load_results, save_checkpoint, summarise
from .train import TASKS, RunConfig, learned_position_table, resolve_device, run, strip_model, versions

#: Settings that change how fast a run goes, not what it computes (in principle): a finished
#: run is reused whatever they were.
_HOW_NOT_WHAT = ("threads", "device")


def _count(minimum: int):
    """An argparse type: an integer >= ``minimum`` (argparse reports the error with usage, exit 2)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {value}")
        return value

    return parse


def progress_bar(label: str):
    """A one-line progress bar on stderr: label, bar, step, loss, steps per second."""
    start = time.perf_counter()

    def show(step: int, steps: int, loss: float) -> None:
        width = 24
        filled = int(width * step / max(steps, 1))
        rate = step / max(time.perf_counter() - start, 1e-9)
        end = "\n" if step == steps else ""
        bar = "#" * filled + "." * (width - filled)
        sys.stderr.write(f"\r{label:28s} [{bar}] {step:5d}/{steps} loss {loss:7.4f} {rate:6.1f} steps/s{end}")
        sys.stderr.flush()

    return show


def _device(text: str) -> str:
    """An argparse type: a device the lab can use here (argparse reports the error with usage, exit 2)."""
    try:
        resolve_device(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def _config(args, task: str, scheme: str, seed: int) -> RunConfig:
    overrides = {
        "scheme": scheme,
        "seed": seed,
        "threads": args.threads,
        "device": args.device,
        "finetune_steps": args.finetune_steps,
    }
    if args.steps is not None:
        overrides["steps"] = args.steps
    return RunConfig.for_task(task, **overrides)


def _identity(config: dict) -> str:
    """What a run computes: its config without the settings of :data:`_HOW_NOT_WHAT`."""
    return json.dumps({k: v for k, v in config.items() if k not in _HOW_NOT_WHAT}, sort_keys=True)


def _rounded(value):
    """Floats to 6 significant digits (ample for these metrics; keeps the results file small)."""
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


def _one_run(config: RunConfig, checkpoints, show_steps: bool) -> dict:
    label = f"{config.task}/{config.scheme}/seed {config.seed}"
    record = run(config, progress=progress_bar(label) if show_steps else None)
    if checkpoints:
        name = f"{config.task}-{config.scheme}-seed{config.seed}.pt"
        save_checkpoint(record["model"], Path(checkpoints) / name)
    return _rounded(strip_model(record))


class _BadResultsFile(Exception):
    """The file a sweep would resume from is not a results file of this lab."""


def _previous_runs(out: Path) -> tuple[list[dict], float]:
    """The runs and compute seconds of an existing results file (none when there is no file)."""
    if not out.exists():
        return [], 0.0
    try:
        data = load_results(out)
        for record in data["runs"]:
            _identity(record["config"])
        return data["runs"], float(data.get("seconds", 0.0))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise _BadResultsFile(f"{_why(error)}; move it away or choose another --out") from error


def _run_many(args, tasks, schemes, seeds, argv) -> list[dict]:
    """Run every (task, scheme, seed) the file lacks, ``args.jobs`` at a time; write after each."""
    configs = [_config(args, task, scheme, seed) for task in tasks for scheme in schemes for seed in seeds]
    wanted = {_identity(json.loads(json.dumps(c.__dict__))): c for c in configs}
    previous, seconds_before = _previous_runs(args.out)
    kept = [r for r in previous if _identity(r["config"]) in wanted]
    done = {_identity(r["config"]) for r in kept}
    todo = [c for key, c in wanted.items() if key not in done]
    records = list(kept)
    total, start = len(configs), time.perf_counter()
    if kept:
        print(f"{args.out}: {len(kept)} of the {total} runs are done already; running the other {len(todo)}")

    def finished(record: dict) -> None:
        records.append(record)
        elapsed = time.perf_counter() - start
        count = len(records) - len(kept)
        eta = elapsed / count * (len(todo) - count)
        c = record["config"]
        _write(records, args.out, argv, seconds_before + elapsed)
        if not args.quiet:
            sys.stderr.write(
                f"[{len(records):3d}/{total}] {c['task']}/{c['scheme']}/seed {c['seed']} done "
                f"({record['training']['seconds']:.0f} s training); elapsed {elapsed / 60:.1f} min, "
                f"about {eta / 60:.1f} min to go\n"
            )

    show_steps = args.jobs == 1 and not args.quiet
    if args.jobs == 1:
        for config in todo:
            finished(_one_run(config, args.checkpoints, show_steps))
    elif todo:
        context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        with concurrent.futures.ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
            futures = [pool.submit(_one_run, config, args.checkpoints, False) for config in todo]
            for future in concurrent.futures.as_completed(futures):
                finished(future.result())
    if not todo:
        _write(records, args.out, argv, seconds_before)
    return records


def _order(record: dict) -> tuple:
    c = record["config"]
    return (c["task"], c["scheme"], c["seed"])


def _write(records: list[dict], out: Path, argv: list[str], seconds: float) -> None:
    data = {
        "schema": RESULTS_SCHEMA,
        "command": "python -m posenc.lab " + " ".join(shlex.quote(a) for a in argv),
        "versions": versions(),
        "seconds": round(seconds, 1),
        "runs": sorted(records, key=_order),
    }
    write_atomic(out, json.dumps(data, separators=(",", ":")) + "\n")


def _write_table(args, argv: list[str]) -> None:
    """Train one learned-table model and save its position table before and after training (float16)."""
    overrides = {"scheme": "learned", "seed": args.seed, "threads": args.threads, "device": args.device}
    if args.steps is not None:
        overrides["steps"] = args.steps
    config = RunConfig.for_task(args.task, **overrides)
    progress = None if args.quiet else progress_bar(f"{args.task}/learned/seed {args.seed}")
    result = learned_position_table(config, progress=progress)
    about = {
        "command": "python -m posenc.lab " + " ".join(shlex.quote(a) for a in argv),
        "config": result["config"],
        "final_loss": result["final_loss"],
        "seconds": round(result["seconds"], 1),
        "versions": versions(),
    }
    with atomic_path(args.out) as temporary, open(temporary, "wb") as handle:  # a handle: numpy keeps the name
        np.savez(
            handle,
            initial=result["initial"].astype(np.float16),
            trained=result["trained"].astype(np.float16),
            about=np.array(json.dumps(about)),
        )
    print(f"wrote the {config.train_len} x {config.d_model} position table to {args.out}")


def _why(error: Exception) -> str:
    """One line that says what is wrong with an input file."""
    if isinstance(error, FileNotFoundError):
        return "no such file"
    if isinstance(error, IsADirectoryError):
        return "is a folder, not a results file"
    if isinstance(error, PermissionError):
        return "cannot be read (permission denied)"
    if isinstance(error, json.JSONDecodeError):
        return f"is not valid JSON ({error.msg}, line {error.lineno})"
    if isinstance(error, KeyError):
        return f"is not a results file of this lab: a run lacks the field {error}"
    return f"is not a results file of this lab: {error}"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m posenc.lab", description="Train and evaluate tiny transformers.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "sweep"):
        sub = commands.add_parser(name, help="one (task, scheme, seed)" if name == "run" else "every combination")
        if name == "run":
            sub.add_argument("--task", choices=TASKS, required=True)
            sub.add_argument("--scheme", choices=SCHEMES, required=True)
            sub.add_argument("--seed", type=_count(0), default=0)
        else:
            sub.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS))
            sub.add_argument("--schemes", nargs="+", choices=SCHEMES, default=list(SCHEMES))
            sub.add_argument("--seeds", nargs="+", type=_count(0), default=[0, 1, 2, 3, 4])
        sub.add_argument("--steps", type=_count(1), default=None, help="training steps (default: the task's)")
        sub.add_argument(
            "--finetune-steps",
            type=_count(0),
            default=0,
            help="fine-tuning steps of the RoPE model at the target length (4x; 8x for passkey), per extension",
        )
        sub.add_argument("--device", type=_device, default="auto", help="auto (CUDA when present), cpu or cuda")
        sub.add_argument("--threads", type=_count(1), default=2, help="torch CPU threads (per job)")
        sub.add_argument("--jobs", type=_count(1), default=1, help="runs at a time, each in its own process")
        sub.add_argument("--out", type=Path, default=Path("lab_results.json"))
        sub.add_argument("--checkpoints", type=Path, default=None, help="folder for float16 checkpoints")
        sub.add_argument("--quiet", action="store_true")
    table = commands.add_parser("table", help="train one learned-table model and save its position table")
    table.add_argument("--task", choices=TASKS, default="text")
    table.add_argument("--seed", type=_count(0), default=0)
    table.add_argument("--steps", type=_count(1), default=None, help="training steps (default: the task's)")
    table.add_argument("--device", type=_device, default="cpu", help="auto (CUDA when present), cpu or cuda")
    table.add_argument("--threads", type=_count(1), default=2, help="torch CPU threads")
    table.add_argument("--out", type=Path, default=Path("learned_table.npz"), help=".npz: initial, trained, about")
    table.add_argument("--quiet", action="store_true")
    summary = commands.add_parser("summary", help="mean and spread over seeds of a results file")
    summary.add_argument("results", type=Path)
    summary.add_argument("--value", choices=("all", "inside", "beyond"), default="all")
    args = parser.parse_args(argv)

    if args.command == "summary":
        try:
            rows = summarise(load_results(args.results)["runs"], args.value)
        except (OSError, ValueError, KeyError, TypeError) as error:
            print(f"python -m posenc.lab summary: {args.results}: {_why(error)}", file=sys.stderr)
            return 1
        for row in rows:
            tuned = "ft" if row["finetuned"] else "0-shot"
            print(
                f"{row['task']:7s} {row['scheme']:10s} {row['extension']:10s} {tuned:6s} x{row['test_factor']} "
                f"{row['metric']:13s} {row['mean']:.3f} [{row['min']:.3f}, {row['max']:.3f}] n={row['n']}"
            )
        return 0
    if args.command == "table":
        _write_table(args, argv)
        return 0
    try:
        if args.command == "run":
            records = _run_many(args, [args.task], [args.scheme], [args.seed], argv)
        else:
            records = _run_many(args, args.tasks, args.schemes, args.seeds, argv)
    except _BadResultsFile as error:
        print(f"python -m posenc.lab {args.command}: {args.out}: {error}", file=sys.stderr)
        return 1
    print(f"{args.out}: {len(records)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
