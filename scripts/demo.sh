#!/usr/bin/env bash
# The main job on the embedded default model: no API key, no network beyond the package install.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh local,gibberish
# Survey answers in English and Korean, some of them gibberish: filter, judge, decide, report.
convoscope survey score examples/survey_answers.csv --question-col question --answer-col answer \
    --out scored.csv --report report.html --store convoscope.db
