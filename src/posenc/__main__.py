"""``python -m posenc explain CONFIG``: what a model does with positions, from its ``config.json``.

Prints the layers grouped by what they do, each rotation's fastest and slowest wavelength against the
trained and the extended length, the pairs a banded method (linear, YaRN, Llama 3) keeps, blends or
interpolates, and warnings for the known traps (:mod:`posenc.explain`). ``--json`` prints the same
as data, ``--plot FILE.png`` draws the wavelength of every pair (written at exactly that path, in the
format its suffix names; no suffix: PNG).

Anything that is not a config posenc can read (a missing or unreadable path, a file that is not a JSON
object, a config over posenc's limits or refused by the reference library, a bad ``--seq-len`` or
``--plot`` path) gets one line on stderr, nothing on stdout, and exit status 1; the arguments are checked
before the config is read, and the plot is written before anything is printed.

Where the reference library (``transformers``) is installed, the reading is checked against the library's own
tiny model of the same config (:mod:`posenc.reference_check`), and the output's second line says so: "checked
against transformers 5.23.0: 36 of 36 layers agree", or which layers and fields differ, or why it could not
check. ``--no-check`` skips it; ``--strict`` exits with status 3 unless the check ran and every layer agrees.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from ._config_guard import MAX_NUMBER
from .explain import ConfigError, explain, format_text, load_config, plot_path, plot_wavelengths_by_pair


def _seq_len(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not 1 <= value <= MAX_NUMBER:
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise ConfigError(f"--seq-len must be a whole number of tokens from 1 to 2^53, got {shown!r}")
    return value


def _one_line(error: BaseException) -> str:
    lines = str(error).splitlines()
    return lines[0] if lines else type(error).__name__


#: The exit status of ``--strict`` when the reference library did not confirm the reading (1: a bad input).
STRICT_EXIT = 3


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m posenc", description="Read a model's positions from its config.")
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("explain", help="what a model does with positions, layer by layer")
    command.add_argument("config", help="a config.json (either form; a multimodal one is read through its text_config)")
    command.add_argument("--seq-len", default=None, help="the current length in tokens (dynamic NTK, LongRoPE)")
    command.add_argument("--json", action="store_true", help="print the explanation as JSON")
    command.add_argument(
        "--plot", metavar="FILE.png", default=None, help="draw the wavelength of every pair (.png, .pdf, .svg, ...)"
    )
    command.add_argument(
        "--no-check",
        action="store_true",
        help="skip the check against the reference library (transformers' own tiny model of the config)",
    )
    command.add_argument(
        "--strict",
        action="store_true",
        help=f"exit with status {STRICT_EXIT} unless the reference library ran and agrees on every layer",
    )
    args = parser.parse_args(argv)
    if args.strict and args.no_check:
        parser.error("--strict needs the check: leave out --no-check")
    try:
        seq_len = _seq_len(args.seq_len)
        if args.plot is not None:
            try:
                plot_path(args.plot)
            except ValueError as error:
                raise ConfigError(f"--plot {error}") from None
        config = load_config(args.config)
        explanation = explain(config, seq_len=seq_len, check=not args.no_check)
        written = None
        if args.plot is not None:
            try:
                written = plot_wavelengths_by_pair(explanation, args.plot)
            except OSError as error:  # checked above, yet not written: a full disk, a read-only file system
                raise ConfigError(f"--plot {args.plot}: cannot write it ({error.strerror or error})") from None
        output = json.dumps(explanation.as_dict(), indent=2) if args.json else format_text(explanation)
    except ConfigError as error:
        print(f"error: {_one_line(error)}", file=sys.stderr)
        return 1
    except (ValueError, TypeError) as error:
        print(f"error: {args.config}: not a config posenc can read: {_one_line(error)}", file=sys.stderr)
        return 1
    except Exception as error:  # one line, never a traceback; the type says what broke
        print(
            f"error: {args.config}: posenc failed on this config ({type(error).__name__}: {_one_line(error)}); "
            "this is a bug in posenc, please report it",
            file=sys.stderr,
        )
        return 1
    try:
        print(output)
        if written is not None and not args.json:
            print(f"\nwrote {written}")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader closed the pipe (| head): stop quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    check = explanation.reference_check
    if args.strict and not check.agrees:
        print(f"error: {args.config}: --strict: {check.line(max_differences=1)}", file=sys.stderr)
        return STRICT_EXIT
    return 0


if __name__ == "__main__":
    sys.exit(main())
