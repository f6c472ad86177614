#!/usr/bin/env bash
# Rebuild the book's JupyterLab extension (posenc-jupyterlab) from this folder into
# ../labextensions/posenc-jupyterlab, the built files the package ships (committed: a reader's
# machine needs no Node.js). Needs Node.js and npm, and JupyterLab's `jupyter` ($1, default: jupyter
# on PATH). `make lab-extension` runs it. The build happens in a temporary folder; the built folder
# records the sha256 of the sources it was built from (SOURCE_SHA256; tests/test_lab_extension.py).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jupyter="$(command -v "${1:-jupyter}" || true)"
[ -n "$jupyter" ] || { echo "no jupyter: give the path of JupyterLab's jupyter" >&2; exit 1; }
jupyter="$(cd "$(dirname "$jupyter")" && pwd)/$(basename "$jupyter")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here/index.js" "$here/package.json" "$work/"
# build into the temporary folder; the committed package.json keeps the real outputDir
sed -i 's#"outputDir": "[^"]*"#"outputDir": "out"#' "$work/package.json"
(cd "$work" && npm install --no-audit --no-fund --silent && "$jupyter" labextension build .)
target="$here/../labextensions/posenc-jupyterlab"
# the new build in a folder of this run's own, then swapped in (two builds at once never mix files)
fresh="$(mktemp -d "$target.new.XXXXXX")"
cp -r "$work/out/." "$fresh/"
(cd "$here" && sha256sum index.js package.json) > "$fresh/SOURCE_SHA256"
chmod 755 "$fresh"
rm -rf "$target" && mv "$fresh" "$target"
echo "built $target"
