"""Copies of the answer key: a student's function that is posenc's own code or a model answer.

Two functions are the same here when their syntax trees are, once the names (arguments, locals,
globals, the function's own name), the constants and the formatting are set aside: every name
becomes ``_0, _1, ...`` in order of first use, every constant becomes ``_c``, docstrings go. So a
copy with other names, other numbers, other comments or layout is still found, and an answer
written independently is not, unless it is the same computation written the same way; short
functions (under :data:`MIN_NODES` nodes, :data:`MIN_ANSWER_NODES` for a model answer) are never
called copies, as two people write those alike. One added statement makes a copy look new: this
finds the lazy copy, not the determined one.

The corpus is every function in posenc's package (read from its files by the grader) and the model
answers the grader is given (the chapters' solution cells, each exercise's other styles).
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MIN_ANSWER_NODES", "MIN_NODES", "Corpus", "fingerprint"]

#: Functions with fewer syntax nodes than this are too short to call a copy of one of posenc's functions ...
MIN_NODES = 40
#: ... or of a model answer: a short answer is often what anyone writes (chapter 3's two lines are 41 nodes,
#: its loop 63), so only longer ones count.
MIN_ANSWER_NODES = 100


class _Normalise(ast.NodeTransformer):
    def __init__(self):
        self.names: dict[str, str] = {}

    def _name(self, name: str) -> str:
        return self.names.setdefault(name, f"_{len(self.names)}")

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(self._name(node.id), node.ctx), node)

    def visit_arg(self, node):
        return ast.copy_location(ast.arg(self._name(node.arg), None), node)

    def visit_Constant(self, node):
        return ast.copy_location(ast.Constant("_c"), node)

    def visit_FunctionDef(self, node):
        node.name = self._name(node.name)
        node.returns = None
        node.decorator_list = []
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:] or [ast.Pass()]
        node.body = body
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node):
        node.annotation = ast.Constant("_c")
        self.generic_visit(node)
        return node


def fingerprint(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, int]:
    """The function's normalised syntax (see the module) and its number of nodes."""
    tree = _Normalise().visit(copy.deepcopy(function))
    return ast.dump(tree, annotate_fields=False), sum(1 for _ in ast.walk(tree))


def _functions(tree: ast.AST, prefix: str):
    """(qualified name, node) of every function in ``tree``, methods and nested functions included."""
    stack = [(prefix, tree)]
    while stack:
        where, node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{where}.{child.name}"
                if not isinstance(child, ast.ClassDef):
                    yield name, child
                stack.append((name, child))
            else:
                stack.append((where, child))


@dataclass
class Corpus:
    """Fingerprints of the functions a student may not hand in as their own: fingerprint -> where from."""

    prints: dict[str, str]

    @classmethod
    def build(cls, model_answers: dict[str, str] | None = None, package: Path | None = None) -> Corpus:
        """posenc's functions (from its package folder) and the ``model_answers`` (a label -> source)."""
        if package is None:
            import posenc

            package = Path(posenc.__file__).resolve().parent
        prints: dict[str, str] = {}
        for path in sorted(package.rglob("*.py")):
            module = "posenc." + ".".join(path.relative_to(package).with_suffix("").parts)
            module = module.removesuffix(".__init__")
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError):
                continue
            for name, node in _functions(tree, module):
                text, size = fingerprint(node)
                if size >= MIN_NODES:
                    prints.setdefault(text, name)
        for label, source in (model_answers or {}).items():
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            for name, node in _functions(tree, f"the model answer of {label}"):
                text, size = fingerprint(node)
                if size >= MIN_ANSWER_NODES:
                    prints.setdefault(text, name.rsplit(".", 1)[0] if "model answer" in name else name)
        return cls(prints)

    def match(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
        """Where ``function`` was copied from, or None."""
        text, size = fingerprint(function)
        if size < MIN_NODES:
            return None
        return self.prints.get(text)
