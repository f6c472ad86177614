"""One spec for the task text and the checker: each exercise's declaration against its notebook and its reference."""

import importlib
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

import posenc
from posenc.course import EXERCISES, engine
from posenc.course.mutants import model_answer

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"


def exercise_text(exercise) -> str:
    path = sorted(CHAPTERS.glob(f"{exercise.label[5:7]}_*.ipynb"))[0]
    for cell in nbformat.read(path, as_version=4).cells:
        is_exercise = cell.cell_type == "markdown" and "{exercise}" in cell.source
        if is_exercise and f":label: {exercise.label}\n" in cell.source:
            return cell.source
    raise AssertionError(f"{path.name} has no exercise {exercise.label}")


def words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("name", list(EXERCISES))
def test_the_task_text_states_the_spec(name):
    exercise = EXERCISES[name]
    text = words(exercise_text(exercise))
    assert words(exercise.contract()) in text, f"paste exercise.contract() into {exercise.label}'s text"
    assert f"{exercise.function_name}(" in text
    for helper in exercise.allowed:
        assert f"`{helper}`" in text


@pytest.mark.parametrize("name", list(EXERCISES))
def test_every_case_is_within_the_domain_and_accepted_by_the_reference(name):
    exercise = EXERCISES[name]
    for seed in (None, *range(12)):
        for case in exercise.plan(seed):
            if exercise.domain is not None:
                assert exercise.domain(case.kwargs), case.kwargs
            engine.reference_value(exercise, case.kwargs)


@pytest.mark.parametrize("name", [n for n in EXERCISES if EXERCISES[n].allowed])
def test_an_allowed_helper_is_a_step_not_the_answer(name):
    """A helper the task allows, called with the exercise's own arguments, does not give the answer."""
    exercise = EXERCISES[name]
    for dotted in exercise.allowed:
        module, _, attr = dotted.rpartition(".")
        helper = getattr(importlib.import_module(module), attr)
        assert dotted.startswith("posenc.") and attr in posenc.__all__
        for case in exercise.plan(3):
            expected = engine.reference_value(exercise, case.kwargs)
            for args in (list(case.kwargs.values()), list(case.kwargs.values())[:1]):
                try:
                    got = np.asarray(helper(*args), dtype=float)
                except Exception:
                    continue
                assert got.shape != expected.shape or not np.allclose(got, expected), (dotted, case.kwargs)


@pytest.mark.parametrize("name", list(EXERCISES))
def test_what_the_reference_calls_is_switched_off_unless_allowed(name):
    exercise = EXERCISES[name]
    calls = engine.reference_calls(exercise)
    assert calls or exercise.reference.__module__.startswith("posenc.course.coursework"), name
    # the whole of posenc is switched off, so each of these fails inside a student's function
    for call in calls:
        assert call.startswith("posenc.")


@pytest.mark.parametrize("name", list(EXERCISES))
def test_the_model_answer_is_the_notebooks_solution_and_uses_no_posenc(name):
    exercise = EXERCISES[name]
    source, _ = model_answer(exercise, CHAPTERS)
    assert f"def {exercise.function_name}(" in source
    uses = set(re.findall(r"posenc\.(\w+)", source))
    assert uses <= {a.rpartition(".")[2] for a in exercise.allowed}, uses


def test_the_returns_named_in_the_text_agree_with_the_spec():
    for exercise in EXERCISES.values():
        text = words(exercise_text(exercise))
        names_numpy = re.search(r"\b[Rr]eturn(s|ing)? a NumPy array\b", text) is not None
        assert names_numpy == (exercise.returns == "ndarray"), exercise.name


def test_the_contract_command_prints_the_sentence_to_paste(capsys):
    from posenc.course.__main__ import main

    assert main(["contract", "rope"]) == 0
    assert words(capsys.readouterr().out) == words(EXERCISES["rope"].contract())
    assert main(["contract", "nope"]) == 1 and "no exercise called 'nope'" in capsys.readouterr().err
