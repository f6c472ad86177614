"""The book's JupyterLab extension and the JupyterLab that `make lab` installs (no browser here:
tests/test_jupyterlab.py opens the chapters with it).

* The extension's built files (src/posenc/book/labextensions/posenc-jupyterlab, committed: a reader
  needs no Node.js) are built from its sources (src/posenc/book/lab_extension): the build records
  their sha256.
* Every JupyterLab extension of this environment (what requirements-lab.txt installs; jupytext's, the
  book build's, aside) and the book's own were built for the pinned JupyterLab: each version of a
  JupyterLab module they ask for is satisfied by the one JupyterLab ships, so no page logs
  "Unsatisfied version" (jupyterlab_widgets 3.0.17 asks for ^4.6.2 of JupyterLab 4.5.11's modules).
* The ``lab`` extra (one downloaded notebook, one command) pins what requirements-lab.txt pins,
  and the package ships the extension where JupyterLab looks for it.
"""

import hashlib
import json
import re
import sys
import tomllib
from pathlib import Path

import pytest

from posenc.book.lab_server import EXTENSION_OPTION, LAB_EXTENSIONS

from conftest import ROOT

SOURCES = ROOT / "src" / "posenc" / "book" / "lab_extension"
BUILT = LAB_EXTENSIONS / "posenc-jupyterlab"
INSTALLED = Path(sys.prefix, "share", "jupyter", "labextensions")
# webpack's two ways of writing a shared module's wanted version: ("default", "<module>", false, [1, 4, 5, 11])
# (the first number: how many leading parts must be equal; the rest must be at least as high) and
# shareKey:"<module>", ..., requiredVersion:"^4.6.2"
ARRAY_FORM = re.compile(r'"(@jupyterlab/[\w-]+)",\s*(?:!1|false),\s*\[(\d+(?:,\s*\d+)+)\]')
STRING_FORM = re.compile(r'shareKey:"(@jupyterlab/[\w-]+)",import:[^,]*,requiredVersion:"([^"]+)"')


def shipped_versions() -> dict[str, tuple[int, ...]]:
    """The version of each of its modules JupyterLab provides (its static package.json's resolutions)."""
    resolutions = json.loads((INSTALLED.parent / "lab" / "static" / "package.json").read_text())["resolutions"]
    return {
        name: tuple(int(p) for p in re.match(r"[~^]?(\d+)\.(\d+)\.(\d+)", version).groups())
        for name, version in resolutions.items()
        if name.startswith("@jupyterlab/")
    }


def wanted_versions(text: str) -> list[tuple[str, int, tuple[int, ...]]]:
    """(module, leading parts that must be equal, lowest version) for each JupyterLab module a built
    extension's code asks for."""
    wanted = []
    for name, numbers in ARRAY_FORM.findall(text):
        fixed, *version = (int(n) for n in numbers.split(","))
        wanted.append((name, fixed, tuple(version)))
    for name, requirement in STRING_FORM.findall(text):
        caret = re.fullmatch(r"\^(\d+)\.(\d+)\.(\d+)(?:-[\w.]+)?", requirement)
        assert caret, f"{name}: a version requirement this test does not read: {requirement}"
        wanted.append((name, 1, tuple(int(p) for p in caret.groups())))
    return wanted


def unsatisfied(text: str, shipped: dict) -> list[str]:
    """The modules whose wanted version the shipped one does not satisfy, with both versions."""
    problems = []
    for name, fixed, lowest in wanted_versions(text):
        have = shipped.get(name)
        if have is None or have[:fixed] != lowest[:fixed] or have < lowest:
            problems.append(f"{name}: wants {lowest} (first {fixed} equal), JupyterLab ships {have}")
    return problems


def test_the_built_extension_is_built_from_its_sources():
    recorded = dict(line.split()[::-1] for line in (BUILT / "SOURCE_SHA256").read_text().splitlines())
    now = {name: hashlib.sha256((SOURCES / name).read_bytes()).hexdigest() for name in ("index.js", "package.json")}
    assert recorded == now, "the built extension is older than its sources: run `make lab-extension`"
    built, source = (json.loads((d / "package.json").read_text()) for d in (BUILT, SOURCES))
    assert built["name"] == source["name"] == "posenc-jupyterlab"
    assert (BUILT / built["jupyterlab"]["_build"]["load"]).is_file()
    assert EXTENSION_OPTION.endswith(str(LAB_EXTENSIONS)) and LAB_EXTENSIONS.name == "labextensions"


def test_the_version_check_reads_both_forms_and_catches_a_newer_build():
    shipped = {"@jupyterlab/notebook": (4, 5, 11), "@jupyterlab/coreutils": (6, 5, 11)}
    assert unsatisfied('i("default","@jupyterlab/notebook",!1,[1,4,5,11])', shipped) == []
    assert unsatisfied('"@jupyterlab/notebook", false, [1,4,4,6]', shipped) == []
    # what jupyterlab_widgets 3.0.17 asks for, and a module of another major version
    newer = 'shareKey:"@jupyterlab/notebook",import:null,requiredVersion:"^4.6.2",strictVersion:!1'
    assert len(unsatisfied(newer, shipped)) == 1
    assert len(unsatisfied('"@jupyterlab/coreutils", false, [1,7,0,0]', shipped)) == 1
    assert len(unsatisfied('"@jupyterlab/unknown", false, [1,4,0,0]', shipped)) == 1


@pytest.mark.parametrize(
    "extension",
    [BUILT, *sorted(p.parent for p in INSTALLED.glob("**/package.json") if p.parent.parent.name != "node_modules")],
    ids=lambda p: p.name,
)
def test_every_extension_was_built_for_the_pinned_jupyterlab(extension):
    if extension.name == "jupyterlab-jupytext":
        pytest.skip("jupytext is the book build's (requirements.txt), not make lab's")
    if extension.name == "posenc-jupyterlab" and extension != BUILT:
        pytest.skip("an installed copy of the book's extension: the repository's is checked")
    text = "\n".join(p.read_text(errors="replace") for p in (extension / "static").glob("*.js"))
    assert unsatisfied(text, shipped_versions()) == []


def pins(path: Path) -> dict[str, str]:
    lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
    return {name.lower().replace("_", "-"): version for name, version in (x.split("==") for x in lines if "==" in x)}


def test_the_lab_extra_pins_what_make_lab_installs():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extra = project["project"]["optional-dependencies"]["lab"]
    assert "posenc[book]" in extra
    lab = pins(ROOT / "requirements-lab.txt")
    for requirement in extra:
        if "==" in requirement:
            name, version = requirement.split("==")
            assert lab[name.lower().replace("_", "-")] == version, requirement
    named = {r.split("==")[0].lower().replace("_", "-") for r in extra}
    assert {"jupyterlab", "jupyterlab-myst", "jupyterlab-widgets", "ipywidgets"} <= named
    data = project["tool"]["setuptools"]["data-files"]
    assert data["share/jupyter/labextensions/posenc-jupyterlab"] == [str((BUILT / "package.json").relative_to(ROOT))]
    assert data["share/jupyter/labextensions/posenc-jupyterlab/static"] == [str(BUILT.relative_to(ROOT) / "static/*")]


def test_what_the_extension_works_around_is_in_the_pinned_jupyterlab():
    """The README's sentences about JupyterLab 4.5.11, as its shipped code has them: running a code
    cell unfolds its output, running a markdown cell unfolds its text (so the extension folds them
    again); jupyterlab-myst takes a cell's {eval} roles from its rendered form (a cell not drawn yet
    has none; so the extension runs it again); the cell toolbar reads a markdown cell's rendered
    input without checking it exists (the one page error test_jupyterlab.py allows with JupyterLab's
    own windowing). When an upgrade changes these lines, this test says the work-arounds need a look."""
    core = "\n".join(p.read_text() for p in (INSTALLED.parent / "lab" / "static").glob("jlab_core.*.js"))
    assert "s.clearExecution();e.outputHidden=false" in core  # CodeCell.execute
    assert 'case"markdown":e.rendered=true;e.inputHidden=false' in core  # runCell
    assert "const n=t.renderedInput;const i=n.node;" in core  # _markdownOverlapsToolbar
    myst = "\n".join(p.read_text() for p in (INSTALLED / "jupyterlab-myst" / "static").glob("*.js"))
    assert 'e.mystModel)||void 0===s?void 0:s.mdast' in myst and 'selectAll)("inlineExpression"' in myst
