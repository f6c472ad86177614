"""The answer key of chapter 01: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_TORCH = """
def my_self_attention(x, w_q, w_k, w_v):
    x, w_q, w_k, w_v = (torch.as_tensor(np.array(a), dtype=torch.float64) for a in (x, w_q, w_k, w_v))
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1) @ v
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "self_attention": (_TORCH,),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch01-predict-mask": (
        "Only a and b change; c and d keep their outputs.",
        "Reason: under the mask a word's output depends on itself and the set of words up to it, and attention "
        "ignores their order: a and b now see different sets, c and d the same ones.",
    ),
    "ex-ch01-float16": (
        "Finds by search the first length with a shared code, n = 2051 (positions 1537 and 1538): float16's "
        "spacing just below 1 is 2^-11, and the step 1/(n-1) must fall a little below it.",
        "Counts the neighbour pairs sharing a code with normalized_code_collisions and plots their share "
        "against n: at n = 4097, 1024 of 4096 (25%), all among positions >= 2048.",
        "Explains why neighbours suffice: rounding never reverses order, so if p < q share a code, every "
        "position between them does too, p and p + 1 included.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch01-predict-mask": Choices(
        "After the swap (causal mask, no positions), which words get a different output vector?",
        (
            Choice(
                "All four: the order of the words changed",
                "c and d see the same set of words as before, and within that set attention ignores order.",
            ),
            Choice(
                "Only a and b",
                "Now a sees b and a instead of itself alone, and b only itself instead of a and b; c and d "
                "see the same sets as before.",
                correct=True,
            ),
            Choice(
                "None: without positions, attention ignores order",
                "Without the mask it would; under the causal mask a and b see different sets of words after the swap.",
            ),
            Choice(
                "Only c and d",
                "c and d see the same sets of words as before; it is a and b whose visible words change.",
            ),
        ),
    ),
}
