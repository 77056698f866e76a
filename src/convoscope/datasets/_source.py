"""Reading benchmark files: a cursor over parsed JSON that names file, line and field on failure.

Benchmark files are parsed with the fast C decoder. Only when a value is malformed is the file
parsed a second time with a slower decoder that remembers where every value starts, so that the
error can name the line a person would open the file at.
"""

from __future__ import annotations

import bisect
import json
import json.decoder
import json.scanner
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from convoscope.items import ItemError

Key = str | int
T = TypeVar("T")


class Malformed(Exception):  # noqa: N818 - internal signal, turned into ItemError by read_json
    """A value in the JSON tree does not have the expected shape."""

    def __init__(self, path: tuple[Key, ...], problem: str):
        super().__init__(problem)
        self.path, self.problem = path, problem


@dataclass(frozen=True)
class At:
    """A value inside a JSON document and the path that leads to it."""

    value: Any
    path: tuple[Key, ...] = ()

    def fail(self, problem: str) -> NoReturn:
        raise Malformed(self.path, problem)

    def __getitem__(self, key: Key) -> At:
        if isinstance(key, str):
            if not isinstance(self.value, dict):
                self.fail(f"expected an object with key '{key}', got {_kind(self.value)}")
            if key not in self.value:
                raise Malformed((*self.path, key), "missing")
        elif not isinstance(self.value, list) or not 0 <= key < len(self.value):
            self.fail(f"expected a list with an entry {key}")
        container: Any = self.value
        return At(container[key], (*self.path, key))

    def get(self, key: str) -> At | None:
        """The value under ``key``, or None when the key is absent or null."""
        if not isinstance(self.value, dict):
            self.fail(f"expected an object, got {_kind(self.value)}")
        if self.value.get(key) is None:
            return None
        return At(self.value[key], (*self.path, key))

    def keys(self) -> list[str]:
        if not isinstance(self.value, dict):
            self.fail(f"expected an object, got {_kind(self.value)}")
        return list(self.value)

    def each(self) -> Iterator[At]:
        if not isinstance(self.value, list):
            self.fail(f"expected a list, got {_kind(self.value)}")
        for index, value in enumerate(self.value):
            yield At(value, (*self.path, index))

    def entries(self) -> Iterator[tuple[str, At]]:
        for key in self.keys():
            yield key, At(self.value[key], (*self.path, key))

    def text(self) -> str:
        if not isinstance(self.value, str):
            self.fail(f"expected text, got {_kind(self.value)}")
        return self.value

    def integer(self) -> int:
        """An integer; integral floats such as 5.0 (some exports write them) count as integers."""
        value = self.value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(f"expected an integer, got {_kind(value)}")
        return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {json.dumps(value)}"
    if isinstance(value, int | float):
        return f"number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"text {shown!r}"
    if isinstance(value, dict):
        return "an object"
    return "a list" if isinstance(value, list) else type(value).__name__


def field_label(path: tuple[Key, ...]) -> str | None:
    """``(3, 'annotations', 'Overall', 1)`` -> ``[3].annotations.Overall[1]``."""
    label = ""
    for key in path:
        label += f"[{key}]" if isinstance(key, int) else (f".{key}" if label else key)
    return label or None


def parse(file: Path, build: Callable[[At], T]) -> T:
    """Read ``file`` and build something from it; a malformed value becomes an ItemError that
    names the file, the line where the value starts and its field path."""
    root = read_json(file)
    try:
        return build(root)
    except Malformed as error:
        raise as_item_error(file, error) from None


def read_json(file: Path) -> At:
    """Parse ``file``; invalid JSON fails with an ItemError at the decoder's line."""
    text = _read_text(file)
    try:
        return At(json.loads(text))
    except json.JSONDecodeError as error:
        raise ItemError(file, error.lineno, None, f"not valid JSON ({error.msg})") from None


def _read_text(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ItemError(file, None, None, "file not found") from None
    except UnicodeDecodeError as error:
        raise ItemError(file, None, None, f"not UTF-8 text ({error.reason})") from None


def as_item_error(file: Path, error: Malformed) -> ItemError:
    """Locate a Malformed value in ``file`` and describe it as an ItemError."""
    line = line_of(_read_text(file), error.path)
    return ItemError(file, line, field_label(error.path), error.problem)


def line_of(text: str, path: tuple[Key, ...]) -> int | None:
    """The line where the value at ``path`` starts (or its deepest existing parent)."""
    newlines = [index for index, char in enumerate(text) if char == "\n"]
    node, start = _located_loads(text)
    line = None if start is None else bisect.bisect_right(newlines, start) + 1
    for key in path:
        starts = getattr(node, "starts", None)
        if starts is None or key not in starts:
            break
        line = bisect.bisect_right(newlines, starts[key]) + 1
        node = node[key]
    return line


class _LocatedDict(dict):
    starts: dict[Key, int]


class _LocatedList(list):
    starts: dict[Key, int]


def _located_loads(text: str) -> tuple[Any, int | None]:
    """Parse JSON keeping, for every object and list, the offset where each child value starts."""
    decoder = json.JSONDecoder()

    def parse_object(s_and_end: Any, strict: bool, scan_once: Any, *args: Any) -> Any:
        offsets: list[int] = []

        def scan(string: str, index: int) -> Any:
            offsets.append(index)
            return scan_once(string, index)

        pairs, end = json.decoder.JSONObject(  # type: ignore[attr-defined]
            s_and_end, strict, scan, None, list, *args[2:])
        located = _LocatedDict(pairs)
        located.starts = {key: offset for (key, _), offset in zip(pairs, offsets, strict=False)}
        return located, end

    def parse_array(s_and_end: Any, scan_once: Any) -> Any:
        offsets: list[int] = []

        def scan(string: str, index: int) -> Any:
            offsets.append(index)
            return scan_once(string, index)

        values, end = json.decoder.JSONArray(s_and_end, scan)  # type: ignore[attr-defined]
        located = _LocatedList(values)
        located.starts = dict(enumerate(offsets))
        return located, end

    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.parse_array = parse_array  # type: ignore[attr-defined]
    # The C scanner ignores the overrides; the pure-Python one calls them.
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    start = len(text) - len(text.lstrip())
    try:
        return decoder.raw_decode(text, start)[0], start
    except (json.JSONDecodeError, RecursionError):
        return None, None


def find_files(path: Path, folder: str, patterns: tuple[str, ...]) -> list[Path]:
    """The benchmark files at ``path``: the file itself, or the matching files in the folder (or
    in its sub-folder ``folder``, so the root of a data collection works too)."""
    if path.is_file():
        return [path]
    if not path.exists():
        raise ItemError(path, None, None, "file or folder not found")
    for directory in (path, path / folder):
        files = sorted({file for pattern in patterns for file in directory.glob(pattern) if file.is_file()})
        if files:
            return files
    wanted = ", ".join(patterns)
    raise ItemError(path, None, None, f"no benchmark file ({wanted}) here or in '{folder}/'")
