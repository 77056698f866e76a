"""The annotators' language: gettext catalogues read with Babel.

Catalogues ship as ``convoscope/locale/<language>/LC_MESSAGES/convoscope.po`` (text, reviewable in
a pull request). A compiled ``.mo`` next to it is used when it is at least as new; otherwise the
``.po`` is compiled in memory on first use, so a fresh install needs no build step.
"""

from __future__ import annotations

import functools
from io import BytesIO
from pathlib import Path

LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
DOMAIN = "convoscope"
LANGUAGES = ("en", "ko")


def catalogue_path(language: str) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"


@functools.lru_cache(maxsize=8)
def translations(language: str):  # noqa: ANN201  (babel.support.Translations; imported lazily)
    """The translations for ``language``; English (the source language) passes strings through."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    from babel.support import NullTranslations, Translations

    if language not in LANGUAGES:
        raise ValueError(f"no interface catalogue for language {language!r}; one of {', '.join(LANGUAGES)}")
    po = catalogue_path(language)
    if language == "en" or not po.is_file():
        return NullTranslations()
    mo = po.with_suffix(".mo")
    if mo.is_file() and mo.stat().st_mtime >= po.stat().st_mtime:
        with mo.open("rb") as handle:
            return Translations(handle, domain=DOMAIN)
    with po.open("rb") as handle:
        catalog = read_po(handle, locale=language, domain=DOMAIN)
    buffer = BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return Translations(buffer, domain=DOMAIN)
