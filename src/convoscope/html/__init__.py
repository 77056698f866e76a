"""The one HTML layer: Jinja2 templates with autoescaping and a shared base layout.

Reports, the annotation web app and the verdict viewer render through :func:`render`, so text
written by strangers (answers, dialogues, notes) is escaped in one place. Templates live in
``convoscope/html/templates``; a page extends ``base.html`` and fills ``title`` and ``content``.
Strings shown to people go through ``_()`` (gettext) so they can be translated.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["environment", "render"]


@functools.lru_cache(maxsize=8)
def environment(translations: Any = None) -> Any:
    """The Jinja2 environment (autoescape on for every template). ``translations`` is a
    gettext ``Translations`` object; without it strings render as written (English)."""
    import gettext

    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("convoscope.html", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.i18n"],
    )
    # added by the i18n extension, so the type checker cannot see it
    env.install_gettext_translations(  # type: ignore[attr-defined]
        translations or gettext.NullTranslations(), newstyle=True)
    return env


def render(template: str, /, *, translations: Any = None, **context: Any) -> str:
    """Render ``template`` (a file under ``convoscope/html/templates``) with ``context``."""
    return environment(translations).get_template(template).render(**context)
