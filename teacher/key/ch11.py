"""The answer key of chapter 11: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_RAMP_LOOP = """
def my_yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast=32, beta_slow=1):
    length = original_max_position_embeddings
    low = head_dim * math.log(length / (2 * math.pi * beta_fast)) / (2 * math.log(base))
    high = head_dim * math.log(length / (2 * math.pi * beta_slow)) / (2 * math.log(base))
    low, high = max(low, 0.0), min(high, head_dim - 1.0)
    ramp = []
    for i in range(head_dim // 2):
        if i <= low:
            ramp.append(0.0)
        elif i >= high:
            ramp.append(1.0)
        else:
            ramp.append((i - low) / (high - low))
    return np.array(ramp)
"""

_TEMPERATURE_MAX = """
def my_yarn_attention_factor(factor):
    return max(1.0, 0.1 * math.log(factor) + 1.0)
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "yarn_ramp": (_RAMP_LOOP,),
    "yarn_temperature": (_TEMPERATURE_MAX,),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch11-double-l": (
        "The ramp moves towards the slow pairs by d ln 2 / (2 ln b), about 4.8 pairs.",
        "Its width stays the same (rounding can change the plotted width by one pair).",
    ),
    "ex-ch11-llama31": (
        "Counts kept, blended and divided pairs: Llama 3 29, 6 and 29; YaRN 19, 16 and 29.",
        "YaRN's kept pairs (0 to 18) are a subset of Llama 3's (0 to 28): more than 32 turns against more than 4.",
        "Both divide by s the pairs with less than one turn, 35 to 63: Llama 3 by its rule lambda > L, YaRN "
        "because its 1-turn boundary, pair 34.98, rounds up to 35.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch11-double-l": Choices(
        "Llama 2's head (d = 128, b = 10,000, default betas) trained at L = 8192 instead of 4096: where does "
        "the YaRN ramp go?",
        (
            Choice(
                "Towards the fast pairs, by about 4.8 pairs, with the same width",
                "Doubling L doubles every pair's turns, so the pair that makes 32 (or 1) turns is a slower one: "
                "the ramp moves towards the slow end.",
            ),
            Choice(
                "Towards the slow pairs, and about twice as wide",
                "Both boundaries move by the same d ln 2 / (2 ln b) ≈ 4.8 pairs, so the width stays (up to "
                "one pair of rounding).",
            ),
            Choice(
                "Towards the slow pairs, by about 4.8 pairs, with the same width",
                "In i(ν) = d ln(L/(2πν)) / (2 ln b), doubling L adds d ln 2 / (2 ln b) ≈ 4.8 pairs to both boundaries.",
                correct=True,
            ),
            Choice(
                "Nowhere: the betas fix the ramp",
                "The betas fix the ramp in turns within L; in pairs it moves when L changes.",
            ),
        ),
    ),
}
