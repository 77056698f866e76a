#!/usr/bin/env bash
# The main job on the embedded default model: no API key, no network beyond the package install.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh local
convoscope judge examples/survey_items.jsonl --suite survey --out verdicts.jsonl --store convoscope.db
