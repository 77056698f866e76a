"""A run to compare, from wherever it lives: a verdict file (``judge --out``), a run archive
(``export-run``) or a run in a store."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convoscope.errors import ConfigError
from convoscope.judges import Verdict

VERDICT_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet")


@dataclass(frozen=True)
class RunSide:
    """One side of a comparison: a label, its final verdicts and, when known, what the run asked."""

    label: str
    verdicts: tuple[Verdict, ...]
    spec: dict[str, Any] = field(default_factory=dict)


def load_side(
    reference: str | Path | RunSide | Any, *, store: str | Path | None = None, rater: str | None = None
) -> RunSide:
    """``reference`` is a verdict file, a run archive (``.cvs.zip``), a run id in ``store``, a
    :class:`RunSide`, a ``RunResult`` or a list of verdicts. Only final verdicts are compared (a
    panel's pooled one, not its members); a file holding several raters needs ``rater`` to say
    which one is the run."""
    if isinstance(reference, RunSide):
        return reference
    if hasattr(reference, "run_id") and hasattr(reference, "verdicts"):  # a RunResult
        return _one_rater(RunSide(str(reference.run_id), tuple(reference.verdicts)), rater)
    if isinstance(reference, list | tuple):
        return _one_rater(RunSide("verdicts", tuple(reference)), rater)
    text = str(reference)
    path = Path(text)
    from convoscope.archive import is_archive, read_run_archive

    if is_archive(path):  # a run archive: the run's final verdicts and spec, no store needed
        archive = read_run_archive(path)
        return _one_rater(RunSide(archive.run_id, tuple(archive.iter_verdicts()), archive.spec), rater)
    if path.suffix.lower() in VERDICT_SUFFIXES or path.exists():
        from convoscope.judges import read_verdicts

        return _one_rater(RunSide(path.name, tuple(read_verdicts(path))), rater)
    if store is None:
        raise ConfigError(f"{text}: no such verdict file, and no --store to find a run of that id in")
    return _one_rater(_from_store(text, store), rater)


def _from_store(run_id: str, store: str | Path) -> RunSide:
    from convoscope.comparison._stream import open_run

    opened, run = open_run(run_id, store)
    try:
        spec = opened.run_spec(run) or {}
        verdicts = tuple(opened.iter_verdicts(run, members=False))
    finally:
        opened.close()
    return RunSide(run, verdicts, spec)


def _one_rater(side: RunSide, rater: str | None) -> RunSide:
    """The verdicts of the rater that is the run (as a streamed comparison picks it)."""
    from convoscope.comparison._stream import pick_rater

    chosen = pick_rater(side.label, sorted({verdict.rater for verdict in side.verdicts}), rater)
    if chosen is None:
        return side
    return RunSide(side.label, tuple(v for v in side.verdicts if v.rater == chosen), side.spec)
