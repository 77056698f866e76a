#!/usr/bin/env bash
# Installs everything the tests need, then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
bash scripts/install.sh local,dev,parquet,postgres,gibberish,hf,otel
# A PostgreSQL server for tests/store/test_postgres.py (it starts its own cluster on 127.0.0.1).
if ! command -v initdb >/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "note: PostgreSQL is not installed; its store test will be skipped" >&2
  fi
fi
# Headless Chromium and Korean fonts for the campaign web app's browser test (driven by playwright).
if ! command -v chromium >/dev/null || ! fc-list 2>/dev/null | grep -qi nanum; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-nanum >/dev/null
  else
    echo "note: chromium / fonts-nanum are not installed; the browser tests will be skipped" >&2
  fi
fi
# pdflatex and booktabs, to typeset metaeval's LaTeX tables in a two-column page
# (tests/decisions/test_latex_layouts.py; amssymb and graphicx come with these).
if ! command -v pdflatex >/dev/null || ! kpsewhich booktabs.sty >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq texlive-latex-base \
      texlive-latex-recommended >/dev/null
  else
    echo "note: pdflatex is not installed; the LaTeX layout tests will be skipped" >&2
  fi
fi
echo "test.sh: installed in $(( $(date +%s) - started )) s; running the suite" >&2
# Two workers (the CI machine has 2 cores); a test file stays on one worker, so its module-scoped
# servers start once. Pass -n 0 to run in one process.
# --durations: the slowest tests are named at the end of every run (the suite must stay under 20 min).
# The tests import the installed wheel (tests/test_installed_package.py checks that it is the wheel).
if [ "${CONVOSCOPE_EDITABLE:-0}" != 1 ]; then export CONVOSCOPE_TEST_WHEEL=1; fi
python3 -m pytest -q -p no:cacheprovider -n 2 --dist loadfile --durations=60 "$@"
