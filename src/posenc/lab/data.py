"""The lab's three tasks: lookup (the token k back), passkey retrieval, and character-level text from
Python's own docstrings."""

from __future__ import annotations

import ast
import functools
import hashlib
import sysconfig
import zlib
from pathlib import Path

import torch

from .._validation import check_int

__all__ = [
    "lookup_batch",
    "passkey_batch",
    "passkey_vocab",
    "stdlib_docstrings",
    "CharCorpus",
    "char_corpus",
    "corpus_hash",
]


def lookup_batch(batch_size: int, length: int, vocab: int, k: int, generator: torch.Generator):
    """Random tokens and, as targets, the token ``k`` positions back (-100, ignored, for the first ``k``).

    Solving it needs position: the model must find the token exactly ``k`` places back,
    whatever the tokens are. Returns ``(tokens, targets)``, int64 tensors of shape
    ``(batch_size, length)``.
    """
    tokens = torch.randint(0, vocab, (batch_size, length), generator=generator)
    targets = torch.full_like(tokens, -100)
    targets[:, k:] = tokens[:, :-k]
    return tokens, targets


def passkey_vocab(keys: int) -> int:
    """The passkey task's vocabulary for ``keys`` possible keys: ``keys`` ordinary tokens (filler and
    keys alike), the marker and the question."""
    return check_int("keys", keys, minimum=2) + 2


def passkey_batch(batch_size: int, length: int, keys: int, generator: torch.Generator, depth=None):
    """Passkey retrieval in miniature: filler, a marked key at some depth, and the question at the end.

    The papers' test (Mohtashami and Jaggi 2023; section 4.3.2 of the YaRN paper) hides a
    five-digit number in long filler text and asks for it back at the end. Here a sequence of
    ``length`` tokens holds random tokens from ``0 .. keys - 1``; the marker ``keys`` ("the
    pass key is") at position ``p``, the key (one more token from ``0 .. keys - 1``) at
    ``p + 1``, and the question ``keys + 1`` last. Only the last position is scored, its
    target the key. The key looks like any filler token: only its place, right after the
    marker, singles it out, so the model needs both content (the marker) and position (the
    token after it), found ``length - 2 - p`` tokens back.

    ``depth`` in [0, 1] puts the marker at ``p = round(depth * (length - 3))`` (0: the first
    token; 1: the key just before the question) for the whole batch; None draws ``p``
    uniformly per sequence. Returns ``(tokens, targets, marker_positions)``: int64 tensors
    ``(batch_size, length)``, targets -100 except at the last position, and ``(batch_size,)``.
    """
    batch_size = check_int("batch_size", batch_size, minimum=1)
    keys = check_int("keys", keys, minimum=2)
    length = check_int("length", length, minimum=3)
    tokens = torch.randint(0, keys, (batch_size, length), generator=generator)
    if depth is None:
        where = torch.randint(0, length - 2, (batch_size,), generator=generator)
    else:
        if not 0.0 <= float(depth) <= 1.0:
            raise ValueError(f"depth must be between 0 and 1 (a fraction of the sequence), got {depth!r}")
        where = torch.full((batch_size,), round(float(depth) * (length - 3)), dtype=torch.long)
    rows = torch.arange(batch_size)
    tokens[rows, where] = keys
    tokens[:, -1] = keys + 1
    targets = torch.full_like(tokens, -100)
    targets[:, -1] = tokens[rows, where + 1]
    return tokens, targets, where


def stdlib_docstrings(root: str | Path | None = None) -> list[tuple[str, str]]:
    """Every docstring of the standard library's top-level modules, read with ``ast`` (nothing is imported).

    Returns ``(module file name, docstring)`` pairs in a fixed order: modules sorted by
    name, docstrings in the order ``ast.walk`` visits them.
    """
    root = Path(root or sysconfig.get_paths()["stdlib"])
    pairs = []
    for path in sorted(root.glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    pairs.append((path.name, doc))
    return pairs


class CharCorpus:
    """Character-level text with a fixed vocabulary: printable ASCII, newline, and one "other" token."""

    ALPHABET = "\n" + "".join(chr(c) for c in range(32, 127))

    def __init__(self, train_text: str, valid_text: str):
        self.index = {ch: i for i, ch in enumerate(self.ALPHABET)}
        self.vocab = len(self.ALPHABET) + 1  # the last id stands for any other character
        self.train = self.encode(train_text)
        self.valid = self.encode(valid_text)

    def encode(self, text: str) -> torch.Tensor:
        other = self.vocab - 1
        return torch.tensor([self.index.get(ch, other) for ch in text], dtype=torch.long)

    def decode(self, ids) -> str:
        return "".join(self.ALPHABET[i] if i < len(self.ALPHABET) else "?" for i in ids)

    def batch(self, split: str, batch_size: int, length: int, generator: torch.Generator):
        """``batch_size`` random windows of ``length + 1`` characters: inputs and next-character targets."""
        data = self.train if split == "train" else self.valid
        if data.numel() <= length + 1:
            raise ValueError(f"length {length} is too long for the {split} split ({data.numel()} characters)")
        starts = torch.randint(0, data.numel() - length - 1, (batch_size,), generator=generator)
        windows = torch.stack([data[s : s + length + 1] for s in starts.tolist()])
        return windows[:, :-1], windows[:, 1:]


@functools.cache
def char_corpus(valid_fraction_in_tenths: int = 1) -> CharCorpus:
    """The docstring corpus, split by module: a module goes to validation when ``crc32(name) % 10`` is
    below ``valid_fraction_in_tenths`` (about 10% by default), so no text is shared between splits."""
    check_int("valid_fraction_in_tenths", valid_fraction_in_tenths, minimum=1, maximum=9)
    train, valid = [], []
    for name, doc in stdlib_docstrings():
        (valid if zlib.crc32(name.encode()) % 10 < valid_fraction_in_tenths else train).append(doc)
    return CharCorpus("\n\n".join(train), "\n\n".join(valid))


@functools.cache
def corpus_hash() -> str:
    """SHA-256 (first 16 hex digits) of the text corpus's encoded training and validation splits.

    The corpus is read from this Python's standard library, so another Python version gives
    other text: the hash, recorded with every run, says which text a text model saw."""
    corpus = char_corpus()
    digest = hashlib.sha256()
    for split in (corpus.train, corpus.valid):
        digest.update(split.numpy().astype("<i8").tobytes() + b"\0")
    return digest.hexdigest()[:16]
