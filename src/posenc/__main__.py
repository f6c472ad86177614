"""``python -m posenc explain CONFIG``: what a model does with positions, from its ``config.json``.

Prints the layers grouped by what they do, each rotation's fastest and slowest wavelength against the
trained and the extended length, the pairs a banded method (linear, YaRN, Llama 3) keeps, blends or
interpolates, and warnings for the known traps (:mod:`posenc.explain`). ``--json`` prints the same
as data, ``--plot FILE.png`` draws the wavelength of every pair. A path that is not a model config
gets one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys

from .explain import ConfigError, explain, format_text, load_config, plot_wavelengths_by_pair


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m posenc", description="Read a model's positions from its config.")
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("explain", help="what a model does with positions, layer by layer")
    command.add_argument("config", help="a config.json (either form; a multimodal one is read through its text_config)")
    command.add_argument("--seq-len", type=int, default=None, help="the current length (dynamic NTK, LongRoPE)")
    command.add_argument("--json", action="store_true", help="print the explanation as JSON")
    command.add_argument("--plot", metavar="FILE.png", default=None, help="draw the wavelength of every pair")
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config)
        explanation = explain(config, seq_len=args.seq_len)
    except (ConfigError, ValueError, TypeError) as error:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        if not isinstance(error, ConfigError):
            message = f"{args.config}: not a config posenc can read: {message}"
        print(f"error: {message}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(explanation.as_dict(), indent=2))
    else:
        print(format_text(explanation))
    if args.plot:
        plot_wavelengths_by_pair(explanation, args.plot)
        if not args.json:
            print(f"\nwrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
