import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the hand-written samples and the table reader

from verdict_samples import candidate_rows, dialogue_issue_rows, kpi_rows, write_rows  # noqa: E402


@pytest.fixture
def all_verdicts(tmp_path) -> Path:
    return write_rows(tmp_path / "verdicts.jsonl", dialogue_issue_rows() + candidate_rows() + kpi_rows())
