"""The answer key of chapter 15: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_BISECT = """
import bisect


def my_interpolate_at_length(lengths, values, length):
    lengths = [float(v) for v in lengths]
    j = bisect.bisect_right(lengths, length) - 1
    j = min(j, len(lengths) - 2)
    l0, l1 = lengths[j], lengths[j + 1]
    v0, v1 = float(values[j]), float(values[j + 1])
    return v0 + (v1 - v0) * math.log(length / l0) / math.log(l1 / l0)
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "paper_interpolate": (_BISECT,),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch15-predict": (
        "A prediction for both models with a reason, written before looking.",
        "Table 2: YaRN (s = 16) 7B goes from 2.42 at 65536 to more than 10 at 98304, past its 64k window (s L ="
        " 16 x 4096); YaRN (s = 32) 7B keeps falling to 2.36 at 98304 and is 2.37 at 131072.",
        "Explains: the limit is set by the window the rescaled frequencies cover (s L), not by the length of "
        "the fine-tuning data (64k tokens for both).",
    ),
    "ex-ch15-investigate": (
        "For each Figure 1 curve, finds the longest length with a perplexity below its value at 8192: Together "
        "34816, YaRN (s = 16) 75776 (13B) and 77824 (7B), Code Llama and YaRN (s = 32) 131072.",
        "Compares with the windows: Together's and the s = 16 curves stay below their 8k value a little past "
        "their window and rise beyond it; Code Llama stays below it up to 131072, the last length measured, "
        "with its minimum (81920 and 94208) inside its 100k window; the s = 32 data end at the window.",
        "For the lab (text, bits per character), seed by seed and by chapter 12's margin rule: zero-shot, every "
        "extension is above its 1x value at 4x in all 12 seeds (behind by the rule); fine-tuned, dynamic NTK "
        "(below in 11 of 12 seeds) and LongRoPE (11 of 12) are below it by the rule; YaRN (9 of 12), PI (8 of "
        "12) and NTK-aware (6 of 12) are inconclusive; YaRN with matched betas and the plain model fine-tuned "
        "without a method stay above it in all 12 seeds.",
        "Says what the two sets have in common: a fine-tune at the target length, with a method that fits "
        "it, keeps the longer context from hurting within the extended window; and notes that each lab curve is "
        "relative to the model's own loss at L, which the fine-tune raised, so the lab shows no gain over the "
        "original model at its margin.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch15-predict": Choices(
        "At 98,304 tokens, is each model's perplexity near its value at 65,536, or far above it?",
        (
            Choice(
                "Both far above: neither saw a sequence longer than 64k in fine-tuning",
                "The s = 32 model falls to 2.36: the limit is the window s·L its rescaled frequencies cover, not "
                "the length of the fine-tuning data.",
            ),
            Choice(
                "The s = 16 model far above (more than 10), the s = 32 model near (2.36)",
                "Past s·L = 16 × 4096 = 65,536 the s = 16 model's slow pairs reach angles it never saw; "
                "the s = 32 model's window reaches 131,072.",
                correct=True,
            ),
            Choice(
                "The s = 32 model far above, the s = 16 model near",
                "Reversed: the s = 16 model's window ends at 16 × 4096 = 65,536 tokens, and it goes above 10.",
            ),
            Choice(
                "Both near: YaRN keeps the perplexity flat at any length",
                "Only within its window: the s = 16 model goes from 2.42 at 65,536 to more than 10 at 98,304.",
            ),
        ),
    ),
}
