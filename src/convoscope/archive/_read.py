"""``read_run_archive``: a run archive opened without any store."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from convoscope.archive._format import CRITERIA, ITEMS, PROMPTS, SPEC, SUMMARY, VERDICTS, open_checked
from convoscope.errors import LocatedError
from convoscope.judges import Verdict


@dataclass(frozen=True)
class ArchivedVerdict:
    """One line of ``verdicts.jsonl``: the verdict and what a store needs to hold it again."""

    verdict: Verdict
    task_key: str
    final: bool
    own_scope: bool
    chunk: int
    position: int
    producer: str | None


@dataclass(frozen=True)
class RunArchive:
    """A run archive, checked: its manifest, the run's spec and summary. Verdicts are read from
    the file each time they are asked for (:meth:`iter_verdicts` streams them)."""

    path: Path
    manifest: dict[str, Any]
    spec: dict[str, Any]
    summary: dict[str, Any] | None

    @property
    def run_id(self) -> str:
        return str(self.manifest["run"]["run_id"])

    def iter_rows(self) -> Iterator[ArchivedVerdict]:
        """Every archived verdict with its key and place, in the run's order."""
        where = f"{self.path}:{VERDICTS}"
        with zipfile.ZipFile(self.path) as archive, archive.open(VERDICTS) as raw:
            for number, line in enumerate(io.TextIOWrapper(raw, encoding="utf-8"), start=1):
                if line.strip():
                    yield _row(where, number, line)

    def iter_verdicts(self, *, members: bool = False) -> Iterator[Verdict]:
        """The run's final verdicts (a panel's pooled ones), and its members' with ``members``."""
        for row in self.iter_rows():
            if members or row.final:
                yield row.verdict

    def verdicts(self, *, members: bool = False) -> list[Verdict]:
        return list(self.iter_verdicts(members=members))

    def items(self) -> list[Any] | None:
        """The items the run read, when the archive carries them."""
        text = self._text(ITEMS)
        if text is None:
            return None
        from convoscope.items import Item

        where = f"{self.path}:{ITEMS}"
        found = []
        for number, line in enumerate(text.splitlines(), start=1):
            try:
                found.append(Item.model_validate_json(line))
            except ValidationError as error:
                raise LocatedError(where, error.errors()[0]["msg"], line=number) from None
        return found

    def criteria_text(self) -> str | None:
        """The criteria file the run read (YAML), when the archive carries it."""
        return self._text(CRITERIA)

    def criteria(self) -> list[Any]:
        """The criteria of the file the run read, when the archive carries it (an error in it is
        named as the archive's member)."""
        text = self.criteria_text()
        if text is None:
            return []
        from convoscope.criteria._load import _parse_suite

        return list(_parse_suite(text, Path(f"{self.path}:{CRITERIA}")).criteria)

    def prompts(self, keys: Iterable[str] | None = None) -> dict[str, str]:
        """The rendered prompts the archive carries (``export-run --prompts``) by task key: those
        of ``keys`` only (read in one pass, so a large archive is not held), or every one."""
        if PROMPTS not in self.manifest["members"]:
            return {}
        wanted = None if keys is None else set(keys)
        found: dict[str, str] = {}
        where = f"{self.path}:{PROMPTS}"
        with zipfile.ZipFile(self.path) as archive, archive.open(PROMPTS) as raw:
            for number, line in enumerate(io.TextIOWrapper(raw, encoding="utf-8"), start=1):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                    key, prompt = str(data["task_key"]), str(data["prompt"])
                except (ValueError, KeyError, TypeError) as error:
                    raise LocatedError(where, f"not a prompt line ({error})", line=number) from None
                if wanted is None or key in wanted:
                    found[key] = prompt
        return found

    def _text(self, name: str) -> str | None:
        if name not in self.manifest["members"]:
            return None
        with zipfile.ZipFile(self.path) as archive:
            return archive.read(name).decode("utf-8")


def read_run_archive(path: str | Path, *, verify: bool = True) -> RunArchive:
    """Open a run archive (``convoscope export-run``). Its format and schema version are checked
    and, with ``verify``, every member's sha256: a damaged or edited archive is an error."""
    path = Path(path)
    archive, manifest = open_checked(path, verify=verify)
    with archive:
        spec = _json_member(path, archive, SPEC, manifest) or {}
        summary = _json_member(path, archive, SUMMARY, manifest)
    return RunArchive(path, manifest, spec, summary)


def _json_member(path: Path, archive: zipfile.ZipFile, name: str, manifest: dict[str, Any]) -> Any:
    if name not in manifest["members"]:
        return None
    try:
        return json.loads(archive.read(name))
    except (KeyError, ValueError) as error:
        raise LocatedError(path, f"member {name} cannot be read ({error})") from None


def _row(where: str, number: int, line: str) -> ArchivedVerdict:
    try:
        data = json.loads(line)
        verdict = Verdict.model_validate(data["verdict"])
        return ArchivedVerdict(verdict, str(data["task_key"]), bool(data["final"]),
                               bool(data.get("own_scope", False)), int(data.get("chunk", 0)),
                               int(data.get("position", number)), data.get("producer"))
    except json.JSONDecodeError as error:
        raise LocatedError(where, f"not JSON ({error.msg})", line=number) from None
    except KeyError as error:
        raise LocatedError(where, "missing", line=number, field=str(error.args[0])) from None
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in ("verdict", *first["loc"]))
        raise LocatedError(where, first["msg"], line=number, field=field) from None
