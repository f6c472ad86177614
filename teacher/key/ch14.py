"""The answer key of chapter 14: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_WITH_HELPER = """
def my_config_inv_freq(config):
    if config.get("head_dim") is not None:
        head_dim = config["head_dim"]
    else:
        head_dim = config["hidden_size"] // config["num_attention_heads"]
    rotary_dim = int(head_dim * config.get("partial_rotary_factor", 1.0))
    speeds = posenc.rope_inv_freq(rotary_dim, config["rope_theta"])
    scaling = config.get("rope_scaling")
    if scaling is not None and scaling.get("type", scaling.get("rope_type")) == "linear":
        speeds = speeds / scaling["factor"]
    return speeds
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "config_inv_freq": (_WITH_HELPER,),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch14-predict-partial": (
        "48 pairs rotate (96 of 128 dimensions); the slowest has the speed of a 96-wide head, 10000^(-94/96), "
        "so its wavelength is 2 pi 10000^(94/96), about 52,000 tokens.",
        "p-RoPE with p = 0.75 also rotates 48 pairs, but with the 128-wide head's speeds: it keeps the fastest "
        "48 of 64 and stops the slowest 16, so its slowest rotated wavelength is about 5,400 tokens.",
    ),
    "ex-ch14-gpt-oss": (
        "Sliding-window and full-attention layers alternate, 12 each, and both use base 150,000 (no smaller "
        "local base, unlike Gemma 3 and ModernBERT).",
        "YaRN keeps pairs 0-8, blends 9-17 and divides 18-31 by 32, with truncate false or true; truncate only "
        "rounds the ramp's ends (8.09 and 17.40 to 8 and 18), which would change the nine blended speeds by up "
        "to about 76% of the speeds gpt-oss ships with truncate false (about 43% measured against the rounded "
        "speeds).",
        "The attention factor 0.1 ln 32 + 1 = 1.347 multiplies cos and sin, so the logits grow by its square, "
        "1.813; DeepSeek-V3 applies its multiplier through the softmax scale, which also reaches the dimensions"
        " that never rotate.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch14-predict-partial": Number(
        "Phi-4-mini as trained (d = 128, partial_rotary_factor 0.75, base 10,000): the wavelength of its "
        "slowest rotated pair, in tokens, to two significant figures?",
        52_000,
        500,
        right=(
            "The 48 rotated pairs have the speeds of a 96-wide head, so the slowest wavelength is "
            "2π·10,000^(94/96) ≈ 52,000 tokens."
        ),
        wrong=(
            "The 48 rotated pairs have the speeds of a 96-wide head, not those of a 128-wide head's first 48 "
            "pairs: 2π·10,000^(94/96) ≈ 52,000 tokens (p-RoPE's slowest rotated pair is at about 5,400)."
        ),
        unit="tokens",
    ),
}
