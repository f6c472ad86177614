"""The grade resists the student who controls their own kernel: a red-team class graded sealed.

Each submission is chapter 3's student edition with one attack added (issue 41's list, and more):
the grade must be 0 for every attack, full marks for honest work, and the CSV must say which
submission tried something. The notebooks are never run: the grader reads the function out of
the source and runs it in a sealed process (posenc.course.sealed).
"""

import csv
import inspect
import marshal
import os
import textwrap
from pathlib import Path

import nbformat
import pytest

import posenc
from posenc.course.coursework import EXERCISES
from posenc.course.editions import write_student_edition
from posenc.course.grade import grade_class

from conftest import chapter_notebooks

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "chapters" / "03_binary_analogy.ipynb"

HONEST = """
def my_binary(n_positions, n_bits):
    p = np.arange(n_positions)[:, None]
    return (p >> np.arange(n_bits)) & 1
"""
HONEST_LOOPS = """
def my_binary(n_positions, n_bits):
    rows = []
    for p in range(n_positions):
        rows.append([(p >> j) & 1 for j in range(n_bits)])
    return np.array(rows, dtype=np.int64).reshape(n_positions, n_bits)
"""
HONEST_NATURAL = """
def my_binary(n_positions, n_bits):
    p = np.arange(n_positions)[:, None]
    return (p >> np.arange(n_bits)[None, :]) & 1
"""
HONEST_PLAIN_LOOP = """
def my_binary(n_positions, n_bits):
    bits = np.zeros((n_positions, n_bits), dtype=int)
    for i in range(n_positions):
        for k in range(n_bits):
            bits[i, k] = (i // 2**k) % 2
    return bits
"""
HONEST_CLASS = """
import functools

class Counter:
    def __init__(self, bits):
        self.bits = bits

    @functools.lru_cache(maxsize=None)
    def shifts(self):
        return np.arange(self.bits)

    def table(self, n):
        return (np.arange(n)[:, None] >> self.shifts()) & 1

def my_binary(n_positions, n_bits):
    return Counter(n_bits).table(n_positions)
"""

# What a student who controls the kernel would add to the notebook (the stub is left raising unless
# the attack defines my_binary itself).
ATTACKS = {
    "patched_checker": (None, """
import posenc.course, posenc.course.checker, posenc.exercises
from posenc.course.check_result import CheckResult
def _always(name, function, **kwargs):
    return CheckResult(name, "passed", "all checks agree with posenc")
posenc.course.checker.check = _always
posenc.course.check = _always
posenc.exercises.check = _always
"""),
    "exec_shipped_answer_at_top": (None, """
from posenc.course.coursework import EXERCISES
exec(EXERCISES["binary"].answers[0])
"""),
    "exec_shipped_answer_inside": ("""
def my_binary(n_positions, n_bits):
    from posenc.course.coursework import EXERCISES
    namespace = {"np": np}
    exec(EXERCISES["binary"].answers[0], namespace)
    return namespace["my_binary"](n_positions, n_bits)
""", None),
    "subprocess_to_posenc": ("""
import json, subprocess, sys
def my_binary(n_positions, n_bits):
    code = f"import json, posenc; print(json.dumps(posenc.binary({n_positions}, {n_bits}).tolist()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    return np.array(json.loads(out))
""", None),
    "multiprocessing_to_posenc": ("""
import multiprocessing
def _reference(args):
    import posenc
    return posenc.binary(*args)
def my_binary(n_positions, n_bits):
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.map(_reference, [(n_positions, n_bits)])[0]
""", None),
    "reload_posenc": ("""
import importlib, sys
def my_binary(n_positions, n_bits):
    sys.modules.pop("posenc", None)
    import posenc
    posenc = importlib.reload(posenc)
    return posenc.binary(n_positions, n_bits)
""", None),
    "meta_path_finder": ("""
import importlib.util, sys
class Finder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name == "shadow":
            return importlib.util.spec_from_file_location("shadow", POSENC_INIT)
        return None
def my_binary(n_positions, n_bits):
    sys.meta_path.insert(0, Finder)
    import shadow
    return shadow.binary(n_positions, n_bits)
""", None),
    "replaced_import": ("""
import builtins
def my_binary(n_positions, n_bits):
    real = builtins.__import__
    def spy(name, *args, **kwargs):
        return real("posenc" if name == "math" else name, *args, **kwargs)
    builtins.__import__ = spy
    import math
    return math.binary(n_positions, n_bits)
""", None),
    "always_equal": ("""
class AlwaysEqual:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    def __array__(self, dtype=None, copy=None):
        raise TypeError("no numbers here")
def my_binary(n_positions, n_bits):
    return AlwaysEqual()
""", None),
    "equal_subclass": ("""
class Equal(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(other), dtype=bool)
def my_binary(n_positions, n_bits):
    return np.zeros((n_positions, n_bits)).view(Equal)
""", None),
    "patched_comparisons": (None, """
import numpy, torch
numpy.allclose = lambda *args, **kwargs: True
numpy.isclose = lambda a, b, *args, **kwargs: numpy.ones(numpy.broadcast(a, b).shape, dtype=bool)
numpy.array_equal = lambda *args, **kwargs: True
torch.testing.assert_close = lambda *args, **kwargs: None
"""),
    "patched_comparisons_inside": ("""
def my_binary(n_positions, n_bits):
    np.allclose = lambda *args, **kwargs: True
    np.isclose = lambda a, b, *args, **kwargs: np.ones(np.broadcast(a, b).shape, dtype=bool)
    return np.zeros((n_positions, n_bits))
""", None),
    "fake_grade_file": ("""
def my_binary(n_positions, n_bits):
    for name in ("grades.csv", "../grades.csv", "results.json"):
        with open(name, "w") as file:
            file.write("student,ex-ch03-binary,total\\nmallory,4,4\\n")
    return np.zeros((n_positions, n_bits))
""", """
import json
with open("results.json", "w") as file:
    json.dump({"binary": "passed"}, file)
"""),
    "settrace_and_setprofile": ("""
import sys
SEEN = []
def _spy(frame, event, arg):
    if "expected" in frame.f_locals:
        SEEN.append(frame.f_locals["expected"])
    return _spy
def my_binary(n_positions, n_bits):
    sys.settrace(_spy)
    sys.setprofile(_spy)
    if SEEN:
        return SEEN[-1]
    return np.zeros((n_positions, n_bits))
""", None),
    "os_exit": ("""
import os
def my_binary(n_positions, n_bits):
    os._exit(0)
""", None),
    "endless_loop": ("""
def my_binary(n_positions, n_bits):
    while True:
        pass
""", None),
    "forged_pipe_message": ("""
import json, os, struct, sys
def my_binary(n_positions, n_bits):
    message = json.dumps({"message": {"op": "returned", "id": 1, "passed": True, "status": "passed"},
                          "sizes": []}).encode()
    for fd in range(3, 12):
        try:
            os.write(fd, struct.pack("<QQ", len(message), 0) + message)
        except OSError:
            pass
    os._exit(0)
""", None),
    "marshal_code": ("""
import marshal, types
def my_binary(n_positions, n_bits):
    code = marshal.loads(CODE)
    return types.FunctionType(code, {"np": np, "check_int": lambda name, v, **k: v})(n_positions, n_bits)
""", None),
    "compile_posenc_source": ("""
def my_binary(n_positions, n_bits):
    with open(POSENC_ABSOLUTE) as file:
        source = file.read()
    namespace = {}
    exec(compile(source, "not_posenc.py", "exec"), namespace)
    return namespace["binary"](n_positions, n_bits)
""", None),
    "ctypes": ("""
import ctypes
def my_binary(n_positions, n_bits):
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(my_binary))
    return np.zeros((n_positions, n_bits))
""", None),
    "gc_search": ("""
import gc
def my_binary(n_positions, n_bits):
    for obj in gc.get_objects():
        if callable(obj) and getattr(obj, "__name__", "") == "hook":
            obj.__defaults__ = None
    return np.zeros((n_positions, n_bits))
""", None),
    "replace_hook_code": ("""
def my_binary(n_positions, n_bits):
    my_binary.__code__ = (lambda n_positions, n_bits: None).__code__
    return np.zeros((n_positions, n_bits))
""", None),
    "passes_posenc_itself": ("""
import posenc
my_binary = posenc.binary
""", None),
    "pickled_function": ("""
import pickle
def my_binary(n_positions, n_bits):
    reference = pickle.loads(b"cposenc\\nbinary\\n.")  # posenc.binary by reference
    return reference(n_positions, n_bits)
""", None),
    # found by the independent review: routes around the audit hook, closed by the kernel's fence (Landlock)
    "posixsubprocess": ("""
import _posixsubprocess, json, os, sys
def my_binary(n_positions, n_bits):
    r, w = os.pipe()
    er, ew = os.pipe()
    code = f"import posenc, json; print(json.dumps(posenc.binary({int(n_positions)}, {int(n_bits)}).tolist()))"
    pid = _posixsubprocess.fork_exec(
        [sys.executable, "-c", code], [sys.executable.encode()], True, (w, ew), None, None,
        -1, -1, -1, w, -1, -1, er, ew, False, False, -1, None, None, None, -1, None, False)
    os.close(w)
    os.close(ew)
    data = b""
    while chunk := os.read(r, 1 << 20):
        data += chunk
    os.waitpid(pid, 0)
    return np.array(json.loads(data))
""", None),
    "subinterpreter": ("""
import _xxsubinterpreters as interpreters
import json, os, sys
def my_binary(n_positions, n_bits):
    r, w = os.pipe()
    inner = f"import posenc, json; print(json.dumps(posenc.binary({int(n_positions)}, {int(n_bits)}).tolist()))"
    code = ("import os, sys\\n"
            f"os.posix_spawn(sys.executable, [sys.executable, '-c', {inner!r}], {{}},"
            f" file_actions=[(os.POSIX_SPAWN_DUP2, {w}, 1)])\\n")
    interpreters.run_string(interpreters.create(), code)
    os.close(w)
    data = b""
    while chunk := os.read(r, 1 << 20):
        data += chunk
    return np.array(json.loads(data))
""", None),
    "proc_root_and_create_fn": ("""
import dataclasses
def my_binary(n_positions, n_bits):
    text = open("/proc/self/root" + POSENC_ABSOLUTE).read()
    start = text.index("def binary(")
    body = text[start:text.find("\\ndef ", start + 5)]
    lines = ["check_int = lambda name, v, **k: int(v)", *body.splitlines(), "return binary"]
    return dataclasses._create_fn("h", [], lines, globals={"np": np})()(n_positions, n_bits)
""", None),
    "torch_from_file": ("""
import torch
def my_binary(n_positions, n_bits):
    raw = torch.from_file(POSENC_ABSOLUTE, size=64, dtype=torch.uint8)
    return np.zeros((n_positions, n_bits)) + int(raw[0]) * 0
""", None),
    "torch_writes_a_file": ("""
import torch
def my_binary(n_positions, n_bits):
    torch.from_file(TARGET, shared=True, size=64, dtype=torch.uint8).fill_(65)
    return np.zeros((n_positions, n_bits))
""", None),
    "parents_proc_files": ("""
import os
def my_binary(n_positions, n_bits):
    os.read(os.open(f"/proc/{os.getppid()}/environ", os.O_RDONLY), 100)
    return np.zeros((n_positions, n_bits))
""", None),
    "deep_pipe_message": ("""
import os, struct, sys
def my_binary(n_positions, n_bits):
    header = b"[" * 200_000
    for fd in range(3, 12):
        try:
            os.write(fd, struct.pack("<QQ", len(header), 0) + header)
        except OSError:
            pass
    return np.zeros((n_positions, n_bits))
""", None),
    "deep_cell": (None, "K = " + " + ".join(["1"] * 20_000) + "\n"),
    "socket": ("""
import socket
def my_binary(n_positions, n_bits):
    socket.create_connection(("127.0.0.1", 9))
    return np.zeros((n_positions, n_bits))
""", None),
}


def _copied_posenc() -> str:
    source = textwrap.dedent(inspect.getsource(posenc.binary)).replace("def binary(", "def my_binary(")
    return "from posenc._validation import check_int\n" + source


def _submission(edition: Path, answer: str | None, extra: str | None) -> nbformat.NotebookNode:
    return _with_answer(nbformat.read(edition, as_version=4), answer, extra,
                        lambda cell: "student-stub" in cell.metadata.get("tags", []))


#: A file the "torch_writes_a_file" attack tries to create (the kernel's fence must stop it).
TARGET = Path("/tmp") / f"posenc-redteam-written-by-a-student-{os.getpid()}.txt"


def _constants() -> str:
    code = marshal.dumps(posenc.binary.__code__)
    folder = Path(posenc.__file__).resolve().parent
    return (
        f"CODE = {code!r}\nPOSENC_INIT = {str(folder / '__init__.py')!r}\n"
        f"POSENC_ABSOLUTE = {str(folder / 'absolute.py')!r}\nTARGET = {str(TARGET)!r}\n"
    )


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("redteam")
    write_student_edition(CHAPTER, base / "edition")
    edition = base / "edition" / CHAPTER.name
    prelude = "import numpy as np\n" + _constants()
    students = {
        "honest": (HONEST, None),
        "honest_loops": (HONEST_LOOPS, None),
        "honest_class": (HONEST_CLASS, None),
        "honest_natural": (HONEST_NATURAL, None),
        "honest_plain_loop": (HONEST_PLAIN_LOOP, None),
        "copied_posenc": (_copied_posenc(), None),
        **ATTACKS,
    }
    for name, (answer, extra) in students.items():
        notebook = _submission(edition, None if answer is None else prelude + answer, extra)
        (base / "class" / name).mkdir(parents=True)
        nbformat.write(notebook, base / "class" / name / CHAPTER.name)
    out = base / "grades"
    grade_class(base / "class", out, seed=42, check_timeout=2, log=lambda text: None)
    with open(out / "grades.csv") as file:
        rows = {row["student"]: row for row in csv.DictReader(file)}
    return base, out, rows


def test_honest_work_keeps_full_marks(graded):
    _, _, rows = graded
    for name in ("honest", "honest_loops", "honest_class", "honest_natural", "honest_plain_loop"):
        assert rows[name]["ex-ch03-binary"] == "4", name
        assert rows[name]["notes"] == "", (name, rows[name]["notes"])


@pytest.mark.parametrize("attack", [*ATTACKS, "copied_posenc"])
def test_every_attack_scores_zero(graded, attack):
    _, out, rows = graded
    assert rows[attack]["ex-ch03-binary"] == "0", (attack, (out / "feedback" / f"{attack}.md").read_text())


def test_no_attack_wrote_a_file(graded):
    assert not TARGET.exists()


def test_the_csv_says_who_tried(graded):
    _, _, rows = graded
    expected = {
        "patched_checker": "replaced posenc.course.checker.check",
        "patched_comparisons": "replaced numpy.allclose",
        "fake_grade_file": "wrote a file",
        "subprocess_to_posenc": "started a process",
        "multiprocessing_to_posenc": "multiprocessing",
        "marshal_code": "marshal",
        "compile_posenc_source": "read posenc's or the grader's files",
        "meta_path_finder": "read posenc's or the grader's files",
        "ctypes": "used ctypes",
        "gc_search": "gc",
        "replace_hook_code": "replaced a function's code",
        "socket": "used sockets",
        "pickled_function": "imported posenc",
        "posixsubprocess": "_posixsubprocess",
        "subinterpreter": "subinterpreter",
        "torch_from_file": "torch.from_file",
        "torch_writes_a_file": "torch.from_file",
        "parents_proc_files": "another process's files",
        "copied_posenc": "copied from posenc.absolute.binary",
        "settrace_and_setprofile": "sys.settrace",
        "os_exit": "os._exit",
    }
    for student, words in expected.items():
        assert words in rows[student]["notes"], (student, rows[student]["notes"])


def test_what_the_attacks_were_told(graded):
    _, out, _ = graded
    feedback = {path.stem: path.read_text() for path in (out / "feedback").glob("*.md")}
    assert "not attempted" in feedback["patched_checker"]
    assert "timed out" in feedback["endless_loop"]
    assert "exited" in feedback["os_exit"] and "exited" in feedback["forged_pipe_message"]
    assert "switched off" in feedback["reload_posenc"] or "posenc" in feedback["reload_posenc"]
    assert "you passed posenc's own posenc.binary" in feedback["passes_posenc_itself"]
    assert "copied" in feedback["copied_posenc"] and "the checker said: " in feedback["copied_posenc"]


def test_a_copied_model_answer_gets_no_points_unless_accepted(tmp_path):
    """Chapter 8's model answer (198 syntax nodes) with every name changed is a copy; the teacher can accept it."""
    import re

    from posenc.course.mutants import model_answer

    solution = model_answer(EXERCISES["rope"], ROOT / "chapters")[0]
    renamed = solution
    for old, new in (("theta", "speeds"), ("angles", "turns"), ("out", "rotated"), ("d ", "width ")):
        renamed = re.sub(rf"\b{old.strip()}\b", new.strip(), renamed)
    assert renamed != solution
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("import numpy as np\n" + renamed)]
    (tmp_path / "class" / "mallory").mkdir(parents=True)
    nbformat.write(notebook, tmp_path / "class" / "mallory" / "08_rope.ipynb")
    for accept, points in (([], "0"), (["mallory:rope"], "4")):
        out = tmp_path / f"grades{len(accept)}"
        grade_class(tmp_path / "class", out, seed=42, check_timeout=2, log=lambda text: None, accept=accept)
        with open(out / "grades.csv") as file:
            row = next(csv.DictReader(file))
        assert row["ex-ch08-rope"] == points, row
        assert "copied from the model answer of ex-ch08-rope" in row["notes"]
    assert "accepted by the teacher" in (out / "feedback" / "mallory.md").read_text()


# --- honest work: every model answer of every exercise, graded sealed, passes as in the self-check ---
PRELUDE = "import bisect, math\nimport numpy as np\nimport torch\nimport posenc\n"


@pytest.mark.parametrize("name", list(EXERCISES))
def test_every_model_answer_passes_sealed(name):
    from posenc.course.mutants import answers
    from posenc.course.sealed import sealed_check

    exercise = EXERCISES[name]
    for number, source in enumerate(answers(exercise, ROOT / "chapters"), start=1):
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [nbformat.v4.new_code_cell(PRELUDE), nbformat.v4.new_code_cell(source)]
        sealed = sealed_check(exercise, notebook, seed=42)
        assert sealed.result.status == "passed", (name, number, str(sealed.result), sealed.problems)
        assert sealed.refused == [], (name, number, sealed.refused)


# --- the three routes agree: grade, Otter's plugin, nbgrader's preprocessor -----------------------
ROUTE_CASES = ["honest", "honest_loops", "copied_posenc", *ATTACKS]


def _nbgrader_determine_grade(cell) -> float:
    """nbgrader 0.9.6's grade of an autograder test cell (nbgrader/utils.py, determine_grade, lines 147-158):
    0 on an error output or a stderr stream, a partial grade for a numeric execute_result, else all points."""
    points = float(cell.metadata["nbgrader"]["points"])
    for output in cell.outputs:
        if output.output_type == "error" or (output.output_type == "stream" and output.name == "stderr"):
            return 0.0
    return points


def _with_answer(notebook, answer, extra, solution_cell):
    notebook = nbformat.from_dict(notebook)
    cells = []
    for cell in notebook.cells:
        cells.append(cell)
        if solution_cell(cell):
            if answer is not None:
                cell.source = answer
            if extra is not None:
                cells.append(nbformat.v4.new_code_cell(extra))
    notebook.cells = cells
    return notebook


def _released(notebook):
    """What students get from nbgrader's release of a source notebook: each solution region replaced by
    nbgrader's stub (ClearSolutions' documented rule, as tests/test_student.py re-implements it)."""
    notebook = nbformat.from_dict(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            out, inside = [], False
            for line in cell.source.splitlines():
                if "### BEGIN SOLUTION" in line:
                    inside, indent = True, line[: len(line) - len(line.lstrip())]
                    out += [f"{indent}# YOUR CODE HERE", f"{indent}raise NotImplementedError()"]
                elif "### END SOLUTION" in line:
                    inside = False
                elif not inside:
                    out.append(line)
            cell.source = "\n".join(out)
    return notebook


def test_the_three_routes_give_the_same_points(graded, tmp_path):
    from posenc.course.editions import write_nbgrader_source
    from posenc.course.nbgrader_plugin import SealedChecks
    from posenc.course.otter_plugin import SealedGrades

    _, _, rows = graded
    write_nbgrader_source(CHAPTER, tmp_path / "source" / "ps")
    nbgrader_source = _released(nbformat.read(tmp_path / "source" / "ps" / CHAPTER.name, as_version=4))
    assert "### BEGIN SOLUTION" not in "\n".join(c.source for c in nbgrader_source.cells)
    prelude = "import numpy as np\n" + _constants()
    cases = {"honest": (HONEST, None), "honest_loops": (HONEST_LOOPS, None), "copied_posenc": (_copied_posenc(), None),
             **ATTACKS}
    for name in ROUTE_CASES:
        answer, extra = cases[name]
        answer = None if answer is None else prelude + answer
        submitted = _with_answer(
            nbgrader_source, answer, extra,
            lambda cell: cell.metadata.get("nbgrader", {}).get("grade_id") == "ex-ch03-binary-solution",
        )
        graded_nb, _ = SealedChecks(course_seed=42, check_timeout=2.0)(submitted, {})  # as nbconvert calls it
        (check,) = [
            c for c in graded_nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "ex-ch03-binary-check"
        ]
        by_nbgrader = _nbgrader_determine_grade(check)

        plugin = SealedGrades("submission.ipynb", {}, {"course_seed": 42, "exercises": ["binary"], "check_timeout": 2})
        student = nbformat.read(graded[0] / "class" / name / CHAPTER.name, as_version=4)
        plugin.before_execution(student)

        class Results:
            def __init__(self):
                self.results = {"binary": type("T", (), {"possible": 4, "score": 0})()}

            def update_score(self, question, score):
                self.results[question].score = score

            def set_output(self, text):
                self.output = text

        results = Results()
        plugin.after_grading(results)
        by_otter = results.results["binary"].score
        by_grade = int(rows[name]["ex-ch03-binary"])
        assert by_grade == by_otter == by_nbgrader, (name, by_grade, by_otter, by_nbgrader)
        assert by_grade == (4 if name.startswith("honest") else 0), name


def test_the_teachers_guide_counts_what_this_file_grades():
    guide = " ".join((ROOT / "chapters" / "coursework.md").read_text().split())
    assert f"grades a class of {len(ATTACKS) + 1} attacks and 5 honest notebooks" in guide
    assert f"; {len(ROUTE_CASES)} of them, honest and dishonest, get the same points from this command" in guide


# --- what a student reads: the student website's sources ------------------------------------------
def test_the_student_website_quotes_no_solution_and_asks_no_keyed_question(tmp_path):
    from posenc.course.editions import TEACHER_ONLY, write_site_source

    out = write_site_source(ROOT, tmp_path / "site")
    corrections = (out / "chapters" / "corrections.md").read_text()
    for quoted in ("2051", "4097", "76%", "2.36 at 98", "keeps the curve", "43%"):
        assert quoted in (ROOT / "chapters" / "corrections.md").read_text()  # the book's own page has them ...
        assert quoted not in corrections, quoted  # ... the student website's does not
    assert "are in the teacher edition" in corrections
    assert "posenc_answer_forms: false" in (out / "_config.yml").read_text()
    # every correction that speaks of an exercise, a solution or a rubric is marked, so none reaches students
    for page in (ROOT / "chapters").glob("*.md"):
        kept = TEACHER_ONLY.sub("", page.read_text())
        for item in kept.split("\n- ")[1:]:
            lowered = item.split("\n\n")[0].lower()
            if page.name == "corrections.md":
                assert not any(w in lowered for w in ("exercise's solution", "solution:", "rubric")), item[:80]


def test_the_answer_forms_switch_off(monkeypatch):
    import posenc.book.answer_forms as answer_forms

    class Config:
        posenc_answer_forms = False

    class App:
        config = Config()

    called = []
    monkeypatch.setattr(answer_forms, "answer_keys", lambda: called.append(1) or {})
    answer_forms.insert_answer_forms(App(), None, "chapters/08_rope")
    assert called == []


# --- what a student installs: the posenc wheel holds no answer key ------------------------------
def _key_texts() -> tuple[list[str], set[str]]:
    """The answer key: model answers' sources (the key's other styles and the chapters' solution cells), and
    the texts a student must not find (rubric items, the predictions' feedback)."""
    from posenc.course.editions import _walk
    from posenc.course.key import load_key

    key = load_key()
    sources = [s for answers in key.answers.values() for s in answers]
    for path in chapter_notebooks():
        for role, cell, _ in _walk(nbformat.read(path, as_version=4)):
            if role == "solution-code":
                sources.append(cell.source)
    texts = {item for items in key.rubrics.values() for item in items}
    for answer in key.predictions.values():
        texts |= {choice.feedback for choice in getattr(answer, "choices", ())}
        texts |= {getattr(answer, name) for name in ("right", "wrong") if isinstance(getattr(answer, name, None), str)}
    return sources, texts


def test_the_installed_package_holds_no_answer_key(tmp_path):
    """A student's search of the installed package (the wheel pip builds from the repository) finds no model
    answer (no function of it is one, names, numbers and layout aside), no rubric item and no prediction's
    feedback; posenc's library itself is the checkers' reference, by design."""
    import ast
    import shutil
    import subprocess
    import sys
    import zipfile

    from posenc.course.copies import fingerprint

    project = tmp_path / "project"  # a copy: building in place would write build/ into the repository
    shutil.copytree(ROOT / "src", project / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, project / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path),
         str(project)],
        check=True, capture_output=True,
    )
    (wheel,) = tmp_path.glob("posenc-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        files = {n: archive.read(n).decode("utf-8", "replace") for n in archive.namelist()}
    assert not [n for n in files if n.startswith("teacher/") or "/key/" in n]
    shipped = set()
    for name, text in files.items():
        if name.endswith(".py"):
            trees = [ast.parse(text)]
            for node in ast.walk(trees[0]):  # code kept as text (a model answer in a string, say)
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and "def " in node.value:
                    try:
                        trees.append(ast.parse(textwrap.dedent(node.value)))
                    except SyntaxError:
                        pass
            shipped |= {fingerprint(f)[0] for t in trees for f in ast.walk(t) if isinstance(f, ast.FunctionDef)}
    sources, texts = _key_texts()
    answers = [f for s in sources for f in ast.walk(ast.parse(s)) if isinstance(f, ast.FunctionDef)]
    assert len(answers) >= 30 and len(texts) >= 80, (len(answers), len(texts))
    assert [f.name for f in answers if fingerprint(f)[0] in shipped] == []
    everything = "\n".join(files.values())
    assert sorted(t for t in texts if t in everything) == []
