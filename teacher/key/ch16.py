"""The answer key of chapter 16: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_MASK_LOOPS = """
def my_position_ids_from_mask(attention_mask):
    mask = np.asarray(attention_mask)
    rows = mask.reshape(-1, mask.shape[-1])
    out = np.zeros(rows.shape, dtype=np.int64)
    for b in range(rows.shape[0]):
        count = 0
        for j in range(rows.shape[1]):
            if rows[b, j] == 1:
                out[b, j] = count
                count += 1
    return out.reshape(mask.shape)
"""

_MASK_TORCH = """
def my_position_ids_from_mask(attention_mask):
    mask = torch.as_tensor(np.array(attention_mask)).long()
    position_ids = mask.cumsum(-1) - 1
    return position_ids.masked_fill(mask == 0, 0)
"""

_PACKED_LOOP = """
def my_packed_position_ids(lengths):
    out = []
    for n in lengths:
        out.extend(range(int(n)))
    return np.array(out)
"""

_PACKED_TORCH = """
def my_packed_position_ids(lengths):
    lengths = torch.as_tensor(np.array(lengths)).long()
    ends = lengths.cumsum(0)
    index = torch.arange(int(ends[-1]))
    document = torch.repeat_interleave(torch.arange(len(lengths)), lengths)
    return (index - (ends - lengths)[document]).numpy()
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "position_ids_from_mask": (_MASK_LOOPS, _MASK_TORCH),
    "packed_position_ids": (_PACKED_LOOP, _PACKED_TORCH),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch16-predict-continuing": (
        "With the block-diagonal mask and static RoPE nothing changes: within each document every position is "
        "shifted by the same amount (the document's start), and scores depend on differences only (measured: "
        "rounding only).",
        "transformers, given no attention mask, reads the documents from the position ids; 0 .. N-1 reads as "
        "one document, so it builds a plain causal mask and every document after the first sees the ones "
        "before it (the leak measured in the chapter).",
    ),
    "ex-ch16-port-yarn": (
        "Runs posenc.port_check on a port that drops YaRN (factor 4, L = 32768, Qwen3's head): at position 0 the "
        "error is (a - 1) times the key's largest entry, a = 0.1 ln 4 + 1, the missing temperature.",
        "With the temperature put back only the angles differ: 0 at position 0, small at short positions, "
        "and of the order of the key itself at long ones; reports the first range where the error passes "
        "1% of the key's largest entry.",
        "Concludes that a port test needs positions near and past the original length, not only short ones.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch16-predict-continuing": Choices(
        (
            "Positions 0 .. 11 for the whole packed row instead of restarting per document: (a) with the "
            "block-diagonal mask and static RoPE, and (b) in transformers given these position ids and no "
            "attention mask?"
        ),
        (
            Choice(
                "(a) the same outputs, up to rounding; (b) one document: the documents leak",
                (
                    "Within a document every position moves by the document's start, and RoPE's scores depend "
                    "on differences only; transformers reads a new document only where the positions restart."
                ),
                correct=True,
            ),
            Choice(
                "(a) the same outputs, up to rounding; (b) three documents, kept apart",
                (
                    "(a) is right, but transformers finds documents where the positions restart, and 0 .. 11 "
                    "never restarts: it builds one causal mask over the row."
                ),
            ),
            Choice(
                "(a) the later documents change; (b) one document: the documents leak",
                (
                    "The later documents' positions all move by the same amount, their start; under the block "
                    "mask a token meets only its own document, so every score sees the same differences."
                ),
            ),
            Choice(
                "(a) the later documents change; (b) three documents, kept apart",
                (
                    "Both parts miss: scores depend on position differences only, which a common shift keeps, "
                    "and transformers needs restarting positions to tell the documents apart."
                ),
            ),
        ),
    ),
}
