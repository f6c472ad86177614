"""Benchmark the chapters' live controls in JupyterLab: each control's latency, from the input
event to the new figure painted.

Run: ``make bench-lab`` (or ``.venv/bin/python benchmarks/bench_jupyterlab.py [CHAPTER ...]
[--moves N] [--pause-ms MS] [--no-ahead] [--json FILE]``).

JupyterLab 4.5 with jupyterlab-myst (the pins of requirements-lab.txt) on the loopback address,
Debian's Chromium driven by Playwright on the same machine (tests/lab_driver.py, the driver of
tests/test_jupyterlab.py). Each chapter is opened, Run All, then every control of every live
explorer is moved ``--moves`` times (default 5) with the keyboard, one step (a menu: its next
option), ``--pause-ms`` (default 250) after each new figure, as a reader stepping with the arrow
keys. A move is timed in the page, from the input event to the animation frame after the live
canvas paints the new state (posenc.book.live): at once if the kernel sent that state ahead, else
after the kernel's answer (the widget's round trip, ``update`` and the recording). ``--no-ahead``
sets ``POSENC_LIVE_AHEAD=0`` for the kernels: every move waits for the kernel, as a jump along a
slider does. The table gives each control's median and worst, and its moves that brought no new figure
within 15 s (then its worst reads "timeout"); the target (issue 32) is a median under
50 ms and a worst under 100 ms. Seconds depend on the machine: say which one ran it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from lab_driver import CHROMIUM, lab_server, move_every_control, open_and_run_all  # noqa: E402


def measure(chapters: list[str], moves: int, pause_ms: int = 250) -> list[dict]:
    from playwright.sync_api import sync_playwright

    rows = []
    with tempfile.TemporaryDirectory() as tmp, lab_server(Path(tmp)) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        for chapter in chapters:
            page, run_s, _ = open_and_run_all(browser, base, chapter)
            records = move_every_control(page, moves=moves, pause_ms=pause_ms)
            page.context.close()
            by_control: dict[tuple, list] = {}
            for r in records:
                by_control.setdefault((r["explorer"], r["control"], r.get("label", "")), []).append(r)
            for (explorer, control, label), group in by_control.items():
                times = [r["ms"] for r in group if "ms" in r]
                rows.append(
                    {
                        "chapter": chapter,
                        "explorer": explorer,
                        "control": label or f"control {control}",
                        "moves": len(group),
                        "timeouts": sum(1 for r in group if r.get("timeout")),
                        "median_ms": statistics.median(times) if times else None,
                        "worst_ms": max(times) if times else None,
                        "run_all_s": run_s,
                    }
                )
            print(f"{chapter}: Run All {run_s:.1f} s, {len(records)} moves", file=sys.stderr)
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| chapter | explorer | control | moves | no new figure | median ms | worst ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        # a move that brought no new figure in 15 s makes the worst "timeout", whatever the others took
        median = "timeout" if r["median_ms"] is None else f"{r['median_ms']:.0f}"
        worst = "timeout" if r["worst_ms"] is None or r.get("timeouts") else f"{r['worst_ms']:.0f}"
        cells = [r["chapter"][:2], r["explorer"] + 1, r["control"], r["moves"], r.get("timeouts", 0), median, worst]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    medians = [r["median_ms"] for r in rows if r["median_ms"] is not None]
    if medians:
        under = sum(m < 50 for m in medians)
        worst_move = max(r["worst_ms"] for r in rows if r["worst_ms"] is not None)
        lines.append("")
        lines.append(
            f"{len(rows)} controls: median of the medians {statistics.median(medians):.0f} ms, "
            f"highest median {max(medians):.0f} ms, {under} of {len(medians)} under 50 ms; "
            f"worst single move {worst_move:.0f} ms; "
            f"{sum(r.get('timeouts', 0) for r in rows)} moves brought no new figure in 15 s"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapter names such as 08_rope (default: all)")
    parser.add_argument("--moves", type=int, default=5, help="moves per control (default 5)")
    parser.add_argument("--pause-ms", type=int, default=250, help="pause after each new figure (default 250)")
    parser.add_argument("--no-ahead", action="store_true", help="no states sent ahead: every move waits for the kernel")
    parser.add_argument("--json", type=Path, help="also write the rows to this new JSON file")
    args = parser.parse_args(argv)
    if args.json is not None and args.json.exists():
        parser.error(f"--json {args.json}: the file exists; give a new path (nothing is overwritten)")
    if args.moves < 1:
        parser.error(f"--moves must be at least 1, got {args.moves}")
    if args.pause_ms < 0:
        parser.error(f"--pause-ms must be at least 0, got {args.pause_ms}")
    known = sorted(p.stem for p in (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    unknown = [c for c in args.chapters if c not in known]
    if unknown:
        parser.error(f"unknown chapter(s) {unknown}; choose from {known}")
    if not CHROMIUM.exists():
        print(f"no Chromium at {CHROMIUM}: `apt-get install -y chromium`", file=sys.stderr)
        return 1
    if args.no_ahead:
        os.environ["POSENC_LIVE_AHEAD"] = "0"  # JupyterLab's kernels inherit it
    rows = measure(args.chapters or known, args.moves, args.pause_ms)
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
