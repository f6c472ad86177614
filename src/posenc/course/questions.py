"""The answer a reader commits to before opening a prediction exercise's solution on the website.

A prediction exercise (:func:`posenc.course.activities.prediction`) may carry one question:

* :class:`Choices`: a question and two to five :class:`Choice` options, exactly one of them correct,
  each with one line of feedback that says why it is right or what it misses;
* :class:`Number`: a question whose answer is a number, right within ``tolerance``, with one line of
  feedback for a right and one for a wrong answer.

Each key is written from the chapter's own solution, and ``tests/test_answers.py`` ties it to the
chapter (a value the chapter computes, asserts or states). The book's Sphinx extension
(:mod:`posenc.book.answer_forms`) puts a form before the exercise's solution: the reader answers, presses
"Check", is told whether the answer was right, and the solution opens. The notebooks are unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Choice", "Choices", "Number"]


def _text(name: str, value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return value


@dataclass(frozen=True)
class Choice:
    """One option of a :class:`Choices` question: its ``text``, whether it is ``correct``, and one
    line of ``feedback`` shown after the reader checks it."""

    text: str
    feedback: str
    correct: bool = False

    def __post_init__(self):
        _text("text", self.text)
        _text("feedback", self.feedback)
        if not isinstance(self.correct, bool):
            raise TypeError(f"correct must be True or False, got {self.correct!r}")


@dataclass(frozen=True)
class Choices:
    """A multiple-choice question with exactly one correct :class:`Choice` (two to five in all)."""

    question: str
    choices: tuple[Choice, ...]

    def __post_init__(self):
        _text("question", self.question)
        if not isinstance(self.choices, tuple) or not all(isinstance(c, Choice) for c in self.choices):
            raise TypeError(f"choices must be a tuple of Choice, got {self.choices!r}")
        if not 2 <= len(self.choices) <= 5:
            raise ValueError(f"choices must hold 2 to 5 options, got {len(self.choices)}")
        correct = sum(c.correct for c in self.choices)
        if correct != 1:
            raise ValueError(f"exactly one choice must be correct, got {correct} in {self.question!r}")
        texts = [c.text for c in self.choices]
        if len(set(texts)) != len(texts):
            raise ValueError(f"two choices have the same text in {self.question!r}")

    @property
    def correct(self) -> Choice:
        """The one correct choice."""
        return next(c for c in self.choices if c.correct)

    def as_data(self) -> dict:
        """The question as the website's script reads it (JSON-ready)."""
        return {
            "kind": "choices",
            "question": self.question,
            "choices": [{"text": c.text, "feedback": c.feedback, "correct": c.correct} for c in self.choices],
        }


@dataclass(frozen=True)
class Number:
    """A question answered by a number: right when ``|answer - value| <= tolerance``."""

    question: str
    value: float
    tolerance: float
    right: str  # feedback for a right answer
    wrong: str  # feedback for a wrong answer
    unit: str = ""

    def __post_init__(self):
        for name in ("question", "right", "wrong"):
            _text(name, getattr(self, name))
        for name in ("value", "tolerance"):
            number = getattr(self, name)
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
                raise TypeError(f"{name} must be a finite number, got {number!r}")
        if self.tolerance < 0:
            raise ValueError(f"tolerance must be >= 0, got {self.tolerance!r}")

    def accepts(self, answer: float) -> bool:
        """Whether ``answer`` is right (within the tolerance)."""
        return abs(answer - self.value) <= self.tolerance

    def as_data(self) -> dict:
        """The question as the website's script reads it (JSON-ready)."""
        return {
            "kind": "number",
            "question": self.question,
            "value": self.value,
            "tolerance": self.tolerance,
            "unit": self.unit,
            "right": self.right,
            "wrong": self.wrong,
        }
