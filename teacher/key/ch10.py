"""The answer key of chapter 10: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_EXP_LOG = """
def my_ntk_base(base, factor, head_dim):
    return float(base * math.exp(math.log(factor) * head_dim / (head_dim - 2)))
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "ntk_base": (_EXP_LOG,),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch10-predict": (
        "PI: pair 0 at 0.25 rad/token, last pair 4 times slower. NTK: pair 0 unchanged, last pair 4 times slower.",
        "Dynamic NTK at 2L: effective factor 5, pair 0 unchanged, last pair 5 times slower.",
    ),
    "ex-ch10-count": (
        "From 8^(2i/126): more than 2 for i > 21, 42 pairs; more than 4 for i > 42, 21 pairs.",
        "Counts the same 42 and 21 with effective_scale.",
        "PI slows all 64 pairs by 8; NTK-aware slows pairs 0 to 21 by at most 2, pair 0 not at all.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch10-predict": Choices(
        "Llama 2 extended with s = 4: pair 0's speed, and how many times slower the last pair turns, under "
        "PI, NTK-aware scaling and dynamic NTK at n = 2L?",
        (
            Choice(
                "PI 0.25 rad/token, 4×; NTK 1 rad/token, 4×; dynamic 1 rad/token, 4×",
                "Dynamic NTK at n = 2L uses the effective factor s·n/L − (s − 1) = 5, not the configured 4.",
            ),
            Choice(
                "PI 0.25 rad/token, 4×; NTK 1 rad/token, 4×; dynamic 1 rad/token, 5×",
                "Dynamic NTK is NTK-aware scaling with the effective factor s·n/L − (s − 1) = 5 at n = 2L.",
                correct=True,
            ),
            Choice(
                "PI 0.25 rad/token, 4×; NTK 0.25 rad/token, 4×; dynamic 0.5 rad/token, 2×",
                "NTK-aware scaling changes the base, and θ_0 = b^0 = 1 for any base: pair 0 never slows.",
            ),
            Choice(
                "PI 1 rad/token, 4×; NTK 1 rad/token, 4×; dynamic 1 rad/token, 2×",
                "PI divides every position by s, so pair 0 slows too, to 0.25 rad/token.",
            ),
        ),
    ),
}
