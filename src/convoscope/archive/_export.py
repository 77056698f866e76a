"""``export_run``: one run of a store written to a run archive, verdicts streamed into the zip."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from convoscope.archive._format import (
    CRITERIA,
    FORMAT,
    ITEMS,
    MANIFEST,
    PROMPTS,
    SCHEMA_VERSION,
    SPEC,
    SUFFIX,
    SUMMARY,
    VERDICTS,
    is_archive,
)
from convoscope.errors import ConfigError, LocatedError


@dataclass
class _Counts:
    verdicts: int = 0
    final: int = 0
    members: int = 0
    unscored: int = 0
    items: set[str] = field(default_factory=set)
    criteria: set[str] = field(default_factory=set)
    raters: set[str] = field(default_factory=set)
    prompts: list[int] = field(default_factory=list)  # with --prompts: [written, not matching]

    def as_dict(self) -> dict[str, Any]:
        found = {"verdicts": self.verdicts, "final": self.final, "members": self.members,
                 "unscored": self.unscored, "items": len(self.items), "criteria": sorted(self.criteria),
                 "raters": sorted(self.raters)}
        if self.prompts:
            found |= {"prompts": self.prompts[0], "prompts_unmatched": self.prompts[1]}
        return found


def export_run(run: str, store: str | Path, out: str | Path, *, items: str | Path | None = None,
               criteria_file: str | Path | None = None, prompts: bool = False) -> dict[str, Any]:
    """Write run ``run`` (its id or first characters) of ``store`` to ``out`` (``.cvs.zip``) and
    return the manifest. ``items`` / ``criteria_file``: the files the run read, carried along.
    ``prompts``: also the rendered prompt of each final verdict (``prompts.jsonl``), rendered
    again from the items and criteria and kept only where it hashes to the verdict's task key.
    The archive is written beside ``out`` and moved into place when complete."""
    if prompts and (items is None or criteria_file is None):
        raise ConfigError("--prompts renders the run's prompts again: give --items and --criteria-file too")
    from convoscope.store import Store

    out = Path(out)
    if not is_archive(out):
        raise ConfigError(f"{out}: a run archive is named *{SUFFIX}")
    opened = Store(store, create=False)
    try:
        run_id = find_run(opened, run)
        partial = out.with_name(out.name + ".part")
        try:
            manifest = _write(opened, run_id, partial, items=items, criteria_file=criteria_file,
                              prompts=prompts)
            os.replace(partial, out)
        finally:
            partial.unlink(missing_ok=True)
    finally:
        opened.close()
    return manifest


def find_run(store: Any, run: str) -> str:
    """The one run id of ``store`` equal to ``run`` or starting with it."""
    known = store.run_ids()
    matches = [known_id for known_id in known if known_id == run or known_id.startswith(run)]
    if len(matches) != 1:
        what = "no run" if not matches else f"{len(matches)} runs"
        listed = ", ".join(known[:8]) or "none"
        raise ConfigError(f"{store.location}: {what} with id {run!r} (runs: {listed})")
    return str(matches[0])


def _write(store: Any, run_id: str, target: Path, *, items: str | Path | None,
           criteria_file: str | Path | None, prompts: bool = False) -> dict[str, Any]:
    from convoscope import __version__
    from convoscope.store._schema import runs

    with store.engine.connect() as connection:
        row = connection.execute(sa.select(runs).where(runs.c.run_id == run_id)).mappings().one()
    members: dict[str, dict[str, Any]] = {}
    counts = _Counts()
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        _put(archive, members, SPEC, [_json(json.loads(row["spec"]))])
        if row["summary"] is not None:
            _put(archive, members, SUMMARY, [_json(json.loads(row["summary"]))])
        _put(archive, members, VERDICTS, _lines(store, run_id, counts))
        if items is not None:
            _put(archive, members, ITEMS, _item_lines(Path(items), counts.items))
        if criteria_file is not None:
            _put(archive, members, CRITERIA, [_criteria_text(Path(criteria_file))])
        if prompts and items is not None and criteria_file is not None:
            from convoscope.archive._prompts import prompt_lines

            spec = json.loads(row["spec"])
            _put(archive, members, PROMPTS, prompt_lines(store, run_id, spec, Path(items),
                                                         Path(criteria_file), counts.prompts))
        manifest = {
            "format": FORMAT, "schema_version": SCHEMA_VERSION, "convoscope_version": __version__,
            "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "run": {"run_id": run_id, "created_at": row["created_at"], "finished_at": row["finished_at"]},
            "counts": counts.as_dict(), "members": members,
        }
        archive.writestr(MANIFEST, _json(manifest))
    return manifest


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1) + "\n"


def _put(archive: zipfile.ZipFile, members: dict[str, dict[str, Any]], name: str,
         chunks: Any) -> None:
    """Stream ``chunks`` (text) into member ``name``, noting its sha256 and size."""
    digest, size = hashlib.sha256(), 0
    with archive.open(name, "w", force_zip64=True) as handle:
        for chunk in chunks:
            data = chunk.encode("utf-8")
            digest.update(data)
            size += len(data)
            handle.write(data)
    members[name] = {"sha256": digest.hexdigest(), "bytes": size}


def _lines(store: Any, run_id: str, counts: _Counts) -> Iterator[str]:
    """One line per verdict of the run, in the run's order: the stored verdict under ``verdict``
    and what a store needs to hold it again (its task key, whether it is final, its place)."""
    from convoscope.store._schema import SHARED, run_tasks, verdicts

    asked = (sa.select(verdicts.c.task_key, verdicts.c.run_id, verdicts.c.data, run_tasks.c.member,
                       run_tasks.c.chunk, run_tasks.c.position, sa.literal(False).label("own"))
             .join(run_tasks, sa.and_(run_tasks.c.task_key == verdicts.c.task_key,
                                      verdicts.c.scope == SHARED))
             .where(run_tasks.c.run_id == run_id).order_by(run_tasks.c.chunk, run_tasks.c.position))
    own = (sa.select(verdicts.c.task_key, verdicts.c.run_id, verdicts.c.data, sa.false().label("member"),
                     sa.literal(0).label("chunk"), verdicts.c.id.label("position"),
                     sa.literal(True).label("own"))
           .where(verdicts.c.scope == run_id).order_by(verdicts.c.id))
    with store.engine.connect() as connection:
        for query in (asked, own):
            for row in connection.execute(query.execution_options(yield_per=1000)).mappings():
                yield _line(row, counts)


def _line(row: Any, counts: _Counts) -> str:
    final = not row["member"]
    verdict = json.loads(row["data"])
    counts.verdicts += 1
    counts.final += final
    counts.members += not final
    counts.unscored += verdict.get("unscored_reason") is not None
    counts.items.add(str(verdict.get("item_id")))
    counts.criteria.add(str(verdict.get("criterion")))
    counts.raters.add(str(verdict.get("rater")))
    head = {"task_key": row["task_key"], "final": final, "own_scope": bool(row["own"]),
            "chunk": int(row["chunk"]), "position": int(row["position"]), "producer": row["run_id"]}
    # The stored JSON goes in as it is: the archive holds exactly what the store held.
    return json.dumps(head, ensure_ascii=False)[:-1] + ', "verdict": ' + row["data"] + "}\n"


def _item_lines(path: Path, judged: set[str]) -> Iterator[str]:
    """The items file, validated and written as JSONL (whatever format the run read). It must hold
    every item the run judged: another file would make the archive say the wrong thing was asked."""
    from convoscope.items import read_items

    items = read_items(path)
    missing = sorted(judged - {item.id for item in items})
    if missing:
        raise LocatedError(path, f"{len(missing)} of the run's {len(judged)} items are not in this file "
                           f"(first: {missing[0]!r}); give the items file the run read")
    for item in items:
        yield item.model_dump_json(exclude_none=True) + "\n"


def _criteria_text(path: Path) -> str:
    """The criteria file as written (checked to parse), so the archive says what was asked."""
    from convoscope.criteria import load_criteria

    load_criteria(path)
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise LocatedError(path, f"not UTF-8 text ({error.reason})") from None
