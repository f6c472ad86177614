"""The Otter-Grader export, checked without Otter: every implementation exercise a question worth its
points, with its solution in the master notebook and nowhere in what Otter hands to students, and
a test per question that calls the exercise's own checker for the student's ``grader.check``; the
grade itself comes from the sealed grader's Otter plugin, which carries the course seed.

What Otter Assign makes of a master notebook is re-implemented here from its documented rules
(Otter Assign's notebook format: raw boundary cells; ``# BEGIN SOLUTION NO PROMPT`` ...
``# END SOLUTION`` regions removed, ``# BEGIN PROMPT`` strings put in their place; test cells
and config cells removed). ``make test`` does not install Otter: the check with Otter-Grader
7.0.0 itself (``otter assign``, then ``otter run`` on a right, a wrong and a blank submission,
compared with ``python -m posenc.course grade``) is the manual script ``tests/otter_end_to_end.py``,
whose results are in the teacher's guide.
"""

import ast
import json
import math
import re
import textwrap
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
import yaml

from posenc.course.__main__ import main
from posenc.course.coursework import ACTIVITIES
from posenc.course.editions import _walk
from posenc.course.otter_export import MANIFEST, otter_notebook, write_otter_source

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
SEED = 424_242  # the course seed of this test's export: in the assignment config (the autograder's) only
IMPLEMENTATIONS = [a for a in ACTIVITIES.values() if a.check]


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    out = tmp_path_factory.mktemp("otter") / "otter"
    written = write_otter_source(CHAPTERS, out, seed=SEED)
    return out, written


def book(stem):
    return nbformat.read(CHAPTERS / f"{stem}.ipynb", as_version=4)


def master(out, stem):
    return nbformat.read(out / stem / f"{stem}.ipynb", as_version=4)


def boundary(cell) -> str | None:
    """The first line of an Otter boundary cell (a raw cell such as ``# BEGIN QUESTION``), else None."""
    if cell.cell_type != "raw":
        return None
    return cell.source.splitlines()[0].strip()


def questions(notebook) -> dict:
    """Otter's question blocks, checked for its order of boundaries: name -> config, prompt, solutions, tests."""
    found, state, current = {}, "outside", None
    for cell in notebook.cells[1:]:
        mark = boundary(cell)
        if state == "outside":
            assert mark is None or mark == "# BEGIN QUESTION", mark
            if mark:
                current = {"config": yaml.safe_load(cell.source), "prompt": [], "solutions": [], "tests": []}
                state = "prompt"
        elif state == "prompt":
            assert mark in (None, "# BEGIN SOLUTION"), mark
            state = "solution" if mark else state
            if not mark:
                current["prompt"].append(cell)
        elif state in ("solution", "tests"):
            end = {"solution": "# END SOLUTION", "tests": "# END TESTS"}[state]
            assert mark in (None, end), mark
            if mark:
                state = "after-" + state
            else:
                current["solutions" if state == "solution" else "tests"].append(cell)
        elif state == "after-solution":
            assert mark == "# BEGIN TESTS", mark
            state = "tests"
        elif state == "after-tests":
            assert mark == "# END QUESTION", mark
            assert current["config"]["name"] not in found
            found[current["config"]["name"]] = current
            state = "outside"
    assert state == "outside", f"a question is left open ({state})"
    return found


def student_facing(notebook) -> str:
    """The text Otter Assign hands to students: config, boundaries and tests gone, solutions stripped."""
    kept, in_tests = [], False
    for cell in notebook.cells:
        mark = boundary(cell)
        if mark in ("# BEGIN TESTS", "# END TESTS"):
            in_tests = mark == "# BEGIN TESTS"
            continue
        if mark or in_tests:
            continue
        kept.append(strip_solution(cell.source) if cell.cell_type == "code" else cell.source)
    return "\n".join(kept)


def strip_solution(source: str) -> str:
    """Otter's solution removal for the markers the export uses."""
    out, inside = [], False
    for line in source.splitlines():
        text = line.strip()
        if text in ("# BEGIN SOLUTION NO PROMPT", "# BEGIN SOLUTION"):
            inside = True
        elif text == "# END SOLUTION":
            inside = False
        elif text.endswith("# SOLUTION") or text.endswith("# SOLUTION NO PROMPT"):
            continue
        elif text in ('""" # BEGIN PROMPT', '"""; # END PROMPT', '""" # END PROMPT'):
            continue
        elif not inside:
            out.append(line)
    return "\n".join(out)


def model_answer(notebook, label) -> str:
    cells = [c.source for role, c, lab in _walk(notebook) if role == "solution-code" and lab == label]
    assert len(cells) == 1, label
    return cells[0]


def body_lines(source: str) -> list[str]:
    """The lines of each function's body, without its docstring."""
    lines = source.splitlines()
    found = []
    for node in ast.parse(source).body:
        body = node.body[1:] if ast.get_docstring(node) else node.body
        for statement in body:
            found += [lines[n - 1].strip() for n in range(statement.lineno, statement.end_lineno + 1)]
    return [line for line in found if line and not line.startswith("#")]


def checker_call(source: str) -> ast.Call:
    calls = [
        n for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "check"
        and isinstance(n.func.value, ast.Name) and n.func.value.id == "exercises"
    ]
    assert len(calls) == 1, source
    return calls[0]


def test_every_chapter_with_an_implementation_exercise_has_a_master_notebook(export):
    out, written = export
    chapters = {a.chapter for a in IMPLEMENTATIONS}
    expected = {p.stem for p in CHAPTERS.glob("*.ipynb") if p.name[:2] in chapters}
    assert {p.parent.name for p in written} == expected and len(expected) == len(chapters)
    manifest = json.loads((out / MANIFEST).read_text())
    assert all((out / name).is_file() for name in manifest["files"])


def test_assignment_config_and_requirements(export):
    _, written = export
    pinned = [line for line in (ROOT / "requirements.txt").read_text().splitlines() if line.startswith("torch==")]
    for path in written:
        notebook = nbformat.read(path, as_version=4)
        first = notebook.cells[0]
        assert first.cell_type == "raw" and boundary(first) == "# ASSIGNMENT CONFIG"
        config = yaml.safe_load(first.source)
        assert config["name"] == path.stem and config["tests"] == {"ok_format": False}
        assert config["export_cell"] == {"pdf": False}
        for name in config.get("files", []):  # what the notebook reads, copied byte for byte
            source = CHAPTERS / name if name.startswith("data/") else ROOT / name
            assert (path.parent / name).read_bytes() == source.read_bytes()
        code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
        for data in (CHAPTERS / "data").rglob("*"):  # each data file the code names, and no other
            if data.is_file():
                listed = f"data/{data.relative_to(CHAPTERS / 'data').as_posix()}" in config.get("files", [])
                assert (data.name in code) == listed, (path.name, data.name)
        markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
        assert "../images/" not in markdown
        assert sorted(set(re.findall(r"(?<![\w./])images/([\w.-]+)", markdown))) == sorted(
            f[len("images/") :] for f in config.get("files", []) if f.startswith("images/")
        )
        requirements = (path.parent / config["requirements"]).read_text().splitlines()
        lines = [line for line in requirements if line.strip() and not line.startswith("#")]
        assert lines[0] == pinned[0] == "torch==2.13.0"  # before posenc: the CPU wheel, not another build
        assert lines[1].startswith("posenc") and len(lines) == 2


def test_each_implementation_exercise_is_a_question_with_its_points_solution_and_checker(export):
    out, _ = export
    for stem in sorted({p.parent.name for p in out.glob("*/*.ipynb")}):
        found = questions(master(out, stem))
        expected = [a for a in IMPLEMENTATIONS if a.chapter == stem[:2]]
        assert sorted(found) == sorted(a.check for a in expected), stem
        for activity in expected:
            question, exercise = found[activity.check], activity.exercise
            assert question["config"] == {"name": activity.check, "points": activity.points, "all_or_nothing": True}
            assert [c.cell_type for c in question["prompt"]] == ["markdown"]
            assert f":label: {activity.label}" in question["prompt"][0].source
            (solution,) = question["solutions"]
            answer = model_answer(book(stem), activity.label)
            assert body_lines(answer), activity.label
            for line in body_lines(answer):  # the whole model answer is in the master notebook
                assert line in solution.source, (activity.label, line)
            (test,) = question["tests"]  # the student's own check; the grade comes from the sealed plugin
            tree = ast.parse(test.source)
            config = yaml.safe_load(ast.literal_eval(tree.body[0].value).split("# BEGIN TEST CONFIG", 1)[1])
            assert config == {"name": f"{exercise.name}-public"}
            (function,) = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
            assert [a.arg for a in function.args.args] == [exercise.function_name]
            call = checker_call(test.source)
            assert [ast.literal_eval(call.args[0]), call.args[1].id] == [exercise.name, exercise.function_name]
            assert [k.arg for k in call.keywords] == ["quiet"]  # no seed in any test


def test_the_sealed_plugin_carries_the_seed_and_the_exercises(export):
    out, _ = export
    for stem in sorted({p.parent.name for p in out.glob("*/*.ipynb")}):
        notebook = master(out, stem)
        config = yaml.safe_load(notebook.cells[0].source)
        (plugin,) = config["plugins"]
        expected = [a.check for a in IMPLEMENTATIONS if a.chapter == stem[:2]]
        assert plugin == {"posenc.course.otter_plugin.SealedGrades": {"course_seed": SEED, "exercises": expected}}


def test_no_solution_prose_and_no_other_question(export):
    out, _ = export
    for stem in sorted({p.parent.name for p in out.glob("*/*.ipynb")}):
        sources = [c.source for c in master(out, stem).cells]
        for role, cell, _ in _walk(book(stem)):
            if role == "solution-prose":
                assert cell.source not in sources
        assert "{solution" not in "\n".join(sources)
        assert "exercises.check(" not in student_facing(master(out, stem))  # the chapter's check cells: Otter's now


def test_what_students_get_holds_no_solution_and_no_seed(export):
    out, _ = export
    for stem in sorted({p.parent.name for p in out.glob("*/*.ipynb")}):
        notebook = master(out, stem)
        assert str(SEED) in notebook.cells[0].source  # in the assignment config (the autograder's) ...
        released = student_facing(notebook)
        assert str(SEED) not in released  # ... and nowhere else
        chapter = book(stem)
        shown = {  # lines the chapter also shows outside its solutions
            line.strip()
            for role, cell, _ in _walk(chapter)
            if not role.startswith("solution")
            for line in cell.source.splitlines()
        }
        for activity in (a for a in IMPLEMENTATIONS if a.chapter == stem[:2]):
            for line in set(body_lines(model_answer(chapter, activity.label))) - shown:
                assert line not in released, (activity.label, line)


def _namespace():
    return {"np": np, "math": math, "torch": torch}


def _test_function(source: str):
    """The test function an exported test cell defines (not called: the cell's last line calls it)."""
    tree = ast.parse(source)
    (definition,) = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    namespace = _namespace()
    exec(compile(ast.Module([definition], []), "<test>", "exec"), namespace)
    return namespace[definition.name]


def _run_test(source: str, function) -> AssertionError | None:
    """Run an exported test cell against ``function``: None if it passes, else its AssertionError."""
    try:
        _test_function(source)(function)
    except AssertionError as error:
        return error
    return None


def _code(tree: ast.Module) -> str:
    """The statements of a module, with the string statements after each function's docstring (Otter's
    prompt) dropped: comments, such as Otter's solution markers, are not in the tree anyway."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = node.body[:1] + [
                s for s in node.body[1:] if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            ]
    return ast.dump(tree)


def test_the_solution_cell_runs_the_model_answer_and_the_prompt_raises(export):
    """Run as it stands (Otter runs the master's tests against it), the solution cell is the chapter's model
    answer, statement for statement; what students get raises NotImplementedError naming the exercise."""
    out, _ = export
    for stem in sorted({p.parent.name for p in out.glob("*/*.ipynb")}):
        for name, question in questions(master(out, stem)).items():
            activity = next(a for a in IMPLEMENTATIONS if a.check == name)
            (solution,) = question["solutions"]
            assert _code(ast.parse(solution.source)) == _code(ast.parse(model_answer(book(stem), activity.label)))
            stub = _namespace()
            exec(strip_solution(solution.source), stub)
            function = stub[activity.exercise.function_name]
            arguments = [None] * function.__code__.co_argcount
            with pytest.raises(NotImplementedError, match=activity.label):
                function(*arguments)


class _Verdict:
    """What a fake checker returns: ``passed`` and the text a failed test must show."""

    def __init__(self, passed):
        self.passed = passed

    def __str__(self):
        return "the checker's message and hint"


def test_each_test_asserts_the_verdict_of_the_exercises_own_checker(export, monkeypatch):
    """Each test cell calls posenc.exercises.check with the exercise's name, the student's function and
    no seed, passes when the checker passes and fails with the checker's text."""
    import posenc.exercises

    out, _ = export
    seen = set()
    for stem in sorted({p.parent.name for p in out.glob("*/*.ipynb")}):
        for name, question in questions(master(out, stem)).items():
            exercise = next(a.exercise for a in IMPLEMENTATIONS if a.check == name)
            for test in question["tests"]:
                for passed in (True, False):
                    calls = []

                    def fake_check(*args, _calls=calls, _passed=passed, **kwargs):
                        _calls.append((args, kwargs))
                        return _Verdict(_passed)

                    monkeypatch.setattr(posenc.exercises, "check", fake_check)
                    student = object()  # the function under test, passed through untouched
                    error = _run_test(test.source, student)
                    assert calls == [((exercise.name, student), {"quiet": True})]
                    assert (error is None) if passed else "the checker's message and hint" in str(error)
                seen.add(name)
    assert seen == {a.check for a in IMPLEMENTATIONS}


class _Test:
    def __init__(self, possible):
        self.possible, self.score = possible, 0

    def update_score(self, score):
        self.score = score


class _Results:
    """The part of Otter's GradingResults the plugin uses (otter/test_files/__init__.py, Otter 7.0.0)."""

    def __init__(self, names):
        self.results = {name: _Test(4) for name in names}
        self.output = None

    def update_score(self, name, score):
        self.results[name].update_score(score)

    def set_output(self, text):
        self.output = text


def _plugin_score(out, stem, source, seed=SEED):
    from posenc.course.otter_plugin import SealedGrades

    notebook = master(out, stem)
    notebook.cells = [notebook.cells[0], nbformat.v4.new_code_cell(source)]
    exercises = yaml.safe_load(notebook.cells[0].source)["plugins"][0][
        "posenc.course.otter_plugin.SealedGrades"]["exercises"]
    plugin = SealedGrades("submission.ipynb", {}, {"course_seed": seed, "exercises": exercises})
    executed = plugin.before_execution(notebook)
    assert "my_" not in "\n".join(c.source for c in executed.cells)  # no student code reaches Otter's kernel
    results = _Results(exercises)
    plugin.after_grading(results)
    return {name: test.score for name, test in results.results.items()}, results.output


def test_the_plugin_grades_sealed_with_the_hidden_cases(export):
    """With the real checker (chapter 8's RoPE): the master's solution gets the points and the stub none; a RoPE
    that turns only the first 8 pairs is right on every case of the text (heads up to 16 wide) but not on the
    course seed's wider heads: the plugin gives it no points, and a patched checker changes nothing."""
    out, _ = export
    question = questions(master(out, "08_rope"))["rope"]
    (solution,) = question["solutions"]
    prelude = "import numpy as np\n"
    assert _plugin_score(out, "08_rope", prelude + solution.source)[0] == {"rope": 4}
    assert _plugin_score(out, "08_rope", prelude + strip_solution(solution.source))[0] == {"rope": 0}
    narrow = prelude + textwrap.dedent('''
        def my_rope(x, positions, base=10000.0):
            d = x.shape[-1]
            theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
            theta[8:] = 0.0
            angles = np.asarray(positions, dtype=np.float64)[:, None] * theta[None, :]
            a, b = x[..., 0::2], x[..., 1::2]
            out = np.empty(x.shape, dtype=np.float64)
            out[..., 0::2] = a * np.cos(angles) - b * np.sin(angles)
            out[..., 1::2] = a * np.sin(angles) + b * np.cos(angles)
            return out
    ''')
    assert _test_function(question["tests"][0].source)  # the public test alone would pass it:
    namespace = _namespace()
    exec(narrow, namespace)
    assert _run_test(question["tests"][0].source, namespace["my_rope"]) is None
    scores, output = _plugin_score(out, "08_rope", narrow)
    assert (scores == {"rope": 0} and "Not yet" in output) or "failed" in output
    forged = narrow + textwrap.dedent('''
        import posenc.exercises
        posenc.exercises.check = lambda *args, **kwargs: type("R", (), {"passed": True})()
    ''')
    assert _plugin_score(out, "08_rope", forged)[0] == {"rope": 0}


def test_the_command_refuses_a_folder_it_did_not_write(tmp_path, capsys):
    chapter = str(CHAPTERS / "08_rope.ipynb")
    foreign = tmp_path / "course"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    assert main(["otter", chapter, str(foreign), "--course-seed", "7"]) == 1
    assert "not an earlier Otter export" in capsys.readouterr().err
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"] and (foreign / "notes.txt").read_text() == "mine"

    out = tmp_path / "otter"
    assert main(["otter", chapter, str(out), "--course-seed", "7"]) == 0
    (out / "08_rope" / "my-notes.md").write_text("kept")
    assert main(["otter", chapter, str(out), "--course-seed", "8"]) == 0  # an earlier export: updated
    assert (out / "08_rope" / "my-notes.md").read_text() == "kept"
    assert "course_seed: 8\n" in nbformat.read(out / "08_rope" / "08_rope.ipynb", as_version=4).cells[0].source
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging folder left


def test_the_command_draws_a_seed_and_needs_an_implementation_exercise(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("POSENC_COURSE_SEED", raising=False)
    assert main(["otter", str(CHAPTERS / "08_rope.ipynb"), str(tmp_path / "a")]) == 0  # a seed drawn for it
    drawn = json.loads((tmp_path / "a" / MANIFEST).read_text())["course seed"]
    assert main(["otter", str(CHAPTERS / "08_rope.ipynb"), str(tmp_path / "a")]) == 0  # updated: the seed stays
    assert json.loads((tmp_path / "a" / MANIFEST).read_text())["course seed"] == drawn
    assert isinstance(drawn, int) and f"course_seed: {drawn}\n" in nbformat.read(
        tmp_path / "a" / "08_rope" / "08_rope.ipynb", as_version=4).cells[0].source
    monkeypatch.setenv("POSENC_COURSE_SEED", "11")
    assert main(["otter", str(CHAPTERS / "12_lab.ipynb"), str(tmp_path / "b")]) == 1
    assert "no notebook with an implementation exercise" in capsys.readouterr().err
    assert main(["otter", str(CHAPTERS / "08_rope.ipynb"), str(tmp_path / "c"), "--posenc", "numpy"]) == 1
    assert "posenc" in capsys.readouterr().err
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()
    assert main(["otter", str(CHAPTERS / "08_rope.ipynb"), str(tmp_path / "d")]) == 0  # the seed from the env
    assert "course_seed: 11\n" in nbformat.read(
        tmp_path / "d" / "08_rope" / "08_rope.ipynb", as_version=4).cells[0].source


def test_a_check_before_its_solution_is_refused():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        md("```{exercise} RoPE\n:label: ex-ch08-rope\nWrite it.\n```"),
        code('exercises.check("rope", my_rope)'),
        code("def my_rope(x, positions, base=10000.0):\n    return x", metadata={"tags": ["solution"]}),
    ]
    with pytest.raises(ValueError, match="ex-ch08-rope"):
        otter_notebook(notebook, seed=1)
