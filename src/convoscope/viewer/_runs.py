"""The runs the viewer shows: from a store, from run archives (``export-run``), or both.

Each run keeps its final verdicts (a panel's pooled ones: what ``compare`` pairs) and what it
recorded asking (its spec); an archive also brings the items and the criteria file the run read,
so two archives can be looked at side by side with no store at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convoscope.judges import Verdict


@dataclass(frozen=True)
class RunInfo:
    """One run: where it came from, what it asked, its verdicts (all, and the final ones)."""

    run_id: str
    source: str
    spec: dict[str, Any]
    verdicts: tuple[Verdict, ...]  # with a panel's members
    finals: tuple[Verdict, ...]
    summary: dict[str, Any] | None = None
    items: dict[str, Any] = field(default_factory=dict)  # an archive's items.jsonl, by id
    criteria: dict[str, Any] = field(default_factory=dict)  # an archive's criteria.yaml, by name
    criteria_text: str | None = None
    # What the run asked, to check a prompt rendered again against: the task key of each final
    # verdict by (item_id, criterion), and the prompts an archive exported with --prompts carries.
    task_keys: dict[tuple[str, str], str] = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)

    @property
    def judge(self) -> str:
        """The judge in a few words, from what the run recorded."""
        judge = self.spec.get("judge")
        if not isinstance(judge, dict):
            return "–"
        parts = [str(judge.get(key)) for key in ("kind", "model", "name", "mode") if judge.get(key)]
        if judge.get("version"):
            parts.append(f"v{judge['version']}")
        return " · ".join(parts) or "–"

    @property
    def criterion_names(self) -> list[str]:
        return sorted({verdict.criterion for verdict in self.finals})

    @property
    def unscored(self) -> int:
        return sum(1 for verdict in self.finals if not verdict.scored)


def store_runs(store: str | Path) -> list[RunInfo]:
    """Every run of ``store``, oldest first (a viewer never creates a store)."""
    from convoscope.store import Store

    opened = Store(store, create=False)
    try:
        runs = []
        for run_id in opened.run_ids():
            keyed = list(opened.iter_keyed_verdicts(run_id, members=False))
            finals = tuple(verdict for _, verdict in keyed)
            every = tuple(opened.iter_verdicts(run_id))
            # Without a panel's members both are the same verdicts: keep one copy of each.
            runs.append(RunInfo(run_id, str(store), opened.run_spec(run_id) or {},
                                finals if len(every) == len(finals) else every, finals,
                                task_keys={(v.item_id, v.criterion): key for key, v in keyed}))
        return runs
    finally:
        opened.close()


def archive_runs(paths: Iterable[str | Path]) -> list[RunInfo]:
    """The run of each archive (checked: a damaged or edited archive is refused, naming it)."""
    from convoscope.archive import read_run_archive

    runs = []
    for path in paths:
        archive = read_run_archive(path)
        rows = list(archive.iter_rows())
        keys = {(row.verdict.item_id, row.verdict.criterion): row.task_key for row in rows if row.final}
        runs.append(RunInfo(archive.run_id, str(path), dict(archive.spec),
                            tuple(row.verdict for row in rows),
                            tuple(row.verdict for row in rows if row.final), archive.summary,
                            {item.id: item for item in archive.items() or []},
                            {criterion.name: criterion for criterion in archive.criteria()},
                            archive.criteria_text(), keys, archive.prompts()))
    return runs


def file_run(path: str | Path) -> RunInfo | list[Verdict]:
    """A verdict file as a run when it is one (``judge --out``: every verdict of one run id and
    one rater); otherwise its verdicts (people's ratings, several judges), shown without a run."""
    from convoscope.judges import read_verdicts

    verdicts = read_verdicts(path)
    run_ids = {verdict.run_id for verdict in verdicts}
    raters = {verdict.rater for verdict in verdicts}
    if len(run_ids) != 1 or None in run_ids or len(raters) != 1:
        return verdicts
    every = tuple(verdicts)
    return RunInfo(str(run_ids.pop()), str(path), {}, every, every)


def unique(runs: list[RunInfo]) -> list[RunInfo]:
    """One entry per run id: the same run from a store, its archive or its ``judge --out`` file is
    one run (the first source's verdicts, with the spec, items and criteria file another carries)."""
    from dataclasses import replace

    from convoscope.errors import ConfigError

    seen: dict[str, RunInfo] = {}
    for run in runs:
        first = seen.get(run.run_id)
        if first is None:
            seen[run.run_id] = run
            continue
        if not first.spec and run.spec:  # a `judge --out` file records no spec: its store's run does
            first, run = replace(run, items=run.items or first.items), first
        if first.spec != run.spec and run.spec:
            raise ConfigError(f"run {run.run_id} is in {first.source} and in {run.source} "
                              "with different specs: open one of them")
        seen[run.run_id] = replace(first, items=first.items or run.items,
                                   criteria=first.criteria or run.criteria,
                                   criteria_text=first.criteria_text or run.criteria_text,
                                   summary=first.summary or run.summary,
                                   task_keys=first.task_keys or run.task_keys,
                                   prompts={**run.prompts, **first.prompts})
    return list(seen.values())
