"""A tiny decoder-only transformer whose positional scheme is a parameter.

Pre-norm blocks (LayerNorm, causal self-attention, GELU MLP), as GPT-2 arranges them.
The schemes use the ``posenc.nn`` modules:

* ``"nope"``: no positional information at all (NoPE): only the causal mask;
* ``"learned"``: :class:`posenc.nn.LearnedPositionalEmbedding`, rows initialised with the
  tokens' scale; rows past the training length are never trained;
* ``"sinusoidal"``: :class:`posenc.nn.SinusoidalPositionalEncoding`;
* ``"rope"``: :class:`posenc.nn.RotaryEmbedding` on every head's queries and keys; its
  context-extension method can be changed after training (:meth:`TinyTransformer.set_rope_scaling`);
* ``"alibi"``: :class:`posenc.nn.ALiBiBias` added to the attention logits;
* ``"partial_rope"``: RoPE on the first half of each head's dimensions, speeds computed over
  that half (``partial_rotary_factor = 0.5``, as GPT-NeoX's ``rotary_pct`` and Phi-2);
* ``"p_rope"``: p-RoPE with ``p = 0.5`` (Barbero et al. 2024): the fastest half of the pairs
  turn at RoPE's speeds, the slower half not at all;
* ``"rope_nope"``: RoPE in the first layer, none in the second: a NoPE/RoPE layer pattern
  (Llama 4 and SmolLM3 leave every fourth layer without RoPE).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .._validation import check_choice, check_int
from ..nn import ALiBiBias, LearnedPositionalEmbedding, RotaryEmbedding, SinusoidalPositionalEncoding
from ..scaling import SCALING_METHODS

__all__ = ["SCHEMES", "ROTARY_SCHEMES", "ModelConfig", "TinyTransformer"]

SCHEMES = ("nope", "learned", "sinusoidal", "rope", "alibi", "partial_rope", "p_rope", "rope_nope")
#: The schemes that rotate queries and keys, and how: RotaryEmbedding keywords.
ROTARY_SCHEMES = {
    "rope": {},
    "partial_rope": {"partial_rotary_factor": 0.5},
    "p_rope": {"p_rope": 0.5},
    "rope_nope": {},
}


@dataclass
class ModelConfig:
    """Sizes and positional scheme; ``train_len`` is the context the model is trained at."""

    vocab: int
    scheme: str = "rope"
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    max_len: int = 256
    train_len: int = 32
    rope_base: float = 10000.0

    def __post_init__(self):
        check_choice("scheme", self.scheme, SCHEMES)
        check_int("vocab", self.vocab, minimum=2)
        check_int("n_heads", self.n_heads, minimum=1)
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(f"d_model={self.d_model} must split into n_heads={self.n_heads} heads of an even size")

    def to_dict(self) -> dict:
        return asdict(self)


class Attention(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.n_heads, self.head_dim = config.n_heads, config.d_model // config.n_heads
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model)
        self.out = nn.Linear(config.d_model, config.d_model)

    def forward(self, x, rotary=None, bias=None):
        batch, length, width = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if rotary is not None:
            q, k = rotary(q, k)
        if bias is None:
            attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            attended = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return self.out(attended.transpose(1, 2).reshape(batch, length, width))


class Block(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(config.d_model), nn.LayerNorm(config.d_model)
        self.attention = Attention(config)
        self.mlp = nn.Sequential(
            nn.Linear(config.d_model, 4 * config.d_model), nn.GELU(), nn.Linear(4 * config.d_model, config.d_model)
        )

    def forward(self, x, rotary=None, bias=None):
        x = x + self.attention(self.norm1(x), rotary, bias)
        return x + self.mlp(self.norm2(x))


class TinyTransformer(nn.Module):
    """``forward(tokens)`` maps int64 tokens ``(batch, length)`` to next-token logits ``(batch, length, vocab)``."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab, config.d_model)
        self.absolute = None
        self.rotary = None
        self.alibi = None
        if config.scheme == "learned":
            self.absolute = LearnedPositionalEmbedding(config.max_len, config.d_model, init_std=1.0)
        elif config.scheme == "sinusoidal":
            self.absolute = SinusoidalPositionalEncoding(config.d_model, config.max_len)
        elif config.scheme in ROTARY_SCHEMES:
            self.set_rope_scaling("default")
        elif config.scheme == "alibi":
            self.alibi = ALiBiBias(config.n_heads, causal=True)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab)

    def set_rope_scaling(self, method: str = "default", factor: float = 1.0, **params) -> None:
        """Switch the RoPE frequencies (``posenc.scaled_inv_freq``); the trained length is ``config.train_len``.

        Only for the rotary schemes (:data:`ROTARY_SCHEMES`). The weights are untouched: this is how a trained model
        is extended to longer contexts at evaluation time (and then, optionally, fine-tuned).
        """
        if self.config.scheme not in ROTARY_SCHEMES:
            raise ValueError(
                f"set_rope_scaling needs a rotary scheme ({', '.join(ROTARY_SCHEMES)}), "
                f"this model uses {self.config.scheme!r}"
            )
        check_choice("method", method, SCALING_METHODS)
        device = self.embed.weight.device
        self.rotary = RotaryEmbedding(
            self.config.d_model // self.config.n_heads,
            self.config.rope_base,
            layout="half",
            scaling=method,
            factor=factor,
            original_max_position_embeddings=self.config.train_len,
            max_len=self.config.max_len,
            **ROTARY_SCHEMES[self.config.scheme],
            **params,
        ).to(device)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        if self.absolute is not None:
            x = self.absolute(x)
        bias = self.alibi(tokens.shape[1]) if self.alibi is not None else None
        for layer, block in enumerate(self.blocks):
            rotary = None if self.config.scheme == "rope_nope" and layer % 2 == 1 else self.rotary
            x = block(x, rotary, bias)
        return self.head(self.norm(x))
