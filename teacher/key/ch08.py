"""The answer key of chapter 08: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_COMPLEX = """
def my_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    z = x[..., 0::2] + 1j * x[..., 1::2]
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    z = z * np.exp(1j * np.outer(np.asarray(positions, dtype=np.float64), theta))
    out = np.empty(x.shape)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "rope": (_COMPLEX,),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch08-predict-base": (
        "Pair 0's speed does not change; the slowest pair becomes almost ten times slower.",
        "The curve falls roughly like 1 - ln r / ln b: with base 100,000 it is higher at almost every distance "
        "past the first few tokens (98.9% of 11 to 10,000), about 0.17 on average over 5,000 to 10,000 where "
        "base 10,000 is about 0.",
    ),
    "ex-ch08-bfloat16": (
        "Uses angle_rounding_error: 30 of the 64 pairs are off by more than 0.1 rad, all but one (pair 36) "
        "among pairs 0 to 31.",
        "Explains: bfloat16 stores 5000 as 4992 (spacing 32), an error of about 8 theta_i radians, above 0.1 "
        "when theta_i > 0.0125, so the fast (low-numbered) pairs.",
        "Pair 0 is off by 8 radians, more than a whole turn.",
    ),
    "ex-ch08-which-layout": (
        "Rotates a probe with the module, such as the unit vector e_0 at position 1.",
        "Finds which dimension picks up the sine: dimension 4 = d/2, not dimension 1.",
        "Concludes the module uses the half layout (i, i + d/2) by default.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch08-predict-base": Choices(
        "The base goes from 10,000 to 100,000. Which pair keeps its speed, and what happens to the curve of "
        "the score against the distance?",
        (
            Choice(
                "Pair 0 keeps its speed; the curve stays higher at long distances",
                "θ_i = b^(−2i/d), so pair 0 keeps 1 radian per token and the slowest pair becomes almost "
                "ten times slower; the curve falls roughly like 1 − ln r / ln b.",
                correct=True,
            ),
            Choice(
                "The slowest pair keeps its speed; the curve stays higher at long distances",
                "θ_i = b^(−2i/d): pair 0 turns 1 radian per token for every base; the slowest pair becomes "
                "almost ten times slower.",
            ),
            Choice(
                "Pair 0 keeps its speed; the curve falls sooner",
                "Slower pairs stay aligned for longer: the curve falls roughly like 1 − ln r / ln b, higher for "
                "a larger b.",
            ),
            Choice(
                "Every pair slows ten times, so the whole curve stretches ten times to the right",
                "Pair i slows by 10^(2i/d): pair 0 not at all, the slowest pair by almost 10.",
            ),
        ),
    ),
}
