"""Command lines: argument errors through argparse (usage, exit 2); a missing, unreadable or
malformed input file gives one line on stderr naming the file, exit 1, no traceback. And every
file the project writes is written whole or not at all."""

import json
import subprocess
import sys

import pytest

from posenc._files import atomic_path, write_atomic
from posenc.lab.__main__ import main as lab_main


def one_line_naming(text: str, path) -> None:
    lines = text.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got: {text!r}"
    assert str(path) in lines[0] and "Traceback" not in text


@pytest.mark.parametrize(
    "content,why",
    [
        (None, "no such file"),
        ("not json at all", "not valid JSON"),
        ("[1, 2, 3]", "not a results file"),
        (json.dumps({"schema": 1, "runs": [{"task": "lookup"}]}), "not a results file"),
        (json.dumps({"schema": 99, "runs": []}), "schema"),
    ],
    ids=["missing", "corrupt", "wrong-shape", "run-without-fields", "other-schema"],
)
def test_lab_summary_on_a_bad_file_prints_one_line_and_exits_1(tmp_path, capsys, content, why):
    path = tmp_path / "results.json"
    if content is not None:
        path.write_text(content)
    assert lab_main(["summary", str(path)]) == 1
    err = capsys.readouterr().err
    one_line_naming(err, path)
    assert why in err


def test_lab_summary_on_a_folder_prints_one_line(tmp_path, capsys):
    assert lab_main(["summary", str(tmp_path)]) == 1
    one_line_naming(capsys.readouterr().err, tmp_path)


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["run", "--task", "lookup", "--scheme", "rope", "--steps", "-5"], "--steps: must be an integer >= 1, got -5"),
        (["run", "--task", "lookup", "--scheme", "rope", "--steps", "ten"], "--steps: 'ten' is not an integer"),
        (["run", "--task", "lookup", "--scheme", "rope", "--threads", "0"], "--threads: must be an integer >= 1"),
        (["sweep", "--seeds", "0", "-1"], "--seeds: must be an integer from 0 to 2147483647, got -1"),
        (["run", "--task", "sorting", "--scheme", "rope"], "--task: invalid choice"),
        (["table", "--steps", "0"], "--steps: must be an integer >= 1, got 0"),
    ],
)
def test_lab_argument_errors_go_through_argparse(capsys, argv, fragment):
    with pytest.raises(SystemExit) as exit_info:
        lab_main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m posenc.lab")
    assert fragment in err


def test_the_lab_command_line_prints_no_traceback_as_a_process(tmp_path):
    missing = tmp_path / "nothing.json"
    result = subprocess.run(
        [sys.executable, "-m", "posenc.lab", "summary", str(missing)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    one_line_naming(result.stderr, missing)


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "grades.csv"
    write_atomic(target, "old\n")
    with pytest.raises(KeyboardInterrupt), atomic_path(target) as temporary:
        temporary.write_text("half of the ne")
        raise KeyboardInterrupt
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grades.csv"]


def test_a_completed_write_replaces_the_file(tmp_path):
    target = tmp_path / "sub" / "table.bin"
    write_atomic(target, b"\x00\x01")
    write_atomic(target, b"\x02")
    assert target.read_bytes() == b"\x02"
    assert [p.name for p in target.parent.iterdir()] == ["table.bin"]


def test_the_course_commands_that_need_no_checker_start_without_torch():
    # posenc.course loads its checkers (and with them torch) on first use: the editions and the
    # fold command, a teacher's everyday commands, start in a fraction of a second
    code = (
        "import sys, posenc.course.__main__, posenc.course.folding, posenc.course.editions\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "import posenc.course as c\n"
        "assert callable(c.check) and 'rope' in c.EXERCISES and c.course_seed(7) == 7\n"
        "assert 'torch' in sys.modules\n"
        "from posenc.course import CheckResult, Exercise\n"
        "try:\n    c.no_such_name\nexcept AttributeError as error:\n    assert 'no_such_name' in str(error)\n"
        "else:\n    raise AssertionError('no AttributeError')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
