"""Opening a campaign folder: its spec, items and store (a SQLite file readable by its owner only)."""

from __future__ import annotations

import os
from pathlib import Path

from convoscope.campaigns._campaign import Campaign
from convoscope.campaigns._spec import load_campaign
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


def open_campaign(directory: str | Path, *, items: str | Path | None = None,
                  store: str | Path | None = None) -> Campaign:
    """Load the campaign in ``directory`` with its items and store (arguments override the spec)."""
    from convoscope.items import read_items

    folder = Path(directory)
    spec = load_campaign(folder)
    items_path = items or (folder / spec.items if spec.items else None)
    if items_path is None:
        raise ConfigError("no items: name an items file or set 'items:' in campaign.yaml")
    target = store or (spec.store if "://" in spec.store else folder / spec.store)
    if "://" not in str(target):
        secure_sqlite(target)
    return Campaign(folder, list(read_items(items_path)), Store(target))
