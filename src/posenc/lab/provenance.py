"""What code produced a result: a hash of the sources a lab run executes, and the git commit.

A results file records, for every run, :func:`code_version`: the SHA-256 of the lab's
computing modules (``data``, ``model``, ``train``) and of every ``posenc`` module they import,
directly or not (found by reading their ``import`` statements with ``ast``, so a refactored
kernel changes the hash), plus the git commit of the checkout when there is one. Two runs
with the same hash ran the same code; the commit says where to find it.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import subprocess
from pathlib import Path

__all__ = ["code_version", "source_files"]

_PACKAGE = Path(__file__).resolve().parents[1]  # src/posenc
#: The modules whose code decides a run's numbers; the imports they make are followed from here.
_ROOTS = ("lab/data.py", "lab/model.py", "lab/train.py")
#: Read, never executed for results: this module itself.
_SKIP = {"lab/provenance.py"}


def _module_file(package_dir: Path, dotted: str) -> Path | None:
    """``dotted`` (``"scaling"`` or ``"lab.data"``) under ``package_dir``: a module file or a package's ``__init__``."""
    path = package_dir.joinpath(*dotted.split(".")) if dotted else package_dir
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(path: Path) -> list[Path]:
    """The ``posenc`` files that ``path`` imports with relative imports (``from .x import y``, ``from .. import z``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        base = path.parent
        for _ in range(node.level - 1):
            base = base.parent
        module = node.module or ""
        target = _module_file(base, module) if module else None  # "from .. import x": x, not the package
        if target is not None:
            found.append(target)
        for alias in node.names:  # from . import scaling: a submodule, when one has that name
            sub = _module_file(base, f"{module}.{alias.name}" if module else alias.name)
            if sub is not None:
                found.append(sub)
    return found


def source_files() -> list[str]:
    """The files (relative to ``src/posenc``, sorted) whose code a lab run executes to compute its numbers."""
    seen: set[Path] = set()
    todo = [_PACKAGE / root for root in _ROOTS]
    while todo:
        path = todo.pop().resolve()
        name = path.relative_to(_PACKAGE).as_posix()
        if path in seen or name in _SKIP or not path.is_relative_to(_PACKAGE):
            continue
        seen.add(path)
        todo.extend(_imports(path))
    return sorted(p.relative_to(_PACKAGE).as_posix() for p in seen)


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=_PACKAGE, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@functools.cache
def code_version() -> dict:
    """``{"source_hash", "files", "git_commit", "git_dirty"}`` for the code this process runs.

    ``source_hash`` is the SHA-256 (first 16 hex digits) over each file of :func:`source_files`,
    its path and its bytes. ``git_commit`` is ``None`` outside a git checkout; ``git_dirty`` is
    True when those files differ from that commit (then the hash, not the commit, says what ran).
    """
    files = source_files()
    digest = hashlib.sha256()
    for name in files:
        digest.update(name.encode() + b"\0" + (_PACKAGE / name).read_bytes() + b"\0")
    commit = _git("rev-parse", "HEAD")
    dirty = None
    if commit is not None:
        status = _git("status", "--porcelain", "--", *files)
        dirty = bool(status) if status is not None else None
    return {"source_hash": digest.hexdigest()[:16], "files": files, "git_commit": commit, "git_dirty": dirty}
