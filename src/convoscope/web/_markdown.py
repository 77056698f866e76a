"""Guidelines and consent texts: Markdown (CommonMark with tables) rendered by markdown-it-py, then
sanitised by nh3 (Ammonia), so a guidelines file can hold tables of examples, images and links
but never a script, an event handler or a ``javascript:`` address."""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup

_TAGS = {"h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr", "ul", "ol", "li", "strong", "em", "code",
         "pre", "blockquote", "a", "img", "table", "thead", "tbody", "tr", "th", "td", "del", "s"}
_ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title", "width", "height"},
               "ol": {"start"}, "th": {"colspan", "rowspan"}, "td": {"colspan", "rowspan"}}
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:|^/|^#")


def markdown_html(text: str, *, media_base: str = "") -> Markup:
    """Safe HTML for ``text``; relative image and link addresses are resolved under ``media_base``."""
    import nh3
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": False}).enable("table").enable("strikethrough")
    tokens = parser.parse(text)
    for token in tokens:
        for child in token.children or []:
            _rebase(child, media_base)
    html = parser.renderer.render(tokens, parser.options, {})
    clean = nh3.clean(html, tags=_TAGS, attributes=_ATTRIBUTES, url_schemes={"http", "https", "mailto"},
                      link_rel="noopener noreferrer")
    # A wide table scrolls inside its own box, never the page (phones at 375 px).
    clean = clean.replace("<table>", '<div class="table-wrap"><table>').replace("</table>", "</table></div>")
    return Markup(clean)  # noqa: S704  (sanitised just above)


def _rebase(token: Any, base: str) -> None:
    attribute = "src" if token.type == "image" else "href" if token.type == "link_open" else None
    if attribute is None or not base:
        return
    value = str(token.attrGet(attribute) or "")
    if value and not _SCHEME.match(value):
        token.attrSet(attribute, base.rstrip("/") + "/" + value.removeprefix("./"))
