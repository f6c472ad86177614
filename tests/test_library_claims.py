"""What the chapters say another library does, checked by running that library or by quoting its pinned source.

One test per claim; each docstring quotes the chapter's sentence it backs. The library is
``transformers`` 5.23 (the book's reference; tiny randomly initialised models, no weights
downloaded, a word-level tokenizer built in memory) or PyTorch 2.13. Code that is not a package
here (Meta's Llama 2 and Llama 4 reference code, DeepSeek's inference code, Qwen-1's remote code,
the Llama conversion script, tensor2tensor, fairseq, the ALiBi, StreamingLLM and YaRN authors'
code) is quoted with its repository, path and commit, and the quoted lines are run.

The registry at the end (``CLAIMS``) lists every sentence of chapters 13 to 16 that says what
another library does, with the test behind it here or in another file; a scanner finds the
sentences that name a library or engine with a verb of behaviour, and each must be a Claim or a
``NotAClaim`` with its reason. Each of those chapters names the versions it was checked against.
"""

import dataclasses
import inspect
import math
import re
import textwrap
import types

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer, models
from transformers import (
    DeepseekV3Config,
    DynamicCache,
    LlamaConfig,
    LlamaForCausalLM,
    Phi3Config,
    Phi3ForCausalLM,
    PreTrainedTokenizerFast,
)
from transformers.models.deepseek_v3 import modeling_deepseek_v3
from transformers.models.llama import modeling_llama
from transformers.models.llama4 import modeling_llama4

import posenc

HEAD_DIM = 16
L = 8  # the tiny Phi-3's original_max_position_embeddings


# --- chapter 16: padded batches and the length the reference reads ------------------------------


def tiny_phi3(short_factor=None, long_factor=None):
    """A 2-layer Phi-3 with LongRoPE (L = 8, factors made up: short 1 to 2, long 1 to 8), eager attention."""
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
        original_max_position_embeddings=L,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=None,
        initializer_range=0.3,  # scores of order 1, so that positions visibly matter
        rope_parameters={
            "rope_type": "longrope",
            "rope_theta": 10000.0,
            "factor": 4.0,
            "short_factor": short_factor or np.linspace(1, 2, HEAD_DIM // 2).tolist(),
            "long_factor": long_factor or np.linspace(1, 8, HEAD_DIM // 2).tolist(),
        },
    )
    config._attn_implementation = "eager"
    return Phi3ForCausalLM(config).eval()


def tokenizer():
    """A word-level tokenizer built in memory (words w0 .. w37 -> ids 2 .. 39, pad 0), padding on the left."""
    vocab = {"[PAD]": 0, "[UNK]": 1, **{f"w{i}": i + 2 for i in range(38)}}
    return PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="[UNK]")),
        pad_token="[PAD]",
        unk_token="[UNK]",
        padding_side="left",
    )


SHORT = torch.randint(2, 40, (6,), generator=torch.Generator().manual_seed(4)).tolist()


def longest(n):
    return torch.randint(2, 40, (n,), generator=torch.Generator().manual_seed(5)).tolist()


def run(model, batch, positions):
    """Logits of the batch; positions "mask" (posenc.position_ids_from_mask), "naive" (0 .. seq-1) or None
    (no position_ids: the model's own default)."""
    mask = batch["attention_mask"]
    ids = {
        "mask": torch.from_numpy(posenc.position_ids_from_mask(mask.numpy())),
        "naive": torch.arange(mask.shape[1]).expand_as(mask),
        None: None,
    }[positions]
    with torch.no_grad():
        return model(batch["input_ids"], attention_mask=mask, position_ids=ids).logits


def short_row_alone(model):
    with torch.no_grad():
        return model(torch.tensor([SHORT])).logits[0]


def short_row_in(logits):
    """The short row's real tokens (row 0, its last 6 columns)."""
    return logits[0, -len(SHORT) :]


@pytest.mark.parametrize("other", [7, 12], ids=["longest row within L", "longest row past L"])
def test_padding_to_the_longest_row_reads_the_same_length_either_way(other):
    """Chapter 16: "A batch padded to its longest row gives that row no pads, and its last position is the
    same whichever way the positions are counted: the length read, and every row's speeds, are then the
    same with naive positions as with the mask's".

    ``padding=True`` pads to the longest row; LongRoPE reads ``torch.max(position_ids) + 1`` over the
    batch. Naive positions (and no ``position_ids`` at all, which Phi-3 replaces by 0 .. seq-1) give the
    logits of the mask's positions to float32 rounding, with the longest row within L and past it."""
    model = tiny_phi3()
    batch = tokenizer().pad({"input_ids": [SHORT, longest(other)]}, padding=True, return_tensors="pt")
    assert batch["attention_mask"][1].all()  # the longest row has no pads
    by_mask = run(model, batch, "mask")
    real = batch["attention_mask"].bool()
    for positions in ("naive", None):
        gap = float((run(model, batch, positions) - by_mask)[real].abs().max())
        assert gap < 1e-4, (positions, gap)  # float32 rounding only (about 1e-6)


@pytest.mark.parametrize(
    "padding",
    [{"padding": "max_length", "max_length": 12}, {"padding": True, "pad_to_multiple_of": 12}],
    ids=["max_length", "pad_to_multiple_of"],
)
def test_padding_past_the_longest_row_makes_naive_positions_read_a_longer_length(padding):
    """Chapter 16: "Naive positions make the batch look longer only when it is padded past its longest row:
    to a fixed length (`padding="max_length"`) or to a multiple (`pad_to_multiple_of`), the tokenizer's
    options".

    Rows of 6 and 7 tokens (both within L = 8) padded to 12: the mask's positions read the length 7 and
    the short row keeps its logits alone; naive positions read 12, past L, switch LongRoPE to its long
    factors, and move the short row's logits."""
    model = tiny_phi3()
    batch = tokenizer().pad({"input_ids": [SHORT, longest(7)]}, return_tensors="pt", **padding)
    assert batch["input_ids"].shape[1] == 12 and not batch["attention_mask"][:, 0].any()  # padded past both rows
    alone = short_row_alone(model)
    by_mask = float((short_row_in(run(model, batch, "mask")) - alone).abs().max())
    rotary = model.model.rotary_emb
    np.testing.assert_array_equal(rotary.inv_freq, rotary.original_inv_freq)  # the mask's length: short factors
    naive = float((short_row_in(run(model, batch, "naive")) - alone).abs().max())
    np.testing.assert_array_equal(rotary.inv_freq, rotary.long_inv_freq)  # length 12 > L: the long factors
    assert by_mask < 1e-4 and naive > 1e-1, (by_mask, naive)


def test_a_short_row_gets_the_long_factors_when_the_longest_row_passes_l():
    """Chapter 16: "`torch.max(position_ids) + 1` is taken over the whole batch, so under LongRoPE the
    speeds of every row are those of the batch's longest prompt".

    A row of 6 tokens with the mask's positions, batched with a row of 12 (past L = 8): its logits are
    not those of the row alone, and they are those of the row alone run with the long factors (the same
    weights, the long factors given as the short ones)."""
    model = tiny_phi3()
    batch = tokenizer().pad({"input_ids": [SHORT, longest(12)]}, padding=True, return_tensors="pt")
    batched = short_row_in(run(model, batch, "mask"))
    assert float((batched - short_row_alone(model)).abs().max()) > 1e-1
    long_everywhere = tiny_phi3(short_factor=np.linspace(1, 8, HEAD_DIM // 2).tolist())
    long_everywhere.load_state_dict(model.state_dict())
    assert float((batched - short_row_alone(long_everywhere)).abs().max()) < 1e-4


# --- chapter 16: the KV cache of transformers holds rotated keys ----------------------------------


def test_llama_attention_rotates_the_keys_then_calls_past_key_values_update():
    """Chapter 16: "`transformers` stores it rotated: its attention (`LlamaAttention.forward` in
    `models/llama/modeling_llama.py`) applies `apply_rotary_pos_emb` and then `past_key_values.update`,
    the cache's `update` method called through the argument `past_key_values`, so a `DynamicCache` holds
    rotated keys".

    The pinned 5.23 source has the two calls in that order (the cache is the argument
    ``past_key_values``); a tiny Llama run with a ``DynamicCache`` holds its layer-0 keys rotated at
    their positions (posenc.apply_rope on the keys before RoPE)."""
    source = inspect.getsource(modeling_llama.LlamaAttention.forward)
    rotate = source.index("query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)")
    store = source.index("past_key_values.update(key_states, value_states, self.layer_idx)")
    assert rotate < store

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=40,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=HEAD_DIM,
        max_position_embeddings=64,
        initializer_range=0.3,
    )
    config._attn_implementation = "eager"
    model = LlamaForCausalLM(config).eval()
    ids = torch.randint(2, 40, (1, 10), generator=torch.Generator().manual_seed(1))
    cache = DynamicCache(config=config)
    with torch.no_grad():
        model(ids[:, :6], past_key_values=cache, use_cache=True)
        for n in range(6, 10):
            model(ids[:, n : n + 1], past_key_values=cache, use_cache=True)
        layer = model.model.layers[0]
        raw = layer.self_attn.k_proj(layer.input_layernorm(model.model.embed_tokens(ids)))
    raw = raw.view(1, 10, 2, HEAD_DIM).transpose(1, 2).double().numpy()
    rotated = posenc.apply_rope(raw, np.arange(10), posenc.rope_inv_freq(HEAD_DIM))
    cached = cache.layers[0].keys.double().numpy()
    np.testing.assert_allclose(cached, rotated, atol=2e-5)  # float32
    assert np.abs(cached - raw).max() > 1e-1  # not the keys before RoPE


# --- chapter 13: which layout a model's code rotates ----------------------------------------------


def random_heads(seed=0, d=HEAD_DIM, n=5):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(1, 2, n, d))


def test_the_llama_code_of_transformers_rotates_half_pairs():
    """Chapter 13: "in the **half** layout (GPT-NeoX, and the Llama code of `transformers`,
    `models/llama/modeling_llama.py`, which runs Llama 2 and Llama 3) it is $(i, i + d/2)$".

    ``apply_rotary_pos_emb`` with the cos and sin that ``LlamaRotaryEmbedding`` builds (the angles
    repeated, ``cat(freqs, freqs)``) is posenc's half layout, not its interleaved one; the zoo's Llama 2
    and Llama 3.1 configs both have ``model_type`` "llama"."""
    x = random_heads()
    positions = np.arange(x.shape[-2])
    inv_freq = posenc.rope_inv_freq(HEAD_DIM)
    angles = np.outer(positions, inv_freq)
    emb = torch.from_numpy(np.concatenate([angles, angles], axis=-1))[None]
    q = torch.from_numpy(x)
    rotated, _ = modeling_llama.apply_rotary_pos_emb(q, q, emb.cos(), emb.sin())
    np.testing.assert_allclose(rotated.numpy(), posenc.apply_rope(x, positions, inv_freq, "half"), atol=1e-12)
    assert np.abs(rotated.numpy() - posenc.apply_rope(x, positions, inv_freq, "interleaved")).max() > 1e-1
    for name in ("Llama-2-13b-chat", "Llama-3.1-8B"):
        assert posenc.MODELS[name].config["model_type"] == "llama"


def test_llama4_rotates_interleaved_pairs_by_complex_multiplication():
    """Chapter 13: "Llama 4's modeling code (`models/llama4/modeling_llama4.py`, `apply_rotary_emb`) rotates
    interleaved pairs, as complex numbers".

    ``apply_rotary_emb`` views consecutive coordinates as one complex number and multiplies it by
    ``freqs_cis`` (what ``Llama4TextRotaryEmbedding`` returns: ``torch.polar`` of the angles): that is
    posenc's interleaved layout, not its half one."""
    source = inspect.getsource(modeling_llama4.apply_rotary_emb)
    assert "torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))" in source
    x = random_heads(1)  # (batch, heads, seq, d); Llama 4 rotates (batch, seq, heads, d)
    positions = np.arange(x.shape[-2])
    inv_freq = posenc.rope_inv_freq(HEAD_DIM)
    angles = torch.from_numpy(np.outer(positions, inv_freq))[None]
    freqs_cis = torch.polar(torch.ones_like(angles), angles)
    q = torch.from_numpy(x).transpose(1, 2)
    rotated, _ = modeling_llama4.apply_rotary_emb(q, q, freqs_cis)
    rotated = rotated.transpose(1, 2).double().numpy()
    np.testing.assert_allclose(rotated, posenc.apply_rope(x, positions, inv_freq, "interleaved"), atol=1e-5)
    assert np.abs(rotated - posenc.apply_rope(x, positions, inv_freq, "half")).max() > 1e-1


def test_deepseek_v3_rotates_interleaved_pairs_when_rope_interleave_is_true():
    """Chapter 13: "DeepSeek-V3's (`models/deepseek_v3/modeling_deepseek_v3.py`) rotates the interleaved
    pairs of its weights when its config's `rope_interleave` is true, the default (and writes the result
    in the half layout's order, which no dot product notices)".

    ``DeepseekV3Config().rope_interleave`` is True; the attention then calls
    ``apply_rotary_pos_emb_interleave``: posenc's interleaved rotation, its output reordered by
    ``interleaved_to_half_permutation``; otherwise ``apply_rotary_pos_emb``, the half layout."""
    assert DeepseekV3Config().rope_interleave is True
    source = textwrap.dedent(inspect.getsource(modeling_deepseek_v3.DeepseekV3Attention.forward))
    assert "if self.config.rope_interleave:" in source
    branch = source[source.index("if self.config.rope_interleave:") :]
    assert branch.index("apply_rotary_pos_emb_interleave(") < branch.index("else:")
    x = random_heads(2)
    positions = np.arange(x.shape[-2])
    inv_freq = posenc.rope_inv_freq(HEAD_DIM)
    angles = np.outer(positions, inv_freq)
    emb = torch.from_numpy(np.concatenate([angles, angles], axis=-1))[None]
    q = torch.from_numpy(x)
    interleave = modeling_deepseek_v3.apply_rotary_pos_emb_interleave(q, q, emb.cos(), emb.sin())[0].numpy()
    by_pairs = posenc.apply_rope(x, positions, inv_freq, "interleaved")
    pi = posenc.interleaved_to_half_permutation(HEAD_DIM)
    np.testing.assert_allclose(interleave, by_pairs[..., pi], atol=1e-12)
    np.testing.assert_allclose(interleave, posenc.apply_rope(x[..., pi], positions, inv_freq, "half"), atol=1e-12)
    assert np.abs(interleave - posenc.apply_rope(x, positions, inv_freq, "half")).max() > 1e-1
    half = modeling_deepseek_v3.apply_rotary_pos_emb(q, q, emb.cos(), emb.sin())[0].numpy()
    np.testing.assert_allclose(half, posenc.apply_rope(x, positions, inv_freq, "half"), atol=1e-12)


# --- chapter 14: DeepSeek's inference code and its softmax scale ----------------------------------

# deepseek-ai/DeepSeek-V3, inference/model.py, read at commit b15f0dbbbe6a4bc403306175698439ef380f5fb5
# (the last commit to change the file; the same at the repository's head 9b4e9788e4a3a731f7567338ed15d3ec549ce03b).
# ModelArgs, lines 56 and 81-86:
DEEPSEEK_MODEL_ARGS = """\
    max_seq_len: int = 4096 * 4
    original_seq_len: int = 4096
    rope_theta: float = 10000.0
    rope_factor: float = 40
    beta_fast: int = 32
    beta_slow: int = 1
    mscale: float = 1.
"""
# MLA.__init__, lines 434-437:
DEEPSEEK_SOFTMAX_SCALE = """\
        self.softmax_scale = self.qk_head_dim ** -0.5
        if args.max_seq_len > args.original_seq_len:
            mscale = 0.1 * args.mscale * math.log(args.rope_factor) + 1.0
            self.softmax_scale = self.softmax_scale * mscale * mscale
"""
# precompute_freqs_cis, lines 308 and 366-367 (the YaRN speeds, under the same condition):
DEEPSEEK_SPEEDS = """\
    seqlen = args.max_seq_len
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    if seqlen > args.original_seq_len:
"""
# configs/config_671B.json (DeepSeek-V3) names none of max_seq_len, original_seq_len, rope_factor, mscale.


def deepseek_args(**overrides):
    """ModelArgs' defaults, from the quoted lines, with ``overrides``."""
    namespace = {}
    exec(textwrap.dedent(DEEPSEEK_MODEL_ARGS).replace(": int", "").replace(": float", ""), {}, namespace)
    return types.SimpleNamespace(**{**namespace, **overrides})


def deepseek_softmax_scale(args, qk_head_dim=192):
    """The quoted lines of ``MLA.__init__``, run on ``args``."""
    layer = types.SimpleNamespace(qk_head_dim=qk_head_dim)
    exec(textwrap.dedent(DEEPSEEK_SOFTMAX_SCALE), {"math": math}, {"self": layer, "args": args})
    return layer.softmax_scale


def test_deepseek_inference_code_scales_the_softmax_of_every_input_when_built_past_original_seq_len():
    """Chapter 14: "DeepSeek's own inference code (`inference/model.py`, `MLA.__init__`) does the same with
    `mscale`, once, when the model is built: whenever its configured `max_seq_len` exceeds
    `original_seq_len` (by default 16,384 and 4,096), so for every input, short ones included".

    The condition reads the configured lengths, not an input: with the defaults it holds, and the
    softmax scale is multiplied by posenc.yarn_softmax_scale_multiplier(40, 1) whatever the input; built
    with ``max_seq_len`` at most ``original_seq_len`` it is not. The speeds' condition (``seqlen`` is
    ``args.max_seq_len`` there) is the same."""
    args = deepseek_args()
    assert (args.max_seq_len, args.original_seq_len, args.rope_factor, args.mscale) == (16384, 4096, 40, 1.0)
    assert "seqlen = args.max_seq_len" in DEEPSEEK_SPEEDS and "if seqlen > args.original_seq_len:" in DEEPSEEK_SPEEDS
    plain = 192**-0.5
    assert deepseek_softmax_scale(args) == pytest.approx(plain * posenc.yarn_softmax_scale_multiplier(40.0, 1.0))
    assert posenc.yarn_softmax_scale_multiplier(40.0, 1.0) == pytest.approx(posenc.yarn_attention_factor(40.0) ** 2)
    assert deepseek_softmax_scale(deepseek_args(max_seq_len=4096)) == plain


# --- chapter 13: the two layouts in other code ---------------------------------------------------

# meta-llama/llama, llama/model.py, read at commit 8580eb9a896bdb82d376b7040d18a2e7b402b10f (Llama 2's
# reference code). precompute_freqs_cis, lines 80 and 100-104 (docstring left out):
META_LLAMA_FREQS = """\
def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)  # type: ignore
    freqs = torch.outer(t, freqs).float()  # type: ignore
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
    return freqs_cis
"""
# reshape_for_broadcast, lines 110 and 125-129, and apply_rotary_emb, lines 132-136 and 156-161:
META_LLAMA_ROTATE = """\
def reshape_for_broadcast(freqs_cis: torch.Tensor, x: torch.Tensor):
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(
    xq: torch.Tensor,
    xk: torch.Tensor,
    freqs_cis: torch.Tensor,
) -> Tuple[torch.Tensor, torch.Tensor]:
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)
"""
# Transformer.__init__, lines 450-454: the speeds are built without a theta, so with its default.
META_LLAMA_TRANSFORMER = """\
        self.freqs_cis = precompute_freqs_cis(
            # Note that self.params.max_seq_len is multiplied by 2 because the token limit for the Llama 2 generation of models is 4096. 
            # Adding this multiplier instead of using 4096 directly allows for dynamism of token lengths while training or fine-tuning.
            self.params.dim // self.params.n_heads, self.params.max_seq_len * 2
        )
"""  # noqa: E501, W291 (quoted as they stand: long lines, one ending in a space)


def meta_llama():
    """The quoted functions of Meta's Llama code, defined from the quotes."""
    namespace = {"torch": torch, "Tuple": tuple}
    exec(META_LLAMA_FREQS + "\n\n" + META_LLAMA_ROTATE, namespace)
    return types.SimpleNamespace(**namespace)


def test_metas_llama_code_rotates_interleaved_pairs_as_complex_numbers():
    """Chapter 13: "Meta's original Llama code) pair $i$ is dimensions $(2i, 2i+1)$".

    The quoted ``apply_rotary_emb`` (``meta-llama/llama``, pinned above) views consecutive coordinates as
    one complex number and multiplies it by ``precompute_freqs_cis``'s unit complex numbers: run on a
    random query of shape (batch, seq, heads, d), it is posenc's interleaved layout, not its half one."""
    meta = meta_llama()
    x = random_heads(3)  # (batch, heads, seq, d)
    positions = np.arange(x.shape[-2])
    q = torch.from_numpy(x).float().transpose(1, 2)  # Meta's code rotates (batch, seq, heads, d)
    rotated, _ = meta.apply_rotary_emb(q, q, meta.precompute_freqs_cis(HEAD_DIM, x.shape[-2]))
    rotated = rotated.transpose(1, 2).double().numpy()
    inv_freq = posenc.rope_inv_freq(HEAD_DIM)
    np.testing.assert_allclose(rotated, posenc.apply_rope(x, positions, inv_freq, "interleaved"), atol=1e-5)
    assert np.abs(rotated - posenc.apply_rope(x, positions, inv_freq, "half")).max() > 1e-1


def test_gptj_rotates_interleaved_pairs():
    """Chapter 13: "`models/gptj/modeling_gptj.py` (`rotate_every_two`: GPT-J's interleaved layout)".

    ``apply_rotary_pos_emb`` of ``transformers``' GPT-J, with the sines and cosines of its own
    ``create_sinusoidal_positions`` (``repeat_interleave``-d: each angle twice, side by side), is posenc's
    interleaved layout, not its half one."""
    from transformers.models.gptj import modeling_gptj

    x = random_heads(4)
    positions = np.arange(x.shape[-2])
    sincos = modeling_gptj.create_sinusoidal_positions(x.shape[-2], HEAD_DIM)[None]  # (1, seq, d)
    sin, cos = torch.split(sincos.double(), HEAD_DIM // 2, dim=-1)
    q = torch.from_numpy(x).transpose(1, 2)  # GPT-J rotates (batch, seq, heads, d)
    rotated = modeling_gptj.apply_rotary_pos_emb(q, sin, cos).transpose(1, 2).numpy()
    inv_freq = posenc.rope_inv_freq(HEAD_DIM)
    np.testing.assert_allclose(rotated, posenc.apply_rope(x, positions, inv_freq, "interleaved"), atol=1e-6)
    assert np.abs(rotated - posenc.apply_rope(x, positions, inv_freq, "half")).max() > 1e-1


def test_gpt_neox_rotates_half_pairs():
    """Chapter 13: "`models/gpt_neox/modeling_gpt_neox.py` (`rotate_half`: the half layout of GPT-NeoX)".

    ``apply_rotary_pos_emb`` of ``transformers``' GPT-NeoX, with the cosines and sines of
    ``GPTNeoXRotaryEmbedding`` (every dimension rotating here), is posenc's half layout, not its
    interleaved one."""
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox import modeling_gpt_neox

    config = GPTNeoXConfig(hidden_size=2 * HEAD_DIM, num_attention_heads=2)
    config.rope_parameters["partial_rotary_factor"] = 1.0
    x = random_heads(5)
    positions = np.arange(x.shape[-2])
    q = torch.from_numpy(x).float()
    cos, sin = modeling_gpt_neox.GPTNeoXRotaryEmbedding(config)(q, torch.from_numpy(positions)[None])
    rotated = modeling_gpt_neox.apply_rotary_pos_emb(q, q, cos, sin)[0].double().numpy()
    inv_freq = posenc.rope_inv_freq(HEAD_DIM)
    np.testing.assert_allclose(rotated, posenc.apply_rope(x, positions, inv_freq, "half"), atol=1e-5)
    assert np.abs(rotated - posenc.apply_rope(x, positions, inv_freq, "interleaved")).max() > 1e-1


# huggingface/transformers, src/transformers/models/llama/convert_llama_weights_to_hf.py, read at commit
# 01cc9cd9d804d368d553c093c4eb0646320545bb (not shipped in the 5.23 wheel). In write_model:
CONVERT_SPEEDS = """\
    base = params.get("rope_theta", 10000.0)
    inv_freq = 1.0 / (base ** (torch.arange(0, dims_per_head, 2).float() / dims_per_head))
"""
CONVERT_PERMUTE = """\
    # permute for sliced rotary
    def permute(w, n_heads, dim1=dim, dim2=dim):
        return w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)
"""
# and, for an unsharded checkpoint, its calls (the value and output weights are copied as they are):
CONVERT_CALLS = """\
                f"model.layers.{layer_i}.self_attn.q_proj.weight": permute(
                    loaded[f"layers.{layer_i}.attention.wq.weight"], n_heads=n_heads
                ),
                f"model.layers.{layer_i}.self_attn.k_proj.weight": permute(
                    loaded[f"layers.{layer_i}.attention.wk.weight"],
                    n_heads=num_key_value_heads,
                    dim1=key_value_dim,
                ),
                f"model.layers.{layer_i}.self_attn.v_proj.weight": loaded[f"layers.{layer_i}.attention.wv.weight"],
                f"model.layers.{layer_i}.self_attn.o_proj.weight": loaded[f"layers.{layer_i}.attention.wo.weight"],
"""


def test_the_conversion_script_permutes_each_heads_query_and_key_rows_into_the_half_layout():
    """Chapter 13: "The `transformers` library does exactly this when it converts Meta's Llama checkpoints".

    The quoted ``permute`` and its calls, run on a tiny grouped-query checkpoint (4 query heads, 2 key
    heads of width 16, model width 64): every head's query and key rows are reordered by
    ``interleaved_to_half_permutation`` within the head, the key weight with the key heads' count; the
    value and output weights are copied. The half layout then scores the converted projections exactly as
    the interleaved layout scores the original ones."""
    n_heads, num_key_value_heads, dims_per_head, dim = 4, 2, HEAD_DIM, 64
    key_value_dim = num_key_value_heads * dims_per_head
    rng = np.random.default_rng(7)
    loaded = {
        "layers.0.attention.wq.weight": torch.from_numpy(rng.normal(size=(dim, dim))),
        "layers.0.attention.wk.weight": torch.from_numpy(rng.normal(size=(key_value_dim, dim))),
        "layers.0.attention.wv.weight": torch.from_numpy(rng.normal(size=(key_value_dim, dim))),
        "layers.0.attention.wo.weight": torch.from_numpy(rng.normal(size=(dim, dim))),
    }
    namespace = {"dim": dim}
    exec(textwrap.dedent(CONVERT_PERMUTE), namespace)
    state_dict = eval(
        "{" + CONVERT_CALLS + "}",
        {
            **namespace,
            "loaded": loaded,
            "layer_i": 0,
            "n_heads": n_heads,
            "num_key_value_heads": num_key_value_heads,
            "key_value_dim": key_value_dim,
        },
    )
    pi = posenc.interleaved_to_half_permutation(dims_per_head)
    for name, heads in (("q_proj", n_heads), ("k_proj", num_key_value_heads)):
        rows = np.concatenate([h * dims_per_head + pi for h in range(heads)])
        source = loaded[f"layers.0.attention.w{name[0]}.weight"].numpy()
        np.testing.assert_array_equal(state_dict[f"model.layers.0.self_attn.{name}.weight"].numpy(), source[rows])
    for name in ("v_proj", "o_proj"):
        assert state_dict[f"model.layers.0.self_attn.{name}.weight"] is loaded[f"layers.0.attention.w{name[0]}.weight"]
    tokens = rng.normal(size=(6, dim))
    inv_freq = posenc.rope_inv_freq(dims_per_head)

    def scores(w_q, w_k, layout):  # query head 0 against key head 0
        q = posenc.apply_rope(tokens @ np.asarray(w_q)[:dims_per_head].T, np.arange(6), inv_freq, layout)
        k = posenc.apply_rope(tokens @ np.asarray(w_k)[:dims_per_head].T, np.arange(6), inv_freq, layout)
        return q @ k.T

    meta = scores(loaded["layers.0.attention.wq.weight"], loaded["layers.0.attention.wk.weight"], "interleaved")
    converted = scores(
        state_dict["model.layers.0.self_attn.q_proj.weight"],
        state_dict["model.layers.0.self_attn.k_proj.weight"],
        "half",
    )
    np.testing.assert_allclose(converted, meta, atol=1e-9)


def test_compute_default_rope_parameters_and_the_conversion_script_compute_the_same_speeds():
    """Chapter 13: "the `inv_freq` line of `compute_default_rope_parameters` in `transformers` 5.23 reads
    `inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float) / dim))`, and the conversion
    script quoted above computes the same speeds".

    The line stands in ``LlamaRotaryEmbedding.compute_default_rope_parameters``; run on a head of 128 at
    base 500,000, and the conversion script's quoted line run on the same head, both give
    posenc.rope_inv_freq to float32 rounding (the script's ``base`` defaults to 10,000 when the
    checkpoint's params.json has no rope_theta)."""
    source = inspect.getsource(modeling_llama.LlamaRotaryEmbedding.compute_default_rope_parameters)
    assert "inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float) / dim))" in source
    config = LlamaConfig(
        hidden_size=256, num_attention_heads=2, rope_parameters={"rope_type": "default", "rope_theta": 500000.0}
    )
    library, _ = modeling_llama.LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    for params, base in (({"rope_theta": 500000.0}, 500000.0), ({}, 10000.0)):
        namespace = {"torch": torch, "params": params, "dims_per_head": 128}
        exec(textwrap.dedent(CONVERT_SPEEDS), namespace)
        np.testing.assert_allclose(namespace["inv_freq"].double().numpy(), posenc.rope_inv_freq(128, base), rtol=1e-6)
    np.testing.assert_allclose(library.double().numpy(), posenc.rope_inv_freq(128, 500000.0), rtol=1e-6)


# --- chapter 13: which way transformers turns, and the dtypes of its speeds -----------------------

ROTATE_HALF = '''\
def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)
'''


def test_rotate_half_reads_as_quoted_and_turns_each_pair_counter_clockwise():
    """Chapter 13: "In `transformers` (read in version 5.23, `models/llama/modeling_llama.py`), the half
    layout's rotation is".

    ``rotate_half`` is the chapter's quoted function (its docstring aside), and ``apply_rotary_pos_emb``
    returns ``q * cos + rotate_half(q) * sin``: the pair (i, i + d/2) of the unit vector along i is turned
    to (cos, sin), counter-clockwise, and along i + d/2 to (-sin, cos)."""
    assert inspect.getsource(modeling_llama.rotate_half) == ROTATE_HALF
    assert "q_embed = (q * cos) + (rotate_half(q) * sin)" in inspect.getsource(modeling_llama.apply_rotary_pos_emb)
    angle = 0.7
    cos = torch.full((1, 1, HEAD_DIM), math.cos(angle), dtype=torch.float64)
    sin = torch.full((1, 1, HEAD_DIM), math.sin(angle), dtype=torch.float64)
    basis = torch.eye(HEAD_DIM, dtype=torch.float64)[[0, HEAD_DIM // 2]].view(2, 1, 1, HEAD_DIM)
    turned, _ = modeling_llama.apply_rotary_pos_emb(basis, basis, cos, sin)
    pair = turned[..., [0, HEAD_DIM // 2]].reshape(2, 2).numpy()
    np.testing.assert_allclose(pair, [[math.cos(angle), math.sin(angle)], [-math.sin(angle), math.cos(angle)]])


def test_module_to_casts_every_floating_point_buffer_persistent_or_not():
    """Chapter 13: "`nn.Module.to(dtype)` casts every floating-point parameter **and buffer**, and
    `persistent=False` only keeps a buffer out of the saved state; it is cast all the same".

    PyTorch 2.13: a module with a parameter, a persistent and a non-persistent float32 buffer and an integer
    buffer. ``.to(torch.bfloat16)`` and ``.half()`` cast the parameter and both float buffers, not the
    integer one; the non-persistent buffer is missing from ``state_dict``."""
    module = torch.nn.Module()
    module.weight = torch.nn.Parameter(torch.ones(3))
    module.register_buffer("kept", torch.ones(3))
    module.register_buffer("inv_freq", torch.ones(3), persistent=False)
    module.register_buffer("steps", torch.arange(3))
    assert set(module.state_dict()) == {"weight", "kept", "steps"}
    for cast, dtype in ((lambda m: m.to(torch.bfloat16), torch.bfloat16), (lambda m: m.half(), torch.float16)):
        cast(module)
        assert module.weight.dtype == module.kept.dtype == module.inv_freq.dtype == dtype
        assert module.steps.dtype == torch.int64


def test_the_gpt_neox_issue_1003_reproduction_gives_its_reported_numbers():
    """Chapter 13: "a `RotaryEmbedding` whose `inv_freq` had become float16 built
    `t = torch.arange(seqlen).type_as(inv_freq)`, and at position 1857 the angle of pair 1 came out as 1045
    instead of 1044.2678, with cosines off by up to 0.7819".

    The issue's reproduction (EleutherAI/gpt-neox#1003, its description), run on the CPU with PyTorch 2.13:
    the same three numbers."""
    seqlen, dim, base = 2048, 32, 10000
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
    t = torch.arange(seqlen).type_as(inv_freq)
    emb = torch.cat((torch.einsum("i,j->ij", t, inv_freq),) * 2, dim=-1)
    inv_freq = inv_freq.half()
    t = torch.arange(seqlen).type_as(inv_freq)
    emb_half = torch.cat((torch.einsum("i,j->ij", t, inv_freq),) * 2, dim=-1)
    assert emb_half.dtype == torch.float16 and float(emb_half[1857, 1]) == 1045.0
    assert f"{float(emb[1857, 1]):.4f}" == "1044.2678"
    assert f"{float((emb_half.cos().float() - emb.cos()).abs().max()):.4f}" == "0.7819"


def tiny_llama(**overrides):
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=16,
        hidden_size=256,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        **overrides,
    )  # head_dim 128, base 10000
    return LlamaForCausalLM(config).eval()


def test_llama_rotary_embedding_forms_its_angles_in_float32_and_casts_only_cos_and_sin():
    """Chapter 13: "In version 5.23, `LlamaRotaryEmbedding.forward` computes
    `freqs = position_ids[..., None].float() * self.inv_freq.to(device=x.device, dtype=torch.float)` and casts
    only the cosines and sines to the activation dtype".

    The line stands in the source; for bfloat16 activations the cosines and sines are the float32 ones
    rounded to bfloat16 (the angles up to 8191 were not formed in bfloat16), under ``torch.autocast`` too."""
    rotary = tiny_llama().model.rotary_emb
    source = inspect.getsource(modeling_llama.LlamaRotaryEmbedding.forward)
    assert "freqs = position_ids[..., None].float() * self.inv_freq.to(device=x.device, dtype=torch.float)" in source
    assert "return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)" in source
    positions = torch.arange(8192)[None]
    cos32, sin32 = rotary(torch.zeros(1, 1, dtype=torch.float32), positions)
    for autocast in (False, True):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            cos, sin = rotary(torch.zeros(1, 1, dtype=torch.bfloat16), positions)
        assert cos.dtype == sin.dtype == torch.bfloat16
        assert torch.equal(cos, cos32.bfloat16()) and torch.equal(sin, sin32.bfloat16())
    # what forming the angles in bfloat16 would have given: far off
    angles16 = positions[0].bfloat16()[:, None] * rotary.inv_freq.bfloat16()
    assert (angles16.float().cos() - cos32[0, :, :64]).abs().max() > 1


def test_llama_rotary_embedding_registers_inv_freq_as_a_non_persistent_buffer():
    """Chapter 13: "In 5.23, `LlamaRotaryEmbedding.__init__` registers `self.inv_freq = nn.Buffer(inv_freq,
    persistent=False)`".

    The line stands in the source; ``inv_freq`` is a buffer of the model that its ``state_dict`` leaves out,
    and ``model.to(torch.bfloat16)`` casts it."""
    assert "self.inv_freq = nn.Buffer(inv_freq, persistent=False)" in inspect.getsource(
        modeling_llama.LlamaRotaryEmbedding.__init__
    )
    model = tiny_llama()
    assert "model.rotary_emb.inv_freq" in dict(model.named_buffers())
    assert not any(key.endswith("inv_freq") for key in model.state_dict())
    model.to(torch.bfloat16)
    assert model.model.rotary_emb.inv_freq.dtype == torch.bfloat16


# --- chapter 13: sinusoidal tables and ALiBi slopes in other code ----------------------------------

# facebookresearch/fairseq, fairseq/modules/sinusoidal_positional_embedding.py, read at commit
# 3d262bb25690e4eb2e7d3c1309b1e9c406ca4b99 (the file last changed in ecbf110). get_embedding, lines 56-64:
FAIRSEQ_EMBEDDING = """\
half_dim = embedding_dim // 2
emb = math.log(10000) / (half_dim - 1)
emb = torch.exp(torch.arange(half_dim, dtype=torch.float) * -emb)
emb = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(
    1
) * emb.unsqueeze(0)
emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(
    num_embeddings, -1
)
"""
# tensorflow/tensor2tensor, tensor2tensor/layers/common_attention.py, read at commit
# bafdc1b67730430d38d6ab802cbd51f9d053ba2e. get_timing_signal_1d, lines 443-455:
T2T_TIMING_SIGNAL = """\
position = tf.to_float(tf.range(length) + start_index)
num_timescales = channels // 2
log_timescale_increment = (
    math.log(float(max_timescale) / float(min_timescale)) /
    tf.maximum(tf.to_float(num_timescales) - 1, 1))
inv_timescales = min_timescale * tf.exp(
    tf.to_float(tf.range(num_timescales)) * -log_timescale_increment)
scaled_time = tf.expand_dims(position, 1) * tf.expand_dims(inv_timescales, 0)
# Please note that this slightly differs from the published paper.
# See a discussion here: https://github.com/tensorflow/tensor2tensor/pull/177
signal = tf.concat([tf.sin(scaled_time), tf.cos(scaled_time)], axis=1)
signal = tf.pad(signal, [[0, 0], [0, tf.mod(channels, 2)]])
signal = tf.reshape(signal, [1, length, channels])
"""
#: the TensorFlow functions the quoted lines call, in NumPy (float64)
NUMPY_TF = types.SimpleNamespace(
    to_float=lambda x: np.asarray(x, dtype=np.float64),
    range=np.arange,
    maximum=np.maximum,
    exp=np.exp,
    expand_dims=np.expand_dims,
    concat=lambda values, axis: np.concatenate(values, axis=axis),
    sin=np.sin,
    cos=np.cos,
    pad=np.pad,
    mod=np.mod,
    reshape=np.reshape,
)


def test_tensor2tensor_and_fairseq_put_all_the_sines_first_with_other_frequencies():
    """Chapter 13: "tensor2tensor's `get_timing_signal_1d` and fairseq's `SinusoidalPositionalEmbedding` put
    all the sines first and all the cosines after (and use slightly different frequencies)".

    The quoted lines of both, run for 50 positions of width 64 (tensor2tensor's with NumPy in place of
    TensorFlow): the same table, posenc.sinusoidal_variant's concatenated layout with tensor2tensor's
    timescales: at position 0 the first 32 columns are 0 (sines) and the last 32 are 1 (cosines). Their
    frequencies, ``10000**(-i/31)``, differ from the paper's ``10000**(-i/32)`` from the second pair on."""
    n, d = 50, 64
    namespace = {
        "tf": NUMPY_TF,
        "math": math,
        "length": n,
        "channels": d,
        "start_index": 0,
        "min_timescale": 1.0,
        "max_timescale": 1.0e4,
    }
    exec(T2T_TIMING_SIGNAL, namespace)
    t2t = namespace["signal"][0]
    namespace = {"torch": torch, "math": math, "embedding_dim": d, "num_embeddings": n}
    exec(FAIRSEQ_EMBEDDING, namespace)
    fairseq = namespace["emb"].double().numpy()
    theirs = posenc.sinusoidal_variant(n, d, layout="concatenated", timescales="tensor2tensor")
    np.testing.assert_allclose(t2t, theirs, atol=1e-12)
    np.testing.assert_allclose(fairseq, theirs, atol=1e-4)  # float32
    np.testing.assert_array_equal(t2t[0], np.r_[np.zeros(d // 2), np.ones(d // 2)])  # sines, then cosines
    ratio = posenc.sinusoidal_frequencies(d) / posenc.sinusoidal_frequencies(d, timescales="tensor2tensor")
    assert ratio[0] == 1.0 and np.all(np.abs(ratio[1:] - 1) > 1e-3)


# ofirpress/attention_with_linear_biases, fairseq/models/transformer.py, read at commit
# 3b7c2eca8397d27be08c6dffad9b60855507f9b7. TransformerDecoder.__init__, lines 742-752 (comments shortened):
ALIBI_GET_SLOPES = """\
def get_slopes(n):
    def get_slopes_power_of_2(n):
        start = (2**(-2**-(math.log2(n)-3)))
        ratio = start
        return [start*ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)                   #In the paper, we only train models that have 2^a heads
    else:                                                 #some good properties that only occur when the input is
        closest_power_of_2 = 2**math.floor(math.log2(n))  #when the number of heads is not a power of 2, we use
        return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2*closest_power_of_2)[0::2][:n-closest_power_of_2]
"""


def alibi_authors_slopes(n):
    namespace = {"math": math}
    exec(ALIBI_GET_SLOPES, namespace)
    return np.array(namespace["get_slopes"](n))


def test_bloom_follows_the_alibi_authors_get_slopes():
    """Chapter 13: "BLOOM's `_get_alibi_slopes` follows `get_slopes` step by step".

    The authors' quoted ``get_slopes``: for a power of two H, ``2**(-8h/H)``; otherwise the slopes of the
    largest power of two c below H, then every other slope of 2c heads from the first (h = 1, 3, 5, ...).
    BLOOM's ``_get_alibi_slopes`` takes the same steps (``closest_power_of_2``, then odd powers of the
    2c-head base) and gives the same slopes, as posenc.alibi_slopes does, for every H from 1 to 128."""
    source = inspect.getsource(__import__("transformers").models.bloom.modeling_bloom._get_alibi_slopes)
    assert "closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))" in source
    assert "extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2" in source
    from transformers.models.bloom.modeling_bloom import _get_alibi_slopes

    for heads in range(1, 129):
        authors = alibi_authors_slopes(heads)
        np.testing.assert_allclose(_get_alibi_slopes(heads, torch.device("cpu")).double().numpy(), authors, rtol=1e-6)
        np.testing.assert_allclose(posenc.alibi_slopes(heads), authors, rtol=1e-12)
    np.testing.assert_allclose(alibi_authors_slopes(8), 2.0 ** (-8 * np.arange(1, 9) / 8), rtol=1e-15)
    np.testing.assert_allclose(alibi_authors_slopes(12)[8:], alibi_authors_slopes(16)[0::2][:4], rtol=1e-15)


def test_mpt_takes_the_next_power_of_two_and_puts_the_even_slopes_first():
    """Chapter 13: "MPT's `build_mpt_alibi_tensor` takes the slopes of the *next* power of two $H' \\ge H$, puts
    the slopes with even $h$ ($h = 2, 4, \\dots$, the array's entries `[1::2]`) before those with odd $h$,
    and keeps the first $H$".

    The lines stand in ``build_mpt_alibi_tensor``; its slopes for 12 heads are those of 16 heads in the order
    h = 2, 4, ..., 16, then h = 1, 3, 5, 7 (the authors' ``get_slopes``, quoted above), and for every H from 1
    to 128 they are posenc.alibi_slopes."""
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    source = inspect.getsource(build_mpt_alibi_tensor)
    assert "num_heads_power_of_2 = 2 ** math.ceil(math.log2(num_heads))" in source
    assert "slopes = torch.concat([slopes[:, 1::2, ...], slopes[:, ::2, ...]], dim=1)[:, :num_heads, ...]" in source
    sixteen = alibi_authors_slopes(16)  # entry h - 1 is the slope of head h
    mpt = -build_mpt_alibi_tensor(12, 2)[:, 0, 0].double().numpy()  # (heads, 1, 2): -slope at offset -1
    np.testing.assert_allclose(mpt, np.concatenate([sixteen[1::2], sixteen[::2]])[:12], rtol=1e-6)
    for heads in range(1, 129):
        mpt = -build_mpt_alibi_tensor(heads, 2)[:, 0, 0].double().numpy()
        np.testing.assert_allclose(mpt, posenc.alibi_slopes(heads), rtol=1e-6)


# --- chapter 14: what config classes and reference code fill in ----------------------------------


def test_transformers_and_metas_code_use_base_10000_when_llama_2_names_none():
    """Chapter 14: "Llama 2 has no `rope_theta` in its `config.json`, and `transformers` (like Meta's code) uses
    10 000".

    A ``LlamaConfig`` built from Llama 2's position fields without ``rope_theta`` fills in 10000.0, and the
    quoted ``precompute_freqs_cis`` of Meta's Llama 2 code (pinned above) defaults ``theta`` to 10000.0,
    which ``Transformer.__init__`` does not pass: its speeds are posenc.rope_inv_freq(128, 10000)."""
    fields = {
        k: v for k, v in posenc.MODELS["Llama-2-13b-chat"].config.items() if k not in ("model_type", "rope_theta")
    }
    assert LlamaConfig(**fields).rope_parameters["rope_theta"] == 10000.0
    assert "theta" not in META_LLAMA_TRANSFORMER.replace("max_seq_len", "")
    freqs_cis = meta_llama().precompute_freqs_cis(128, 2)
    np.testing.assert_allclose(torch.angle(freqs_cis[1]).double().numpy(), posenc.rope_inv_freq(128), rtol=1e-6)


def test_phi3_derives_the_factor_and_puts_one_attention_factor_on_both_lists():
    """Chapter 14: "Neither config gives a `factor`; `transformers` derives $s$ = max positions / $L$ and,
    without an explicit `attention_factor`, multiplies cos and sin by $\\sqrt{1 + \\ln s / \\ln L}$
    (`posenc.longrope_attention_factor`), the same for the short and the long lists".

    The zoo's Phi-3.5-mini and Phi-4-mini LongRoPE settings name no ``factor``; ``Phi3RotaryEmbedding`` of
    Phi-3.5-mini's (its head of 96, a 2-head model) has ``attention_scaling`` sqrt(1 + ln 32 / ln 4096), and
    its cosines at position 0 are that factor at a short length and at a long one."""
    for name in ("Phi-3.5-mini-instruct", "Phi-4-mini-instruct"):
        assert "factor" not in posenc.MODELS[name].config["rope_scaling"]
    zoo = posenc.MODELS["Phi-3.5-mini-instruct"].config
    config = Phi3Config(
        vocab_size=16,
        hidden_size=192,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        max_position_embeddings=zoo["max_position_embeddings"],
        original_max_position_embeddings=zoo["original_max_position_embeddings"],
        rope_scaling=dict(zoo["rope_scaling"]),
        rope_theta=zoo["rope_theta"],
    )
    from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding

    rotary = Phi3RotaryEmbedding(config)
    s = zoo["max_position_embeddings"] / zoo["original_max_position_embeddings"]
    expected = math.sqrt(1 + math.log(s) / math.log(zoo["original_max_position_embeddings"]))
    assert s == 32 and rotary.attention_scaling == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(posenc.longrope_attention_factor(32.0, 4096), rel=1e-15)
    for length in (16, 5000):  # the short factors, then the long ones
        cos, _ = rotary(torch.zeros(1, 1), torch.tensor([[0, length - 1]]))
        np.testing.assert_allclose(cos[0, 0].double().numpy(), expected, rtol=1e-6)


def test_modernbert_derives_a_sliding_window_of_half_its_local_attention():
    """Chapter 14: "`local_attention` 128: a token sees 64 on each side, the `sliding_window` of 64 that
    `transformers` derives".

    The zoo's ModernBERT-base has ``local_attention`` 128; ``ModernBertConfig`` derives ``sliding_window`` =
    64 from it, and the sliding-window mask it builds for its local layers (``local_attention`` 8 here: 4)
    lets each token see the tokens at most that far on either side."""
    from transformers import ModernBertConfig
    from transformers.masking_utils import create_bidirectional_sliding_window_mask

    assert posenc.MODELS["ModernBERT-base"].config["local_attention"] == 128
    assert ModernBertConfig(local_attention=128).sliding_window == 64
    config = ModernBertConfig(local_attention=8, hidden_size=16, num_attention_heads=2, num_hidden_layers=3)
    config._attn_implementation = "eager"
    mask = create_bidirectional_sliding_window_mask(
        config=config, inputs_embeds=torch.zeros(1, 12, 16), attention_mask=torch.ones(1, 12, dtype=torch.long)
    )
    seen = (mask[0, 0] == 0).numpy() if mask.dtype != torch.bool else mask[0, 0].numpy()
    offsets = np.subtract.outer(np.arange(12), np.arange(12))
    np.testing.assert_array_equal(seen, np.abs(offsets) <= 4)


# meta-llama/llama-models, models/llama4/model.py, read at commit 408c577168a187941f9359c916004fa3b21fbc3b.
# TransformerBlock.__init__, line 258:
LLAMA4_NOPE_LAYER = """\
        self.is_nope_layer = args.nope_layer_interval is not None and (layer_id + 1) % args.nope_layer_interval == 0
"""
# TransformerBlock.forward, lines 325-330:
LLAMA4_MASK_CHOICE = """\
        # The iRoPE architecture uses global attention mask for NoPE layers or
        # if chunked local attention is not used
        if self.is_nope_layer or local_attn_mask is None:
            mask = global_attn_mask
        else:
            mask = local_attn_mask
"""
# create_chunked_attention_mask, lines 431-438:
LLAMA4_CHUNKED_MASK = """\
def create_chunked_attention_mask(seq_len: int, attention_chunk_size: int, device: torch.device) -> torch.Tensor:
    block_pos = torch.abs(
        (torch.arange(seq_len).unsqueeze(0) // attention_chunk_size)
        - (torch.arange(seq_len).unsqueeze(1) // attention_chunk_size)
    )
    token_pos = torch.arange(seq_len).unsqueeze(0) - torch.arange(seq_len).unsqueeze(1)
    mask = (block_pos == 0) & (token_pos <= 0)
    return mask.to(device)
"""
# Attention.forward, lines 220-229 (use_rope is False in the NoPE layers):
LLAMA4_TEMPERATURE = """\
        # We are applying temperature tuning (https://arxiv.org/abs/2501.19399) to NoPE layers, where
        # the inference-time temperature tuning function is customized to not affect short context
        # while working at very long context
        if self.attn_temperature_tuning and not self.use_rope:
            seq_positions = torch.arange(start_pos, start_pos + seqlen, device=xq.device, dtype=torch.float32)
            attn_scales = torch.log(torch.floor((seq_positions + 1.0) / self.floor_scale) + 1.0) * self.attn_scale + 1.0

            # reshape for broadcasting [seqlen] -> [1, seqlen, 1, 1]
            attn_scales = attn_scales.view(1, seqlen, 1, 1)
            xq = xq * attn_scales
"""
# models/llama4/args.py at the same commit, ModelArgs: attn_temperature_tuning False, floor_scale 8192.0,
# attn_scale 0.1 (lines 80-82); nope_layer_interval None (line 77).


def test_metas_llama4_code_marks_every_fourth_layer_a_nope_layer():
    """Chapter 14: "Llama 4 Scout's `no_rope_layer_interval` = 4 does the same (from Meta's reference code, which
    marks `is_nope_layer`)".

    The quoted line, run for Scout's 48 layers with an interval of 4: layers 3, 7, ..., 47 have no RoPE
    (``use_rope = not self.is_nope_layer``), the layers ``Llama4TextConfig`` marks 0 in ``no_rope_layers``
    with the zoo's ``no_rope_layer_interval`` of 4."""
    scout = posenc.MODELS["Llama-4-Scout-17B-16E-Instruct"].config
    assert (scout["num_hidden_layers"], scout["no_rope_layer_interval"]) == (48, 4)
    nope = []
    for layer_id in range(48):
        block = types.SimpleNamespace()
        exec(
            textwrap.dedent(LLAMA4_NOPE_LAYER),
            {},
            {"self": block, "layer_id": layer_id, "args": types.SimpleNamespace(nope_layer_interval=4)},
        )
        nope.append(block.is_nope_layer)
    assert [i for i, x in enumerate(nope) if x] == list(range(3, 48, 4))
    from transformers import Llama4TextConfig

    config = Llama4TextConfig(num_hidden_layers=48, no_rope_layer_interval=4)
    assert [not rope for rope in config.no_rope_layers] == nope


def test_transformers_gives_llama4s_rope_layers_the_chunked_attention_type():
    """Chapter 14: "`transformers`' `configuration_llama4.py` gives them the layer type `chunked_attention`".

    ``Llama4TextConfig`` with Scout's layer count, interval and chunk size: every RoPE layer is
    "chunked_attention" with ``attention_chunk_size`` 8192, every NoPE layer "full_attention"."""
    from transformers import Llama4TextConfig

    scout = posenc.MODELS["Llama-4-Scout-17B-16E-Instruct"].config
    config = Llama4TextConfig(
        num_hidden_layers=48, no_rope_layer_interval=4, attention_chunk_size=scout["attention_chunk_size"]
    )
    assert config.attention_chunk_size == 8192
    kinds = {(rope, kind) for rope, kind in zip(config.no_rope_layers, config.layer_types, strict=True)}
    assert kinds == {(1, "chunked_attention"), (0, "full_attention")}


def test_metas_llama4_code_gives_the_global_mask_to_the_nope_layers_and_chunks_to_the_others():
    """Chapter 14: "Meta's reference code gives the global attention mask to the NoPE layers ("The iRoPE
    architecture uses global attention mask for NoPE layers", `TransformerBlock.forward` in
    `models/llama4/model.py`)".

    The quoted lines pick ``global_attn_mask`` for a NoPE layer and ``local_attn_mask`` for a RoPE layer; the
    quoted ``create_chunked_attention_mask`` (chunks of 4 over 10 tokens here) lets a query see only earlier
    keys of its own chunk, fewer than 4 positions back."""
    namespace = {"torch": torch}
    exec(LLAMA4_CHUNKED_MASK, namespace)
    local = namespace["create_chunked_attention_mask"](10, 4, "cpu")
    offsets = np.subtract.outer(np.arange(10), np.arange(10))  # query minus key
    same_chunk = np.equal.outer(np.arange(10) // 4, np.arange(10) // 4)
    np.testing.assert_array_equal(local.numpy(), same_chunk & (offsets >= 0))
    assert offsets[local.numpy()].max() == 3
    for nope, chosen in ((True, "global"), (False, "local")):
        scope = {
            "self": types.SimpleNamespace(is_nope_layer=nope),
            "global_attn_mask": "global",
            "local_attn_mask": "local",
        }
        exec(textwrap.dedent(LLAMA4_MASK_CHOICE), {}, scope)
        assert scope["mask"] == chosen


def test_metas_llama4_temperature_tuning_scales_nope_queries_from_the_floor_scale_on():
    """Chapter 14: "Llama 4 Scout's `attn_temperature_tuning` multiplies the query of its NoPE layers by
    $1 + a \\ln(\\lfloor (p+1)/F \\rfloor + 1)$ with $F$ = `floor_scale` = 8192 and $a$ = `attn_scale` = 0.1
    (`posenc.attention_temperature_scale`, from Meta's reference code)".

    The quoted lines, run on a NoPE layer's query at positions 0 to 20,000 (a prompt starting at 0) with
    Scout's settings, multiply it by posenc.attention_temperature_scale; a RoPE layer's query is left alone;
    the comment is the one chapter 14's box quotes."""
    scout = posenc.MODELS["Llama-4-Scout-17B-16E-Instruct"].config
    assert (scout["floor_scale"], scout["attn_scale"], scout["attn_temperature_tuning"]) == (8192, 0.1, True)
    assert "customized to not affect short context\n        # while working at very long context" in LLAMA4_TEMPERATURE
    seqlen = 20000
    for use_rope in (False, True):
        layer = types.SimpleNamespace(
            attn_temperature_tuning=True, use_rope=use_rope, floor_scale=8192.0, attn_scale=0.1
        )
        scope = {"self": layer, "start_pos": 0, "seqlen": seqlen, "xq": torch.ones(1, seqlen, 1, 1)}
        exec(textwrap.dedent(LLAMA4_TEMPERATURE), {"torch": torch}, scope)
        scale = scope["xq"][0, :, 0, 0].double().numpy()
        expected = np.ones(seqlen) if use_rope else posenc.attention_temperature_scale(np.arange(seqlen), 8192, 0.1)
        np.testing.assert_allclose(scale, expected, rtol=1e-6)
    assert scale[8190] == 1.0 and posenc.attention_temperature_scale([8190, 8191])[1] > 1.0


# Qwen-1's remote code, modeling_qwen.py, as stored in alibaba/MNN,
# transformers/llm/export/llm_models/Qwen-1_8B/modeling_qwen.py at commit 7cad2ee83f12f2ca86eaf36a2010eed322a68b2e
# (the copy the zoo's Qwen entry names). QWenAttention.__init__:
QWEN_LOGN_TABLE = """\
        logn_list = [
            math.log(i, self.seq_length) if i > self.seq_length else 1
            for i in range(1, 32768)
        ]
        logn_tensor = torch.tensor(logn_list)[None, :, None, None]
"""
# QWenAttention.forward (key: (batch, keys, heads, d) with the cached keys; query: the new positions):
QWEN_LOGN_APPLY = """\
        key_size = key[0].size(2) if self.use_cache_quantization else key.size(1)
        if key_size > self.seq_length and self.use_logn_attn and not self.training:
            if self.use_cache_quantization:
                seq_start = key[0].size(2) - query.size(1)
                seq_end = key[0].size(2)
            else:
                seq_start = key.size(1) - query.size(1)
                seq_end = key.size(1)
            logn_tensor = self.logn_tensor[:, seq_start:seq_end, :, :].type_as(query)
            query = query * logn_tensor.expand_as(query)
"""


def qwen_logn_scales(seq_length, n, training=False):
    """The query scales of the quoted lines for a prompt of n tokens (positions 0 .. n - 1)."""
    layer = types.SimpleNamespace(
        seq_length=seq_length, use_cache_quantization=False, use_logn_attn=True, training=training
    )
    table = {"self": layer, "math": math, "torch": torch}
    exec(textwrap.dedent(QWEN_LOGN_TABLE), table)
    layer.logn_tensor = table["logn_tensor"]
    scope = {"self": layer, "key": torch.zeros(1, n, 1, 1), "query": torch.ones(1, n, 1, 1, dtype=torch.float64)}
    exec(textwrap.dedent(QWEN_LOGN_APPLY), {}, scope)
    return scope["query"][0, :, 0, 0].numpy()


def test_qwen1_scales_its_queries_by_log_n_from_a_table_that_stops_at_32766():
    """Chapter 14: "Qwen-1's `use_logn_attn` multiplies the query at position $p$ by $\\max(1, \\ln(p+1)/\\ln L)$
    in every layer, at inference only and once the sequence is longer than $L$; its code looks the factor up in
    a table `logn_list` that stops at position".

    The quoted lines with the zoo's Qwen ``seq_length`` L = 8192: a prompt of L tokens is left alone, one of
    20,000 gets posenc.logn_attention_scale (1 up to position L - 1), not in training; the table has 32,767
    entries, positions 0 to 32,766, and a prompt of 32,768 tokens fails in ``expand_as``."""
    seq_length = posenc.MODELS["Qwen (QWenLMHeadModel, 2048 hidden, 24 layers)"].config["seq_length"]
    assert seq_length == 8192
    np.testing.assert_array_equal(qwen_logn_scales(seq_length, seq_length), 1.0)
    np.testing.assert_array_equal(qwen_logn_scales(seq_length, 20000, training=True), 1.0)
    np.testing.assert_allclose(
        qwen_logn_scales(seq_length, 20000), posenc.logn_attention_scale(np.arange(20000), seq_length), rtol=1e-6
    )
    assert qwen_logn_scales(seq_length, 32767).size == 32767
    with pytest.raises(RuntimeError, match="expand"):
        qwen_logn_scales(seq_length, 32768)


# --- chapter 15: how the YaRN authors' code scores a long document ---------------------------------

# jquesnelle/yarn, eval/perplexity.py, read at commit 70d45d3 (70d45d344..., "v2 of paper"). compute_perplexity,
# lines 36-39 (with truncate, the stride becomes the window's length) and 48-62, 80-82:
YARN_TRUNCATE = """\
if max_length and truncate:
    encoded_texts = [x[0:max_tokenized_len] for x in encoded_texts]
    attn_masks = [x[0:max_tokenized_len] for x in attn_masks]
    sliding_window = max_tokenized_len
"""
YARN_WINDOWS = """\
prev_end_loc = 0
for begin_loc in range(0, seq_len, sliding_window):

    end_loc = min(begin_loc + max_tokenized_len, seq_len)
    trg_len = end_loc - prev_end_loc
    input_ids = labels[:, begin_loc:end_loc].to(device)

    if add_start_token:
        bos_tokens_tensor = torch.tensor(
            [[tokenizer.bos_token_id]] * input_ids.size(dim=0)).to(device)
        input_ids = torch.cat(
            [bos_tokens_tensor, input_ids], dim=1)

    target_ids = input_ids.clone()
    target_ids[:, :-trg_len] = -100
    scored.append((begin_loc, end_loc, target_ids))  # added: what this window scores
    prev_end_loc = end_loc
    if end_loc == seq_len:
        break
"""
# eval.sh at the same commit, line 11: the Proof-pile runs behind Figure 1 and Tables 1 and 2 (and, with their
# own tokenizer, appendix B.4's Mistral runs) pass --truncate; the GovReport runs (line 7) do not.
YARN_PROOFPILE_LONG_SMALL = (
    'PROOFPILE_LONG_SMALL="--tokenized emozilla/proofpile-test-tokenized --dataset-min-tokens 131072 --samples 10 '
    '--truncate"'
)


def yarn_windows(document_length, max_length, sliding_window, truncate):
    """What each window of the quoted loop scores in one document: (first token, end, targets), token ids 0 ..
    n - 1 standing for the document's tokens (a BOS token, id -1, is added before each window)."""
    max_tokenized_len = max_length - 1  # add_start_token: room for the BOS token
    scope = {
        "max_length": max_length,
        "truncate": truncate,
        "max_tokenized_len": max_tokenized_len,
        "encoded_texts": [list(range(document_length))],
        "attn_masks": [[1] * document_length],
        "sliding_window": sliding_window,
    }
    exec(YARN_TRUNCATE, scope)
    labels = torch.tensor(scope["encoded_texts"][0:1])
    scored = []
    loop = {
        "labels": labels,
        "seq_len": labels.size(1),
        "sliding_window": scope["sliding_window"],
        "device": "cpu",
        "max_tokenized_len": max_tokenized_len,
        "add_start_token": True,
        "scored": scored,
        "tokenizer": types.SimpleNamespace(bos_token_id=-1),
    }
    exec(YARN_WINDOWS, {"torch": torch}, loop)
    return scored


def test_yarn_perplexity_moves_the_window_by_the_stride_unless_truncate_makes_it_one_window():
    """Chapter 15: "$S$ is the *stride*, the number of tokens by which a window as long as the evaluation length
    moves, each step scoring only the tokens it has not scored before (the authors' `eval/perplexity.py`)".

    The quoted loop on a document of 40 tokens, windows of 16 (15 tokens and the BOS token), stride 4: the
    windows start every 4 tokens, each scores only the tokens after the previous window's end, and every token
    is scored once, each token after the first window with at least 11 tokens before it in its window; a document
    of 12 tokens, shorter than the window, is one window. With ``truncate`` (``eval.sh`` passes ``--truncate`` for
    the Proof-pile runs) the document
    is cut to the window and the stride set to the window's length: one window scores every token, each with
    only the tokens before it in the document as context."""
    assert "--truncate" in YARN_PROOFPILE_LONG_SMALL
    windows = yarn_windows(40, 16, 4, truncate=False)
    assert [begin for begin, _, _ in windows] == list(range(0, 29, 4))  # the last window ends at the last token
    scored = []
    for begin, _end, targets in windows:
        scored += [int(t) for t in targets[0] if t != -100]
        assert all(t > begin + 10 for t in targets[0] if t != -100) or begin == 0  # nearly a full window behind
    assert scored == list(range(40))
    ((begin, end, targets),) = yarn_windows(12, 16, 4, truncate=False)  # shorter than the window: one window
    assert (begin, end) == (0, 12) and targets[0, 1:].tolist() == list(range(12))
    ((begin, end, targets),) = yarn_windows(40, 16, 4, truncate=True)
    assert (begin, end) == (0, 15) and targets[0, 1:].tolist() == list(range(15))


# --- chapter 16: what the tokenizer, the rotary update and the attention code do -------------------


def test_the_tokenizer_returns_an_attention_mask_of_ones_for_tokens_and_zeros_for_pads():
    """Chapter 16: "The tokenizer returns an `attention_mask` beside the tokens, 1 for a real token and 0 for a
    pad".

    The word-level fast tokenizer above, padding on the left: two rows of 3 and 5 words."""
    words = [["w1", "w2", "w3"], ["w4", "w5", "w6", "w7", "w8"]]
    batch = tokenizer()(words, is_split_into_words=True, padding=True, return_tensors="pt")
    assert batch["attention_mask"].tolist() == [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]]
    assert batch["input_ids"][0, :2].tolist() == [0, 0]  # the pad id where the mask is 0


def test_dynamic_rope_update_reads_the_length_as_the_largest_position_plus_one():
    """Chapter 16: "`transformers` reads that length from the positions: `seq_len = torch.max(position_ids) + 1`,
    in both `longrope_frequency_update` and `dynamic_frequency_update`".

    The line stands twice in ``dynamic_rope_update``, and it is the positions that count, not the number of
    tokens: a dynamic-NTK Llama (L = 8) called with two tokens at positions 0 and 19 takes the speeds of
    length 20 (posenc's), and LongRoPE's short or long factors follow the largest position likewise."""
    from transformers import modeling_rope_utils

    source = inspect.getsource(modeling_rope_utils.dynamic_rope_update)
    assert source.count("seq_len = torch.max(position_ids) + 1") == 2
    for name, after in (
        ("longrope_frequency_update", "def dynamic_frequency_update"),
        ("dynamic_frequency_update", None),
    ):
        body = source[source.index(f"def {name}") : source.index(after) if after else None]
        assert "seq_len = torch.max(position_ids) + 1" in body, name
    config = LlamaConfig(
        hidden_size=2 * HEAD_DIM,
        num_attention_heads=2,
        max_position_embeddings=8,
        rope_parameters={"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0},
    )
    rotary = modeling_llama.LlamaRotaryEmbedding(config)
    rotary(torch.zeros(1, 2, 1), torch.tensor([[0, 19]]))
    expected, _ = posenc.scaled_inv_freq("dynamic", HEAD_DIM, 10000.0, 2.0, 8, seq_len=20)
    np.testing.assert_allclose(rotary.inv_freq.double().numpy(), expected, rtol=1e-6)
    phi = tiny_phi3().model.rotary_emb
    phi(torch.zeros(1, 2, 1), torch.tensor([[0, L]]))  # two tokens, the largest position L: length L + 1
    np.testing.assert_array_equal(phi.inv_freq, phi.long_inv_freq)


def test_flash_attention_reads_packed_documents_from_the_position_ids_whatever_the_cache():
    """Chapter 16: "Flash attention builds no mask: `_flash_attention_forward` (`modeling_flash_attention_utils.py`)
    reads packed documents from the position ids itself when no 2-D attention mask reaches it".

    In the source, an attention mask is handled first (it returns before), then ``_is_packed_sequence`` reads
    the position ids and sends packed rows to the variable-length kernel. ``_is_packed_sequence`` (pure
    PyTorch, run here) is true for a single row of more than one position whose ids are not the count up from
    their smallest, and takes no cache: it cannot look at one. Flash attention itself needs a GPU and is not
    run."""
    from transformers.modeling_flash_attention_utils import _flash_attention_forward, _is_packed_sequence

    source = inspect.getsource(_flash_attention_forward)
    assert source.index("if attention_mask is not None:") < source.index(
        "if _is_packed_sequence(position_ids, batch_size)"
    )
    assert list(inspect.signature(_is_packed_sequence).parameters) == ["position_ids", "batch_size"]
    packed = torch.from_numpy(posenc.packed_position_ids([3, 4, 2]))[None]
    assert bool(_is_packed_sequence(packed, 1))
    assert not bool(_is_packed_sequence(torch.arange(5, 14)[None], 1))  # one document, counted from 5
    assert not _is_packed_sequence(packed.expand(2, -1), 2)  # a batch of two rows: not read as packed
    assert not _is_packed_sequence(torch.tensor([[7]]), 1)  # one position: a decoding step


def test_positions_that_count_up_through_the_row_read_as_one_document():
    """Chapter 16: "`transformers` reads the documents from the positions; $0, \\dots, 11$ goes up by one everywhere,
    so it finds a single document and builds a plain causal mask".

    ``find_packed_sequence_indices`` finds no packing in 0 .. 11 (it returns None, one document), and
    ``create_causal_mask`` for eager attention, given those positions and no attention mask or cache, is the
    plain causal mask over the 12 tokens (three documents of 4, 3 and 5 tokens packed there would leak)."""
    from transformers.masking_utils import create_causal_mask, find_packed_sequence_indices

    positions = torch.arange(12)[None]
    assert find_packed_sequence_indices(positions) is None
    assert find_packed_sequence_indices(torch.from_numpy(posenc.packed_position_ids([4, 3, 5]))[None]) is not None
    config = LlamaConfig(hidden_size=8, num_attention_heads=2, head_dim=4, num_hidden_layers=1)
    config._attn_implementation = "eager"
    mask = create_causal_mask(config, torch.zeros(1, 12, 8), None, None, position_ids=positions)
    allowed = (mask[0, 0] == 0).numpy() if mask.dtype != torch.bool else mask[0, 0].numpy()
    np.testing.assert_array_equal(allowed, np.tril(np.ones((12, 12), dtype=bool)))


# mit-han-lab/streaming-llm, read at commit d729b3ffc947caca63fc0f7644b7468ca2d50881.
# streaming_llm/kv_cache.py, StartRecentKVCache.__init__ and __call__, lines 23-62 (prints and the
# evict_* methods left out):
STREAMING_CACHE = """\
class StartRecentKVCache:
    def __init__(
        self,
        start_size=4,
        recent_size=512,
        k_seq_dim=2,
        v_seq_dim=2,
    ):
        self.start_size = start_size
        self.recent_size = recent_size
        self.cache_size = start_size + recent_size
        self.k_seq_dim = k_seq_dim
        self.v_seq_dim = v_seq_dim
        self.k_slice = DIM_TO_SLICE[k_seq_dim]
        self.v_slice = DIM_TO_SLICE[v_seq_dim]

    def __call__(self, past_key_values):
        if past_key_values is None:
            return None
        seq_len = past_key_values[0][0].size(self.k_seq_dim)
        if seq_len <= self.cache_size:
            return past_key_values
        return [
            [
                torch.cat(
                    [
                        self.k_slice(k, 0, self.start_size),
                        self.k_slice(k, seq_len - self.recent_size, seq_len),
                    ],
                    dim=self.k_seq_dim,
                ),
                torch.cat(
                    [
                        self.v_slice(v, 0, self.start_size),
                        self.v_slice(v, seq_len - self.recent_size, seq_len),
                    ],
                    dim=self.v_seq_dim,
                ),
            ]
            for k, v in past_key_values
        ]
"""
# streaming_llm/pos_shift/modify_llama.py, apply_rotary_pos_emb_single (lines 21-28) and
# llama_pos_shift_attention_forward, lines 94-103:
STREAMING_ROTATE = """\
def apply_rotary_pos_emb_single(x, cos, sin, position_ids):
    # The first two dimensions of cos and sin are always 1, so we can `squeeze` them.
    cos = cos.squeeze(1).squeeze(0)  # [seq_len, dim]
    sin = sin.squeeze(1).squeeze(0)  # [seq_len, dim]
    cos = cos[position_ids].unsqueeze(1)  # [bs, 1, seq_len, dim]
    sin = sin[position_ids].unsqueeze(1)  # [bs, 1, seq_len, dim]
    x_embed = (x * cos) + (rotate_half(x) * sin)
    return x_embed
"""
STREAMING_KEYS = """\
    if past_key_value is not None:
        # reuse k, v, self_attention
        key_states = torch.cat([past_key_value[0], key_states], dim=2)
        value_states = torch.cat([past_key_value[1], value_states], dim=2)

    past_key_value = (key_states, value_states) if use_cache else None

    ### Shift Pos: key pos is the pos in cache
    key_position_ids = torch.arange(kv_seq_len, device=position_ids.device).unsqueeze(0)
    key_states = apply_rotary_pos_emb_single(key_states, cos, sin, key_position_ids)
"""


def test_streaming_llm_keeps_4_sink_tokens_by_default():
    """Chapter 16: "their code, `streaming_llm/kv_cache.py`, `StartRecentKVCache`, keeps 4 sink tokens by default".

    The quoted class with its defaults, given a cache of 600 entries (of one layer): it keeps entries 0 to 3 and
    the last 512, and leaves a cache of at most 516 as it is."""
    namespace = {"torch": torch, "DIM_TO_SLICE": {2: lambda x, start, end: x[:, :, start:end, ...]}}
    exec(STREAMING_CACHE, namespace)
    cache = namespace["StartRecentKVCache"]()
    keys = torch.arange(600.0).view(1, 1, 600, 1)
    ((kept, _),) = cache([[keys, keys]])
    assert kept.flatten().tolist() == [0.0, 1.0, 2.0, 3.0, *np.arange(88.0, 600.0)]
    short = keys[:, :, :516]
    assert cache([[short, short]])[0][0] is short


def test_streaming_llm_caches_keys_before_rotation_and_rotates_them_at_their_cache_positions():
    """Chapter 16: "For RoPE the keys are cached before rotation and rotated at every decoding step (their
    `streaming_llm/pos_shift/modify_llama.py`)".

    The quoted lines, one decoding step with 5 cached keys and 1 new one: what goes back into the cache
    (``past_key_value``) is the keys as they came, unrotated; the keys attended to are rotated at the positions
    0 .. 5 of the cache (posenc's half layout)."""
    namespace = {"torch": torch, "rotate_half": modeling_llama.rotate_half}
    exec(STREAMING_ROTATE, namespace)
    rng = np.random.default_rng(8)
    cached, new = (
        torch.from_numpy(rng.normal(size=(1, 1, 5, HEAD_DIM))),
        torch.from_numpy(rng.normal(size=(1, 1, 1, HEAD_DIM))),
    )
    angles = np.outer(np.arange(6), posenc.rope_inv_freq(HEAD_DIM))
    emb = torch.from_numpy(np.concatenate([angles, angles], axis=-1))[None, None]
    scope = {
        "past_key_value": (cached, cached),
        "key_states": new,
        "value_states": new,
        "use_cache": True,
        "kv_seq_len": 6,
        "position_ids": torch.tensor([[5]]),
        "cos": emb.cos(),
        "sin": emb.sin(),
    }
    exec(textwrap.dedent(STREAMING_KEYS), namespace, scope)
    raw = torch.cat([cached, new], dim=2)
    assert torch.equal(scope["past_key_value"][0], raw)  # stored unrotated
    np.testing.assert_allclose(
        scope["key_states"].numpy(),
        posenc.apply_rope(raw.numpy(), np.arange(6), posenc.rope_inv_freq(HEAD_DIM)),
        atol=1e-12,
    )


def test_assert_close_compares_entry_by_entry_with_the_dtypes_default_tolerances():
    """Chapter 16: "`torch.testing.assert_close` compares element by element, passing where
    `|actual - expected| <= atol + rtol * |expected|` (the port's entry against the reference's), by default with
    rtol 1.3e-6 for float32, 1e-3 for float16 and 1.6e-2 for bfloat16, and atol 1e-5 for all three".

    PyTorch 2.13: the table ``_DTYPE_PRECISIONS`` holds those pairs. In float32 an entry of 1000 has the
    tolerance 1e-5 + 1.3e-6 * 1000 = 1.31e-3: a gap of 1.25e-3 passes and one of 1.4e-3 fails; the same gap of
    1.25e-3 at an entry of 0.5 (tolerance 1.065e-5) fails, in a tensor whose other entries agree."""
    from torch.testing._comparison import _DTYPE_PRECISIONS

    assert {k: _DTYPE_PRECISIONS[k] for k in (torch.float32, torch.float16, torch.bfloat16)} == {
        torch.float32: (1.3e-6, 1e-5),
        torch.float16: (1e-3, 1e-5),
        torch.bfloat16: (1.6e-2, 1e-5),
    }
    expected = torch.tensor([1000.0, 0.5])
    torch.testing.assert_close(expected + torch.tensor([1.25e-3, 0.0]), expected)
    for gap in ([1.4e-3, 0.0], [0.0, 1.25e-3]):
        with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
            torch.testing.assert_close(expected + torch.tensor(gap), expected)


# --- the registry: every sentence of chapters 13-16 about another library, and the test behind it ------

CHAPTERS = ("13_conventions_and_bugs", "14_reading_a_config", "15_what_the_papers_measured", "16_positions_in_practice")


@dataclasses.dataclass(frozen=True)
class Claim:
    """A sentence (``fragment``: an exact piece of it, whitespace aside) of a chapter's markdown that says what
    another library does, and the test that runs that library or quotes its pinned source."""

    chapter: str
    fragment: str
    test: str  # "tests/file.py::test_name"


@dataclasses.dataclass(frozen=True)
class NotAClaim:
    """A sentence the scanner finds (it names a library and a verb) that states no behaviour of that library."""

    chapter: str
    fragment: str
    reason: str


#: the libraries and engines the scanner looks for (a fixed list: a sentence naming one of them with a verb of
#: behaviour must be a Claim or a NotAClaim)
LIBRARIES = re.compile(
    r"transformers|vLLM|SGLang|llama\.cpp|TensorRT|[Ff]lash ?[Aa]ttention|PyTorch|`torch\.|`nn\.|`generate`"
    r"|DynamicCache|[Tt]okenizer|Meta's|DeepSeek's|Qwen's|StreamingLLM|streaming_llm|[Tt]heir code|the authors'"
    r"|eval/perplexity\.py|eval\.sh|conversion script|GPT-NeoX issue|fairseq|tensor2tensor|get_slopes"
    r"|reference code|modeling code|its code|code comment|masking code|packing code|`assert_close`"
)
#: verbs of behaviour
BEHAVIOUR = re.compile(
    r"\b(does|do|computes?|stores?|holds?|reads?|returns?|rotates?|applies|apply|calls?|builds?|takes?|switch(es)?"
    r"|recomputes?|drops?|runs?|passes|pass|fills?|sets?|casts?|multipl(y|ies)|derives?|keeps?|writes?|finds?"
    r"|registers?|uses?|gives?|puts?|defines?|follows?|marks?|restores?|converts?|handles|makes?|forms?|treats?"
    r"|ignores?|caches?|evicts?|assigns?|attends?|leaves?|looks?|fails?|refuses?|carried|reported|labels?"
    r"|compares?|scores?|splits?|turns?|views?|interleaves?|gets?|lists?|stops?|sees?|slices?|wins|ships?|loads?"
    r"|counts?|moves?|scales?|reorders?|permutes?|met|sorts?|picks?|checks?|shows?)\b"
)
_ABBREVIATION = re.compile(r"(\bal|\be\.g|\bi\.e|\bcf|\bvs|\bNo|\bFig|\bEq)\.$")


def normalised(text):
    return " ".join(text.split())


def chapter_markdown(stem):
    import nbformat

    path = next(p for p in __import__("conftest").chapter_notebooks() if p.stem == stem)
    return [cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown"]


def sentences(markdown):
    """The sentences of a markdown cell, whitespace-normalised: code blocks are one token ("[code]"), directive
    lines (a box's title: a misconception, quoted to be refuted), headings and labels are left out, and every list
    item and paragraph ends a sentence."""
    text = re.sub(r"^(```+|~~~)(?!\{)[^\n]*\n.*?^\1[ \t]*$", " [code] ", markdown, flags=re.S | re.M)
    text = re.sub(r"^(```+|:::+)\{.*$|^```+\s*$|^:\w+:.*$|^#+ .*$|^\([\w-]+\)=\s*$", "\n\n", text, flags=re.M)
    text = re.sub(r"\$\$.*?\$\$", " [math] ", text, flags=re.S)
    found = []
    for block in re.split(r"\n\s*\n|\n(?=\s*- )", text):
        block = normalised(block).removeprefix("- ")
        pieces = re.split(r"(?<=[.!?])\s+(?=[A-Z`(*\[{$]|vLLM|llama\.cpp)", block)
        merged = []
        for piece in pieces:
            if merged and _ABBREVIATION.search(merged[-1]):
                merged[-1] += " " + piece
            else:
                merged.append(piece)
        found += [piece for piece in merged if piece]
    return found


def library_sentences(stem):
    """The sentences of a chapter that name another library or engine with a verb of behaviour."""
    return [
        s for cell in chapter_markdown(stem) for s in sentences(cell) if LIBRARIES.search(s) and BEHAVIOUR.search(s)
    ]


C13, C14, C15, C16 = CHAPTERS
HERE = "tests/test_library_claims.py::"
ROPE = "tests/test_rope.py::"
POSITIONS = "tests/test_positions.py::"
KV = "tests/test_kv_cache.py::"
PORTING = "tests/test_porting.py::"
MULTIMODAL = "tests/test_multimodal.py::"

# fmt: off
CLAIMS = [
    # chapter 13: layouts
    Claim(C13, "Meta's original Llama code) pair $i$ is dimensions $(2i, 2i+1)$",
          HERE + "test_metas_llama_code_rotates_interleaved_pairs_as_complex_numbers"),
    Claim(C13, "(RoFormer, GPT-J, Meta's", HERE + "test_gptj_rotates_interleaved_pairs"),
    Claim(C13, "in the **half** layout (GPT-NeoX,", HERE + "test_gpt_neox_rotates_half_pairs"),
    Claim(C13, "and the Llama code of `transformers`, `models/llama/modeling_llama.py`, which runs Llama 2",
          HERE + "test_the_llama_code_of_transformers_rotates_half_pairs"),
    Claim(C13, "(`models/llama4/modeling_llama4.py`, `apply_rotary_emb`) rotates interleaved pairs",
          HERE + "test_llama4_rotates_interleaved_pairs_by_complex_multiplication"),
    Claim(C13, "(`models/deepseek_v3/modeling_deepseek_v3.py`) rotates the interleaved pairs of its weights",
          HERE + "test_deepseek_v3_rotates_interleaved_pairs_when_rope_interleave_is_true"),
    Claim(C13, "The `transformers` library does exactly this when it converts Meta's Llama checkpoints.",
          HERE + "test_the_conversion_script_permutes_each_heads_query_and_key_rows_into_the_half_layout"),
    Claim(C13, "and applies it to the query weight `wq` (with `n_heads`) and to the key weight `wk`",
          HERE + "test_the_conversion_script_permutes_each_heads_query_and_key_rows_into_the_half_layout"),
    Claim(C13, "the value and output weights are copied unchanged",
          HERE + "test_the_conversion_script_permutes_each_heads_query_and_key_rows_into_the_half_layout"),
    Claim(C13, "(read in version 5.23, `models/llama/modeling_llama.py`), the half layout's rotation is",
          HERE + "test_rotate_half_reads_as_quoted_and_turns_each_pair_counter_clockwise"),
    Claim(C13, "and `apply_rotary_pos_emb` returns `q * cos + rotate_half(q) * sin`",
          HERE + "test_rotate_half_reads_as_quoted_and_turns_each_pair_counter_clockwise"),
    Claim(C13, "the `inv_freq` line of `compute_default_rope_parameters` in `transformers` 5.23 reads",
          HERE + "test_compute_default_rope_parameters_and_the_conversion_script_compute_the_same_speeds"),
    Claim(C13, "and the conversion script quoted above computes the same speeds",
          HERE + "test_compute_default_rope_parameters_and_the_conversion_script_compute_the_same_speeds"),
    Claim(C13, "`get_timing_signal_1d` and fairseq's `SinusoidalPositionalEmbedding` put all the sines first",
          HERE + "test_tensor2tensor_and_fairseq_put_all_the_sines_first_with_other_frequencies"),
    Claim(C13, "`model.to(torch.bfloat16)` or `model.half()` casts floating-point buffers along with the weights",
          HERE + "test_module_to_casts_every_floating_point_buffer_persistent_or_not"),
    Claim(C13, "`nn.Module.to(dtype)` casts every floating-point parameter **and buffer**",
          HERE + "test_module_to_casts_every_floating_point_buffer_persistent_or_not"),
    Claim(C13, "EleutherAI's GPT-NeoX issue #1003 (2023) reported exactly this",
          HERE + "test_the_gpt_neox_issue_1003_reproduction_gives_its_reported_numbers"),
    Claim(C13, "In version 5.23, `LlamaRotaryEmbedding.forward` computes",
          HERE + "test_llama_rotary_embedding_forms_its_angles_in_float32_and_casts_only_cos_and_sin"),
    Claim(C13, "angles formed in float32 (as `transformers` forms them)",
          HERE + "test_llama_rotary_embedding_forms_its_angles_in_float32_and_casts_only_cos_and_sin"),
    Claim(C13, "`LlamaRotaryEmbedding.__init__` registers `self.inv_freq = nn.Buffer(inv_freq, persistent=False)`",
          HERE + "test_llama_rotary_embedding_registers_inv_freq_as_a_non_persistent_buffer"),
    Claim(C13, "so `model.to(torch.bfloat16)` rounds the speeds to bfloat16",
          ROPE + "test_transformers_llama_rope_after_model_to_bfloat16_uses_bfloat16_speeds"),
    Claim(C13, "The book's tests check this against `transformers` 5.23 itself (`tests/test_rope.py`)",
          ROPE + "test_transformers_llama_rope_after_model_to_bfloat16_uses_bfloat16_speeds"),
    Claim(C13, "`inv_freq` included (also in `transformers` 5.23)",
          ROPE + "test_transformers_llama_rope_after_model_to_bfloat16_uses_bfloat16_speeds"),
    Claim(C13, "(as `transformers`' Llama attention does)",
          HERE + "test_llama_attention_rotates_the_keys_then_calls_past_key_values_update"),
    Claim(C13, "keeps each key rotated with the speeds of the step at which it was computed",
          KV + "test_dynamic_ntk_rotated_cache_matches_transformers_dynamic_cache"),
    Claim(C13, "as the authors' `get_slopes` computes it", HERE + "test_bloom_follows_the_alibi_authors_get_slopes"),
    Claim(C13, "BLOOM's `_get_alibi_slopes` follows `get_slopes` step by step",
          HERE + "test_bloom_follows_the_alibi_authors_get_slopes"),
    Claim(C13, "MPT's `build_mpt_alibi_tensor` takes the slopes of the *next* power of two",
          HERE + "test_mpt_takes_the_next_power_of_two_and_puts_the_even_slopes_first"),
    Claim(C13, "the book's tests (`tests/test_biases.py`) call both `transformers` functions",
          "tests/test_biases.py::test_alibi_slopes_match_transformers_bloom_and_mpt_slope_functions"),
    Claim(C13, "The conversion script passes `n_heads=num_key_value_heads, dim1=key_value_dim` when it permutes `wk`.",
          HERE + "test_the_conversion_script_permutes_each_heads_query_and_key_rows_into_the_half_layout"),
    Claim(C13, "as `transformers`' `permute` does",
          HERE + "test_the_conversion_script_permutes_each_heads_query_and_key_rows_into_the_half_layout"),
    Claim(C13, "`models/gpt_neox/modeling_gpt_neox.py` (`rotate_half`: the half layout of GPT-NeoX)",
          HERE + "test_gpt_neox_rotates_half_pairs"),
    Claim(C13, "`models/gptj/modeling_gptj.py` (`rotate_every_two`: GPT-J's interleaved layout)",
          HERE + "test_gptj_rotates_interleaved_pairs"),
    Claim(C13, "(`apply_rotary_emb`: complex multiplication of consecutive coordinates)",
          HERE + "test_llama4_rotates_interleaved_pairs_by_complex_multiplication"),
    Claim(C13, "which `DeepseekV3Config` sets to true by default",
          HERE + "test_deepseek_v3_rotates_interleaved_pairs_when_rope_interleave_is_true"),
    Claim(C13, "`apply_rotary_emb` views consecutive coordinates as one complex number",
          HERE + "test_metas_llama_code_rotates_interleaved_pairs_as_complex_numbers"),
    Claim(C13, "`permute`, and the arguments it is called with for `wq` and `wk`",
          HERE + "test_the_conversion_script_permutes_each_heads_query_and_key_rows_into_the_half_layout"),
    Claim(C13, "The slopes as the authors' `get_slopes` computes them",
          HERE + "test_bloom_follows_the_alibi_authors_get_slopes"),
    # chapter 14: what configs mean to their code
    Claim(C14, "which reads a config the way the `transformers` library's modeling code for the config's",
          "tests/test_models.py::test_zoo_agrees_with_the_reference_library_in_both_forms"),
    Claim(C14, "as the `transformers` modeling files do",
          "tests/test_config_families.py::test_family_layer_by_layer"),
    Claim(C14, "the newer one, which `transformers` 5 writes, puts everything in `rope_parameters`",
          PORTING + "test_a_config_saved_by_transformers_5_has_only_rope_parameters"),
    Claim(C14, "Where a config has both, `rope_scaling` wins, as in `transformers`.",
          "tests/test_config.py::test_rope_scaling_wins_over_rope_parameters_as_in_the_reference"),
    Claim(C14, "and `transformers` (like Meta's code) uses 10 000",
          HERE + "test_transformers_and_metas_code_use_base_10000_when_llama_2_names_none"),
    Claim(C14, "as `transformers` slices `q[..., :rotary_dim]`",
          ROPE + "test_partial_rope_matches_transformers_gpt_neox_and_phi"),
    Claim(C14, "`transformers` calls it the \"proportional\" rope type",
          ROPE + "test_p_rope_keeps_the_fastest_pairs_as_transformers_proportional_rope_does"),
    Claim(C14, "(`transformers` switches when the positions pass `original_max_position_embeddings`)",
          "tests/test_scaling.py::test_longrope_switches_where_transformers_rotary_module_switches"),
    Claim(C14, "Neither config gives a `factor`; `transformers` derives",
          HERE + "test_phi3_derives_the_factor_and_puts_one_attention_factor_on_both_lists"),
    Claim(C14, "`transformers` puts the ratio $m(\\texttt{mscale}) / m(\\texttt{mscale\\_all\\_dim})$ on cos and sin",
          "tests/test_scaling.py::test_yarn_parameters_match_transformers"),
    Claim(C14, "and multiplies the softmax scale $1/\\sqrt{d_{qk}}$",
          "tests/test_config_families.py::test_deepseek_softmax_scale_multiplier_is_the_attention_modules"),
    Claim(C14, "DeepSeek's own inference code (`inference/model.py`, `MLA.__init__`) does the same with `mscale`",
          HERE + "test_deepseek_inference_code_scales_the_softmax_of_every_input_when_built_past_original_seq_len"),
    Claim(C14, "(in DeepSeek's own code, `mscale` = 1)",
          HERE + "test_deepseek_inference_code_scales_the_softmax_of_every_input_when_built_past_original_seq_len"),
    Claim(C14, "`posenc.mrope_position_ids` builds the ids as `transformers`' `get_rope_index` does for Qwen2-VL",
          MULTIMODAL + "test_position_ids_match_qwen2_vl_get_rope_index"),
    Claim(C14, "(`transformers`' `Qwen3VLTextRotaryEmbedding`",
          MULTIMODAL + "test_full_qwen3_vl_rotary_embedding_agrees_to_float32_rounding"),
    Claim(C14, "Llama 4 Scout's `no_rope_layer_interval` = 4 does the same (from Meta's reference code, which marks",
          HERE + "test_metas_llama4_code_marks_every_fourth_layer_a_nope_layer"),
    Claim(C14, "`transformers`' `configuration_llama4.py` gives them the layer type `chunked_attention`",
          HERE + "test_transformers_gives_llama4s_rope_layers_the_chunked_attention_type"),
    Claim(C14, "Meta's reference code gives the global attention mask to the NoPE layers",
          HERE + "test_metas_llama4_code_gives_the_global_mask_to_the_nope_layers_and_chunks_to_the_others"),
    Claim(C14, "the `sliding_window` of 64 that `transformers` derives",
          HERE + "test_modernbert_derives_a_sliding_window_of_half_its_local_attention"),
    Claim(C14, "their `transformers` code rotates only the sliding-window layers and leaves the global ones without",
          "tests/test_config_families.py::test_family_layer_by_layer"),
    Claim(C14, "its code looks the factor up in a table `logn_list`",
          HERE + "test_qwen1_scales_its_queries_by_log_n_from_a_table_that_stops_at_32766"),
    Claim(C14, "Llama 4 Scout's `attn_temperature_tuning` multiplies the query of its NoPE layers",
          HERE + "test_metas_llama4_temperature_tuning_scales_nope_queries_from_the_floor_scale_on"),
    Claim(C14, "after `transformers`' `get_llama_4_attn_scale`",
          "tests/test_config_families.py::test_llama_4_scaling_query_scale_is_the_modeling_codes"),
    Claim(C14, "Meta's code comment says only that the function",
          HERE + "test_metas_llama4_temperature_tuning_scales_nope_queries_from_the_floor_scale_on"),
    Claim(C14, "`posenc.from_config` follows `transformers`' rope initialisation functions and modeling files",
          "tests/test_config.py::test_agrees_with_transformers_in_both_config_forms"),
    Claim(C14, "The softmax-scale multiplier in DeepSeek's inference code",
          HERE + "test_deepseek_inference_code_scales_the_softmax_of_every_input_when_built_past_original_seq_len"),
    Claim(C14, "the position ids as `transformers`' `Qwen2VLModel.get_rope_index` builds them",
          MULTIMODAL + "test_position_ids_match_qwen2_vl_get_rope_index"),
    # chapter 15: the authors' evaluation code
    Claim(C15, "$S$ is the *stride*, the number of tokens by which a window as long as the evaluation length moves",
          HERE + "test_yarn_perplexity_moves_the_window_by_the_stride_unless_truncate_makes_it_one_window"),
    Claim(C15, "the authors' `eval.sh` runs the Proof-pile evaluations with `--truncate`",
          HERE + "test_yarn_perplexity_moves_the_window_by_the_stride_unless_truncate_makes_it_one_window"),
    Claim(C15, "which moves the window only along a document longer than the window",
          HERE + "test_yarn_perplexity_moves_the_window_by_the_stride_unless_truncate_makes_it_one_window"),
    Claim(C15, "is scored in one window (`--truncate` in the authors' `eval.sh`)",
          HERE + "test_yarn_perplexity_moves_the_window_by_the_stride_unless_truncate_makes_it_one_window"),
    # chapter 16: positions, packing, caches, ports
    Claim(C16, "The tokenizer returns an `attention_mask` beside the tokens",
          HERE + "test_the_tokenizer_returns_an_attention_mask_of_ones_for_tokens_and_zeros_for_pads"),
    Claim(C16, "`transformers` computes exactly that in `GenerationMixin._prepare_position_ids_for_generation`",
          POSITIONS + "test_position_ids_from_mask_match_transformers_generation"),
    Claim(C16, "checks that `generate` passes these ids to the model and continues them for every new token",
          POSITIONS + "test_generate_feeds_the_mask_position_ids_and_continues_them"),
    Claim(C16, "`transformers` reads that length from the positions: `seq_len = torch.max(position_ids) + 1`",
          HERE + "test_dynamic_rope_update_reads_the_length_as_the_largest_position_plus_one"),
    Claim(C16, "That maximum is taken over the whole batch: one length for every row.",
          HERE + "test_a_short_row_gets_the_long_factors_when_the_longest_row_passes_l"),
    Claim(C16, "A batch padded to its longest row gives that row no pads",
          HERE + "test_padding_to_the_longest_row_reads_the_same_length_either_way"),
    Claim(C16, "Naive positions make the batch look longer only when it is padded past its longest row",
          HERE + "test_padding_past_the_longest_row_makes_naive_positions_read_a_longer_length"),
    Claim(C16, "because `transformers` reads one length for the whole batch (below)",
          HERE + "test_a_short_row_gets_the_long_factors_when_the_longest_row_passes_l"),
    Claim(C16, "`torch.max(position_ids) + 1` is taken over the whole batch, so under LongRoPE",
          HERE + "test_a_short_row_gets_the_long_factors_when_the_longest_row_passes_l"),
    Claim(C16, "(for rope type \"dynamic\" `transformers` takes $L$ from `max_position_embeddings`)",
          POSITIONS + "test_transformers_dynamic_ntk_keeps_grown_speeds_until_a_call_shorter_than_l"),
    Claim(C16, "`tests/test_positions.py` shows the same with tiny `transformers` models",
          POSITIONS + "test_transformers_dynamic_ntk_depends_on_the_batch"),
    Claim(C16, "`test_transformers_longrope_depends_on_the_batch` for a Phi-3 with LongRoPE",
          POSITIONS + "test_transformers_longrope_depends_on_the_batch"),
    Claim(C16, "what `transformers`' `DataCollatorWithFlattening` returns as `position_ids`",
          POSITIONS + "test_packing_matches_data_collator_with_flattening"),
    Claim(C16, "its masking code finds the documents from the positions",
          POSITIONS + "test_document_ids_from_position_ids_match_transformers"),
    Claim(C16, "and builds the block mask from them (`packed_sequence_mask_function`)",
          POSITIONS + "test_document_mask_matches_transformers_causal_mask_for_packed_position_ids"),
    Claim(C16, "positions counted through the whole row read as one document",
          HERE + "test_positions_that_count_up_through_the_row_read_as_one_document"),
    Claim(C16, "it does this only when it is given no 2-D attention mask **and** no cache",
          POSITIONS + "test_transformers_packs_only_without_an_attention_mask_or_a_cache"),
    Claim(C16, "A packed row passed with an all-ones `attention_mask`",
          POSITIONS + "test_transformers_packs_only_without_an_attention_mask_or_a_cache"),
    Claim(C16, "Flash attention builds no mask",
          HERE + "test_flash_attention_reads_packed_documents_from_the_position_ids_whatever_the_cache"),
    Claim(C16, "its packing code derives the block mask from the restarted positions",
          POSITIONS + "test_transformers_packs_only_without_an_attention_mask_or_a_cache"),
    Claim(C16, "flash attention reads the documents from the position ids itself.",
          HERE + "test_flash_attention_reads_packed_documents_from_the_position_ids_whatever_the_cache"),
    Claim(C16, "`transformers` stores it rotated",
          HERE + "test_llama_attention_rotates_the_keys_then_calls_past_key_values_update"),
    Claim(C16, "`transformers`' Phi-3 handles the switch in `Phi3ForCausalLM.prepare_inputs_for_generation`",
          KV + "test_longrope_matches_transformers_phi3_reuse_and_recompute"),
    Claim(C16, "After `generate`, every cached key carries the long factors",
          KV + "test_longrope_matches_transformers_phi3_reuse_and_recompute"),
    Claim(C16, "`tests/test_kv_cache.py` checks both against a tiny Phi-3",
          KV + "test_longrope_matches_transformers_phi3_reuse_and_recompute"),
    Claim(C16, "and dynamic NTK against a tiny Llama's cache",
          KV + "test_dynamic_ntk_rotated_cache_matches_transformers_dynamic_cache"),
    Claim(C16, "In a model of several layers only a recompute matches",
          KV + "test_an_unrotated_store_is_stale_from_the_second_layer_on_only_a_recompute_matches"),
    Claim(C16, "`generate` in `transformers` recomputes Phi-3's cache at the switch",
          KV + "test_longrope_matches_transformers_phi3_reuse_and_recompute"),
    Claim(C16, "`StartRecentKVCache`, keeps 4 sink tokens by default",
          HERE + "test_streaming_llm_keeps_4_sink_tokens_by_default"),
    Claim(C16, "For RoPE the keys are cached before rotation and rotated at every decoding step",
          HERE + "test_streaming_llm_caches_keys_before_rotation_and_rotates_them_at_their_cache_positions"),
    Claim(C16, "`torch.testing.assert_close` compares element by element",
          HERE + "test_assert_close_compares_entry_by_entry_with_the_dtypes_default_tolerances"),
    Claim(C16, "That score is more lenient than `assert_close`'s, whose tolerance shrinks with each entry",
          HERE + "test_assert_close_compares_entry_by_entry_with_the_dtypes_default_tolerances"),
    Claim(C16, "`assert_close`'s own element-wise rule is stricter",
          HERE + "test_assert_close_compares_entry_by_entry_with_the_dtypes_default_tolerances"),
    Claim(C16, "`transformers` 5 keeps the rotary settings of a config in one dictionary",
          PORTING + "test_a_config_saved_by_transformers_5_has_only_rope_parameters"),
    Claim(C16, "A v5 `LlamaConfig` has no `rope_theta` attribute at all",
          PORTING + "test_reading_rope_theta_as_an_attribute_falls_back_to_the_default_in_transformers_5"),
    Claim(C16, "and a config saved by v5 writes only `rope_parameters`",
          PORTING + "test_a_config_saved_by_transformers_5_has_only_rope_parameters"),
    Claim(C16, "returns the position ids of a padded batch as `transformers`' `generate` computes them",
          POSITIONS + "test_position_ids_from_mask_match_transformers_generation"),
    Claim(C16, "`transformers` reads the documents from the positions; $0, \\dots, 11$ goes up by one everywhere",
          HERE + "test_positions_that_count_up_through_the_row_read_as_one_document"),
    Claim(C16, "pads at 0, as `generate` computes them",
          POSITIONS + "test_position_ids_from_mask_match_transformers_generation"),
    Claim(C16, "`transformers` reads that length as `max(position_ids) + 1` over the whole batch",
          HERE + "test_a_short_row_gets_the_long_factors_when_the_longest_row_passes_l"),
    Claim(C16, "padded past its longest row to a length past $L$ (under `transformers`' dynamic NTK, past the "
          "longest length it has read)",
          "tests/test_positions.py::test_transformers_dynamic_ntk_keeps_grown_speeds_until_a_call_shorter_than_l"),
    Claim(C16, "(and, under `transformers`' dynamic NTK, on its earlier calls)",
          POSITIONS + "test_transformers_dynamic_ntk_keeps_grown_speeds_until_a_call_shorter_than_l"),
    Claim(C16, "`transformers` derives the documents from the restarted positions",
          POSITIONS + "test_transformers_packs_only_without_an_attention_mask_or_a_cache"),
    Claim(C16, "flash attention reads them from the position ids itself (`_is_packed_sequence`)",
          HERE + "test_flash_attention_reads_packed_documents_from_the_position_ids_whatever_the_cache"),
    Claim(C16, "(`transformers`' Phi-3 recomputes at the switch in `generate`)",
          KV + "test_longrope_matches_transformers_phi3_reuse_and_recompute"),
    Claim(C16, "`getattr(config, \"rope_theta\", 10000)` on a `transformers` 5 config silently gives the default",
          PORTING + "test_reading_rope_theta_as_an_attribute_falls_back_to_the_default_in_transformers_5"),
    Claim(C16, "**Sink windows** (StreamingLLM, section 3.2)",
          KV + "test_sink_window_reassigns_positions_as_streaming_llm_section_3_2"),
    Claim(C16, "`streaming_llm/kv_cache.py` (`StartRecentKVCache`, `start_size=4`)",
          HERE + "test_streaming_llm_keeps_4_sink_tokens_by_default"),
    Claim(C16, "(keys cached before rotation, key positions `arange(kv_seq_len)`)",
          HERE + "test_streaming_llm_caches_keys_before_rotation_and_rotates_them_at_their_cache_positions"),
    Claim(C16, "PyTorch 2.13, `torch/testing/_comparison.py` (`_DTYPE_PRECISIONS`)",
          HERE + "test_assert_close_compares_entry_by_entry_with_the_dtypes_default_tolerances"),
]

NOT_CLAIMS = [
    NotAClaim(C13, "Buggy lines, the quoted conversion code and the reproduction of a reported bug",
              "says how the chapter labels its own cells"),
    NotAClaim(C13, "older `transformers` code even carried the comment",
              "history: a comment of transformers before 5.23, as issue #25681 quotes it (its first post, read with "
              "the search tool); the pinned version's layout is the Claim above"),
    NotAClaim(C13, "Put the minus sign on the other half, `torch.cat((x2, -x1))`",
              "the chapter's own buggy line, not a library's code"),
    NotAClaim(C13, "The `transformers` library met the same loss of precision under `torch.autocast`",
              "history: what pull request #29285 reported in 2024 (title and description read with the search tool); "
              "what 5.23 does is the next sentence, a Claim"),
    NotAClaim(C13, "Two codebases can also write the authors' rule differently and still agree.",
              "introduces the next sentence, which carries the claims"),
    NotAClaim(C14, "`posenc.MODELS` maps a model's name to its scheme",
              "describes posenc's zoo; transformers' configuration classes named as a kind of source"),
    NotAClaim(C14, "`posenc.from_config` reads a config (a dict, a `transformers` config object or a zoo entry)",
              "describes posenc's API; a transformers config object is one of its inputs"),
    NotAClaim(C14, "GPT-NeoX-20B rotates a quarter of each head",
              "model settings read from the zoo's configs, each field with its source (tests/test_models.py)"),
    NotAClaim(C14, "DeepSeek's multi-head latent attention (MLA) caches one small latent vector",
              "the model's design as the DeepSeek-V2 paper describes it (section 2.1.3), not a library's code"),
    NotAClaim(C14, "DeepSeek's answer is to *decouple*",
              "the model's design as the DeepSeek-V2 paper describes it (section 2.1.3), not a library's code"),
    NotAClaim(C14, "Where the `transformers` library is installed (the book's environment pins it), it builds",
              "describes posenc's own `explain` command (tests/test_explain.py), which uses the library"),
    NotAClaim(C14, "`posenc.config_families`: the family rules, each naming the `transformers` 5.23",
              "a source entry: where posenc's family rules were read"),
    NotAClaim(C15, "The paper's Table 2 goes much further, with public models extended to 32k",
              "quotes a paper's table (data/paper_results.json); no code's behaviour"),
    NotAClaim(C15, "A perplexity depends on the data set, the documents drawn from it, the tokenizer",
              "a general statement about perplexity; the tokenizer is a factor, not a library"),
    NotAClaim(C16, "Where the text says what the `transformers` library (version 5.23) does",
              "says how the chapter backs its claims"),
    NotAClaim(C16, "Where does the block mask come from in `transformers`?",
              "a question; the sentences after answer it"),
    NotAClaim(C16, "(Read in the code; the book's tests run on a CPU, without flash attention.)",
              "says how the sentence before was checked"),
    NotAClaim(C16, "the YaRN settings that Qwen's documentation gives Qwen3 models for 131,072 tokens",
              "a documentation's recommended settings, the source of a config of our own; no code's behaviour"),
    NotAClaim(C16, "For each port and tolerance, the first position at which a test scored as in the explorer fails",
              "says what the next cell prints; the rule it applies is the assert_close Claim"),
    NotAClaim(C16, "Section 3.3, \"Dynamic Scaling\" (keys cached before RoPE), read in the two versions",
              "a source entry for a paper's section, not code"),
    NotAClaim(C16, "Qwen3's YaRN settings (factor 4 from `original_max_position_embeddings` = 32,768",
              "a source entry for configs and a documentation page"),
]
# fmt: on

#: each chapter's line naming the versions its claims were checked against (the installed versions must match)
VERSION_LINES = {
    C13: "Library versions: the sentences of this chapter about what `transformers` and PyTorch do were checked "
    "against `transformers` 5.23.0 and PyTorch 2.13.0, and those about code that is not a package against the "
    "commits named above and, for tensor2tensor's `layers/common_attention.py` and fairseq's "
    "`modules/sinusoidal_positional_embedding.py`, commits `bafdc1b` and `3d262bb`, by `tests/test_library_claims.py`.",
    C14: "Library versions: the sentences of this chapter about what `transformers` does were checked against "
    "`transformers` 5.23.0, and those about Meta's, DeepSeek's and Qwen's reference code against the commits "
    "named above and, for Meta's Llama 2 code (`meta-llama/llama`) and Qwen-1's `modeling_qwen.py` (the copy in "
    "`alibaba/MNN` the zoo names), commits `8580eb9` and `7cad2ee`, by `tests/test_library_claims.py`.",
    C15: "Code versions: the sentences of this chapter about what the YaRN authors' evaluation code does were "
    "checked against `jquesnelle/yarn` at commit `70d45d3` (`eval/perplexity.py`, `eval.sh`) by "
    "`tests/test_library_claims.py`.",
    C16: "Library versions: the sentences of this chapter about what `transformers` and PyTorch do were checked "
    "against `transformers` 5.23.0 and PyTorch 2.13.0, and those about StreamingLLM's code against the commit "
    "named above, by `tests/test_library_claims.py`.",
}


def chapter_text(stem):
    return normalised(" ".join(chapter_markdown(stem)))


def test_every_registered_fragment_stands_in_its_chapter():
    """Each Claim's and NotAClaim's fragment is in its chapter's markdown (whitespace aside), once a sentence
    changes, its entry fails here."""
    texts = {stem: chapter_text(stem) for stem in CHAPTERS}
    missing = [
        (e.chapter, e.fragment) for e in [*CLAIMS, *NOT_CLAIMS] if normalised(e.fragment) not in texts[e.chapter]
    ]
    assert missing == []
    assert all(e.reason for e in NOT_CLAIMS)


def test_every_named_test_exists():
    """Each Claim names a test function that its file defines (read with ast, not imported)."""
    import ast

    from conftest import ROOT

    defined = {}
    for claim in CLAIMS:
        path, name = claim.test.split("::")
        if path not in defined:
            tree = ast.parse((ROOT / path).read_text())
            defined[path] = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        assert name.startswith("test_") and name in defined[path], claim.test


def test_every_sentence_about_another_library_is_registered():
    """The scanner's sentences (naming a library or engine of LIBRARIES with a verb of BEHAVIOUR) in chapters 13 to
    16: each holds a Claim's fragment or a NotAClaim's. A new sentence about what a library does fails here until it
    is given a test (a Claim) or a reason (a NotAClaim)."""
    unregistered = []
    for stem in CHAPTERS:
        fragments = [normalised(e.fragment) for e in [*CLAIMS, *NOT_CLAIMS] if e.chapter == stem]
        fragments.append(normalised(VERSION_LINES[stem]))  # the version line, checked by its own test below
        unregistered += [(stem, s) for s in library_sentences(stem) if not any(f in s for f in fragments)]
    assert unregistered == [], "\n".join(f"{stem}: {s}" for stem, s in unregistered)


def test_the_scanner_finds_sentences_and_skips_code_and_box_titles():
    """The sentence splitter on a made-up cell: a code block, a box's title (a misconception) and a heading are not
    sentences; "et al." does not end one; a list item does."""
    cell = (
        "## Heading with transformers\n"
        '```{admonition} Common misconception: "transformers does X"\n'
        "Peng et al. (2023) say that `transformers` stores it rotated. Another one\n"
        "follows.\n\n"
        "```python\nx = transformers.run()\n```\n"
        "- an item that `generate` reads;\n"
        "- another item.\n"
        "```\n"
    )
    assert sentences(cell) == [
        "Peng et al. (2023) say that `transformers` stores it rotated.",
        "Another one follows.",
        "[code]",
        "an item that `generate` reads;",
        "another item.",
    ]


def test_each_chapter_names_the_library_versions_it_was_checked_against():
    """Each of chapters 13 to 16 has its version line, and the versions it names are the installed ones (the
    pinned reference, requirements.txt)."""
    import transformers

    from conftest import ROOT

    installed = {"transformers": transformers.__version__, "PyTorch": torch.__version__.split("+")[0]}
    pins = (ROOT / "requirements.txt").read_text()
    for stem, line in VERSION_LINES.items():
        assert normalised(line) in chapter_text(stem), stem
        for library, version in re.findall(r"`?(transformers|PyTorch)`? (\d+\.\d+\.\d+)", line):
            assert installed[library] == version, (stem, library, version)
            assert f"{'torch' if library == 'PyTorch' else library}=={version}" in pins


def test_every_claim_test_quotes_a_sentence_its_chapter_says():
    """Each claim test of this file opens its docstring with 'Chapter N: "..."': the sentence it backs, which must
    stand in that chapter (whitespace aside), so that a changed sentence shows here; and each is named by a Claim."""
    registry = {
        test_every_claim_test_quotes_a_sentence_its_chapter_says,
        test_every_registered_fragment_stands_in_its_chapter,
        test_every_named_test_exists,
        test_every_sentence_about_another_library_is_registered,
        test_the_scanner_finds_sentences_and_skips_code_and_box_titles,
        test_each_chapter_names_the_library_versions_it_was_checked_against,
    }
    tests = [f for name, f in sorted(globals().items()) if name.startswith("test_") and f not in registry]
    stems = {int(stem[:2]): stem for stem in CHAPTERS}
    for test in tests:
        found = re.match(r'Chapter (\d+): "(.*?)"(?:\.|\n\n|$)', inspect.getdoc(test), re.S)
        assert found, test.__name__
        quote = normalised(found[2]).rstrip(".")
        assert quote in chapter_text(stems[int(found[1])]), (test.__name__, quote)
        assert HERE + test.__name__ in {c.test for c in CLAIMS}, test.__name__


# --- chapter 8: which layout the models of transformers rotate --------------------------------------
# Chapter 8's sentences about other libraries are not in the registry above (chapters 13 to 16); the
# class below holds their tests and checks its own quotes against chapter 8.


def ch08_rotary_tables(family, head_dim=HEAD_DIM, n=5):
    """The cos and sin (or complex ``freqs_cis``) that ``family``'s own rotary module of ``transformers`` 5.23
    builds for positions 0 .. n-1 (default RoPE, base 10000, every dimension rotated), and the family's module."""
    import importlib

    import transformers

    classes = {
        "llama": ("LlamaConfig", "LlamaRotaryEmbedding"),
        "cohere": ("CohereConfig", "CohereRotaryEmbedding"),
        "glm": ("GlmConfig", "GlmRotaryEmbedding"),
        "helium": ("HeliumConfig", "HeliumRotaryEmbedding"),
        "ernie4_5": ("Ernie4_5Config", "Ernie4_5RotaryEmbedding"),
        "deepseek_v2": ("DeepseekV2Config", "DeepseekV2RotaryEmbedding"),
        "deepseek_v3": ("DeepseekV3Config", "DeepseekV3RotaryEmbedding"),
        "llama4": ("Llama4TextConfig", "Llama4TextRotaryEmbedding"),
    }
    config_name, rotary_name = classes[family]
    module = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
    config = getattr(transformers, config_name)(
        hidden_size=32,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=head_dim,
        qk_rope_head_dim=head_dim,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 1.0},
    )
    rotary = getattr(module, rotary_name)(config)
    assert rotary.inv_freq.shape == (head_dim // 2,)
    return module, rotary(torch.zeros(1, n, head_dim), torch.arange(n)[None])


def ch08_rotated_by(family, x):
    """``x`` (batch, heads, seq, d), rotated at positions 0 .. seq-1 by ``family``'s own code in ``transformers``
    5.23: its rotary module's tables (for GPT-J and CodeGen, the table their attention gathers) and its rotation
    function."""
    import importlib

    n = x.shape[-2]
    q = torch.from_numpy(x)
    if family in ("gptj", "codegen"):  # (batch, seq, heads, d); the table holds the sines, then the cosines
        module = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
        sincos = module.create_sinusoidal_positions(n, x.shape[-1])[None]
        sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
        return module.apply_rotary_pos_emb(q.transpose(1, 2), sin, cos).transpose(1, 2).double().numpy()
    module, tables = ch08_rotary_tables(family, x.shape[-1], n)
    if family == "deepseek_v2":  # complex freqs_cis
        return module.apply_rotary_emb(q, q, tables)[0].double().numpy()
    if family == "llama4":  # (batch, seq, heads, d), complex freqs_cis
        rotated = module.apply_rotary_emb(q.transpose(1, 2), q.transpose(1, 2), tables)[0]
        return rotated.transpose(1, 2).double().numpy()
    cos, sin = tables
    if family == "deepseek_v3":
        return module.apply_rotary_pos_emb_interleave(q, q, cos, sin)[0].double().numpy()
    return module.apply_rotary_pos_emb(q, q, cos, sin)[0].double().numpy()


# huggingface/transformers, src/transformers/models/llama4/convert_llama4_weights_to_hf.py, read at commit
# 59d00552a08506d5748b0951e8e84d252fb893bd (a stored copy; the script is not in the wheel). permute_for_rope:
CH08_LLAMA4_PERMUTE_FOR_ROPE = '''\
def permute_for_rope(input_tensor, n_heads, dim1, dim2):
    """
    When you go from the complex ROPE formulation to sin and cos one, you need
    to permute the query and key weights (to avoid doing it on the fly)
    """
    input_tensor = input_tensor.view(n_heads, dim1 // n_heads // 2, 2, dim2)
    input_tensor = input_tensor.transpose(1, 2).reshape(dim1, dim2)
    return input_tensor
'''
# write_model, the qkv_proj branch, after the queries and keys are gathered from the shards:
CH08_LLAMA4_QKV_LINES = """\
                # queries = permute_for_rope(queries, num_heads, dim, dim)
                # keys = permute_for_rope(keys, num_key_value_heads, num_key_value_heads*dim_per_head, dim)
"""


class TestChapter8Layouts:
    """Chapter 8's sentences about the layouts of `transformers` 5.23; each docstring quotes its sentence."""

    @pytest.mark.parametrize(
        "family", ["llama4", "deepseek_v2", "deepseek_v3", "gptj", "codegen", "cohere", "glm", "helium", "ernie4_5"]
    )
    def test_many_models_of_transformers_rotate_interleaved_pairs(self, family):
        """Chapter 8: "Not by every model there: many rotate interleaved pairs, among them Llama 4, DeepSeek-V2,
        DeepSeek-V3 (with its default `rope_interleave`), GPT-J, CodeGen, Cohere, GLM, Helium and ERNIE 4.5".

        Each family's own rotary module (for GPT-J and CodeGen, the table their attention gathers) and its own
        rotation function rotate a head as posenc's interleaved layout does, not as its half layout (float32
        tables: to 1e-5). DeepSeek-V3, with ``rope_interleave`` true (its config's default), writes the rotated
        pairs in the half layout's order (``interleaved_to_half_permutation``)."""
        x = random_heads(3)
        positions = np.arange(x.shape[-2])
        inv_freq = posenc.rope_inv_freq(HEAD_DIM)
        interleaved = posenc.apply_rope(x, positions, inv_freq, "interleaved")
        half = posenc.apply_rope(x, positions, inv_freq, "half")
        if family == "deepseek_v3":
            assert DeepseekV3Config().rope_interleave is True
            order = posenc.interleaved_to_half_permutation(HEAD_DIM)
            interleaved, half = interleaved[..., order], half[..., order]
        rotated = ch08_rotated_by(family, x)
        np.testing.assert_allclose(rotated, interleaved, atol=1e-5)
        assert np.abs(rotated - half).max() > 1e-1

    @pytest.mark.parametrize(
        "family, layout",
        [("cohere", "interleaved"), ("glm", "interleaved"), ("helium", "interleaved"),
         ("ernie4_5", "interleaved"), ("llama", "half"), ("gpt_neox", "half")],
    )  # fmt: skip
    def test_a_function_named_rotate_half_can_pair_either_way(self, family, layout):
        """Chapter 8: "A function's name does not tell the layout: the `rotate_half` of Cohere, GLM, Helium and
        ERNIE 4.5 pairs dimensions $(2i, 2i+1)$".

        Each of these modules of ``transformers`` 5.23 has a function named ``rotate_half``; applied to the unit
        vector e_j it puts ±1 on j's partner only: j ± 1 (interleaved) for Cohere, GLM, Helium and ERNIE 4.5,
        j ± d/2 (half) for Llama and GPT-NeoX."""
        import importlib

        module = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
        turned = module.rotate_half(torch.eye(HEAD_DIM, dtype=torch.float64)).numpy()
        assert all(np.count_nonzero(row) == 1 for row in turned)
        partners = [int(np.flatnonzero(row)[0]) for row in turned]
        if layout == "interleaved":
            assert partners == [j ^ 1 for j in range(HEAD_DIM)]
        else:
            assert partners == [(j + HEAD_DIM // 2) % HEAD_DIM for j in range(HEAD_DIM)]

    def test_posenc_module_and_the_llama_code_of_transformers_default_to_the_half_layout(self):
        """Chapter 8: "The module uses the half layout by default, like the Llama code of `transformers`
        (`models/llama`)".

        ``posenc.nn.RotaryEmbedding(16)`` with no ``layout``, and ``models/llama``'s ``apply_rotary_pos_emb``
        with the tables of ``LlamaRotaryEmbedding``, both rotate a head as posenc's half layout does, not as its
        interleaved one."""
        import posenc.nn

        x = random_heads(4)
        positions = np.arange(x.shape[-2])
        inv_freq = posenc.rope_inv_freq(HEAD_DIM)
        half = posenc.apply_rope(x, positions, inv_freq, "half")
        interleaved = posenc.apply_rope(x, positions, inv_freq, "interleaved")
        q = torch.from_numpy(x)
        by_module, _ = posenc.nn.RotaryEmbedding(HEAD_DIM)(q, q, positions=positions)
        for rotated in (by_module.double().numpy(), ch08_rotated_by("llama", x)):
            np.testing.assert_allclose(rotated, half, atol=1e-5)
            assert np.abs(rotated - interleaved).max() > 1e-1

    def test_llama4_conversion_leaves_the_weights_unpermuted_as_its_code_rotates_interleaved_pairs(self):
        """Chapter 8: "Llama 4's conversion, `models/llama4/convert_llama4_weights_to_hf.py`, does not: its two
        calls of `permute_for_rope` are commented out, since the `transformers` code for Llama 4 rotates
        interleaved pairs itself".

        The quoted calls are comments. Meta's weights left as they are, as the conversion leaves them, give under
        ``modeling_llama4``'s rotation (with ``Llama4TextRotaryEmbedding``'s tables) the scores of the interleaved
        original (posenc); run through the quoted ``permute_for_rope`` first, they would not."""
        lines = CH08_LLAMA4_QKV_LINES.splitlines()
        assert len(lines) == 2 and all(line.strip().startswith("# ") and "permute_for_rope(" in line for line in lines)
        namespace = {}
        exec(CH08_LLAMA4_PERMUTE_FOR_ROPE, namespace)
        permute_for_rope = namespace["permute_for_rope"]
        rng = np.random.default_rng(6)
        d_model, n_heads, n = 32, 2, 7
        w_q, w_k = (torch.from_numpy(rng.normal(size=(n_heads * HEAD_DIM, d_model))) for _ in range(2))
        tokens = torch.from_numpy(rng.normal(size=(n, d_model)))
        positions = np.arange(n)
        inv_freq = posenc.rope_inv_freq(HEAD_DIM)

        def heads(w):  # (1, heads, seq, d)
            return (tokens @ w.T).reshape(n, n_heads, HEAD_DIM).transpose(0, 1)[None].numpy()

        def scores(rotate, weights):
            q, k = (rotate(heads(w)) for w in weights)
            return q @ np.swapaxes(k, -1, -2)

        original = scores(lambda x: posenc.apply_rope(x, positions, inv_freq, "interleaved"), (w_q, w_k))
        converted = scores(lambda x: ch08_rotated_by("llama4", x), (w_q, w_k))
        np.testing.assert_allclose(converted, original, atol=1e-4)
        permuted = [permute_for_rope(w, n_heads, n_heads * HEAD_DIM, d_model) for w in (w_q, w_k)]
        assert (
            np.abs(scores(lambda x: ch08_rotated_by("llama4", x), permuted) - original).max()
            > 0.1 * np.abs(original).max()
        )

    def test_each_test_of_this_class_quotes_a_sentence_chapter_8_says(self):
        """Each other test of this class opens its docstring with 'Chapter 8: "..."': a sentence that stands in
        chapter 8's markdown (whitespace aside)."""
        text = chapter_text("08_rope")
        tests = [
            f for name, f in vars(type(self)).items() if name.startswith("test_") and not name.startswith("test_each")
        ]
        assert len(tests) == 4
        for test in tests:
            found = re.match(r'Chapter 8: "(.*?)"(?:\.|\n\n|$)', inspect.getdoc(test), re.S)
            assert found, test.__name__
            assert normalised(found[1]).rstrip(".") in text, test.__name__
