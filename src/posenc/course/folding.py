"""Which cells JupyterLab opens folded: the ones the website hides, and the solutions.

The website hides a cell by its tags (myst-nb's ``hide-input``, ``remove-cell``, ...) and puts
solutions in dropdowns; JupyterLab reads none of that. It reads the notebook format's own
``metadata.jupyter.source_hidden`` and ``outputs_hidden`` and opens such cells folded (a click on
the bar beside a cell opens it). This module derives that metadata from the tags and the solution
markers, so that a reader in JupyterLab sees what a reader of the website sees:

* ``hide-input`` and ``remove-input``: the source folded, the output shown;
* ``hide-output`` and ``remove-output``: the output folded;
* ``hide-cell`` and ``remove-cell``: both folded;
* a solution (a code cell tagged ``solution``, and every cell from a ``{solution-start}`` marker
  to its ``{solution-end}``, as :mod:`posenc.course.editions` reads them, and a markdown cell that
  is one ``{solution}`` block): a markdown cell's text and a code cell's source and output folded.
  (A markdown cell with prose around a ``{solution}`` block stays open: folding it would hide the prose.)

Every other cell carries neither key. The book's JupyterLab extension applies the same rule when a
chapter opens (``expectedFolds`` in ``src/posenc/book/lab_extension/index.js``); tests/test_jupyterlab.py
serves every chapter without its flags and checks the folds JupyterLab shows against
:func:`expected_folds`, so a change here needs the same change there.

``python -m posenc.course fold chapters`` writes the metadata into the notebooks, in the one JSON
layout of the chapters (:func:`notebook_text`: what ``nbformat.write``, and so JupyterLab, writes);
``--check`` lists what is out of step and writes nothing. A notebook is in step when
:func:`out_of_step` finds nothing: the command and ``tests/test_folding.py`` both ask it, so the
command never calls "in step" a chapter the test fails.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
from nbformat.v4 import nbjson

from .._files import write_atomic
from .editions import _BLOCK, _walk, notebook_paths

__all__ = [
    "FOLD_KEYS",
    "expected_folds",
    "folds_of",
    "mismatches",
    "notebook_text",
    "layout_difference",
    "out_of_step",
    "fold_notebook",
    "fold_files",
]

FOLD_KEYS = ("source_hidden", "outputs_hidden")

_SOURCE_TAGS = {"hide-input", "remove-input", "hide-cell", "remove-cell"}
_OUTPUT_TAGS = {"hide-output", "remove-output", "hide-cell", "remove-cell"}


def expected_folds(notebook) -> list[dict[str, bool]]:
    """For each cell of ``notebook`` (an nbformat notebook), the fold keys it must carry: a dict
    with ``source_hidden`` and/or ``outputs_hidden`` set to True, empty for a cell shown open."""
    result = []
    for role, cell, _ in _walk(notebook):
        tags = set(cell.metadata.get("tags", []))
        hide_source = bool(tags & _SOURCE_TAGS)
        hide_outputs = bool(tags & _OUTPUT_TAGS)
        only_a_solution = cell.cell_type == "markdown" and bool(_BLOCK.search(cell.source))
        only_a_solution = only_a_solution and not _BLOCK.sub("", cell.source).strip()
        if role in ("solution-prose", "solution-code") or only_a_solution:
            hide_source = hide_outputs = True
        folds = {}
        if hide_source:
            folds["source_hidden"] = True
        if hide_outputs and cell.cell_type == "code":  # only code cells have outputs
            folds["outputs_hidden"] = True
        result.append(folds)
    return result


def folds_of(cell) -> dict[str, bool]:
    """The fold keys ``cell`` carries (``metadata.jupyter``), with their values, as a dict."""
    jupyter = cell.get("metadata", {}).get("jupyter", {})
    return {key: jupyter[key] for key in FOLD_KEYS if key in jupyter}


def mismatches(notebook) -> list[str]:
    """One line per cell whose fold metadata differs from :func:`expected_folds`; empty when in step."""
    found = []
    for index, (cell, expected) in enumerate(zip(notebook.cells, expected_folds(notebook), strict=True)):
        actual = folds_of(cell)
        if actual != expected:
            first = cell.source.strip().splitlines()[0][:60] if cell.source.strip() else ""
            has, needs = actual or "none", expected or "none"
            found.append(f"cell {index} ({cell.cell_type}, {first!r}): has {has}, needs {needs}")
    return found


def _set_folds(metadata: dict, folds: dict[str, bool]) -> None:
    jupyter = {k: v for k, v in metadata.get("jupyter", {}).items() if k not in FOLD_KEYS}
    jupyter.update(folds)
    if jupyter:
        metadata["jupyter"] = jupyter
    else:
        metadata.pop("jupyter", None)


def notebook_text(notebook: dict) -> str:
    """The text of ``notebook`` (a version-4 notebook as a dict, or an nbformat notebook) in the one
    JSON layout of the chapters: exactly what ``nbformat.write`` writes to a file, which is what
    JupyterLab writes when it saves. One-space indent, sorted keys, non-ASCII characters as
    themselves (no ``\\u`` escapes), sources and text outputs as lists of lines, no transient
    metadata (``signature``, a cell's ``trusted``), and a final newline
    (``nbformat.writes`` leaves it out; ``nbformat.write`` adds it). The chapters are committed in it
    and :func:`fold_notebook` writes it; raises ``ValueError`` for a notebook that is not version 4.
    """
    if notebook.get("nbformat") != 4:
        raise ValueError(f"not a version-4 notebook (nbformat {notebook.get('nbformat')!r})")
    return nbjson.writes(nbformat.from_dict(notebook)) + "\n"


def layout_difference(text: str) -> str | None:
    """None when the notebook JSON ``text`` is in :func:`notebook_text`'s layout; else where it first
    differs, in one line (the line number, the file's line and the layout's)."""
    canonical = notebook_text(json.loads(text))
    if canonical == text:
        return None
    if canonical == text + "\n":
        return "JSON layout: no final newline (nbformat.writes leaves it out, nbformat.write adds it)"
    ours, theirs = text.splitlines(keepends=True), canonical.splitlines(keepends=True)
    line = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), min(len(ours), len(theirs)))
    has = ours[line] if line < len(ours) else "(the end of the file)"
    needs = theirs[line] if line < len(theirs) else "(the end of the file)"
    return f"JSON layout: line {line + 1} is {has[:70]!r}, nbformat.write writes {needs[:70]!r}"


def out_of_step(path: str | os.PathLike) -> list[str]:
    """What ``python -m posenc.course fold`` would change in the notebook at ``path``: one line per cell
    whose fold metadata is out of step (:func:`mismatches`), and one for a file not in the chapters'
    JSON layout (:func:`layout_difference`). Empty when the file is as the command writes it; line
    ends are the platform's, as ``nbformat.write`` writes them (the file is read as text). The command
    and ``tests/test_folding.py`` both ask this function."""
    text = Path(path).read_text(encoding="utf-8")
    found = mismatches(nbformat.reads(text, as_version=4))
    layout = layout_difference(text)
    return [*found, layout] if layout else found


def fold_notebook(text: str) -> str:
    """The notebook JSON ``text`` with every cell's fold metadata set as :func:`expected_folds` says,
    in the chapters' layout (:func:`notebook_text`).

    Only ``metadata.jupyter`` of the cells changes, and the layout: a file another tool wrote (two-space
    indent, ``\\u`` escapes, unsorted keys, no final newline) comes back as ``nbformat.write`` writes
    it, with the same content (less the transient metadata that nbformat never writes).
    """
    data = json.loads(text)
    expected = expected_folds(nbformat.reads(text, as_version=4))
    for cell, folds in zip(data["cells"], expected, strict=True):
        _set_folds(cell.setdefault("metadata", {}), folds)
    return notebook_text(data)


def fold_files(source: Path, *, check: bool = False) -> dict[Path, list[str]]:
    """Set the fold metadata of a notebook, or of every ``*.ipynb`` in a folder, in place, and write
    it in the chapters' JSON layout.

    Returns, for each notebook that was out of step, its :func:`out_of_step` lines (the cells, and
    the layout); with ``check`` it writes nothing and only reports.
    """
    changed = {}
    for path in notebook_paths(source):
        found = out_of_step(path)
        if not found:
            continue
        changed[path] = found
        if not check:
            mode = Path(path).stat().st_mode
            write_atomic(path, fold_notebook(Path(path).read_text(encoding="utf-8")))
            os.chmod(path, mode)  # keep the file's permissions (the temporary file was private)
    return changed
