"""The README's KPI panel command, run as a user runs it: a summary, and exit 0.

Before: it exited 4 ("20 % of the run is unscored") because a turn without timestamps gets a
`not_applicable` latency verdict, which counted as unscored; and on some runs it printed nothing at
all (two embedded models in one process silenced it: see tests/models/test_embedded_threads.py).
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from patience import PATIENT_S

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[2]


def readme_command(starting: str) -> list[str]:
    """The README's command line that starts with ``starting`` (continuations joined)."""
    text = (ROOT / "README.md").read_text().replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.startswith(starting))
    return re.split(r"\s+", line.split("#")[0].strip())


def test_the_readme_kpi_panel_exits_0_with_its_summary(tmp_path):
    command = readme_command("convoscope judge examples/kpi_turns.jsonl")
    assert "--pool" in command and command.count("--judge") == 2  # the panel of two embedded models
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / "examples/kpi_turns.jsonl", tmp_path / "examples")
    done = subprocess.run([sys.executable, "-m", "convoscope", *command[1:]], cwd=tmp_path,
                          capture_output=True, text=True, timeout=PATIENT_S)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Run " in done.stdout and "model calls" in done.stdout  # the summary table
    assert "not_applicable" in done.stdout  # the turn without timestamps: said, not counted
