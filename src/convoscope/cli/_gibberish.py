"""``convoscope gibberish``: flag meaningless answers offline (English and Korean)."""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import click
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from convoscope._gc import collections_spaced
from convoscope.cli._common import encoding_option, fail_on, naming_encoding_flag
from convoscope.errors import ConfigError
from convoscope.filters import (
    Answer,
    GibberishResult,
    GibberishSummary,
    GibberishThresholds,
    detect_many,
    flag_answers,
    iter_answers,
)
from convoscope.filters._resources import has_word_list

# Scalar thresholds a user may override with --set; the word sets are changed in Python.
_SETTABLE = ("en_min_log_likelihood", "en_max_class_run", "en_min_valid_word_ratio", "en_min_word_zipf",
             "en_dictionary", "ko_min_log_likelihood", "ko_min_complete_syllable_ratio",
             "ko_min_distinct_jamo", "ko_morphemes", "ko_morpheme_max_words", "mixed_script_share",
             "other_min_probability", "neutral_max_noise_share", "language_id", "segments")


def _thresholds(settings: tuple[str, ...], empty: str) -> GibberishThresholds:
    values: dict[str, object] = {"empty_is_gibberish": empty == "gibberish"}
    for setting in settings:
        key, sep, value = setting.partition("=")
        if not sep or key.strip() not in _SETTABLE:
            raise ConfigError(f"--set {setting!r}: expected KEY=VALUE with KEY one of {', '.join(_SETTABLE)}")
        values[key.strip()] = value.strip()
    try:
        return GibberishThresholds.model_validate(values)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise ConfigError(f"--set: {problems}") from None


def _summary_table(summary: GibberishSummary, out: Path | None) -> Table:
    table = Table(title="Gibberish filter" + (f" → {out}" if out else ""))
    for name in ("language", "answers", "gibberish", "rate"):
        table.add_column(name, justify="left" if name == "language" else "right")
    rows = [(lang, *counts) for lang, counts in summary.by_language.items()]
    for lang, answers, flagged in [*rows, ("all", summary.total, summary.gibberish)]:
        rate = flagged / answers if answers else math.nan
        table.add_row(lang, str(answers), str(flagged), f"{rate:.1%}")
    if summary.by_reason:
        reasons = summary.by_reason.items()
        table.caption = "reasons: " + ", ".join(f"{name} {count}" for name, count in reasons)
    return table


def language_option(value: str) -> str:
    """``--lang``: 'auto' or an ISO 639 code; a code with no word list is accepted with a note
    (only the language-neutral rules judge it)."""
    code = value.strip().lower()
    if code != "auto" and not (2 <= len(code.split("-")[0]) <= 3 and code.split("-")[0].isalpha()):
        raise click.BadParameter(f"{value!r} is not 'auto' or an ISO 639 code such as en, ko, pt")
    base = code.split("-")[0]
    if code != "auto" and base not in ("en", "ko", "th") and not has_word_list(base):
        Console(stderr=True).print(f"note: no word list for '{code}' here (wordfreq not installed or it "
                                   "has none): only the language-neutral rules judge these answers")
    return code


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """py3langid scores the answers it identifies with numpy, whose OpenBLAS starts a worker thread
    per core when numpy is imported; that worker spins waiting for work (about 0.1 s of CPU on
    50,000 English lines) that never comes: a text's features times 142 languages is no size
    worth a second thread. One thread gave the same score vectors, bit for bit, on 60,000
    chat lines. Set only before numpy is imported and when the user set no thread count
    (OpenBLAS reads these three), and taken back afterwards (OpenBLAS has read it by then)."""
    settings = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
    set_here = "numpy" not in sys.modules and not any(os.environ.get(name) for name in settings)
    if set_here:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        if set_here:
            os.environ.pop("OPENBLAS_NUM_THREADS", None)


@click.command("gibberish")
@click.argument("answers_path", metavar="ANSWERS", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--lang", default="auto", show_default=True,
              callback=lambda _c, _p, value: language_option(value),
              help="auto = choose per answer from its script; en / ko = judge every answer as that "
              "language (answers without its letters are flagged 'wrong_script'); any other ISO "
              "639 code (pt, de, ja...) = the answers' language: its word list and the "
              "language-neutral rules, no identification.")
@click.option("--column", help="The answer column (CSV/TSV) or field (JSONL). Plain text files "
              "hold one answer per line.")
@click.option("--lang-col", "lang_col", help="A column (CSV/TSV) or field (JSONL) of ISO 639 codes: each "
              "answer's declared language, which wins over --lang and identification where given.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the flags here as JSONL (default: standard output).")
@click.option("--empty", type=click.Choice(["gibberish", "clean"]), default="gibberish", show_default=True,
              help="How to flag empty answers (they are always kept, one output row per input row).")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="Override a threshold, e.g. --set en_min_log_likelihood=-4.5. Repeatable.")
@encoding_option
def gibberish(answers_path: Path, lang: str, column: str | None, lang_col: str | None, out: Path | None,
              empty: str, settings: tuple[str, ...], encoding: str) -> None:
    """Flag gibberish answers (keyboard mashes, random letters) without any model call.

    Writes one JSON object per answer with line, text, lang, gibberish, reasons (the rules that
    fired), notes and the measurements behind them (log_likelihood, ...), then prints counts by
    language. Rules and thresholds follow seed 000; see `convoscope.filters.GibberishThresholds`.

    \b
    Example:
      convoscope gibberish answers.txt --lang auto --out flags.jsonl
      convoscope gibberish respostas.txt --lang pt --out flags.jsonl
      convoscope gibberish survey.csv --column answer --out flags.jsonl
      convoscope gibberish survey.csv --column answer --lang-col language
      convoscope gibberish korean-export.csv --column answer --encoding cp949
    """
    console = Console(stderr=True)
    with fail_on(console), _one_blas_thread():
        thresholds = _thresholds(settings, empty)
        with naming_encoding_flag():
            answers = iter_answers(answers_path, column=column, encoding=encoding, lang_column=lang_col)

            def judge(batch: list[Answer]) -> list[GibberishResult]:
                declared = [a.lang for a in batch] if lang_col else None
                return detect_many([a.text for a in batch], lang=lang, languages=declared,
                                   thresholds=thresholds)

            # Streamed: each chunk's flags are written before the next chunk is read.
            with collections_spaced():  # see convoscope._gc
                if out is None:
                    summary = flag_answers(answers, sys.stdout, judge=judge)
                else:
                    with open(out, "w", encoding="utf-8") as handle:
                        summary = flag_answers(answers, handle, judge=judge)
    console.print(_summary_table(summary, out))


COMMANDS = [gibberish]
