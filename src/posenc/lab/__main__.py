"""Command line of the lab: ``python -m posenc.lab {run, sweep, summary} ...``.

Examples::

    python -m posenc.lab run --task lookup --scheme rope --seed 0
    python -m posenc.lab sweep --seeds 0 1 2 --finetune-steps 100 --out chapters/data/lab_results.json
    python -m posenc.lab summary chapters/data/lab_results.json
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from .model import SCHEMES
from .results import RESULTS_SCHEMA, load_results, save_checkpoint, summarise
from .train import TASKS, RunConfig, run, strip_model, versions


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


def _run_many(args, tasks, schemes, seeds) -> list[dict]:
    records = []
    for task in tasks:
        for scheme in schemes:
            for seed in seeds:
                config = _config(args, task, scheme, seed)
                record = run(config, progress=None if args.quiet else progress_bar(f"{task}/{scheme}/seed {seed}"))
                if args.checkpoints:
                    save_checkpoint(record["model"], Path(args.checkpoints) / f"{task}-{scheme}-seed{seed}.pt")
                records.append(strip_model(record))
    return records


def _write(records: list[dict], out: Path, argv: list[str], seconds: float) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "schema": RESULTS_SCHEMA,
        "command": "python -m posenc.lab " + " ".join(shlex.quote(a) for a in argv),
        "versions": versions(),
        "seconds": round(seconds, 1),
        "runs": records,
    }
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {len(records)} runs to {out}")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m posenc.lab", description="Train and evaluate tiny transformers.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "sweep"):
        sub = commands.add_parser(name, help="one (task, scheme, seed)" if name == "run" else "every combination")
        if name == "run":
            sub.add_argument("--task", choices=TASKS, required=True)
            sub.add_argument("--scheme", choices=SCHEMES, required=True)
            sub.add_argument("--seed", type=int, default=0)
        else:
            sub.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS))
            sub.add_argument("--schemes", nargs="+", choices=SCHEMES, default=list(SCHEMES))
            sub.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
        sub.add_argument("--steps", type=int, default=None, help="training steps (default: the task's)")
        sub.add_argument("--finetune-steps", type=int, default=0, help="fine-tune RoPE at 4x with each extension")
        sub.add_argument("--device", default="auto", help="auto (CUDA when present), cpu or cuda")
        sub.add_argument("--threads", type=int, default=2, help="torch CPU threads")
        sub.add_argument("--out", type=Path, default=Path("lab_results.json"))
        sub.add_argument("--checkpoints", type=Path, default=None, help="folder for float16 checkpoints")
        sub.add_argument("--quiet", action="store_true")
    summary = commands.add_parser("summary", help="mean and spread over seeds of a results file")
    summary.add_argument("results", type=Path)
    summary.add_argument("--value", choices=("all", "inside", "beyond"), default="all")
    args = parser.parse_args(argv)

    if args.command == "summary":
        for row in summarise(load_results(args.results)["runs"], args.value):
            tuned = "ft" if row["finetuned"] else "0-shot"
            print(
                f"{row['task']:7s} {row['scheme']:10s} {row['extension']:10s} {tuned:6s} x{row['test_factor']} "
                f"{row['metric']:13s} {row['mean']:.3f} [{row['min']:.3f}, {row['max']:.3f}] n={row['n']}"
            )
        return 0
    start = time.perf_counter()
    if args.command == "run":
        records = _run_many(args, [args.task], [args.scheme], [args.seed])
    else:
        records = _run_many(args, args.tasks, args.schemes, args.seeds)
    _write(records, args.out, argv, time.perf_counter() - start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
