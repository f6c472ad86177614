"""posenc is switched off while a student's function runs, however its functions are reached.

Each student function is defined by exec in a fake ``__main__`` module, as a notebook cell
defines it, and computes the right answer through posenc: every one must fail, with a message
that names the posenc function and says why. The helpers a task allows still work.
"""

import textwrap
import threading
import types

import numpy as np
import pytest

import posenc
from posenc import exercises
from posenc.course import check

PRELUDE = """
import functools, importlib, importlib.util, math, sys, threading, types
import numpy as np
import torch
import posenc
import posenc.nn
from posenc import sinusoidal
"""


def student(source: str, name: str = "f", **extra):
    module = types.ModuleType("__main__")
    module.__dict__.update(extra)
    exec(compile(PRELUDE + textwrap.dedent(source), "<cell>", "exec"), module.__dict__)
    return module.__dict__[name]


SINUSOIDAL = {
    "a name imported earlier": """
        def f(n_positions, d_model, base=10000.0):
            return sinusoidal(n_positions, d_model, base)
        """,
    "a functools.partial made earlier": """
        table = functools.partial(posenc.sinusoidal)
        def f(n_positions, d_model, base=10000.0):
            return table(n_positions, d_model, base)
        """,
    "a default argument": """
        def f(n_positions, d_model, base=10000.0, _table=posenc.sinusoidal):
            return _table(n_positions, d_model, base)
        """,
    "a closure": """
        def make():
            table = posenc.absolute.sinusoidal
            def f(n_positions, d_model, base=10000.0):
                return table(n_positions, d_model, base)
            return f
        f = make()
        """,
    "a class attribute": """
        class Helpers:
            table = staticmethod(posenc.sinusoidal)
        def f(n_positions, d_model, base=10000.0):
            return Helpers.table(n_positions, d_model, base)
        """,
    "a dict of helpers": """
        HELPERS = {"table": posenc.sinusoidal}
        def f(n_positions, d_model, base=10000.0):
            return HELPERS["table"](n_positions, d_model, base)
        """,
    "getattr at call time": """
        def f(n_positions, d_model, base=10000.0):
            return getattr(importlib.import_module("posenc.absolute"), "sinus" + "oidal")(n_positions, d_model, base)
        """,
    "an import at call time": """
        def f(n_positions, d_model, base=10000.0):
            from posenc.absolute import sinusoidal as table
            return table(n_positions, d_model, base)
        """,
    "importlib.reload": """
        def f(n_positions, d_model, base=10000.0):
            return importlib.reload(posenc.absolute).sinusoidal(n_positions, d_model, base)
        """,
    "a fresh load of the module's file": """
        def f(n_positions, d_model, base=10000.0):
            spec = importlib.util.spec_from_file_location("posenc.copy_of_absolute", posenc.absolute.__file__)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module.sinusoidal(n_positions, d_model, base)
        """,
    "a FunctionType copy of the code object": """
        copy = types.FunctionType(posenc.sinusoidal.__code__, posenc.absolute.__dict__, "mine",
                                  posenc.sinusoidal.__defaults__)
        def f(n_positions, d_model, base=10000.0):
            return copy(n_positions, d_model, base)
        """,
    "a renamed copy of the code object": """
        code = posenc.sinusoidal.__code__.replace(co_name="mine", co_qualname="mine")
        copy = types.FunctionType(code, posenc.absolute.__dict__, "mine", posenc.sinusoidal.__defaults__)
        def f(n_positions, d_model, base=10000.0):
            return copy(n_positions, d_model, base)
        """,
    "the torch module": """
        def f(n_positions, d_model, base=10000.0):
            module = posenc.nn.SinusoidalPositionalEncoding(d_model, max_len=n_positions, base=base)
            return module(torch.zeros(n_positions, d_model, dtype=torch.float64)).numpy()
        """,
    "the exercise's reference, through posenc.course": """
        def f(n_positions, d_model, base=10000.0):
            import posenc.course
            return posenc.course.EXERCISES["sinusoidal"].reference(n_positions, d_model, base)
        """,
    "a thread": """
        def f(n_positions, d_model, base=10000.0):
            out = []
            worker = threading.Thread(target=lambda: out.append(posenc.sinusoidal(n_positions, d_model, base)))
            worker.start()
            worker.join()
            return out[0]
        """,
    "a returned object that computes when it is read": """
        class Lazy:
            def __init__(self, *args):
                self.args = args
            def __array__(self, dtype=None, copy=None):
                return posenc.sinusoidal(*self.args)
        def f(n_positions, d_model, base=10000.0):
            return Lazy(n_positions, d_model, base)
        """,
    "the error caught and a fallback": """
        def f(n_positions, d_model, base=10000.0):
            try:
                return posenc.sinusoidal(n_positions, d_model, base)
            except Exception:
                return posenc.sinusoidal(n_positions, d_model, base)
        """,
}


# "a thread": the student's thread dies of the error; a forked check keeps its traceback in the
# child, the thread fallback (`make check`) lets pytest see it
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
@pytest.mark.parametrize("route", list(SINUSOIDAL), ids=list(SINUSOIDAL))
def test_posenc_fails_however_it_is_reached(route):
    result = check("sinusoidal", student(SINUSOIDAL[route]))
    assert result.status == "failed", result
    assert "switched off" in result.message and "posenc." in result.message, result
    assert result.hint and "write the computation yourself" in result.hint
    assert posenc.sinusoidal(3, 4).shape == (3, 4)  # and it works again outside the check


def test_catching_the_error_still_fails_and_says_so():
    result = check("sinusoidal", student(SINUSOIDAL["the error caught and a fallback"]))
    assert "caught the error" in result.message


def test_a_helper_module_of_the_students_own_does_not_help(tmp_path, monkeypatch):
    helper = "import posenc\n\ndef table(n, d, b):\n    return posenc.sinusoidal(n, d, b)\n"
    (tmp_path / "my_helpers.py").write_text(helper)
    monkeypatch.syspath_prepend(str(tmp_path))
    f = student("import my_helpers\ndef f(n_positions, d_model, base=10000.0):\n"
                "    return my_helpers.table(n_positions, d_model, base)\n")
    result = check("sinusoidal", f)
    assert result.status == "failed" and "posenc.absolute.sinusoidal" in result.message


@pytest.mark.parametrize(
    "sabotage",
    [
        "sys.settrace(None)",
        "code = posenc.sinusoidal.__code__; "
        "sys._posenc_switch_off_state.allowed = frozenset([(code.co_filename, code.co_qualname)])",
        "sys._posenc_switch_off_state.helpers.add(posenc.sinusoidal.__code__)",
        "sys._posenc_switch_off_state.active = False",
        "sys._posenc_switch_off_state.owner = None",
        "import threading; sys._posenc_switch_off_state.given_up.add(threading.current_thread())",
        "state = sys._posenc_switch_off_state; state.helpers_at_open = frozenset(state.helpers | "
        "{posenc.sinusoidal.__code__}); state.helpers.add(posenc.sinusoidal.__code__)",
    ],
)
@pytest.mark.parametrize("mode", ["fork", "thread"])
def test_turning_the_switch_off_off_is_caught_and_leaves_nothing_behind(sabotage, mode, monkeypatch):
    monkeypatch.setenv("POSENC_CHECK_ISOLATION", mode)
    f = student(f"""
        def f(n_positions, d_model, base=10000.0):
            {sabotage}
            return posenc.sinusoidal(n_positions, d_model, base)
        """)
    result = check("sinusoidal", f)
    assert result.status == "failed" and ("sys.settrace" in result.message or "switched off" in result.message)
    # in a thread the sabotage ran in this process: nothing of it may reach the next check
    assert threading.gettrace() is None
    plain = student(
        "def f(n_positions, d_model, base=10000.0):\n    return posenc.sinusoidal(n_positions, d_model, base)\n"
    )
    again = check("sinusoidal", plain)
    assert again.status == "failed" and "posenc.absolute.sinusoidal" in again.message, again


# a sibling that computes the same thing: a more general kernel, a batched variant, a derived quantity
SIBLINGS = {
    "rope": """
        def f(x, positions, base=10000.0):
            return posenc.apply_rope(x, positions, posenc.rope_inv_freq(x.shape[-1], base), layout="interleaved")
        """,
    "rope_half": """
        def f(x, positions, base=10000.0):
            module = posenc.nn.RotaryEmbedding(x.shape[-1], base=base)
            return module(torch.from_numpy(np.array(x)), torch.as_tensor(np.asarray(positions))).numpy()
        """,
    "ntk_base": """
        def f(base, factor, head_dim):
            inv_freq, _ = posenc.scaled_inv_freq("ntk", head_dim, base, factor)
            return float(inv_freq[1] ** (-head_dim / 2))
        """,
    "yarn_temperature": """
        def f(factor):
            return float(posenc.scaled_inv_freq("yarn", 64, 10000.0, max(factor, 1.0))[1])
        """,
    "turns_within_context": """
        def f(head_dim, base, context_length):
            return context_length / posenc.wavelengths(posenc.rope_inv_freq(head_dim, base))
        """,
    "similarity_by_offset": """
        def f(offsets, d_model, base=10000.0):
            table = posenc.sinusoidal(int(np.max(np.abs(offsets))) + 1, d_model, base)
            return np.array([table[0] @ table[abs(int(k))] for k in np.asarray(offsets)])
        """,
    "config_inv_freq": """
        def f(config):
            return posenc.from_config(config)[0].inv_freq
        """,
    "scaled_embedding": """
        def f(token_embeddings, position_table):
            import posenc.course.coursework.ch06 as chapter
            return chapter.scaled_embedding(token_embeddings, position_table)
        """,
    "paper_interpolate": """
        def f(lengths, values, length):
            return float(posenc.relative_to_length(lengths, values, length)[0] * values[0] / values[0])
        """,
}


@pytest.mark.parametrize("name", list(SIBLINGS), ids=list(SIBLINGS))
def test_a_sibling_function_is_switched_off_too(name):
    result = check(name, student(SIBLINGS[name]))
    assert result.status == "failed" and "switched off" in result.message, result


def test_the_helpers_a_task_allows_still_work():
    permute = student("""
        def f(w, n_heads):
            head_dim = w.shape[0] // n_heads
            perm = posenc.interleaved_to_half_permutation(head_dim)
            return w[np.concatenate([h * head_dim + perm for h in range(n_heads)])]
        """)
    assert check("permute_for_half", permute, seed=3).passed
    config = student("""
        def f(config):
            head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
            rotary_dim = int(head_dim * config.get("partial_rotary_factor", 1.0))
            speeds = posenc.rope_inv_freq(rotary_dim, config["rope_theta"])
            scaling = config.get("rope_scaling") or {}
            if scaling.get("type", scaling.get("rope_type")) == "linear":
                speeds = speeds / scaling["factor"]
            return speeds
        """)
    assert check("config_inv_freq", config, seed=3).passed
    assert "`posenc.rope_inv_freq`" in exercises.TASK_STATEMENTS["config_inv_freq"].checked_with


def test_the_students_view_of_an_exercise_has_no_answer_key():
    view = exercises.TASK_STATEMENTS["sinusoidal"]
    for hidden in ("reference", "mistakes", "hidden", "detectors", "plan"):
        assert not hasattr(view, hidden)
    assert view.function_name == "my_sinusoidal" and view.cases[0] == {"n_positions": 4, "d_model": 4}


def test_module_code_of_a_posenc_import_may_run_inside_the_window():
    # importing a posenc module that was not loaded yet is not a call of posenc
    f = student("""
        def f(factor):
            import posenc.papers  # already loaded or not: its top-level code defines functions
            return 1.0 if factor <= 1 else 0.1 * math.log(factor) + 1
        """)
    assert check("yarn_temperature", f).passed


def test_the_switch_off_costs_nothing_outside_a_check():
    import sys

    assert sys.gettrace() is None or "coverage" in type(sys.gettrace()).__module__
    assert np.allclose(posenc.sinusoidal(2, 2), [[0, 1], [np.sin(1), np.cos(1)]])
