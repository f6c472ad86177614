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

PRELUDE = "import math\nimport numpy as np\nimport torch\nimport posenc\nfrom posenc import sinusoidal\n"


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
        "float64",
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


@pytest.mark.parametrize("case", list(WRONG), ids=list(WRONG))
def test_wrong_answer_fails_with_its_hint(case):
    name, function, source, words = WRONG[case]
    result = check(name, student(source, function), seed=1)
    assert not result.passed and result.status in ("failed", "error"), result
    assert result.hint and words in result.hint, result
    others = [w for c, (n, _, _, w) in WRONG.items() if n == name and w != words]
    assert not any(w in result.hint for w in others), result


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
