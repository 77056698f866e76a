"""Files that hold annotators' answers or notes are readable by their owner only (mode 600), like
the store: exports, reports and questionnaire answers. Written atomically, as the project's other
writers are (a temporary file beside the target, moved over it when complete)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from convoscope.errors import ConfigError

PRIVATE = 0o600


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
