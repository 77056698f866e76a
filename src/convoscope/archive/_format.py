"""What a run archive holds (schema version 1) and how it is checked.

A run archive is one zip file (``.cvs.zip``) that carries a run out of its store: what was asked
(``spec.json``; the items and criteria when given), how it ended (``summary.json``) and every
verdict (``verdicts.jsonl``). ``manifest.json`` names the format and schema version and holds the
sha256 of every other member, so a damaged or edited archive is refused before anything is read.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
import zlib
from pathlib import Path
from typing import Any

from convoscope.errors import LocatedError

FORMAT = "convoscope-run-archive"
SCHEMA_VERSION = 1
SUFFIX = ".cvs.zip"
MANIFEST = "manifest.json"
SPEC = "spec.json"
SUMMARY = "summary.json"
VERDICTS = "verdicts.jsonl"
ITEMS = "items.jsonl"
CRITERIA = "criteria.yaml"
PROMPTS = "prompts.jsonl"  # optional (export-run --prompts); readers that do not know it skip it
_BLOCK = 1 << 20


def is_archive(path: str | Path) -> bool:
    """Whether ``path`` is named as a run archive (the suffix decides, as for verdict files)."""
    return str(path).lower().endswith(SUFFIX)


def open_checked(path: Path, *, verify: bool = True) -> tuple[zipfile.ZipFile, dict[str, Any]]:
    """The open zip and its manifest, after checking the format, the schema version and (when
    ``verify``) every member's sha256. Any problem is one line naming the archive."""
    if not path.is_file():
        raise LocatedError(path, "no such run archive")
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise LocatedError(path, "not a run archive (not a zip file)") from None
    try:
        manifest = _manifest(path, archive)
        if verify:
            for name, entry in manifest["members"].items():
                _check_member(path, archive, name, str(entry.get("sha256", "")))
    except BaseException:
        archive.close()
        raise
    return archive, manifest


def _manifest(path: Path, archive: zipfile.ZipFile) -> dict[str, Any]:
    try:
        manifest = json.loads(archive.read(MANIFEST))
    except KeyError:
        raise LocatedError(path, f"not a run archive (no {MANIFEST})") from None
    except (ValueError, zipfile.BadZipFile, zlib.error) as error:
        raise LocatedError(path, f"{MANIFEST} cannot be read: {error}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise LocatedError(path, f"not a run archive ({MANIFEST} does not say format {FORMAT!r})")
    version = manifest.get("schema_version")
    if not isinstance(version, int) or version < 1:
        raise LocatedError(path, f"{MANIFEST}: schema_version {version!r} is not a version number")
    if version > SCHEMA_VERSION:
        raise LocatedError(path, f"archive schema version {version} is newer than this convoscope reads "
                           f"(up to {SCHEMA_VERSION}); upgrade convoscope to open it")
    if not isinstance(manifest.get("members"), dict) or VERDICTS not in manifest["members"]:
        raise LocatedError(path, f"{MANIFEST} lists no {VERDICTS}")
    return manifest


def _check_member(path: Path, archive: zipfile.ZipFile, name: str, expected: str) -> None:
    digest = hashlib.sha256()
    try:
        with archive.open(name) as handle:
            while block := handle.read(_BLOCK):
                digest.update(block)
    except KeyError:
        raise LocatedError(path, f"member {name} is listed in {MANIFEST} but missing") from None
    except (zipfile.BadZipFile, zlib.error, OSError) as error:  # bad CRC or deflate stream: damaged bytes
        raise LocatedError(path, f"member {name} is damaged ({error})") from None
    if digest.hexdigest() != expected:
        raise LocatedError(path, f"member {name} is damaged or was edited "
                           f"(its sha256 differs from the one in {MANIFEST})")
