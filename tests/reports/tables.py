"""Read the tables of a rendered report back as text cells (standard library only)."""

from __future__ import annotations

from html.parser import HTMLParser


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[list[str]]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append((dict(attrs).get("class") or "", []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def tables(html_text: str, cls: str) -> list[list[list[str]]]:
    """Every table whose class list contains ``cls``, as rows of cell text (header row first)."""
    parser = _Tables()
    parser.feed(html_text)
    return [rows for classes, rows in parser.tables if cls in classes.split()]


def rows_by(html_text: str, cls: str, *keys: int) -> dict[tuple[str, ...], list[str]]:
    """Body rows of the first table with class ``cls``, keyed by the cells at ``keys``."""
    rows = tables(html_text, cls)[0][1:]
    return {tuple(row[k] for k in keys): row for row in rows}
