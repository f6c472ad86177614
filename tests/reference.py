"""The transformers library as a reference: build its Llama RoPE from plain arguments (no weights)."""

from __future__ import annotations

from transformers import LlamaConfig


def llama_rope_config(method: str, head_dim: int, base: float, factor: float, original: int, **params) -> LlamaConfig:
    """A weightless ``LlamaConfig`` whose ``rope_parameters`` describe ``method`` as posenc's arguments do.

    For "yarn" and "llama3" transformers reads the trained length from
    ``original_max_position_embeddings`` and the extended one from
    ``max_position_embeddings``; for "dynamic" the trained length is
    ``max_position_embeddings`` itself.
    """
    rope = {"rope_type": method, "rope_theta": base, **params}
    max_pos = original
    if method != "default":
        rope["factor"] = factor
    if method in ("yarn", "llama3"):
        rope["original_max_position_embeddings"] = original
        max_pos = int(original * factor)
    return LlamaConfig(
        hidden_size=2 * head_dim,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=max_pos,
        rope_parameters=rope,
    )
