"""Every public callable, one bad argument at a time (hypothesis).

``VALID_CALLS`` holds one valid call per callable in ``posenc.__all__``, with the kind of
each argument. The property: replacing any one argument by a value drawn from the bad
values of its kind (a wrong type, a negative, fractional, NaN or infinite number, a wrong
shape) either raises a ``TypeError`` or ``ValueError`` whose message names that argument,
or returns a finite result (the value was in fact valid). Never another exception, never a
NaN slipped through, never a message about an argument the caller did not pass.

A public callable added to ``posenc.__all__`` without an entry here fails
``test_every_public_callable_has_a_valid_call``.
"""

import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc

PAPER_RESULTS = Path(__file__).resolve().parents[1] / "chapters" / "data" / "paper_results.json"
INV8 = posenc.rope_inv_freq(8)
X = np.random.default_rng(0).normal(size=(5, 8))
W = posenc.random_projections(8, 4)
CACHE = posenc.RotaryKVCache(8, "dynamic", 100.0, 2.0, 4).append(X, X)

# argument kinds -> bad values of that kind
NAN, INF = float("nan"), float("inf")
BAD = {
    "size": ["4", 2.5, 4.0, -3, NAN, None, True, [4]],  # an integer count or length
    "int": ["1", 1.5, NAN, INF, None, [1]],  # an integer that may be negative
    "real": ["x", NAN, INF, -INF, -2.0, 0.0, None, [1.0], complex(1, 1)],
    "array": ["abc", None, [[NAN]], [INF], np.zeros((0, 0, 0)), np.ones((2, 3, 4, 5)), [[1, 2], [3]], 3.5],
    "bool": ["yes", 2, None, 1.0],
    "choice": [3, "bogus", None, ""],
}

# name -> (function, valid keyword arguments, {argument: kind})
VALID_CALLS = {
    "integer_encoding": (dict(n_positions=5, d_model=4), dict(n_positions="size", d_model="size")),
    "normalized_encoding": (dict(n_positions=5, d_model=4), dict(n_positions="size", d_model="size")),
    "sinusoidal": (
        dict(n_positions=5, d_model=4, base=100.0, dtype=np.float32),
        dict(n_positions="size", d_model="size", base="real", dtype="choice"),
    ),
    "sinusoidal_at": (
        dict(positions=[0, 3], d_model=4, base=100.0),
        dict(positions="array", d_model="size", base="real"),
    ),
    "sinusoidal_frequencies": (dict(d_model=6, base=100.0), dict(d_model="size", base="real")),
    "normalized_code_collisions": (
        dict(n_positions=4097, dtype=np.float16),
        dict(n_positions="size", dtype="choice"),
    ),
    "sinusoidal_variant": (
        dict(n_positions=5, d_model=4, base=100.0, layout="concatenated", timescales="tensor2tensor"),
        dict(n_positions="size", d_model="size", base="real", layout="choice", timescales="choice", dtype="choice"),
    ),
    "binary": (dict(n_positions=8, n_bits=3), dict(n_positions="size", n_bits="size")),
    "rope_inv_freq": (dict(head_dim=8, base=100.0), dict(head_dim="size", base="real")),
    "p_rope_inv_freq": (dict(head_dim=8, base=100.0, p=0.5), dict(head_dim="size", base="real", p="real")),
    "rope_angles": (dict(positions=[0, 1, 5], inv_freq=INV8), dict(positions="array", inv_freq="array")),
    "rope_cos_sin": (
        dict(positions=[0, 1, 5], inv_freq=INV8, attention_factor=1.5),
        dict(positions="array", inv_freq="array", attention_factor="real"),
    ),
    "apply_rope": (
        dict(x=X, positions=np.arange(5), inv_freq=INV8[:2], layout="interleaved", attention_factor=1.2, rotary_dim=4),
        dict(
            x="array", positions="array", inv_freq="array", layout="choice", attention_factor="real", rotary_dim="size"
        ),
    ),
    "apply_rope_complex": (
        dict(x=X, positions=np.arange(5), inv_freq=INV8, attention_factor=1.2),
        dict(x="array", positions="array", inv_freq="array", attention_factor="real"),
    ),
    "interleaved_to_half_permutation": (dict(head_dim=8), dict(head_dim="size")),
    "mrope_pair_axes": (
        dict(mrope_section=[2, 1, 1], mrope_interleaved=True),
        dict(mrope_section="array", mrope_interleaved="bool"),
    ),
    "mrope_angles": (
        dict(position_ids=np.arange(15).reshape(3, 5), inv_freq=INV8, mrope_section=[2, 1, 1], mrope_interleaved=True),
        dict(position_ids="array", inv_freq="array", mrope_section="array", mrope_interleaved="bool"),
    ),
    "apply_mrope": (
        dict(
            x=X,
            position_ids=np.arange(15).reshape(3, 5),
            inv_freq=INV8,
            mrope_section=[2, 1, 1],
            mrope_interleaved=False,
            layout="interleaved",
            attention_factor=1.2,
        ),
        dict(
            x="array",
            position_ids="array",
            inv_freq="array",
            mrope_section="array",
            mrope_interleaved="bool",
            layout="choice",
            attention_factor="real",
        ),
    ),
    "mrope_position_ids": (
        dict(segments=[2, (1, 4, 4), 3, (3, 2, 2)], spatial_merge_size=2, time_interval=1.5),
        dict(segments="array", spatial_merge_size="size", time_interval="real"),
    ),
    "patch_coordinates": (dict(height=3, width=4, centred=True), dict(height="size", width="size", centred="bool")),
    "augment_patch_coordinates": (
        dict(coords=[[0.5, -0.5], [0.1, 0.2]], shift=(0.1, -0.1), jitter=(1.2, 0.9), rescale=1.5),
        dict(coords="array", shift="array", jitter="array", rescale="real"),
    ),
    "raster_pair_frequencies": (dict(inv_freq=INV8, width=5), dict(inv_freq="array", width="size")),
    "axial_pair_frequencies": (dict(inv_freq=INV8, split="alternate"), dict(inv_freq="array", split="choice")),
    "mixed_pair_frequencies": (
        dict(head_dim=8, base=10.0, direction=0.3),
        dict(head_dim="size", base="real", direction="real"),
    ),
    "grid_rope_angles": (
        dict(coords=[[0, 0], [1, 2]], pair_freqs=[[0.1, 0.2], [0.3, -0.1]]),
        dict(coords="array", pair_freqs="array"),
    ),
    "grid_similarity": (
        dict(coords=[[0, 0], [1, 2]], pair_freqs=[[0.1, 0.2], [0.3, -0.1]], centre=1),
        dict(coords="array", pair_freqs="array", centre="size"),
    ),
    "axial_rope_angles": (
        dict(rows=[0, 0, 1], cols=[0, 1, 0], inv_freq=INV8[:2]),
        dict(rows="array", cols="array", inv_freq="array"),
    ),
    "apply_axial_rope": (
        dict(x=X, rows=[0, 0, 1, 1, 2], cols=[0, 1, 0, 1, 0], inv_freq=INV8[:2], layout="half", attention_factor=1.2),
        dict(x="array", rows="array", cols="array", inv_freq="array", layout="choice", attention_factor="real"),
    ),
    "scaled_inv_freq": (
        dict(method="yarn", head_dim=8, base=100.0, factor=4.0, original_max_position_embeddings=64),
        dict(method="choice", head_dim="size", base="real", factor="real", original_max_position_embeddings="size"),
    ),
    "ntk_scaled_base": (dict(base=100.0, factor=4.0, head_dim=8), dict(base="real", factor="real", head_dim="size")),
    "dynamic_ntk_factor": (
        dict(factor=4.0, seq_len=300, original_max_position_embeddings=64),
        dict(factor="real", seq_len="size", original_max_position_embeddings="size"),
    ),
    "dynamic_ntk_cached_keys": (
        dict(keys=np.ones((6, 8)), base=100.0, factor=4.0, original_max_position_embeddings=4, prefill_len=2),
        dict(
            keys="array",
            base="real",
            factor="real",
            original_max_position_embeddings="size",
            prefill_len="size",
            layout="choice",
        ),
    ),
    "yarn_attention_factor": (dict(factor=4.0), dict(factor="real")),
    "yarn_softmax_scale_multiplier": (dict(factor=40.0, mscale=0.707), dict(factor="real", mscale="real")),
    "longrope_attention_factor": (
        dict(factor=32.0, original_max_position_embeddings=4096),
        dict(factor="real", original_max_position_embeddings="size"),
    ),
    "yarn_correction_dim": (
        dict(num_rotations=4.0, head_dim=8, base=100.0, original_max_position_embeddings=64),
        dict(num_rotations="real", head_dim="size", base="real", original_max_position_embeddings="size"),
    ),
    "yarn_correction_range": (
        dict(beta_fast=32.0, beta_slow=1.0, head_dim=8, base=100.0, original_max_position_embeddings=64),
        dict(
            beta_fast="real",
            beta_slow="real",
            head_dim="size",
            base="real",
            original_max_position_embeddings="size",
            truncate="bool",
        ),
    ),
    "yarn_ramp": (
        dict(head_dim=8, base=100.0, original_max_position_embeddings=64, beta_fast=32.0, beta_slow=1.0),
        dict(
            head_dim="size",
            base="real",
            original_max_position_embeddings="size",
            beta_fast="real",
            beta_slow="real",
            truncate="bool",
        ),
    ),
    "yarn_matched_betas": (
        dict(
            base=500.0,
            original_max_position_embeddings=64,
            beta_fast=16.0,
            beta_slow=2.0,
            reference_base=1000.0,
            reference_length=512,
        ),
        dict(
            base="real",
            original_max_position_embeddings="size",
            beta_fast="real",
            beta_slow="real",
            reference_base="real",
            reference_length="size",
        ),
    ),
    "load_paper_results": (dict(path=PAPER_RESULTS), {}),
    "interpolate_at_length": (
        dict(lengths=[2048, 4096, 8192], values=[3.9, 3.5, 3.3], length=6000.0),
        dict(lengths="array", values="array", length="real"),
    ),
    "relative_to_length": (
        dict(lengths=[2048, 4096, 8192], values=[3.9, 3.5, 3.3], reference_length=4096.0),
        dict(lengths="array", values="array", reference_length="real"),
    ),
    "perplexity_from_bits": (dict(bits=[2.5, 3.0]), dict(bits="array")),
    "from_config": (
        dict(config=posenc.MODELS["Llama-3.1-8B"].config, seq_len=100),
        dict(config="choice", seq_len="size"),
    ),
    "logn_attention_scale": (
        dict(positions=[0, 10, 300], trained_length=64),
        dict(positions="array", trained_length="size"),
    ),
    "attention_temperature_scale": (
        dict(positions=[0, 10, 300], floor_scale=64.0, attn_scale=0.1),
        dict(positions="array", floor_scale="real", attn_scale="real"),
    ),
    "llama_4_scaling_query_scale": (
        dict(positions=[0, 10, 300], beta=0.1, original_max_position_embeddings=64),
        dict(positions="array", beta="real", original_max_position_embeddings="size"),
    ),
    "relative_positions": (dict(n_positions=5), dict(n_positions="size")),
    "alibi_slopes": (dict(n_heads=6), dict(n_heads="size")),
    "alibi_bias": (
        dict(n_positions=5, n_heads=6, bidirectional=True),
        dict(n_positions="size", n_heads="size", bidirectional="bool"),
    ),
    "t5_relative_bucket": (
        dict(relative_position=[-3, 0, 40], bidirectional=True, num_buckets=32, max_distance=128),
        dict(relative_position="array", bidirectional="bool", num_buckets="size", max_distance="size"),
    ),
    "t5_bucket_matrix": (
        dict(n_positions=6, bidirectional=False, num_buckets=16, max_distance=64),
        dict(n_positions="size", bidirectional="bool", num_buckets="size", max_distance="size"),
    ),
    "shaw_relative_indices": (
        dict(n_positions=6, max_relative_position=2),
        dict(n_positions="size", max_relative_position="size"),
    ),
    "similarity": (dict(table=X, normalize=True), dict(table="array", normalize="bool")),
    "similarity_by_offset": (
        dict(offsets=[0, 3, -2], d_model=8, base=100.0),
        dict(offsets="array", d_model="size", base="real"),
    ),
    "offset_matrix": (dict(k=3, d_model=8, base=100.0), dict(k="int", d_model="size", base="real")),
    "wavelengths": (dict(inv_freq=INV8), dict(inv_freq="array")),
    "rotations_within_context": (
        dict(inv_freq=INV8, context_length=64),
        dict(inv_freq="array", context_length="real"),
    ),
    "critical_dimension": (
        dict(head_dim=8, base=100.0, context_length=64),
        dict(head_dim="size", base="real", context_length="size"),
    ),
    "effective_scale": (dict(inv_freq=INV8, scaled_inv_freq=INV8 / 2), dict(inv_freq="array", scaled_inv_freq="array")),
    "rope_decay_bound": (dict(offsets=[0, 5, 50], inv_freq=INV8), dict(offsets="array", inv_freq="array")),
    "rope_scores": (
        dict(q=X[0], k=X[1], offsets=[0, 1, 5], inv_freq=INV8, layout="half", attention_factor=1.0),
        dict(q="array", k="array", offsets="array", inv_freq="array", layout="choice", attention_factor="real"),
    ),
    "rope_score_matrix": (
        dict(queries=X, keys=X, inv_freq=INV8, layout="half", attention_factor=1.0),
        dict(queries="array", keys="array", inv_freq="array", layout="choice", attention_factor="real"),
    ),
    "score_terms": (
        dict(tokens=X, positions=X, a=np.eye(8), combine="add"),
        dict(tokens="array", positions="array", a="array", combine="choice"),
    ),
    "principal_components": (dict(table=X, n_components=2), dict(table="array", n_components="size")),
    "linear_shift_fit": (dict(table=posenc.sinusoidal(64, 4), k=3), dict(table="array", k="size")),
    "unseen_angle_distance": (
        dict(inv_freq=INV8, context_length=64, positions=[10, 100]),
        dict(inv_freq="array", context_length="size", positions="array"),
    ),
    "angle_rounding_error": (
        dict(positions=[10, 1000], inv_freq=INV8, dtype="float16"),
        dict(positions="array", inv_freq="array", dtype="choice"),
    ),
    "softmax": (dict(logits=X, axis=0), dict(logits="array", axis="int")),
    "attention_weights": (
        dict(q=X, k=X, bias=np.zeros((5, 5)), causal=True),
        dict(q="array", k="array", bias="array", causal="bool"),
    ),
    "scaled_dot_product_attention": (
        dict(q=X, k=X, v=X, bias=np.zeros((5, 5)), causal=True),
        dict(q="array", k="array", v="array", bias="array", causal="bool"),
    ),
    "random_projections": (dict(d_model=8, d_head=4, seed=1), dict(d_model="size", d_head="size", seed="size")),
    "self_attention": (
        dict(x=X, w_q=W[0], w_k=W[1], w_v=W[2], bias=np.zeros((5, 5)), causal=True),
        dict(x="array", w_q="array", w_k="array", w_v="array", bias="array", causal="bool"),
    ),
    "permutation_equivariance_gap": (
        dict(tokens=X, permutation=[4, 3, 2, 1, 0], w_q=W[0], w_k=W[1], w_v=W[2], positions=X, causal=False),
        dict(
            tokens="array",
            permutation="array",
            w_q="array",
            w_k="array",
            w_v="array",
            positions="array",
            causal="bool",
        ),
    ),
    "position_ids_from_mask": (
        dict(attention_mask=[[0, 1, 1], [1, 1, 1]], fill_value=1),
        dict(attention_mask="array", fill_value="size"),
    ),
    "padding_mask": (dict(attention_mask=[[0, 1, 1]], causal=False), dict(attention_mask="array", causal="bool")),
    "packed_position_ids": (dict(lengths=[2, 3], start=1), dict(lengths="array", start="size")),
    "document_ids": (dict(lengths=[2, 3]), dict(lengths="array")),
    "document_ids_from_position_ids": (dict(position_ids=[[0, 1, 0, 1, 2]]), dict(position_ids="array")),
    "document_mask": (dict(lengths=[2, 3], causal=False), dict(lengths="array", causal="bool")),
    "mask_to_bias": (dict(mask=np.ones((3, 3), dtype=bool)), dict(mask="array")),
    "rope_attention": (
        dict(
            q=X,
            k=X,
            v=X,
            positions=np.arange(5),
            inv_freq=INV8,
            mask=np.tril(np.ones((5, 5), dtype=bool)),
            layout="interleaved",
            attention_factor=1.2,
        ),
        dict(
            q="array",
            k="array",
            v="array",
            positions="array",
            inv_freq="array",
            mask="array",
            layout="choice",
            attention_factor="real",
        ),
    ),
    "RotaryKVCache": (
        dict(
            head_dim=8,
            method="dynamic",
            base=100.0,
            factor=2.0,
            original_max_position_embeddings=4,
            store="unrotated",
            window=3,
            n_sink=1,
            position_rule="cache",
        ),
        dict(
            head_dim="size",
            method="choice",
            base="real",
            factor="real",
            original_max_position_embeddings="size",
            store="choice",
            layout="choice",
            window="size",
            n_sink="size",
            position_rule="choice",
        ),
    ),
    "cache_score_error": (dict(cache=CACHE, query=X[0]), dict(cache="choice", query="array")),
    "port_check": (
        dict(candidate=X, reference=X + 0.5, positions=[0, 1, 2, 10, 40], edges=[0, 3, 64]),
        dict(candidate="array", reference="array", positions="array", edges="array"),
    ),
}

PUBLIC_CALLABLES = sorted(name for name in posenc.__all__ if callable(getattr(posenc, name)))
ARGUMENTS = [(name, argument) for name in sorted(VALID_CALLS) for argument in VALID_CALLS[name][1]]


def finite(result) -> bool:
    """True when every number in ``result`` (an array, a number, a tuple of them) is finite."""
    if isinstance(result, tuple | list):
        return all(finite(part) for part in result)
    if isinstance(result, dict):  # load_paper_results: id -> quoted series
        return all(finite(series.known()[1]) for series in result.values())
    if hasattr(result, "inv_freq") and hasattr(result, "attention_factor"):  # from_config's layers
        return finite((result.inv_freq, result.attention_factor))
    if isinstance(result, torch.Tensor):
        result = result.detach().numpy()
    array = np.asarray(result)
    if array.dtype.kind not in "biufc":
        return False
    return bool(np.all(np.isfinite(array)))


def test_every_public_callable_has_a_valid_call():
    missing = sorted(set(PUBLIC_CALLABLES) - set(VALID_CALLS))
    assert missing == [], f"public callables with no entry in VALID_CALLS: {missing}"


@pytest.mark.parametrize("name", sorted(VALID_CALLS))
def test_the_valid_calls_are_valid(name):
    kwargs, kinds = VALID_CALLS[name]
    result = getattr(posenc, name)(**kwargs)
    assert finite(result), f"{name}(**{kwargs}) is not finite"
    optional = {"truncate", "dtype", "layout"}  # arguments the valid call leaves at their defaults
    assert set(kinds) <= set(kwargs) | optional, f"{name}: a kind for an argument the valid call lacks"


@pytest.mark.parametrize("name,argument", ARGUMENTS, ids=[f"{n}-{a}" for n, a in ARGUMENTS])
@settings(max_examples=30, deadline=None, derandomize=True)
@given(data=st.data())
def test_one_bad_argument_gets_an_error_naming_it_or_a_finite_result(name, argument, data):
    kwargs, kinds = VALID_CALLS[name]
    bad = data.draw(st.sampled_from(BAD[kinds[argument]]), label=argument)
    call = dict(kwargs, **{argument: bad})
    try:
        result = getattr(posenc, name)(**call)
    except (TypeError, ValueError) as error:
        named = re.search(rf"\b{argument}\b", str(error))
        assert named, f"{name}({argument}={bad!r}): the message does not name {argument}: {error}"
        return
    except Exception as error:  # any other exception is the failure this test looks for
        pytest.fail(f"{name}({argument}={bad!r}) raised {type(error).__name__}: {error}")
    assert finite(result), f"{name}({argument}={bad!r}) returned a non-finite result instead of an error"
    if isinstance(bad, float) and math.isnan(bad):
        pytest.fail(f"{name}({argument}=nan) was accepted")


# --- posenc.nn: constructors and forward, one bad argument at a time -------------------------
import posenc.nn  # noqa: E402  (after the NumPy table above, which needs no torch module)

Q = torch.zeros(1, 5, 8)
BAD_TENSORS = ["abc", None, np.zeros((1, 5, 8)), torch.zeros(5, 8, dtype=torch.int64), torch.zeros(8), 3.5]
BAD["tensor"] = BAD_TENSORS
BAD["fraction"] = ["0.1", NAN, INF, -0.1, 1.5, None]

# name -> (constructor kwargs and kinds, forward kwargs and kinds)
NN_CALLS = {
    "SinusoidalPositionalEncoding": (
        (
            dict(d_model=8, max_len=16, base=100.0, dropout=0.1, scale_embeddings=True),
            dict(d_model="size", max_len="size", base="real", dropout="fraction", scale_embeddings="bool"),
        ),
        (dict(x=Q, offset=2), dict(x="tensor", offset="size")),
    ),
    "LearnedPositionalEmbedding": (
        (
            dict(max_len=16, d_model=8, dropout=0.1, scale_embeddings=True, init_std=0.02),
            dict(max_len="size", d_model="size", dropout="fraction", scale_embeddings="bool", init_std="real"),
        ),
        (dict(x=Q, offset=2), dict(x="tensor", offset="size")),
    ),
    "RotaryEmbedding": (
        (
            dict(head_dim=8, base=100.0, layout="interleaved", scaling="linear", factor=2.0, max_len=16),
            dict(
                head_dim="size",
                base="real",
                layout="choice",
                scaling="choice",
                factor="real",
                original_max_position_embeddings="size",
                max_len="size",
                p_rope="fraction",
            ),
        ),
        (dict(q=Q, k=Q, offset=1), dict(q="tensor", k="tensor", positions="array", offset="size")),
    ),
    "ALiBiBias": (
        (dict(n_heads=6, causal=True), dict(n_heads="size", causal="bool", bidirectional="bool")),
        (dict(n_queries=4, n_keys=6), dict(n_queries="size", n_keys="size")),
    ),
}
NN_ARGUMENTS = [
    (name, part, argument)
    for name in sorted(NN_CALLS)
    for part, (_, kinds) in zip(("init", "forward"), NN_CALLS[name], strict=True)
    for argument in kinds
]


def usable(result) -> bool:
    """Finite, except that -inf marks a masked entry (ALiBi's causal mask)."""
    if isinstance(result, tuple):
        return all(usable(part) for part in result)
    array = result.detach().numpy()
    return bool(np.all(np.isfinite(array) | np.isneginf(array)))


def test_every_nn_module_has_a_valid_call():
    assert sorted(NN_CALLS) == sorted(posenc.nn.__all__)
    for name, ((init, _), (forward, _)) in NN_CALLS.items():
        assert usable(getattr(posenc.nn, name)(**init)(**forward)), name


@pytest.mark.parametrize("name,part,argument", NN_ARGUMENTS, ids=[f"{n}-{p}-{a}" for n, p, a in NN_ARGUMENTS])
@settings(max_examples=20, deadline=None, derandomize=True)
@given(data=st.data())
def test_one_bad_nn_argument_gets_an_error_naming_it_or_a_finite_result(name, part, argument, data):
    (init, init_kinds), (forward, forward_kinds) = NN_CALLS[name]
    kinds = init_kinds if part == "init" else forward_kinds
    bad = data.draw(st.sampled_from(BAD[kinds[argument]]), label=argument)
    try:
        if part == "init":
            module = getattr(posenc.nn, name)(**dict(init, **{argument: bad}))
            result = module(**forward)
        else:
            result = getattr(posenc.nn, name)(**init)(**dict(forward, **{argument: bad}))
    except (TypeError, ValueError) as error:
        named = re.search(rf"\b{argument}\b", str(error))
        assert named, f"{name} {part}({argument}={bad!r}): the message does not name {argument}: {error}"
        return
    except Exception as error:  # any other exception is the failure this test looks for
        pytest.fail(f"{name} {part}({argument}={bad!r}) raised {type(error).__name__}: {error}")
    assert usable(result), f"{name} {part}({argument}={bad!r}) returned a non-finite result instead of an error"
