"""Where convoscope keeps files between runs on this machine."""

from __future__ import annotations

import os
from pathlib import Path


def cache_folder() -> Path:
    """``$XDG_CACHE_HOME/convoscope`` (``~/.cache/convoscope`` when it is unset or empty, as the
    XDG specification says): the embedded model's joined weights, py3langid's unpacked model, the
    packed word lists."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "convoscope"
