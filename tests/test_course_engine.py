"""The checker engine: time limits, sys.exit, switched-off posenc functions, seeds, unknown names; the plan
(boundaries, every input form, reruns), inputs changed in place whatever their type, return values of any type."""

import os
import time
import types
from pathlib import Path

import numpy as np
import pytest

import posenc
from posenc.course import EXERCISES, check, course_seed, engine


def notebook_function(source, name="f"):
    module = types.ModuleType("__main__")
    exec(compile("import sys, os, numpy as np\nimport posenc\n" + source, "<cell>", "exec"), module.__dict__)
    return module.__dict__[name]


@pytest.fixture(autouse=True)
def students_isolation(monkeypatch):
    """These tests are about the isolation a student gets, a forked process (`make check` sets the thread
    fallback for the other files' checks); the tests of the fallback set it themselves."""
    monkeypatch.setenv("POSENC_CHECK_ISOLATION", "fork")


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


def test_a_function_left_running_in_a_thread_does_not_judge_the_next_checks(monkeypatch):
    """The fallback without fork cannot stop a function that runs past its time; the checks after it
    must start clean while it still runs and calls posenc."""
    monkeypatch.setenv("POSENC_CHECK_ISOLATION", "thread")
    spins = notebook_function(
        "import time\ndef f(n_positions, d_model, base=10000.0):\n    end = time.monotonic() + 1\n"
        "    while time.monotonic() < end:\n        try:\n            posenc.sinusoidal(2, 2)\n"
        "        except Exception:\n            pass\n"
    )
    timed_out = check("sinusoidal", spins, timeout=0.2)
    assert timed_out.status == "timed out" and "may still be running in the background" in timed_out.message
    assert "restart the kernel" in timed_out.message  # a thread cannot be stopped: the reader is told
    assert (
        check(
            "sinusoidal",
            lambda n_positions, d_model, base=10000.0: posenc.absolute.sinusoidal(n_positions, d_model, base),
        ).status
        == "failed"
    )  # still switched off for the next check
    right = notebook_function(
        "def f(n_positions, d_model, base=10000.0):\n    p = np.arange(n_positions)[:, None]\n"
        "    angles = p / base ** (np.arange(0, d_model, 2) / d_model)\n    table = np.zeros((n_positions, d_model))\n"
        "    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles[:, : d_model // 2])\n    return table\n"
    )
    assert check("sinusoidal", right).passed  # while the first function still spins
    time.sleep(1)  # the first function ends by itself


def test_a_function_that_returns_after_its_time_does_not_clear_the_next_checks_finding(monkeypatch):
    monkeypatch.setenv("POSENC_CHECK_ISOLATION", "thread")
    late = notebook_function("import time\ndef f(factor):\n    time.sleep(0.4)\n    return 1.0\n")
    assert check("yarn_temperature", late, timeout=0.2).status == "timed out"
    hides_the_call = notebook_function(
        "import time\ndef f(factor):\n    try:\n        posenc.yarn_attention_factor(factor)\n    except Exception:\n"
        "        pass\n    time.sleep(0.5)\n    return 1.0 if factor <= 1 else 0.1 * np.log(factor) + 1\n"
    )
    result = check("yarn_temperature", hides_the_call)  # the late function returns while this one sleeps
    assert result.status == "failed" and "caught the error; it still counts" in result.message


@pytest.mark.parametrize("mode", ["fork", "thread"])
def test_a_result_that_cannot_cross_a_pipe_is_the_checkers_error_in_both_ways(mode, monkeypatch):
    """The forked check sends its result through a pipe (pickle); the thread fallback makes the same
    round trip, so a checker whose result cannot be pickled fails under `make check` too."""
    import dataclasses

    monkeypatch.setenv("POSENC_CHECK_ISOLATION", mode)
    real = engine.run_cases
    monkeypatch.setattr(engine, "run_cases", lambda *a: dataclasses.replace(real(*a), hint=lambda: None))
    result = check("yarn_temperature", lambda factor: 1.0 if factor <= 1 else 0.1 * np.log(factor) + 1)
    assert result.status == "error" and "the checker failed" in result.message, result


def test_abandon_names_its_argument():
    from posenc.course import switchoff

    with pytest.raises(TypeError, match=r"thread must be the threading\.Thread.*got int"):
        switchoff.abandon(3)


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
    declared = [{k: v for k, v in c.items() if not k.startswith("_")} for c in exercise.cases + exercise.boundaries]
    assert exercise.all_cases(None) == declared
    a, b = exercise.all_cases(1), exercise.all_cases(2)
    assert len(a) > len(declared) and str(a) == str(exercise.all_cases(1)) and str(a) != str(b)
    monkeypatch.setenv("POSENC_COURSE_SEED", "7")
    assert course_seed() == 7 and course_seed(3) == 3
    monkeypatch.setenv("POSENC_COURSE_SEED", "x")
    with pytest.raises(ValueError, match="course seed"):
        course_seed()


@pytest.mark.parametrize("name", list(EXERCISES))
def test_the_plan_has_every_boundary_every_form_and_reruns(name):
    exercise = EXERCISES[name]
    for seed in (None, 11):
        plan = exercise.plan(seed)
        origins = [case.origin for case in plan]
        declared = [{k: v for k, v in c.items() if not k.startswith("_")} for c in exercise.boundaries]
        boundary = [case.kwargs for case in plan if case.origin == "boundary"]
        assert len(boundary) == len(declared) and all(any(str(b) == str(d) for b in boundary) for d in declared), (
            "a declared boundary is missing"
        )
        forms = {(arg, form) for case in plan for arg, form in case.forms.items()}
        wanted = {(arg, form) for arg, spec in exercise.args.items() for form in spec.forms}
        assert forms == wanted, f"forms never passed: {wanted - forms}"
        assert set(exercise.parameters) == set(exercise.args), "every parameter needs a declared Arg"
        changed = [i for i, origin in enumerate(origins) if origin == "changed"]
        assert changed, "no rerun with one argument changed"
        for i in changed:  # right after the same case with the argument as it was
            before, after = plan[i - 1].kwargs, plan[i].kwargs
            assert plan[i - 1].origin == "rerun" and sum(str(before[k]) != str(after[k]) for k in before) == 1
        assert origins.count("again") >= 2
        if seed is not None:
            assert "hidden" in origins


def test_a_cache_keyed_on_part_of_the_arguments_fails():
    f = notebook_function("""
_CACHE = {}
def f(n_positions, d_model, base=10000.0):
    key = (int(n_positions), int(d_model))  # base forgotten
    if key not in _CACHE:
        p = np.arange(n_positions)[:, None]
        i = np.arange((d_model + 1) // 2)[None, :]
        a = p / base ** (2 * i / d_model)
        t = np.empty((n_positions, d_model))
        t[:, 0::2], t[:, 1::2] = np.sin(a), np.cos(a[:, : d_model // 2])
        _CACHE[key] = t
    return _CACHE[key]
""")
    result = check("sinusoidal", f)
    assert result.status == "failed" and "expected" in result.message


def test_answers_replayed_in_the_order_of_the_calls_fail():
    exercise = EXERCISES["yarn_temperature"]
    answers = [float(exercise.reference(**case.kwargs)) for case in exercise.plan(None) if case.origin != "again"]
    f = notebook_function("def f(factor):\n    return ANSWERS.pop(0)\n")
    f.__globals__["ANSWERS"] = answers
    result = check("yarn_temperature", f)
    assert result.status in ("failed", "error")


IN_PLACE = {
    # (exercise, source): the input changed in place, in the form the text allows for it
    "a float array, by out=": (
        "paper_interpolate",
        """
def f(lengths, values, length):
    in_place = isinstance(lengths, np.ndarray) and lengths.dtype == float
    log_lengths = np.log(lengths, out=lengths) if in_place else np.log(lengths)
    return float(np.interp(np.log(length), log_lengths, values))
""",
    ),
    "a list, sorted and extended": (
        "paper_interpolate",
        """
def f(lengths, values, length):
    if isinstance(values, list):
        values.append(values[-1])
        values.pop()
        values[0] = float(values[0]) + 0.0
        values.reverse(); values.reverse()
        values.insert(0, 1.0)
        values.pop(0)
        values[-1] = values[-1] * 1
        lengths.append(lengths[-1] + 1) if isinstance(lengths, list) else None
    log_lengths = np.log(np.asarray(lengths[: len(values)], float))
    return float(np.interp(np.log(length), log_lengths, np.asarray(values, float)))
""",
    ),
    "a tensor": (
        "rope",
        """
def f(x, positions, base=10000.0):
    if isinstance(positions, torch.Tensor):
        positions += 0 * positions + 1
        positions -= 1
        positions.mul_(1)
        positions[0] = positions[0] * 1 + (1 if positions.numel() > 1 else 0)
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angles = np.asarray(positions, dtype=np.float64)[:, None] * theta
    out = np.empty(x.shape)
    out[..., 0::2] = x[..., 0::2] * np.cos(angles) - x[..., 1::2] * np.sin(angles)
    out[..., 1::2] = x[..., 0::2] * np.sin(angles) + x[..., 1::2] * np.cos(angles)
    return out
""",
    ),
    "a dict": (
        "config_inv_freq",
        """
def f(config):
    scaling = config.pop("rope_scaling", None) or {}
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    rotary = int(head_dim * config.get("partial_rotary_factor", 1.0))
    speeds = config["rope_theta"] ** (-np.arange(0, rotary, 2) / rotary)
    return speeds / scaling["factor"] if scaling.get("type", scaling.get("rope_type")) == "linear" else speeds
""",
    ),
    "a transposed view": (
        "permute_for_half",
        """
def f(w, n_heads):
    head_dim = w.shape[0] // n_heads
    perm = np.concatenate([np.arange(0, head_dim, 2), np.arange(1, head_dim, 2)])
    out = w[np.concatenate([h * head_dim + perm for h in range(n_heads)])]
    if not w.flags.c_contiguous:
        w[...] = out if out.shape == w.shape else w
    return out
""",
    ),
}


@pytest.mark.parametrize("case", list(IN_PLACE), ids=list(IN_PLACE))
def test_an_input_changed_in_place_fails_whatever_its_type(case):
    name, source = IN_PLACE[case]
    f = notebook_function("import torch\n" + source)
    result = check(name, f)
    assert result.status == "failed" and "in place" in result.message, result


RETURNS = {
    "a bfloat16 tensor": ("rope", "torch.from_numpy(out).to(torch.bfloat16)", "failed", "bfloat16"),
    "a float16 array": ("rope", "out.astype(np.float16)", "failed", "float16"),
    "nested lists": ("rope", "out.tolist()", "passed", None),
    "a float64 tensor": ("rope", "torch.from_numpy(out)", "passed", None),
    "a float32 array": ("rope", "out.astype(np.float32)", "passed", None),
    "a complex array": ("rope", "out + 0j * out", "failed", None),
    "an object that is no array": ("rope", "object()", "failed", None),
    "a ragged list": ("rope", "[[1.0], [1.0, 2.0]]", "failed", None),
}


@pytest.mark.parametrize("case", list(RETURNS), ids=list(RETURNS))
def test_any_return_value_is_judged_inside_the_checker(case):
    name, returned, status, words = RETURNS[case]
    f = notebook_function(f"""import torch
def f(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angles = np.asarray(positions, dtype=np.float64)[:, None] * theta
    out = np.empty(x.shape)
    out[..., 0::2] = x[..., 0::2] * np.cos(angles) - x[..., 1::2] * np.sin(angles)
    out[..., 1::2] = x[..., 0::2] * np.sin(angles) + x[..., 1::2] * np.cos(angles)
    return {returned}
""")
    result = check(name, f, seed=2)
    assert result.status == status, result
    assert "checker failed" not in result.message and "Traceback" not in result.message
    if words:
        assert words in result.hint, result


def test_a_list_is_refused_only_where_the_text_asks_for_a_numpy_array():
    assert "NumPy array" in EXERCISES["alibi_slopes"].contract()
    lists = notebook_function("""
def f(n_heads):
    m = 2 ** int(np.floor(np.log2(n_heads)))
    s = [2 ** (-8 * (h + 1) / m) for h in range(m)]
    return s + [2 ** (-8 * (h + 1) / (2 * m)) for h in range(0, 2 * m, 2)][: n_heads - m]
""")
    refused = check("alibi_slopes", lists)
    assert refused.status == "failed" and "asks for a NumPy array" in refused.message
    turns = notebook_function(
        "def f(head_dim, base, context_length):\n"
        "    return [context_length * base ** (-2 * i / head_dim) / (2 * np.pi) for i in range(head_dim // 2)]\n"
    )
    assert check("turns_within_context", turns, seed=1).passed


def test_every_hint_is_distinct_and_every_mistake_model_earns_its_own(monkeypatch):
    monkeypatch.setattr(engine, "SWITCH_OFF", False)  # the models call posenc
    for name, exercise in EXERCISES.items():
        hints = [*exercise.mistakes, *exercise.detectors, *exercise.error_hints, *exercise.properties]
        assert len(set(exercise.mistakes)) == len(exercise.mistakes)
        for hint, mistake in exercise.mistakes.items():
            result = check(name, mistake, seed=4)
            assert result.status == "failed" and result.hint == hint, (name, hint, result)
        assert all(isinstance(h, str) and h for h in hints)


def _children() -> set[int]:
    """This process's children, zombies included (Linux's /proc/PID/task/TID/children)."""
    tasks = Path(f"/proc/{os.getpid()}/task")
    return {int(pid) for task in tasks.iterdir() for pid in (task / "children").read_text().split()}


def test_a_forked_check_leaves_no_child_behind():
    # compared with the children before the check: the test worker may hold children of its own
    # (tests/forked_commands.py's zygote), so "no child at all" would not be this check's property
    before = _children()
    f = notebook_function("def f(factor):\n    while True:\n        pass\n")
    assert check("yarn_temperature", f, timeout=0.2).status == "timed out"
    assert _children() <= before
