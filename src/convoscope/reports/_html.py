"""Small HTML helpers shared by the report sections: escaping, numbers, colours, the page shell.

The page is self-contained (inline CSS, no scripts or fonts from elsewhere) and every piece of
text that comes from a verdict or an item goes through :func:`esc`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

STYLE = """
body{font-family:system-ui,'Noto Sans KR','Malgun Gothic',sans-serif;margin:2em;max-width:1400px;color:#222}
h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0 1em}
td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top}
th{background:#f3f3f3;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
.sides{display:flex;flex-wrap:wrap;gap:2.5em;align-items:flex-start}.side{min-width:320px}
td.heat{text-align:center;min-width:4.5em}td.heat a{display:block;color:inherit;text-decoration:none}
td.heat a:hover{outline:2px solid #333}.muted{color:#777}small{color:#555}
.examples li{margin:.4em 0}.example{scroll-margin-top:1em;padding:.3em .6em;border-left:4px solid #eee}
.example:target{border-left-color:#c33;background:#fff4f0}
.turns{margin:.3em 0 .3em 1em;font-size:.92em}.turns div{margin:.1em 0}
.bar{display:flex;height:14px;width:260px;background:#f4f4f4}.bar span{display:block;height:100%}
.legend span{display:inline-block;margin-right:1em}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
.note{font-size:.9em;color:#555;max-width:60em}
.warning{background:#fff6d6;border-left:4px solid #d9a400;padding:.5em .8em;max-width:60em}
"""

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac")


def esc(text: object) -> str:
    """HTML-escape any value (quotes too, so it is safe inside attributes)."""
    return html.escape(str(text), quote=True)


def pct(share: float | None) -> str:
    return "–" if share is None else f"{100 * share:.0f}%"


def num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def heat_colour(share: float | None) -> str:
    """White (0) to deep red (1); light grey when nothing was judged."""
    if share is None:
        return "#f7f7f7"
    red = (255, int(255 - 190 * share), int(255 - 200 * share))
    return f"rgb({red[0]},{red[1]},{red[2]})"


_SLUG = re.compile(r"[^a-z0-9]+")


def slug(*parts: str) -> str:
    """A readable, safe id for an anchor (callers add a counter where parts could collide)."""
    return "-".join(_SLUG.sub("-", part.lower()).strip("-") or "x" for part in parts)


def table(headers: Iterable[str], rows: Iterable[Iterable[str]], *, cls: str = "") -> str:
    """A table from already-escaped cell HTML; a cell starting with '<td' is used as is."""
    cells = "".join(f"<th>{cell}</th>" for cell in headers)
    head = f"<thead><tr>{cells}</tr></thead>" if cells else ""
    body = "".join("<tr>" + "".join(cell if cell.startswith("<td") else f"<td>{cell}</td>"
                                    for cell in row) + "</tr>" for row in rows)
    attr = f" class='{cls}'" if cls else ""
    return f"<table{attr}>{head}<tbody>{body}</tbody></table>"


def page(title: str, body: str) -> str:
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{esc(title)}</title>"
            f"<style>{STYLE}</style></head><body><h1>{esc(title)}</h1>{body}</body></html>\n")
