"""The answer key of chapter 02: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_EXP_LOG = """
def my_sinusoidal(n_positions, d_model, base=10000.0):
    position = np.arange(n_positions, dtype=np.float64)[:, None]
    div_term = np.exp(np.arange(0, d_model, 2) * (-math.log(base) / d_model))
    table = np.zeros((n_positions, d_model))
    table[:, 0::2] = np.sin(position * div_term)
    table[:, 1::2] = np.cos(position * div_term[: d_model // 2])
    return table
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "sinusoidal": (_EXP_LOG,),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch02-predict-base": (
        "No calm half: all 32 pairs complete a turn within 128 positions, each at least two.",
        "Longest wavelength 2 pi 10^(62/64), about 58 tokens; neighbour ratio 10^(2/64), about 1.07 instead of 1.33.",
    ),
    "ex-ch02-turns": (
        "Counts the pairs with at least one turn within 512 positions (wavelength <= 512): 123 of the 256, "
        "fewer than half.",
        "Longest wavelength 2 pi 10000^(510/512), about 60,611 tokens.",
        "Compares: just short of 2 pi 10000 (about 62,832), since the last exponent is 510/512, not 1.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch02-predict-base": Number(
        "With base 10, how many of the 32 pairs complete at least one full turn within the 128 positions?",
        32,
        0,
        right=(
            "The slowest wavelength is now 2π·10^(62/64), about 58 tokens, so every pair turns at least "
            "twice and there is no calm half."
        ),
        wrong=(
            "The slowest wavelength is now only 2π·10^(62/64), about 58 tokens: all 32 pairs turn at least twice "
            "within 128 positions, so there is no calm half."
        ),
        unit="pairs",
    ),
}
