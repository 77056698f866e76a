"""Where convoscope keeps files between runs on this machine."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO


def cache_folder() -> Path:
    """``$XDG_CACHE_HOME/convoscope`` (``~/.cache/convoscope`` when it is unset or empty, as the
    XDG specification says): the embedded model's joined weights, py3langid's unpacked model, the
    packed word lists."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "convoscope"


def kept_name(package: str, source: Path, *parts: object, suffix: str) -> Path:
    """A file kept in the cache folder, named after ``package``'s release and ``source``'s size and
    time, so that a new release or a changed file is never read from an old copy."""
    stat = source.stat()
    release = _release(package)
    name = "-".join(str(part) for part in (package, release, *parts, stat.st_size, stat.st_mtime_ns))
    return cache_folder() / f"{name}{suffix}"


@functools.lru_cache(maxsize=16)
def _release(package: str) -> str:
    """The installed release of ``package`` (read from its metadata, about 1 ms: once a process,
    not once for each of the twenty word lists a run may keep)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


def keep_file(path: Path, data: bytes | Callable[[IO[bytes]], None], *,
              failures: tuple[type[Exception], ...] = ()) -> None:
    """Best effort: write ``data`` whole or not at all (a reader never sees half a file); a folder
    that cannot be written leaves nothing behind. ``data``: the bytes, or a function that writes
    them to the open file (streamed, e.g. unpacked from an archive, never held whole in memory);
    ``failures``: what else that function may raise that means "keep nothing" (a damaged source)."""
    import tempfile

    kept_nothing: tuple[type[Exception], ...] = (OSError, *failures)
    part = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".part", delete=False) as part:
            if isinstance(data, bytes):
                part.write(data)
            else:
                data(part)
        os.replace(part.name, path)
    except kept_nothing:
        if part is not None:
            with contextlib.suppress(OSError):
                os.unlink(part.name)
