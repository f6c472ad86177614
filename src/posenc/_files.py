"""Files written whole or not at all.

Every file the project writes (lab results and checkpoints, position tables, student
editions, grades) goes to a temporary name beside its target and is moved into place with
``os.replace``, which is atomic on POSIX and Windows within one folder. A crash or a
Ctrl-C midway leaves the old file (or none), never half of a new one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "write_atomic"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success move it onto ``path``, on failure delete it.

    For writers that want a file name (``torch.save``, ``numpy.savez``, ``json.dump`` to an open file).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    try:
        yield Path(temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_atomic(path: str | os.PathLike, content: str | bytes) -> None:
    """Write ``content`` (text as UTF-8, or bytes) to ``path`` through :func:`atomic_path`."""
    with atomic_path(path) as temporary:
        if isinstance(content, bytes):
            temporary.write_bytes(content)
        else:
            temporary.write_text(content, encoding="utf-8")
