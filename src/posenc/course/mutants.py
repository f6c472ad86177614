"""Mutation testing of the checkers: ``python -m posenc.course mutants [--exercise NAME]``.

For each implementation exercise the model answers (the function of the chapter's solution
cell, tagged ``solution``, and the exercise's ``answers``, correct solutions in other styles:
loops, bisection, torch) are mutated at the syntax-tree level, one change per mutant:

* off by one: whole-number constants, slice bounds, indices and ``range``/``arange``
  arguments, plus or minus one;
* rounding: ``int``, ``round``, ``floor``, ``ceil`` (math and NumPy) swapped for each
  other; ``//`` and ``/`` swapped;
* halves and axes: ``[:m]`` and ``[m:]`` swapped, ``axis=`` changed, ``.T`` dropped, the
  parts of a concatenation and of a tuple assignment swapped;
* clamps and branches: ``np.clip``, ``max``, ``min`` dropped, an ``if`` reduced to one of
  its branches, ``a if c else b`` to ``a`` or ``b``, a re-assignment dropped;
* precision: ``float64`` (or ``float``) dtypes made ``float32`` or ``float16``;
* inputs written in place: a copy (``np.asarray``, ``np.array``, ``.copy()``, ``np.empty``)
  replaced by the input itself, or the input overwritten after the answer is computed;
* a parameter replaced by a constant (its default, or its value in the first public case);
* comparisons flipped (``<`` and ``<=``, ``<`` and ``>``, ``==`` and ``!=``), arithmetic
  swapped (``+``/``-``, ``*``/``/``, ``**``/``*``), a unary minus dropped, ``sin``/``cos``
  swapped, ``log`` made ``log10``, a square root dropped;
* and, for a find-the-bug exercise, the task's own buggy code.

Each mutant is checked like a student's function: the public run (no course seed, as in
the notebook) and the grading run (``--seed``). A mutant that passes grading is run on a
large random set (many seeds' hidden cases, every form): if it passes there too it is
*equivalent* (it computes what the text asks, within the stated tolerance) and is left
out; otherwise it *survived*, and the report names the input that shows it. The report
gives per exercise: generated, equivalent, killed by the public run, killed by grading,
survived.
"""

from __future__ import annotations

import ast
import copy
import math
import re
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import engine
from .engine import Case, Exercise
from .isolation import run_forked

__all__ = ["Mutant", "Report", "answers", "main_report", "model_answer", "mutate", "mutants", "run_exercise"]

#: The grading seed of the mutation runs, and the seeds of the large random set.
GRADING_SEED = 20261123
EQUIVALENCE_SEEDS = range(1, 31)

_ROUNDERS = {
    "int": ast.Name("int"),
    "round": ast.Name("round"),
    "math.floor": ast.Attribute(ast.Name("math"), "floor"),
    "math.ceil": ast.Attribute(ast.Name("math"), "ceil"),
    "np.floor": ast.Attribute(ast.Name("np"), "floor"),
    "np.ceil": ast.Attribute(ast.Name("np"), "ceil"),
    "np.round": ast.Attribute(ast.Name("np"), "round"),
}
_SWAPS = {
    "np.sin": "np.cos",
    "np.cos": "np.sin",
    "math.sin": "math.cos",
    "math.cos": "math.sin",
    "np.log": "np.log10",
    "math.log": "math.log10",
    "np.log2": "np.log",
    "np.maximum": "np.minimum",
    "np.minimum": "np.maximum",
}
_COPIES = {"np.asarray", "np.array", "np.ascontiguousarray", "torch.as_tensor", "torch.tensor"}
_ALLOCATE = {"np.empty", "np.zeros", "np.empty_like", "np.zeros_like", "np.ones_like"}
_COMPARE = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
}
_ARITH = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.Div,),
    ast.Div: (ast.Mult, ast.FloorDiv),
    ast.FloorDiv: (ast.Div,),
    ast.Pow: (ast.Mult,),
}


def _dotted(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _plus(node, delta: int) -> ast.expr:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return ast.Constant(node.value + delta)
    return ast.BinOp(copy.deepcopy(node), ast.Add() if delta > 0 else ast.Sub(), ast.Constant(abs(delta)))


# --- the mutation sites -------------------------------------------------------------------------------
@dataclass
class _Site:
    path: tuple  # fields and indices from the function node to the node changed
    description: str
    replace: object  # a callable (node) -> node or list of statements (for a statement)


def _paths(node, path=()) -> Iterator[tuple[ast.AST, tuple]]:
    yield node, path
    for name, value in ast.iter_fields(node):
        if isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, ast.AST):
                    yield from _paths(item, (*path, name, index))
        elif isinstance(value, ast.AST):
            yield from _paths(value, (*path, name))


def _locate(root, path):
    parent, key = None, None
    node = root
    steps = list(path)
    while steps:
        name = steps.pop(0)
        value = getattr(node, name)
        if isinstance(value, list):
            index = steps.pop(0)
            parent, key, node = value, index, value[index]
        else:
            parent, key, node = node, name, value
    return parent, key, node


def _sites(function: ast.FunctionDef, parameters: dict[str, object], stores: dict) -> list[_Site]:
    """Every mutation of the function body; ``parameters`` maps a name to its constant stand-in."""
    sites: list[_Site] = []
    names = [a.arg for a in function.args.args]

    def add(path, description, replace):
        sites.append(_Site(path, description, replace))

    assigned: set[str] = set(names)
    for node, path in _paths(function):
        if path == ():
            continue
        line = getattr(node, "lineno", function.lineno) - function.lineno
        at = f"line {line}"
        # off by one
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            for delta in (1, -1):
                add(path, f"{at}: {node.value} -> {node.value + delta}", lambda n, d=delta: ast.Constant(n.value + d))
        if isinstance(node, ast.Slice):
            for part in ("lower", "upper"):
                bound = getattr(node, part)
                if bound is not None and not isinstance(bound, ast.Constant):
                    for delta in (1, -1):
                        add(
                            (*path, part),
                            f"{at}: slice {part} {ast.unparse(bound)} {'+' if delta > 0 else '-'} 1",
                            lambda n, d=delta: _plus(n, d),
                        )
            if (node.lower is None) != (node.upper is None) and node.step is None:
                add(path, f"{at}: the other half of the slice", lambda n: ast.Slice(n.upper, n.lower, None))
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice | ast.Tuple | ast.Constant):
            for delta in (1, -1):
                description = f"{at}: index {ast.unparse(node.slice)} {delta:+d}"
                add((*path, "slice"), description, lambda n, d=delta: _plus(n, d))
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name in ("range", "np.arange"):
                for index, argument in enumerate(node.args):
                    if not isinstance(argument, ast.Constant):
                        for delta in (1, -1):
                            add(
                                (*path, "args", index),
                                f"{at}: {name} argument {index} {delta:+d}",
                                lambda n, d=delta: _plus(n, d),
                            )
            if name in _ROUNDERS and len(node.args) == 1:
                for other, func in _ROUNDERS.items():
                    if other != name:
                        add((*path, "func"), f"{at}: {name} -> {other}", lambda n, f=func: copy.deepcopy(f))
                add(path, f"{at}: {name}(...) dropped", lambda n: n.args[0])
            if name in _SWAPS:
                add((*path, "func"), f"{at}: {name} -> {_SWAPS[name]}", lambda n, o=_SWAPS[name]: _expr(o))
            if name in ("np.sqrt", "math.sqrt") and len(node.args) == 1:
                add(path, f"{at}: {name} dropped", lambda n: n.args[0])
            if name == "np.clip" and len(node.args) == 3:
                add(path, f"{at}: np.clip dropped", lambda n: n.args[0])
                for index in (1, 2):
                    add((*path, "args", index), f"{at}: np.clip bound {index} dropped", lambda n: ast.Constant(None))
            if name in ("max", "min") and len(node.args) == 2:
                for index in (0, 1):
                    add(path, f"{at}: {name} -> its argument {index}", lambda n, i=index: n.args[i])
            if name in ("np.concatenate", "np.stack", "np.hstack", "torch.cat") and node.args:
                if isinstance(node.args[0], ast.List | ast.Tuple) and len(node.args[0].elts) > 1:
                    add((*path, "args", 0), f"{at}: {name} parts reversed",
                        lambda n: type(n)(list(reversed(n.elts)), ast.Load()))
            if name in _COPIES and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in names:
                add(path, f"{at}: {name}({node.args[0].id}) -> {node.args[0].id} itself", lambda n: n.args[0])
            if name in _ALLOCATE and node.args:
                for param in names:
                    if param in stores.get("arrays", ()):
                        add(path, f"{at}: {name}(...) -> the input {param} (written in place)",
                            lambda n, p=param: ast.Name(p, ast.Load()))
            if isinstance(node.func, ast.Attribute) and node.func.attr == "copy" and not node.args:
                add(path, f"{at}: .copy() dropped", lambda n: n.func.value)
            for index, keyword in enumerate(node.keywords):
                value = keyword.value
                if keyword.arg == "axis" and isinstance(value, ast.Constant | ast.UnaryOp):
                    current = ast.unparse(value)
                    for other in ("0", "-1", "1"):
                        if other != current:
                            add((*path, "keywords", index, "value"), f"{at}: axis={current} -> {other}",
                                lambda n, o=other: _expr(o))
                if keyword.arg == "dtype" and _dotted(value) in ("np.float64", "float", "torch.float64"):
                    lib = "torch" if _dotted(value).startswith("torch") else "np"
                    for low in ("float32", "float16"):
                        add((*path, "keywords", index, "value"), f"{at}: dtype {_dotted(value)} -> {lib}.{low}",
                            lambda n, o=f"{lib}.{low}": _expr(o))
            if name == "np.arange" and not any(k.arg == "dtype" for k in node.keywords):
                add(path, f"{at}: np.arange in float32",
                    lambda n: ast.Call(n.func, n.args, [*n.keywords, ast.keyword("dtype", _expr("np.float32"))]))
            if isinstance(node.func, ast.Attribute) and node.func.attr == "astype" and node.args:
                if _dotted(node.args[0]) in ("np.float64", "float"):
                    add((*path, "args", 0), f"{at}: astype float32", lambda n: _expr("np.float32"))
        if isinstance(node, ast.Attribute) and node.attr == "T":
            add(path, f"{at}: .T dropped", lambda n: n.value)
        if isinstance(node, ast.IfExp):
            add(path, f"{at}: conditional -> its first value", lambda n: n.body)
            add(path, f"{at}: conditional -> its second value", lambda n: n.orelse)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            for other in _COMPARE[type(node.ops[0])]:
                add(path, f"{at}: {type(node.ops[0]).__name__} -> {other.__name__}",
                    lambda n, o=other: ast.Compare(n.left, [o()], n.comparators))
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            for other in _ARITH[type(node.op)]:
                add(path, f"{at}: {type(node.op).__name__} -> {other.__name__}",
                    lambda n, o=other: ast.BinOp(n.left, o(), n.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            add(path, f"{at}: unary minus dropped", lambda n: n.operand)
        # statements: branches, re-assignments
        if isinstance(node, ast.If):
            add(path, f"{at}: if reduced to its body", lambda n: n.body)
            add(path, f"{at}: if reduced to its else", lambda n: n.orelse or [ast.Pass()])
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id in assigned:
                add(path, f"{at}: re-assignment of {target.id} dropped", lambda n: [ast.Pass()])
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and len(target.elts) == 2:
                add((*path, "value"), f"{at}: the two values swapped",
                    lambda n: ast.Tuple(list(reversed(n.elts)), ast.Load()))
            for element in ast.walk(target):
                if isinstance(element, ast.Name):
                    assigned.add(element.id)
        if isinstance(node, ast.AugAssign):
            add(path, f"{at}: augmented assignment dropped", lambda n: [ast.Pass()])
    for name, constant in parameters.items():
        sites.append(_Site(("params", name), f"parameter {name} replaced by {constant!r}", constant))
    for name in stores.get("arrays", ()):
        sites.append(_Site(("poke", name), f"input {name} overwritten after the answer is computed", None))
    return sites


class _Replace(ast.NodeTransformer):
    def __init__(self, name, constant):
        self.name, self.constant = name, constant

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Constant(self.constant), node)
        return node


class _Poke(ast.NodeTransformer):
    """``return value`` -> compute the value, overwrite the input ``name`` in place, return the value."""

    def __init__(self, name):
        self.name = name

    def visit_FunctionDef(self, node):
        return node

    def visit_Lambda(self, node):
        return node

    def visit_Return(self, node):
        if node.value is None:
            return node
        store = ast.Assign([ast.Name("_mutant_result", ast.Store())], node.value)
        poke = ast.Expr(ast.Call(ast.Name("_mutant_poke", ast.Load()), [ast.Name(self.name, ast.Load())], []))
        return [store, poke, ast.Return(ast.Name("_mutant_result", ast.Load()))]


# compiled apart from this file, so that posenc's switch-off does not take it for posenc code
_POKE = """
def _mutant_poke(value):
    if isinstance(value, np.ndarray):
        value[...] = value * 2 + 1
    elif hasattr(value, "mul_"):
        value.mul_(2).add_(1)
    elif isinstance(value, list):
        value.append(value[0] if value else 0)
    elif isinstance(value, dict):
        value["mutant"] = 1
"""


def _apply(function: ast.FunctionDef, site: _Site) -> ast.FunctionDef:
    tree = copy.deepcopy(function)
    if site.path[0] == "params":
        tree.body = [_Replace(site.path[1], site.replace).visit(statement) for statement in tree.body]
        return tree
    if site.path[0] == "poke":
        poke = _Poke(site.path[1])
        body = []
        for statement in tree.body:
            result = poke.visit(statement)
            body += result if isinstance(result, list) else [result]
        tree.body = body
        return tree
    parent, key, node = _locate(tree, site.path)
    new = site.replace(node)
    if isinstance(parent, list):
        parent[key : key + 1] = new if isinstance(new, list) else [new]
    elif isinstance(new, list):
        raise TypeError("a statement mutation outside a list of statements")
    else:
        setattr(parent, key, new)
    return tree


# --- the model answer ------------------------------------------------------------------------------
def _notebook(chapters: Path, exercise: Exercise) -> Path:
    chapter = exercise.label[5:7]
    found = sorted(Path(chapters).glob(f"{chapter}_*.ipynb"))
    if not found:
        raise FileNotFoundError(f"no notebook {chapter}_*.ipynb in {chapters}")
    return found[0]


def model_answer(exercise: Exercise, chapters: Path) -> tuple[str, list[str]]:
    """The source of the exercise's solution cell, and the task's own code blocks defining the function."""
    import nbformat

    from .editions import _walk

    notebook = nbformat.read(_notebook(chapters, exercise), as_version=4)
    solution, tasks = None, []
    for role, cell, label in _walk(notebook):
        if label != exercise.label:
            continue
        if role == "solution-code" and f"def {exercise.function_name}(" in cell.source:
            solution = cell.source
        if role == "exercise":
            for block in re.findall(r"```python\n(.*?)```", cell.source, re.S):
                if f"def {exercise.function_name}(" in block:
                    tasks.append(block)
    if solution is None:
        raise ValueError(f"{exercise.name}: no solution cell defining {exercise.function_name} in the notebook")
    return solution, tasks


def _namespace() -> dict:
    import torch

    import posenc

    namespace = {"np": np, "math": math, "torch": torch, "posenc": posenc, "__name__": "__main__"}
    exec(compile(_POKE, "<mutant helper>", "exec"), namespace)
    return namespace


def _compile(source: str, name: str):
    namespace = _namespace()
    exec(compile(source, f"<mutant of {name}>", "exec"), namespace)
    return namespace[name]


@dataclass
class Mutant:
    description: str
    source: str
    public: engine.CheckResult | None = None
    grading: engine.CheckResult | None = None
    equivalent: bool = False
    survived: engine.CheckResult | None = None  # the large set's failure, for a survivor

    @property
    def verdict(self) -> str:
        if self.public is not None and not self.public.passed:
            return "killed public"
        if self.grading is not None and not self.grading.passed:
            return "killed grading"
        return "equivalent" if self.equivalent else "survived"


def _parameters(function: ast.FunctionDef, exercise: Exercise) -> dict:
    """Each parameter's constant stand-in: its default, else its value in the first public case if a number."""
    args = function.args.args
    defaults = dict(zip([a.arg for a in args][len(args) - len(function.args.defaults) :], function.args.defaults,
                        strict=True))
    first = exercise.cases[0]
    constants = {}
    for arg in args:
        if arg.arg in defaults and isinstance(defaults[arg.arg], ast.Constant):
            constants[arg.arg] = defaults[arg.arg].value
        elif isinstance(first.get(arg.arg), int | float) and not isinstance(first.get(arg.arg), bool):
            constants[arg.arg] = first[arg.arg]
    return constants


def mutate(source: str, name: str, constants: dict, arrays: list[str]) -> list[tuple[str, str]]:
    """(description, source) of every mutant of the function ``name`` in ``source`` (one change each).

    ``constants`` maps a parameter to the constant that stands in for it; ``arrays`` names the
    parameters that can be written in place.
    """
    module = ast.parse(source)
    index, function = next(
        (i, n) for i, n in enumerate(module.body) if isinstance(n, ast.FunctionDef) and n.name == name
    )
    found, seen = [], {ast.dump(function)}
    for site in _sites(function, constants, {"arrays": arrays}):
        try:
            changed = _apply(function, site)
            ast.fix_missing_locations(changed)
            dump = ast.dump(changed)
            if dump in seen:
                continue
            seen.add(dump)
            tree = copy.deepcopy(module)
            tree.body[index] = changed
            text = ast.unparse(ast.fix_missing_locations(tree))
            compile(text, "<mutant>", "exec")
        except (SyntaxError, TypeError, ValueError, AttributeError, IndexError):
            continue
        found.append((site.description, text))
    return found


def answers(exercise: Exercise, chapters: Path) -> list[str]:
    """The model answers: the notebook's solution, then the exercise's other ``answers`` (another style)."""
    return [model_answer(exercise, chapters)[0], *exercise.answers]


def mutants(exercise: Exercise, chapters: Path) -> list[Mutant]:
    """Every mutant of the exercise's model answers (and the task's own code, for a find-the-bug exercise)."""
    name = exercise.function_name
    arrays = [p for p, a in exercise.args.items() if a.kind in ("Wholes", "Reals", "Numbers", "Mapping")]
    found = [Mutant("the task's own code", block) for block in model_answer(exercise, chapters)[1]]
    for number, source in enumerate(answers(exercise, chapters), start=1):
        function = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name)
        prefix = "" if number == 1 else f"answer {number}, "
        for description, text in mutate(source, name, _parameters(function, exercise), arrays):
            found.append(Mutant(prefix + description, text))
    return found


def _large_set(exercise: Exercise) -> list[Case]:
    cases = list(exercise.plan(None))
    for seed in EQUIVALENCE_SEEDS:
        cases += [c for c in exercise.plan(seed) if c.origin in ("hidden", "form")]
    return cases


@dataclass
class Report:
    exercise: str
    model_ok: str  # "" when the model answer passes every run, else what failed
    mutants: list[Mutant] = field(default_factory=list)
    seconds: float = 0.0

    def count(self, verdict: str) -> int:
        return sum(m.verdict == verdict for m in self.mutants)

    def row(self) -> str:
        generated = len(self.mutants)
        public, grading = self.count("killed public"), self.count("killed grading")
        equivalent, survived = self.count("equivalent"), self.count("survived")
        live = generated - equivalent
        rate = f"{public / live:.0%}" if live else "-"
        return (
            f"| {self.exercise} | {generated} | {equivalent} | {public} | {grading} | {survived} | {rate} | "
            f"{self.seconds:.0f} s |"
        )


def _run(exercise: Exercise, function, seed, timeout):
    return engine.run_check(exercise, function, seed=seed, timeout=timeout, quiet=True)


def run_exercise(
    exercise: Exercise, chapters: Path, *, sample: int | None = None, sample_seed: int = 0, timeout: float = 2.0,
    log=None,
) -> Report:
    """Mutate the exercise's model answer and check every mutant (or a seeded ``sample`` of them)."""
    start = time.perf_counter()
    report = Report(exercise.name, "")
    limit = max(timeout, 10.0)
    for number, source in enumerate(answers(exercise, chapters), start=1):
        model = _compile(source, exercise.function_name)
        for seed in (None, GRADING_SEED):
            result = _run(exercise, model, seed, limit)
            if not result.passed:
                report.model_ok = f"model answer {number} fails (seed {seed}): {result}"
                return report
    everything = mutants(exercise, chapters)
    if sample is not None and len(everything) > sample:
        rng = np.random.default_rng([sample_seed, zlib.crc32(exercise.name.encode())])
        keep = sorted(set(rng.choice(len(everything), size=sample, replace=False).tolist()) | {
            i for i, m in enumerate(everything) if m.description == "the task's own code"})
        everything = [everything[i] for i in keep]
    large = None
    for mutant in everything:
        try:
            function = _compile(mutant.source, exercise.function_name)
        except Exception:
            continue
        mutant.public = _run(exercise, function, None, timeout)
        if mutant.public.passed:
            mutant.grading = _run(exercise, function, GRADING_SEED, timeout)
            if mutant.grading.passed:
                large = large if large is not None else _large_set(exercise)
                outcome, _ = run_forked(exercise, function, large, timeout, engine.run_cases)
                mutant.equivalent = outcome.passed
                mutant.survived = None if outcome.passed else outcome
        report.mutants.append(mutant)
        if log is not None:
            log(f"{exercise.name}: {mutant.verdict}: {mutant.description}")
    report.seconds = time.perf_counter() - start
    return report


HEADER = (
    "| exercise | generated | equivalent | killed public | killed grading | survived | public kill rate | time |\n"
    "|---|---|---|---|---|---|---|---|"
)


def main_report(reports: list[Report], verbose: bool = False) -> str:
    """The table of counts, then each survivor with the input that shows it."""
    lines = [HEADER, *(r.row() for r in reports)]
    for report in reports:
        if report.model_ok:
            lines.append(f"\n{report.exercise}: {report.model_ok}")
        for mutant in report.mutants:
            if mutant.verdict == "survived":
                lines.append(f"\n{report.exercise}: SURVIVED: {mutant.description}\n  {mutant.survived}")
            elif verbose:
                result = mutant.public if not mutant.public.passed else mutant.grading
                shown = "equivalent" if mutant.equivalent else f"{result.status}; hint: {result.hint}"
                lines.append(f"{report.exercise}: {mutant.verdict}: {mutant.description}: {shown}")
    return "\n".join(lines)
