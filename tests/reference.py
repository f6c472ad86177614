"""The transformers library as a reference: build its Llama RoPE from plain arguments (no weights)."""

from __future__ import annotations

from transformers import LlamaConfig


def llama_rope_config(
    method: str,
    head_dim: int,
    base: float,
    factor: float | None,
    original: int,
    max_position_embeddings: int | None = None,
    **params,
) -> LlamaConfig:
    """A weightless ``LlamaConfig`` whose ``rope_parameters`` describe ``method`` as posenc's arguments do.

    For "yarn", "llama3" and "longrope" transformers reads the trained length from
    ``original_max_position_embeddings`` and the extended one from
    ``max_position_embeddings`` (``original * factor`` unless given); for "dynamic" the
    trained length is ``max_position_embeddings`` itself. ``factor=None`` leaves the
    field out, as Phi-3's config does (transformers then derives it, for "longrope" and
    "yarn", as ``max_position_embeddings / original``).
    """
    rope = {"rope_type": method, "rope_theta": base, **params}
    max_pos = original
    if method != "default" and factor is not None:
        rope["factor"] = factor
    if method in ("yarn", "llama3", "longrope"):
        rope["original_max_position_embeddings"] = original
        max_pos = int(original * (factor or 1))
    if max_position_embeddings is not None:
        max_pos = max_position_embeddings
    return LlamaConfig(
        hidden_size=2 * head_dim,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=max_pos,
        rope_parameters=rope,
    )
