"""Every checker accepts the reference, names each typical mistake, and never raises."""


import numpy as np
import pytest
import torch

import posenc
from posenc.course import EXERCISES, check, engine

CASES = [(name, hint) for name, exercise in EXERCISES.items() for hint in exercise.mistakes]


@pytest.fixture
def posenc_available(monkeypatch):
    """The references and mistake models call posenc, which a check switches off for students' functions."""
    monkeypatch.setattr(engine, "SWITCH_OFF", False)


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_reference_solution_passes(name, posenc_available):
    result = check(name, EXERCISES[name].reference)
    assert result.passed and bool(result) and result.status == "passed"
    assert "Correct" in str(result) and result.checked == len(EXERCISES[name].plan(None))


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_calling_posenc_itself_does_not_pass(name):
    result = check(name, EXERCISES[name].reference)
    assert result.status == "failed" and ("switched off" in result.message or "posenc's own" in result.message)


@pytest.mark.parametrize("name,hint", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_each_typical_mistake_is_rejected_with_its_own_hint(name, hint, posenc_available):
    result = check(name, EXERCISES[name].mistakes[hint])
    assert result.status == "failed" and not result
    assert result.hint == hint
    assert "expected" in result.message and "input" in result.message


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_stub_is_not_attempted_yet_and_nothing_raises(name):
    def stub(*args, **kwargs):
        raise NotImplementedError("Exercise: write this function")

    result = check(name, stub)
    assert result.status == "not attempted" and "NotImplementedError" in result.message
    assert check(name, None).status == "not attempted"

    def crashes(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    crashed = check(name, crashes)
    assert crashed.status == "error" and "ZeroDivisionError" in crashed.message
    assert check(name, lambda *a, **k: None).status == "failed"
    assert check(name, lambda *a, **k: "text").status == "failed"


def test_wrong_shape_is_reported_as_a_shape():
    result = check("sinusoidal", lambda n_positions, d_model, base=10000.0: np.zeros((n_positions, d_model + 1)))
    assert "it returned shape (4, 5), expected shape (4, 4)" in result.message


def test_a_float32_torch_solution_gets_the_float64_hint():
    def torch_float32(n_positions, d_model, base=10000.0):
        p = torch.arange(n_positions, dtype=torch.float32)[:, None]
        i = torch.arange(0, d_model, 2, dtype=torch.float32)
        angles = p / base ** (i / d_model)
        table = torch.zeros(n_positions, d_model)
        table[:, 0::2], table[:, 1::2] = torch.sin(angles), torch.cos(angles[:, : d_model // 2])
        return table

    result = check("sinusoidal", torch_float32)
    assert result.status == "failed" and "float64" in result.hint


def test_a_float32_output_with_float64_angles_is_fine(posenc_available):
    # posenc's own float32 table: angles in float64, only the output rounded
    result = check(
        "sinusoidal",
        lambda n_positions, d_model, base=10000.0: posenc.sinusoidal(n_positions, d_model, base, dtype=np.float32),
    )
    assert result.passed


def test_float32_rope_angles_are_caught_at_large_positions():
    def rope_float32_angles(x, positions, base=10000.0):
        inv = (base ** (-np.arange(0, x.shape[-1], 2) / x.shape[-1])).astype(np.float32)
        angles = (np.asarray(positions, dtype=np.float32)[:, None] * inv).astype(np.float32)
        c, s = np.cos(angles), np.sin(angles)
        out = np.empty(x.shape)
        out[..., 0::2] = x[..., 0::2] * c - x[..., 1::2] * s
        out[..., 1::2] = x[..., 0::2] * s + x[..., 1::2] * c
        return out

    result = check("rope", rope_float32_angles)
    assert result.status == "failed" and "float64" in result.hint


def test_unknown_exercise_and_html_view(posenc_available):
    with pytest.raises(ValueError, match="known exercises are: self_attention, sinusoidal"):
        check("nope", print)
    html = check("binary", posenc.binary)._repr_html_()
    assert "Correct" in html and "#009E73" in html


def test_every_exercise_reference_is_a_posenc_computation():
    # the references are the library (or thin wrappers around it), never a copy of a mistake
    for name, exercise in EXERCISES.items():
        module = exercise.reference.__module__
        assert module.startswith("posenc"), name
    assert EXERCISES["sinusoidal"].reference is posenc.sinusoidal
