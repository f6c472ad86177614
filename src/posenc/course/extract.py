"""What the sealed grader takes from a submitted notebook: one function and what it needs, by reading.

The notebook is never run. Its code cells are parsed (IPython's ``%`` and ``!`` lines become
``pass``; a cell that is still not Python is skipped and noted), and for an exercise's function
the grader keeps, in the notebook's order, every top-level statement that binds or changes a name
the function needs, then what those statements need, until nothing new is needed: the imports,
constants, helpers and classes it uses, and every definition of the function itself (the last
one wins, as in a kernel that ran the cells in order). Statements that only compute or show
(``print(...)``, ``exercises.check(...)``) are left out. Each kept statement runs on its own
(one that raises is reported and the others still run), in the sealed process
(:mod:`posenc.course.sandbox_child`).

:func:`tamper_notes` reads every code cell for what a student who wanted to change the grade
would write (replacing the checker, patching NumPy's comparisons, tracing hooks, processes,
code built from strings, writing result files): the teacher's report names the cell. The grade
does not depend on it: the grader judges only the values the function returns.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

__all__ = ["Extracted", "extract_function", "notebook_statements", "tamper_notes"]

_MAGIC = re.compile(r"^(\s*)[%!?]")
_PROBLEMS = "__posenc_problems__"


@dataclass
class Extracted:
    """The source the sealed process runs for one function, and what reading the notebook found."""

    function: str
    source: str = ""
    defined: bool = False
    modules: list[str] = field(default_factory=list)  # what the kept code imports (loaded before it runs)
    functions: list[ast.FunctionDef] = field(default_factory=list)  # every function it defines (copy checks)
    skipped: list[int] = field(default_factory=list)  # code cells that are not Python


def _cell_source(source: str) -> str | None:
    if source.lstrip().startswith("%%"):
        return None
    return "\n".join(_MAGIC.sub(r"\1pass  # ", line) for line in source.splitlines())


def notebook_statements(notebook) -> tuple[list[tuple[int, ast.stmt]], list[int]]:
    """Every top-level statement of the notebook's code cells as ``(cell number, node)``, and the
    numbers (from 1, counting every cell) of the code cells that are not Python."""
    statements, skipped = [], []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        source = _cell_source(cell.get("source", ""))
        if source is None:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python, or too deep to read
            skipped.append(number)
            continue
        statements += [(number, node) for node in tree.body]
    return statements, skipped


def _bound(node: ast.stmt) -> set[str]:
    """Names a top-level statement binds."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store | ast.Del):
            names.add(sub.id)
        elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(sub.name)
    return names


#: Methods that change their object: a top-level ``table.update(...)`` changes ``table``.
_MUTATORS = frozenset(
    "append extend insert update setdefault pop popitem remove clear add discard sort reverse fill resize put "
    "itemset setflags".split()
)


def _changed(node: ast.stmt) -> set[str]:
    """Names a top-level statement changes without rebinding: ``x[i] = ...``, ``x.a = ...``, ``x.append(...)``
    (a method that changes its object: a list's, dict's or set's, NumPy's ``fill``, torch's ``add_``)."""
    names = set()
    for sub in ast.walk(node):
        target = None
        if isinstance(sub, ast.Subscript | ast.Attribute) and isinstance(sub.ctx, ast.Store | ast.Del):
            target = sub.value
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute):
            method = sub.func.attr
            if method in _MUTATORS or (method.endswith("_") and not method.startswith("_")):
                target = sub.func.value
        while isinstance(target, ast.Subscript | ast.Attribute):
            target = target.value
        if isinstance(target, ast.Name):
            names.add(target.id)
    return names


def _used(node: ast.AST) -> set[str]:
    """The names a statement reads from the notebook's globals: inside a function, those it neither
    takes as a parameter nor assigns (unless it declares them global)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        arguments = node.args
        own = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
        own |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
        body = node.body if isinstance(node.body, list) else [node.body]
        declared = {name for sub in body for n in ast.walk(sub) if isinstance(n, ast.Global) for name in n.names}
        for sub in body:
            for n in ast.walk(sub):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
                    own.add(n.id)
                elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    own.add(n.name)
                elif isinstance(n, ast.Import | ast.ImportFrom):
                    own |= {(a.asname or a.name).split(".")[0] for a in n.names}
        free = set().union(*(_used(sub) for sub in body)) if body else set()
        outer = set().union(*(_used(d) for d in getattr(node, "decorator_list", [])), *(
            _used(d) for d in [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]))
        return (free - (own - declared)) | outer
    names = set()
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            names |= _used(child)
        elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
            names.add(child.id)
        else:
            names |= _used(child)
    return names


def _imported_modules(nodes) -> list[str]:
    modules: dict[str, None] = {}
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Import):
                for alias in sub.names:
                    modules.setdefault(alias.name)
            elif isinstance(sub, ast.ImportFrom) and sub.module and not sub.level:
                modules.setdefault(sub.module)
                for alias in sub.names:
                    if alias.name != "*":
                        modules.setdefault(f"{sub.module}.{alias.name}")  # a submodule, if it is one
    return [m for m in modules if m.split(".")[0] != "posenc"]


def _wrapped(node: ast.stmt, cell: int) -> str:
    body = ast.unparse(node)
    indented = "\n".join("    " + line if line else line for line in body.splitlines())
    return (
        f"try:\n{indented}\n"
        f"except BaseException as __posenc_error__:\n"
        f"    {_PROBLEMS}.append({{'cell': {cell}, 'name': type(__posenc_error__).__name__, "
        f"'text': str(__posenc_error__)[:500]}})\n"
    )


def extract_function(notebook, function: str) -> Extracted:
    """The code the sealed process runs for ``function`` (see the module)."""
    statements, skipped = notebook_statements(notebook)
    found = Extracted(function, skipped=skipped)
    needed = {function}
    kept: set[int] = set()
    while True:
        grown = False
        for index, (_, node) in enumerate(statements):
            if index in kept:
                continue
            definition = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import)
            touches = _bound(node) | (set() if definition or isinstance(node, ast.ImportFrom) else _changed(node))
            if touches & needed:
                kept.add(index)
                needed |= _used(node)
                grown = True
        if not grown:
            break
    chosen = [statements[i] for i in sorted(kept)]
    found.defined = any(function in _bound(node) for _, node in chosen)
    found.modules = _imported_modules(node for _, node in chosen)
    found.functions = [
        sub for _, node in chosen for sub in ast.walk(node) if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    found.source = f"{_PROBLEMS} = []\n" + "".join(_wrapped(node, cell) for cell, node in chosen)
    return found


# --- what a submission tried -----------------------------------------------------------------------
#: Dotted names whose replacement (assignment, setattr, del) changes judging in a kernel.
_GUARDED = re.compile(
    r"^(posenc|exercises|check|builtins|__builtins__|otter|nbgrader|sys\.(modules|meta_path|path_hooks|path"
    r"|settrace|setprofile|audit|excepthook|stdout|stderr)|(np|numpy)\.(allclose|isclose|testing|array_equal"
    r"|all|any|abs|max|asarray|array)|torch\.(testing|allclose|isclose|equal)|importlib|unittest|math\.isclose"
    r"|json|csv|os\._exit)(\.|$)"
)
_CALLS = {
    "sys.settrace": "set a trace function (sys.settrace)",
    "sys.setprofile": "set a profile function (sys.setprofile)",
    "threading.settrace": "set a trace function (threading.settrace)",
    "threading.setprofile": "set a profile function (threading.setprofile)",
    "importlib.reload": "reloaded a module (importlib.reload)",
    "os._exit": "ended the process (os._exit)",
    "os.system": "started a process (os.system)",
    "os.popen": "started a process (os.popen)",
    "os.fork": "started a process (os.fork)",
    "exec": "ran code from a string (exec)",
    "eval": "ran code from a string (eval)",
    "compile": "compiled code from a string (compile)",
    "__import__": "imported by name (__import__)",
    "setattr": "set an attribute by name (setattr)",
    "delattr": "deleted an attribute by name (delattr)",
    "marshal.loads": "loaded code objects (marshal)",
    "pickle.loads": "unpickled data (pickle.loads)",
    "sys.addaudithook": "added an audit hook",
    "torch.from_file": "opened a file with torch.from_file",
    "torch.jit.CompilationUnit": "compiled TorchScript from a string",
}
_MODULES = {
    "subprocess": "started processes (subprocess)",
    "multiprocessing": "started processes (multiprocessing)",
    "ctypes": "used ctypes",
    "socket": "used sockets",
    "marshal": "imported marshal",
    "gc": "imported gc",
    "inspect": "imported inspect",
    "_posixsubprocess": "started processes (_posixsubprocess)",
    "_xxsubinterpreters": "started subinterpreters",
    "_xxinterpchannels": "started subinterpreters",
}


def _dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    if isinstance(node, ast.Subscript):
        inner = _dotted(node.value)
        return ".".join([inner, *reversed(parts)]) if inner else None
    return None


def tamper_notes(notebook) -> list[str]:
    """What the notebook's code does that could aim at the grade, one line each, naming the cell."""
    statements, _ = notebook_statements(notebook)
    notes: dict[str, None] = {}
    for cell, node in statements:
        for sub in ast.walk(node):
            found = None
            if isinstance(sub, ast.Attribute | ast.Subscript) and isinstance(sub.ctx, ast.Store | ast.Del):
                name = _dotted(sub)
                if name and _GUARDED.match(name):
                    found = f"replaced {name}"
            elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and sub.id in ("check", "exercises"):
                found = f"rebound the name {sub.id}"
            elif isinstance(sub, ast.Call):
                name = _dotted(sub.func)
                if name in _CALLS:
                    found = _CALLS[name]
                    if name in ("setattr", "delattr") and sub.args:
                        target = _dotted(sub.args[0])
                        if not (target and _GUARDED.match(target)):
                            found = None
                elif name == "open" and len(sub.args) > 1 and isinstance(sub.args[1], ast.Constant):
                    if any(ch in str(sub.args[1].value) for ch in "wax+"):
                        found = "wrote a file (open)"
            elif isinstance(sub, ast.Import | ast.ImportFrom):
                names = [a.name for a in sub.names] if isinstance(sub, ast.Import) else [sub.module or ""]
                for name in names:
                    if name.split(".")[0] in _MODULES:
                        found = _MODULES[name.split(".")[0]]
            if found:
                notes.setdefault(f"cell {cell}: {found}")
    return list(notes)
