"""posenc.papers: the quoted-results file and the functions that compare quoted curves."""

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

import posenc
from posenc import papers

DATA = Path(__file__).resolve().parents[1] / "chapters" / "data" / "paper_results.json"


@pytest.fixture(scope="module")
def series():
    return papers.load_paper_results(DATA)


def test_every_record_names_its_source_and_is_consistent(series):
    assert len(series) >= 30
    for record in series.values():
        for text in (record.paper, record.arxiv, record.source, record.model, record.dataset, record.method):
            assert text.strip()
        assert record.metric in papers.METRICS and record.units == papers.METRICS[record.metric][0]
        assert record.source_kind in ("paper", "repository")
        if record.source_kind == "paper":  # a table or figure of the paper
            assert record.source.startswith(("Table", "Figure"))
        _, values = record.known()
        assert np.all(np.isfinite(values)) and np.all(np.diff(record.lengths) > 0)
        for value, printed in zip(record.values, record.printed, strict=True):
            assert (value is None) == (printed.strip() == "" or printed.startswith(">"))
        assert str(record.arxiv) in record.citation


def test_the_figure_data_rounds_to_the_table(series):
    """Figure 1's data in the authors' repository agrees with Table 2 to the printed digits.

    Rounded, except one entry that the table truncates (Together 7B at 8192: 3.5065, printed 3.50).
    """
    pairs = {
        "yarn-fig1-llama-2-7b-32k": "yarn-t2-7b-together",
        "yarn-fig1-codellama-7b-hf": "yarn-t2-7b-codellama",
        "yarn-fig1-yarn-llama-2-7b-64k": "yarn-t2-7b-yarn-s16",
        "yarn-fig1-yarn-llama-2-7b-128k": "yarn-t2-7b-yarn-s32",
        "yarn-fig1-codellama-13b-hf": "yarn-t2-13b-codellama",
        "yarn-fig1-yarn-llama-2-13b-64k": "yarn-t2-13b-yarn-s16",
        "yarn-fig1-yarn-llama-2-13b-128k": "yarn-t2-13b-yarn-s32",
    }
    checked = 0
    for figure_id, table_id in pairs.items():
        figure, table = series[figure_id], series[table_id]
        for length, value in zip(*table.known(), strict=True):
            quoted = figure.values[figure.lengths.index(length)]
            assert -0.005 - 1e-9 <= quoted - value < 0.01, (figure_id, length)
            checked += 1
        for length, printed in zip(table.lengths, table.printed, strict=True):
            if printed.startswith(">10^"):  # a bound: the curve lies above it
                quoted = figure.values[figure.lengths.index(length)]
                assert quoted is None or quoted > 10 ** int(printed[4:])
    assert checked >= 25


def _write(tmp_path, records):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"schema": 1, "records": records}))
    return path


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: r.pop("source"), "source"),
        (lambda r: r.update(arxiv="yarn"), "arxiv"),
        (lambda r: r.update(units="bits"), "units"),
        (lambda r: r.update(metric="bleu"), "metric"),
        (lambda r: r["values"].__setitem__(0, 3.93), "does not match printed"),
        (lambda r: r["values"].__setitem__(0, None), "does not match printed"),
        (lambda r: r.update(lengths=[4096, 2048, 6144, 8192, 10240]), "increasing"),
        (lambda r: r.update(fine_tuned="yes"), "fine_tuned"),
        (lambda r: r.update(trained_length=0), "trained_length"),
        (lambda r: r["printed"].pop(), "one entry per length"),
    ],
)
def test_a_bad_record_is_refused_naming_what_is_wrong(tmp_path, change, message):
    good = json.loads(DATA.read_text())["records"][0]
    papers.load_paper_results(_write(tmp_path, [good]))  # the unchanged record loads
    bad = copy.deepcopy(good)
    change(bad)
    with pytest.raises(ValueError, match=message):
        papers.load_paper_results(_write(tmp_path, [bad]))


def test_duplicate_ids_and_wrong_schema_are_refused(tmp_path):
    good = json.loads(DATA.read_text())["records"][0]
    with pytest.raises(ValueError, match="twice"):
        papers.load_paper_results(_write(tmp_path, [good, good]))
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"schema": 2, "records": [good]}))
    with pytest.raises(ValueError, match="schema"):
        papers.load_paper_results(path)


def test_interpolation_is_linear_in_log_length():
    lengths, values = [2048, 8192, 32768], [4.0, 3.0, 2.0]
    for length, value in zip(lengths, values, strict=True):  # exact at quoted lengths
        assert posenc.interpolate_at_length(lengths, values, length) == value
    assert posenc.interpolate_at_length(lengths, values, 4096) == pytest.approx(3.5)  # halfway in log
    assert posenc.interpolate_at_length(lengths, values, 16384) == pytest.approx(2.5)
    assert posenc.interpolate_at_length(lengths, values, 6144) == pytest.approx(4 - math.log(3) / math.log(4))
    for outside in (1024, 65536):
        with pytest.raises(ValueError, match="length must lie within"):
            posenc.interpolate_at_length(lengths, values, outside)
    with pytest.raises(ValueError, match="strictly increasing"):
        posenc.interpolate_at_length([8192, 2048], [1.0, 2.0], 4096)
    with pytest.raises(ValueError, match="one entry per length"):
        posenc.interpolate_at_length([2048, 8192], [1.0], 4096)


def test_relative_to_length_and_bits():
    ratio = posenc.relative_to_length([2048, 4096, 8192], [4.0, 2.0, 3.0], 4096)
    np.testing.assert_allclose(ratio, [2.0, 1.0, 1.5])
    with pytest.raises(ValueError, match="reference_length"):
        posenc.relative_to_length([2048, 4096], [4.0, 2.0], 8192)
    assert posenc.perplexity_from_bits(1.0) == 2.0
    np.testing.assert_allclose(posenc.perplexity_from_bits([0.0, 3.0]), [1.0, 8.0])
