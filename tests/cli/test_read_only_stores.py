"""Commands that only read a store never create one (issue 35, observation 6).

Before: ``convoscope batch status --store nosuch.db`` created a 73 KB database and said
"No batches"; a typo in a path looked like an empty ledger. Every command that reads a store
it did not write must stop with one line naming the path (exit 2) and leave no file behind.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from convoscope.cli import cli
from convoscope.cli._app import _register

_register()
DEAD = "openai:m@http://127.0.0.1:9/v1"


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "items.jsonl").write_text(json.dumps({"id": "a", "response": "Fine."}) + "\n")
    (tmp_path / "results").mkdir()
    result = CliRunner().invoke(cli, ["campaign", "init", str(tmp_path / "study")])
    assert result.exit_code == 0, result.output
    return tmp_path


def _commands(folder, missing):
    items, study = str(folder / "items.jsonl"), str(folder / "study")
    return {
        "batch status": ["batch", "status", "--store", missing],
        "batch status --no-refresh": ["batch", "status", "--no-refresh", "--store", missing],
        "batch cancel": ["batch", "cancel", "--all", "--store", missing],
        "batch cleanup": ["batch", "cleanup", "--store", missing],
        "batch import": ["batch", "import", items, "--criterion", "survey/effort", "--judge", DEAD,
                         "--store", missing, "--results", str(folder / "results")],
        "view": ["view", missing, "--port", "9"],
        "campaign status": ["campaign", "status", study, "--items", items, "--db", missing],
        "campaign report": ["campaign", "report", study, "--items", items, "--db", missing,
                            "--out", str(folder / "report.html")],
        "campaign export": ["campaign", "export", study, "--items", items, "--db", missing,
                            "--out", str(folder / "export.jsonl")],
        "campaign block": ["campaign", "block", study, "someone", "--items", items, "--db", missing],
        "campaign withdraw": ["campaign", "withdraw", study, "someone", "--items", items, "--db", missing],
    }


READERS = ["batch status", "batch status --no-refresh", "batch cancel", "batch cleanup", "batch import",
           "view", "campaign status", "campaign report", "campaign export", "campaign block",
           "campaign withdraw"]


@pytest.mark.parametrize("name", READERS)
def test_a_reader_given_a_missing_store_names_it_in_one_line_and_creates_nothing(folder, name):
    missing = folder / "nosuch.db"
    argv = _commands(folder, str(missing))[name]
    result = CliRunner().invoke(cli, argv, env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    assert str(missing) in errors[0]
    assert not missing.exists()
    assert not list(folder.glob("nosuch.db*"))  # no -wal / -shm either


def test_every_batch_command_that_reads_the_ledger_is_covered():
    # A new batch sub-command must be added above (export is the one that writes a store).
    from convoscope.cli._batch import batch_group

    readers = {name.split()[1] for name in READERS if name.startswith("batch ")}
    assert set(batch_group.commands) - readers == {"export"}


def test_a_store_that_exists_is_read_as_before(folder):
    from convoscope.store import Store

    path = folder / "run.db"
    Store(path).close()
    result = CliRunner().invoke(cli, ["batch", "status", "--no-refresh", "--store", str(path)])
    assert result.exit_code == 0, result.output
    assert "No batches in the ledger." in result.output


def test_the_library_refuses_to_create_a_store_for_a_reader(tmp_path):
    from convoscope.errors import LocatedError
    from convoscope.store import Store

    with pytest.raises(LocatedError, match="no store there"):
        Store(tmp_path / "absent.db", create=False)
    assert not (tmp_path / "absent.db").exists()
