"""The benchmark script runs (on tiny shapes) and reports its ratios; no timing is asserted here."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_kernel_benchmark_runs_and_reports(tmp_path):
    out = tmp_path / "bench.json"
    for layout in ("half", "interleaved"):
        result = subprocess.run(
            [sys.executable, "benchmarks/bench_kernels.py", "--quick", "--layout", layout, "--json", str(out)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=300,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert "speed-up (median, min)" in result.stdout
        report = json.loads(out.read_text())
        assert set(report["results"]) >= {"transformers apply_rotary_pos_emb", "posenc.apply_rope", "copy (clone)"}
        assert report["max_error_vs_float64"]["posenc"] < 1e-5
