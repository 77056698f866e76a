"""Files a run's verdicts were written to (``--out``), noted in the run's summary.

A run that ended with its whole input passed to a file notes the file there (its size,
modification time and inode, and how much of the run it holds), so the next run of the same
command can append to it instead of writing it again (see :mod:`convoscope.runs._out`). The note
lives in ``runs.summary`` under ``out_files``, keyed by the file's resolved path: no schema change,
and a run that ends writes its summary again, dropping notes that no longer hold (the file is then
noted again once closed).
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from convoscope.store._schema import runs
from convoscope.store._store import Store


def output_mark(store: Store, run_id: str, path: str) -> dict[str, Any] | None:
    """What the run noted about the file at ``path``, if anything."""
    with store.engine.connect() as connection:
        found = connection.execute(sa.select(runs.c.summary).where(runs.c.run_id == run_id)).scalar()
    if not found:
        return None
    marks = json.loads(found).get("out_files") or {}
    mark = marks.get(path)
    return dict(mark) if isinstance(mark, dict) else None


def record_output(store: Store, run_id: str, path: str, mark: dict[str, Any]) -> None:
    """Note the file at ``path`` in the run's summary (other files' notes are kept)."""
    with store.engine.begin() as connection:
        found = connection.execute(sa.select(runs.c.summary).where(runs.c.run_id == run_id)
                                   .with_for_update()).scalar()
        summary = json.loads(found) if found else {}
        summary.setdefault("out_files", {})[path] = mark
        connection.execute(runs.update().where(runs.c.run_id == run_id).values(
            summary=json.dumps(summary, sort_keys=True)))
