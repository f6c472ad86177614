"""The checkers' own faults found by the fourth round of student attempts (issue 41, item 6): each stays fixed.

False passes: positions formed in int16 (wrong past 32,767 tokens) and a curve blended from the log-nearest
quoted length (wrong in the upper half of an interior segment) now fail. False fails: a notebook that set
``np.seterr(all="raise")``, and a function that reaches a package's lazy loader (``posenc.course.__getattr__``,
as torch.compile does), now pass; a hint that names the whole table fires only on that mistake.
"""

import textwrap
import types

import numpy as np
import pytest
from test_course_mistakes import WRONG

from posenc.course import check


def student(source: str, name: str):
    module = types.ModuleType("__main__")
    exec(compile("import numpy as np\n" + textwrap.dedent(source), "<cell>", "exec"), module.__dict__)
    return module.__dict__[name]


INT16_PACKED = """
def my_packed_position_ids(lengths):
    return np.concatenate([np.arange(int(n), dtype=np.int16) for n in np.asarray(lengths)])
"""
INT16_MASK = """
def my_position_ids_from_mask(attention_mask):
    mask = np.asarray(attention_mask)
    positions = np.cumsum(mask, axis=-1, dtype=np.int16) - 1
    return np.where(mask == 1, positions, 0).astype(np.int64)
"""
LOG_NEAREST = """
def my_interpolate_at_length(lengths, values, length):
    logs, v, x = np.log(np.asarray(lengths, dtype=float)), np.asarray(values, dtype=float), np.log(length)
    j = min(int(np.argmin(np.abs(logs - x))), len(logs) - 2)
    return float(v[j] + (v[j + 1] - v[j]) * (x - logs[j]) / (logs[j + 1] - logs[j]))
"""


@pytest.mark.parametrize(
    ("name", "function", "source"),
    [
        ("packed_position_ids", "my_packed_position_ids", INT16_PACKED),
        ("position_ids_from_mask", "my_position_ids_from_mask", INT16_MASK),
        ("paper_interpolate", "my_interpolate_at_length", LOG_NEAREST),
    ],
)
def test_former_false_passes_fail(name, function, source):
    result = check(name, student(source, function), quiet=True)
    assert result.status == "failed", str(result)


def test_a_notebook_that_raises_on_floating_point_errors_is_still_checked():
    function = student("""
        def my_binary(n_positions, n_bits):
            return (np.arange(n_positions)[:, None] >> np.arange(n_bits)) & 1
    """, "my_binary")
    previous = np.seterr(all="raise")
    try:
        result = check("binary", function, quiet=True)
    finally:
        np.seterr(**previous)
    assert result.status == "passed", str(result)


def test_reaching_a_packages_lazy_loader_is_not_calling_posenc():
    function = student("""
        import posenc.course
        def my_binary(n_positions, n_bits):
            posenc.course.__getattr__("EXERCISES")  # what torch.compile's module walk does
            return (np.arange(n_positions)[:, None] >> np.arange(n_bits)) & 1
    """, "my_binary")
    result = check("binary", function, quiet=True)
    assert result.status == "passed", str(result)


def test_the_whole_table_hint_only_for_the_whole_table():
    sliced_wrong_axis = student("""
        import math
        def my_scaled_embedding(token_embeddings, position_table):
            seq = token_embeddings.shape[-2]
            return token_embeddings / math.sqrt(token_embeddings.shape[-1]) + position_table[:, :seq].T
    """, "my_scaled_embedding")
    whole = student("""
        import math
        def my_scaled_embedding(token_embeddings, position_table):
            return token_embeddings / math.sqrt(token_embeddings.shape[-1]) + position_table
    """, "my_scaled_embedding")
    table_hint = "add only its first seq rows"
    assert table_hint in (check("scaled_embedding", whole, quiet=True).hint or "")
    wrong = check("scaled_embedding", sliced_wrong_axis, quiet=True)
    assert wrong.status != "passed" and table_hint not in (wrong.hint or ""), str(wrong)


SCALED_ROPE = """
import numpy as np
def my_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    angles = np.asarray(positions, dtype=float)[:, None] * theta
    out = np.empty(x.shape)
    out[..., 0::2] = x[..., 0::2] * np.cos(angles) - x[..., 1::2] * np.sin(angles)
    out[..., 1::2] = x[..., 0::2] * np.sin(angles) + x[..., 1::2] * np.cos(angles)
    return out * 1.001  # a factor slightly off: every entry moves the same way
"""
HALF_ROPE = "import torch\n" + textwrap.dedent(WRONG["rope-all-in-half-precision"][2])  # every step in float16
OFF_TEMPERATURE = """
import math
def my_yarn_attention_factor(factor):
    return 0.1002 * math.log(factor) + 1.0 if factor > 1 else 1.0
"""


def test_the_half_precision_hint_only_for_the_scatter_of_rounding():
    words = "agrees with posenc to only about"
    half = check("rope", student(HALF_ROPE, "f"), quiet=True)
    assert half.status == "failed" and words in (half.hint or ""), str(half)
    for name, function, source in [
        ("rope", "my_rope", SCALED_ROPE),
        ("yarn_temperature", "my_yarn_attention_factor", OFF_TEMPERATURE),
    ]:
        result = check(name, student(source, function), quiet=True)
        assert result.status == "failed" and words not in (result.hint or ""), str(result)


def test_the_sealed_graders_entry_points_name_a_bad_argument():
    import nbformat

    from posenc.course.coursework import EXERCISES
    from posenc.course.grade import judge_notebook
    from posenc.course.sealed import sealed_check

    notebook = nbformat.v4.new_notebook()
    with pytest.raises(ValueError, match="names must be a list of exercise names"):
        judge_notebook(notebook, ["no-such-exercise"], seed=1)
    with pytest.raises(ValueError, match="names must be a list"):
        judge_notebook(notebook, "binary", seed=1)
    with pytest.raises(TypeError, match="notebook must be an nbformat notebook"):
        judge_notebook("notebook.ipynb", ["binary"], seed=1)
    with pytest.raises(TypeError, match=r"exercise must be a posenc\.course\.engine\.Exercise"):
        sealed_check("binary", notebook)
    with pytest.raises(TypeError, match="notebook must be an nbformat notebook"):
        sealed_check(EXERCISES["binary"], None)


def test_the_nbgrader_export_leaves_a_foreign_config_and_writes_nothing(tmp_path, capsys, monkeypatch):
    from pathlib import Path

    from posenc.course.__main__ import main

    monkeypatch.delenv("POSENC_COURSE_SEED", raising=False)
    chapter = Path(__file__).resolve().parents[1] / "chapters" / "03_binary_analogy.ipynb"
    (tmp_path / "posenc_grading.py").write_text("c = get_config()  # the teacher's own\n")
    assert main(["nbgrader", str(chapter), str(tmp_path / "source" / "ps1")]) == 1
    assert "was not written by this command" in capsys.readouterr().err
    assert (tmp_path / "posenc_grading.py").read_text() == "c = get_config()  # the teacher's own\n"
    assert not (tmp_path / "source").exists()
    (tmp_path / "posenc_grading.py").unlink()
    assert main(["nbgrader", str(chapter), str(tmp_path / "source" / "ps1"), "--course-seed", "5"]) == 0
    assert "c.SealedChecks.course_seed = 5\n" in (tmp_path / "posenc_grading.py").read_text()
    assert main(["nbgrader", str(chapter), str(tmp_path / "source" / "ps1")]) == 0  # again: the seed stays
    assert "c.SealedChecks.course_seed = 5\n" in (tmp_path / "posenc_grading.py").read_text()
