"""The public API contract: the names the chapters and readers call, their parameter names and defaults, and
the shapes and types they return (a change to any of them breaks code written against the book)."""

import inspect

import numpy as np
import pytest
import torch

import posenc

# name -> the parameters (name, default or REQUIRED) the contract promises, in order
REQUIRED = inspect.Parameter.empty
CONTRACT = {
    "integer_encoding": [("n_positions", REQUIRED), ("d_model", REQUIRED)],
    "normalized_encoding": [("n_positions", REQUIRED), ("d_model", REQUIRED)],
    "sinusoidal": [("n_positions", REQUIRED), ("d_model", REQUIRED), ("base", 10000.0), ("dtype", np.float64)],
    "binary": [("n_positions", REQUIRED), ("n_bits", REQUIRED)],
    "rope_inv_freq": [("head_dim", REQUIRED), ("base", 10000.0)],
    "rope_angles": [("positions", REQUIRED), ("inv_freq", REQUIRED)],
    "apply_rope": [
        ("x", REQUIRED),
        ("positions", REQUIRED),
        ("inv_freq", REQUIRED),
        ("layout", "half"),
        ("attention_factor", 1.0),
    ],
    "scaled_inv_freq": [
        ("method", REQUIRED),
        ("head_dim", REQUIRED),
        ("base", 10000.0),
        ("factor", 1.0),
        ("original_max_position_embeddings", 2048),
        ("params", REQUIRED),
    ],
    "alibi_slopes": [("n_heads", REQUIRED)],
    "alibi_bias": [("n_positions", REQUIRED), ("n_heads", REQUIRED)],
    "similarity": [("table", REQUIRED), ("normalize", False)],
    "offset_matrix": [("k", REQUIRED), ("d_model", REQUIRED), ("base", 10000.0)],
    "wavelengths": [("inv_freq", REQUIRED)],
}


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_contract_signature(name):
    assert name in posenc.__all__
    parameters = list(inspect.signature(getattr(posenc, name)).parameters.values())
    promised = CONTRACT[name]
    # the contract's parameters come first, in order, with their defaults ...
    assert [(p.name, p.default) for p in parameters[: len(promised)]] == promised
    # ... and anything added around them is optional, so every call the contract allows still works
    added = parameters[len(promised) :]
    assert all(p.default is not REQUIRED or p.kind is p.VAR_KEYWORD for p in added), (
        f"{name}: added parameters must have defaults: {[p.name for p in added]}"
    )
    assert getattr(posenc, name).__doc__, f"{name} has no docstring"


def test_every_exported_name_exists_and_is_documented():
    for name in posenc.__all__:
        obj = getattr(posenc, name)
        if callable(obj):
            assert obj.__doc__ and len(obj.__doc__.strip()) > 20, name


def test_contract_shapes_and_types():
    assert posenc.integer_encoding(5, 3).shape == (5, 3)
    assert posenc.normalized_encoding(5, 3).shape == (5, 3)
    assert posenc.sinusoidal(7, 5).shape == (7, 5)
    assert posenc.binary(8, 3).shape == (8, 3)
    assert posenc.rope_inv_freq(64).shape == (32,)
    assert posenc.rope_angles(np.arange(10), posenc.rope_inv_freq(64)).shape == (10, 32)
    x = torch.zeros(2, 3, 10, 64, dtype=torch.bfloat16)
    out = posenc.apply_rope(x, np.arange(10), posenc.rope_inv_freq(64))
    assert isinstance(out, torch.Tensor) and out.shape == x.shape and out.dtype == x.dtype
    assert posenc.alibi_slopes(12).shape == (12,)
    assert posenc.alibi_bias(6, 4).shape == (4, 6, 6)
    assert posenc.similarity(np.ones((4, 2))).shape == (4, 4)
    assert posenc.offset_matrix(2, 6).shape == (6, 6)
    np.testing.assert_allclose(posenc.wavelengths(np.array([1.0, 0.5])), [2 * np.pi, 4 * np.pi])
    for method in posenc.SCALING_METHODS:
        params = {"seq_len": 4096} if method == "dynamic" else {}
        inv, af = posenc.scaled_inv_freq(method, 64, factor=2.0, **params)
        assert inv.shape == (32,) and isinstance(af, float)
