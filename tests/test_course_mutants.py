"""Mutation testing of the checkers: every mutant of a model answer that is not equivalent is killed.

The full run is ``python -m posenc.course mutants`` (about 930 mutants, a few minutes on 2 cores);
here a fixed, seeded sample of each exercise's mutants (and the task's own code of a
find-the-bug exercise), so that a new exercise cannot land with a checker that lets them pass.
"""

import textwrap
from pathlib import Path

import pytest

from posenc.course import EXERCISES
from posenc.course.mutants import mutants, mutate, run_exercise

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = 6  # mutants per exercise (seeded): about 100 in all

TOY = textwrap.dedent('''
    def f(x, n, base=10000.0):
        a = np.asarray(x, dtype=np.float64)
        k = int(n * 0.5)
        if k > 1:
            a = a[:k]
        y = np.clip(a / base, 0, 1)
        lo, hi = y[: n // 2], y[n // 2 :]
        return np.concatenate([lo, hi], axis=-1) + max(k, 2) + np.sin(y.T).sum()
''')


def test_the_operators_cover_the_classes_of_mistakes():
    found = [description for description, _ in mutate(TOY, "f", {"base": 10000.0, "n": 4}, ["x"])]
    text = "\n".join(found)
    for operator in (
        "1 -> 2",  # off by one: a constant
        "slice upper k + 1",  # off by one: a slice bound
        "int -> round",
        "int -> math.floor",
        "int -> math.ceil",  # rounding swapped
        "FloorDiv -> Div",
        "the other half of the slice",  # halves swapped
        "axis=-1 -> 0",
        ".T dropped",
        "np.concatenate parts reversed",
        "np.clip dropped",
        "max -> its argument 0",  # clamps dropped
        "if reduced to its else",  # a branch dropped
        "dtype np.float64 -> np.float32",  # float32 where float64 is computed
        "np.asarray(x) -> x itself",
        "input x overwritten after the answer is computed",  # written in place
        "parameter base replaced by 10000.0",
        "parameter n replaced by 4",  # a constant for a parameter
        "Gt -> GtE",
        "Gt -> Lt",  # comparisons flipped
        "np.sin -> np.cos",
        "Div -> Mult",
    ):
        assert operator in text, operator
    sources = [source for _, source in mutate(TOY, "f", {}, ["x"])]
    assert len(sources) == len(set(sources)) and all("def f(" in s for s in sources)


@pytest.fixture(scope="module")
def generated():
    return {name: mutants(exercise, ROOT / "chapters") for name, exercise in EXERCISES.items()}


def test_every_exercise_has_mutants_of_each_model_answer(generated):
    for name, exercise in EXERCISES.items():
        found = generated[name]
        answers = 1 + len(exercise.answers)
        assert len(found) >= 8, name
        assert len({m.description.split(",")[0] for m in found if m.description.startswith("answer")}) == answers - 1


@pytest.fixture(scope="module")
def reports():
    return {
        name: run_exercise(exercise, ROOT / "chapters", sample=SAMPLE, sample_seed=1, timeout=2.0)
        for name, exercise in EXERCISES.items()
    }


@pytest.mark.parametrize("name", list(EXERCISES))
def test_no_sampled_mutant_survives(name, reports, generated):
    report = reports[name]
    assert report.model_ok == "", report.model_ok  # the model answers pass every run
    assert len(report.mutants) >= min(SAMPLE, len(generated[name]))
    survivors = [(m.description, str(m.survived)) for m in report.mutants if m.verdict == "survived"]
    assert survivors == []


@pytest.mark.parametrize("name", list(EXERCISES))
def test_a_killed_mutant_gets_its_failing_input(name, reports):
    for mutant in reports[name].mutants:
        if mutant.verdict.startswith("killed"):
            result = mutant.public if not mutant.public.passed else mutant.grading
            assert "input " in result.message or "passed posenc's own" in result.message, result
            if result.status == "failed" and result.hint is None:
                assert ("expected" in result.message and "got" in result.message) or "returned" in result.message


def test_the_task_code_of_a_find_the_bug_exercise_is_killed_in_the_notebook(reports):
    for name in ("rope_half", "permute_for_half"):
        own = [m for m in reports[name].mutants if m.description == "the task's own code"]
        assert len(own) == 1 and own[0].verdict == "killed public", name


def test_the_public_run_kills_most_mutants(reports):
    live = [m for r in reports.values() for m in r.mutants if m.verdict != "equivalent"]
    public = sum(m.verdict == "killed public" for m in live)
    assert public >= 0.9 * len(live), (public, len(live))


def test_the_command_reports_per_exercise_and_refuses_an_unknown_name(capsys):
    from posenc.course.__main__ import main

    command = ["mutants", "--chapters", str(ROOT / "chapters")]
    assert main([*command, "--exercise", "yarn_temperature"]) == 0
    header, _, row = capsys.readouterr().out.splitlines()[:3]
    assert "generated | equivalent | killed public | killed grading | survived" in header
    cells = [c.strip() for c in row.strip("|").split("|")]
    generated, equivalent, public, grading, survived = map(int, cells[1:6])
    assert cells[0] == "yarn_temperature" and survived == 0
    assert generated == equivalent + public + grading + survived >= 10
    assert main([*command, "--exercise", "nope"]) == 1
    error = capsys.readouterr().err
    assert len(error.strip().splitlines()) == 1 and "no exercise called 'nope'" in error
