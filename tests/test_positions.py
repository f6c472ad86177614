"""Position ids for left padding and packed sequences, and their masks, against transformers 5.23.

The references: ``GenerationMixin._prepare_position_ids_for_generation`` and a tiny randomly
initialised ``LlamaForCausalLM`` (no weights downloaded) for left padding;
``DataCollatorWithFlattening``, ``find_packed_sequence_indices`` and ``create_causal_mask`` for
packing. The attention identities (a packed row with the block mask equals each document alone,
mask-derived positions equal the unpadded run) are checked with posenc's own attention.
"""

import numpy as np
import pytest
import torch
from transformers import DataCollatorWithFlattening, LlamaConfig, LlamaForCausalLM, Phi3Config, Phi3ForCausalLM
from transformers.generation.utils import GenerationMixin
from transformers.masking_utils import create_causal_mask, find_packed_sequence_indices

import posenc

RNG = np.random.default_rng(7)
HEAD_DIM = 16


def random_mask(rng, batch, seq):
    """0/1 masks with left padding, and some with holes in the middle."""
    mask = (rng.random((batch, seq)) > 0.3).astype(np.int64)
    for row, pads in enumerate(rng.integers(0, seq, size=batch)):
        mask[row, :pads] = 0
        mask[row, -1] = 1  # every row ends with a real token, as a prompt does
    return mask


# --- position ids from the padding mask --------------------------------------------------------


def test_position_ids_from_mask_by_hand():
    mask = [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 1, 1, 0, 1]]
    np.testing.assert_array_equal(
        posenc.position_ids_from_mask(mask), [[0, 0, 0, 1, 2], [0, 1, 2, 3, 4], [0, 0, 1, 0, 2]]
    )
    np.testing.assert_array_equal(posenc.position_ids_from_mask(mask, fill_value=1)[0], [1, 1, 0, 1, 2])
    np.testing.assert_array_equal(posenc.position_ids_from_mask(np.array([False, True, True])), [0, 0, 1])


def test_position_ids_from_mask_match_transformers_generation():
    for seed in range(20):
        mask = random_mask(np.random.default_rng(seed), 4, 9)
        expected = GenerationMixin._prepare_position_ids_for_generation(
            None, torch.zeros(4, 9, dtype=torch.long), {"attention_mask": torch.from_numpy(mask)}
        )
        np.testing.assert_array_equal(posenc.position_ids_from_mask(mask), expected.numpy())


def tiny_llama(rope_parameters=None, max_position_embeddings=64, layers=2, seed=0):
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=40,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=layers,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=HEAD_DIM,
        max_position_embeddings=max_position_embeddings,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=None,
        rope_parameters=rope_parameters or {"rope_type": "default", "rope_theta": 10000.0},
        initializer_range=0.3,  # scores of order 1, so that positions visibly matter (default 0.02: near uniform)
    )
    config._attn_implementation = "eager"
    return LlamaForCausalLM(config).eval()


def test_generate_feeds_the_mask_position_ids_and_continues_them():
    model = tiny_llama()
    mask = torch.tensor([[0, 0, 0, 1, 1, 1], [0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]])
    ids = torch.randint(2, 40, mask.shape) * mask
    seen = []
    forward = model.model.forward

    def spy(*args, **kwargs):
        seen.append(kwargs["position_ids"].clone())
        return forward(*args, **kwargs)

    model.model.forward = spy
    with torch.no_grad():
        model.generate(ids, attention_mask=mask, max_new_tokens=3, do_sample=False)
    np.testing.assert_array_equal(seen[0].numpy(), posenc.position_ids_from_mask(mask.numpy()))
    grown = np.concatenate((mask.numpy(), np.ones((3, 3), dtype=np.int64)), axis=1)
    for step, ids_step in enumerate(seen[1:]):  # each new token: the next mask-derived position
        np.testing.assert_array_equal(ids_step.numpy()[:, 0], posenc.position_ids_from_mask(grown)[:, 6 + step])


# --- left padding: what naive positions change -------------------------------------------------


def attention(q, k, v, positions, inv_freq, mask):
    return posenc.rope_attention(q, k, v, positions, inv_freq, mask)


def padded_row(n_real=6, n_pad=4, seed=0):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.normal(size=(n_pad + n_real, HEAD_DIM)) for _ in range(3))
    mask = np.r_[np.zeros(n_pad, dtype=np.int64), np.ones(n_real, dtype=np.int64)]
    return q, k, v, mask, n_pad


def test_static_rope_is_unmoved_by_naive_positions_but_dynamic_ntk_and_longrope_are_not():
    """RoPE scores depend on differences only: shifting every real token by the pads changes nothing.

    Speeds that read the length ``max(position_ids) + 1`` (dynamic NTK, LongRoPE's switch) do change:
    naive positions push the length past the trained one; the mask's positions reproduce the unpadded run.
    """
    q, k, v, mask, n_pad = padded_row()
    allowed = posenc.padding_mask(mask)
    naive, derived = np.arange(mask.size), posenc.position_ids_from_mask(mask)
    causal = np.tril(np.ones((mask.size - n_pad,) * 2, dtype=bool))
    static = posenc.rope_inv_freq(HEAD_DIM)
    alone = attention(q[n_pad:], k[n_pad:], v[n_pad:], np.arange(mask.size - n_pad), static, causal)
    for positions in (naive, derived):
        padded = attention(q, k, v, positions, static, allowed)[n_pad:]
        np.testing.assert_allclose(padded, alone, atol=1e-12)

    params = {
        "dynamic": {},
        "longrope": {"short_factor": np.linspace(1, 2, HEAD_DIM // 2), "long_factor": np.linspace(1, 8, HEAD_DIM // 2)},
    }
    for method, extra in params.items():

        def speeds(positions, method=method, extra=extra):  # transformers' rule: length max(position_ids) + 1
            length = int(positions.max()) + 1  # trained length 8
            return posenc.scaled_inv_freq(method, HEAD_DIM, 10000.0, 2.0, 8, seq_len=length, **extra)[0]

        alone = attention(q[n_pad:], k[n_pad:], v[n_pad:], np.arange(6), speeds(np.arange(6)), causal)
        good = attention(q, k, v, derived, speeds(derived), allowed)[n_pad:]
        bad = attention(q, k, v, naive, speeds(naive), allowed)[n_pad:]
        np.testing.assert_allclose(good, alone, atol=1e-12)
        assert np.abs(bad - alone).max() > 1e-2, method


def test_absolute_positions_are_moved_by_naive_positions():
    x, _, _, mask, n_pad = padded_row(seed=1)  # x: token embeddings
    w = posenc.random_projections(HEAD_DIM, seed=2)
    allowed = posenc.padding_mask(mask)
    causal = np.tril(np.ones((6, 6), dtype=bool))

    def run(x, positions, allow):
        h = x + posenc.sinusoidal_at(positions, HEAD_DIM)
        return posenc.scaled_dot_product_attention(h @ w[0], h @ w[1], h @ w[2], bias=posenc.mask_to_bias(allow))

    alone = run(x[n_pad:], np.arange(6), causal)
    np.testing.assert_allclose(run(x, posenc.position_ids_from_mask(mask), allowed)[n_pad:], alone, atol=1e-12)
    assert np.abs(run(x, np.arange(10), allowed)[n_pad:] - alone).max() > 1e-2


@pytest.fixture(scope="module")
def left_padded_logits():
    """Logits of the real tokens of a left-padded row, next to the row alone, for static and dynamic RoPE."""
    ids = torch.randint(2, 40, (1, 6), generator=torch.Generator().manual_seed(3))
    padded = torch.cat((torch.zeros(1, 4, dtype=torch.long), ids), dim=1)
    mask = torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1, 1, 1]])
    naive = torch.arange(10)[None]
    derived = torch.from_numpy(posenc.position_ids_from_mask(mask.numpy()))
    results = {}
    for name, rope in (
        ("default", None),
        ("dynamic", {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0}),
    ):
        with torch.no_grad():  # float32: in float64 the mask's minimum overflows to -inf, and pads become NaN
            alone = tiny_llama(rope, max_position_embeddings=8)(ids).logits[0]
            out = {}
            for label, positions in (("naive", naive), ("derived", derived)):
                model = tiny_llama(rope, max_position_embeddings=8)  # fresh: dynamic keeps state
                out[label] = model(padded, attention_mask=mask, position_ids=positions).logits[0, 4:]
        results[name] = {label: float((logits - alone).abs().max()) for label, logits in out.items()}
    return results


def test_transformers_left_padding_static_rope(left_padded_logits):
    errors = left_padded_logits["default"]
    assert errors["derived"] < 1e-4 and errors["naive"] < 1e-4  # float32 rounding only (about 1e-6)


def test_transformers_left_padding_dynamic_ntk(left_padded_logits):
    errors = left_padded_logits["dynamic"]
    assert errors["derived"] < 1e-4
    assert errors["naive"] > 1e-2  # 0.11 with these seeds


def test_transformers_dynamic_ntk_depends_on_the_batch():
    """transformers reads one length for the whole batch (``max(position_ids) + 1``): under dynamic NTK a
    short prompt's logits change when a prompt past the trained length is batched with it."""
    rope = {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0}
    short = torch.randint(2, 40, (1, 6), generator=torch.Generator().manual_seed(4))
    long = torch.randint(2, 40, (1, 12), generator=torch.Generator().manual_seed(5))
    batch = torch.cat((long, torch.cat((torch.zeros(1, 6, dtype=torch.long), short), dim=1)))
    mask = torch.cat((torch.ones(1, 12, dtype=torch.long), torch.tensor([[0] * 6 + [1] * 6])))
    positions = torch.from_numpy(posenc.position_ids_from_mask(mask.numpy()))
    with torch.no_grad():
        alone = tiny_llama(rope, max_position_embeddings=8)(short).logits[0]
        batched = tiny_llama(rope, max_position_embeddings=8)(
            batch, attention_mask=mask, position_ids=positions
        ).logits[1, 6:]
    assert (batched - alone).abs().max() > 1e-3


def test_transformers_longrope_depends_on_the_batch():
    """LongRoPE reads the same batch-wide length (``longrope_frequency_update``): a short prompt's logits change when
    a prompt past ``original_max_position_embeddings`` is batched with it, and not when the longest prompt fits."""
    torch.manual_seed(0)
    config = Phi3Config(
        vocab_size=40,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=HEAD_DIM,
        max_position_embeddings=32,
        original_max_position_embeddings=8,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=None,
        initializer_range=0.3,
        rope_parameters={
            "rope_type": "longrope",
            "rope_theta": 10000.0,
            "factor": 4.0,
            "short_factor": np.linspace(1, 2, HEAD_DIM // 2).tolist(),
            "long_factor": np.linspace(1, 8, HEAD_DIM // 2).tolist(),
        },
    )
    config._attn_implementation = "eager"
    model = Phi3ForCausalLM(config).eval()
    short = torch.randint(2, 40, (1, 6), generator=torch.Generator().manual_seed(4))
    gaps = {}
    for other in (8, 12):  # the longest prompt within L = 8, then past it
        long = torch.randint(2, 40, (1, other), generator=torch.Generator().manual_seed(5))
        pads = other - 6
        batch = torch.cat((long, torch.cat((torch.zeros(1, pads, dtype=torch.long), short), dim=1)))
        mask = torch.cat((torch.ones(1, other, dtype=torch.long), torch.tensor([[0] * pads + [1] * 6])))
        positions = torch.from_numpy(posenc.position_ids_from_mask(mask.numpy()))
        with torch.no_grad():
            alone = model(short).logits[0]
            batched = model(batch, attention_mask=mask, position_ids=positions).logits[1, pads:]
        gaps[other] = float((batched - alone).abs().max())
    assert gaps[8] < 1e-4 and gaps[12] > 1e-3, gaps


def test_padding_mask_by_hand_and_batched_attention_equals_each_row_alone():
    mask = np.array([[0, 1, 1], [1, 1, 1]])
    expected = np.array([[[1, 0, 0], [0, 1, 0], [0, 1, 1]], [[1, 0, 0], [1, 1, 0], [1, 1, 1]]], dtype=bool)
    np.testing.assert_array_equal(posenc.padding_mask(mask), expected)
    np.testing.assert_array_equal(posenc.padding_mask(mask, causal=False)[0], [[1, 1, 1], [0, 1, 1], [0, 1, 1]])
    rng = np.random.default_rng(5)
    mask = random_mask(rng, 3, 8)
    q, k, v = (rng.normal(size=(3, 2, 8, HEAD_DIM)) for _ in range(3))  # (batch, heads, seq, d)
    inv = posenc.rope_inv_freq(HEAD_DIM, 500.0)
    batched = posenc.rope_attention(q, k, v, posenc.position_ids_from_mask(mask), inv, posenc.padding_mask(mask))
    for row in range(3):
        real = mask[row] == 1
        n = int(real.sum())
        alone = posenc.rope_attention(
            q[row][:, real], k[row][:, real], v[row][:, real], np.arange(n), inv, np.tril(np.ones((n, n), bool))
        )
        np.testing.assert_allclose(batched[row][:, real], alone, atol=1e-12)


# --- packed sequences --------------------------------------------------------------------------


def test_packed_position_ids_and_document_ids_by_hand():
    np.testing.assert_array_equal(posenc.packed_position_ids([2, 3, 1]), [0, 1, 0, 1, 2, 0])
    np.testing.assert_array_equal(posenc.packed_position_ids([2, 1], start=2), [2, 3, 2])
    np.testing.assert_array_equal(posenc.document_ids([2, 3, 1]), [0, 0, 1, 1, 1, 2])
    expected = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1]], dtype=bool)
    np.testing.assert_array_equal(posenc.document_mask([2, 2]), expected)
    np.testing.assert_array_equal(posenc.document_mask([2, 2], causal=False), np.kron(np.eye(2), np.ones((2, 2))))


@pytest.mark.parametrize("seed", range(5))
def test_packing_matches_data_collator_with_flattening(seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 7, size=rng.integers(1, 6))
    start = int(rng.integers(0, 3))
    features = [{"input_ids": list(range(5, 5 + int(n)))} for n in lengths]
    batch = DataCollatorWithFlattening(return_tensors="np", position_ids_start=start, return_seq_idx=True)(features)
    np.testing.assert_array_equal(posenc.packed_position_ids(lengths, start=start), batch["position_ids"][0])
    np.testing.assert_array_equal(posenc.document_ids(lengths), batch["seq_idx"][0])


def test_document_ids_from_position_ids_match_transformers():
    for seed in range(20):
        rng = np.random.default_rng(seed)
        position_ids = (
            rng.integers(0, 4, size=(3, 10))
            if seed % 2
            else np.stack([posenc.packed_position_ids(rng.integers(2, 5, size=4))[:8] for _ in range(3)])
        )
        expected = find_packed_sequence_indices(torch.from_numpy(position_ids))
        ours = posenc.document_ids_from_position_ids(position_ids)
        if expected is None:  # transformers' "one document per row"
            assert np.all(ours == 0)
        else:
            np.testing.assert_array_equal(ours, expected.numpy())
    lengths = [3, 1, 4]
    np.testing.assert_array_equal(
        posenc.document_ids_from_position_ids(posenc.packed_position_ids(lengths)), posenc.document_ids(lengths)
    )


def test_document_mask_matches_transformers_causal_mask_for_packed_position_ids():
    config = LlamaConfig(hidden_size=8, num_attention_heads=2, head_dim=4, num_hidden_layers=1)
    config._attn_implementation = "sdpa"
    for lengths in ([2, 3, 1], [5], [1, 1, 1, 4], [4, 2, 6]):
        position_ids = torch.from_numpy(posenc.packed_position_ids(lengths))[None]
        total = int(sum(lengths))
        mask = create_causal_mask(config, torch.zeros(1, total, 8), None, None, position_ids=position_ids)
        if mask is None:  # one document: transformers leaves it to sdpa's is_causal
            mask = torch.ones(total, total, dtype=torch.bool).tril()
        np.testing.assert_array_equal(posenc.document_mask(lengths), mask.reshape(total, total).numpy())


def test_block_mask_makes_packing_equal_each_document_alone_and_its_absence_leaks():
    lengths = [4, 3, 5]
    total = sum(lengths)
    rng = np.random.default_rng(11)
    q, k, v = (rng.normal(size=(total, HEAD_DIM)) for _ in range(3))
    inv = posenc.rope_inv_freq(HEAD_DIM)
    positions = posenc.packed_position_ids(lengths)
    blocked = posenc.rope_attention(q, k, v, positions, inv, posenc.document_mask(lengths))
    leaky = posenc.rope_attention(q, k, v, positions, inv, np.tril(np.ones((total, total), dtype=bool)))
    starts = np.cumsum([0, *lengths[:-1]])
    for doc, (s, n) in enumerate(zip(starts, lengths, strict=True)):
        alone = posenc.rope_attention(
            q[s : s + n], k[s : s + n], v[s : s + n], np.arange(n), inv, np.tril(np.ones((n, n), dtype=bool))
        )
        np.testing.assert_allclose(blocked[s : s + n], alone, atol=1e-12)
        if doc == 0:  # the first document has nothing before it to leak from
            np.testing.assert_allclose(leaky[s : s + n], alone, atol=1e-12)
        else:
            assert np.abs(leaky[s : s + n] - alone).max() > 1e-2


def test_transformers_packs_only_without_an_attention_mask_or_a_cache():
    """A packed row through a tiny Llama: with packed position ids, no attention mask and ``use_cache=False``,
    each document's hidden states equal the document run alone. An all-ones attention mask, or the
    config's default ``use_cache=True`` (the model then makes a ``DynamicCache``), turns transformers'
    packing detection off (``_preprocess_mask_arguments``): a plain causal mask, and documents leak."""
    model = tiny_llama(layers=1).double()
    lengths = [3, 4, 2]
    ids = torch.randint(2, 40, (1, sum(lengths)), generator=torch.Generator().manual_seed(6))
    position_ids = torch.from_numpy(posenc.packed_position_ids(lengths))[None]
    with torch.no_grad():
        packed = model.model(ids, position_ids=position_ids, use_cache=False).last_hidden_state[0]
        with_mask = model.model(
            ids, position_ids=position_ids, attention_mask=torch.ones_like(ids), use_cache=False
        ).last_hidden_state[0]
        with_cache = model.model(ids, position_ids=position_ids).last_hidden_state[0]
        start = 0
        for doc, n in enumerate(lengths):
            alone = model.model(ids[:, start : start + n], use_cache=False).last_hidden_state[0]
            # transformers forms cos/sin in float32 even in a float64 model: agreement to about 1e-7
            torch.testing.assert_close(packed[start : start + n], alone, atol=1e-5, rtol=0)
            for leaky in (with_mask, with_cache):
                if doc:
                    assert (leaky[start : start + n] - alone).abs().max() > 1e-2
            start += n


def test_mask_to_bias():
    np.testing.assert_array_equal(posenc.mask_to_bias(np.array([[True, False]])), [[0.0, -np.inf]])


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: posenc.position_ids_from_mask([[0, 2, 1]]), "attention_mask must hold only 0"),
        (lambda: posenc.position_ids_from_mask(np.zeros((2, 2, 2))), "attention_mask must have shape"),
        (lambda: posenc.position_ids_from_mask(["a"]), "attention_mask must be an array"),
        (lambda: posenc.position_ids_from_mask([1, 1], fill_value=-1), "fill_value"),
        (lambda: posenc.packed_position_ids([2, 0]), "lengths must be >= 1"),
        (lambda: posenc.packed_position_ids([]), "lengths must list"),
        (lambda: posenc.packed_position_ids([2.5]), "lengths must hold whole numbers"),
        (lambda: posenc.document_mask([2], causal="yes"), "causal"),
        (lambda: posenc.mask_to_bias(np.ones((2, 2))), "mask must be an array of booleans"),
        (
            lambda: posenc.rope_attention(
                np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 4)), [0, 1], posenc.rope_inv_freq(4)
            ),
            "q has 3 rows",
        ),
        (
            lambda: posenc.rope_attention(
                np.ones((2, 4)),
                np.ones((2, 4)),
                np.ones((2, 4)),
                [0, 1],
                posenc.rope_inv_freq(4),
                np.zeros((2, 2), dtype=bool),
            ),
            "mask leaves a query",
        ),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()
