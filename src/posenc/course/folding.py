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

Every other cell carries neither key. ``python -m posenc.course fold chapters`` writes the
metadata into the notebooks (only the cells whose metadata differs change, in the files' own
JSON layout); ``--check`` lists the cells out of step and writes nothing.
``tests/test_folding.py`` keeps the chapters in step.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat

from .._files import write_atomic
from .editions import _BLOCK, _walk, notebook_paths

__all__ = ["FOLD_KEYS", "expected_folds", "folds_of", "mismatches", "fold_notebook", "fold_files"]

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


def fold_notebook(text: str) -> str:
    """The notebook JSON ``text`` with every cell's fold metadata set as :func:`expected_folds` says.

    Only ``metadata.jupyter`` of the cells changes; the rest is written back as nbformat writes it
    (one-space indent, sorted keys, non-ASCII kept, a final newline), the chapters' own layout. Raises
    ``ValueError`` for a file in another layout, where rewriting it would change more than the folds.
    """
    data = json.loads(text)
    if _dumps(data) != text and _dumps(data) != text + "\n":  # nbformat.writes leaves out the final newline
        raise ValueError("the notebook is not in nbformat's JSON layout; rewrite it with nbformat first")
    expected = expected_folds(nbformat.reads(text, as_version=4))
    for cell, folds in zip(data["cells"], expected, strict=True):
        _set_folds(cell.setdefault("metadata", {}), folds)
    return _dumps(data)


def _dumps(data) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def fold_files(source: Path, *, check: bool = False) -> dict[Path, list[str]]:
    """Set the fold metadata of a notebook, or of every ``*.ipynb`` in a folder, in place.

    Returns, for each notebook that was out of step, its :func:`mismatches`; with ``check`` it
    writes nothing and only reports.
    """
    changed = {}
    for path in notebook_paths(source):
        text = Path(path).read_text(encoding="utf-8")
        found = mismatches(nbformat.reads(text, as_version=4))
        if not found:
            continue
        changed[path] = found
        if not check:
            mode = Path(path).stat().st_mode
            write_atomic(path, fold_notebook(text))
            os.chmod(path, mode)  # keep the file's permissions (the temporary file was private)
    return changed
