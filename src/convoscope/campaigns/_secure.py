"""Files that hold annotators' answers or notes are readable by their owner only (mode 600), like
the store: exports, reports and questionnaire answers. Written atomically, as the project's other
writers are (a temporary file beside the target, moved over it when complete)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from convoscope.errors import ConfigError

PRIVATE = 0o600

# A spreadsheet reads a cell starting with one of these as a formula (CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(cell: Any) -> Any:
    """Text that a spreadsheet would run as a formula, prefixed with ``'`` so it shows as text."""
    if isinstance(cell, str) and cell.startswith(FORMULA_STARTS):
        return "'" + cell
    return cell


@contextlib.contextmanager
def private_file(path: Path) -> Iterator[TextIO]:
    """Write text to ``path``, mode 600 whatever the umask or the mode of a file it replaces."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ConfigError(f"{path}: the folder {folder} does not exist; create it first")
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=folder)
    try:
        os.fchmod(descriptor, PRIVATE)
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
