"""The tests' names for :mod:`posenc.reference_check`: a tiny model of a family in the reference library, traced.

The machinery (small and shrunk configs, the tiny model on the CPU, the recorded rotary and attention calls,
the replay of a rotation on a probe) lives in the library, where ``posenc explain`` checks itself with it
(:func:`posenc.reference_check.check_against_reference`). This module re-exports it for the tests, and keeps
:func:`compare`, the rotation-only check the zoo's tests (tests/test_models.py) run.
"""

from __future__ import annotations

from posenc.reference_check import (
    MAX_ELEMENTS,
    POSITIONS,
    ROUTING,
    SMALL,
    ReferenceCheck,
    Trace,
    build_config,
    build_model,
    check_against_reference,
    expected_rotation,
    record,
    reference_text_config,
    rotary_reference,
    rotation_of,
    shrink,
    small_config,
    trace,
)
from posenc.reference_check import _model_class as _model_class
from posenc.reference_check import _quiet as _quiet

__all__ = [
    "MAX_ELEMENTS",
    "POSITIONS",
    "ROUTING",
    "SMALL",
    "ReferenceCheck",
    "Trace",
    "build_config",
    "build_model",
    "check",
    "check_against_reference",
    "compare",
    "expected_rotation",
    "record",
    "reference_text_config",
    "rotary_reference",
    "rotation_of",
    "shrink",
    "problems",
    "small_config",
    "trace",
]


def check(raw: dict, seq_len: int | None = None) -> ReferenceCheck:
    """:func:`check_against_reference` as the tests run it: every field, and the library's errors raised."""
    return check_against_reference(raw, seq_len=seq_len, strict=True)


def problems(result: ReferenceCheck) -> list[str]:
    """A check's differences, or why it did not run, as the lines a failing test prints."""
    return [f"not checked: {result.reason}"] if result.reason is not None else list(result.differences)


def compare(raw: dict, positions=POSITIONS) -> list[str]:
    """Every difference in rotation between posenc's reading of ``raw`` and the library's tiny model, layer by layer.

    Which layers rotate and what each rotation does (not the windows nor the softmax scale: :func:`check`).
    """
    return problems(check_against_reference(raw, fields=("rotation",), positions=positions, strict=True))
