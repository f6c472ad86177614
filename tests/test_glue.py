"""posenc.book.glue: the value comes back unchanged (so a cell can assert on it), and a bad name is refused."""

import sys

import pytest

from posenc.book.glue import glue


def test_glue_returns_the_value_it_stores():
    assert glue("test-value", 0.25) == 0.25


def test_without_myst_nb_the_value_is_printed_only_when_asked(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "myst_nb", None)  # import fails as on a machine without myst-nb
    assert glue("hidden", 3) == 3
    assert capsys.readouterr().out == ""
    assert glue("shown", 3, display=True) == 3
    assert capsys.readouterr().out == "shown = 3\n"


@pytest.mark.parametrize("name,error", [("", ValueError), ("  ", ValueError), (3, TypeError), (None, TypeError)])
def test_a_name_that_is_not_a_non_empty_string_is_refused(name, error):
    with pytest.raises(error, match="name must be a"):
        glue(name, 1.0)


def test_numpy_scalars_are_glued_as_python_numbers(monkeypatch):
    import numpy as np

    stored = {}
    monkeypatch.setattr("myst_nb.glue", lambda name, value, display: stored.update({name: value}))
    assert glue("x", np.float64(0.25)) == 0.25
    assert type(stored["x"]) is float and type(glue("n", np.int64(3))) is int
