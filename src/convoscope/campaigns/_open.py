"""Opening a campaign folder: its spec, items and store (a SQLite file readable by its owner only).

The campaign's items file and store are named in campaign.yaml (``items:``, ``store:``, relative to
the campaign folder), so every command finds them from any directory. ``campaign serve --items
--db`` writes what it was given there (:func:`remember_locations`); commands that only read
(status, report, export) never create a store: a missing one is an error that says where they
looked.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml

from convoscope.campaigns._campaign import Campaign
from convoscope.campaigns._spec import SPEC_FILE, CampaignError, CampaignSpec, load_campaign
from convoscope.errors import ConfigError
from convoscope.store import Store


def secure_sqlite(target: str | Path) -> None:
    """Create a SQLite store file readable by its owner only (its -wal and -shm files follow it)."""
    path = Path(target)
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if file.exists():
            os.chmod(file, 0o600)


def store_location(folder: Path, spec: CampaignSpec, store: str | Path | None = None) -> str | Path:
    """The store to use: ``store`` when given, else campaign.yaml's, relative to the folder."""
    if store is not None:
        return store
    return spec.store if "://" in spec.store else folder / spec.store


def open_campaign(directory: str | Path, *, items: str | Path | None = None,
                  store: str | Path | None = None, create: bool = True) -> Campaign:
    """Load the campaign in ``directory`` with its items and store (arguments override the spec).

    With ``create=False`` the store must already hold this campaign: a missing SQLite file or a
    database without the campaign's answers is an error, never a fresh empty store.
    """
    from convoscope.items import read_items

    folder = Path(directory)
    spec = load_campaign(folder)
    items_path = items or (folder / spec.items if spec.items else None)
    if items_path is None:
        raise ConfigError("no items: name an items file or set 'items:' in campaign.yaml")
    target = store_location(folder, spec, store)
    sqlite = "://" not in str(target)
    if sqlite and not create and not Path(target).exists():
        raise ConfigError(f"{target}: no store there (campaign.yaml names store: {spec.store!r}); "
                          "`campaign serve` creates it, or give --db where the answers are")
    if sqlite:
        secure_sqlite(target)
    opened = Store(target)
    if not create and f"campaign:{spec.name}" not in opened.run_ids():
        opened.close()
        raise ConfigError(f"{opened.location}: holds no answers of campaign {spec.name!r}; "
                          "`campaign serve` starts it, or give --db where the answers are")
    return Campaign(folder, list(read_items(items_path)), opened)


def remember_locations(directory: str | Path, *, items: str | Path | None = None,
                       store: str | None = None) -> list[str]:
    """Write the items file and store given on the command line into campaign.yaml (relative to
    the campaign folder), so later commands find them from anywhere; returns what was written.

    Refuses to point ``store:`` away from an existing SQLite store (that would split the
    study's answers), and never writes a database password into the file.
    """
    folder = Path(directory)
    spec = load_campaign(folder)
    changes: dict[str, str] = {}
    if items is not None:
        changes["items"] = os.path.relpath(Path(items).resolve(), folder.resolve())
    if store is not None:
        changes["store"] = _store_value(folder, spec, store)
    changes = {key: value for key, value in changes.items() if value != getattr(spec, key)}
    if not changes:
        return []
    path = folder / SPEC_FILE
    text = path.read_text(encoding="utf-8")
    for key, value in changes.items():
        text = _set_top_level(text, key, value)
    path.write_text(text, encoding="utf-8")
    load_campaign(folder)  # the edited file still reads as it should
    return [f"{key}: {value}" for key, value in changes.items()]


def _store_value(folder: Path, spec: CampaignSpec, store: str) -> str:
    if "://" in store:
        from sqlalchemy.engine import make_url

        if make_url(store).password:
            raise ConfigError("--db holds a password: put it in ~/.pgpass or PGPASSWORD instead, so that "
                              "campaign.yaml (which records the store) never holds it")
        return store
    value = os.path.relpath(Path(store).resolve(), folder.resolve())
    current = store_location(folder, spec)
    if value != spec.store and "://" not in str(current) and Path(current).exists():
        raise CampaignError(folder / SPEC_FILE, f"names store {spec.store!r}, which already exists; --db "
                            f"{store} would split the study's answers between two stores. Edit 'store:' "
                            "in campaign.yaml yourself if you mean to move the study", field="store")
    return value


def _set_top_level(text: str, key: str, value: str) -> str:
    """``text`` with the top-level ``key`` set to ``value`` (its comments and the rest kept)."""
    node = yaml.compose(text)
    for name, found in getattr(node, "value", []):
        if name.value == key:
            start, end = found.start_mark.index, found.end_mark.index
            return text[:start] + json.dumps(value) + text[end:]
    return text.rstrip("\n") + f"\n{key}: {json.dumps(value)}\n"
