"""Issue 36, observation 7 (part): an 80-column console never splits a number across lines
("[+0.0 / 9,"); a table too wide for the console prints one labelled block per row instead."""

import json
import re

import numpy as np
from click.testing import CliRunner

from convoscope.cli import cli
from convoscope.cli._app import _register

_register()
NUMBER = re.compile(r"[-+−]?\d+(?:\.\d+)?")


def _study(path):
    rng = np.random.default_rng(0)
    lines = []
    for s in range(6):
        for i in range(15):
            truth = s / 3 + rng.normal()
            for rater in ("human:h0", "human:h1", "human:h2", "model:first-judge", "model:second-judge"):
                lines.append({"item_id": f"s{s}:{i}", "criterion": "overall", "rater": rater,
                              "value": float(truth + rng.normal()), "system": f"s{s}"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _numbers(text):
    return set(NUMBER.findall(text))


def test_no_number_is_split_at_eighty_columns(tmp_path):
    path = _study(tmp_path / "all.jsonl")
    args = ["metaeval", str(path), "--resamples", "50", "--permutations", "50", "--system-level"]
    wide = CliRunner().invoke(cli, args, env={"COLUMNS": "400"})
    narrow = CliRunner().invoke(cli, args, env={"COLUMNS": "80"})
    assert wide.exit_code == 0 and narrow.exit_code == 0, narrow.output
    broken = _numbers(narrow.output) - _numbers(wide.output)
    assert not broken, sorted(broken)


def test_a_table_without_rows_prints_its_headers():
    """Found by the docs test: with no row, the narrowest-layout sum took max() of one number."""
    from io import StringIO

    from rich.console import Console

    from convoscope.cli._metaeval_render import FittedTable

    table = FittedTable("criterion", "outliers")
    console = Console(file=StringIO(), width=80)
    console.print(table)
    assert "criterion" in console.file.getvalue()
