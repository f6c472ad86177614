"""The checker engine: time limits, sys.exit, switched-off posenc functions, seeds, unknown names."""

import os
import time
import types

import numpy as np
import pytest

import posenc
from posenc.course import EXERCISES, check, course_seed, engine


def notebook_function(source, name="f"):
    module = types.ModuleType("__main__")
    exec(compile("import sys, os, numpy as np\nimport posenc\n" + source, "<cell>", "exec"), module.__dict__)
    return module.__dict__[name]


def test_an_endless_loop_is_stopped_and_the_caller_goes_on():
    f = notebook_function("def f(factor):\n    while True:\n        pass\n")
    start = time.monotonic()
    result = check("yarn_temperature", f, timeout=0.5)
    assert time.monotonic() - start < 5
    assert result.status == "timed out" and "0.5 seconds" in result.message and not result
    assert check("yarn_temperature", lambda factor: 1.0 if factor <= 1 else 0.1 * np.log(factor) + 1).passed


def test_the_time_limit_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("POSENC_CHECK_TIMEOUT", "0.3")
    f = notebook_function("import time\ndef f(factor):\n    time.sleep(2)\n    return 1.0\n")
    result = check("yarn_temperature", f)
    assert result.status == "timed out" and "0.3 seconds" in result.message
    monkeypatch.setenv("POSENC_CHECK_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="time limit"):
        check("yarn_temperature", f)


@pytest.mark.parametrize("call", ["sys.exit()", "exit()", "sys.exit(3)", "raise SystemExit('bye')"])
def test_sys_exit_gets_a_status_and_the_caller_keeps_running(call):
    f = notebook_function(f"def f(factor):\n    {call}\n")
    result = check("yarn_temperature", f)
    assert result.status == "exited" and "sys.exit()" in result.message


def test_os_exit_and_a_killed_child_are_reported():
    result = check("yarn_temperature", notebook_function("def f(factor):\n    os._exit(0)\n"))
    assert result.status == "exited" and "ended without an answer" in result.message


def test_unknown_exercise_raises_a_value_error_listing_the_known_names():
    with pytest.raises(ValueError, match="no exercise called 'nope'") as error:
        check("nope", print)
    assert all(name in str(error.value) for name in EXERCISES)


def test_the_reimplemented_function_is_switched_off_and_restored():
    original = posenc.sinusoidal
    f = notebook_function(
        "def f(n_positions, d_model, base=10000.0):\n    return posenc.sinusoidal(n_positions, d_model)\n"
    )
    result = check("sinusoidal", f)
    assert result.status == "failed" and "switched off" in result.message
    assert posenc.sinusoidal is original and posenc.absolute.sinusoidal is original
    assert f.__globals__["posenc"].sinusoidal is original


@pytest.mark.parametrize("mode", ["fork", "thread"])
def test_switching_off_is_undone_even_on_error_and_timeout(mode, monkeypatch):
    monkeypatch.setenv("POSENC_CHECK_ISOLATION", mode)
    from posenc import sinusoidal as before

    crash = notebook_function("def f(n_positions, d_model, base=10000.0):\n    raise KeyError('x')\n")
    assert check("sinusoidal", crash).status == "error"
    slow = notebook_function("import time\ndef f(n_positions, d_model, base=10000.0):\n    time.sleep(0.6)\n")
    assert check("sinusoidal", slow, timeout=0.2).status == "timed out"
    time.sleep(0.6)  # the thread fallback cannot kill the function; it ends by itself
    assert posenc.sinusoidal is before and posenc.absolute.sinusoidal is before
    assert (
        check(
            "sinusoidal",
            notebook_function(
                "def f(n_positions, d_model, base=10000.0):\n    return posenc.sinusoidal(n_positions, d_model, base)\n"
            ),
        ).status
        == "failed"
    )
    assert check("yarn_temperature", notebook_function("def f(factor):\n    exit()\n")).status == "exited"


def test_printed_output_comes_back(capsys):
    f = notebook_function(
        "def f(factor):\n    print('debugging', factor)\n    return 1.0 if factor <= 1 else 0.1 * np.log(factor) + 1\n"
    )
    assert check("yarn_temperature", f).passed
    assert "debugging 8.0" in capsys.readouterr().out
    assert check("yarn_temperature", f, quiet=True).passed
    assert capsys.readouterr().out == ""


def test_hidden_cases_follow_the_course_seed(monkeypatch):
    exercise = EXERCISES["sinusoidal"]
    assert exercise.all_cases(None) == exercise.cases
    a, b = exercise.all_cases(1), exercise.all_cases(2)
    assert len(a) > len(exercise.cases) and str(a) == str(exercise.all_cases(1)) and str(a) != str(b)
    monkeypatch.setenv("POSENC_COURSE_SEED", "7")
    assert course_seed() == 7 and course_seed(3) == 3
    monkeypatch.setenv("POSENC_COURSE_SEED", "x")
    with pytest.raises(ValueError, match="course seed"):
        course_seed()


def test_hard_coded_public_answers_fail_on_the_hidden_cases():
    table = {
        (c["n_positions"], c["d_model"], c.get("base", 1e4)): posenc.sinusoidal(
            c["n_positions"], c["d_model"], c.get("base", 1e4)
        )
        for c in EXERCISES["sinusoidal"].cases
    }
    f = notebook_function(
        "def f(n_positions, d_model, base=10000.0):\n    return TABLE[(n_positions, d_model, base)]\n"
    )
    f.__globals__["TABLE"] = table
    assert check("sinusoidal", f).passed  # public cases only
    assert check("sinusoidal", f, seed=5).status == "error"


def test_every_hint_is_distinct_and_every_mistake_model_earns_its_own(monkeypatch):
    monkeypatch.setattr(engine, "_targets", lambda names: [])
    for name, exercise in EXERCISES.items():
        hints = [*exercise.mistakes, *exercise.detectors, *exercise.error_hints, *exercise.properties]
        assert len(set(exercise.mistakes)) == len(exercise.mistakes)
        for hint, mistake in exercise.mistakes.items():
            result = check(name, mistake, seed=4)
            assert result.status == "failed" and result.hint == hint, (name, hint, result)
        assert all(isinstance(h, str) and h for h in hints)


def test_a_forked_check_leaves_no_child_behind():
    f = notebook_function("def f(factor):\n    while True:\n        pass\n")
    check("yarn_temperature", f, timeout=0.2)
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)
