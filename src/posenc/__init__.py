"""posenc: the tested kernels behind "Positional Encoding, from Integers to YaRN".

Pure functions on NumPy arrays (angles formed in float64; the caller picks the
output dtype), one module per family:

* ``posenc.absolute``: integer, normalised, sinusoidal and binary tables;
* ``posenc.rope``: rotary embeddings, both pair layouts, the complex form;
* ``posenc.scaling``: context extension (PI, NTK-aware, dynamic NTK, YaRN, Llama 3);
* ``posenc.biases``: ALiBi, T5 buckets, Shaw et al.'s clipped offsets;
* ``posenc.analysis``: similarity, offset matrices, wavelengths, decay, precision;
* ``posenc.attention``: plain softmax attention, for demonstrations;
* ``posenc.plotting``: plot helpers for the book;
* ``posenc.nn``: PyTorch modules (imported on demand: ``import posenc.nn``).
"""

from .absolute import binary, integer_encoding, normalized_encoding, sinusoidal, sinusoidal_at, sinusoidal_frequencies
from .analysis import (
    angle_rounding_error,
    critical_dimension,
    effective_scale,
    linear_shift_fit,
    offset_matrix,
    rope_decay_bound,
    rope_score_matrix,
    rope_scores,
    rotations_within_context,
    similarity,
    similarity_by_offset,
    unseen_angle_distance,
    wavelengths,
)
from .attention import (
    attention_weights,
    permutation_equivariance_gap,
    random_projections,
    scaled_dot_product_attention,
    self_attention,
    softmax,
)
from .biases import (
    alibi_bias,
    alibi_slopes,
    relative_positions,
    shaw_relative_indices,
    t5_bucket_matrix,
    t5_relative_bucket,
)
from .rope import (
    LAYOUTS,
    apply_rope,
    apply_rope_complex,
    interleaved_to_half_permutation,
    rope_angles,
    rope_cos_sin,
    rope_inv_freq,
)
from .scaling import (
    SCALING_METHODS,
    dynamic_ntk_factor,
    ntk_scaled_base,
    scaled_inv_freq,
    yarn_attention_factor,
    yarn_correction_dim,
    yarn_correction_range,
    yarn_ramp,
)

__version__ = "0.1.0"

__all__ = [
    # absolute
    "integer_encoding",
    "normalized_encoding",
    "sinusoidal",
    "sinusoidal_at",
    "sinusoidal_frequencies",
    "binary",
    # rope
    "LAYOUTS",
    "rope_inv_freq",
    "rope_angles",
    "rope_cos_sin",
    "apply_rope",
    "apply_rope_complex",
    "interleaved_to_half_permutation",
    # scaling
    "SCALING_METHODS",
    "scaled_inv_freq",
    "ntk_scaled_base",
    "dynamic_ntk_factor",
    "yarn_attention_factor",
    "yarn_correction_dim",
    "yarn_correction_range",
    "yarn_ramp",
    # biases
    "relative_positions",
    "alibi_slopes",
    "alibi_bias",
    "t5_relative_bucket",
    "t5_bucket_matrix",
    "shaw_relative_indices",
    # analysis
    "similarity",
    "similarity_by_offset",
    "offset_matrix",
    "wavelengths",
    "rotations_within_context",
    "critical_dimension",
    "effective_scale",
    "rope_decay_bound",
    "rope_scores",
    "rope_score_matrix",
    "linear_shift_fit",
    "unseen_angle_distance",
    "angle_rounding_error",
    # attention
    "softmax",
    "attention_weights",
    "scaled_dot_product_attention",
    "random_projections",
    "self_attention",
    "permutation_equivariance_gap",
]
