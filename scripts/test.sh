#!/usr/bin/env bash
# Installs everything the tests need, then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh local,dev,parquet
python3 -m pytest -q -p no:cacheprovider "$@"
