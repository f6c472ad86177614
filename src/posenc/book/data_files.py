"""The data files a chapter reads from the book's repository (its ``chapters/data/`` folder).

A reader who downloaded one notebook has the code but not the data; the chapter's first cell
calls :func:`require_data_files` so that a missing file is named at once, with where to get it,
instead of failing halfway down the page.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["require_data_files"]


def require_data_files(*paths: str | Path) -> None:
    """Return nothing if every one of ``paths`` is a file; otherwise raise :class:`FileNotFoundError`
    naming each missing file and where it comes from (the repository's ``chapters/data/``, which a
    notebook opened from ``chapters/`` finds as ``data/``)."""
    if not paths:
        raise ValueError("paths: name at least one data file, such as 'data/lab/lookup.json'; got none")
    for path in paths:
        if not isinstance(path, str | Path) or not str(path):
            raise TypeError(f"paths: each must be a file path (a str or pathlib.Path), got {path!r}")
    files = [Path(path) for path in paths]
    missing = [str(path) for path in files if not path.is_file()]
    if missing:
        raise FileNotFoundError(
            f"This chapter reads data files that are not here (working folder {Path.cwd()}): "
            f"{', '.join(missing)}. They are in the book's repository, in its chapters/data/ folder: "
            "open this notebook from chapters/ in a clone (`make lab` does), or copy that folder "
            "beside this notebook as data/."
        )
