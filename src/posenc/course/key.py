"""The answer key: model answers, rubrics and the predictions' keys, kept out of the installed package.

What a student installs (``posenc``) holds the checkers, whose reference is posenc's own
library, as the self-check needs; it holds no model answer, no rubric and no prediction's key.
Those live in the teacher's folder ``teacher/key/`` of the book's repository, one module per
chapter (``ch08.py``: ``ANSWERS`` exercise name -> more model answers in other styles,
``RUBRICS`` label -> what a full answer says, ``PREDICTIONS`` label -> the question the website
asks, with its key), read here by their file paths.

Where the key is: ``POSENC_COURSE_KEY`` (a folder), else ``teacher/key`` beside the ``src/`` of an
editable posenc (a clone of the book's repository); ``POSENC_COURSE_KEY=none`` means no key (the
student website is built so). Without a key, rubrics are empty, no prediction has a form, and
copies are compared with posenc's functions and the chapters' solutions only.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Key", "key_folder", "load_key"]


@dataclass(frozen=True)
class Key:
    """The answer key of the whole book (empty when there is none)."""

    answers: dict = field(default_factory=dict)  # exercise name -> tuple of source texts
    rubrics: dict = field(default_factory=dict)  # exercise label -> tuple of rubric items
    predictions: dict = field(default_factory=dict)  # prediction label -> Choices or Number
    folder: Path | None = None


def key_folder() -> Path | None:
    """The folder of the answer key (see the module), or None."""
    chosen = os.environ.get("POSENC_COURSE_KEY")
    if chosen:
        return None if chosen.lower() == "none" else Path(chosen)
    package = Path(__file__).resolve().parents[1]
    if package.parent.name == "src":
        folder = package.parent.parent / "teacher" / "key"
        if folder.is_dir():
            return folder
    return None


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(f"_posenc_key_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.lru_cache(maxsize=4)
def _load(folder: Path | None) -> Key:
    if folder is None:
        return Key()
    if not folder.is_dir():
        raise FileNotFoundError(f"the answer key's folder {folder} does not exist (POSENC_COURSE_KEY)")
    from .questions import Choices, Number

    answers, rubrics, predictions = {}, {}, {}
    for path in sorted(folder.glob("ch[0-9][0-9].py")):
        module = _module(path)
        for name, table in (("ANSWERS", answers), ("RUBRICS", rubrics)):
            for label, items in getattr(module, name, {}).items():
                texts = isinstance(items, tuple) and all(isinstance(i, str) and i.strip() for i in items)
                if not items or not texts:
                    raise TypeError(f"{path}: {name}[{label!r}] must be a tuple of non-empty strings, got {items!r}")
                table[label] = items
        for label, answer in getattr(module, "PREDICTIONS", {}).items():
            if not isinstance(answer, Choices | Number):
                raise TypeError(f"{path}: PREDICTIONS[{label!r}] must be a Choices or a Number, got {answer!r}")
            predictions[label] = answer
    return Key(answers, rubrics, predictions, folder)


def load_key(folder: Path | str | None = None) -> Key:
    """The answer key in ``folder`` (default :func:`key_folder`); an empty :class:`Key` when there is none."""
    return _load(Path(folder).resolve() if folder is not None else key_folder())
