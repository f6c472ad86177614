"""Files written whole or not at all.

Every file the project writes (lab results and checkpoints, position tables, student
editions, grades) goes to a temporary name beside its target and is moved into place with
``os.replace``, which is atomic on POSIX and Windows within one folder. A crash or a
Ctrl-C midway leaves the old file (or none), never half of a new one.

A file that several processes update (a lab results file that two sweeps write) is read,
changed and written back inside :func:`locked`, so no process writes back a copy that misses
what another wrote meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "write_atomic", "locked"]


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


@contextlib.contextmanager
def locked(path: str | os.PathLike, timeout: float = 600.0) -> Iterator[None]:
    """Hold an exclusive lock for updating ``path`` (waiting up to ``timeout`` seconds for it).

    POSIX: ``flock`` on the folder that holds ``path`` (no lock file is left behind; the
    operating system releases the lock when the process ends, also when it is killed). Windows:
    ``msvcrt.locking`` on ``<path>.lock`` beside it. Hold it only to read, change and write back.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        with open(path.with_name(path.name + ".lock"), "a+b") as handle:
            while True:
                try:
                    msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"{path}: another process holds its lock for over {timeout:g} s") from None
                    time.sleep(0.05)
            try:
                yield
            finally:
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    folder = os.open(path.parent, os.O_RDONLY)
    try:
        while True:
            try:
                fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{path}: another process holds its lock for over {timeout:g} s") from None
                time.sleep(0.02)
        try:
            yield
        finally:
            fcntl.flock(folder, fcntl.LOCK_UN)
    finally:
        os.close(folder)
