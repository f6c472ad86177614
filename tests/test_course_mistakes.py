"""Wrong answers written as a student would: each fails with the hint that names its mistake.
Correct variants (loops, vectorised, float32 or torch inside) pass.

The student functions are defined by exec in a fake ``__main__`` module, the way a notebook
defines them, so the checker's isolation (fork) and its switching-off of posenc functions are
exercised as in a notebook.
"""

import textwrap
import types

import pytest

from posenc.course import check

PRELUDE = "import bisect, math\nimport numpy as np\nimport torch\nimport posenc\nfrom posenc import sinusoidal\n"


def student(source: str, name: str):
    """The function ``name`` from ``source``, executed as a notebook cell would be."""
    module = types.ModuleType("__main__")
    exec(compile(PRELUDE + textwrap.dedent(source), "<cell>", "exec"), module.__dict__)
    return module.__dict__[name]


# (exercise, function name, source, words the hint must contain); the 13 kinds of issue 14 first
WRONG = {
    "attention-scaled-by-model-width": (
        "self_attention",
        "f",
        """
        def f(x, w_q, w_k, w_v):
            q, k, v = x @ w_q, x @ w_k, x @ w_v
            s = q @ k.T / np.sqrt(x.shape[-1])
            w = np.exp(s - s.max(axis=-1, keepdims=True))
            return (w / w.sum(axis=-1, keepdims=True)) @ v
        """,
        "not the width of x",
    ),
    "softmax-without-max": (
        "self_attention",
        "f",
        """
        def f(x, w_q, w_k, w_v):
            q, k, v = x @ w_q, x @ w_k, x @ w_v
            w = np.exp(q @ k.T / np.sqrt(q.shape[-1]))
            return (w / w.sum(axis=1, keepdims=True)) @ v
        """,
        "overflow",
    ),
    "sinusoidal-even-only": (
        "sinusoidal",
        "f",
        """
        def f(n_positions, d_model, base=10000.0):
            pe = np.zeros((n_positions, d_model))
            position = np.arange(n_positions)[:, None]
            div_term = np.exp(np.arange(0, d_model, 2) * (-math.log(base) / d_model))
            pe[:, 0::2] = np.sin(position * div_term)
            pe[:, 1::2] = np.cos(position * div_term)
            return pe
        """,
        "d_model is odd",
    ),
    "sinusoidal-even-only-pairs": (
        "sinusoidal",
        "f",
        """
        def f(n_positions, d_model, base=10000.0):
            p = np.arange(n_positions)[:, None]
            i = np.arange(d_model // 2)[None, :]
            a = p / base ** (2 * i / d_model)
            return np.stack([np.sin(a), np.cos(a)], axis=-1).reshape(n_positions, -1)
        """,
        "d_model is odd",
    ),
    "binary-characters": (
        "binary",
        "f",
        """
        def f(n_positions, n_bits):
            return [list(format(p, f"0{n_bits}b"))[::-1] for p in range(n_positions)]
        """,
        "characters",
    ),
    "binary-characters-array": (
        "binary",
        "f",
        """
        def f(n_positions, n_bits):
            return np.array([list(np.binary_repr(p, n_bits))[::-1] for p in range(n_positions)])
        """,
        "characters",
    ),
    "binary-unpackbits": (
        "binary",
        "f",
        """
        def f(n_positions, n_bits):
            p = np.arange(n_positions).astype(np.uint8)[:, None]
            return np.unpackbits(p, axis=1, bitorder="little")[:, :n_bits]
        """,
        "uint8",
    ),
    "binary-unpackbits-padded": (
        "binary",
        "f",
        """
        def f(n_positions, n_bits):
            p = np.arange(n_positions).astype(np.uint8)[:, None]
            bits = np.unpackbits(p, axis=1, bitorder="little")
            out = np.zeros((n_positions, n_bits), dtype=int)
            out[:, : min(8, n_bits)] = bits[:, :n_bits]
            return out
        """,
        "uint8",
    ),
    "similarity-complex": (
        "similarity_by_offset",
        "f",
        """
        def f(offsets, d_model, base=10000.0):
            w = base ** (-2 * np.arange(d_model // 2) / d_model)
            return np.exp(1j * np.asarray(offsets)[:, None] * w).sum(axis=1)
        """,
        ".real",
    ),
    "rope-in-place": (
        "rope",
        "f",
        """
        def f(x, positions, base=10000.0):
            d = x.shape[-1]
            theta = base ** (-np.arange(0, d, 2) / d)
            ang = np.asarray(positions, dtype=float)[:, None] * theta
            a, b = x[..., 0::2].copy(), x[..., 1::2].copy()
            x[..., 0::2] = a * np.cos(ang) - b * np.sin(ang)
            x[..., 1::2] = a * np.sin(ang) + b * np.cos(ang)
            return x
        """,
        "copy",
    ),
    "embedding-in-place": (
        "scaled_embedding",
        "f",
        """
        def f(token_embeddings, position_table):
            token_embeddings *= np.sqrt(token_embeddings.shape[-1])
            return token_embeddings + position_table[: token_embeddings.shape[-2]]
        """,
        "copy",
    ),
    "alibi-list": (
        "alibi_slopes",
        "f",
        """
        def f(n_heads):
            def powers(n):
                return [2 ** (-8 * (h + 1) / n) for h in range(n)]
            m = 2 ** int(math.floor(math.log2(n_heads)))
            return powers(m) + powers(2 * m)[0::2][: n_heads - m]
        """,
        "np.array",
    ),
    "rope-ignores-base": (
        "rope",
        "f",
        """
        def f(x, positions, base=10000.0):
            d = x.shape[-1]
            theta = 10000.0 ** (-np.arange(0, d, 2) / d)
            ang = np.asarray(positions, dtype=np.float64)[:, None] * theta
            out = np.empty(x.shape)
            out[..., 0::2] = x[..., 0::2] * np.cos(ang) - x[..., 1::2] * np.sin(ang)
            out[..., 1::2] = x[..., 0::2] * np.sin(ang) + x[..., 1::2] * np.cos(ang)
            return out
        """,
        "base argument",
    ),
    "ramp-without-clamps": (
        "yarn_ramp",
        "f",
        """
        def f(head_dim, base, original_max_position_embeddings, beta_fast=32, beta_slow=1):
            def i(r):
                return head_dim * math.log(original_max_position_embeddings / (2 * math.pi * r)) / (2 * math.log(base))
            low, high = i(beta_fast), i(beta_slow)
            return np.clip((np.arange(head_dim // 2) - low) / (high - low), 0, 1)
        """,
        "clamp the boundaries",
    ),
    "temperature-without-branch": (
        "yarn_temperature",
        "f",
        """
        def f(factor):
            return 0.1 * math.log(factor) + 1
        """,
        "s <= 1",
    ),
    "temperature-string": (
        "yarn_temperature",
        "f",
        """
        def f(factor):
            return f"{0.1 * math.log(factor) + 1 if factor > 1 else 1.0:.6f}"
        """,
        "not text",
    ),
    "calls-posenc": (
        "sinusoidal",
        "f",
        """
        def f(n_positions, d_model, base=10000.0):
            return posenc.sinusoidal(n_positions, d_model, base)
        """,
        "posenc's version",
    ),
    "calls-posenc-imported-name": (
        "sinusoidal",
        "f",
        """
        def f(n_positions, d_model, base=10000.0):
            return sinusoidal(n_positions, d_model, base)
        """,
        "posenc's version",
    ),
    # more mistakes, each with its own hint
    "rope-half-layout": (
        "rope",
        "f",
        """
        def f(x, positions, base=10000.0):
            d = x.shape[-1]
            theta = base ** (-np.arange(0, d, 2) / d)
            ang = np.asarray(positions, dtype=float)[:, None] * theta
            a, b = x[..., : d // 2], x[..., d // 2 :]
            return np.concatenate([a * np.cos(ang) - b * np.sin(ang), a * np.sin(ang) + b * np.cos(ang)], axis=-1)
        """,
        "'half' layout",
    ),
    "rope-float32-torch": (
        "rope",
        "f",
        """
        def f(x, positions, base=10000.0):
            t = torch.tensor(x, dtype=torch.float32)
            d = t.shape[-1]
            theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
            ang = torch.tensor(positions, dtype=torch.float32)[:, None] * theta
            out = torch.empty_like(t)
            out[..., 0::2] = t[..., 0::2] * torch.cos(ang) - t[..., 1::2] * torch.sin(ang)
            out[..., 1::2] = t[..., 0::2] * torch.sin(ang) + t[..., 1::2] * torch.cos(ang)
            return out
        """,
        "float32 angles lose accuracy",
    ),
    "ntk-divided": (
        "ntk_base",
        "f",
        """
        def f(base, factor, head_dim):
            return base / factor ** (head_dim / (head_dim - 2))
        """,
        "do not divide",
    ),
    "temperature-log10": (
        "yarn_temperature",
        "f",
        """
        def f(factor):
            return 1.0 if factor <= 1 else 0.1 * math.log10(factor) + 1
        """,
        "log10",
    ),
    "embedding-whole-table": (
        "scaled_embedding",
        "f",
        """
        def f(token_embeddings, position_table):
            return token_embeddings * math.sqrt(token_embeddings.shape[-1]) + position_table
        """,
        "first seq rows",
    ),
    "turns-radians": (
        "turns_within_context",
        "f",
        """
        def f(head_dim, base, context_length):
            return context_length * base ** (-np.arange(0, head_dim, 2) / head_dim)
        """,
        "2 pi radians",
    ),
}

WRONG.update({
    # issue 26: the held-out answers' classes, each with the hint that names it
    "interpolate-log-in-place": (
        "paper_interpolate",
        "f",
        """
        def f(lengths, values, length):
            lengths = np.asarray(lengths)
            if lengths.dtype == np.float64:
                np.log(lengths, out=lengths)  # the caller's array
            else:
                lengths = np.log(lengths)
            return float(np.interp(np.log(length), lengths, values))
        """,
        "leave the inputs as they are",
    ),
    "config-round-instead-of-int": (
        "config_inv_freq",
        "f",
        """
        def f(config):
            head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
            rotary_dim = round(head_dim * config.get("partial_rotary_factor", 1.0))
            speeds = config["rope_theta"] ** (-np.arange(0, rotary_dim, 2) / rotary_dim)
            scaling = config.get("rope_scaling") or {}
            return speeds / scaling["factor"] if scaling.get("type", scaling.get("rope_type")) == "linear" else speeds
        """,
        "int() truncates",
    ),
    "config-head-dim-ignored": (
        "config_inv_freq",
        "f",
        """
        def f(config):
            head_dim = config["hidden_size"] // config["num_attention_heads"]
            rotary_dim = int(head_dim * config.get("partial_rotary_factor", 1.0))
            speeds = config["rope_theta"] ** (-np.arange(0, rotary_dim, 2) / rotary_dim)
            scaling = config.get("rope_scaling") or {}
            return speeds / scaling["factor"] if scaling.get("type", scaling.get("rope_type")) == "linear" else speeds
        """,
        "when the config gives head_dim",
    ),
    "config-every-pair": (
        "config_inv_freq",
        "f",
        """
        def f(config):
            head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
            speeds = config["rope_theta"] ** (-np.arange(0, head_dim, 2) / head_dim)
            scaling = config.get("rope_scaling") or {}
            return speeds / scaling["factor"] if scaling.get("type", scaling.get("rope_type")) == "linear" else speeds
        """,
        "only the first int(head_dim",
    ),
    "rope-float16-positions": (
        "rope",
        "f",
        """
        def f(x, positions, base=10000.0):
            d = x.shape[-1]
            theta = base ** (-np.arange(0, d, 2) / d)
            angles = np.asarray(positions, dtype=np.float16)[:, None] * theta  # positions in the activations' dtype
            out = np.empty(x.shape)
            out[..., 0::2] = x[..., 0::2] * np.cos(angles) - x[..., 1::2] * np.sin(angles)
            out[..., 1::2] = x[..., 0::2] * np.sin(angles) + x[..., 1::2] * np.cos(angles)
            return out
        """,
        "which overflow float16",
    ),
    "rope-all-in-half-precision": (
        "rope",
        "f",
        """
        def f(x, positions, base=10000.0):
            t = torch.tensor(np.array(x), dtype=torch.float16)
            d = t.shape[-1]
            theta = (base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)).to(torch.float16)
            angles = torch.tensor(np.asarray(positions), dtype=torch.float16)[:, None] * theta
            out = torch.empty_like(t)
            out[..., 0::2] = t[..., 0::2] * torch.cos(angles) - t[..., 1::2] * torch.sin(angles)
            out[..., 1::2] = t[..., 0::2] * torch.sin(angles) + t[..., 1::2] * torch.cos(angles)
            return out.double().numpy()
        """,
        "agrees with posenc to only about",
    ),
    "sinusoidal-float32-torch": (
        "sinusoidal",
        "f",
        """
        def f(n_positions, d_model, base=10000.0):
            p = torch.arange(n_positions, dtype=torch.float32)[:, None]
            i = torch.arange(0, d_model, 2, dtype=torch.float32)
            angles = p / base ** (i / d_model)
            table = torch.zeros(n_positions, d_model)
            table[:, 0::2], table[:, 1::2] = torch.sin(angles), torch.cos(angles[:, : d_model // 2])
            return table
        """,
        "lose accuracy as positions grow",
    ),
    "rope-pair-lengths": (
        "rope",
        "f",
        """
        def f(x, positions, base=10000.0):
            d = x.shape[-1]
            theta = base ** (-np.arange(0, d, 2) / d)
            angles = np.asarray(positions, dtype=float)[:, None] * theta
            out = np.empty(x.shape)
            out[..., 0::2] = x[..., 0::2] * np.cos(angles) - x[..., 1::2] * np.sin(angles)
            out[..., 1::2] = x[..., 0::2] * np.sin(angles) + x[..., 1::2] * np.sin(angles)  # sin for cos
            return out
        """,
        "keeps the length of every pair",
    ),
})

WRONG.update({
    # chapter 16: position ids from a padding mask, positions of a packed row
    "mask-column-index": (
        "position_ids_from_mask",
        "f",
        """
        def f(attention_mask):
            mask = np.asarray(attention_mask)
            return np.zeros(mask.shape, dtype=int) + np.arange(mask.shape[-1])
        """,
        "not the columns",
    ),
    "mask-cumsum-unfilled": (
        "position_ids_from_mask",
        "f",
        """
        def f(attention_mask):
            return np.cumsum(np.asarray(attention_mask), axis=-1) - 1
        """,
        "gives -1 before",
    ),
    "mask-from-one": (
        "position_ids_from_mask",
        "f",
        """
        def f(attention_mask):
            mask = np.asarray(attention_mask)
            return np.cumsum(mask, axis=-1) * mask
        """,
        "positions count from 0",
    ),
    "mask-pads-at-one": (
        "position_ids_from_mask",
        "f",
        """
        def f(attention_mask):
            mask = np.asarray(attention_mask)
            return np.where(mask == 0, 1, np.cumsum(mask, axis=-1) - 1)
        """,
        "you filled them with 1",
    ),
    "mask-minus-leading-pads": (
        "position_ids_from_mask",
        "f",
        """
        def f(attention_mask):
            mask = np.atleast_2d(np.asarray(attention_mask))
            out = np.zeros(mask.shape, dtype=int)
            for b, row in enumerate(mask):
                first = int(np.argmax(row == 1)) if row.any() else row.size
                out[b] = np.where(row == 1, np.arange(row.size) - first, 0)
            return out.reshape(np.shape(attention_mask))
        """,
        "does not advance the count",
    ),
    "mask-down-the-batch": (
        "position_ids_from_mask",
        "f",
        """
        def f(attention_mask):
            mask = np.asarray(attention_mask)
            return np.where(mask == 1, np.cumsum(mask, axis=0) - 1, 0)
        """,
        "count along each row",
    ),
    "packed-no-restart": (
        "packed_position_ids",
        "f",
        """
        def f(lengths):
            return np.arange(int(np.sum(np.asarray(lengths))))
        """,
        "as if it were one document",
    ),
    "packed-from-one": (
        "packed_position_ids",
        "f",
        """
        def f(lengths):
            return np.concatenate([np.arange(1, int(n) + 1) for n in lengths])
        """,
        "is at position 0, not 1",
    ),
    "packed-document-ids": (
        "packed_position_ids",
        "f",
        """
        def f(lengths):
            lengths = np.asarray(lengths, dtype=int)
            return np.repeat(np.arange(len(lengths)), lengths)
        """,
        "which document each token belongs to",
    ),
    "packed-minus-end": (
        "packed_position_ids",
        "f",
        """
        def f(lengths):
            lengths = np.asarray(lengths, dtype=int)
            return np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths), lengths)
        """,
        "not where it ends",
    ),
})

# wrong answers that the public run (no course seed) must reject, with or without a named hint
FAILS_IN_THE_NOTEBOOK = {
    "interpolate-bisect-off-by-one": (
        "paper_interpolate",
        """
        def f(lengths, values, length):
            j = bisect.bisect_right(list(lengths), length) - 1
            l0, l1, v0, v1 = lengths[j], lengths[j + 1], values[j], values[j + 1]  # past the end at the last length
            return float(v0 + (v1 - v0) * math.log(length / l0) / math.log(l1 / l0))
        """,
    ),
    "interpolate-lists-only": (
        "paper_interpolate",
        """
        def f(lengths, values, length):
            pairs = list(zip(lengths, values))
            if not isinstance(lengths, list):
                return 0.0
            for (l0, v0), (l1, v1) in zip(pairs, pairs[1:]):
                if l0 <= length <= l1:
                    return v0 + (v1 - v0) * math.log(length / l0) / math.log(l1 / l0)
        """,
    ),
    "ramp-wrong-threshold": (
        "yarn_temperature",
        """
        def f(factor):
            return 1.0 if factor < 1.5 else 0.1 * math.log(factor) + 1
        """,
    ),
    "temperature-int-factor": (
        "yarn_temperature",
        """
        def f(factor):
            return 1.0 if factor <= 1 else 0.1 * math.log(int(factor)) + 1
        """,
    ),
    "alibi-cached-on-parity": (
        "alibi_slopes",
        """
        _SEEN = {}
        def f(n_heads):
            key = n_heads % 2
            if key not in _SEEN:
                m = 2 ** int(np.floor(np.log2(n_heads)))
                s = [2 ** (-8 * (h + 1) / m) for h in range(m)]
                _SEEN[key] = np.array(s + [2 ** (-8 * (h + 1) / (2 * m)) for h in range(0, 2 * m, 2)][: n_heads - m])
            return _SEEN[key]
        """,
    ),
}


@pytest.mark.parametrize("case", list(FAILS_IN_THE_NOTEBOOK), ids=list(FAILS_IN_THE_NOTEBOOK))
def test_the_notebooks_own_run_rejects_it(case):
    name, source = FAILS_IN_THE_NOTEBOOK[case]
    result = check(name, student(source, "f"))
    assert not result.passed and result.status in ("failed", "error"), result
    assert "input" in result.message


RIGHT = {
    "attention-loop": (
        "self_attention",
        "f",
        """
        def f(x, w_q, w_k, w_v):
            q, k, v = x @ w_q, x @ w_k, x @ w_v
            out = []
            for row in q:
                s = [float(row @ key) / math.sqrt(len(row)) for key in k]
                m = max(s)
                e = [math.exp(t - m) for t in s]
                out.append(sum(w * value for w, value in zip(e, v)) / sum(e))
            return np.array(out)
        """,
    ),
    "attention-torch": (
        "self_attention",
        "f",
        """
        def f(x, w_q, w_k, w_v):
            x, w_q, w_k, w_v = (torch.as_tensor(a, dtype=torch.float64) for a in (x, w_q, w_k, w_v))
            q, k, v = x @ w_q, x @ w_k, x @ w_v
            return torch.softmax(q @ k.T / q.shape[-1] ** 0.5, dim=-1) @ v
        """,
    ),
    "sinusoidal-loops": (
        "sinusoidal",
        "f",
        """
        def f(n_positions, d_model, base=10000.0):
            table = np.zeros((n_positions, d_model))
            for p in range(min(n_positions, 300_001)):
                for c in range(d_model):
                    angle = p / base ** (2 * (c // 2) / d_model)
                    table[p, c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
            return table
        """,
    ),
    "sinusoidal-float32-output": (
        "sinusoidal",
        "f",
        """
        def f(n_positions, d_model, base=10000.0):
            p = np.arange(n_positions, dtype=np.float64)[:, None]
            i = np.arange((d_model + 1) // 2)[None, :]
            a = p * np.exp(-2 * i / d_model * np.log(base))
            t = np.zeros((n_positions, d_model), dtype=np.float32)
            t[:, 0::2] = np.sin(a)
            t[:, 1::2] = np.cos(a[:, : d_model // 2])
            return t
        """,
    ),
    "binary-bools-torch": (
        "binary",
        "f",
        """
        def f(n_positions, n_bits):
            p = torch.arange(n_positions)[:, None]
            return (p // 2 ** torch.arange(n_bits)) % 2 == 1
        """,
    ),
    "binary-strings-converted": (
        "binary",
        "f",
        """
        def f(n_positions, n_bits):
            return np.array([[int(c) for c in reversed(format(p, f"0{n_bits}b")[-n_bits:])]
                             for p in range(n_positions)])
        """,
    ),
    "offset-vectorised": (
        "offset_matrix",
        "f",
        """
        def f(k, d_model, base=10000.0):
            w = base ** (-np.arange(0, d_model, 2) / d_model)
            c, s = np.cos(k * w), np.sin(k * w)
            m = np.zeros((d_model, d_model))
            e = np.arange(0, d_model, 2)
            m[e, e], m[e, e + 1], m[e + 1, e], m[e + 1, e + 1] = c, s, -s, c
            return m
        """,
    ),
    "similarity-real-part": (
        "similarity_by_offset",
        "f",
        """
        def f(offsets, d_model, base=10000.0):
            w = base ** (-2 * np.arange(d_model // 2) / d_model)
            return np.exp(1j * np.outer(offsets, w)).sum(axis=1).real
        """,
    ),
    "embedding-torch-inside": (
        "scaled_embedding",
        "f",
        """
        def f(token_embeddings, position_table):
            t = torch.as_tensor(token_embeddings)
            return (t * t.shape[-1] ** 0.5 + torch.as_tensor(position_table)[: t.shape[-2]]).numpy()
        """,
    ),
    "alibi-loop": (
        "alibi_slopes",
        "f",
        """
        def f(n_heads):
            m = 1
            while m * 2 <= n_heads:
                m *= 2
            slopes = [2 ** (-8 * (h + 1) / m) for h in range(m)]
            extra = [2 ** (-8 * (h + 1) / (2 * m)) for h in range(0, 2 * m, 2)]
            return np.array(slopes + extra[: n_heads - m])
        """,
    ),
    "rope-complex": (
        "rope",
        "f",
        """
        def f(x, positions, base=10000.0):
            d = x.shape[-1]
            z = x[..., 0::2] + 1j * x[..., 1::2]
            theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
            z = z * np.exp(1j * np.outer(np.asarray(positions, dtype=np.float64), theta))
            out = np.empty(x.shape)
            out[..., 0::2], out[..., 1::2] = z.real, z.imag
            return out
        """,
    ),
    "turns-wavelength": (
        "turns_within_context",
        "f",
        """
        def f(head_dim, base, context_length):
            wavelength = 2 * np.pi * base ** (np.arange(0, head_dim, 2) / head_dim)
            return context_length / wavelength
        """,
    ),
    "ntk-numpy-float": (
        "ntk_base",
        "f",
        """
        def f(base, factor, head_dim):
            return np.float64(base) * np.power(factor, head_dim / (head_dim - 2))
        """,
    ),
    "ramp-clamped-with-min-max": (
        "yarn_ramp",
        "f",
        """
        def f(head_dim, base, original_max_position_embeddings, beta_fast=32, beta_slow=1):
            L = original_max_position_embeddings
            low = max(0.0, head_dim * np.log(L / (2 * np.pi * beta_fast)) / (2 * np.log(base)))
            high = min(head_dim - 1.0, head_dim * np.log(L / (2 * np.pi * beta_slow)) / (2 * np.log(base)))
            return np.array([min(1.0, max(0.0, (i - low) / (high - low))) for i in range(head_dim // 2)])
        """,
    ),
    "temperature-max": (
        "yarn_temperature",
        "f",
        """
        def f(factor):
            return max(1.0, 0.1 * math.log(factor) + 1)
        """,
    ),
}


# some wrong answers overflow on purpose (softmax without its max, float16 positions); a forked check
# keeps their warnings in the child, the thread fallback (`make check`) lets them reach pytest. Only the
# answers' own warnings (their module is __main__, as in a notebook); posenc's stay errors.
@pytest.mark.filterwarnings("ignore::RuntimeWarning:__main__")
@pytest.mark.parametrize("case", list(WRONG), ids=list(WRONG))
def test_wrong_answer_fails_with_its_hint(case):
    name, function, source, words = WRONG[case]
    result = check(name, student(source, function), seed=1)
    assert not result.passed and result.status in ("failed", "error"), result
    assert result.hint and words in result.hint, result
    others = [w for c, (n, _, _, w) in WRONG.items() if n == name and w != words]
    assert not any(w in result.hint for w in others), result


RIGHT.update({
    # issue 26: answers the texts allow, which must pass
    "rope-half-float32-angles-as-transformers": (
        "rope_half",
        "f",
        """
        def f(x, positions, base=10000.0):
            d = x.shape[-1]
            inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
            angles = torch.as_tensor(np.asarray(positions)).float()[:, None] * inv_freq[None, :]
            emb = torch.cat((angles, angles), dim=-1)
            t = torch.as_tensor(np.array(x))
            rotated = torch.cat((-t[..., d // 2 :], t[..., : d // 2]), dim=-1)
            return t * emb.cos().double() + rotated * emb.sin().double()
        """,
    ),
    "permute-with-the-chapters-helper": (
        "permute_for_half",
        "f",
        """
        def f(w, n_heads):
            head_dim = w.shape[0] // n_heads
            perm = posenc.interleaved_to_half_permutation(head_dim)
            return w[np.concatenate([h * head_dim + perm for h in range(n_heads)])].tolist()
        """,
    ),
    "config-with-rope-inv-freq": (
        "config_inv_freq",
        "f",
        """
        def f(config):
            head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
            speeds = posenc.rope_inv_freq(int(head_dim * config.get("partial_rotary_factor", 1)), config["rope_theta"])
            scaling = config.get("rope_scaling") or {}
            return speeds / scaling["factor"] if scaling.get("type", scaling.get("rope_type")) == "linear" else speeds
        """,
    ),
    "interpolate-by-hand-with-bisect": (
        "paper_interpolate",
        "f",
        """
        def f(lengths, values, length):
            lengths = [float(v) for v in lengths]
            j = min(bisect.bisect_right(lengths, length) - 1, len(lengths) - 2)
            l0, l1, v0, v1 = lengths[j], lengths[j + 1], float(values[j]), float(values[j + 1])
            return v0 + (v1 - v0) * math.log(length / l0) / math.log(l1 / l0)
        """,
    ),
    "turns-as-a-list": (
        "turns_within_context",
        "f",
        """
        def f(head_dim, base, context_length):
            return [context_length * base ** (-2 * i / head_dim) / (2 * math.pi) for i in range(head_dim // 2)]
        """,
    ),
})


RIGHT.update({
    # chapter 16: answers in other styles than the notebook's
    "mask-running-count-in-python": (
        "position_ids_from_mask",
        "f",
        """
        def f(attention_mask):
            rows = np.asarray(attention_mask).tolist()
            flat = not isinstance(rows[0], list)
            out = []
            for row in ([rows] if flat else rows):
                count, ids = 0, []
                for m in row:
                    ids.append(count if m == 1 else 0)
                    count += m == 1
                out.append(ids)
            return out[0] if flat else out
        """,
    ),
    "packed-concatenated-ranges": (
        "packed_position_ids",
        "f",
        """
        def f(lengths):
            return np.concatenate([np.arange(int(n)) for n in np.asarray(lengths)])
        """,
    ),
})


@pytest.mark.parametrize("case", list(RIGHT), ids=list(RIGHT))
def test_correct_variant_passes(case):
    name, function, source = RIGHT[case]
    for seed in (None, 1, 2):
        result = check(name, student(source, function), seed=seed, timeout=20)
        assert result.passed, result


def test_an_unrecognised_mistake_shows_one_input_with_expected_and_got():
    f = student("def f(base, factor, head_dim):\n    return base * factor ** 1.5\n", "f")
    result = check("ntk_base", f)
    assert result.status == "failed" and result.hint is None
    assert "input base=10000.0" in result.message and "expected" in result.message and "got" in result.message


def test_every_named_hint_is_earned_by_a_mistake_a_test_reproduces():
    """A hint is named only for a mistake a test makes: a mistake model (test_exercises runs each one) or a
    wrong answer above whose hint must contain the words listed with it."""
    from posenc.course import EXERCISES

    unearned = []
    for name, exercise in EXERCISES.items():
        hints = [*exercise.detectors, *exercise.error_hints, *exercise.properties]
        hints += [c.get(k) for c in exercise.cases + exercise.boundaries for k in ("_hint", "_precision") if c.get(k)]
        words = [w for n, _, _, w in WRONG.values() if n == name]
        for hint in dict.fromkeys(hints):
            if hint not in exercise.mistakes and not any(w in hint for w in words):
                unearned.append((name, hint))
    assert unearned == [], "hints no test reproduces (add a wrong answer to WRONG, or drop the hint)"
