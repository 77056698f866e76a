"""Small invented samples in each benchmark's on-disk format live in ``samples/``; these helpers
make broken copies of them so every loader's error path can be checked."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SAMPLES = Path(__file__).parent / "samples"


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def broken_copy(tmp_path: Path) -> Callable[..., tuple[Path, int]]:
    """``broken_copy(relative, mutate, marker, after=None)``: copy a sample to ``tmp_path`` (same
    folder and file name), apply ``mutate`` to its JSON, and return the new file and the 1-based
    line on which ``marker`` (a JSON fragment) first appears after the line holding ``after`` —
    found by reading the text, not by the code under test."""

    def copy(relative: str, mutate: Callable[[Any], None], marker: str, after: str | None = None):
        return _broken_copy(tmp_path, relative, mutate, marker, after)

    return copy


def _broken_copy(tmp_path: Path, relative: str, mutate: Callable[[Any], None], marker: str,
                 after: str | None) -> tuple[Path, int]:
    data = json.loads((SAMPLES / relative).read_text(encoding="utf-8"))
    mutate(data)
    target = tmp_path / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False)
    target.write_text(text, encoding="utf-8")
    numbered = list(enumerate(text.splitlines(), start=1))
    if after is not None:
        (start,) = [number for number, line in numbered if after in line]
        numbered = [(number, line) for number, line in numbered if number > start][:40]
        return target, next(number for number, line in numbered if marker in line)
    lines = [number for number, line in numbered if marker in line]
    assert len(lines) == 1, f"marker {marker!r} must appear on exactly one line, found {lines}"
    return target, lines[0]
