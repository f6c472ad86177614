"""Issue 45: no lab command loses a run (marked slow: the tests that run the command line).

The cases an outside audit found: ``merge`` replacing runs of other code or another device,
``run --allow-mixed --rerun`` overwriting them, two sweeps writing one file at once, an
older-protocol file rewritten as the new schema, and a position table without its code version.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from forked_commands import run_command

from posenc import lab
from posenc._files import locked
from posenc.lab.__main__ import _Writer

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "chapters" / "data" / "lab"
SHORT = ["--steps", "2", "--quiet"]


def _lab(*args, cwd=ROOT):
    """``python -m posenc.lab *args`` in a process of its own, forked from one that has imported the lab
    (tests/forked_commands.py: the same exit status and output, without 2-4 s of start-up per call)."""
    return run_command("posenc.lab", *args, cwd=cwd, timeout=600)


def _copy(name: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / name
    shutil.copyfile(DATA / name, out)
    return out


@pytest.mark.slow
def test_merging_gpu_runs_into_the_cpu_file_is_refused_and_then_keeps_both(tmp_path):
    """The audit's case: a copy of lookup_budget_gpu.json merged into lookup_budget.json replaced all 20 CPU runs."""
    cpu, gpu = _copy("lookup_budget.json", tmp_path), _copy("lookup_budget_gpu.json", tmp_path)
    before = cpu.read_bytes()
    cpu_runs, gpu_runs = lab.load_results(cpu)["runs"], lab.load_results(gpu)["runs"]
    assert {r["config"]["device"] for r in cpu_runs} == {"cpu"}
    assert {r["config"]["device"] for r in gpu_runs} == {"cuda"}
    refused = _lab("merge", str(gpu), "--out", str(cpu))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "runs differ in device: cpu, cuda" in refused.stderr and "code (source hash)" in refused.stderr
    assert "nothing was written" in refused.stderr
    assert cpu.read_bytes() == before  # not one byte changed
    kept = _lab("merge", str(gpu), "--out", str(cpu), "--allow-mixed")
    assert kept.returncode == 0, kept.stderr
    merged = lab.load_results(cpu)["runs"]
    assert len(merged) == len(cpu_runs) + len(gpu_runs) == 50
    ids = {lab.run_identity(r) for r in merged}
    assert all(lab.run_identity(r) in ids for r in cpu_runs + gpu_runs)
    assert [r for r in merged if r["config"]["device"] == "cpu"] == cpu_runs  # every CPU run as it was
    assert "20 settings held by runs of different code or devices, each run kept" in kept.stdout
    assert "replaced" not in kept.stdout


@pytest.mark.slow
def test_a_rerun_from_other_code_keeps_the_earlier_run(tmp_path):
    """``run --allow-mixed --rerun`` replaces only a run of the same identity; a run of other code stays."""
    out = tmp_path / "r.json"
    command = ["run", "--task", "lookup", "--scheme", "alibi", "--seed", "0", *SHORT, "--out", str(out)]
    assert _lab(*command).returncode == 0
    data = lab.load_results(out)
    (mine,) = data["runs"]
    older = json.loads(json.dumps(mine))
    older["provenance"]["source_hash"] = "0" * 16  # as if computed by other code
    older["evaluations"][0]["all"] = 0.123
    out.write_text(json.dumps({**data, "runs": [older]}))
    snapshot = out.read_bytes()
    refused = _lab(*command, "--rerun")
    assert refused.returncode == 1 and "code (source hash)" in refused.stderr and out.read_bytes() == snapshot
    both = _lab(*command, "--rerun", "--allow-mixed")
    assert both.returncode == 0, both.stderr
    assert "computed by other code or on another device; they are kept" in both.stdout
    runs = lab.load_results(out)["runs"]
    assert len(runs) == 2 and older in runs  # the other code's run is kept as it was
    again = _lab(*command, "--rerun", "--allow-mixed")  # now the same identity is there: that one is replaced
    assert again.returncode == 0 and "running again, and replacing, the run" in again.stdout
    assert len(lab.load_results(out)["runs"]) == 2 and older in lab.load_results(out)["runs"]


def _fake_run(seed: int, scheme: str = "alibi", code: str = "aaaa", steps: int = 2) -> dict:
    config = {"task": "lookup", "scheme": scheme, "seed": seed, "steps": steps, "threads": 1, "device": "cpu"}
    return {
        "config": config,
        "provenance": {"source_hash": code, "git_commit": None, "git_dirty": None, "corpus_hash": None},
        "versions": {"python": "3.11", "torch": "2.13.0", "numpy": "2"},
        "training": {"seconds": 1.0},
        "evaluations": [],
    }


def test_a_writer_keeps_the_runs_another_command_wrote_meanwhile(tmp_path):
    """The interleaving that lost runs: A reads, B writes, A writes back. Each add re-reads under the lock."""
    out = tmp_path / "shared.json"
    first = _Writer(out, "python -m posenc.lab sweep --seeds 0 1", set(), rerun=False, allow_mixed=False)
    second = _Writer(out, "python -m posenc.lab sweep --seeds 2", set(), rerun=False, allow_mixed=False)
    first.add(_fake_run(0))
    second.add(_fake_run(2))
    first.add(_fake_run(1))
    data = lab.load_results(out)
    assert [r["config"]["seed"] for r in data["runs"]] == [0, 1, 2]
    assert [(c["command"].split("--seeds ")[1], c["runs"]) for c in data["commands"]] == [("0 1", 2), ("2", 1)]
    # the same run written by the other command meanwhile is kept as that command wrote it
    twin = {**_fake_run(2), "training": {"seconds": 9.0}}
    assert "kept that one" in first.add(twin)
    assert [r["training"]["seconds"] for r in lab.load_results(out)["runs"]] == [1.0, 1.0, 1.0]
    # a run that would now mix with what the others wrote goes beside the file, not into it
    before = out.read_bytes()
    note = first.add(_fake_run(3, code="bbbb"))
    assert "NOT added" in note and first.aside is not None and first.aside.exists()
    assert [r["provenance"]["source_hash"] for r in lab.load_results(first.aside)["runs"]] == ["bbbb"]
    assert [r["config"]["seed"] for r in lab.load_results(out)["runs"]] == [0, 1, 2]
    assert lab.load_results(out)["runs"] == lab.load_results(out)["runs"] and out.read_bytes() == before


def test_the_lock_excludes_a_second_holder_until_released(tmp_path):
    out = tmp_path / "x.json"
    with locked(out):
        with pytest.raises(TimeoutError, match="holds its lock"):
            with locked(out, timeout=0.1):
                pass
    with locked(out, timeout=0.1):  # released on leaving: taken at once
        pass
    assert list(tmp_path.iterdir()) == []  # no lock file left behind


@pytest.mark.slow
def test_two_sweeps_writing_one_file_at_once_keep_every_run(tmp_path):
    """The audit's case: two sweeps into one file left 3 runs of 5, and both reported success."""
    out = tmp_path / "both.json"
    base = [sys.executable, "-m", "posenc.lab", "sweep", "--tasks", "lookup", "--schemes", "nope", "alibi"]
    base += [*SHORT, "--threads", "1", "--out", str(out)]
    processes = [
        subprocess.Popen(
            [*base, "--seeds", *seeds], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for seeds in (["0", "1", "2"], ["3", "4"])
    ]
    outputs = [p.communicate(timeout=600) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], outputs
    data = lab.load_results(out)
    assert sorted((r["config"]["scheme"], r["config"]["seed"]) for r in data["runs"]) == sorted(
        (s, seed) for s in ("nope", "alibi") for seed in range(5)
    )
    assert sorted(c["runs"] for c in data["commands"]) == [4, 6]
    assert not [p for p in tmp_path.iterdir() if p.name != "both.json"]  # no lock or temporary file left


@pytest.mark.slow
def test_an_older_protocol_file_is_refused_never_rewritten(tmp_path):
    """A schema-1 file (chapter 12's first sweep) is read only: no run, sweep or merge writes it or copies it."""
    old = tmp_path / "lab_results.json"
    shutil.copyfile(ROOT / "chapters" / "data" / "lab_results.json", old)
    snapshot = old.read_bytes()
    assert lab.load_results(old)["read_from_schema"] == 1  # still readable
    run = _lab("run", "--task", "lookup", "--scheme", "alibi", *SHORT, "--allow-mixed", "--out", str(old))
    assert run.returncode == 1 and "older protocol (schema 1)" in run.stderr and "Traceback" not in run.stderr
    into = _lab("merge", str(_copy("lookup_budget.json", tmp_path)), "--allow-mixed", "--out", str(old))
    assert into.returncode == 1 and "older protocol (schema 1)" in into.stderr
    out = tmp_path / "new.json"
    part = _lab("merge", str(old), "--allow-mixed", "--out", str(out))
    assert part.returncode == 1 and "older protocol (schema 1)" in part.stderr and not out.exists()
    assert old.read_bytes() == snapshot


@pytest.mark.slow
def test_a_position_table_records_its_code_version_and_is_never_overwritten_unasked(tmp_path):
    out = tmp_path / "table.npz"
    command = ["table", "--task", "lookup", "--steps", "2", "--quiet", "--out", str(out)]
    assert _lab(*command).returncode == 0
    with np.load(out) as saved:
        about = json.loads(str(saved["about"]))
    assert about["provenance"]["source_hash"] == lab.code_version()["source_hash"]
    assert about["provenance"]["git_commit"] == lab.code_version()["git_commit"]
    snapshot = out.read_bytes()
    refused = _lab(*command)
    assert refused.returncode == 1 and "--replace" in refused.stderr and out.read_bytes() == snapshot
    assert _lab(*command, "--replace").returncode == 0


def test_the_books_position_table_carries_its_code_version():
    with np.load(ROOT / "chapters" / "data" / "learned_table_text_seed0.npz") as saved:
        about = json.loads(str(saved["about"]))
    provenance = about["provenance"]
    assert len(provenance["source_hash"]) == 16 and len(provenance["git_commit"]) == 40
    assert provenance["git_dirty"] is False and provenance["corpus_hash"]


# Cases an adversarial review found after the first version (each lost a run or crashed).


def test_set_aside_files_are_never_overwritten(tmp_path):
    out = tmp_path / "s.json"
    first = _Writer(out, "python -m posenc.lab sweep --seeds 0", set(), rerun=False, allow_mixed=False)
    first.add(_fake_run(0))
    names = set()
    for code in ("bbbb", "cccc"):
        other = _Writer(out, f"python -m posenc.lab run --code {code}", set(), rerun=False, allow_mixed=False)
        assert "NOT added" in other.add(_fake_run(1, code=code))
        names.add(other.aside.name)
    assert len(names) == 2  # one file per command, named by its unique id, not by the process id
    kept = sorted(
        r["provenance"]["source_hash"] for p in tmp_path.glob("s.aside-*.json") for r in lab.load_results(p)["runs"]
    )
    assert kept == ["bbbb", "cccc"]
    aside = lab.load_results(next(tmp_path.glob("s.aside-*.json")))
    assert aside["commands"][0]["command"].startswith("python -m posenc.lab run")  # the command is recorded


def test_a_file_that_turns_unreadable_mid_sweep_keeps_the_finished_run_aside(tmp_path):
    out = tmp_path / "f.json"
    writer = _Writer(out, "python -m posenc.lab sweep", set(), rerun=False, allow_mixed=False)
    writer.add(_fake_run(0))
    out.write_text("{broken")  # another process wrote garbage meanwhile
    note = writer.add(_fake_run(1))
    assert "NOT added" in note and "is not valid JSON" in note
    assert [r["config"]["seed"] for r in lab.load_results(writer.aside)["runs"]] == [1]
    assert out.read_text() == "{broken"  # not touched either


@pytest.mark.slow
def test_a_file_with_two_runs_of_one_identity_is_refused_not_thinned(tmp_path):
    source = _copy("lookup_budget.json", tmp_path)
    data = json.loads(source.read_text())
    twin = json.loads(json.dumps(data["runs"][0]))
    twin["config"]["threads"] = 7  # the same identity, other numbers
    twin["evaluations"][0]["all"] = 0.5
    data["runs"].append(twin)
    source.write_text(json.dumps(data))
    before = source.read_bytes()
    for command in (
        ["merge", str(source), "--out", str(tmp_path / "m.json")],
        ["merge", str(_copy("lookup_budget.json", tmp_path / "b")), "--out", str(source)],
    ):
        refused = _lab(*command)
        assert refused.returncode == 1 and "whose identity" in refused.stderr and "Traceback" not in refused.stderr
    assert source.read_bytes() == before and not (tmp_path / "m.json").exists()


@pytest.mark.slow
def test_merging_a_file_again_adds_no_commands_or_seconds(tmp_path):
    part, out = _copy("lookup_budget.json", tmp_path), tmp_path / "out.json"
    assert _lab("merge", str(part), "--out", str(out)).returncode == 0
    once = lab.load_results(out)
    again = _lab("merge", str(part), "--out", str(out))
    assert (
        again.returncode == 0
        and "20 runs already there as they were" in again.stdout
        and "replaced" not in again.stdout
    )
    twice = lab.load_results(out)
    assert twice["runs"] == once["runs"] and twice["seconds"] == once["seconds"]
    assert twice["commands"][:-1] == once["commands"]  # only the new merge command is added
    assert _lab("merge", str(part), "--tasks", "text", "--out", str(tmp_path / "none.json")).returncode == 0
    assert lab.load_results(tmp_path / "none.json")["seconds"] == 0  # no runs taken: no seconds either


@pytest.mark.slow
@pytest.mark.parametrize(
    "bad",
    [
        {"schema": 2, "runs": []},  # no commands, no seconds
        {"schema": 2, "runs": [], "commands": [], "seconds": None},
        {
            "schema": 2,
            "commands": [],
            "seconds": 0,
            "runs": [{"config": {"task": "lookup", "seed": 0}, "evaluations": []}],
        },
        {
            "schema": 2,
            "commands": [],
            "seconds": 0,
            "runs": [{"config": {"task": "lookup", "scheme": "rope", "seed": "7"}, "evaluations": []}],
        },
        {
            "schema": 2,
            "commands": [],
            "seconds": 0,
            "runs": [
                {"config": {"task": "lookup", "scheme": "rope", "seed": 7}, "evaluations": [], "provenance": "abc"}
            ],
        },
    ],
)
def test_a_malformed_results_file_is_refused_in_one_line_before_anything_runs(tmp_path, bad):
    out = tmp_path / "bad.json"
    out.write_text(json.dumps(bad))
    for command in (
        ["merge", str(out), "--out", str(tmp_path / "new.json")],
        ["merge", str(_copy("lookup_budget.json", tmp_path)), "--out", str(out)],
    ):
        refused = _lab(*command)
        assert refused.returncode == 1 and "is not a results file" in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr and refused.stderr.count(str(out)) <= 1
    assert json.loads(out.read_text()) == bad


@pytest.mark.slow
def test_an_out_path_where_nothing_can_be_written_is_refused_before_training(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for out in (blocker / "sub.json", tmp_path):  # below a file; a folder
        refused = _lab("run", "--task", "lookup", "--scheme", "alibi", *SHORT, "--out", str(out))
        assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
        assert "training" not in refused.stderr
    too_big = _lab(
        "run", "--task", "lookup", "--scheme", "alibi", "--seed", str(2**63), *SHORT, "--out", str(tmp_path / "x.json")
    )
    assert too_big.returncode == 2 and "must be an integer from 0 to" in too_big.stderr


def test_a_table_that_appears_while_one_trains_is_kept(tmp_path, monkeypatch):
    import posenc.lab.__main__ as cli

    out = tmp_path / "t.npz"

    def train_while_another_writes(config, progress=None):
        out.write_bytes(b"the other command's table")
        return {
            "initial": np.zeros((2, 2)),
            "trained": np.ones((2, 2)),
            "final_loss": 1.0,
            "seconds": 0.1,
            "config": {},
        }

    monkeypatch.setattr(cli, "learned_position_table", train_while_another_writes)
    assert cli.main(["table", "--task", "lookup", "--steps", "2", "--quiet", "--out", str(out)]) == 1
    assert out.read_bytes() == b"the other command's table"
    (aside,) = tmp_path.glob("t.aside-*.npz")
    with np.load(aside) as saved:
        assert saved["trained"].sum() == 4


@pytest.mark.slow
def test_checkpoints_of_other_settings_do_not_overwrite_each_other(tmp_path):
    folder = tmp_path / "ck"
    for steps in ("2", "3"):
        command = ["run", "--task", "lookup", "--scheme", "alibi", "--steps", steps, "--quiet"]
        assert _lab(*command, "--checkpoints", str(folder), "--out", str(tmp_path / f"{steps}.json")).returncode == 0
    assert len(list(folder.glob("lookup-alibi-seed0-*.pt"))) == 2
