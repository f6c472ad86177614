"""posenc: the tested kernels behind "Positional Encoding, from Integers to YaRN".

Pure functions on NumPy arrays (angles formed in float64; the caller picks the
output dtype), one module per family:

* ``posenc.absolute``: integer, normalised, sinusoidal and binary tables;
* ``posenc.rope``: rotary embeddings, both pair layouts, the complex form;
* ``posenc.scaling``: context extension (PI, NTK-aware, dynamic NTK, YaRN, Llama 3, LongRoPE);
* ``posenc.biases``: ALiBi, T5 buckets, Shaw et al.'s clipped offsets;
* ``posenc.analysis``: similarity, offset matrices, wavelengths, decay, precision;
* ``posenc.attention``: plain softmax attention, for demonstrations;
* ``posenc.positions``, ``posenc.kv_cache``, ``posenc.porting``: positions in practice (left
  padding, packed sequences, a rotary KV cache, checking a port at long positions);
* ``posenc.book``: what only the book needs: explorers, plot helpers,
  numbers for the prose, the Sphinx extension and its assets;
* ``posenc.nn``: PyTorch modules (imported on demand: ``import posenc.nn``).
"""

from .absolute import (
    binary,
    integer_encoding,
    normalized_code_collisions,
    normalized_encoding,
    sinusoidal,
    sinusoidal_at,
    sinusoidal_frequencies,
    sinusoidal_variant,
)
from .analysis import (
    angle_rounding_error,
    critical_dimension,
    effective_scale,
    linear_shift_fit,
    offset_matrix,
    principal_components,
    rope_decay_bound,
    rope_score_matrix,
    rope_scores,
    rotations_within_context,
    score_terms,
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
from .config import attention_temperature_scale, from_config, llama_4_scaling_query_scale, logn_attention_scale
from .kv_cache import CACHE_STORES, POSITION_RULES, RotaryKVCache, cache_score_error
from .models import MODELS
from .multimodal import (
    apply_axial_rope,
    apply_mrope,
    axial_rope_angles,
    mrope_angles,
    mrope_pair_axes,
    mrope_position_ids,
)
from .papers import interpolate_at_length, load_paper_results, perplexity_from_bits, relative_to_length
from .patches import (
    augment_patch_coordinates,
    axial_pair_frequencies,
    grid_rope_angles,
    grid_similarity,
    mixed_pair_frequencies,
    patch_coordinates,
    raster_pair_frequencies,
)
from .porting import port_check
from .positions import (
    document_ids,
    document_ids_from_position_ids,
    document_mask,
    mask_to_bias,
    packed_position_ids,
    padding_mask,
    position_ids_from_mask,
    rope_attention,
)
from .rope import (
    LAYOUTS,
    apply_rope,
    apply_rope_complex,
    interleaved_to_half_permutation,
    p_rope_inv_freq,
    rope_angles,
    rope_cos_sin,
    rope_inv_freq,
)
from .scaling import (
    SCALING_METHODS,
    dynamic_ntk_cached_keys,
    dynamic_ntk_factor,
    longrope_attention_factor,
    ntk_scaled_base,
    scaled_inv_freq,
    yarn_attention_factor,
    yarn_correction_dim,
    yarn_correction_range,
    yarn_matched_betas,
    yarn_ramp,
    yarn_softmax_scale_multiplier,
)

__version__ = "0.4.0"

__all__ = [
    # absolute
    "integer_encoding",
    "normalized_encoding",
    "sinusoidal",
    "sinusoidal_at",
    "sinusoidal_frequencies",
    "sinusoidal_variant",
    "normalized_code_collisions",
    "binary",
    # rope
    "LAYOUTS",
    "rope_inv_freq",
    "rope_angles",
    "rope_cos_sin",
    "apply_rope",
    "apply_rope_complex",
    "interleaved_to_half_permutation",
    "p_rope_inv_freq",
    # multimodal rope
    "mrope_pair_axes",
    "mrope_angles",
    "apply_mrope",
    "mrope_position_ids",
    "axial_rope_angles",
    "apply_axial_rope",
    # rope over a grid of image patches
    "patch_coordinates",
    "augment_patch_coordinates",
    "raster_pair_frequencies",
    "axial_pair_frequencies",
    "mixed_pair_frequencies",
    "grid_rope_angles",
    "grid_similarity",
    # scaling
    "SCALING_METHODS",
    "scaled_inv_freq",
    "ntk_scaled_base",
    "dynamic_ntk_factor",
    "dynamic_ntk_cached_keys",
    "yarn_attention_factor",
    "yarn_correction_dim",
    "yarn_correction_range",
    "yarn_matched_betas",
    "yarn_ramp",
    "yarn_softmax_scale_multiplier",
    "longrope_attention_factor",
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
    "score_terms",
    "principal_components",
    "unseen_angle_distance",
    "angle_rounding_error",
    # config and models
    "from_config",
    "logn_attention_scale",
    "attention_temperature_scale",
    "llama_4_scaling_query_scale",
    "MODELS",
    # quoted results (chapter 15)
    "load_paper_results",
    "interpolate_at_length",
    "relative_to_length",
    "perplexity_from_bits",
    # attention
    "softmax",
    "attention_weights",
    "scaled_dot_product_attention",
    "random_projections",
    "self_attention",
    "permutation_equivariance_gap",
    # positions in practice
    "position_ids_from_mask",
    "padding_mask",
    "packed_position_ids",
    "document_ids",
    "document_ids_from_position_ids",
    "document_mask",
    "mask_to_bias",
    "rope_attention",
    "CACHE_STORES",
    "POSITION_RULES",
    "RotaryKVCache",
    "cache_score_error",
    "port_check",
]
