"""``export-run --prompts``: each final verdict's rendered prompt, written into the archive.

A store keeps a hash of what was asked (the task key), not the prompt. The prompt is rendered
again from the items and criteria the run read, with the judge its spec records, and written only
when it hashes to the verdict's task key: so the archive holds exactly what was sent, and says
how many verdicts it could not match (a judge that sends no prompt, or other files than the run's).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import sqlalchemy as sa


def prompt_lines(store: Any, run_id: str, spec: dict[str, Any], items: Path, criteria_file: Path,
                 counts: list[int]) -> Iterator[str]:
    """One JSON line per final verdict whose prompt was rendered again: ``task_key``, ``prompt``.
    ``counts`` receives [written, not matched]."""
    from convoscope.comparison._prompts import render
    from convoscope.criteria import load_criteria
    from convoscope.items import read_items
    from convoscope.store._schema import SHARED, run_tasks, verdicts

    by_id = {item.id: item for item in read_items(items)}
    criteria: dict[str, list[Any]] = {}
    for criterion in load_criteria(criteria_file):
        criteria.setdefault(criterion.name, []).append(criterion)
    counts[:] = [0, 0]
    query = (sa.select(verdicts.c.task_key, verdicts.c.item_id, verdicts.c.criterion)
             .join(run_tasks, sa.and_(run_tasks.c.task_key == verdicts.c.task_key,
                                      verdicts.c.scope == SHARED))
             .where(run_tasks.c.run_id == run_id, ~run_tasks.c.member)
             .order_by(run_tasks.c.chunk, run_tasks.c.position))
    with store.engine.connect() as connection:
        for key, item_id, name in connection.execute(query.execution_options(yield_per=1000)):
            text = _matching(spec, by_id.get(item_id), criteria.get(name, []), key, render)
            if text is None:
                counts[1] += 1
                continue
            counts[0] += 1
            yield json.dumps({"task_key": key, "prompt": text}, ensure_ascii=False) + "\n"


def _matching(spec: dict[str, Any], item: Any, candidates: list[Any], key: str, render: Any) -> str | None:
    if item is None:
        return None
    for criterion in candidates:
        rendered = render(spec, item, criterion)
        if rendered is not None and rendered[1] == key:
            return str(rendered[0])
    return None
