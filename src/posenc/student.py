"""Write the student edition of the chapters: exercises kept, solutions removed.

``python -m posenc.student chapters _build/student`` (``make student``) copies every
chapter notebook and, in the copy:

* removes every solution: the cells from a ``{solution-start}`` marker to its
  ``{solution-end}``, and any ``{solution}`` block inside a markdown cell;
* keeps each code cell tagged ``solution`` (the function the exercise asks for) as a
  stub: its signature and docstring stay, its body becomes
  ``raise NotImplementedError("Exercise <label>: ...")``, so the notebook still runs
  top to bottom and the checkers report "not attempted yet";
* strips outputs and adds a note at the top.

The book's notebooks mark exercises with sphinx-exercise directives
(``{exercise}`` with a ``:label:``) and solutions with the gated
``{solution-start} <label>`` / ``{solution-end}`` pair.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

import nbformat

__all__ = ["stub_source", "student_notebook", "write_student_edition"]

_START = re.compile(r"^\s*[`:]{3,}\s*\{solution-start\}\s*(\S+)", re.M)
_END = re.compile(r"^\s*[`:]{3,}\s*\{solution-end\}", re.M)
_BLOCK = re.compile(r"^(?P<fence>[`:]{3,})\s*\{solution\}.*?^(?P=fence)\s*$\n?", re.M | re.S)

NOTE = (
    "**Student edition.** The solutions are removed. Each exercise that asks you to write a function "
    "has a cell that raises `NotImplementedError`: replace that line with your code, run the cell, "
    "and run the check cell after it. Until then the checker says *not attempted yet* and the rest "
    "of the notebook still runs."
)


def stub_source(source: str, label: str) -> str:
    """The stub of a solution cell: every top-level function keeps its signature and docstring;
    its body becomes a ``NotImplementedError`` naming the exercise; other statements are dropped."""
    tree = ast.parse(source)
    lines = source.splitlines()
    stubs = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first_body = node.body[0]
        has_doc = isinstance(first_body, ast.Expr) and isinstance(getattr(first_body, "value", None), ast.Constant)
        has_doc = has_doc and isinstance(first_body.value.value, str)
        keep_until = first_body.end_lineno if has_doc else node.body[0].lineno - 1
        start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        header = "\n".join(lines[start - 1 : keep_until])
        indent = " " * (node.body[0].col_offset)
        message = f"Exercise {label}: write {node.name} here"
        stubs.append(f'{header}\n{indent}raise NotImplementedError("{message}")')
    if not stubs:
        return f'# Exercise {label}: write your code here\nraise NotImplementedError("Exercise {label}")'
    return "\n\n\n".join(stubs) + "\n"


def student_notebook(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``notebook`` with its solutions removed and its solution cells stubbed."""
    cells = []
    inside: str | None = None  # the label of the open solution block
    for cell in notebook.cells:
        source = cell.source
        if cell.cell_type == "markdown":
            start, end = _START.search(source), _END.search(source)
            if start:
                inside = start.group(1)
            if inside is not None or start:
                if end:
                    inside = None
                continue
            source = _BLOCK.sub("", source)
            if not source.strip():
                continue
            cells.append(nbformat.v4.new_markdown_cell(source, metadata=cell.metadata))
            continue
        if "solution" in cell.metadata.get("tags", []):
            label = inside or _label_from_tags(cell) or "exercise"
            stub = nbformat.v4.new_code_cell(stub_source(source, label), metadata=dict(cell.metadata))
            stub.metadata["tags"] = [t for t in cell.metadata.get("tags", []) if t != "solution"] + ["student-stub"]
            cells.append(stub)
            continue
        if inside is not None:
            continue  # code that demonstrates a solution goes with it
        code = nbformat.v4.new_code_cell(source, metadata=cell.metadata)
        cells.append(code)
    result = nbformat.v4.new_notebook(metadata=notebook.metadata)
    first_heading = next((i for i, c in enumerate(cells) if c.cell_type == "markdown"), 0)
    cells.insert(first_heading + 1, nbformat.v4.new_markdown_cell(NOTE))
    result.cells = cells
    return result


def _label_from_tags(cell) -> str | None:
    for tag in cell.metadata.get("tags", []):
        if tag.startswith("exercise:"):
            return tag.split(":", 1)[1]
    return None


def write_student_edition(source_dir: Path, output_dir: Path) -> list[Path]:
    """Write the student edition of every ``*.ipynb`` in ``source_dir`` to ``output_dir``; return the paths."""
    source_dir, output_dir = Path(source_dir), Path(output_dir)
    if not source_dir.is_dir():
        raise ValueError(f"source_dir must be a folder of notebooks, got {source_dir}")
    output_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(source_dir.glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        target = output_dir / path.name
        nbformat.write(student_notebook(notebook), target)
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m posenc.student", description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, nargs="?", default=Path("chapters"))
    parser.add_argument("output", type=Path, nargs="?", default=Path("_build/student"))
    args = parser.parse_args(argv)
    written = write_student_edition(args.source, args.output)
    print(f"wrote {len(written)} student notebooks to {args.output}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
