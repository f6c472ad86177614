"""Numbers quoted from papers, and the small computations that compare them.

The book's file ``chapters/data/paper_results.json`` holds values exactly as papers (or
their authors' repositories) print them: each record names its paper, arXiv id, table,
figure or file, the model, the data set, the metric and its units. :func:`load_paper_results`
reads and validates it; :func:`interpolate_at_length` and :func:`relative_to_length` put
curves measured at different lengths on one axis; :func:`perplexity_from_bits` turns the
lab's bits per character into a perplexity per character.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._validation import as_real_array, check_real

__all__ = [
    "METRICS",
    "QuotedSeries",
    "load_paper_results",
    "interpolate_at_length",
    "relative_to_length",
    "perplexity_from_bits",
]

PAPER_RESULTS_SCHEMA = 1

#: Metric -> its units, and what the units mean. Every record's metric and units must be one of these.
METRICS = {
    "perplexity": ("perplexity", "exp of the mean negative log-likelihood per token; lower is better"),
    "passkey accuracy": ("fraction", "share of trials whose passkey was retrieved, 0 to 1; higher is better"),
}

_TEXT_FIELDS = ("id", "paper", "arxiv", "source", "source_kind", "method", "model", "dataset", "metric", "units")
_ARXIV = re.compile(r"^\d{4}\.\d{4,5}(v\d+)?$")
_YEAR = re.compile(r"\((\d{4})\)")


@dataclass(frozen=True)
class QuotedSeries:
    """One quoted row or curve: values at increasing lengths, with where they come from.

    ``values[j]`` is None where the source prints a bound (``>10^2``) or nothing;
    ``printed[j]`` is the text exactly as printed.
    """

    id: str
    paper: str
    arxiv: str
    source: str
    source_kind: str
    method: str
    model: str
    trained_length: int
    extended_length: int | None
    fine_tuned: bool
    dataset: str
    metric: str
    units: str
    lengths: tuple[int, ...]
    values: tuple[float | None, ...]
    printed: tuple[str, ...]
    note: str = ""

    @property
    def citation(self) -> str:
        """The short form of the source, such as ``Peng et al. 2023, arXiv:2309.00071v2, Table 2``."""
        first = self.paper.split(",")[0]
        year = _YEAR.search(self.paper)
        return f"{first} et al. {year.group(1) if year else ''}, arXiv:{self.arxiv}, {self.source}".replace("  ", " ")

    def known(self) -> tuple[np.ndarray, np.ndarray]:
        """The lengths and values where the source prints a number (bounds and gaps left out)."""
        keep = [j for j, v in enumerate(self.values) if v is not None]
        return (np.array([self.lengths[j] for j in keep], dtype=np.int64), np.array([self.values[j] for j in keep]))


def _printed_value(printed: str, units: str) -> float | None:
    text = printed.strip()
    if text == "" or text.startswith(">"):
        return None
    if text.endswith("%"):
        if units != "fraction":
            raise ValueError(f"a percentage {printed!r} needs units 'fraction', got {units!r}")
        return float(text[:-1]) / 100
    return float(text)


def _record(raw: dict, where: str) -> QuotedSeries:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: a record must be a JSON object, got {type(raw).__name__}")
    for key in _TEXT_FIELDS:
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ValueError(f"{where}: field {key!r} must be a non-empty string, got {raw.get(key)!r}")
    rid = raw["id"]
    if not _ARXIV.match(raw["arxiv"]):
        raise ValueError(f"record {rid!r}: arxiv must look like 2309.00071 or 2309.00071v2, got {raw['arxiv']!r}")
    if raw["source_kind"] not in ("paper", "repository"):
        raise ValueError(f"record {rid!r}: source_kind must be 'paper' or 'repository', got {raw['source_kind']!r}")
    if raw["metric"] not in METRICS:
        raise ValueError(f"record {rid!r}: metric must be one of {sorted(METRICS)}, got {raw['metric']!r}")
    if raw["units"] != METRICS[raw["metric"]][0]:
        unit = METRICS[raw["metric"]][0]
        raise ValueError(f"record {rid!r}: a {raw['metric']} is in units {unit!r}, got {raw['units']!r}")
    for key in ("trained_length", "extended_length"):
        value = raw.get(key)
        if key == "extended_length" and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"record {rid!r}: {key} must be a positive integer, got {value!r}")
    if not isinstance(raw.get("fine_tuned"), bool):
        raise ValueError(f"record {rid!r}: fine_tuned must be true or false, got {raw.get('fine_tuned')!r}")
    lengths, values, printed = raw.get("lengths"), raw.get("values"), raw.get("printed")
    if not all(isinstance(x, list) for x in (lengths, values, printed)) or not lengths:
        raise ValueError(f"record {rid!r}: lengths, values and printed must be non-empty lists")
    if not len(lengths) == len(values) == len(printed):
        raise ValueError(
            f"record {rid!r}: lengths, values and printed must have one entry per length, "
            f"got {len(lengths)}, {len(values)} and {len(printed)}"
        )
    if any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in lengths) or any(
        b <= a for a, b in itertools.pairwise(lengths)
    ):
        raise ValueError(f"record {rid!r}: lengths must be increasing positive integers, got {lengths}")
    for length, value, text in zip(lengths, values, printed, strict=True):
        if not isinstance(text, str):
            raise ValueError(f"record {rid!r}: printed entries must be strings, got {text!r}")
        expected = _printed_value(text, raw["units"])
        if value is None or expected is None:
            if value is not None or expected is not None:
                raise ValueError(f"record {rid!r} at length {length}: value {value!r} does not match printed {text!r}")
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(f"record {rid!r} at length {length}: value must be a finite number, got {value!r}")
        if not math.isclose(value, expected, rel_tol=1e-12, abs_tol=1e-12):
            raise ValueError(f"record {rid!r} at length {length}: value {value!r} does not match printed {text!r}")
        if raw["units"] == "fraction" and not 0 <= value <= 1:
            raise ValueError(f"record {rid!r} at length {length}: a fraction must lie in [0, 1], got {value}")
        if raw["units"] == "perplexity" and value < 1:
            raise ValueError(f"record {rid!r} at length {length}: a perplexity is at least 1, got {value}")
    return QuotedSeries(
        id=rid,
        paper=raw["paper"],
        arxiv=raw["arxiv"],
        source=raw["source"],
        source_kind=raw["source_kind"],
        method=raw["method"],
        model=raw["model"],
        trained_length=raw["trained_length"],
        extended_length=raw["extended_length"],
        fine_tuned=raw["fine_tuned"],
        dataset=raw["dataset"],
        metric=raw["metric"],
        units=raw["units"],
        lengths=tuple(lengths),
        values=tuple(None if v is None else float(v) for v in values),
        printed=tuple(printed),
        note=str(raw.get("note", "")),
    )


def load_paper_results(path: str | Path) -> dict[str, QuotedSeries]:
    """Read and validate a quoted-results file; returns id -> ``QuotedSeries``, in file order.

    Every record must name its paper, arXiv id, source (table, figure or file), model,
    data set, metric and units (one of ``posenc.papers.METRICS``); its lengths must increase; each
    value must be finite and equal the number printed beside it, or be null where the
    source prints a bound such as ``>10^2`` or nothing. Anything else raises ``ValueError``
    naming the record.
    """
    path = Path(path)
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("records"), list):
        raise ValueError(f"{path} is not a quoted-results file: expected a JSON object with a list of 'records'")
    if data.get("schema") != PAPER_RESULTS_SCHEMA:
        raise ValueError(f"{path} has schema {data.get('schema')!r}, expected {PAPER_RESULTS_SCHEMA}")
    series: dict[str, QuotedSeries] = {}
    for number, raw in enumerate(data["records"]):
        record = _record(raw, f"{path.name}, record {number}")
        if record.id in series:
            raise ValueError(f"{path.name}: the id {record.id!r} appears twice")
        series[record.id] = record
    return series


def _curve(lengths, values) -> tuple[np.ndarray, np.ndarray]:
    lengths = as_real_array("lengths", lengths, ndim=1)
    values = as_real_array("values", values, ndim=1)
    if lengths.size == 0:
        raise ValueError("lengths must hold at least one length, got an empty array")
    if values.shape != lengths.shape:
        raise ValueError(f"values must have one entry per length: lengths has {lengths.size}, values has {values.size}")
    if np.any(lengths <= 0):
        raise ValueError(f"lengths must be > 0 (they are token counts), got {lengths.min()}")
    if np.any(np.diff(lengths) <= 0):
        raise ValueError(f"lengths must be strictly increasing, got {lengths.tolist()}")
    return lengths, values


def interpolate_at_length(lengths, values, length) -> float:
    """A quoted curve's value at ``length``, interpolated linearly in log(length).

    Papers quote values at lengths that grow geometrically (2k, 4k, 8k, ...); on the
    log-length axis the book plots them on, a straight line between two neighbours is
    ``v0 + (v1 - v0) * ln(length / l0) / ln(l1 / l0)``. At a quoted length this is the
    quoted value. ``length`` outside the quoted range raises ``ValueError``: no
    extrapolation of measurements.
    """
    lengths, values = _curve(lengths, values)
    length = check_real("length", length, positive=True)
    if not lengths[0] <= length <= lengths[-1]:
        raise ValueError(
            f"length must lie within the quoted lengths [{lengths[0]:g}, {lengths[-1]:g}] "
            f"(no extrapolation of measurements), got {length:g}"
        )
    return float(np.interp(np.log(length), np.log(lengths), values))


def relative_to_length(lengths, values, reference_length) -> np.ndarray:
    """Each value divided by the curve's value at ``reference_length`` (interpolated in log length).

    With the training length as reference, curves from different models and data sets
    start at 1 there, so their *change* with length can be drawn on one axis (their
    levels still cannot be compared; see chapter 15).
    """
    lengths, values = _curve(lengths, values)
    reference_length = check_real("reference_length", reference_length, positive=True)
    if not lengths[0] <= reference_length <= lengths[-1]:
        raise ValueError(
            f"reference_length must lie within the quoted lengths [{lengths[0]:g}, {lengths[-1]:g}], "
            f"got {reference_length:g}"
        )
    reference = interpolate_at_length(lengths, values, reference_length)
    if reference == 0:
        raise ValueError(f"the value at reference_length={reference_length} is 0: nothing to divide by")
    return values / reference


def perplexity_from_bits(bits):
    """Perplexity from a cross-entropy in bits per unit (character or token): ``2 ** bits``."""
    array = as_real_array("bits", bits)
    result = np.exp2(array)
    return float(result) if result.ndim == 0 else result
