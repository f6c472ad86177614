"""`make lab`'s install is light and pinned: requirements-lab.txt holds only what the chapters need
in JupyterLab, every version pinned and equal to requirements.txt's where both name a package,
torch exactly (a CPU wheel) and before the package; pip shows its progress. Reads files only."""

import re
import tomllib

from conftest import ROOT

LINE = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)==(?P<version>\S+)$")


def requirement_lines(name):
    lines = (ROOT / name).read_text().splitlines()
    return [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]


def pins(name):
    return {m["name"].lower(): m["version"] for line in requirement_lines(name) if (m := LINE.match(line))}


def test_every_lab_requirement_is_pinned_and_the_package_comes_with_its_book_extra():
    lines = requirement_lines("requirements-lab.txt")
    unpinned = [line for line in lines if not LINE.match(line) and line != "-e .[book]"]
    assert unpinned == [], f"requirements-lab.txt: pin every requirement with ==, found {unpinned}"
    assert lines[-1] == "-e .[book]"
    assert lines.index("torch==2.13.0") < lines.index("-e .[book]"), "torch exactly, before the package"
    assert {"jupyterlab", "jupyterlab-myst", "ipywidgets", "ipykernel", "torch"} <= set(pins("requirements-lab.txt"))


def test_the_lab_pins_agree_with_requirements_txt():
    lab, full = pins("requirements-lab.txt"), pins("requirements.txt")
    differ = {name: (version, full[name]) for name, version in lab.items() if name in full and full[name] != version}
    assert differ == {}, f"requirements-lab.txt and requirements.txt pin these differently: {differ}"


def test_the_lab_installs_no_build_or_test_tools():
    lab = set(pins("requirements-lab.txt"))
    heavy = {"jupyter-book", "transformers", "playwright", "pytest", "sphinx-exercise", "hypothesis"}
    assert lab & heavy == set()


def test_the_book_extra_brings_what_the_notebooks_import_beyond_the_library():
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["book"]
    names = {re.split(r"[<>=!~ ]", requirement)[0] for requirement in extra}
    assert {"ipywidgets", "ipykernel"} <= names


def test_make_lab_installs_the_lab_file_into_its_own_venv_with_progress():
    makefile = (ROOT / "Makefile").read_text()
    rule = makefile[makefile.index("$(LAB_STAMP): requirements-lab.txt") :].split("\n\n")[0]
    assert "pip install -r requirements-lab.txt" in rule and "--quiet" not in rule
    assert "LAB_VENV  := .venv-lab" in makefile and "lab: $(LAB_STAMP)" in makefile
    assert ".venv-lab/" in (ROOT / ".gitignore").read_text().splitlines()
