"""Without matplotlib (the plots extra) ``metaeval --report`` still writes the report: every table,
no figures, a note in the page and one line on stderr (issue 35, observation 6).

Before: the command failed with the extra's hint and wrote no report, though only the figures
need matplotlib. The child process hides matplotlib as tests/cli/test_default_install.py hides
a default install's missing libraries.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from patience import PATIENT_S

HIDE_MATPLOTLIB = """
import importlib.abc, sys
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "matplotlib":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Hide())
sys.argv = ["convoscope", *sys.argv[1:]]
from convoscope.cli import main
main()
"""


def metaeval(folder, *extra: str, hide: bool = True) -> subprocess.CompletedProcess[str]:
    argv = ["metaeval", str(folder / "judge.jsonl"), "--human", str(folder / "people.jsonl"),
            "--resamples", "20", *extra]
    command = [sys.executable, "-c", HIDE_MATPLOTLIB, *argv] if hide else \
        [sys.executable, "-m", "convoscope", *argv]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=PATIENT_S)


@pytest.fixture
def folder(tmp_path):
    judged = [{"item_id": f"q{n}", "criterion": "overall", "rater": "model:j", "value": 1 + n % 5}
              for n in range(30)]
    people = [{"item_id": f"q{n}", "criterion": "overall", "rater": f"human:{who}",
               "value": 1 + (n + shift) % 5} for n in range(30) for who, shift in (("a", 0), ("b", 1))]
    (tmp_path / "judge.jsonl").write_text("".join(json.dumps(row) + "\n" for row in judged))
    (tmp_path / "people.jsonl").write_text("".join(json.dumps(row) + "\n" for row in people))
    return tmp_path


def test_the_report_is_written_without_figures_and_says_why(folder):
    done = metaeval(folder, "--report", "report.html", "--out", "rows.json")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    notes = [line for line in done.stderr.splitlines() if "matplotlib" in line]
    assert len(notes) == 1 and "pip install 'convoscope[plots]'" in notes[0], done.stderr
    page = (folder / "report.html").read_text()
    assert "<svg" not in page
    assert 'id="no-figures"' in page and "convoscope[plots]" in page
    assert "model:j" in page  # the criterion x judge table is there
    assert json.loads((folder / "rows.json").read_text())["rows"]


def test_with_matplotlib_the_same_report_has_figures_and_no_note(folder):
    pytest.importorskip("matplotlib")
    done = metaeval(folder, "--report", "report.html", hide=False)
    assert done.returncode == 0, done.stderr[-3000:]
    page = (folder / "report.html").read_text()
    assert "<svg" in page and 'id="no-figures"' not in page
    assert "matplotlib" not in done.stderr


def test_figures_alone_end_in_one_line_after_every_other_output_is_written(folder):
    done = metaeval(folder, "--figures", "figures", "--out", "rows.json", "--table", "t.csv")
    assert done.returncode == 2, done.stderr[-3000:]
    said = done.stdout + done.stderr
    assert "Traceback" not in said
    errors = [line for line in said.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "convoscope[plots]" in errors[0], said
    assert (folder / "rows.json").exists() and (folder / "t.csv").exists()
    assert not (folder / "figures").exists()
