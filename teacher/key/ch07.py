"""The answer key of chapter 07: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_LOOP = """
def my_alibi_slopes(n_heads):
    m = 1
    while m * 2 <= n_heads:
        m *= 2
    slopes = [2 ** (-8 * (h + 1) / m) for h in range(m)]
    extra = [2 ** (-8 * (h + 1) / (2 * m)) for h in range(0, 2 * m, 2)]
    return np.array(slopes + extra[: n_heads - m])
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "alibi_slopes": (_LOOP,),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch07-predict-buckets": (
        "Encoder: both past keys in bucket 15, the key 200 ahead in 31; decoder: 31, 31 and 0.",
        "Meaning: the bias cannot tell 200 back from 1000 back (the last bucket starts 91 back in the encoder);"
        " it says only 'far', so the model must rely on content.",
    ),
    "ex-ch07-half-span": (
        "Computes, per head, the number of recent keys holding half of the attention: 2, 3, 6, 12, 23, 45, 89 and 173.",
        "Compares with ln 2 / mu_h: close, slightly shorter for the gentlest head (e^-4 not negligible).",
        "Spans double from head to head, from a couple of keys to a couple of hundred.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch07-predict-buckets": Choices(
        "T5's defaults: which buckets hold the keys 200 back, 1000 back and 200 ahead, in an encoder and in a decoder?",
        (
            Choice(
                "Encoder 14, 15, 31; decoder 30, 31, 0",
                "Past max_distance (128) the buckets stop growing: 200 back and 1000 back share the last bucket.",
            ),
            Choice(
                "Encoder 15, 15, 31; decoder 31, 31, 0",
                "Both past keys are beyond max_distance and share the past's last bucket; a decoder gives "
                "every key ahead the bucket of r = 0.",
                correct=True,
            ),
            Choice(
                "Encoder 15, 15, 31; decoder 31, 31, 31",
                "A decoder has no buckets for keys ahead: every one gets the bucket of r = 0.",
            ),
            Choice(
                "Encoder 31, 31, 15; decoder 31, 31, 0",
                "In the encoder buckets 0 to 15 serve the past and 16 to 31 the future.",
            ),
        ),
    ),
}
