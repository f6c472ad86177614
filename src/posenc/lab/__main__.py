"""Command line of the lab: ``python -m posenc.lab {run, sweep, summary, table} ...``.

Examples::

    python -m posenc.lab run --task lookup --scheme rope --seed 0
    python -m posenc.lab table --task text --seed 0 --steps 3000 --out chapters/data/learned_table_text_seed0.npz
    python -m posenc.lab sweep --seeds 0 1 2 --jobs 2 --threads 1 --out my_results.json
    python -m posenc.lab merge part1.json part2.json --out lab_results.json
    python -m posenc.lab merge sweep.json --tasks lookup --out lookup.json
    python -m posenc.lab summary chapters/data/lab_results.json

Every option left out takes the experiment's value (:class:`posenc.lab.RunConfig`). ``run`` and
``sweep`` merge their runs into the results file: a run is added under its identity (its
settings, the code that computed it and the kind of device: :func:`posenc.lab.run_identity`);
after every finished run the file is re-read and rewritten atomically under a lock, so two
commands writing one file keep each other's runs; runs already in the file are skipped (so a
stopped sweep resumes, with any command that asks for them) unless ``--rerun`` asks to replace
them, and only a run of the same identity is ever replaced. A file holds one experiment: runs
with other settings, computed by other code or on another kind of device are refused unless
``--allow-mixed`` is given, and then kept beside the others. A file of an older protocol is
read only. No command overwrites a results file or position table it was not asked to add to
(``table`` refuses an existing ``--out`` without ``--replace``).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import multiprocessing
import os
import shlex
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path

import numpy as np

from .._files import locked
from .model import SCHEMES
from .results import (
    RESULTS_SCHEMA,
    load_results,
    merge_runs,
    mixing_problems,
    older_protocol,
    run_identity,
    save_checkpoint,
    summarise,
    write_file,
)
from .train import (
    EXTENSIONS,
    TASKS,
    RunConfig,
    learned_position_table,
    provenance,
    resolve_device,
    run,
    strip_model,
    versions,
)

_DEFAULTS = RunConfig()


#: The largest seed: torch's generators take a signed 64-bit seed, and the lab adds offsets to it.
MAX_SEED = 2**31 - 1


def _count(minimum: int, maximum: int | None = None):
    """An argparse type: an integer >= ``minimum`` (and <= ``maximum``); argparse reports the error with
    usage, exit 2."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum or (maximum is not None and value > maximum):
            allowed = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"
            raise argparse.ArgumentTypeError(f"must be an integer {allowed}, got {value}")
        return value

    return parse


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


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


def _concrete(device: str) -> str:
    """``"auto"`` as the device it picks here (``"cuda"`` or ``"cpu"``), so a run records where it ran."""
    return resolve_device(device).type if device == "auto" else device


def _config(args, task: str, scheme: str, seed: int) -> RunConfig:
    """The experiment's config for (task, scheme, seed), changed only where an option was given."""
    overrides = {"scheme": scheme, "seed": seed, "threads": args.threads, "device": _concrete(args.device)}
    for option in ("steps", "finetune_steps", "extensions"):
        if getattr(args, option) is not None:
            overrides[option] = getattr(args, option)
    return RunConfig.for_task(task, **overrides)


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
    stripped = _rounded(strip_model(record))
    if checkpoints:  # named by the run's identity: a run of other settings, code or device never overwrites it
        tag = hashlib.sha256(run_identity(stripped).encode()).hexdigest()[:10]
        name = f"{config.task}-{config.scheme}-seed{config.seed}-{tag}.pt"
        save_checkpoint(record["model"], Path(checkpoints) / name)
    return stripped


class _BadResultsFile(Exception):
    """The file a run or sweep would add to is not a results file of this lab, or holds another experiment."""


def _previous(out: Path, role: str = "--out") -> dict:
    """The existing results file (an empty one when there is no file); an older protocol's file is refused."""
    if not out.exists():
        return {"runs": [], "commands": [], "seconds": 0.0}
    try:
        data = load_results(out)
        identities = [run_identity(record) for record in data["runs"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise _BadResultsFile(f"{_why(error, out)}; move it away or choose another {role}") from error
    if len(set(identities)) < len(identities):
        raise _BadResultsFile(
            f"holds {len(identities) - len(set(identities))} runs whose identity (settings, code, device) "
            "another run of the file has too; no command picks one for you: keep one by hand, or choose another " + role
        )
    schema = older_protocol(data)
    if schema is not None:
        raise _BadResultsFile(
            f"holds the results of an older protocol (schema {schema}), whose runs carry no code version: "
            f"it is read only (summary and the book read it); choose another {role}"
        )
    return data


def _writable(out: Path, role: str = "--out") -> None:
    """Refuse, before any training, an ``out`` that is a folder or lies where no file can be written."""
    if out.is_dir():
        raise _BadResultsFile(f"is a folder, not a file; choose another {role}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".probe", dir=out.parent)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise _BadResultsFile(f"cannot be written there ({error.strerror or error}); choose another {role}") from None


def _planned(config: RunConfig) -> dict:
    """What a run of ``config`` will record about itself before it runs: config, versions, provenance."""
    return {"config": json.loads(json.dumps(config.__dict__)), "versions": versions(), "provenance": provenance(config)}


def _same_settings(record: dict) -> str:
    """A run's settings without the code and device that :func:`run_identity` adds: runs that share them
    but differ in identity are the same experiment computed by other code or on another device."""
    config = {k: v for k, v in record["config"].items() if k not in ("threads", "device")}
    return json.dumps(config, sort_keys=True)


def _new_problems(before: list[dict], after: list[dict]) -> list[str]:
    """The mixing problems of ``after`` that ``before`` did not have."""
    known = set(mixing_problems(before)) if before else set()
    return [p for p in mixing_problems(after) if p not in known]


class _Writer:
    """Adds finished runs to a results file that other commands may write at the same time.

    Each addition re-reads the file under its lock (:func:`posenc._files.locked`), so runs
    another command wrote meanwhile are kept. A run whose identity the file already holds is
    kept as the file has it, unless ``--rerun`` asked to replace the one that was there when
    this command started. A run that cannot go into ``out`` (it would mix experiments with what
    others wrote meanwhile, or the file became unreadable or unwritable) goes to a file of its
    own beside ``out`` (or in the temporary folder), named on stderr; it is never dropped."""

    def __init__(self, out: Path, command: str, at_start: set, rerun: bool, allow_mixed: bool):
        self.out, self.at_start, self.rerun, self.allow_mixed = out, at_start, rerun, allow_mixed
        self.target = Path(os.path.realpath(out))  # a link is followed, not replaced
        self.entry = {"command": command, "runs": 0, "seconds": 0.0, "id": uuid.uuid4().hex[:12]}
        self.start = time.perf_counter()
        self.counted = 0.0  # seconds of this command already added to the file's total
        self.aside: Path | None = None
        self.aside_runs: list[dict] = []

    def _commands(self, commands: list[dict]) -> list[dict]:
        mine = [n for n, c in enumerate(commands) if c.get("id") == self.entry["id"]]
        if mine:
            return [*commands[: mine[0]], dict(self.entry), *commands[mine[0] + 1 :]]
        return [*commands, dict(self.entry)]

    def add(self, record: dict | None) -> str:
        """Merge ``record`` (None: only record this command) into the file; say what happened to it."""
        try:
            return self._add(record)
        except (_BadResultsFile, OSError, TimeoutError) as error:
            if record is None:
                raise
            return self._set_aside(record, [str(error)])

    def _add(self, record: dict | None) -> str:
        elapsed = time.perf_counter() - self.start
        self.entry["seconds"] = round(elapsed, 1)
        with locked(self.target):
            current = _previous(self.target)
            runs, note = current["runs"], ""
            if record is not None:
                key = run_identity(record)
                if any(run_identity(r) == key for r in runs) and not (self.rerun and key in self.at_start):
                    note = "; the file had this run already (another command wrote it meanwhile): kept that one"
                else:
                    merged, replaced = merge_runs(runs, [record])
                    problems = _new_problems(runs, merged)
                    if problems and not self.allow_mixed:
                        return self._set_aside(record, problems)
                    runs = merged
                    self.entry["runs"] += 1
                    note = "; replaced the run of the same identity" if replaced else ""
            seconds = float(current["seconds"]) + elapsed - self.counted
            _write(runs, self.target, self._commands(current["commands"]), seconds)
            self.counted = elapsed
        return note

    def _set_aside(self, record: dict, problems: list[str]) -> str:
        self.aside_runs.append(record)
        runs = sorted(self.aside_runs, key=lambda r: (r["config"]["scheme"], r["config"]["seed"]))
        entry = {**self.entry, "runs": len(runs), "seconds": round(time.perf_counter() - self.start, 1)}
        name = f"{self.out.stem}.aside-{self.entry['id']}{self.out.suffix or '.json'}"
        for folder in [self.aside.parent] if self.aside else [self.target.parent, Path(tempfile.gettempdir())]:
            try:
                _write(runs, folder / name, [entry], entry["seconds"])
                self.aside = folder / name
                break
            except OSError:
                continue
        else:  # no folder takes it: the run's numbers go to stderr, whole
            sys.stderr.write(json.dumps(record) + "\n")
            return f"; NOT added to {self.out} ({'; '.join(problems)}), and no file could hold it: printed above"
        return f"; NOT added to {self.out}: {'; '.join(problems)}; kept in {self.aside}"


def _run_many(args, tasks, schemes, seeds, argv) -> list[dict]:
    """Run every (task, scheme, seed) asked for, ``args.jobs`` at a time, merging each into the file."""
    configs = [_config(args, task, scheme, seed) for task in tasks for scheme in schemes for seed in seeds]
    planned = {}
    for config in configs:
        record = _planned(config)
        planned[run_identity(record)] = (config, record)
    data = _previous(args.out)
    _writable(args.out)
    previous = data["runs"]
    problems = mixing_problems(previous + [record for _, record in planned.values()])
    if problems and not args.allow_mixed:
        raise _BadResultsFile(
            "these runs and the file's would mix experiments, which one results file does not hold:\n  "
            + "\n  ".join(problems)
            + "\nwrite them to another --out, or pass --allow-mixed to keep both in this file"
        )
    at_start = {run_identity(r) for r in previous}
    again = [c for key, (c, _) in planned.items() if key in at_start]
    todo = [c for key, (c, _) in planned.items() if key not in at_start or args.rerun]
    wanted_settings = {_same_settings(record) for _, record in planned.values()}
    beside = [r for r in previous if _same_settings(r) in wanted_settings and run_identity(r) not in planned]
    if again and args.rerun:
        which = "the run" if len(again) == 1 else f"the {len(again)} runs"
        print(f"{args.out}: running again, and replacing, {which} of these the file holds")
    elif again and len(planned) == 1:
        print(f"{args.out}: the run asked for is in the file already (kept; --rerun replaces it)")
    elif again:
        print(
            f"{args.out}: {len(again)} of the {len(planned)} runs are in the file already (kept; --rerun "
            f"replaces them); running the other {len(todo)}"
        )
    if beside:
        print(
            f"{args.out}: the file holds {_plural(len(beside), 'run')} of these settings computed by other code or "
            "on another device; they are kept, and the new runs are added beside them"
        )
    command = "python -m posenc.lab " + " ".join(shlex.quote(a) for a in argv)
    writer = _Writer(args.out, command, at_start, args.rerun, args.allow_mixed)

    done_count = 0

    def finished(record: dict) -> None:
        nonlocal done_count
        done_count += 1
        note = writer.add(record)
        if not args.quiet:
            elapsed = time.perf_counter() - writer.start
            count = done_count
            eta = elapsed / count * (len(todo) - count)
            c = record["config"]
            sys.stderr.write(
                f"[{count:3d}/{len(todo)}] {c['task']}/{c['scheme']}/seed {c['seed']} done "
                f"({record['training']['seconds']:.0f} s training){note}"
                f"; elapsed {elapsed / 60:.1f} min, about {eta / 60:.1f} min to go\n"
            )
        elif "NOT added" in note:
            c = record["config"]
            sys.stderr.write(f"{c['task']}/{c['scheme']}/seed {c['seed']}{note}\n")

    show_steps = args.jobs == 1 and not args.quiet
    if args.jobs == 1:
        for config in todo:
            finished(_one_run(config, args.checkpoints, show_steps))
    elif todo:
        context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        pool = concurrent.futures.ProcessPoolExecutor(args.jobs, mp_context=context)
        try:
            futures = [pool.submit(_one_run, config, args.checkpoints, False) for config in todo]
            for future in concurrent.futures.as_completed(futures):
                finished(future.result())
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # an interruption stops the queued runs too
            raise
        pool.shutdown()
    if not todo and not args.out.exists():
        writer.add(None)
    if writer.aside_runs:
        n = len(writer.aside_runs)
        raise _BadResultsFile(
            f"{_plural(n, 'run')} could not join this file (another command added runs they would mix "
            f"with, or the file became unreadable or unwritable) and {'was' if n == 1 else 'were'} kept in "
            f"{writer.aside or 'stderr'}"
        )
    return _previous(args.out)["runs"]


def _merge(args, argv: list[str]) -> int:
    """Merge the runs of ``args.parts`` into ``args.out`` (whose own runs come first); lose none.

    A part's run replaces one of ``out`` only when both have one identity (the same settings,
    code and kind of device: :func:`posenc.lab.run_identity`); runs of other code or another
    device are kept beside each other, which mixes experiments: refused, writing nothing,
    unless ``--allow-mixed``. The commands of the parts that bring runs are kept (each once,
    with its seconds), then the merge command itself (no seconds of its own): with ``--tasks``
    it says which runs of the parts' commands the file holds."""
    parts = []
    for part in args.parts:
        if not part.exists():
            raise _BadResultsFile(f"{part}: no such file")
        try:
            parts.append(_previous(part, "part"))
        except _BadResultsFile as error:
            raise _BadResultsFile(f"{part}: {error}") from None
    try:
        _writable(args.out)
    except _BadResultsFile as error:
        raise _BadResultsFile(f"{args.out}: {error}") from None
    target = Path(os.path.realpath(args.out))
    with locked(target):
        try:
            data = _previous(target)
        except _BadResultsFile as error:
            raise _BadResultsFile(f"{args.out}: {error}") from None
        records, commands, seconds = list(data["runs"]), list(data["commands"]), float(data["seconds"])
        replaced_count = same_count = 0
        for other in parts:
            taken = [r for r in other["runs"] if args.tasks is None or r["config"]["task"] in args.tasks]
            before = {run_identity(r): r for r in records}
            records, replaced = merge_runs(records, taken)
            same = sum(before.get(run_identity(r)) == r for r in taken)
            same_count += same
            replaced_count += len(replaced) - same
            if len(taken) > same:  # the part brings runs: its commands (each once) and their seconds
                for command in other["commands"]:
                    if command not in commands:
                        commands.append(command)
                        seconds += float(command.get("seconds") or 0.0)
        problems = mixing_problems(records)
        if problems and not args.allow_mixed:
            raise _BadResultsFile(
                f"{args.out}: the merged runs would mix experiments, which one results file does not hold:\n  "
                + "\n  ".join(problems)
                + "\nnothing was written; merge them into another --out, or pass --allow-mixed to keep all of them"
            )
        merge_command = "python -m posenc.lab " + " ".join(shlex.quote(a) for a in argv)
        commands.append({"command": merge_command, "runs": len(records), "seconds": 0.0})
        _write(records, target, commands, seconds)
    by_settings = defaultdict(set)
    for record in records:
        by_settings[_same_settings(record)].add(run_identity(record))
    side_by_side = sum(len(ids) > 1 for ids in by_settings.values())
    note = f"; {_plural(replaced_count, 'run')} of the same identity replaced by a later part" if replaced_count else ""
    if same_count:
        note += f"; {_plural(same_count, 'run')} already there as they were"
    if side_by_side:
        note += f"; {_plural(side_by_side, 'setting')} held by runs of different code or devices, each run kept"
    print(f"{args.out}: {_plural(len(records), 'run')}{note}")
    return 0


def _write(records: list[dict], out: Path, commands: list[dict], seconds: float) -> None:
    data = {
        "schema": RESULTS_SCHEMA,
        "commands": commands,
        "versions": versions(),
        "seconds": round(seconds, 1),
        "runs": records,
    }
    write_file(out, json.dumps(data, separators=(",", ":")) + "\n")


def _write_table(args, argv: list[str]) -> None:
    """Train one learned-table model and save its position table before and after training (float16)."""
    overrides = {"scheme": "learned", "seed": args.seed, "threads": args.threads, "device": _concrete(args.device)}
    if args.steps is not None:
        overrides["steps"] = args.steps
    config = RunConfig.for_task(args.task, **overrides)
    if args.out.exists() and not args.replace:
        raise _BadResultsFile("exists; choose another --out, or pass --replace to replace it")
    _writable(args.out)
    progress = None if args.quiet else progress_bar(f"{args.task}/learned/seed {args.seed}")
    result = learned_position_table(config, progress=progress)
    about = {
        "command": "python -m posenc.lab " + " ".join(shlex.quote(a) for a in argv),
        "config": result["config"],
        "final_loss": result["final_loss"],
        "seconds": round(result["seconds"], 1),
        "versions": versions(),
        "provenance": provenance(config),  # the code version (source hash, git commit) that trained it
    }

    def save(temporary: Path) -> None:
        with open(temporary, "wb") as handle:  # a handle: numpy would add ".npz" to a name
            np.savez(
                handle,
                initial=result["initial"].astype(np.float16),
                trained=result["trained"].astype(np.float16),
                about=np.array(json.dumps(about)),
            )

    target = Path(os.path.realpath(args.out))
    with locked(target):  # another command may have written it while this one trained
        if target.exists() and not args.replace:
            aside = target.with_name(f"{target.stem}.aside-{uuid.uuid4().hex[:12]}{target.suffix}")
            write_file(aside, writer=save)
            raise _BadResultsFile(f"appeared while this table trained: kept; the new table is in {aside}")
        write_file(target, writer=save)
    print(f"wrote the {config.train_len} x {config.d_model} position table to {args.out}")


def _why(error: Exception, path: Path | None = None) -> str:
    """One line that says what is wrong with an input file (``path``: its name, left out of the line)."""
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
    text = str(error)
    if path is not None:
        for name in (f"{path} is not a results file: ", f"{path} "):
            text = text.removeprefix(name)
    return f"is not a results file of this lab: {text}"


#: The default seeds of ``sweep``: those of the book's first sweep. ``posenc.lab.claims.SEEDS`` lists, per task,
#: the seeds the chapter's claims were written from and the held-out seeds that check them.
BOOK_SEEDS = list(range(12))


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser; every run option left out means the experiment's value (:class:`RunConfig`)."""
    parser = argparse.ArgumentParser(prog="python -m posenc.lab", description="Train and evaluate tiny transformers.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "sweep"):
        sub = commands.add_parser(name, help="one (task, scheme, seed)" if name == "run" else "every combination")
        if name == "run":
            sub.add_argument("--task", choices=TASKS, required=True)
            sub.add_argument("--scheme", choices=SCHEMES, required=True)
            sub.add_argument("--seed", type=_count(0, MAX_SEED), default=0)
        else:
            sub.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS))
            sub.add_argument("--schemes", nargs="+", choices=SCHEMES, default=list(SCHEMES))
            sub.add_argument("--seeds", nargs="+", type=_count(0, MAX_SEED), default=BOOK_SEEDS)
        sub.add_argument("--steps", type=_count(1), default=None, help="training steps (default: the task's)")
        sub.add_argument(
            "--finetune-steps",
            type=_count(0),
            default=None,
            help="fine-tuning steps of the RoPE model at the target length (4x; 8x for passkey), per extension "
            f"(default: {_DEFAULTS.finetune_steps})",
        )
        sub.add_argument(
            "--extensions",
            nargs="+",
            choices=list(EXTENSIONS),
            default=None,
            help="context-extension methods for the RoPE model (default: all)",
        )
        sub.add_argument(
            "--device",
            type=_device,
            default=_DEFAULTS.device,
            help=f"auto (CUDA when present), cpu or cuda (default: {_DEFAULTS.device})",
        )
        sub.add_argument("--threads", type=_count(1), default=_DEFAULTS.threads, help="torch CPU threads (per job)")
        sub.add_argument("--jobs", type=_count(1), default=1, help="runs at a time, each in its own process")
        sub.add_argument(
            "--out", type=Path, default=Path("lab_results.json"), help="results file (created or merged into)"
        )
        sub.add_argument("--rerun", action="store_true", help="run again, and replace, runs the file already holds")
        sub.add_argument(
            "--allow-mixed",
            action="store_true",
            help="keep runs with other settings, code or software versions in the same file",
        )
        sub.add_argument("--checkpoints", type=Path, default=None, help="folder for float16 checkpoints")
        sub.add_argument("--quiet", action="store_true")
    table = commands.add_parser("table", help="train one learned-table model and save its position table")
    table.add_argument("--task", choices=TASKS, default="text")
    table.add_argument("--seed", type=_count(0, MAX_SEED), default=0)
    table.add_argument("--steps", type=_count(1), default=None, help="training steps (default: the task's)")
    table.add_argument("--device", type=_device, default="cpu", help="auto (CUDA when present), cpu or cuda")
    table.add_argument("--threads", type=_count(1), default=2, help="torch CPU threads")
    table.add_argument("--out", type=Path, default=Path("learned_table.npz"), help=".npz: initial, trained, about")
    table.add_argument("--replace", action="store_true", help="replace an existing --out file")
    table.add_argument("--quiet", action="store_true")
    merge = commands.add_parser(
        "merge", help="merge results files (parts of a sweep run separately) into one, losing no run"
    )
    merge.add_argument("parts", type=Path, nargs="+", help="results files to merge, in order")
    merge.add_argument("--out", type=Path, required=True, help="results file (created or merged into)")
    merge.add_argument("--tasks", nargs="+", choices=TASKS, default=None, help="take only these tasks' runs")
    merge.add_argument("--allow-mixed", action="store_true", help="keep runs of different experiments in one file")
    summary = commands.add_parser("summary", help="mean and spread over seeds of a results file")
    summary.add_argument("results", type=Path)
    summary.add_argument(
        "--value",
        choices=("all", "inside", "beyond"),
        default=None,
        help="positions to average: past L, within L or all (default: past L, then within L)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    try:
        return _main(args, argv)
    except KeyboardInterrupt:
        where = getattr(args, "out", None)
        kept = f"; every run it finished is in {where}: the same command again resumes" if where else ""
        print(f"python -m posenc.lab {args.command}: interrupted{kept}", file=sys.stderr)
        return 130


def _main(args, argv: list[str]) -> int:
    if args.command == "summary":
        values = [args.value] if args.value else ["beyond", "inside"]  # past L first
        try:
            runs = load_results(args.results)["runs"]
            sections = [(value, summarise(runs, value)) for value in values]
        except (OSError, ValueError, KeyError, TypeError) as error:
            print(f"python -m posenc.lab summary: {args.results}: {_why(error, args.results)}", file=sys.stderr)
            return 1
        titles = {"beyond": "past the training length", "inside": "within the training length", "all": "all positions"}
        for value, rows in sections:
            print(f"# {titles[value]} ({value}): mean [min, max] over seeds")
            for row in rows:
                tuned = "ft" if row["finetuned"] else "0-shot"
                print(
                    f"{row['task']:7s} {row['scheme']:12s} {row['extension']:14s} {tuned:6s} x{row['test_factor']} "
                    f"{row['metric']:13s} {row['mean']:.3f} [{row['min']:.3f}, {row['max']:.3f}] n={row['n']}"
                )
        return 0
    if args.command == "table":
        try:
            _write_table(args, argv)
        except _BadResultsFile as error:
            print(f"python -m posenc.lab table: {args.out}: {error}", file=sys.stderr)
            return 1
        return 0
    if args.command == "merge":
        try:
            return _merge(args, argv)
        except _BadResultsFile as error:
            print(f"python -m posenc.lab merge: {error}", file=sys.stderr)
            return 1
    try:
        if args.command == "run":
            records = _run_many(args, [args.task], [args.scheme], [args.seed], argv)
        else:
            records = _run_many(args, args.tasks, args.schemes, args.seeds, argv)
    except _BadResultsFile as error:
        print(f"python -m posenc.lab {args.command}: {args.out}: {error}", file=sys.stderr)
        return 1
    print(f"{args.out}: {_plural(len(records), 'run')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
