"""Formatting shared by the report sections: numbers, shares, colours, anchors.

The sections build plain data; the page is rendered by the shared template layer
(:mod:`convoscope.html`, templates under ``html/templates/reports/``), which escapes every piece
of text that comes from a verdict or an item. The page is self-contained: inline CSS, no scripts
or fonts from elsewhere.
"""

from __future__ import annotations

import re

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac")


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
